/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A time limit on every wait (docs/faults.md): with cfg.timeout (or
 * WSP_TIMEOUT) set, a call whose partner stops answering ends after that
 * many seconds without progress, with WSP_ERR_TIMEOUT naming the rank it
 * waited for, where MPI would wait forever. Rank 1 stands for a rank that
 * hangs: it sleeps through a scatter it is the root of, while every other
 * rank waits in it for its block. Each of them must get WSP_ERR_TIMEOUT
 * naming rank 1, and, its communicator being unusable from then on, the
 * same status at once from a second call. Rank 1 does not make the call
 * late: its partners have let it go, so it would wait for them in turn. The
 * scatter is forced to "linear", where each rank waits for the root alone;
 * in a tree a rank names the partner that waits for rank 1 instead.
 *
 * Build:  mpicc timeout.c $(pkg-config --cflags --libs wirespeed) -o timeout
 * Run:    mpirun -np 3 ./timeout          (the limit: 2 s, or WSP_TIMEOUT)
 * Every rank but 1 prints what it got; rank 0 then prints "timeout: ok, ...".
 * Anything other than what is described above aborts the job.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* sleep() under -std=c11 */
#endif
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <wirespeed.h>

static void fail(const char *what, const char *why) {
  fprintf(stderr, "timeout: %s: %s\n", what, why);
  MPI_Abort(MPI_COMM_WORLD, 1);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size < 2) fail("a stopped rank 1", "needs two ranks or more");
  wsp_config_t cfg;
  if (wsp_config_init(&cfg) || wsp_config_from_env(&cfg)) fail("config", wsp_last_error());
  /* Long enough that ordinary waits on a busy machine stay below it. */
  if (cfg.timeout == 0) cfg.timeout = 2.0;
  if (wsp_coll_alg_from_name(WSP_COLL_SCATTER, "linear", &cfg.coll_alg[WSP_COLL_SCATTER]))
    fail("algorithm", wsp_last_error());
  wsp_comm_t *comm;
  if (wsp_comm_create(MPI_COMM_WORLD, &cfg, &comm)) fail("wsp_comm_create", wsp_last_error());

  int block = -1, ok = 1;
  if (rank == 1) {
    sleep((unsigned)(2 * cfg.timeout) + 1); /* well past the limit */
  } else {
    double t = MPI_Wtime();
    int rc = wsp_scatter(comm, NULL, 1, MPI_INT, &block, 1, MPI_INT, 1);
    t = MPI_Wtime() - t;
    printf("timeout: rank %d got %s after %.2f s: %s\n", rank, wsp_err_name(rc), t,
           wsp_last_error());
    ok = rc == WSP_ERR_TIMEOUT && strstr(wsp_last_error(), "waiting for rank(s) 1 (") != NULL;
    t = MPI_Wtime();
    rc = wsp_scatter(comm, NULL, 1, MPI_INT, &block, 1, MPI_INT, 1);
    printf("timeout: rank %d, the next call: %s after %.3f s: %s\n", rank, wsp_err_name(rc),
           MPI_Wtime() - t, wsp_last_error());
    ok = ok && rc == WSP_ERR_TIMEOUT && strstr(wsp_last_error(), "an earlier call") != NULL;
    fflush(stdout);
  }
  /* MPI_COMM_WORLD itself is fine: rank 1 is back. */
  int all_ok;
  MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (!all_ok) fail("not what docs/faults.md describes", "see the ranks' lines above");
  if (rank == 0)
    printf("timeout: ok, %d rank(s) got WSP_ERR_TIMEOUT naming rank 1 after the %g s limit\n",
           size - 1, cfg.timeout);
  if (wsp_comm_free(&comm)) fail("wsp_comm_free", wsp_last_error());
  MPI_Finalize();
  return 0;
}
