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
 * At the root's site, step 3 starts while step 2's transfers are in
 * flight. The other sites' ranks only forward inside their site: no more
 * than n connections share the link between two sites.
 *
 * Cost: the root's fan to n - 1 gateways; one crossing of blocks of M/n
 * bytes over n connections (each gateway of the root's site sends to the
 * S - 1 other sites; wsp__wan_cost); a gateway's fan to its group; the
 * ring over the largest site (q ranks). The source's L + M/(nB) + M/B +
 * M/B with latencies and the ring's exchanges priced.
 *
 * Preconditions: two sites or more. n is at most the smallest site. Any
 * root, any site sizes. Fallback: scatter_ring.
 */
#include "bcast.h"

#include "../sites.h"

#include <math.h>
#include <stdlib.h>

WSP__COST(bcast, sites,
          "fan(n, M/n) + wan(M, n) + fan(ceil(q/n), P) + (q-1).(alpha + P.beta_x), P = "
          "M/(n.floor(q/n)) the largest piece, where fan(k, b) = alpha + (k-2).gap + "
          "(k-1).b.beta, wan(M, n) = alpha_wan + max((S-1).(M/n).beta, (M/n).beta_wan, "
          "M.beta_wan_link), n connections, S sites, q the largest site") {
  if (s->sites == NULL) return INFINITY;
  int S = s->sites->count, n = s->wan_n, q = s->sites->max_size;
  double M = (double)s->bytes, blk = M / n;
  int g = (q + n - 1) / n;
  double piece = wsp__site_piece_max(M, q, n);
  return wsp__fan_cost(m, n, (size_t)blk) + wsp__wan_cost(m, M, n, S - 1) +
         wsp__fan_cost(m, g, (size_t)piece) + (q - 1) * (m->alpha + piece * m->beta_x);
}

int wsp__bcast_sites(wsp_comm_t *comm, const wsp__coll_args_t *a) {
  const wsp__sites_t *st = &comm->sites;
  int S = st->count, me = comm->rank, rs = st->site_of[a->root], rc = WSP_OK;
  int qr = wsp__site_size(st, rs), rot_root = st->index[a->root];
  wsp__site_view_t w = {.st = st, .site = st->site_of[me], .n = wsp__sites_conns(comm),
                        .type = MPI_BYTE, .extent = 1, .count = a->block, .tag = a->tag};
  w.q = wsp__site_size(st, w.site);
  w.rot = w.site == rs ? rot_root : 0;
  w.v = (st->index[me] - w.rot + w.q) % w.q;
  int n = w.n, g = wsp__ss_group(w.q, n, w.v), gateway = w.v == wsp__ss_gateway(w.q, n, g);
  char *buf = a->recvbuf;
  size_t bs, bl;
  wsp__ss_block(a->block, n, g, &bs, &bl);
  /* Requests: the root's n - 1 blocks, or a gateway's S - 1 crossings. */
  int max_req = n > S ? n : S;
  MPI_Request *req = malloc((size_t)max_req * sizeof *req);
  if ((rc = wsp__agree_alloc(comm, comm->mpi, req == NULL, "bcast/sites"))) {
    free(req);
    return rc;
  }
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
    if (rc) goto fail_send;
    if ((rc = wsp__waitall(comm, nreq, req, a->block))) goto out;
    nreq = 0;
  } else if (w.site == rs && gateway && bl) {
    if ((rc = wsp__recv_bytes(comm, buf + bs, bl, a->root, a->tag))) goto out;
  }
  /* 2. Across: gateway g of the root's site to gateway g of every other
   * site. At the root's site the sends stay in flight through step 3. */
  if (gateway && bl) {
    if (w.site == rs) {
      for (int t = 0; t < S && rc == WSP_OK; t++) {
        if (t == rs) continue;
        int peer = wsp__site_rank(st, t, wsp__ss_gateway(wsp__site_size(st, t), n, g), 0);
        if ((rc = wsp__isend_bytes(comm, buf + bs, bl, peer, a->tag, 0, &req[nreq])) == WSP_OK)
          nreq++;
      }
      if (rc) goto fail_send;
    } else {
      int peer = wsp__site_rank(st, rs, wsp__ss_gateway(qr, n, g), rot_root);
      if ((rc = wsp__recv_bytes(comm, buf + bs, bl, peer, a->tag))) goto out;
    }
  }
  /* 3. Pieces from the gateways to their groups. */
  if ((rc = wsp__site_group(comm, &w, buf, 0))) goto fail_send;
  if ((rc = wsp__waitall(comm, nreq, req, bl * (size_t)(S - 1)))) goto out;
  nreq = 0;
  /* 4. The ring; the root holds everything already. */
  rc = wsp__site_allgather(comm, &w, buf, w.site == rs ? 0 : -1);
  goto out;
fail_send:
  rc = wsp__abandon(rc, 0, NULL, nreq, req);
out:
  free(req);
  return rc;
}
