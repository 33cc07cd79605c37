/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Scatter along a tree built from the network map (src/coll/aware.h).
 *
 * The tree comes from src/patterns/aware_tree.h, built downwards with the
 * edge into a rank carrying one block per rank of its subtree. The root
 * lays the blocks out in the tree's depth-first order (its own, then each
 * child's subtree in child order: aware.h's `order`), in which every
 * child's subtree is one contiguous range, and sends each child its range,
 * one child after another in the tree's order (the order the construction
 * timed). Every other rank receives its subtree's range from its parent,
 * keeps the first block (its own) and passes the children's ranges on the
 * same way.
 *
 * Cost: as the tree predicts; auto sees the binomial cost scaled by the
 * ratio of the two trees' predicted times (aware.h says why).
 */
#include "../coll_internal.h"

#include "../aware.h"

#include <stdlib.h>

WSP__COST(scatter, aware, "binomial . t(aware) / t(binomial), both trees timed on the map") {
  return wsp__aware_cost(s, WSP_COLL_SCATTER, wsp__scatter_binomial_cost(m, s, t), 0);
}

int wsp__scatter_aware(wsp_comm_t *comm, const wsp__coll_args_t *a) {
  const wsp__aware_entry_t *e =
      wsp__aware_get(comm->aware, WSP_COLL_SCATTER, a->root, a->block);
  const wsp__aware_tree_t *t = &e->tree;
  int p = comm->size, me = comm->rank, parent = t->parent[me], rc = WSP_OK;
  int first = t->child_start[me], last = t->child_start[me + 1];
  size_t n = a->block;
  if (first == last && parent >= 0) /* a leaf: its block comes as it is */
    return wsp__recv_bytes(comm, a->recvbuf, n, parent, a->tag);
  char *buf = malloc((size_t)e->size[me] * n + 1);
  if (buf == NULL) return wsp__fail(comm, WSP_ERR_NOMEM, "scatter aware: out of memory");
  if (parent >= 0) {
    if ((rc = wsp__recv_bytes(comm, buf, (size_t)e->size[me] * n, parent, a->tag))) goto out;
  } else { /* the root: from rank order to depth-first order */
    const char *in = a->sendbuf;
    for (int k = 0; k < p; k++) memcpy(buf + (size_t)k * n, in + (size_t)e->order[k] * n, n);
  }
  wsp__copy_bytes(a->recvbuf, buf, n);
  for (int k = first; k < last; k++) {
    int c = t->children[k];
    size_t off = (size_t)(e->pos[c] - e->pos[me]) * n;
    if ((rc = wsp__send_bytes(comm, buf + off, (size_t)e->size[c] * n, c, a->tag))) break;
  }
out:
  free(buf);
  return rc;
}
