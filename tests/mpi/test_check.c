/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * WSP_CHECK (cfg.check): each collective called with arguments that differ
 * between the ranks (count, datatype signature, op, root, a root out of
 * range on one rank) must fail on every rank with WSP_ERR_MISMATCH and a message
 * naming the argument and the first rank that differs, and nobody may wait.
 * Calls whose types differ but whose signatures match must run, and after
 * all the refused calls the communicator must still give MPI's own results.
 * Needs at least 2 ranks (with 1 there is nothing to disagree on: the test
 * then checks only that matching calls run).
 */
#include "mpi_check.h"

#include <wirespeed.h>

#include <stdlib.h>
#include <string.h>

static wsp_comm_t *w;

/* Every rank must have returned WSP_ERR_MISMATCH with a message holding want
 * (and, when who >= 0, "rank <who>"). */
static void expect_refused(const char *what, int rc, const char *want, int who) {
  const char *msg = wsp_last_error();
  char rk[32];
  snprintf(rk, sizeof rk, "rank %d", who);
  CHECK(rc == WSP_ERR_MISMATCH, "%s: status %d (%s), expected WSP_ERR_MISMATCH", what, rc, msg);
  CHECK(rc != WSP_ERR_MISMATCH || strstr(msg, want) != NULL, "%s: message \"%s\" lacks \"%s\"",
        what, msg, want);
  CHECK(rc != WSP_ERR_MISMATCH || who < 0 || strstr(msg, rk) != NULL,
        "%s: message \"%s\" does not name %s", what, msg, rk);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  wsp_config_t cfg;
  wsp_config_init(&cfg);
  wsp_config_from_env(&cfg);
  cfg.check = 1;
  cfg.log_level = WSP_LOG_OFF;
  if (wsp_comm_create(MPI_COMM_WORLD, &cfg, &w) != WSP_OK) {
    fprintf(stderr, "wsp_comm_create: %s\n", wsp_last_error());
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  enum { N = 1000 };
  int last = size - 1;
  double *a = malloc(sizeof(double) * N * (size_t)size * 2);
  double *b = malloc(sizeof(double) * N * (size_t)size * 2);
  double *ref = malloc(sizeof(double) * N * (size_t)size);
  if (!a || !b || !ref) MPI_Abort(MPI_COMM_WORLD, 2);
  for (int i = 0; i < N * size; i++) a[i] = rank * 1000 + i % 97;

  /* Equal signatures from different types: rank 0 passes 4N doubles, the
   * others N contiguous types of 4 doubles. */
  MPI_Datatype four;
  MPI_Type_contiguous(4, MPI_DOUBLE, &four);
  MPI_Type_commit(&four);
  {
    double *x = malloc(sizeof(double) * 4 * N);
    for (int i = 0; i < 4 * N; i++) x[i] = rank == 0 ? i * 0.5 : -1;
    int rc = rank == 0 ? wsp_bcast(w, x, 4 * N, MPI_DOUBLE, 0) : wsp_bcast(w, x, N, four, 0);
    CHECK(rc == WSP_OK, "bcast with equal signatures: %s", wsp_last_error());
    int bad = 0;
    for (int i = 0; i < 4 * N; i++) bad += x[i] != i * 0.5;
    CHECK(bad == 0, "bcast with equal signatures: %d wrong elements", bad);
    free(x);
  }

  if (size >= 2) {
    int rc;
    /* bcast: count, type signature, root. */
    char want[128];
    snprintf(want, sizeof want, "count or datatype differs: rank 0's data holds %d basic "
             "elements, rank %d's %d", N, last, N - 1);
    rc = wsp_bcast(w, a, rank == last ? N - 1 : N, MPI_DOUBLE, 0);
    expect_refused("bcast count", rc, want, last);
    rc = wsp_bcast(w, a, 2, rank == 1 ? MPI_LONG_LONG : MPI_DOUBLE, 0);
    expect_refused("bcast type", rc, "type signatures differ", 1);
    rc = wsp_bcast(w, a, N, MPI_DOUBLE, rank == 1 ? 1 : 0);
    expect_refused("bcast root", rc, "root differs", 1);
    rc = wsp_bcast(w, a, N, MPI_DOUBLE, rank == last ? size : 0);
    expect_refused("bcast root out of range", rc, "refused its own arguments", last);
    /* reduce and allreduce: op, count, root. */
    rc = wsp_reduce(w, a, b, N, MPI_DOUBLE, rank == last ? MPI_MAX : MPI_SUM, 0);
    expect_refused("reduce op", rc, "op differs", last);
    rc = wsp_reduce(w, a, b, N, MPI_DOUBLE, MPI_SUM, rank == 1 ? 1 : 0);
    expect_refused("reduce root", rc, "root differs", 1);
    snprintf(want, sizeof want, "rank %d's %d", last, N + 1);
    rc = wsp_allreduce(w, a, b, rank == last ? N + 1 : N, MPI_DOUBLE, MPI_SUM);
    expect_refused("allreduce count", rc, want, last);
    rc = wsp_allreduce(w, a, b, N, MPI_DOUBLE, rank == 1 ? MPI_PROD : MPI_SUM);
    expect_refused("allreduce op", rc, "op differs", 1);
    /* gather and scatter: a non-root's block, the root. */
    rc = wsp_gather(w, a, rank == last ? N / 2 : N, MPI_DOUBLE, b, N, MPI_DOUBLE, 0);
    expect_refused("gather count", rc, "count or datatype differs", last);
    rc = wsp_gather(w, a, N, MPI_DOUBLE, b, N, MPI_DOUBLE, rank == last ? last : 0);
    expect_refused("gather root", rc, "root differs", last);
    rc = wsp_scatter(w, a, N, MPI_DOUBLE, b, rank == last ? N - 3 : N, MPI_DOUBLE, 0);
    expect_refused("scatter count", rc, "count or datatype differs", last);
    rc = wsp_scatter(w, a, N, MPI_DOUBLE, b, N, MPI_DOUBLE, rank == 1 ? 1 : 0);
    expect_refused("scatter root", rc, "root differs", 1);
    /* allgather and alltoall: the block. */
    rc = wsp_allgather(w, a, N, rank == 1 ? MPI_FLOAT : MPI_DOUBLE, b, N,
                       rank == 1 ? MPI_FLOAT : MPI_DOUBLE);
    expect_refused("allgather type", rc, "count or datatype differs", 1);
    rc = wsp_alltoall(w, a, rank == last ? N - 1 : N, MPI_DOUBLE, b, rank == last ? N - 1 : N,
                      MPI_DOUBLE);
    expect_refused("alltoall count", rc, "count or datatype differs", last);
  }

  /* The vector forms: an argument one rank refuses alone is returned on
   * every rank, the refusing rank keeping its own reason. */
  if (size >= 2) {
    size_t *c = malloc(4 * sizeof(size_t) * (size_t)size), *d = c + size, *rc_ = c + 2 * size,
           *rd = c + 3 * size;
    for (int j = 0; j < size; j++) c[j] = rc_[j] = N / size, d[j] = rd[j] = (size_t)j * (N / size);
    if (rank == last) rd[0] = rd[1] = 0; /* two receive blocks on the same bytes */
    int rc = wsp_alltoallv(w, a, c, d, MPI_DOUBLE, b, rc_, rd, MPI_DOUBLE);
    if (rank == last)
      CHECK(rc == WSP_ERR_ARG && strstr(wsp_last_error(), "overlap") != NULL,
            "alltoallv with an overlapping layout on this rank: status %d (%s)", rc,
            wsp_last_error());
    else
      expect_refused("alltoallv, one rank's layout", rc, "refused its own arguments", last);
    rd[0] = 0, rd[1] = (size_t)(N / size);
    /* allgatherv: the block this rank sends is not its recvcounts entry. */
    rc = wsp_allgatherv(w, a, rank == 1 ? N / size - 1 : N / size, MPI_DOUBLE, b, rc_, rd,
                        MPI_DOUBLE);
    if (rank == 1)
      CHECK(rc == WSP_ERR_ARG && strstr(wsp_last_error(), "recvcounts[1]") != NULL,
            "allgatherv with a short block on this rank: status %d (%s)", rc, wsp_last_error());
    else
      expect_refused("allgatherv, one rank's block", rc, "refused its own arguments", 1);
    /* reduce_scatter: counts that differ. */
    if (rank == last) rc_[0]++;
    rc = wsp_reduce_scatter(w, a, b, rc_, MPI_DOUBLE, MPI_SUM);
    expect_refused("reduce_scatter counts", rc, "count or datatype differs", last);
    free(c);
  }

  /* Bad arguments that every rank passes alike: each rank refuses them
   * with WSP_ERR_ARG and its own reason, naming the argument. */
  {
    size_t *c = calloc(2 * (size_t)size, sizeof(size_t)), *d = c + size;
    int rc = wsp_alltoallv(NULL, a, c, d, MPI_DOUBLE, b, c, d, MPI_DOUBLE);
    CHECK(rc == WSP_ERR_ARG && strstr(wsp_last_error(), "comm is NULL"),
          "alltoallv without a comm: %d (%s)", rc, wsp_last_error());
    rc = wsp_alltoallv(w, a, c, d, MPI_DOUBLE, b, NULL, d, MPI_DOUBLE);
    CHECK(rc == WSP_ERR_ARG && strstr(wsp_last_error(), "recvcounts is NULL"),
          "alltoallv with NULL recvcounts: %d (%s)", rc, wsp_last_error());
    for (int j = 0; j < size; j++) c[j] = (size_t)-1 / 4;
    rc = wsp_allgatherv(w, MPI_IN_PLACE, 0, MPI_DOUBLE, b, c, d, MPI_DOUBLE);
    CHECK(rc == WSP_ERR_ARG && strstr(wsp_last_error(), "too large"),
          "allgatherv with a count past the address space: %d (%s)", rc, wsp_last_error());
    rc = wsp_reduce_scatter(w, a, b, NULL, MPI_DOUBLE, MPI_SUM);
    CHECK(rc == WSP_ERR_ARG && strstr(wsp_last_error(), "recvcounts is NULL"),
          "reduce_scatter with NULL recvcounts: %d (%s)", rc, wsp_last_error());
    rc = wsp_reduce_scatter_block(w, a, b, 1, MPI_DOUBLE, MPI_OP_NULL);
    CHECK(rc == WSP_ERR_ARG && strstr(wsp_last_error(), "op is MPI_OP_NULL"),
          "reduce_scatter_block with MPI_OP_NULL: %d (%s)", rc, wsp_last_error());
    free(c);
  }

  /* Receive blocks whose elements interleave without sharing a byte (a
   * transpose: block j is column j of a p x p matrix, a column type
   * resized to one double) are legal, and must match MPI's result. */
  {
    MPI_Datatype col0, col;
    MPI_Type_vector(size, 1, size, MPI_DOUBLE, &col0);
    MPI_Type_create_resized(col0, 0, sizeof(double), &col);
    MPI_Type_commit(&col);
    size_t *c = malloc(4 * sizeof(size_t) * (size_t)size);
    int *ic = malloc(4 * sizeof(int) * (size_t)size);
    for (int j = 0; j < size; j++) {
      c[j] = (size_t)size, c[size + j] = (size_t)(j * size); /* row j of a, to rank j */
      c[2 * size + j] = 1, c[3 * size + j] = (size_t)j;      /* into column j of b */
      for (int k = 0; k < 4; k++) ic[k * size + j] = (int)c[k * size + j];
    }
    double *got = malloc(sizeof(double) * (size_t)size * size),
           *want = malloc(sizeof(double) * (size_t)size * size);
    for (int i = 0; i < size * size; i++) got[i] = want[i] = -1;
    MPI_Alltoallv(a, ic, ic + size, MPI_DOUBLE, want, ic + 2 * size, ic + 3 * size, col,
                  MPI_COMM_WORLD);
    int rc = wsp_alltoallv(w, a, c, c + size, MPI_DOUBLE, got, c + 2 * size, c + 3 * size, col);
    CHECK(rc == WSP_OK, "alltoallv into interleaved columns: %s", wsp_last_error());
    CHECK(rc != WSP_OK || memcmp(got, want, sizeof(double) * (size_t)size * size) == 0,
          "alltoallv into interleaved columns: the result differs from MPI_Alltoallv's");
    free(got), free(want), free(c), free(ic);
    MPI_Type_free(&col0);
    MPI_Type_free(&col);
  }

  /* The same bad root on every rank: WSP_ERR_ARG, as without the check. */
  {
    int rc = wsp_bcast(w, a, N, MPI_DOUBLE, size);
    CHECK(rc == WSP_ERR_ARG && strstr(wsp_last_error(), "out of range") != NULL,
          "bcast with root = p everywhere: status %d (%s)", rc, wsp_last_error());
  }

  /* Still usable: an allreduce against MPI's own. */
  int rc = wsp_allreduce(w, a, b, N, MPI_DOUBLE, MPI_SUM);
  CHECK(rc == WSP_OK, "allreduce after the refused calls: %s", wsp_last_error());
  MPI_Allreduce(a, ref, N, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  int bad = 0;
  for (int i = 0; i < N; i++) bad += b[i] != ref[i];
  CHECK(bad == 0, "allreduce after the refused calls: %d elements differ from MPI_Allreduce", bad);

  MPI_Type_free(&four);
  free(a), free(b), free(ref);
  wsp_comm_free(&w);
  long all = 0;
  MPI_Allreduce(&failures, &all, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf("test_check: %ld failures\n", all);
  MPI_Finalize();
  return all ? 1 : 0;
}
