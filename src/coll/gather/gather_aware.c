/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Gather along a tree built from the network map (src/coll/aware.h).
 *
 * The tree comes from src/patterns/aware_tree.h, built upwards with the
 * edge into a rank carrying one block per rank of its subtree. A rank
 * collects its subtree's blocks in depth-first order (its own, then each
 * child's subtree in child order: aware.h's `order`), in which every
 * child's subtree is one contiguous range, so the children's messages are
 * received straight into place, all posted at once; then the whole range
 * goes to the parent in one message. The root collects into a buffer in
 * that order and copies each block to its rank's place.
 *
 * Cost: as the tree predicts; auto sees the binomial cost scaled by the
 * ratio of the two trees' predicted times (aware.h says why).
 */
#include "../coll_internal.h"

#include "../aware.h"

#include <stdlib.h>

WSP__COST(gather, aware, "binomial . t(aware) / t(binomial), both trees timed on the map") {
  return wsp__aware_cost(s, WSP_COLL_GATHER, wsp__gather_binomial_cost(m, s, t), 0);
}

int wsp__gather_aware(wsp_comm_t *comm, const wsp__coll_args_t *a) {
  const wsp__aware_entry_t *e = wsp__aware_get(comm->aware, WSP_COLL_GATHER, a->root, a->block);
  const wsp__aware_tree_t *t = &e->tree;
  int p = comm->size, me = comm->rank, parent = t->parent[me], rc = WSP_OK;
  int first = t->child_start[me], last = t->child_start[me + 1];
  size_t n = a->block;
  if (first == last && parent >= 0) /* a leaf: its block goes up as it is */
    return wsp__send_bytes(comm, a->sendbuf, n, parent, a->tag);
  char *buf = malloc((size_t)e->size[me] * n + 1);
  MPI_Request req[WSP__AWARE_MAX_P];
  int posted = 0;
  if (buf == NULL) return wsp__fail(comm, WSP_ERR_NOMEM, "gather aware: out of memory");
  wsp__copy_bytes(buf, a->sendbuf, n);
  for (int k = first; k < last; k++, posted++) {
    int c = t->children[k];
    size_t off = (size_t)(e->pos[c] - e->pos[me]) * n;
    if ((rc = wsp__irecv_typed(comm, buf + off, (size_t)e->size[c] * n, MPI_BYTE, c, a->tag,
                               &req[posted])))
      break;
  }
  if (rc != WSP_OK) {
    wsp__abandon(comm, rc, posted, req, 0, NULL);
    goto out;
  }
  if ((rc = wsp__waitall(comm, posted, req, 0))) goto out;
  if (parent >= 0) {
    rc = wsp__send_bytes(comm, buf, (size_t)e->size[me] * n, parent, a->tag);
  } else { /* the root: from depth-first order to rank order */
    char *out = a->recvbuf;
    for (int k = 0; k < p; k++) memcpy(out + (size_t)e->order[k] * n, buf + (size_t)k * n, n);
  }
out:
  free(buf);
  return rc;
}
