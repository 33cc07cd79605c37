/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Multi-site allreduce: the source's modified Rabenseifner allreduce, with
 * n connections between every two sites at once (docs/sites.md).
 *
 * How it works. The vector is cut into n blocks and every site's ranks
 * into n groups with a gateway each, each block into its group's pieces
 * (src/patterns/sites_sched.h).
 *   1. On every site, a ring reduce-scatter: each rank ends with its
 *      site's sum of its piece.
 *   2. Each group's members send their pieces to the gateway, which then
 *      holds its site's sum of block g.
 *   3. Gateway g of every site sends its block to gateway g of every other
 *      site and combines the S blocks in site order (wsp__sites_combine),
 *      so every site computes the same bits: n connections between two
 *      sites at once, where two-tier uses one.
 *   4. Each gateway sends its group's members their pieces of the result.
 *   5. On every site, a ring allgather of the pieces.
 *
 * Cost: the ring reduce-scatter over the largest site (q ranks), a
 * gateway's fan in and out, one crossing of M/n bytes per connection
 * (wsp__wan_cost) and S - 1 reductions of M/n bytes, the ring allgather.
 * The source's L + M/(nB) + M/B + M/B with latencies, reductions and the
 * groups' forwarding priced.
 * The connections run are the count up to n whose cost is least
 * (wsp__sites_best_conns): one that leaves a site's groups unequal can
 * cost more than fewer connections.
 *
 * Preconditions: two sites or more, a commutative op (the rings combine
 * in ring order, not rank order). Fallback: two_tier.
 */
#include "../coll_internal.h"

#include "../sites.h"

#include <math.h>
#include <stdlib.h>

static double wsp__allreduce_sites_cost_c(const wsp_model_t *m, const wsp__coll_shape_t *s,
                                          int n, wsp__coll_tune_t *tune) {
  int S = s->sites->count, q = s->sites->max_size, g = (q + n - 1) / n;
  double M = (double)s->bytes, piece = wsp__site_piece_max(M, q, n);
  tune->lanes = wsp__wan_lanes(s, M / n);
  return (q - 1) * (m->alpha + piece * (m->beta_x + m->gamma)) +
         2 * wsp__fan_cost(m, g, (size_t)piece) + wsp__wan_cost(m, M, n, S - 1, tune->lanes) +
         (S - 1) * (M / n) * m->gamma + (q - 1) * (m->alpha + piece * m->beta_x);
}

WSP__COST(allreduce, sites,
          "min over n' = 1..n of (q-1).(alpha + P.(beta_x + gamma)) + 2.fan(ceil(q/n'), P) + "
          "wan(M, n') + (S-1).(M/n').gamma + (q-1).(alpha + P.beta_x), P = M/(n'.floor(q/n')) "
          "the largest piece, where fan(k, b) = alpha + (k-2).gap + (k-1).b.beta, wan(M, n') "
          "= (1 + [l > 1]).alpha_wan + max((S-1).(M/n').beta, (M/n').beta_wan/l, "
          "M.beta_wan_link), n' connections of l lanes (n' = n when WSP_WAN_CONNECTIONS sets "
          "n), S sites, q the largest site; + A, an agreement before any traffic: 2 latencies "
          "per level of a binomial tree over p, alpha_wan where the level joins two sites") {
  if (s->sites == NULL) return INFINITY;
  return wsp__agree_cost(m, s) +
         wsp__sites_best_conns(m, s, s->wan_n, wsp__allreduce_sites_cost_c, t);
}

int wsp__allreduce_sites(wsp_comm_t *comm, const wsp__coll_args_t *a) {
  const wsp__sites_t *st = &comm->sites;
  int S = st->count, me = comm->rank, rc = WSP_OK;
  wsp__site_view_t w = {.st = st, .site = st->site_of[me], .n = wsp__sites_run_conns(comm, a),
                        .type = a->dtype, .extent = a->extent, .count = a->count,
                        .tag = a->tag};
  w.q = wsp__site_size(st, w.site);
  w.v = st->index[me];
  int n = w.n, g = wsp__ss_group(w.q, n, w.v), gateway = w.v == wsp__ss_gateway(w.q, n, g);
  size_t bs, bl, maxblk = a->count / (size_t)n + 1;
  wsp__ss_block(a->count, n, g, &bs, &bl);
  /* tmp: the ring's largest piece (at most a block), and on gateways one
   * slot per site for step 3. */
  size_t slots = gateway ? (size_t)S : 1;
  void *mem = NULL;
  char *tmp = wsp__tmp_typed(comm, a, maxblk * slots, &mem);
  wsp__wan_move_t mv;
  int failed = wsp__wan_alloc(&mv, gateway ? 2 * (S - 1) : 0) || tmp == NULL;
  if ((rc = wsp__agree_alloc(comm, failed, "allreduce/sites"))) goto out;
  /* Crossings over lanes when the cost chose them (the same on every
   * rank); every rank takes part in making them (collective). */
  wsp_comm_t *wan = a->tune.lanes > 1 ? wsp__sites_wan(comm, &rc) : NULL;
  if (rc != WSP_OK) goto out; /* a timeout: the lanes' set-up waited in vain */
  size_t stride = maxblk * (size_t)a->extent;
  if ((rc = wsp__copy_typed(comm, a, a->sendbuf, a->recvbuf, a->count))) goto out;
  /* 1, 2. The site's sums, piece by piece, then block g at the gateway. */
  if ((rc = wsp__site_reduce_scatter(comm, &w, a->recvbuf, tmp, a->op)) ||
      (rc = wsp__site_group(comm, &w, a->recvbuf, 1)))
    goto out;
  /* 3. The gateways of block g exchange their sites' sums. */
  if (gateway && bl) {
    char *mine = wsp__elem(a, a->recvbuf, bs);
    mv.wan = wan;
    mv.tag = a->tag;
    for (int t = 0; t < S; t++) {
      if (t == w.site) continue;
      int peer = wsp__site_rank(st, t, wsp__ss_gateway(wsp__site_size(st, t), n, g), 0);
      mv.x[mv.nx++] = (wsp__wan_xfer_t){mine, bl, a->dtype, peer, 1};
      mv.x[mv.nx++] = (wsp__wan_xfer_t){tmp + (size_t)t * stride, bl, a->dtype, peer, 0};
    }
    if ((rc = wsp__copy_typed(comm, a, mine, tmp + (size_t)w.site * stride, bl)) ||
        (rc = wsp__wan_start(comm, &mv)) ||
        (rc = wsp__wan_finish(comm, &mv, bl * (size_t)a->type_size * (size_t)(S - 1))) ||
        (rc = wsp__sites_combine(comm, tmp, stride, S, bl, a->dtype, a->op)) ||
        (rc = wsp__copy_typed(comm, a, tmp + (size_t)(S - 1) * stride, mine, bl)))
      goto out;
  }
  /* 4, 5. The result's pieces back to the groups, and the ring. */
  if ((rc = wsp__site_group(comm, &w, a->recvbuf, 0))) goto out;
  rc = wsp__site_allgather(comm, &w, a->recvbuf, -1);
out:
  free(mem);
  wsp__wan_release(&mv);
  return rc;
}
