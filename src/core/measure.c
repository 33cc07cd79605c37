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

/* Whether a send of n bytes to peer completes before its receive is
 * posted; both ranks of the pair learn the verdict. */
static int wsp__eager_try(const wsp_comm_t *c, int peer, int tag, int verdict_tag, char *buf,
                          size_t n, double watch, int *eager) {
  int rc = WSP_OK;
  unsigned char verdict = 0;
  if (c->rank < peer) {
    MPI_Request r = MPI_REQUEST_NULL;
    if ((rc = wsp__isend_bytes(c, buf, n, peer, tag, 0, &r))) return rc;
    wsp__backoff_t bo;
    wsp__backoff_init(&bo, c);
    /* The last test comes after the watch: a sender descheduled through
     * it (shared cores) still tests once, late, and a late completion can
     * only be eager, as the receive is not posted yet. */
    int done = 0;
    for (const double t0 = wsp__now();;) {
      const int last = wsp__now() - t0 >= watch;
      int mrc = MPI_Test(&r, &done, MPI_STATUS_IGNORE);
      if (mrc != MPI_SUCCESS)
        return wsp__abandon(c, wsp__mpi_fail(c, mrc, "MPI_Test", WSP__WHERE), 0, NULL, 1, &r);
      if (done || last) break;
      wsp__backoff_idle(&bo);
    }
    verdict = (unsigned char)done;
    /* The message may still be in flight: on failure it is completed or
     * let go (wsp__abandon) before its buffer can be freed. The peer posts
     * its receive only after a verdict, so without one it waits for the
     * limit. */
    if ((rc = wsp__send_bytes(c, &verdict, 1, peer, verdict_tag)))
      return wsp__abandon(c, rc, 0, NULL, 1, &r);
    if ((rc = wsp__waitall(c, 1, &r, n))) return rc;
  } else {
    if ((rc = wsp__recv_bytes(c, &verdict, 1, peer, verdict_tag)) ||
        (rc = wsp__recv_bytes(c, buf, n, peer, tag)))
      return rc;
  }
  *eager = verdict != 0;
  return WSP_OK;
}

int wsp__measure_eager(const wsp_comm_t *comm, int peer, int tag, int verdict_tag, char *buf,
                       size_t from, size_t max, double rel, double watch_s, double per_byte,
                       size_t *limit, uint64_t *sent) {
  size_t lo = 0, hi = 0; /* the largest eager size seen; the smallest rendezvous one (0: none) */
  int rc = WSP_OK, eager = 0;
  *limit = 0;
  for (size_t n = from; n <= max;) {
    if ((rc = wsp__eager_try(comm, peer, tag, verdict_tag, buf, n, watch_s + per_byte * (double)n,
                             &eager)))
      return rc;
    if (sent && comm->rank < peer) *sent += n + 1;
    if (eager)
      lo = n;
    else
      hi = n;
    if (hi == 0) { /* doubling, until a send waits */
      n *= 2;
      continue;
    }
    /* Halving; coarse searches look no further down than `from`. */
    if ((rel > 0 && lo == 0) || hi <= lo + 1 || (double)(hi - lo) <= rel * (double)lo) break;
    n = lo + (hi - lo) / 2;
  }
  *limit = lo;
  return WSP_OK;
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
