/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Two-tree broadcast.
 *
 * The message is cut into two halves (wsp__splitbin_half), and the ranks
 * other than the root carry two binary trees at once (src/patterns/
 * twotree.h): tree 0 carries half 0, tree 1 half 1. The root sends each
 * half in segments to the top of its tree, and every rank receives the
 * segments of both halves from its two parents and forwards each segment
 * of the tree it is an inner node of to its (up to two) children as soon
 * as it has it, while the next segments arrive. No rank is an inner node
 * of both trees, so every rank receives the message once and sends it at
 * most once (a byte more when the halves differ by one), as in the chain,
 * but the last rank is ceil(lg p) hops from the root instead of p - 1.
 *
 * Why: a pipelined chain pays p - 2 segment steps to fill, which grows
 * with p; the two trees about 3 lg p. Against split_binary, which is about
 * as deep, no rank swaps halves at the end, so no rank sends more than the
 * message (1.5 times it for split_binary's root and inner ranks).
 *
 * Every stream moves on its own: each half's receives, and the sends to
 * each child, each as soon as its segment is there and its slot is free
 * (the loop below says why). The root's two sends go out as their windows
 * allow, not in strict turn.
 *
 * Segments: a->tune.seg (the model's optimum below, or WSP_COLL_SEGMENT;
 * 0 means 64 KiB). A window of wsp__bcast_ahead(seg) receives per half
 * stays posted, as in the chain; each rank keeps at most that many
 * segments of sends in flight per child. p = 2 is the chain: a pair that
 * carried both halves under one tag would match them out of order.
 *
 * Preconditions: none (any p, any n).
 *
 * The cost below counts two segments through each rank's link per step
 * (the root's two halves; an inner rank's two children, and every rank's
 * two parents) over s + D - 1 steps, D the depth, each segment with its
 * latency. On the way down each level's segment also shares the receiving
 * link with a segment of the other half, which a link passes whole, in
 * turn: one segment time more per level, D in all. Without that term the
 * model put the two-tree ahead of the chain at p = 8, where netlab's
 * cluster measured it behind under both MPIs. With it, the fill steps alone
 * (3D - 2 against the chain's p - 2) make the chain the cheaper up to
 * p = 11, tie them at 12 and make the two-tree the cheaper from 13, which
 * orders p = 8 and 16 as netlab measured (docs/results/coll.md, "The
 * two-tree broadcast"). Under SimGrid at p = 64 the latencies of a step's
 * two transfers overlap and the two-tree ran faster than this cost;
 * netlab's p = 8 does not show that, so the cost keeps a latency per
 * segment. The segment size minimises it; the lanes' drain is a
 * pipeline's (wsp__drain_pipeline).
 */
#include "bcast.h"

#include "../../patterns/splitbin.h"
#include "../../patterns/tree.h"
#include "../../patterns/twotree.h"

WSP__COST(
    bcast, two_tree,
    "(2s + 3D - 2).(alpha + (h/s).beta_x) + drain(min(seg, h)), h = ceil(n/2), s = ceil(h/seg), "
    "D = floor(lg (p-1)) + 1 (the depth); p = 2: the chain's") {
  int p = s->p, d = wsp__twotree_depth(p);
  if (p < 2) {
    if (t) t->seg = 0;
    return 0;
  }
  if (p == 2) return wsp__bcast_chain_cost(m, s, t);
  size_t lo, h;
  wsp__splitbin_half(s->bytes, 0, &lo, &h);
  /* 2s + 3D - 2 steps of one segment each: sqrt(2h.alpha / ((3D - 2).beta_x))
   * minimises them, the optimum of a pipeline of 3D - 1 stages over 2h. */
  size_t seg = wsp__pipeline_seg(m, 2 * h, 3 * d - 1, m->beta_x, 1);
  if (t) t->seg = seg;
  double segs = h ? (double)wsp__bcast_nseg(h, seg) : 1;
  /* The two trees' pipelines end together (wsp__drain once). */
  return (2 * segs + 3.0 * d - 2) * (m->alpha + (double)h / segs * m->beta_x) +
         wsp__drain_pipeline(m, h, seg);
}

int wsp__bcast_two_tree(wsp_comm_t *comm, const wsp__coll_args_t *a) {
  int p = comm->size, r = wsp__tree_rel(comm->rank, a->root, p), rc = WSP_OK;
  if (p < 2) return WSP_OK;
  if (p == 2) return wsp__bcast_chain(comm, a);
  char *buf = a->recvbuf;
  size_t n = a->block, seg = a->tune.seg ? a->tune.seg : WSP__BCAST_DEFAULT_SEG;
  size_t ahead = wsp__bcast_ahead(seg, comm->model.alpha, (double)seg * comm->model.beta);
  enum { A = WSP__BCAST_MAX_AHEAD };
  wsp__twotree_node_t nd;
  wsp__twotree_node(r, p, &nd);
  size_t lo[2], len[2], nseg[2];
  int parent[2], child[2][2];
  for (int t = 0; t < 2; t++) {
    wsp__splitbin_half(n, t, &lo[t], &len[t]);
    nseg[t] = wsp__bcast_nseg(len[t], seg);
    parent[t] = nd.parent[t] >= 0 ? wsp__tree_abs(nd.parent[t], a->root, p) : -1;
    for (int c = 0; c < nd.nchild[t]; c++) child[t][c] = wsp__tree_abs(nd.child[t][c], a->root, p);
  }
  /* rreq[t * A + slot]; sreq[(t * 2 + c) * A + slot]. */
  MPI_Request rreq[2 * A], sreq[4 * A];
  for (size_t k = 0; k < 2 * A; k++) rreq[k] = MPI_REQUEST_NULL;
  for (size_t k = 0; k < 4 * A; k++) sreq[k] = MPI_REQUEST_NULL;

  for (int t = 0; t < 2 && r != 0; t++)
    for (size_t i = 0; i < nseg[t] && i < ahead; i++)
      if ((rc = wsp__irecv_typed(comm, buf + lo[t] + i * seg, wsp__bcast_seg_len(len[t], seg, i),
                                 MPI_BYTE, parent[t], a->tag, &rreq[t * A + i])))
        goto fail;
  /* Every stream moves on its own: the receives of each half, and the
   * sends to each child, each as soon as its segment is there and its
   * slot is free; when none can move, wait for the first of the transfers
   * they wait on. Taking the halves in turn, segment by segment, tied each
   * tree's pace to the other's (a rank that forwards one half waited for
   * its segment of the other, which comes down the other tree from ranks
   * that wait in turn on the first), and the broadcast ran at a fraction
   * of the chain's rate; waiting for one child's slot held up the other
   * child and the other half (docs/results/coll.md, "The two-tree
   * broadcast"). */
  size_t got[2], sent[2][2] = {{0, 0}, {0, 0}};
  for (int t = 0; t < 2; t++) got[t] = r == 0 ? nseg[t] : 0;
  for (;;) {
    MPI_Request *ws[6], w[6];
    int k = 0, progressed = 0, left = 0;
    for (int t = 0; t < 2; t++) {
      while (got[t] < nseg[t]) {
        size_t i = got[t];
        MPI_Request *rr = &rreq[(size_t)t * A + i % ahead];
        /* A request completed by the wait below is null already (SMPI's
         * MPI_Test does not report a null request as complete). */
        int flag = *rr == MPI_REQUEST_NULL;
        if (!flag) WSP__MPI_GOTO(comm, MPI_Test(rr, &flag, MPI_STATUS_IGNORE), rc, fail);
        if (!flag) {
          ws[k++] = rr;
          break;
        }
        size_t j = i + ahead;
        if (j < nseg[t] &&
            (rc = wsp__irecv_typed(comm, buf + lo[t] + j * seg, wsp__bcast_seg_len(len[t], seg, j),
                                   MPI_BYTE, parent[t], a->tag, rr)))
          goto fail;
        got[t]++;
        progressed = 1;
      }
      left += got[t] < nseg[t];
      for (int c = 0; c < nd.nchild[t]; c++) {
        while (sent[t][c] < got[t]) {
          size_t i = sent[t][c];
          MPI_Request *sr = &sreq[(size_t)(t * 2 + c) * A + i % ahead];
          int flag = *sr == MPI_REQUEST_NULL;
          if (!flag) WSP__MPI_GOTO(comm, MPI_Test(sr, &flag, MPI_STATUS_IGNORE), rc, fail);
          if (!flag) {
            ws[k++] = sr;
            break;
          }
          if ((rc =
                   wsp__isend_typed(comm, buf + lo[t] + i * seg, wsp__bcast_seg_len(len[t], seg, i),
                                    MPI_BYTE, child[t][c], a->tag, sr)))
            goto fail;
          sent[t][c]++;
          progressed = 1;
        }
        left += sent[t][c] < nseg[t];
      }
    }
    if (left == 0) break;
    if (!progressed) {
      int idx;
      for (int q = 0; q < k; q++) w[q] = *ws[q];
      rc = wsp__waitany(comm, k, w, seg, &idx);
      for (int q = 0; q < k; q++) *ws[q] = w[q];
      if (rc) goto fail;
    }
  }
  for (int k = 0; k < 4; k++)
    if ((rc = wsp__waitall(comm, (int)ahead, &sreq[(size_t)k * A], 0))) goto fail;
  return WSP_OK;
fail:
  return wsp__abandon(comm, rc, 2 * A, rreq, 4 * A, sreq);
}
