/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Rabenseifner's reduce: reduce-scatter by recursive halving, then a
 * binomial gather of the pieces to the root (Rabenseifner 2004; Thakur,
 * Rabenseifner & Gropp 2005).
 *
 * Fold: with q the largest power of two <= p and r = p - q, ranks 2i and
 * 2i+1 (i < r) pair up; one hands its whole vector to the other, which
 * combines the two (in rank order) and goes on as new rank i; ranks >= 2r
 * are new rank rank - r. The root always stays (in its pair it is the one
 * that keeps the data), so no final hop to the root is needed.
 *
 * Reduce-scatter: the vector is cut into q nearly equal blocks (any count:
 * blocks may be empty). In step k = 0, 1, ..., lg q - 1, new rank nr and
 * nr ^ 2^k each hold the same window of blocks; each keeps one half (the
 * lower if its bit k is 0), sends the other half to the partner, and
 * combines the partner's copy of the kept half into its own. Pairing the
 * lowest bit first makes every partial cover a contiguous run of ranks,
 * the partner's run right before or right after: the combination is done
 * in rank order, so non-commutative ops are exact. After lg q steps each
 * new rank holds one fully reduced block.
 *
 * Gather: the steps in reverse, k = lg q - 1 down to 0: of each pair the
 * rank whose bit k differs from the root's sends all the blocks it holds
 * and is done; the other appends them. The root ends with the vector.
 *
 * Bandwidth-optimal for long vectors: every rank sends and reduces about
 * n(q-1)/q in the reduce-scatter, and the root receives n(q-1)/q.
 * (src/patterns/reduce_sched.h has the fold and the windows.)
 *
 * Preconditions: none (any p, any count, any op).
 */
#include "../coll_internal.h"

#include "../../patterns/reduce_sched.h"
#include "reduce_util.h"

#include <stdlib.h>

WSP__COST(reduce, rabenseifner,
          "2.lg q.alpha + 2.sum_{i=1..lg q} drain(n/2^i) + ((q-1)/q).n.(beta + beta_x) + "
          "((q-1)/q).n.gamma + [p != q].(alpha + drain(n) + n.beta + n.gamma), q = "
          "2^floor(lg p)") {
  int q = wsp__rsched_pow2_floor(s->p), lg = wsp__rsched_log2(q);
  double n = (double)s->bytes, f = (double)(q - 1) / q;
  /* Halving exchanges at beta_x, the gather at beta. */
  /* Each step waits for the whole of the one before (wsp__drain). */
  double c = 2.0 * lg * m->alpha + 2.0 * wsp__drain_halving(m, n, lg) +
             f * n * (m->beta + m->beta_x) + f * n * m->gamma;
  if (s->p != q) c += m->alpha + wsp__drain(m, n) + n * (m->beta + m->gamma);
  return c;
}

int wsp__reduce_rabenseifner(wsp_comm_t *comm, const wsp__coll_args_t *a) {
  int p = comm->size, me = comm->rank, root = a->root, rc = WSP_OK;
  int q = wsp__rsched_pow2_floor(p), lg = wsp__rsched_log2(q);
  int nr = wsp__fold_newrank(me, p, root), partner = wsp__fold_partner(me, p);
  size_t count = a->count;
  if (nr < 0) /* folded away: hand the vector over, done */
    return wsp__red_send(comm, a, a->sendbuf, count, partner);

  void *m1 = NULL, *m2 = NULL;
  void *acc = me == root ? a->recvbuf : wsp__tmp_typed(comm, a, count, &m1);
  void *rb = acc ? wsp__tmp_typed(comm, a, count, &m2) : NULL;
  if (acc == NULL || rb == NULL) {
    rc = WSP_ERR_NOMEM;
    goto out;
  }
  if ((rc = wsp__copy_typed(comm, a, a->sendbuf, acc, count))) goto out;
  void *x;
#define SWAP() (x = acc, acc = rb, rb = x)
  if (partner >= 0) { /* fold: take the partner's vector */
    if ((rc = wsp__red_recv(comm, a, rb, count, partner))) goto out;
    if (partner < me) {
      rc = wsp__reduce_local(comm, rb, acc, count, a->dtype, a->op);
    } else {
      rc = wsp__reduce_local(comm, acc, rb, count, a->dtype, a->op);
      SWAP();
    }
    if (rc) goto out;
  }
  /* Reduce-scatter by recursive halving, lowest bit first. */
  if ((rc = wsp__red_halving(comm, a, nr, q, root, NULL, &acc, &rb))) goto out;
  /* Gather to the root, highest bit first. */
  int nroot = wsp__fold_newrank(root, p, root);
  for (int k = lg - 1; k >= 0; k--) {
    int pnr = nr ^ (1 << k), peer = wsp__fold_oldrank(pnr, p, root);
    size_t s, l;
    if (((nr ^ nroot) >> k) & 1) { /* toward the root: send, done */
      wsp__halving_window(nr, k + 1, q, count, &s, &l);
      rc = wsp__red_send(comm, a, wsp__elem(a, acc, s), l, peer);
      goto out;
    }
    wsp__halving_window(pnr, k + 1, q, count, &s, &l);
    if ((rc = wsp__red_recv(comm, a, wsp__elem(a, acc, s), l, peer))) goto out;
  }
#undef SWAP
  /* Only the root gets here. */
  rc = wsp__copy_typed(comm, a, acc, a->recvbuf, count);
out:
  free(m1);
  free(m2);
  return rc;
}
