/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Two-tier allreduce: the usual multi-site allreduce (the source's
 * baseline), kept as an algorithm of its own so that it can be forced and
 * measured beside "sites" (docs/sites.md).
 *
 * How it works. On every site a reduce to its first rank, with the reduce
 * the model picks for a site's ranks (on the site communicator that
 * src/core/sites.c makes on first use); the first ranks send their sites'
 * sums to each other, one connection between two sites, and each combines
 * the S sums in site order (wsp__sites_combine: every site gets the same
 * bits); then every site broadcasts the result from its first rank, as
 * bytes.
 *
 * Cost: the cheapest reduce at p = q (the largest site), one crossing of
 * M over one connection (wsp__wan_cost) and S - 1 reductions of M, the
 * cheapest bcast at p = q. The source's L + M/B + (M/B + M/B) + (M/B +
 * M/B) with each site's steps priced by the model.
 *
 * Preconditions: two sites or more; a commutative op (sites need not be
 * blocks of consecutive ranks); a datatype without holes (the broadcast
 * moves bytes). Fallback: rabenseifner.
 */
#include "../coll_internal.h"

#include "../sites.h"

#include <math.h>
#include <stdlib.h>

WSP__COST(allreduce, two_tier,
          "R_site(q) + wan(M, 1) + (S-1).M.gamma + B_site(q): the cheapest reduce and "
          "bcast at p = q (the largest site), wan(M, 1) = alpha_wan + max((S-1).M.beta, "
          "M.beta_wan, M.beta_wan_link); + A (allreduce sites)") {
  if (s->sites == NULL) return INFINITY;
  wsp__coll_shape_t x = wsp__site_shape(s);
  double r, b;
  wsp__coll_cheapest(wsp__coll_table(WSP_COLL_REDUCE), m, &x, &r);
  x.count = x.bytes;
  x.commutative = 1;
  wsp__coll_cheapest(wsp__coll_table(WSP_COLL_BCAST), m, &x, &b);
  int S = s->sites->count;
  return wsp__agree_cost(m, s) + r + wsp__wan_cost(m, (double)s->bytes, 1, S - 1, 1) +
         (S - 1) * (double)s->bytes * m->gamma + b;
}

int wsp__allreduce_two_tier(wsp_comm_t *comm, const wsp__coll_args_t *a) {
  const wsp__sites_t *st = &comm->sites;
  int S = st->count, my = st->site_of[comm->rank], rc;
  wsp_comm_t *site = wsp__sites_comm(comm, &rc);
  if (site == NULL) return rc;
  int first = site->rank == 0;
  /* Each first rank: one slot per site for the exchange. */
  void *mem = NULL;
  char *slots = first ? wsp__tmp_typed(comm, a, a->count * (size_t)S, &mem) : NULL;
  MPI_Request *req = first ? malloc(2 * (size_t)S * sizeof *req) : NULL;
  if ((rc = wsp__agree_alloc(comm, first && (slots == NULL || req == NULL),
                             "allreduce/two_tier")))
    goto out;
  size_t stride = a->count * (size_t)a->extent;
  wsp__coll_shape_t s = {.bytes = a->block, .count = a->count,
                         .commutative = a->commutative, .dense = 1, .p = site->size};
  wsp__coll_shape_topo(site, &s);
  /* 1. Reduce to the site's first rank, into its slot. */
  wsp__coll_args_t r = *a;
  r.coll = WSP_COLL_REDUCE;
  r.root = 0;
  r.recvbuf = first ? slots + (size_t)my * stride : NULL;
  if (site->size > 1) {
    if ((rc = wsp__coll_run(site, &r, &s))) goto out;
  } else if ((rc = wsp__copy_typed(comm, a, a->sendbuf, r.recvbuf, a->count))) {
    goto out;
  }
  /* 2. The first ranks exchange their sites' sums and combine them. */
  if (first) {
    MPI_Request *sreq = req, *rreq = req + S;
    int ns = 0, nr = 0;
    for (int t = 0; t < S && rc == WSP_OK; t++) {
      if (t == my) continue;
      int peer = st->rank[st->start[t]];
      if ((rc = wsp__isend_typed(comm, slots + (size_t)my * stride, a->count, a->dtype, peer,
                                 a->tag, &sreq[ns])) == WSP_OK &&
          ++ns &&
          (rc = wsp__irecv_typed(comm, slots + (size_t)t * stride, a->count, a->dtype, peer,
                                 a->tag, &rreq[nr])) == WSP_OK)
        nr++;
    }
    if (rc) {
      wsp__abandon(comm, rc, nr, rreq, ns, sreq);
      goto out;
    }
    /* Every send must be done before the combine writes into the last
     * slot, which may be this site's own. */
    if ((rc = wsp__waitall(comm, nr, rreq, a->block * (size_t)nr)) ||
        (rc = wsp__waitall(comm, ns, sreq, 0)) ||
        (rc = wsp__sites_combine(comm, slots, stride, S, a->count, a->dtype, a->op)) ||
        (rc = wsp__copy_typed(comm, a, slots + (size_t)(S - 1) * stride, a->recvbuf, a->count)))
      goto out;
  }
  /* 3. Broadcast the result inside the site, as bytes. */
  if (site->size > 1) {
    wsp__coll_args_t b = {.coll = WSP_COLL_BCAST, .recvbuf = a->recvbuf, .count = a->block,
                          .dtype = MPI_BYTE, .op = MPI_OP_NULL, .commutative = 1,
                          .type_size = 1, .extent = 1, .true_lb = 0, .true_extent = 1,
                          .block = a->block, .root = 0};
    s.count = a->block;
    s.commutative = 1;
    rc = wsp__coll_run(site, &b, &s);
  }
out:
  free(mem);
  free(req);
  return rc;
}
