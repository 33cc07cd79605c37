/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Binomial-tree reduce, in rank order for any root.
 *
 * Every rank starts with its own vector as its partial result. The ranks
 * still holding a partial form a sorted list; each round pairs neighbours
 * in that list (indices 2j and 2j+1): one of them receives the other's
 * whole partial and combines it with its own, the other sends and is done.
 * The one that stays is the one whose list index has the parity of the
 * root's index, so the root stays every round, and the list halves: after
 * ceil(lg p) rounds the root holds everything (src/patterns/reduce_sched.h,
 * wsp__obin_schedule). For root 0 this is the usual binomial tree (children
 * r + 2^i send to r); for other roots it is a binomial tree of the same
 * depth whose subtrees are contiguous runs of ranks in their natural
 * order. That is what keeps non-commutative ops exact: a partial always
 * covers a contiguous run of ranks, and a received partial is the run
 * right before (peer op mine) or right after (mine op peer) the own one.
 * (The usual trick of a tree over relative ranks (rank - root) mod p
 * breaks rank order when root != 0 and needs an extra hop to fix; this
 * schedule needs none.)
 *
 * Latency-optimal for short vectors; every level moves and reduces the
 * whole vector, so the root spends ceil(lg p).n on its link and in the op.
 *
 * Preconditions: none (any p, any count, any op).
 */
#include "../coll_internal.h"

#include "../../patterns/reduce_sched.h"
#include "reduce_util.h"

#include <stdlib.h>

WSP__COST(reduce, binomial, "ceil(lg p).(alpha + drain(n) + n.beta + n.gamma)") {
  double n = (double)s->bytes;
  return wsp__ceil_log2(s->p) * (m->alpha + wsp__drain(m, n) + n * (m->beta + m->gamma));
}

int wsp__reduce_binomial(wsp_comm_t *comm, const wsp__coll_args_t *a) {
  int me = comm->rank, rc = WSP_OK;
  wsp__obin_step_t st[64];
  int n = wsp__obin_schedule(me, comm->size, a->root, st, 64);
  if (n > 64)
    return wsp__fail(comm, WSP_ERR_INTERNAL, "reduce/binomial: %d rounds", n);
  /* A leaf sends its own vector and is done. */
  if (n == 0 || st[0].action == WSP__OBIN_SEND)
    return n ? wsp__red_send(comm, a, a->sendbuf, a->count, st[0].peer)
             : wsp__copy_typed(comm, a, a->sendbuf, a->recvbuf, a->count);
  void *m1 = NULL, *m2 = NULL;
  void *acc = me == a->root ? a->recvbuf : wsp__tmp_typed(comm, a, a->count, &m1);
  void *rb = acc ? wsp__tmp_typed(comm, a, a->count, &m2) : NULL;
  if (acc == NULL || rb == NULL) {
    rc = WSP_ERR_NOMEM;
    goto out;
  }
  if ((rc = wsp__copy_typed(comm, a, a->sendbuf, acc, a->count))) goto out;
  for (int i = 0; i < n; i++) {
    if (st[i].action == WSP__OBIN_SEND) {
      rc = wsp__red_send(comm, a, acc, a->count, st[i].peer);
      goto out;
    }
    if ((rc = wsp__red_recv(comm, a, rb, a->count, st[i].peer))) goto out;
    if (st[i].action == WSP__OBIN_RECV_BEFORE) {
      rc = wsp__reduce_local(comm, rb, acc, a->count, a->dtype, a->op);
    } else { /* mine op peer lands in rb, which becomes the partial */
      rc = wsp__reduce_local(comm, acc, rb, a->count, a->dtype, a->op);
      void *x = acc;
      acc = rb, rb = x;
    }
    if (rc) goto out;
  }
  /* Only the root gets here. */
  rc = wsp__copy_typed(comm, a, acc, a->recvbuf, a->count);
out:
  free(m1);
  free(m2);
  return rc;
}
