/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Reduce-scatter by recursive halving at the caller's block boundaries
 * (Thakur, Rabenseifner & Gropp 2005), for any op.
 *
 * Fold: with q the largest power of two <= p and r = p - q, ranks 2i and
 * 2i+1 (i < r) pair up; 2i hands its whole vector to 2i+1, which combines
 * the two (2i's first) and goes on as new rank i; ranks >= 2r are new
 * rank rank - r (src/patterns/reduce_sched.h). New rank i's part of the
 * vector is the blocks of the ranks it stands for, a contiguous run.
 *
 * Halving: the shared step of Rabenseifner's reduce and allreduce
 * (wsp__red_halving), lowest bit first, which keeps every partial a
 * contiguous run of ranks and so the rank order of non-commutative ops.
 * It leaves new rank nr with part bitrev(nr) of a q-way split, so the
 * vector is first copied with its new ranks' parts in bit-reversed order:
 * part b holds new rank bitrev(b)'s blocks, and every rank ends with its
 * own. The windows follow the parts' sizes, so uneven counts are exact.
 *
 * Unfold: new rank i < r sends 2i's block back to it.
 *
 * Preconditions: none (any p, any counts, any op).
 *
 * Halving exchanges send and receive at once (beta_x) and reduce what
 * they receive (gamma): about (q-1)/q of the N bytes, in lg q steps. A
 * fold adds a whole vector one way and its reduction, and a block back.
 */
#include "../coll_internal.h"
#include "../sites.h"

#include "../../patterns/reduce_sched.h"
#include "../reduce/reduce_util.h"

#include <math.h>
#include <stdlib.h>

WSP__COST(reduce_scatter, halving,
          "lg q.alpha + ((q-1)/q).N.(beta_x + gamma) + "
          "[p != q].(2.alpha + N.(beta + gamma) + c.beta), q = 2^floor(lg p); with sites, "
          "each step by whether it crosses") {
  int q = wsp__rsched_pow2_floor(s->p), lg = wsp__rsched_log2(q);
  double n = (double)(s->total ? s->total : s->bytes * (size_t)s->p);
  size_t hi = 0;
  for (int i = 0; i < s->p; i++)
    if (wsp__shape_block(s, i) > hi) hi = wsp__shape_block(s, i);
  double c = (double)(q - 1) / q * n * m->gamma;
  for (int k = 0; k < lg; k++) c += wsp__xstep_cost(m, s, k, ldexp(n, -(k + 1)), 1);
  if (s->p != q)
    c += wsp__xstep_cost(m, s, -1, n, 0) + wsp__xstep_cost(m, s, -1, (double)hi, 0) + n * m->gamma;
  return c;
}

int wsp__reduce_scatter_halving(wsp_comm_t *comm, const wsp__coll_args_t *a) {
  int p = comm->size, me = comm->rank, rc = WSP_OK;
  int q = wsp__rsched_pow2_floor(p), lg = wsp__rsched_log2(q), r = p - q;
  int nr = wsp__fold_newrank(me, p, -1), partner = wsp__fold_partner(me, p);
  const size_t *cnt = a->rcounts, *off = a->rdispls;
  size_t count = a->count;
  if (nr < 0) { /* folded away: the vector over, the block back */
    if ((rc = wsp__red_send(comm, a, a->sendbuf, count, partner))) return rc;
    return wsp__red_recv(comm, a, a->recvbuf, cnt[me], partner);
  }
  void *m1 = NULL, *m2 = NULL;
  void *x = wsp__tmp_typed(comm, a, count, &m1);
  void *y = x ? wsp__tmp_typed(comm, a, count, &m2) : NULL;
  size_t *bounds = y ? malloc(((size_t)q + 1) * sizeof *bounds) : NULL;
  if (bounds == NULL) {
    rc =
        y ? wsp__fail(comm, WSP_ERR_NOMEM, "reduce_scatter/halving: out of memory") : WSP_ERR_NOMEM;
    goto out;
  }
  /* x: this rank's vector, with its fold partner's combined in front. */
  if ((rc = wsp__copy_typed(comm, a, a->sendbuf, x, count))) goto out;
  if (partner >= 0) {
    if ((rc = wsp__red_recv(comm, a, y, count, partner))) goto out;
    if ((rc = wsp__reduce_local(comm, y, x, count, a->dtype, a->op))) goto out;
  }
  /* y: the new ranks' runs in bit-reversed order. New rank i stands for
   * ranks [lo(i), hi(i)): 2i and 2i+1 below r, else i + r. */
#define LO(i) ((i) < r ? 2 * (i) : (i) + r)
#define HI(i) ((i) < r ? 2 * (i) + 2 : (i) + r + 1)
  bounds[0] = 0;
  for (int b = 0; b < q; b++) {
    int i = wsp__bitrev(b, lg);
    size_t start = off[LO(i)], len = off[HI(i) - 1] + cnt[HI(i) - 1] - start;
    bounds[b + 1] = bounds[b] + len;
    if ((rc = wsp__copy_typed(comm, a, wsp__elem(a, x, start), wsp__elem(a, y, bounds[b]), len)))
      goto out;
  }
  void *acc = y, *rb = x;
  if ((rc = wsp__red_halving(comm, a, nr, q, -1, bounds, &acc, &rb))) goto out;
  /* Part bitrev(nr) holds this new rank's blocks in rank order. */
  char *mine = wsp__elem(a, acc, bounds[wsp__bitrev(nr, lg)]);
  if (partner >= 0) { /* the lower block is the partner's */
    if ((rc = wsp__red_send(comm, a, mine, cnt[partner], partner))) goto out;
    mine = wsp__elem(a, mine, cnt[partner]);
  }
  rc = wsp__copy_typed(comm, a, mine, a->recvbuf, cnt[me]);
#undef LO
#undef HI
out:
  free(bounds);
  free(m1);
  free(m2);
  return rc;
}
