/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Split-binary-tree broadcast.
 *
 * The message is cut into two halves, and the ranks other than the root
 * into two binary trees, the sides (src/patterns/splitbin.h: odd relative
 * ranks in side 0, even ones in side 1, each a binary heap under the root).
 * The root sends half 0 down side 0 and half 1 down side 1, in segments
 * and alternating between the two, and every rank forwards each segment of
 * its side's half to its (up to two) children as soon as it has it, while
 * the next segments arrive. Then each rank of side 0 swaps halves with its
 * partner in side 1 (relative ranks 2i-1 and 2i); when p - 1 is odd, the
 * unpaired last rank gets half 1 from the root.
 *
 * Why: a binomial tree sends the whole message ceil(lg p) times from the
 * root and once on each level, a pipelined chain needs p - 1 hops to fill.
 * Here the root's link carries n bytes (n/2 to each side; 1.5 n when p is
 * even, where it also sends half 1 to the unpaired rank), the depth is
 * about lg(p/2) hops, and the segments keep every level busy at once, so
 * for mid-sized messages it can beat both. The model has ranked it behind
 * another algorithm wherever it was asked (scatter_rdb pays fewer
 * latencies in the middle sizes, the chain carries fewer bytes for large
 * ones), so auto does not choose it in practice. It is the algorithm Open
 * MPI's tuned component uses for mid-sized broadcasts, kept so that it can
 * be forced and compared. It was added when the one small-message bcast in
 * which auto trailed the simulated MPI under SimGrid was taken to be Open
 * MPI's split binary tree; SMPI ran a plain binary tree there, and this
 * algorithm does not close that gap (docs/results/coll.md, "Which tree
 * SMPI runs at 4 KiB" and "The split binary tree").
 *
 * Segments: a->tune.seg (the model's optimum below, or WSP_COLL_SEGMENT;
 * 0 means 64 KiB). A window of wsp__bcast_ahead(seg) receives stays posted,
 * as in the chain; each rank keeps at most that many segments of sends in
 * flight per child.
 *
 * Preconditions: none (any p, any n; p = 2 is a send of half 0 then half 1).
 *
 * The cost below counts the root sending one segment per side in turn
 * (one side for p = 2) while every inner rank forwards two per segment it
 * receives, then the swap; the segment size minimises it
 * (wsp__pipeline_seg with D stages).
 */
#include "bcast.h"

#include "../../patterns/splitbin.h"
#include "../../patterns/tree.h"

WSP__COST(bcast, split_binary,
          "(2s + 2(D-1)).(alpha + (h/s).b) + alpha + (n/2).beta_x, h = "
          "ceil(n/2), s = ceil(h/seg), D = floor(lg ceil((p-1)/2)) + 1 (the "
          "depth), b = beta_x (beta for D = 1); p = 2: s.(alpha + "
          "(h/s).beta) + alpha + (n/2).beta; + drain(min(seg, h)) + drain(n/2)") {
  int p = s->p, d = wsp__splitbin_depth(p);
  if (p < 2) {
    if (t) t->seg = 0;
    return 0;
  }
  size_t lo, h;
  wsp__splitbin_half(s->bytes, 0, &lo, &h);
  double b = d > 1 ? m->beta_x : m->beta, bx = p > 2 ? m->beta_x : m->beta;
  size_t seg = wsp__pipeline_seg(m, h, d, b, 1);
  if (t) t->seg = seg;
  double segs = h ? (double)wsp__bcast_nseg(h, seg) : 1;
  int sides = p > 2 ? 2 : 1;
  /* The trees' pipeline ends once and the exchange of halves waits for it
   * (wsp__drain). */
  return (sides * segs + 2.0 * (d - 1)) * (m->alpha + (double)h / segs * b) + m->alpha +
         (double)(s->bytes / 2) * bx + wsp__drain_pipeline(m, h, seg) +
         wsp__drain(m, (double)(s->bytes / 2));
}

int wsp__bcast_split_binary(wsp_comm_t *comm, const wsp__coll_args_t *a) {
  int p = comm->size, r = wsp__tree_rel(comm->rank, a->root, p), rc = WSP_OK;
  if (p < 2) return WSP_OK;
  char *buf = a->recvbuf;
  size_t n = a->block, seg = a->tune.seg ? a->tune.seg : WSP__BCAST_DEFAULT_SEG;
  size_t ahead = wsp__bcast_ahead(seg, comm->model.alpha, (double)seg * comm->model.beta);
  wsp__splitbin_node_t nd;
  wsp__splitbin_node(r, p, &nd);
  /* The half each child carries and its segments: the root's children
   * carry their own sides' halves, everybody else's carry this rank's. */
  size_t clo[2] = {0, 0}, clen[2] = {0, 0}, cseg[2] = {0, 0};
  int cabs[2] = {-1, -1};
  for (int c = 0; c < nd.nchild; c++) {
    wsp__splitbin_half(n, r == 0 ? c : nd.side, &clo[c], &clen[c]);
    cseg[c] = wsp__bcast_nseg(clen[c], seg);
    cabs[c] = wsp__tree_abs(nd.child[c], a->root, p);
  }
  /* This rank's own half (what it receives from its parent). */
  size_t mlo = 0, mlen = 0, mseg = 0;
  if (r != 0) {
    wsp__splitbin_half(n, nd.side, &mlo, &mlen);
    mseg = wsp__bcast_nseg(mlen, seg);
  }
  size_t steps = r != 0 ? mseg : (cseg[0] > cseg[1] ? cseg[0] : cseg[1]);
  int parent = nd.parent >= 0 ? wsp__tree_abs(nd.parent, a->root, p) : -1;
  MPI_Request rreq[WSP__BCAST_MAX_AHEAD], sreq[2 * WSP__BCAST_MAX_AHEAD];
  MPI_Request xreq[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  for (size_t k = 0; k < WSP__BCAST_MAX_AHEAD; k++)
    rreq[k] = sreq[2 * k] = sreq[2 * k + 1] = MPI_REQUEST_NULL;

  /* Tree phase: receive this half's segments, forward each to the
   * children. */
  for (size_t i = 0; i < mseg && i < ahead; i++)
    if ((rc = wsp__irecv_typed(comm, buf + mlo + i * seg, wsp__bcast_seg_len(mlen, seg, i),
                               MPI_BYTE, parent, a->tag, &rreq[i])))
      goto fail;
  for (size_t i = 0; i < steps; i++) {
    size_t slot = i % ahead;
    if (r != 0) {
      if ((rc = wsp__waitall(comm, 1, &rreq[slot], seg))) goto fail;
      size_t j = i + ahead;
      if (j < mseg &&
          (rc = wsp__irecv_typed(comm, buf + mlo + j * seg, wsp__bcast_seg_len(mlen, seg, j),
                                 MPI_BYTE, parent, a->tag, &rreq[slot])))
        goto fail;
    }
    for (int c = 0; c < nd.nchild; c++) {
      if (i >= cseg[c]) continue;
      MPI_Request *sr = &sreq[2 * slot + (size_t)c];
      if ((rc = wsp__waitall(comm, 1, sr, seg)) ||
          (rc = wsp__isend_typed(comm, buf + clo[c] + i * seg, wsp__bcast_seg_len(clen[c], seg, i),
                                 MPI_BYTE, cabs[c], a->tag, sr)))
        goto fail;
    }
  }

  /* Swap: send this rank's half to the partner (the root sends half 1),
   * receive the other half from it (a rank partnered with the root only
   * receives). The receive is posted after every receive from the parent,
   * so that for p = 2, where the partner is the parent, MPI's ordering of
   * messages between one pair matches them right. */
  size_t slo, slen, olo = 0, olen = 0;
  if (nd.partner >= 0) {
    int q = wsp__tree_abs(nd.partner, a->root, p);
    wsp__splitbin_half(n, r == 0 ? 1 : nd.side, &slo, &slen);
    if (r != 0) wsp__splitbin_half(n, 1 - nd.side, &olo, &olen);
    if (nd.partner != 0 && slen &&
        (rc = wsp__isend_typed(comm, buf + slo, slen, MPI_BYTE, q, a->tag, &xreq[0])))
      goto fail;
    if (r != 0 && olen &&
        (rc = wsp__irecv_typed(comm, buf + olo, olen, MPI_BYTE, q, a->tag, &xreq[1])))
      goto fail;
  }
  if ((rc = wsp__waitall(comm, 2, xreq, olen)) ||
      (rc = wsp__waitall(comm, (int)(2 * ahead), sreq, 0)))
    goto fail;
  return WSP_OK;
fail:
  wsp__abandon(comm, rc, WSP__BCAST_MAX_AHEAD, rreq, 2 * WSP__BCAST_MAX_AHEAD, sreq);
  return wsp__abandon(comm, rc, 1, &xreq[1], 1, &xreq[0]);
}
