/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Ring reduce-scatter: the first half of the ring allreduce, with the
 * blocks the caller's counts give.
 *
 * Rank r sends to r+1 and receives from r-1. The partial sum of block j
 * starts at rank j+1 (its own part of block j) and travels the ring,
 * every rank adding its part, until it reaches j, the last to add, after
 * p-1 steps. In step t (t = 0..p-2) rank r sends the partial of block
 * r-1-t and receives that of block r-2-t, which it combines with its own
 * part and sends in step t+1; in the last step it receives its own block.
 * Empty blocks are skipped by both ends alike (the counts are shared).
 *
 * A block's parts are combined starting after its owner, around the
 * ring, not in rank order: commutative ops only (fallback halving).
 *
 * Preconditions: commutative op.
 *
 * Each step sends and receives at once (beta_x) and reduces what it
 * received (gamma), the largest block c setting the pace.
 */
#include "../coll_internal.h"

#include "../reduce/reduce_util.h"

#include <stdlib.h>

static size_t wsp__rs_max_block(const wsp__coll_shape_t *s) {
  size_t hi = 0;
  for (int i = 0; i < s->p; i++)
    if (wsp__shape_block(s, i) > hi) hi = wsp__shape_block(s, i);
  return hi;
}

WSP__COST(reduce_scatter, ring, "(p-1).(alpha + c.(beta_x + gamma))") {
  return (s->p - 1) * (m->alpha + (double)wsp__rs_max_block(s) * (m->beta_x + m->gamma));
}

int wsp__reduce_scatter_ring(wsp_comm_t *comm, const wsp__coll_args_t *a) {
  int p = comm->size, r = comm->rank, rc = WSP_OK;
  int right = (r + 1) % p, left = (r - 1 + p) % p;
  const size_t *cnt = a->rcounts, *off = a->rdispls;
  size_t most = 0;
  for (int i = 0; i < p; i++)
    if (cnt[i] > most) most = cnt[i];
  void *m1 = NULL, *m2 = NULL;
  void *acc = wsp__tmp_typed(comm, a, most, &m1);
  void *rb = acc ? wsp__tmp_typed(comm, a, most, &m2) : NULL;
  if (rb == NULL) {
    free(m1);
    return WSP_ERR_NOMEM;
  }
  for (int t = 0; t < p - 1 && rc == WSP_OK; t++) {
    int sb = ((r - 1 - t) % p + p) % p, rbk = ((r - 2 - t) % p + p) % p;
    /* Step 0 sends this rank's own part; later steps the partial sum. */
    const void *src = t == 0 ? wsp__elem(a, a->sendbuf, off[sb]) : acc;
    void *dst = t == p - 2 ? a->recvbuf : rb;
    rc = wsp__red_exchange_with(comm, a, src, cnt[sb], right, dst, cnt[rbk], left);
    if (rc == WSP_OK && cnt[rbk])
      rc = wsp__reduce_local(comm, wsp__elem(a, a->sendbuf, off[rbk]), dst, cnt[rbk], a->dtype,
                             a->op);
    void *x = acc;
    acc = rb, rb = x;
  }
  free(m1);
  free(m2);
  return rc;
}
