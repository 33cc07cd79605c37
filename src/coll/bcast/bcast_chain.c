/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Pipelined chain broadcast.
 *
 * The ranks form a chain in relative order: root -> root+1 -> ... ->
 * root+p-1 (mod p). The message is cut into s = ceil(n/seg) segments of
 * seg bytes (the last one shorter). Every rank but the root receives the
 * segments in order from its predecessor, and every rank but the last
 * forwards segment i to its successor as soon as it has it, while the
 * next segments are already arriving: a window of `ahead` receives stays
 * posted, and at most `ahead` sends are in flight. Once the pipeline is
 * full every link carries a segment at a time, so for long messages the
 * time approaches n.beta whatever p is; the price is the p - 2 extra
 * segment times it takes to fill it.
 *
 * The window is counted in bytes: ahead = ceil(WSP__CHAIN_WINDOW / seg),
 * at least 4 and at most 32 segments (wsp__bcast_ahead,
 * which the split binary tree and the two-tree share). Each segment
 * above the MPI's eager limit needs a rendezvous answer from the receiver,
 * and that answer leaves through the receiver's own link, queued behind the
 * segments it is forwarding; the window has to cover that queue. Under
 * Open MPI on netlab a fixed window of 4 segments left gaps on every hop
 * and 16 did not; under MPICH (UCX, whose rendezvous the receiver drives)
 * the 2 MiB window was a little slower than 4 segments. Open MPI gains
 * more than MPICH loses, so the window is the same for both (the runs:
 * docs/results/coll.md, "Chain window").
 *
 * Under SimGrid the window covers the hop's latency and no more. SMPI
 * moves a pair's messages side by side, sharing the path among them, where
 * a TCP connection delivers them in order: a window of k segments arrives
 * all at once, and each hop of the chain costs the whole window instead of
 * one segment. With the 2 MiB window a simulated chain of 64 ranks took
 * several times its model's time; with the latency's worth it matches it
 * (docs/results/simgrid.md, "Pipelines: one segment at a time").
 *
 * The segment size is a->tune.seg: the cost function sets it to the
 * optimum of the formula below (wsp__pipeline_seg with p - 1 stages),
 * sqrt(n.alpha / ((p-2).b)); the user may force any value >= 1
 * (WSP_COLL_SEGMENT); 0 means 64 KiB.
 *
 * Preconditions: none (any p, any n).
 *
 * Every rank but the ends receives and sends at once, so a byte costs
 * b = beta_x (src/model/model.h); b = beta for p = 2, a single send.
 */
#include "bcast.h"

#include "../../patterns/tree.h"

#include <math.h>

enum { WSP__CHAIN_MIN_AHEAD = 4, WSP__CHAIN_MAX_AHEAD = 32 };
#define WSP__CHAIN_WINDOW ((size_t)2 << 20)

size_t wsp__bcast_ahead(size_t seg, double lat, double seg_time) {
#ifdef WSP_SIMGRID
  double w = seg_time > 0 ? ceil(2 * lat / seg_time) : 1;
  (void)seg;
  return w < 1 ? 1 : w > WSP__BCAST_MAX_AHEAD ? WSP__BCAST_MAX_AHEAD : (size_t)w;
#else
  (void)lat;
  (void)seg_time;
#endif
  size_t k = WSP__CHAIN_WINDOW / seg + (WSP__CHAIN_WINDOW % seg != 0);
  if (k < WSP__CHAIN_MIN_AHEAD) k = WSP__CHAIN_MIN_AHEAD;
  if (k > WSP__CHAIN_MAX_AHEAD) k = WSP__CHAIN_MAX_AHEAD;
  return k;
}

/* Under SimGrid a receive posted when the one `ahead` before it completes
 * reaches the link a latency later, so on a long hop a window of twice the
 * latency leaves the link idle whenever the segments come faster than the
 * window assumed (one chain of several sharing a link runs alone at
 * times) or the window is a single segment, and sites_chain ran well over
 * its cost, which prices the crossing's latency once
 * (docs/results/simgrid.md, "sites_chain against its cost"). The segments
 * that overlap on the far hop cost nothing there: it is not the
 * bottleneck. The window counts receives; the sender's sends on that hop
 * are detached under SMPI's default threshold (64 KiB, above the chains'
 * segments), so they do not wait for it. */
