/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A lane of the collectives' transport breaks in the middle of a call
 * (src/p2p/xport.c, "Failures"): every rank must return the same error,
 * WSP_ERR_CONN naming the pair, nobody may hang (run it with no time limit:
 * the notice, not WSP_TIMEOUT, must end the others' waits), every later call
 * must fail at once with it, and the communicator must free.
 *
 *   test_lane_fault [--alg NAME] [--bytes N]
 *
 * Run with WSP_TRANSPORT=lanes, one node per rank (WSP_NODES=cyclic:P) and
 * WSP_P2P_LANES. Rank 1 alone resets one of its lanes once it has sent
 * WSP_P2P_FAULT_RESET bytes on a pair (the testing aid of src/p2p; set
 * here, before the communicator exists, so that no other rank has it).
 * First a small call of the same collective checks that the transport
 * works, against MPI_Allreduce on MPI_COMM_WORLD. Then the allreduce of
 * --bytes (default 4 MiB of doubles; every ring step a transfer over the
 * lanes) on which the lane breaks.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wirespeed.h"
#include "mpi_check.h"

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const char *alg = "ring";
  size_t bytes = (size_t)4 << 20;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--alg") == 0 && i + 1 < argc)
      alg = argv[++i];
    else if (strcmp(argv[i], "--bytes") == 0 && i + 1 < argc)
      bytes = strtoull(argv[++i], NULL, 10);
    else {
      if (rank == 0) fprintf(stderr, "usage: test_lane_fault [--alg NAME] [--bytes N]\n");
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
  }
  if (size < 3) {
    if (rank == 0) fprintf(stderr, "test_lane_fault needs 3 ranks or more\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const char *after = getenv("WSP_LANE_FAULT_AFTER");
  if (rank == 1) setenv("WSP_P2P_FAULT_RESET", after ? after : "300000", 1);
  wsp_comm_t *w = world_comm();
  int rc;
  wsp_config_t cfg;
  wsp_comm_config(w, &cfg);
  CHECK(cfg.timeout == 0, "run without WSP_TIMEOUT: the notice must end the waits");
  int a = 0;
  CHECK(wsp_coll_alg_from_name(WSP_COLL_ALLREDUCE, alg, &a) == WSP_OK, "--alg %s: %s", alg,
        wsp_last_error());
  CHECK(wsp_coll_set_alg(w, WSP_COLL_ALLREDUCE, a) == WSP_OK, "%s", wsp_last_error());

  /* The transport works: a call under the fault's threshold, against MPI.
   * Integer-valued doubles, so that any order of summing is exact. */
  size_t n = bytes / sizeof(double), small = 4096;
  double *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y), *ref = malloc(n * sizeof *ref);
  CHECK(x && y && ref, "out of memory");
  for (size_t i = 0; i < n; i++) x[i] = (double)((i * 7 + (size_t)rank * 13) % 1000);
  rc = wsp_allreduce(w, x, y, small, MPI_DOUBLE, MPI_SUM);
  CHECK(rc == WSP_OK, "the first allreduce: %s", wsp_last_error());
  MPI_Allreduce(x, ref, (int)small, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  CHECK(memcmp(y, ref, small * sizeof *y) == 0, "the first allreduce differs from MPI's");

  double t0 = MPI_Wtime();
  rc = wsp_allreduce(w, x, y, n, MPI_DOUBLE, MPI_SUM);
  double t = MPI_Wtime() - t0;
  char msg[512];
  snprintf(msg, sizeof msg, "%s", wsp_last_error());
  printf("FAULT rank %d status %s after %.2f s: %s\n", rank, wsp_err_name(rc), t, rc ? msg : "");
  fflush(stdout);
  CHECK(rc == WSP_ERR_CONN, "rank %d: the allreduce on which a lane broke returned %s (%s)", rank,
        wsp_err_name(rc), msg);
  CHECK(rc != WSP_ERR_CONN || strstr(msg, "between ranks 1 and") != NULL,
        "rank %d: the message does not name the pair of rank 1: %s", rank, msg);
  t0 = MPI_Wtime();
  int rc2 = wsp_allreduce(w, x, y, small, MPI_DOUBLE, MPI_SUM);
  printf("AFTER rank %d status %s in %.3f s: %s\n", rank, wsp_err_name(rc2), MPI_Wtime() - t0,
         rc2 ? wsp_last_error() : "");
  CHECK(rc2 == WSP_ERR_CONN && strstr(wsp_last_error(), "unusable") != NULL,
        "rank %d: the call after the failure returned %s: %s", rank, wsp_err_name(rc2),
        wsp_last_error());
  rc = wsp_comm_free(&w);
  CHECK(rc == WSP_OK, "wsp_comm_free: %s", wsp_last_error());
  free(x);
  free(y);
  free(ref);
  long all = 0;
  MPI_Allreduce(&failures, &all, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0 && all == 0)
    printf("lane fault: every rank returned WSP_ERR_CONN naming the pair, and the next call "
           "failed at once\n");
  MPI_Finalize();
  return all ? 1 : 0;
}
