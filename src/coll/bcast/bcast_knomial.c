/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * k-nomial-tree broadcast with a fixed radix k = 4.
 *
 * Ranks are numbered relative to the root and written in base k
 * (src/patterns/tree.h). A rank receives the whole message from its parent
 * (itself with its lowest non-zero base-k digit cleared) and then serves
 * its children level by level, farthest first: for each place k^i below
 * its own lowest non-zero digit, from the highest down, it starts
 * nonblocking sends to the (up to) k - 1 children r + d.k^i, d = 1..k-1,
 * and waits for them before the next level. The k - 1 sends of a level
 * overlap their latencies but share the sender's link. After level l,
 * k^l ranks hold the message, so ceil(log_k p) levels reach everyone:
 * fewer rounds than binomial (ceil(lg p)) for k - 1 times the bytes per
 * round, which pays when alpha dominates (short messages, long latency).
 *
 * k is not a tuning knob (tune carries only a segment size): k = 4 here.
 *
 * Preconditions: none (any p).
 */
#include "bcast.h"

#include "../../patterns/tree.h"

enum { WSP__BCAST_K = 4 };

WSP__COST(bcast, knomial, "ceil(log_4 p).(alpha + drain(n) + 3.n.beta)") {
  double n = (double)s->bytes;
  return wsp__ceil_logk(s->p, WSP__BCAST_K) *
         (m->alpha + wsp__drain(m, n) + (WSP__BCAST_K - 1) * n * m->beta);
}

/* floor(log_k d): the level (place k^i) of a child at distance d = c - r. */
static int wsp__level(int d) {
  int l = 0;
  while (d >= WSP__BCAST_K) d /= WSP__BCAST_K, l++;
  return l;
}

int wsp__bcast_knomial(wsp_comm_t *comm, const wsp__coll_args_t *a) {
  int p = comm->size, r = wsp__tree_rel(comm->rank, a->root, p), rc;
  int parent = wsp__knomial_parent(r, p, WSP__BCAST_K);
  if (parent >= 0 &&
      (rc = wsp__recv_bytes(comm, a->recvbuf, a->block,
                            wsp__tree_abs(parent, a->root, p), a->tag)))
    return rc;
  /* At most (k-1) children on each of at most 16 levels (4^16 > INT_MAX). */
  enum { MAXC = (WSP__BCAST_K - 1) * 16 };
  int child[MAXC];
  int n = wsp__knomial_children(r, p, WSP__BCAST_K, child, MAXC);
  MPI_Request req[WSP__BCAST_K - 1];
  for (int i = 0; i < n;) {
    /* Children come highest level first; send one level at a time. */
    int level = wsp__level(child[i] - r), nreq = 0;
    for (; i < n && wsp__level(child[i] - r) == level; i++) {
      if ((rc = wsp__isend_typed(comm, a->recvbuf, a->block, MPI_BYTE,
                                 wsp__tree_abs(child[i], a->root, p), a->tag,
                                 &req[nreq]))) {
        wsp__waitall(comm, nreq, req, 0); /* finish what was started */
        return rc;
      }
      nreq++;
    }
    if ((rc = wsp__waitall(comm, nreq, req, 0))) return rc;
  }
  return WSP_OK;
}