size_t wsp__bcast_ahead_far(size_t seg, double lat, double seg_time) {
  size_t k = wsp__bcast_ahead(seg, lat, seg_time);
#ifdef WSP_SIMGRID
  if (k < WSP__BCAST_MAX_AHEAD) k++;
#endif
  return k;
}

WSP__COST(bcast, chain,
          "(p - 1 + s - 1).(alpha + (n/s).b) + drain(min(seg, n)), s = ceil(n/seg), b = beta_x "
          "(beta for p = 2)") {
  size_t n = s->bytes;
  double b = wsp__chain_beta(m, s->p);
  size_t seg = wsp__pipeline_seg(m, n, s->p - 1, b, 1);
  if (t) t->seg = seg;
  size_t nseg = n ? wsp__bcast_nseg(n, seg) : 1;
  double segs = (double)nseg;
  /* Segments overlap: the lanes' queue drains once. */
  return (s->p - 1 + segs - 1) * (m->alpha + (double)n / segs * b) + wsp__drain_pipeline(m, n, seg);
}

int wsp__bcast_chain(wsp_comm_t *comm, const wsp__coll_args_t *a) {
  int p = comm->size, r = wsp__tree_rel(comm->rank, a->root, p);
  int prev = r > 0 ? wsp__tree_abs(r - 1, a->root, p) : -1;
  int next = r + 1 < p ? wsp__tree_abs(r + 1, a->root, p) : -1;
  return wsp__bcast_path(comm, a, prev, next, a->tune.seg ? a->tune.seg : WSP__BCAST_DEFAULT_SEG);
}

int wsp__bcast_path(wsp_comm_t *comm, const wsp__coll_args_t *a, int prev, int next,
                    size_t seg) {
  int rc = WSP_OK;
  size_t n = a->block, nseg = wsp__bcast_nseg(n, seg);
  size_t ahead = wsp__bcast_ahead(seg, comm->model.alpha, (double)seg * comm->model.beta);
  char *buf = a->recvbuf;
  MPI_Request rreq[WSP__BCAST_MAX_AHEAD], sreq[WSP__BCAST_MAX_AHEAD];
  for (size_t k = 0; k < WSP__BCAST_MAX_AHEAD; k++)
    rreq[k] = sreq[k] = MPI_REQUEST_NULL;
  if (prev >= 0)
    for (size_t i = 0; i < nseg && i < ahead; i++)
      if ((rc = wsp__irecv_typed(comm, buf + i * seg, wsp__bcast_seg_len(n, seg, i), MPI_BYTE,
                                 prev, a->tag, &rreq[i])))
        goto fail;
  for (size_t i = 0; i < nseg; i++) {
    size_t slot = i % ahead;
    if (prev >= 0) {
      if ((rc = wsp__waitall(comm, 1, &rreq[slot], seg))) goto fail;
      size_t j = i + ahead;
      if (j < nseg &&
          (rc = wsp__irecv_typed(comm, buf + j * seg, wsp__bcast_seg_len(n, seg, j),
                                 MPI_BYTE, prev, a->tag, &rreq[slot])))
        goto fail;
    }
    if (next >= 0) {
      if ((rc = wsp__waitall(comm, 1, &sreq[slot], seg))) goto fail;
      if ((rc = wsp__isend_typed(comm, buf + i * seg, wsp__bcast_seg_len(n, seg, i), MPI_BYTE,
                                 next, a->tag, &sreq[slot])))
        goto fail;
    }
  }
  if ((rc = wsp__waitall(comm, (int)ahead, sreq, 0))) goto fail;
  return WSP_OK;
fail:
  return wsp__abandon(comm, rc, WSP__BCAST_MAX_AHEAD, rreq, WSP__BCAST_MAX_AHEAD, sreq);
}
