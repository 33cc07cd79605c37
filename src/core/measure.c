/* SPDX-License-Identifier: BSD-3-Clause */
/* Timing a pair of ranks (measure.h). */
#include "measure.h"

#include "wsp_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* One message each way, waited for with the back-off. */
static int wsp__xfer(const wsp_comm_t *comm, void *buf, int bytes, int peer, int tag,
                     int send) {
  MPI_Request r = MPI_REQUEST_NULL;
  int rc = send ? wsp__isend_bytes(comm, buf, (size_t)bytes, peer, tag, 0, &r)
                : wsp__irecv_bytes(comm, buf, (size_t)bytes, peer, tag, &r);
  return rc ? rc : wsp__waitall(comm, 1, &r, 0);
}

int wsp__measure_pingpong(const wsp_comm_t *comm, int peer, int tag, char *buf, int bytes,
                          int reps, double *samples) {
  int rc = WSP_OK, first = comm->rank < peer;
  for (int i = 0; i <= reps; i++) { /* repetition 0 is a warm-up */
    double t0 = MPI_Wtime();
    if ((rc = wsp__xfer(comm, buf, bytes, peer, tag, first)) ||
        (rc = wsp__xfer(comm, buf, bytes, peer, tag, !first)))
      return rc;
    if (i > 0) samples[i - 1] = MPI_Wtime() - t0;
  }
  return rc;
}

int wsp__measure_stream(const wsp_comm_t *comm, int peer, int tag, char *buf, int bytes,
                        int window, int reps, int both, double *samples) {
  int rc = WSP_OK, first = comm->rank < peer;
  MPI_Request sreq[WSP__MEASURE_WINDOW_MAX], rreq[WSP__MEASURE_WINDOW_MAX];
  char ack[8] = {0};
  if (window > WSP__MEASURE_WINDOW_MAX)
    return wsp__fail(comm, WSP_ERR_INTERNAL, "stream window %d over %d", window,
                     WSP__MEASURE_WINDOW_MAX);
  /* MPI forbids overlapping receive buffers: each receive of a window
   * gets its own slot. */
  char *rbuf = buf + bytes;
  for (int i = 0; i <= reps; i++) { /* repetition 0 is a warm-up */
    double t0 = MPI_Wtime();
    int ns = 0, nr = 0;
    for (int k = 0; k < window && rc == WSP_OK; k++) {
      /* Only posted requests are counted (a failed post leaves none). */
      if ((first || both) &&
          (rc = wsp__isend_bytes(comm, buf, (size_t)bytes, peer, tag, 0, &sreq[ns])) == WSP_OK)
        ns++;
      if (rc == WSP_OK && (!first || both) &&
          (rc = wsp__irecv_bytes(comm, rbuf + (size_t)k * bytes, (size_t)bytes, peer, tag,
                                 &rreq[nr])) == WSP_OK)
        nr++;
    }
    if (rc != WSP_OK) return wsp__abandon(comm, rc, nr, rreq, ns, sreq);
    if ((rc = wsp__waitall(comm, ns, sreq, 0)) || (rc = wsp__waitall(comm, nr, rreq, 0)) ||
        (!both && (rc = wsp__xfer(comm, ack, (int)sizeof ack, peer, tag, !first))))
      return rc;
    if (i > 0) samples[i - 1] = MPI_Wtime() - t0;
  }
  return rc;
}

double wsp__measure_min(const double *samples, int n) {
  double m = INFINITY;
  for (int i = 0; i < n; i++)
    if (samples[i] < m) m = samples[i];
  return m;
}

static int wsp__cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

void wsp__measure_sort(double *v, size_t n) { qsort(v, n, sizeof *v, wsp__cmp_double); }

double wsp__measure_median(const double *v, int n, double *scratch) {
  if (n <= 0) return 0;
  if (scratch != v) memcpy(scratch, v, (size_t)n * sizeof *scratch);
  wsp__measure_sort(scratch, (size_t)n);
  return n % 2 ? scratch[n / 2] : 0.5 * (scratch[n / 2 - 1] + scratch[n / 2]);
}
