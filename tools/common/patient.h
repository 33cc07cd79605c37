/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Waiting for an MPI request without holding a core, for the benchmarks'
 * harness waits whose end is not timed.
 *
 * A rank that has finished its timed work and waits for the others in a
 * blocking MPI call busy-polls there (Open MPI and MPICH at their
 * defaults). Where ranks share cores, as on netlab, where every host's
 * ranks run on one machine, the finished ranks take the cores from the
 * ranks still inside the timed work and slow its tail (docs/results/coll.md,
 * "The harness's spinning wait"). These waits poll a few times, then sleep
 * between polls (20 us asked, longer with the kernel's timer slack).
 *
 * Under SimGrid (WSP_SIMGRID) a blocked simulated rank costs no core, and
 * SMPI's non-blocking collectives send from every rank to every other
 * (src/core/p2p.c): there these are MPI's blocking calls.
 *
 * Header-only, so that the standalone programs of bench/ share it with
 * wsp-bench. nanosleep needs _POSIX_C_SOURCE 200809L: CMake defines it for
 * what it builds, and the programs built with mpicc alone define it before
 * their first include.
 */
#ifndef WSP_TOOLS_PATIENT_H
#define WSP_TOOLS_PATIENT_H

#include <mpi.h>
#include <time.h>

/* Waits until req completes; returns MPI's code (MPI_SUCCESS). */
static inline int wsp_patient_wait(MPI_Request *req) {
#ifdef WSP_SIMGRID
  return MPI_Wait(req, MPI_STATUS_IGNORE);
#else
  for (int pass = 0;;) {
    int done = 0, rc = MPI_Test(req, &done, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS || done) return rc;
    if (pass < 64) {
      pass++;
      continue;
    }
    struct timespec ts = {0, 20 * 1000};
    nanosleep(&ts, NULL);
  }
#endif
}

/* out[0..n) = the largest of in[0..n) over comm, on every rank, waited
 * for with wsp_patient_wait; returns MPI's code. */
static inline int wsp_patient_max(const double *in, double *out, int n, MPI_Comm comm) {
#ifdef WSP_SIMGRID
  return MPI_Allreduce(in, out, n, MPI_DOUBLE, MPI_MAX, comm);
#else
  MPI_Request req;
  int rc = MPI_Iallreduce(in, out, n, MPI_DOUBLE, MPI_MAX, comm, &req);
  return rc == MPI_SUCCESS ? wsp_patient_wait(&req) : rc;
#endif
}

#endif
