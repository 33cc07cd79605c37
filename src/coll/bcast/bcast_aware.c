/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Broadcast along a tree built from the network map (src/coll/aware.h).
 *
 * The tree comes from src/patterns/aware_tree.h: it minimises the time the
 * map predicts for the last rank to hold the message, with the handshake of
 * rendezvous messages counted above the eager limit. A rank receives the
 * whole message from its parent, then sends it to its children one after
 * another, in the order the construction chose (the child whose subtree
 * takes longest first): the model behind the tree serialises a rank's
 * sends, and sending them all at once would let MPI interleave them and
 * delay the child that matters most. Every rank builds the same tree from
 * the same map; nothing about it is sent.
 *
 * For long messages the tree is a path through the map instead, cut into
 * segments (aware.h, "Segments"), and runs as the chain does.
 *
 * Cost: as the tree or path predicts; auto sees the binomial cost scaled by
 * the ratio of the two trees' predicted times, or for a path the chain's
 * cost scaled by path / chain's order (aware.h says why).
 */
#include "bcast.h"

#include "../aware.h"

WSP__COST(bcast, aware,
          "tree: binomial . t(tree) / t(binomial tree); path: chain . t(path) / "
          "t(chain's order); all timed on the map") {
  return wsp__aware_cost(s, WSP_COLL_BCAST, wsp__bcast_binomial_cost(m, s, t),
                         wsp__bcast_chain_cost(m, s, NULL));
}

int wsp__bcast_aware(wsp_comm_t *comm, const wsp__coll_args_t *a) {
  const wsp__aware_entry_t *e = wsp__aware_get(comm->aware, WSP_COLL_BCAST, a->root, a->block);
  const wsp__aware_tree_t *t = &e->tree;
  int me = comm->rank, rc;
  if (e->seg) {
    int next = t->child_start[me] < t->child_start[me + 1] ? t->children[t->child_start[me]] : -1;
    return wsp__bcast_path(comm, a, t->parent[me], next, e->seg);
  }
  if (t->parent[me] >= 0 &&
      (rc = wsp__recv_bytes(comm, a->recvbuf, a->block, t->parent[me], a->tag)))
    return rc;
  for (int k = t->child_start[me]; k < t->child_start[me + 1]; k++)
    if ((rc = wsp__send_bytes(comm, a->recvbuf, a->block, t->children[k], a->tag))) return rc;
  return WSP_OK;
}
