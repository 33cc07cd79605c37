/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Reduce along a tree built from the network map (src/coll/aware.h).
 *
 * The tree comes from src/patterns/aware_tree.h, built upwards: it
 * minimises the time the map predicts for the root to have received from
 * all its children, every rank sending to its parent once it has combined
 * its own children's vectors. A rank receives from its children in the
 * order the tree lists them (the order the construction timed), combining
 * each vector into its partial result as it arrives, and sends the partial
 * result to its parent. The combining order follows the tree, not the
 * ranks: only commutative operations may use it (the registry's
 * precondition; others fall back to binomial, which keeps rank order).
 *
 * For long vectors the tree is a path through the map instead, cut into
 * segments (aware.h, "Segments"), and runs as the chain does, towards the
 * root.
 *
 * Cost: as the tree or path predicts, plus the operator; auto sees the
 * binomial cost scaled by the ratio of the two trees' predicted times, or
 * for a path the chain's cost scaled by path / chain's order (aware.h).
 */
#include "../coll_internal.h"

#include "../aware.h"
#include "reduce_util.h"

#include <stdlib.h>

WSP__COST(reduce, aware,
          "tree: binomial . t(tree) / t(binomial tree); path: chain . t(path) / "
          "t(chain's order); all timed on the map") {
  return wsp__aware_cost(s, WSP_COLL_REDUCE, wsp__reduce_binomial_cost(m, s, t),
                         wsp__reduce_chain_cost(m, s, NULL));
}

int wsp__reduce_aware(wsp_comm_t *comm, const wsp__coll_args_t *a) {
  const wsp__aware_entry_t *e =
      wsp__aware_get(comm->aware, WSP_COLL_REDUCE, a->root, a->count * a->type_size);
  const wsp__aware_tree_t *t = &e->tree;
  int me = comm->rank, first = t->child_start[me], last = t->child_start[me + 1];
  int parent = t->parent[me], rc = WSP_OK;
  if (e->seg) {
    size_t segn = a->type_size ? e->seg / a->type_size : 1;
    return wsp__reduce_path(comm, a, first < last ? t->children[first] : -1, parent, -1,
                            segn ? segn : 1);
  }
  if (first == last) /* a leaf sends its own vector */
    return parent >= 0 ? wsp__red_send(comm, a, a->sendbuf, a->count, parent)
                       : wsp__copy_typed(comm, a, a->sendbuf, a->recvbuf, a->count);
  void *m1 = NULL, *m2 = NULL;
  void *acc = parent < 0 ? a->recvbuf : wsp__tmp_typed(comm, a, a->count, &m1);
  void *rb = acc ? wsp__tmp_typed(comm, a, a->count, &m2) : NULL;
  if (acc == NULL || rb == NULL) {
    rc = WSP_ERR_NOMEM;
    goto out;
  }
  if ((rc = wsp__copy_typed(comm, a, a->sendbuf, acc, a->count))) goto out;
  for (int k = first; k < last; k++)
    if ((rc = wsp__red_recv(comm, a, rb, a->count, t->children[k])) ||
        (rc = wsp__reduce_local(comm, rb, acc, a->count, a->dtype, a->op)))
      goto out;
  if (parent >= 0) rc = wsp__red_send(comm, a, acc, a->count, parent);
out:
  free(m1);
  free(m2);
  return rc;
}
