/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Binomial-tree broadcast.
 *
 * The root sends the whole message to its children in the binomial tree
 * (src/patterns/tree.h) one after another, largest subtree first; every
 * other rank receives it from its parent and then forwards it to its own
 * children the same way. After
 * round i, 2^i ranks hold the message, so ceil(lg p) rounds reach everyone.
 * Latency-optimal for small messages; for large ones every level re-sends
 * the whole message, so the root's link carries ceil(lg p).n bytes.
 */
#include "bcast.h"

#include "../../patterns/tree.h"

WSP__COST(bcast, binomial, "ceil(lg p).(alpha + drain(n) + n.beta)") {
  double n = (double)s->bytes;
  return wsp__ceil_log2(s->p) * (m->alpha + wsp__drain(m, n) + n * m->beta);
}

int wsp__bcast_binomial(wsp_comm_t *comm, const wsp__coll_args_t *a) {
  int p = comm->size, r = wsp__tree_rel(comm->rank, a->root, p), rc;
  int parent = wsp__binomial_parent(r, p);
  if (parent >= 0 &&
      (rc = wsp__recv_bytes(comm, a->recvbuf, a->block,
                            wsp__tree_abs(parent, a->root, p), a->tag)))
    return rc;
  /* One child at a time, largest subtree first: sends posted at once
   * share the link, so the largest subtree's child would get the message
   * last of all, at the end of all the sends, and its subtree's rounds
   * would start only then (docs/results/sites.md, "The flat van de
   * Geijn bcast's scatter"). */
  int child[32];
  int n = wsp__binomial_children(r, p, child, 32);
  for (int i = 0; i < n; i++)
    if ((rc = wsp__send_bytes(comm, a->recvbuf, a->block, wsp__tree_abs(child[i], a->root, p),
                              a->tag)))
      return rc;
  return WSP_OK;
}
