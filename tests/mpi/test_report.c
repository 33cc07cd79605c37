/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The report (WSP_REPORT, docs/report.md): a program that runs known
 * operations, with their algorithms forced by the environment the test
 * sets (WSP_ALLREDUCE_ALGORITHM=ring, WSP_BCAST_ALGORITHM=binomial,
 * WSP_SPARSE_ALGORITHM=alltoallv, and WSP_P2P_MIN=1M, which sends its
 * striped message through MPI), must find exactly those calls,
 * algorithms and bytes in the report that wsp_comm_free writes. The
 * expected figures come from what this program did, not from the library.
 * With WSP_REPORT=FILE, rank 0 reads the JSON back; with WSP_REPORT=1 the
 * test's regular expression reads the table on stderr. Two ranks or more.
 */
#include <jansson.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wirespeed.h"
#include "mpi_check.h"

enum { ALLREDUCES = 3, ALLREDUCE_INTS = 1000, BCASTS = 2, BCAST_BYTES = 5000 };
/* One striped message from each rank to the next: each sender counts its
 * own, so the report shows p of them. */
enum { STRIPED_BYTES = 100000 };

/* The bytes rank r sends in the sparse exchange, to rank r + 1. */
static size_t sparse_bytes(int r) { return 100 + (size_t)r; }

/* The operation `op`/`alg` of the report, or NULL; *n counts matches. */
static json_t *find_op(json_t *ops, const char *op, const char *alg, int *n) {
  json_t *found = NULL, *o;
  size_t i;
  *n = 0;
  json_array_foreach(ops, i, o) {
    if (!strcmp(json_string_value(json_object_get(o, "operation")), op) &&
        !strcmp(json_string_value(json_object_get(o, "algorithm")), alg)) {
      found = o;
      ++*n;
    }
  }
  return found;
}

static void check_row(json_t *ops, const char *op, const char *alg, long long calls,
                      long long bytes, int predicted) {
  int n = 0;
  json_t *o = find_op(ops, op, alg, &n);
  CHECK(n == 1, "%s/%s appears %d times in the report", op, alg, n);
  if (o == NULL) return;
  long long c = json_integer_value(json_object_get(o, "calls"));
  long long b = json_integer_value(json_object_get(o, "bytes"));
  double s = json_real_value(json_object_get(o, "seconds"));
  json_t *p = json_object_get(o, "predicted_seconds");
  CHECK(c == calls, "%s/%s: %lld calls, the program made %lld", op, alg, c, calls);
  CHECK(b == bytes, "%s/%s: %lld bytes, the program moved %lld", op, alg, b, bytes);
  CHECK(s > 0, "%s/%s: %g seconds", op, alg, s);
  CHECK(json_is_real(json_object_get(o, "busbw")), "%s/%s: no busbw", op, alg);
  CHECK(predicted ? json_is_real(p) && json_real_value(p) > 0 : json_is_null(p),
        "%s/%s: predicted_seconds is %s", op, alg, predicted ? "not a time" : "not null");
  CHECK(json_is_false(json_object_get(o, "ranks_differ")), "%s/%s: the ranks differ", op, alg);
}

int main(int argc, char **argv) {
  (void)argc, (void)argv;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const char *dest = getenv("WSP_REPORT");
  if (size < 2 || dest == NULL || !*dest) {
    if (rank == 0) fprintf(stderr, "test_report: needs 2 ranks or more and WSP_REPORT\n");
    MPI_Finalize();
    return 2;
  }
  wsp_comm_t *w = world_comm();

  int in[ALLREDUCE_INTS], out[ALLREDUCE_INTS];
  for (int k = 0; k < ALLREDUCES; k++) {
    for (int i = 0; i < ALLREDUCE_INTS; i++) in[i] = rank + i + k;
    int rc = wsp_allreduce(w, in, out, ALLREDUCE_INTS, MPI_INT, MPI_SUM);
    CHECK(rc == WSP_OK, "wsp_allreduce: %s", wsp_last_error());
    for (int i = 0; i < ALLREDUCE_INTS && rc == WSP_OK; i++)
      if (out[i] != size * (size - 1) / 2 + size * (i + k)) {
        CHECK(0, "allreduce %d: element %d is %d", k, i, out[i]);
        break;
      }
  }
  static unsigned char buf[BCAST_BYTES];
  for (int k = 0; k < BCASTS; k++) {
    for (int i = 0; i < BCAST_BYTES; i++) buf[i] = rank == 0 ? (unsigned char)(i + k) : 0;
    int rc = wsp_bcast(w, buf, BCAST_BYTES, MPI_BYTE, 0);
    CHECK(rc == WSP_OK, "wsp_bcast: %s", wsp_last_error());
    CHECK(buf[BCAST_BYTES - 1] == (unsigned char)(BCAST_BYTES - 1 + k), "bcast %d: wrong data", k);
  }
  unsigned char msg[200] = {0};
  wsp_send_t send = {.peer = (rank + 1) % size, .data = msg, .bytes = sparse_bytes(rank)};
  wsp_recvset_t got;
  int rc = wsp_sparse_exchange(w, &send, 1, &got);
  CHECK(rc == WSP_OK, "wsp_sparse_exchange: %s", wsp_last_error());
  if (rc == WSP_OK) {
    CHECK(got.count == 1, "sparse: %zu messages received", got.count);
    wsp_recvset_free(&got);
  }
  static unsigned char big[STRIPED_BYTES], got_big[STRIPED_BYTES];
  wsp_striped_request_t *req[2] = {NULL, NULL};
  rc = wsp_striped_irecv(w, got_big, sizeof got_big, (rank + size - 1) % size, 7, &req[0]);
  if (rc == WSP_OK) rc = wsp_striped_isend(w, big, sizeof big, (rank + 1) % size, 7, &req[1]);
  if (rc == WSP_OK) rc = wsp_striped_waitall(2, req);
  CHECK(rc == WSP_OK, "striped messages: %s", wsp_last_error());
  rc = wsp_comm_free(&w);
  CHECK(rc == WSP_OK, "wsp_comm_free: %s", wsp_last_error());

  if (rank == 0 && strcmp(dest, "1") != 0) {
    json_error_t err;
    json_t *doc = json_load_file(dest, 0, &err);
    CHECK(doc != NULL, "%s does not parse: line %d: %s", dest, err.line, err.text);
    json_t *ops = doc ? json_object_get(doc, "operations") : NULL;
    CHECK(json_integer_value(json_object_get(doc, "p")) == size, "p is not %d", size);
    CHECK(json_is_array(ops) && json_array_size(ops) == 4,
          "the report has %zu operations, the program ran 4", json_array_size(ops));
    if (json_is_array(ops)) {
      check_row(ops, "allreduce", "ring", ALLREDUCES,
                (long long)ALLREDUCES * ALLREDUCE_INTS * (long long)sizeof(int), 1);
      check_row(ops, "bcast", "binomial", BCASTS, (long long)BCASTS * BCAST_BYTES, 1);
      long long sparse = 0;
      for (int r = 0; r < size; r++) sparse += (long long)sparse_bytes(r);
      check_row(ops, "sparse", "alltoallv", 1, sparse, 0);
      check_row(ops, "striped", "mpi", size, (long long)size * STRIPED_BYTES, 0);
    }
    json_decref(doc);
  }
  long total = 0;
  MPI_Allreduce(&failures, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf("test_report: %ld failures\n", total);
  MPI_Finalize();
  return total != 0;
}
