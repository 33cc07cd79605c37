/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The shim under MPI_THREAD_MULTIPLE: a plain MPI program whose threads
 * each run the collectives the shim takes on a communicator of their
 * own at the same time (the shim then makes and caches several wirespeed
 * communicators at once, and its re-entry guard is per thread). Every
 * result is checked against values computed here. Exit status 0 when every
 * check passed.
 *   shim_threads [--threads T] [--rounds R]
 */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { N = 20000 }; /* 160 KB of doubles: above the shim's auto threshold */

typedef struct {
  MPI_Comm comm;
  int id, rounds, failures;
} job_t;

static double val(int r, int t, long i) { return (double)((r * 7 + t * 13 + i * 3) % 101); }

static void *run(void *arg) {
  job_t *j = arg;
  int p, r;
  MPI_Comm_size(j->comm, &p);
  MPI_Comm_rank(j->comm, &r);
  double *a = malloc(N * sizeof *a), *b = malloc((size_t)N * p * sizeof *b);
  for (int k = 0; k < j->rounds; k++) {
    int t = j->id + k;
    for (long i = 0; i < N; i++) a[i] = val(r, t, i);
    MPI_Allreduce(MPI_IN_PLACE, a, N, MPI_DOUBLE, MPI_SUM, j->comm);
    for (long i = 0; i < N; i++) {
      double want = 0;
      for (int s = 0; s < p; s++) want += val(s, t, i);
      if (a[i] != want) j->failures++;
    }
    int root = k % p;
    for (long i = 0; i < N; i++) a[i] = r == root ? val(root, t, i) : -1;
    MPI_Bcast(a, N, MPI_DOUBLE, root, j->comm);
    for (long i = 0; i < N; i++) j->failures += a[i] != val(root, t, i);
    for (long i = 0; i < N; i++) a[i] = val(r, t + 1, i);
    MPI_Allgather(a, N, MPI_DOUBLE, b, N, MPI_DOUBLE, j->comm);
    for (int s = 0; s < p; s++)
      for (long i = 0; i < N; i++) j->failures += b[(long)s * N + i] != val(s, t + 1, i);
    /* reduce and gather to the root, scatter from it */
    for (long i = 0; i < N; i++) a[i] = val(r, t + 2, i);
    MPI_Reduce(a, b, N, MPI_DOUBLE, MPI_SUM, root, j->comm);
    for (long i = 0; i < N && r == root; i++) {
      double want = 0;
      for (int s = 0; s < p; s++) want += val(s, t + 2, i);
      j->failures += b[i] != want;
    }
    MPI_Gather(a, N, MPI_DOUBLE, b, N, MPI_DOUBLE, root, j->comm);
    for (int s = 0; s < p && r == root; s++)
      for (long i = 0; i < N; i++) j->failures += b[(long)s * N + i] != val(s, t + 2, i);
    for (int s = 0; s < p && r == root; s++)
      for (long i = 0; i < N; i++) b[(long)s * N + i] = val(s, t + 3, i);
    MPI_Scatter(b, N, MPI_DOUBLE, a, N, MPI_DOUBLE, root, j->comm);
    for (long i = 0; i < N; i++) j->failures += a[i] != val(r, t + 3, i);
    /* alltoall: rank r's block for rank s holds val(r.p + s) */
    long m = N / p;
    for (int s = 0; s < p; s++)
      for (long i = 0; i < m; i++) a[s * m + i] = val(r * p + s, t, i);
    MPI_Alltoall(a, (int)m, MPI_DOUBLE, b, (int)m, MPI_DOUBLE, j->comm);
    for (int s = 0; s < p; s++)
      for (long i = 0; i < m; i++) j->failures += b[s * m + i] != val(s * p + r, t, i);
    /* The vector forms with the alltoall's blocks: alltoallv of the same,
     * allgatherv of every rank's first block, reduce_scatter of sums. */
    int *cnt = malloc(2 * (size_t)p * sizeof *cnt), *dsp = cnt + p;
    for (int s = 0; s < p; s++) cnt[s] = (int)m, dsp[s] = (int)(s * m);
    MPI_Alltoallv(a, cnt, dsp, MPI_DOUBLE, b, cnt, dsp, MPI_DOUBLE, j->comm);
    for (int s = 0; s < p; s++)
      for (long i = 0; i < m; i++) j->failures += b[s * m + i] != val(s * p + r, t, i);
    MPI_Allgatherv(a, (int)m, MPI_DOUBLE, b, cnt, dsp, MPI_DOUBLE, j->comm);
    for (int s = 0; s < p; s++)
      for (long i = 0; i < m; i++) j->failures += b[s * m + i] != val(s * p, t, i);
    MPI_Reduce_scatter(a, b, cnt, MPI_DOUBLE, MPI_SUM, j->comm);
    for (long i = 0; i < m; i++) {
      double want = 0;
      for (int s = 0; s < p; s++) want += val(s * p + r, t, i);
      j->failures += b[i] != want;
    }
    free(cnt);
  }
  free(a);
  free(b);
  return NULL;
}

int main(int argc, char **argv) {
  int provided, threads = 3, rounds = 4;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--threads") && i + 1 < argc) threads = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--rounds") && i + 1 < argc) rounds = atoi(argv[++i]);
    else {
      fprintf(stderr, "usage: shim_threads [--threads T] [--rounds R]\n");
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
  }
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (provided < MPI_THREAD_MULTIPLE || threads < 1 || threads > 64) {
    if (rank == 0)
      fprintf(stderr, "shim_threads: %s\n",
              provided < MPI_THREAD_MULTIPLE ? "the MPI does not provide MPI_THREAD_MULTIPLE"
                                             : "--threads must be 1 to 64");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  job_t job[64];
  pthread_t th[64];
  /* Duplicates in the main thread, in the same order on every rank. */
  for (int t = 0; t < threads; t++) {
    job[t] = (job_t){.id = t, .rounds = rounds};
    MPI_Comm_dup(MPI_COMM_WORLD, &job[t].comm);
  }
  for (int t = 0; t < threads; t++) pthread_create(&th[t], NULL, run, &job[t]);
  int failures = 0;
  for (int t = 0; t < threads; t++) {
    pthread_join(th[t], NULL);
    failures += job[t].failures;
    MPI_Comm_free(&job[t].comm);
  }
  /* The verdict goes past the shim (PMPI_Allreduce): through it, it would
   * be one more call under test, and an allreduce that returned success
   * without writing would report no failures. */
  int all = 0;
  PMPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf("shim_threads: %d threads, %d failures\n", threads, all);
  MPI_Finalize();
  return all ? 1 : 0;
}
