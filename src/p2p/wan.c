/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The lanes between sites: the multi-site bcast and allreduce
 * (src/coll/coll_sites.c) carry their crossings over a duplicate of the
 * communicator whose striped point-to-point has several lanes per pair, so
 * that one connection capped below the link (a long round trip, a per-flow
 * cap) does not bound a crossing. Sites themselves are core's
 * (src/core/sites.c); how many lanes follows the striped engine's own rule
 * (wsp__stripe_choose) for the model's figures between sites.
 */
#include "wsp_internal.h"

#include "striped_internal.h"
#include "wan.h"
#include "xport.h"

#include <stdlib.h>

/* The lanes' communicator: a duplicate of comm->mpi wrapped with the
 * parent's configuration, its lanes forced to `lanes` (no probe: the model
 * already measured the connections between sites). Every wait here obeys
 * the time limit, and a timeout fails the call on every rank that waited;
 * any other failure, on any rank, leaves the crossings to MPI on every
 * rank. */
wsp_comm_t *wsp__sites_wan_with(wsp_comm_t *comm, int lanes, int *rc) {
  wsp__sites_t *st = &comm->sites;
  *rc = WSP_OK;
  if (st->wan || st->wan_failed) return st->wan;
  if (lanes <= 1) return NULL;
  const char *what = "sites: the lanes between sites";
  wsp_comm_t *w = NULL;
  st->wan_off = calloc((size_t)comm->size, 1);
  int arc = wsp__lanes_comm(comm, (unsigned)lanes, st->wan_off == NULL, what, &w);
  if (arc != WSP_OK) {
    free(st->wan_off);
    st->wan_off = NULL;
  }
  if (arc == WSP_ERR_TIMEOUT) {
    *rc = arc;
    return NULL;
  }
  if (arc != WSP_OK) {
    st->wan_failed = 1;
    wsp__log(comm, WSP_LOG_WARN, "%s could not be set up (%s); crossings go through MPI",
             what, wsp_last_error());
    return NULL;
  }
  st->wan = w;
  return w;
}

wsp_comm_t *wsp__sites_wan(wsp_comm_t *comm, int *rc) {
  return wsp__sites_wan_with(comm, wsp__sites_lanes(comm), rc);
}

void wsp__sites_wan_free(wsp_comm_t *comm) {
  wsp__sites_t *st = &comm->sites;
  if (st->wan) wsp__stripe_free(st->wan);
  wsp__comm_unwrap(&st->wan);
  free(st->wan_off);
  st->wan_off = NULL;
}

int wsp__sites_lanes_rule(const wsp_model_t *m) {
  /* One connection between sites slower than a NIC (a window over a long
   * round trip, a per-flow cap): lanes, by the striped engine's own rule
   * for what its probe measured, one connection against what lanes can
   * reach (here a NIC). */
  int k = 1;
  size_t threshold;
  /* Not ramping: the sites' model has no ramp, so only lanes for the rate. */
  if (m->beta_wan > 0 && m->beta > 0) {
    const wsp__path_t path = {.rate1 = 1 / m->beta_wan,
                              .ratek = 1 / m->beta,
                              .rtt = 2 * m->alpha_wan,
                              .mss = WSP__MSS_DEFAULT};
    wsp__stripe_choose(&path, WSP__LANES_MAX, 0, &k, &threshold);
  }
  return k;
}

int wsp__sites_lanes_of(const wsp_comm_t *comm, const wsp_model_t *m) {
  const wsp__sites_t *st = &comm->sites;
  if (st->count < 2) return 0;
#ifdef WSP_SIMGRID
  (void)m;
  return 1; /* no sockets in a simulation */
#else
  if (st->wan_failed) return 1;
  if (st->wan) return (int)st->wan->cfg.p2p_lanes;
  if (comm->cfg.wan_lanes > 0) return (int)comm->cfg.wan_lanes;
  return wsp__sites_lanes_rule(m);
#endif
}

int wsp__sites_lanes(const wsp_comm_t *comm) { return wsp__sites_lanes_of(comm, &comm->model); }
