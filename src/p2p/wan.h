/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The lanes between sites (src/p2p/wan.c): the duplicate communicator whose
 * striped point-to-point carries the crossings of the multi-site bcast and
 * allreduce, and how many lanes each connection between sites gets.
 */
#ifndef WSP_P2P_WAN_H
#define WSP_P2P_WAN_H

#include "wsp_internal.h"

/* Lanes per connection for the crossings of the multi-site bcast and
 * allreduce: those of the lanes' communicator once it exists, else
 * cfg.wan_lanes when set, else the striped engine's rule
 * (wsp__stripe_choose: ceil(1.5 x beta_wan / beta) where one connection
 * between sites is at least 1.3x slower than a NIC), else 1; 1 under
 * SimGrid and after making the lanes' communicator failed. 0 without
 * sites. The same on every rank. wsp__sites_lanes_of
 * takes the model's figures from m (the calibration's, before they are
 * the communicator's). */
int wsp__sites_lanes(const wsp_comm_t *comm);
int wsp__sites_lanes_of(const wsp_comm_t *comm, const wsp_model_t *m);
/* The model's rule alone (no configuration, no sockets considered). */
int wsp__sites_lanes_rule(const wsp_model_t *m);
/* The communicator whose lanes carry the crossings, made on first use
 * with cfg.p2p_lanes = wsp__sites_lanes (no probe), or `lanes` for
 * wsp__sites_wan_with (the calibration makes it early to measure the
 * link over it). Collective over comm, as wsp__sites_comm. NULL with *rc
 * WSP_OK when the crossings go through MPI: one lane, or making it failed
 * on some rank (then on every rank, logged once, and wsp__sites_lanes
 * gives 1 from then on). NULL with *rc WSP_ERR_TIMEOUT when making it
 * waited out the time limit: the call fails. */
wsp_comm_t *wsp__sites_wan(wsp_comm_t *comm, int *rc);
wsp_comm_t *wsp__sites_wan_with(wsp_comm_t *comm, int lanes, int *rc);
/* Frees the lanes' communicator (before wsp__sites_free, which frees the
 * sites it belongs to). Collective over comm, as wsp_comm_free. */
void wsp__sites_wan_free(wsp_comm_t *comm);

#endif
