/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The transport under the collectives (src/p2p/xport.c): the duplicate
 * communicator whose lanes carry their transfers, made and freed with the
 * communicator.
 */
#ifndef WSP_P2P_XPORT_H
#define WSP_P2P_XPORT_H

#include "wsp_internal.h"

/* Collective over comm: a duplicate of it wrapped with its configuration,
 * whose own striped engine carries traffic over lanes (`lanes` per pair;
 * 0: each pair's probe chooses), so that its tags never meet the user's
 * striped messages. `failed`: this rank could not prepare what the caller
 * keeps beside it (it fails the agreement for every rank). WSP_OK with
 * *out; otherwise *out NULL and the same status on every rank (only
 * WSP_ERR_TIMEOUT should fail the caller). Used by the transport below and
 * the lanes between sites (wan.c). */
int wsp__lanes_comm(wsp_comm_t *comm, unsigned lanes, int failed, const char *what,
                    wsp_comm_t **out);
/* Collective: frees a communicator of wsp__lanes_comm and sets *w to NULL
 * (transfers still in flight on it fail, and WSP_ERR_ARG says so). */
int wsp__lanes_comm_free(wsp_comm_t **w);
/* Whether a pair's probe found several lanes faster than one flow (the
 * rule of auto's verdict and of the map's flows). */
int wsp__lanes_pay(const wsp_striped_info_t *info);
/* Collective over comm, from wsp_comm_create: unless cfg.transport is
 * WSP_TRANSPORT_MPI, on a communicator of two nodes or more (never under
 * SimGrid), makes comm->lanes; with WSP_TRANSPORT_LANES sets comm->xport
 * too (auto: wsp__xport_decide). A failure on any rank leaves every transfer to MPI on every
 * rank, with one warning; only a timeout fails the call. */
int wsp__xport_create(wsp_comm_t *comm);
/* Collective over comm, under auto before its first collective that moves
 * cfg.p2p_min bytes or more: measures whether lanes pay between nodes and
 * sets comm->xport, or frees comm->lanes, alike on every rank (xport.c
 * says how). Nothing once decided. */
int wsp__xport_decide(wsp_comm_t *comm);
/* The size from which the collectives' transfers between nodes take k
 * lanes that pay from `probed` bytes (the largest threshold the pairs'
 * probes or the map found): at least that, and at least cfg.p2p_min where
 * the user chose one; at 0 (automatic), from k x WSP__STRIPE_CHUNK_MIN
 * (the shortest transfer that all k lanes carry a part of), up to
 * WSP_P2P_MIN_DEFAULT. A pipeline's segments can then be short enough
 * that a hop does not wait long for each (docs/p2p.md, "Under the
 * collectives"). */
size_t wsp__xport_threshold(size_t p2p_min, unsigned k, size_t probed);
/* Whether a transfer of `bytes` between this rank and peer goes to the
 * lanes' engine (which may still carry it through MPI, as the pair's probe
 * found): the lanes are on, the peer is on another node and the transfer
 * is at least cfg.p2p_min. Both ends of a transfer answer alike. */
int wsp__xport_takes(const wsp_comm_t *comm, int peer, size_t bytes);
/* A transfer from peer that this rank cannot receive (no memory for it):
 * failed as a lane that breaks under it would be, so that every rank's
 * waits end with WSP_ERR_CONN rather than the sender's at its time limit. */
void wsp__xport_refuse(wsp_comm_t *comm, int peer, const char *why);
/* Collective over c, a copy of `from` with a communicator of its own (the
 * shuffle's): lanes of c's own with from's verdict (lanes per pair, the
 * size from which transfers take them), without a probe, when from's
 * transfers take lanes; nothing otherwise (from NULL: none). Clears what c
 * copied of its original's lanes. A set-up that fails on any rank leaves c on MPI on every rank,
 * with one warning; only a timeout fails. */
int wsp__xport_inherit(wsp_comm_t *c, const wsp_comm_t *from, const char *what);
/* From wsp_comm_free: frees comm->lanes (WSP_ERR_ARG when transfers were
 * still in flight on it; they fail). */
int wsp__xport_free(wsp_comm_t *comm);

#endif
