/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The sum of a vector of doubles over every rank with wsp_allreduce, the
 * drop-in for MPI_Allreduce. Every rank can work out the exact result
 * beforehand, so the program checks it element by element. Before the call
 * it asks which algorithm will run for this size (wsp_coll_select: the one
 * forced by WSP_ALLREDUCE_ALGORITHM or a rules file, else the cost model's
 * choice) and what the model predicts for it (wsp_coll_predict).
 *
 * Build:  mpicc allreduce.c $(pkg-config --cflags --libs wirespeed) -o allreduce
 * Run:    mpirun -np 3 ./allreduce
 *         WSP_ALLREDUCE_ALGORITHM=ring mpirun -np 3 ./allreduce   (force one;
 *         wsp-info lists the names)
 * Rank 0 prints "allreduce: ok, ..."; any failure aborts the job.
 */
#include <stdio.h>
#include <stdlib.h>
#include <wirespeed.h>

/* Every wirespeed call returns a status; on failure, wsp_last_error() says
 * which argument or MPI call went wrong. */
static void check(int rc, const char *what) {
  if (rc != WSP_OK) {
    fprintf(stderr, "%s: %s: %s\n", what, wsp_err_name(rc), wsp_last_error());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  wsp_comm_t *comm;
  /* Collective; NULL: the defaults, plus the WSP_* environment. */
  check(wsp_comm_create(MPI_COMM_WORLD, NULL, &comm), "wsp_comm_create");
  int rank, size;
  check(wsp_comm_rank(comm, &rank), "wsp_comm_rank");
  check(wsp_comm_size(comm, &size), "wsp_comm_size");

  const size_t n = (size_t)1 << 20; /* 8 MiB of doubles */
  double *in = malloc(n * sizeof *in), *out = malloc(n * sizeof *out);
  if (in == NULL || out == NULL) {
    fprintf(stderr, "rank %d: out of memory\n", rank);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  /* Small integers: every partial sum is exact, whatever order the
   * algorithm adds them in, so the result can be compared with ==. */
  for (size_t i = 0; i < n; i++) in[i] = rank + (double)(i % 1000);

  /* Which algorithm runs for 8 MiB of a commutative op, and its predicted
   * time (negative when the model has none, as for "native"). */
  int alg;
  double predicted;
  check(wsp_coll_select(comm, WSP_COLL_ALLREDUCE, n * sizeof *in, 1, &alg), "wsp_coll_select");
  check(wsp_coll_predict(comm, WSP_COLL_ALLREDUCE, alg, n * sizeof *in, 1, &predicted),
        "wsp_coll_predict");
  const wsp_alg_info_t *info = wsp_coll_alg_info(WSP_COLL_ALLREDUCE, alg);

  double t = MPI_Wtime();
  check(wsp_allreduce(comm, in, out, n, MPI_DOUBLE, MPI_SUM), "wsp_allreduce");
  t = MPI_Wtime() - t;

  /* Element i of rank r is r + i % 1000; summed over the ranks:
   * (0 + 1 + ... + size-1) + size * (i % 1000). */
  for (size_t i = 0; i < n; i++) {
    double want = size * (size - 1) / 2.0 + (double)size * (double)(i % 1000);
    if (out[i] != want) {
      fprintf(stderr, "allreduce: rank %d: element %zu is %g, expected %g\n", rank, i, out[i],
              want);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
  }
  if (rank == 0) {
    printf("allreduce: ok, %zu doubles on %d ranks, algorithm %s, first call %.2f ms", n, size,
           info ? info->name : "?", t * 1e3);
    if (predicted >= 0) printf(" (model: %.2f ms)", predicted * 1e3);
    printf("\n");
  }
  free(in);
  free(out);
  check(wsp_comm_free(&comm), "wsp_comm_free");
  MPI_Finalize();
  return 0;
}
