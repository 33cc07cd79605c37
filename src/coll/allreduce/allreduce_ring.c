/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Segmented ring allreduce (reduce-scatter around the ring, then allgather
 * around the ring; Patarasuk & Yuan 2009, as in Horovod/NCCL/Gloo).
 *
 * The vector is cut into p nearly equal blocks (wsp__part_start; blocks
 * may be empty when count < p). Rank i sends to i+1 and receives from
 * i-1. In reduce-scatter step t (t = 0..p-2) it sends block i-t (mod p)
 * and receives block i-t-1, which it combines into its own copy; after
 * p-1 steps it holds block i+1 fully reduced. In allgather step t it
 * sends block i+1-t and receives block i-t in place. Numbered as one run
 * of 2(p-1) steps, step t sends block i-t and receives block i-t-1, so
 * what is received in step t is what goes out in step t+1.
 *
 * Each block is cut further into segments of a->tune.seg bytes (whole
 * elements): segment j of step t+1 goes out as soon as segment j of step t
 * has arrived and been reduced, while the later segments are still on the
 * wire; the receives of a step are posted before its sends. So reducing
 * overlaps receiving, and no message is larger than one segment.
 *
 * A block's reduction runs around the ring starting after its owner, not
 * in rank order: commutative ops only (fallback recursive_doubling).
 *
 * Model: with k = ceil(n / (p.seg)) segments per block, each link carries
 * 2(p-1)k messages and 2((p-1)/p).n bytes; the reduction of a segment is
 * hidden behind the transfer of the next except for one segment per
 * reduce-scatter step (for gamma > beta_x, the transfers hide behind the
 * reductions instead). The segment size minimising it is sqrt(2.(n/p).alpha
 * / min(beta_x, gamma)) (wsp__pipeline_seg over one block, 2 stages). Every
 * rank sends and receives at once, so a byte costs beta_x, as in the
 * exchanges of Rabenseifner's algorithm (src/model/model.h).
 *
 * Preconditions: commutative op.
 */
#include "../coll_internal.h"

#include "../reduce/reduce_util.h"

#include <stdlib.h>

/* The cost at segments of seg bytes (blk per block). Each rank sends to
 * one neighbour only. With two segments or more a step's first segments go
 * out before the last of the step before has arrived, queued behind it on
 * the same lanes, which drain once, at the end; a step of one segment
 * waits for the whole of the one before (wsp__drain). */
static double wsp__ring_cost(const wsp_model_t *m, int p, double n, size_t blk, size_t seg) {
  double bx = m->beta_x;
  double lo = bx < m->gamma ? bx : m->gamma;
  double hi = bx < m->gamma ? m->gamma : bx;
  double k = seg && blk ? (double)((blk + seg - 1) / seg) : 1.0;
  double drains = k > 1 ? 1 : 2.0 * (p - 1);
  return 2.0 * (p - 1) * k * m->alpha + (double)(p - 1) / p * n * (bx + hi) +
         (p - 1) * (n / ((double)p * k)) * lo + drains * wsp__drain(m, (double)seg);
}

WSP__COST(allreduce, ring,
          "2.(p-1).k.alpha + ((p-1)/p).n.(beta_x + max(beta_x, gamma)) + "
          "(p-1).(n/(p.k)).min(beta_x, gamma) + [k = 1 ? 2.(p-1) : 1].drain(seg), k = ceil(n / "
          "(p.seg)); where one segment per block would pay a drain per step, two if cheaper") {
  int p = s->p;
  size_t blk = (s->bytes + (size_t)p - 1) / (size_t)p, al = wsp__red_elem_bytes(s);
  double lo = m->beta_x < m->gamma ? m->beta_x : m->gamma, n = (double)s->bytes;
  size_t seg = wsp__pipeline_seg(m, blk, 2, lo / 2, al);
  double c = wsp__ring_cost(m, p, n, blk, seg);
  /* Half a block, in whole elements, while that still takes the lanes. */
  size_t half = (blk / 2 + al - 1) / al * al;
  if (seg >= blk && half > 0 && half < blk && wsp__drain(m, (double)half) > 0) {
    double c2 = wsp__ring_cost(m, p, n, blk, half);
    if (c2 < c) c = c2, seg = half;
  }
  if (t) t->seg = seg;
  return c;
}

