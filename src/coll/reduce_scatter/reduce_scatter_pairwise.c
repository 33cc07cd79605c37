/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Pairwise reduce-scatter.
 *
 * Every rank starts from its own part of its own block (in recvbuf). In
 * step i = 1..p-1 it sends its part of block r+i straight to that block's
 * owner and receives rank r-i's part of its own block, which it adds (the
 * pairwise schedule of src/patterns/pairwise.h: for a power of two p the
 * partner of both is r XOR i). No partial sum travels: each byte crosses
 * the network once, from the rank that holds it to the rank that owns
 * it, and each rank reduces only its own block.
 *
 * The parts arrive in the schedule's order, not in rank order:
 * commutative ops only (fallback halving).
 *
 * Preconditions: commutative op.
 *
 * Each step sends and receives at once (beta_x) and reduces one block
 * (gamma); the largest block c sets the pace of a step.
 */
#include "../coll_internal.h"

#include "../../patterns/pairwise.h"
#include "../reduce/reduce_util.h"

#include <stdlib.h>

WSP__COST(reduce_scatter, pairwise, "(p-1).(alpha + c.(beta_x + gamma))") {
  size_t hi = 0;
  for (int i = 0; i < s->p; i++)
    if (wsp__shape_block(s, i) > hi) hi = wsp__shape_block(s, i);
  return (s->p - 1) * (m->alpha + (double)hi * (m->beta_x + m->gamma));
}

int wsp__reduce_scatter_pairwise(wsp_comm_t *comm, const wsp__coll_args_t *a) {
  int p = comm->size, r = comm->rank, rc = WSP_OK;
  const size_t *cnt = a->rcounts, *off = a->rdispls;
  void *mem = NULL, *rb = wsp__tmp_typed(comm, a, cnt[r], &mem);
  if (rb == NULL) return WSP_ERR_NOMEM;
  rc = wsp__copy_typed(comm, a, wsp__elem(a, a->sendbuf, off[r]), a->recvbuf, cnt[r]);
  for (int i = 1; i < p && rc == WSP_OK; i++) {
    int dst = wsp__pairwise_send_peer(r, p, i), src = wsp__pairwise_recv_peer(r, p, i);
    rc = wsp__red_exchange_with(comm, a, wsp__elem(a, a->sendbuf, off[dst]), cnt[dst], dst, rb,
                                cnt[r], src);
    if (rc == WSP_OK && cnt[r])
      rc = wsp__reduce_local(comm, rb, a->recvbuf, cnt[r], a->dtype, a->op);
  }
  free(mem);
  return rc;
}
