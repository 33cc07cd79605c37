/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Far-first broadcast: the usual multi-site broadcast (MPICH-G2, MagPIe,
 * PACX-MPI; the source's baseline), kept as an algorithm of its own so that
 * it can be forced and measured beside "sites" (docs/sites.md).
 *
 * How it works. The root sends the whole message to the first rank of
 * every other site, one connection per site, all at once; then every site
 * broadcasts it from there (from the root at the root's site) with the
 * broadcast the model picks for a site's ranks (src/core/sites.c makes the
 * site communicator on first use). Each byte crosses between two sites
 * once, over one connection.
 *
 * Cost: alpha_wan plus the slowest of the root's NIC sending S - 1 copies,
 * one connection and the link carrying M; then the cheapest broadcast at
 * p = q, the largest site. The source's L + M/B + (M/B + M/B) with the
 * site's broadcast priced by the model.
 *
 * Preconditions: two sites or more. Fallback: binomial.
 */
#include "bcast.h"

#include "../sites.h"

#include <math.h>

WSP__COST(bcast, far_first,
          "wan(M, 1) + B_site(q): alpha_wan + max((S-1).M.beta, M.beta_wan, "
          "M.beta_wan_link), then the cheapest bcast at p = q (the largest site)") {
  if (s->sites == NULL) return INFINITY;
  wsp__coll_shape_t x = wsp__site_shape(s);
  double b;
  wsp__coll_cheapest(wsp__coll_table(WSP_COLL_BCAST), m, &x, &b);
  return wsp__wan_cost(m, (double)s->bytes, 1, s->sites->count - 1, 1) + b;
}

int wsp__bcast_far_first(wsp_comm_t *comm, const wsp__coll_args_t *a) {
  const wsp__sites_t *st = &comm->sites;
  int S = st->count, me = comm->rank, rs = st->site_of[a->root], rc;
  wsp_comm_t *site = wsp__sites_comm(comm, &rc);
  if (site == NULL) return rc;
  int my = st->site_of[me], local_root = my == rs ? st->index[a->root] : 0;
  /* 1. The root to the first rank of every other site. */
  if (me == a->root) {
    MPI_Request req[64];
    int nreq = 0;
    for (int t = 0; t < S; t++) {
      if (t == rs) continue;
      if ((rc = wsp__isend_bytes(comm, a->recvbuf, a->block, st->rank[st->start[t]], a->tag, 0,
                                 &req[nreq])))
        return wsp__abandon(comm, rc, 0, NULL, nreq, req);
      if (++nreq == (int)(sizeof req / sizeof req[0])) {
        if ((rc = wsp__waitall(comm, nreq, req, a->block * (size_t)nreq))) return rc;
        nreq = 0;
      }
    }
    if ((rc = wsp__waitall(comm, nreq, req, a->block * (size_t)nreq))) return rc;
  } else if (my != rs && st->index[me] == 0) {
    if ((rc = wsp__recv_bytes(comm, a->recvbuf, a->block, a->root, a->tag))) return rc;
  }
  /* 2. Every site from its first rank (the root at the root's site). */
  if (site->size == 1) return WSP_OK;
  wsp__coll_args_t b = *a;
  b.root = local_root;
  wsp__coll_shape_t s = {.p = site->size, .bytes = a->block, .count = a->block,
                         .commutative = 1, .dense = 1, .root = local_root};
  wsp__coll_shape_topo(site, &s);
  return wsp__coll_run(site, &b, &s);
}
