/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Rabenseifner's allreduce: reduce-scatter by recursive halving, then
 * allgather by recursive doubling (Rabenseifner 2004; Thakur, Rabenseifner
 * & Gropp 2005), any p and any count.
 *
 * Fold: with q the largest power of two <= p and r = p - q, ranks 2i and
 * 2i+1 (i < r) pair up; the even one sends its vector to the odd one,
 * which combines them (even's first) and goes on as new rank i; ranks
 * >= 2r are new rank rank - r.
 *
 * Reduce-scatter: the vector is cut into q nearly equal blocks (blocks may
 * be empty when count < q). In step k = 0, 1, ..., lg q - 1, new ranks nr
 * and nr ^ 2^k hold the same window of blocks; each keeps one half (the
 * lower if its bit k is 0), sends the other and combines the partner's
 * copy of its half into its own. Lowest bit first, every partial covers a
 * contiguous run of ranks and the partner's run is adjacent, so the
 * combination keeps rank order (non-commutative ops are exact). After lg q
 * steps each new rank holds one fully reduced block.
 *
 * Allgather: the same pairs in reverse order (k = lg q - 1 down to 0)
 * swap what they hold, doubling it each step. Then each odd rank below 2r
 * sends the result to its even partner.
 * (src/patterns/reduce_sched.h has the fold and the windows.)
 *
 * Bandwidth-optimal for long vectors: each rank sends 2n(q-1)/q and
 * reduces n(q-1)/q, in 2 lg q messages.
 *
 * Preconditions: none (any p, any count, any op).
 */
#include "../coll_internal.h"
#include "../sites.h"

#include "../../patterns/reduce_sched.h"
#include "../reduce/reduce_util.h"

#include <math.h>
#include <stdlib.h>

WSP__COST(allreduce, rabenseifner,
          "2.lg q.alpha + 2.sum_{i=1..lg q} drain(n/2^i) + 2.((q-1)/q).n.beta_x + "
          "((q-1)/q).n.gamma + [p != q].(2.(alpha + drain(n)) + 2.n.beta + n.gamma), q = "
          "2^floor(lg p); with sites, each step by whether it crosses") {
  int q = wsp__rsched_pow2_floor(s->p), lg = wsp__rsched_log2(q);
  double n = (double)s->bytes, f = (double)(q - 1) / q;
  /* Halving and doubling are exchanges (beta_x), step k of each with
   * n/2^(k+1); each step waits for the whole of the one before
   * (wsp__drain). */
  double c = 2.0 * wsp__drain_halving(m, n, lg) + f * n * m->gamma;
  for (int k = 0; k < lg; k++) c += 2.0 * wsp__xstep_cost(m, s, k, ldexp(n, -(k + 1)), 1);
  if (s->p != q) c += 2.0 * (wsp__xstep_cost(m, s, -1, n, 0) + wsp__drain(m, n)) + n * m->gamma;
  return c;
}

int wsp__allreduce_rabenseifner(wsp_comm_t *comm, const wsp__coll_args_t *a) {
  int p = comm->size, me = comm->rank, rc = WSP_OK;
  int q = wsp__rsched_pow2_floor(p), lg = wsp__rsched_log2(q);
  int nr = wsp__fold_newrank(me, p, -1), partner = wsp__fold_partner(me, p);
  size_t count = a->count;
  if (nr < 0) { /* folded away: hand the vector over, get the result back */
    if ((rc = wsp__red_send(comm, a, a->sendbuf, count, partner))) return rc;
    return wsp__red_recv(comm, a, a->recvbuf, count, partner);
  }
  void *mem = NULL, *acc = a->recvbuf;
  void *rb = wsp__tmp_typed(comm, a, count, &mem);
  if (rb == NULL) return WSP_ERR_NOMEM;
  if ((rc = wsp__copy_typed(comm, a, a->sendbuf, acc, count))) goto out;
  if (partner >= 0) { /* fold: the even partner's vector comes first */
    if ((rc = wsp__red_recv(comm, a, rb, count, partner))) goto out;
    if ((rc = wsp__reduce_local(comm, rb, acc, count, a->dtype, a->op))) goto out;
  }
  if ((rc = wsp__red_halving(comm, a, nr, q, -1, NULL, &acc, &rb))) goto out;
  for (int k = lg - 1; k >= 0; k--) { /* allgather, highest bit first */
    int pnr = nr ^ (1 << k), peer = wsp__fold_oldrank(pnr, p, -1);
    size_t ms, ml, ps, pl;
    wsp__halving_window(nr, k + 1, q, count, &ms, &ml);
    wsp__halving_window(pnr, k + 1, q, count, &ps, &pl);
    if ((rc = wsp__red_exchange(comm, a, wsp__elem(a, acc, ms), ml,
                                wsp__elem(a, acc, ps), pl, peer)))
      goto out;
  }
  if ((rc = wsp__copy_typed(comm, a, acc, a->recvbuf, count))) goto out;
  if (partner >= 0) rc = wsp__red_send(comm, a, a->recvbuf, count, partner);
out:
  free(mem);
  return rc;
}
