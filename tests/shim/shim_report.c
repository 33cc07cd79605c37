/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The job's report under the shim (docs/report.md, "Under the shim"): a
 * plain MPI program makes known calls on two kinds of communicator, with
 * the algorithms forced by the environment the test sets
 * (WSP_ALLREDUCE_ALGORITHM=ring, WSP_BCAST_ALGORITHM=binomial): 3
 * allreduces of 1000 ints on MPI_COMM_WORLD, then MPI_COMM_WORLD split in
 * two, and 2 bcasts of 5000 bytes in each half. The report must count
 * each call once, over both halves: allreduce/ring 3 calls and 12000
 * bytes, bcast/binomial 4 calls and 20000 bytes. Then one alltoallv on
 * MPI_COMM_WORLD whose blocks are of 100 bytes, but for those between two
 * ranks of the upper half (100000 bytes), with a rules file (WSP_RULES_FILE,
 * alltoallv_split.json) that gives each rank's own size a different
 * algorithm: the call is split between two rows, half a call each, which
 * the report must show as such (ranks_differ). With WSP_REPORT=FILE,
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

enum { ALLREDUCES = 3, INTS = 1000, BCASTS = 2, BYTES = 5000, SMALL = 100, LARGE = 100000 };

static int failures;
#define CHECK(cond, ...)                                                                           \
  do {                                                                                             \
    if (!(cond)) {                                                                                 \
      failures++;                                                                                  \
      fprintf(stderr, "shim_report: " __VA_ARGS__);                                                \
      fputc('\n', stderr);                                                                         \
    }                                                                                              \
  } while (0)

/* The row op/alg of the file's "operations": its calls and bytes (-1: any),
 * and whether the ranks differ. */
static void check_row(json_t *ops, const char *op, const char *alg, long long calls,
                      long long bytes, int differ) {
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
  CHECK(bytes < 0 || b == bytes, "%s/%s: %lld bytes, the program moved %lld", op, alg, b, bytes);
  CHECK(json_is_true(json_object_get(found, "ranks_differ")) == differ,
        "%s/%s: ranks_differ is not %s", op, alg, differ ? "true" : "false");
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
  /* The split alltoallv: the block from rank i to rank j is large when
   * both are in the upper half, so that the lower half's ranks, whose
   * blocks are all small, choose another algorithm than the upper's. */
  const int upper = rank >= size / 2;
  int *sc = calloc((size_t)size, sizeof *sc), *sd = calloc((size_t)size, sizeof *sd);
  int *rcnt = calloc((size_t)size, sizeof *rcnt), *rd = calloc((size_t)size, sizeof *rd);
  unsigned char *sb = malloc((size_t)LARGE * (size_t)size);
  unsigned char *rb = malloc((size_t)LARGE * (size_t)size);
  if (!sc || !sd || !rcnt || !rd || !sb || !rb) {
    fprintf(stderr, "shim_report: out of memory\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  for (int j = 0; j < size; j++) {
    sc[j] = rcnt[j] = upper && j >= size / 2 ? LARGE : SMALL;
    sd[j] = rd[j] = j * LARGE;
    memset(sb + sd[j], rank * size + j, (size_t)sc[j]);
  }
  MPI_Alltoallv(sb, sc, sd, MPI_BYTE, rb, rcnt, rd, MPI_BYTE, MPI_COMM_WORLD);
  for (int j = 0; j < size; j++)
    CHECK(rb[rd[j]] == (unsigned char)(j * size + rank) &&
              rb[rd[j] + rcnt[j] - 1] == (unsigned char)(j * size + rank),
          "alltoallv: wrong block from rank %d", j);
  free(sc), free(sd), free(rcnt), free(rd), free(sb), free(rb);
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
    CHECK(json_is_array(ops) && json_array_size(ops) == 4,
          "the report has %zu rows, the program's calls make 4", json_array_size(ops));
    if (json_is_array(ops)) {
      check_row(ops, "allreduce", "ring", ALLREDUCES, (long long)ALLREDUCES * INTS * 4, 0);
      check_row(ops, "bcast", "binomial", 2 * BCASTS, 2LL * BCASTS * BYTES, 0);
      /* Half a call each, rounded in the file, flagged. */
      check_row(ops, "alltoallv", "linear", 1, -1, 1);
      check_row(ops, "alltoallv", "pairwise", 1, -1, 1);
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
