/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Binomial-tree broadcast.
 *
 * The root sends the whole message to its children in the binomial tree
 * (src/patterns/tree.h), largest subtree first; every other rank receives
 * it from its parent and then forwards it to its own children. After
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
  int child[32];
  int n = wsp__binomial_children(r, p, child, 32);
  MPI_Request req[32];
  for (int i = 0; i < n; i++) {
    if ((rc = wsp__isend_typed(comm, a->recvbuf, a->block, MPI_BYTE,
                               wsp__tree_abs(child[i], a->root, p), a->tag,
                               &req[i]))) {
      wsp__waitall(comm, i, req, 0); /* finish what was started */
      return rc;
    }
  }
  return wsp__waitall(comm, n, req, 0);
}
