/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The network probe's eager search when a send fails: no request may be
 * left active. The lower rank of the eager pair sends a message and
 * watches whether it completes before the receive is posted, then sends
 * its verdict; here its MPI_Isend of the verdict fails (tests/mpi/inject.h)
 * at the first try whose message is still in flight (above the eager
 * limit). The probe must then fail with WSP_ERR_MPI on that rank and with
 * an error on its partner (which waits for a verdict that never comes, up
 * to WSP_TIMEOUT), and every request of the eager messages must have been
 * completed or freed (counted through MPI's profiling interface), so that
 * nothing the MPI still holds points into the probe's freed buffer.
 *   test_probe_fault        (2 ranks, WSP_TIMEOUT set)
 */
#include <stdio.h>
#include <stdlib.h>

#include "wirespeed.h"
#include "inject.h"
#include "mpi_check.h"
#include "tags.h"

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 2) {
    if (rank == 0) fprintf(stderr, "test_probe_fault needs 2 ranks\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  wsp_comm_t *w = world_comm();
  int rc;
  wsp_config_t cfg;
  wsp_comm_config(w, &cfg);
  CHECK(cfg.timeout > 0, "set WSP_TIMEOUT: the partner waits for the verdict until then");
  wsp_netmap_probe_config_t pc;
  wsp_netmap_probe_config_init(&pc);
  pc.reps = 1;
  pc.stream_bytes = 64 * 1024;
  pc.eager_limits = 1;
  if (rank == 0) { /* the lower rank of the pair: it sends */
    inject.track_tag = WSP__TAG_PROBE_EAGER;
    inject.fail_tag = WSP__TAG_PROBE_VERDICT;
    inject.fail_in = 1;
    inject.fail_when_pending = 1;
  }
  wsp_netmap_t *m = NULL;
  rc = wsp_netmap_probe(w, &pc, &m);
  if (rank == 0) {
    CHECK(inject.fired == 1,
          "the verdict's send never failed while an eager message was in flight: "
          "nothing was tested");
    CHECK(rc == WSP_ERR_MPI, "the probe returned %s: %s", wsp_err_name(rc), wsp_last_error());
  } else {
    CHECK(rc != WSP_OK, "the partner's probe succeeded without a verdict");
  }
  wsp_netmap_free(&m);
  CHECK(wsp_comm_free(&w) == WSP_OK, "wsp_comm_free: %s", wsp_last_error());
  CHECK(inject_active() == 0,
        "%d request(s) of the eager messages still active after the failed probe",
        inject_active());
  printf("rank %d: probe %s, failures injected %d, eager requests left active %d\n", rank,
         wsp_err_name(rc), inject.fired, inject_active());
  long all = 0;
  MPI_Allreduce(&failures, &all, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  MPI_Finalize();
  return all ? 1 : 0;
}
