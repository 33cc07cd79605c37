/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Multi-site broadcast: the source's modified van de Geijn broadcast, with
 * n connections between every two sites at once (docs/sites.md).
 *
 * How it works. The message is cut into n blocks, and every site's ranks
 * into n groups whose first ranks are the gateways (src/patterns/
 * sites_sched.h; at the root's site the local indices are rotated so that
 * the root is the gateway of group 0).
 *   1. At the root's site, the root sends block g to gateway g.
 *   2. Each gateway of the root's site sends its block to gateway g of
 *      every other site: n transfers cross between two sites at once,
 *      instead of far-first's one.
 *   3. On every site, gateway g cuts block g into its group's pieces and
 *      sends each member its piece.
 *   4. On every site, a ring allgather of the pieces (the root, which has
 *      everything, receives nothing).
 * Every gateway finishes step 2 before step 3: the other sites wait for
 * the crossings, so nothing at the root's site takes a share of a
 * gateway's link from them. The other sites' ranks only forward inside
 * their site: no more than n connections share the link between two
 * sites.
 *
 * Cost: the root's fan to n - 1 gateways; one crossing of blocks of M/n
 * bytes over n connections (each gateway of the root's site sends to the
 * S - 1 other sites; wsp__wan_cost); a gateway's fan to its group; the
 * ring over the largest site (q ranks). The source's L + M/(nB) + M/B +
 * M/B with latencies and the ring's exchanges priced.
 * The connections run are the count up to n whose cost is least
 * (wsp__sites_best_conns): one that leaves a site's groups unequal can
 * cost more than fewer connections.
 *
 * Preconditions: two sites or more. n is at most the smallest site. Any
 * root, any site sizes. Fallback: scatter_ring.
 */
#include "bcast.h"

#include "../sites.h"

#include <math.h>
#include <stdlib.h>

static double wsp__bcast_sites_cost_c(const wsp_model_t *m, const wsp__coll_shape_t *s, int n,
                                      wsp__coll_tune_t *tune) {
  int S = s->sites->count, q = s->sites->max_size, g = (q + n - 1) / n;
  double M = (double)s->bytes, blk = M / n, piece = wsp__site_piece_max(M, q, n);
  tune->lanes = wsp__wan_lanes(s, blk);
  return wsp__fan_cost(m, n, (size_t)blk) + wsp__wan_cost(m, M, n, S - 1, tune->lanes) +
         wsp__fan_cost(m, g, (size_t)piece) + (q - 1) * (m->alpha + piece * m->beta_x);
}

WSP__COST(bcast, sites,
          "min over n' = 1..n of fan(n', M/n') + wan(M, n') + fan(ceil(q/n'), P) + "
          "(q-1).(alpha + P.beta_x), P = M/(n'.floor(q/n')) the largest piece, where fan(k, "
          "b) = alpha + (k-2).gap + (k-1).b.beta, wan(M, n') = (1 + [l > 1]).alpha_wan + "
          "max((S-1).(M/n').beta, (M/n').beta_wan/l, M.beta_wan_link), n' connections of l "
          "lanes (n' = n when WSP_WAN_CONNECTIONS sets n), S sites, q the largest site; + A "
          "(allreduce sites)") {
  if (s->sites == NULL) return INFINITY;
  return wsp__agree_cost(m, s) + wsp__sites_best_conns(m, s, s->wan_n, wsp__bcast_sites_cost_c, t);
}

int wsp__bcast_sites(wsp_comm_t *comm, const wsp__coll_args_t *a) {
  const wsp__sites_t *st = &comm->sites;
  int S = st->count, me = comm->rank, rs = st->site_of[a->root], rc = WSP_OK;
  int qr = wsp__site_size(st, rs), rot_root = st->index[a->root];
  wsp__site_view_t w = {.st = st, .site = st->site_of[me], .n = wsp__sites_run_conns(comm, a),
                        .type = MPI_BYTE, .extent = 1, .count = a->block, .tag = a->tag};
  w.q = wsp__site_size(st, w.site);
  w.rot = w.site == rs ? rot_root : 0;
  w.v = (st->index[me] - w.rot + w.q) % w.q;
  int n = w.n, g = wsp__ss_group(w.q, n, w.v), gateway = w.v == wsp__ss_gateway(w.q, n, g);
  char *buf = a->recvbuf;
  size_t bs, bl;
  wsp__ss_block(a->block, n, g, &bs, &bl);
  /* Requests: the root's n - 1 blocks; a gateway's S - 1 crossings. */
  MPI_Request *req = malloc((size_t)n * sizeof *req);
  wsp__wan_move_t mv;
  int failed = wsp__wan_alloc(&mv, gateway ? S - 1 : 0) || req == NULL;
  if ((rc = wsp__agree_alloc(comm, failed, "bcast/sites"))) goto out;
  /* Crossings over lanes when the cost chose them (the same on every
   * rank); every rank takes part in making them (collective). */
  mv.wan = a->tune.lanes > 1 ? wsp__sites_wan(comm, &rc) : NULL;
  if (rc != WSP_OK) goto out; /* a timeout: the lanes' set-up waited in vain */
  mv.tag = a->tag;
  int nreq = 0;
  /* 1. The root's blocks to its site's gateways. */
  if (me == a->root) {
    for (int k = 1; k < n && rc == WSP_OK; k++) {
      size_t ks, kl;
      wsp__ss_block(a->block, n, k, &ks, &kl);
      if (kl == 0) continue;
      int peer = wsp__site_rank(st, rs, wsp__ss_gateway(qr, n, k), rot_root);
      if ((rc = wsp__isend_bytes(comm, buf + ks, kl, peer, a->tag, 0, &req[nreq])) == WSP_OK)
        nreq++;
    }
    if (rc) {
      rc = wsp__abandon(comm, rc, 0, NULL, nreq, req);
      goto out;
    }
    if ((rc = wsp__waitall(comm, nreq, req, a->block))) goto out;
  } else if (w.site == rs && gateway && bl) {
    if ((rc = wsp__recv_bytes(comm, buf + bs, bl, a->root, a->tag))) goto out;
  }
  /* 2. Across: gateway g of the root's site to gateway g of every other
   * site. A gateway of the root's site finishes its crossings before it
   * sends its group their pieces: sent at once, the pieces took a share
   * of its link from the crossings, which every other site waits for, and
   * the root's site gained time it then spent waiting for nothing
   * (docs/results/sites.md, "The root's gateways: crossings first"). */
  if (gateway && bl) {
    for (int t = 0; t < S; t++) {
      if (t == w.site || (w.site != rs && t != rs)) continue;
      int root_side = w.site == rs, ts = root_side ? t : rs;
      int peer = wsp__site_rank(st, ts, wsp__ss_gateway(wsp__site_size(st, ts), n, g),
                                root_side ? 0 : rot_root);
      mv.x[mv.nx++] = (wsp__wan_xfer_t){buf + bs, bl, MPI_BYTE, peer, root_side};
    }
    if ((rc = wsp__wan_start(comm, &mv)) ||
        (rc = wsp__wan_finish(comm, &mv, w.site == rs ? bl * (size_t)(S - 1) : bl)))
      goto out;
  }
  /* 3. Pieces from the gateways to their groups. */
  rc = wsp__site_group(comm, &w, buf, 0);
  /* 4. The ring; the root holds everything already. */
  if (rc == WSP_OK) rc = wsp__site_allgather(comm, &w, buf, w.site == rs ? 0 : -1);
out:
  free(req);
  wsp__wan_release(&mv);
  return rc;
}
