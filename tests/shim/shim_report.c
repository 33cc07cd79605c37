/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The job's report under the shim (docs/report.md, "Under the shim"): a
 * plain MPI program makes known calls on two kinds of communicator, with
 * the algorithms forced by the environment the test sets
 * (WSP_ALLREDUCE_ALGORITHM=ring, WSP_BCAST_ALGORITHM=binomial): 3
 * allreduces of 1000 ints on MPI_COMM_WORLD, then MPI_COMM_WORLD split in
 * two, and 2 bcasts of 5000 bytes in each half. The report must count
 * each call once, over both halves: allreduce/ring 3 calls and 12000
 * bytes, bcast/binomial 4 calls and 20000 bytes. With WSP_REPORT=FILE,
 * rank 0 reads the file back after MPI_Finalize (the shim writes it inside
 * MPI_Finalize); with WSP_REPORT=1 the test's regular expression reads the
 * table. The expected figures come from what this program did. Needs 4
 * ranks or more (halves of 2: a call on one rank moves nothing and is not
 * counted), and WSP_SHIM=force (the calls are small); prints
 * "shim_report: N failures".
 */
#include <jansson.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { ALLREDUCES = 3, INTS = 1000, BCASTS = 2, BYTES = 5000 };

static int failures;
#define CHECK(cond, ...)                                                                           \
  do {                                                                                             \
    if (!(cond)) {                                                                                 \
      failures++;                                                                                  \
      fprintf(stderr, "shim_report: " __VA_ARGS__);                                                \
      fputc('\n', stderr);                                                                         \
    }                                                                                              \
  } while (0)

/* The row op/alg of the file's "operations": its calls and bytes. */
static void check_row(json_t *ops, const char *op, const char *alg, long long calls,
                      long long bytes) {
  json_t *o, *found = NULL;
  size_t i;
  json_array_foreach(ops, i, o) {
    if (!strcmp(json_string_value(json_object_get(o, "operation")), op) &&
        !strcmp(json_string_value(json_object_get(o, "algorithm")), alg))
      found = o;
  }
  CHECK(found != NULL, "%s/%s is not in the report", op, alg);
  if (found == NULL) return;
  long long c = json_integer_value(json_object_get(found, "calls"));
  long long b = json_integer_value(json_object_get(found, "bytes"));
  CHECK(c == calls, "%s/%s: %lld calls, the program made %lld", op, alg, c, calls);
  CHECK(b == bytes, "%s/%s: %lld bytes, the program moved %lld", op, alg, b, bytes);
  CHECK(json_real_value(json_object_get(found, "seconds")) > 0, "%s/%s: no seconds", op, alg);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const char *dest = getenv("WSP_REPORT");
  if (size < 4 || dest == NULL || !*dest) {
    if (rank == 0) fprintf(stderr, "shim_report: needs 4 ranks or more and WSP_REPORT\n");
    MPI_Finalize();
    return 2;
  }
  static int in[INTS], out[INTS];
  for (int k = 0; k < ALLREDUCES; k++) {
    for (int i = 0; i < INTS; i++) in[i] = rank + i;
    MPI_Allreduce(in, out, INTS, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK(out[INTS - 1] == size * (size - 1) / 2 + size * (INTS - 1), "allreduce %d: wrong", k);
  }
  MPI_Comm half;
  MPI_Comm_split(MPI_COMM_WORLD, rank < size / 2, rank, &half);
  static unsigned char buf[BYTES];
  for (int k = 0; k < BCASTS; k++) {
    int hr = 0;
    MPI_Comm_rank(half, &hr);
    for (int i = 0; i < BYTES; i++) buf[i] = hr == 0 ? (unsigned char)(i + k) : 0;
    MPI_Bcast(buf, BYTES, MPI_BYTE, 0, half);
    CHECK(buf[BYTES - 1] == (unsigned char)(BYTES - 1 + k), "bcast %d: wrong data", k);
  }
  MPI_Comm_free(&half);
  long total = 0, mine = failures;
  /* Past the shim: this call is not one of the program's counted ones. */
  PMPI_Allreduce(&mine, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  MPI_Finalize();
  if (rank == 0 && strcmp(dest, "1") != 0) {
    failures = 0;
    json_error_t err;
    json_t *doc = json_load_file(dest, 0, &err);
    CHECK(doc != NULL, "%s does not parse: line %d: %s", dest, err.line, err.text);
    json_t *ops = json_object_get(doc, "operations");
    CHECK(json_integer_value(json_object_get(doc, "p")) == size, "p is not %d", size);
    CHECK(json_is_array(ops) && json_array_size(ops) == 2,
          "the report has %zu operations, the program ran 2", json_array_size(ops));
    if (json_is_array(ops)) {
      check_row(ops, "allreduce", "ring", ALLREDUCES, (long long)ALLREDUCES * INTS * 4);
      check_row(ops, "bcast", "binomial", 2 * BCASTS, 2LL * BCASTS * BYTES);
    }
    json_t *shim = json_object_get(doc, "shim");
    CHECK(json_is_object(shim) && json_integer_value(json_object_get(shim, "communicators")) == 2,
          "the shim did not set up 2 communicators on rank 0");
    json_decref(doc);
    total += failures;
  }
  if (rank == 0) printf("shim_report: %ld failures\n", total);
  return total != 0;
}