int wsp__allreduce_ring(wsp_comm_t *comm, const wsp__coll_args_t *a) {
  int p = comm->size, me = comm->rank, rc = WSP_OK;
  int right = (me + 1) % p, left = (me - 1 + p) % p;
  size_t count = a->count, segn = wsp__red_segn(a);
  size_t nmax = (wsp__part_start(count, p, 1) + segn - 1) / segn; /* block 0 */
  if (nmax == 0) nmax = 1;
  void *mem = NULL, *acc = a->recvbuf;
  void *rb = wsp__tmp_typed(comm, a, count, &mem);
  MPI_Request *req = rb ? malloc(4 * nmax * sizeof *req) : NULL;
  if (rb == NULL || req == NULL) {
    free(mem);
    return rb ? wsp__fail(comm, WSP_ERR_NOMEM, "allreduce/ring: out of memory")
              : WSP_ERR_NOMEM;
  }
  for (size_t i = 0; i < 4 * nmax; i++) req[i] = MPI_REQUEST_NULL;
  /* Receives and sends of the steps of each parity. */
  MPI_Request *rreq[2] = {req, req + nmax}, *sreq[2] = {req + 2 * nmax, req + 3 * nmax};
  if ((rc = wsp__copy_typed(comm, a, a->sendbuf, acc, count))) goto out;
#define BLK(t) ((int)(((me - (t)) % p + p) % p))
#define NSEG(b) ((wsp__part_len(count, p, (b)) + segn - 1) / segn)
#define SEGOFF(b, j) (wsp__part_start(count, p, (b)) + (j) * segn)
#define SEGLEN(b, j)                                                          \
  (wsp__part_len(count, p, (b)) - (j) * segn < segn                           \
       ? wsp__part_len(count, p, (b)) - (j) * segn                            \
       : segn)
#define CHK(call)                                                             \
  do {                                                                        \
    if ((rc = (call)) != WSP_OK) goto fail;                                   \
  } while (0)
  int steps = 2 * (p - 1);
  for (int t = 0; t < steps; t++) {
    int sb = BLK(t), rbk = BLK(t + 1), par = t % 2;
    /* The slots of step t-2 are reused. Step t receives into block i-t-1,
     * which step t-2 read (p = 3) or step t-1 read (p = 2): those sends
     * must be done first. */
    CHK(wsp__waitall(comm, (int)nmax, sreq[par], segn * a->type_size));
    if (p == 2 && t > 0) CHK(wsp__waitall(comm, (int)nmax, sreq[1 - par], 0));
    void *dst = t <= p - 2 ? rb : acc; /* reduce-scatter: aside; allgather: in place */
    for (size_t j = 0; j < NSEG(rbk); j++)
      CHK(wsp__irecv_typed(comm, wsp__elem(a, dst, SEGOFF(rbk, j)), SEGLEN(rbk, j),
                           a->dtype, left, a->tag, &rreq[par][j]));
    for (size_t j = 0; j < NSEG(sb); j++) {
      size_t off = SEGOFF(sb, j), len = SEGLEN(sb, j);
      if (t > 0) { /* block sb segment j arrived in step t-1 */
        CHK(wsp__waitall(comm, 1, &rreq[1 - par][j], segn * a->type_size));
        if (t - 1 <= p - 2)
          CHK(wsp__reduce_local(comm, wsp__elem(a, rb, off), wsp__elem(a, acc, off),
                                len, a->dtype, a->op));
      }
      CHK(wsp__isend_typed(comm, wsp__elem(a, acc, off), len, a->dtype, right,
                           a->tag, &sreq[par][j]));
    }
  }
  CHK(wsp__waitall(comm, (int)(4 * nmax), req, 0));
  goto out;
fail:
  wsp__abandon(comm, rc, (int)(2 * nmax), req, (int)(2 * nmax), req + 2 * nmax);
out:
#undef BLK
#undef NSEG
#undef SEGOFF
#undef SEGLEN
#undef CHK
  free(req);
  free(mem);
  return rc;
}
