/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The network map inside (the public calls are in wirespeed.h): what a
 * map holds, and what its parts (netmap.c: the map and its groups,
 * probe.c: measuring it, file.c: saving and loading it) share.
 *
 * Figures are kept per pair of nodes, not per pair of ranks: ranks of one
 * node share its NIC, and a map of p^2 rank pairs would cost a probe of
 * p^2 pairs. Node a's own figures (two of its ranks, through shared
 * memory) sit on the diagonal, NAN where the node holds one rank.
 */
#ifndef WSP_NETMAP_H
#define WSP_NETMAP_H

#include "../core/wsp_internal.h"

#define WSP__NETMAP_FORMAT "wirespeed-netmap"
#define WSP__NETMAP_VERSION 1

struct wsp_netmap {
  int p, nodes;
  int *node_of;      /* p: the node of every rank (numbered by lowest rank) */
  uint64_t *host;    /* nodes: FNV-1a of the node's host name */
  /* nodes x nodes, [a * nodes + b], symmetric: one-way latency (s),
   * inverse bandwidth (s/byte), samples behind each estimate and how many
   * of them were marked as outliers. */
  double *lat, *inv_bw;
  int *samples, *outliers;
  /* nodes x nodes, symmetric, between nodes only (cfg.flows): one TCP
   * flow's rate and k flows' (bytes/s), k, the size from which the flows
   * paid (0: they did not), and the round trip of their connections as
   * the kernel measured it (s); 0 where not measured. */
  double *rate_one, *rate_k, *rtt;
  int *flows;
  size_t *flows_min;
  int *group;        /* nodes: the group of every node */
  int groups;
  size_t eager_intra, eager_inter; /* bytes; 0: not measured */
  int reps;
  double seconds;
  /* The tournament round the next wsp_netmap_refresh starts at (kept in
   * memory only: a loaded map starts again at 0). */
  int refresh_next;
};

/* A map for p ranks on `nodes` nodes with every figure unset (NAN, 0);
 * NULL when out of memory. */
wsp_netmap_t *wsp__netmap_new(int p, int nodes);
/* The job shape the map fits: p, the node of every rank, the hosts. */
uint64_t wsp__netmap_shape(const wsp_netmap_t *m);
/* The map of a file's bytes (len of them), or NULL with `why` filled (the
 * place of a JSON error, or what is wrong); and a map as the text a file
 * holds (malloc'd; NULL when out of memory). Reading back the text gives
 * the same map, to the bit: the fuzzer checks it (tests/fuzz). */
wsp_netmap_t *wsp__netmap_from_bytes(const char *bytes, size_t len, char *why, size_t wl);
char *wsp__netmap_to_text(const wsp_netmap_t *m);
/* Everything the map holds, to check that every rank has the same map. */
uint64_t wsp__netmap_fingerprint(const wsp_netmap_t *m);
/* Groups the nodes from their latencies (netmap.c says how). */
void wsp__netmap_group(wsp_netmap_t *m);
/* Collective over comm: WSP_OK on every rank when every rank passed the
 * same map (by fingerprint) and it fits comm (ranks, nodes, the node of
 * every rank, hosts); otherwise the same failure on every rank, `status`
 * (WSP_ERR_INTERNAL when the ranks' maps differ), with a message starting
 * "fn: what ...". checked_shape: the shape (wsp__netmap_shape) of a map
 * already found to fit comm, or 0; a map of that shape is not checked
 * again (no traffic beyond the fingerprint's reduction). */
int wsp__netmap_fits(wsp_comm_t *comm, const wsp_netmap_t *m, const char *fn,
                     const char *what, int status, uint64_t checked_shape);
/* Collective over comm: fills m's node_of and host from comm (an
 * allgather of the host names' hashes). */
int wsp__netmap_fill_shape(wsp_comm_t *comm, wsp_netmap_t *m);

#endif
