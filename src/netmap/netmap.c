/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The map itself: making one, its fingerprints, grouping its nodes, and the
 * public calls that read it.
 *
 * Groups. Nodes that are close to each other (a rack, a site) form a group.
 * The inter-node latencies, sorted, are looked at for their widest gap: when
 * some latency is WSP__GROUP_GAP times the one below it or more, every pair
 * at or below the lower one is "close", and the groups are the connected
 * components of the close pairs. Without such a gap all nodes form one
 * group: noise spreads latencies of alike pairs a little, a rack's uplink or
 * a wide-area link multiplies them. The same sorted list and the same rule
 * on every rank give every rank the same groups.
 */
#include "netmap.h"

#include "../core/measure.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WSP__GROUP_GAP 2.0

wsp_netmap_t *wsp__netmap_new(int p, int nodes) {
  wsp_netmap_t *m = calloc(1, sizeof *m);
  if (m == NULL) return NULL;
  size_t nn = (size_t)nodes * (size_t)nodes;
  m->p = p;
  m->nodes = nodes;
  m->node_of = calloc((size_t)p, sizeof *m->node_of);
  m->host = calloc((size_t)nodes, sizeof *m->host);
  m->lat = malloc(nn * sizeof *m->lat);
  m->inv_bw = malloc(nn * sizeof *m->inv_bw);
  m->samples = calloc(nn, sizeof *m->samples);
  m->outliers = calloc(nn, sizeof *m->outliers);
  m->group = calloc((size_t)nodes, sizeof *m->group);
  m->rate_one = calloc(nn, sizeof *m->rate_one);
  m->rate_k = calloc(nn, sizeof *m->rate_k);
  m->rtt = calloc(nn, sizeof *m->rtt);
  m->flows = calloc(nn, sizeof *m->flows);
  m->flows_min = calloc(nn, sizeof *m->flows_min);
  if (!m->node_of || !m->host || !m->lat || !m->inv_bw || !m->samples || !m->outliers ||
      !m->group || !m->rate_one || !m->rate_k || !m->rtt || !m->flows || !m->flows_min) {
    wsp_netmap_free(&m);
    return NULL;
  }
  for (size_t i = 0; i < nn; i++) m->lat[i] = m->inv_bw[i] = NAN;
  m->groups = 1;
  return m;
}

int wsp_netmap_free(wsp_netmap_t **map) {
  if (map == NULL) return wsp__fail(NULL, WSP_ERR_ARG, "wsp_netmap_free: map is NULL");
  wsp_netmap_t *m = *map;
  if (m == NULL) return WSP_OK;
  free(m->node_of);
  free(m->host);
  free(m->lat);
  free(m->inv_bw);
  free(m->samples);
  free(m->outliers);
  free(m->group);
  free(m->rate_one);
  free(m->rate_k);
  free(m->rtt);
  free(m->flows);
  free(m->flows_min);
  free(m);
  *map = NULL;
  return WSP_OK;
}

uint64_t wsp__netmap_shape(const wsp_netmap_t *m) {
  int64_t dims[2] = {m->p, m->nodes};
  uint64_t h = wsp__fnv(WSP__FNV_INIT, dims, sizeof dims);
  h = wsp__fnv(h, m->node_of, (size_t)m->p * sizeof *m->node_of);
  return wsp__fnv(h, m->host, (size_t)m->nodes * sizeof *m->host);
}

uint64_t wsp__netmap_fingerprint(const wsp_netmap_t *m) {
  size_t nn = (size_t)m->nodes * (size_t)m->nodes;
  uint64_t h = wsp__netmap_shape(m);
  h = wsp__fnv(h, m->lat, nn * sizeof *m->lat);
  h = wsp__fnv(h, m->inv_bw, nn * sizeof *m->inv_bw);
  h = wsp__fnv(h, m->samples, nn * sizeof *m->samples);
  h = wsp__fnv(h, m->outliers, nn * sizeof *m->outliers);
  h = wsp__fnv(h, m->group, (size_t)m->nodes * sizeof *m->group);
  h = wsp__fnv(h, m->rate_one, nn * sizeof *m->rate_one);
  h = wsp__fnv(h, m->rate_k, nn * sizeof *m->rate_k);
  h = wsp__fnv(h, m->rtt, nn * sizeof *m->rtt);
  h = wsp__fnv(h, m->flows, nn * sizeof *m->flows);
  h = wsp__fnv(h, m->flows_min, nn * sizeof *m->flows_min);
  uint64_t rest[4] = {(uint64_t)m->groups, m->eager_intra, m->eager_inter, (uint64_t)m->reps};
  return wsp__fnv(h, rest, sizeof rest);
}

static int wsp__find_root(int *up, int a) {
  while (up[a] != a) a = up[a] = up[up[a]];
  return a;
}

void wsp__netmap_group(wsp_netmap_t *m) {
  int n = m->nodes;
  for (int a = 0; a < n; a++) m->group[a] = 0;
  m->groups = 1;
  size_t npairs = (size_t)n * (size_t)(n - 1) / 2, k = 0;
  double *v = npairs ? malloc(npairs * sizeof *v) : NULL;
  int *up = malloc((size_t)n * sizeof *up);
  if (npairs == 0 || v == NULL || up == NULL) goto out; /* one group */
  for (int a = 0; a < n; a++)
    for (int b = a + 1; b < n; b++)
      if (m->lat[a * n + b] > 0) v[k++] = m->lat[a * n + b];
  if (k < 2) goto out;
  wsp__measure_sort(v, k);
  double cut = -1, widest = WSP__GROUP_GAP;
  for (size_t i = 0; i + 1 < k; i++)
    if (v[i + 1] >= widest * v[i]) widest = v[i + 1] / v[i], cut = v[i];
  if (cut < 0) goto out;
  for (int a = 0; a < n; a++) up[a] = a;
  for (int a = 0; a < n; a++)
    for (int b = a + 1; b < n; b++)
      if (m->lat[a * n + b] <= cut) {
        int ra = wsp__find_root(up, a), rb = wsp__find_root(up, b);
        if (ra != rb) up[ra > rb ? ra : rb] = ra < rb ? ra : rb;
      }
  /* Groups numbered in the order of their lowest nodes. */
  int groups = 0;
  for (int a = 0; a < n; a++) {
    int r = wsp__find_root(up, a);
    m->group[a] = r == a ? groups++ : m->group[r];
  }
  m->groups = groups;
out:
  free(v);
  free(up);
}

int wsp__netmap_fill_shape(wsp_comm_t *comm, wsp_netmap_t *m) {
  char name[MPI_MAX_PROCESSOR_NAME + 1] = "";
  int len = 0, rc = WSP_OK;
  WSP__MPI_GOTO(comm, MPI_Get_processor_name(name, &len), rc, out);
  uint64_t mine = wsp__fnv(WSP__FNV_INIT, name, (size_t)len);
  uint64_t *all = malloc((size_t)m->p * sizeof *all);
  rc = wsp__agree_alloc(comm, all == NULL, "network map: host names");
  if (rc == WSP_OK)
    WSP__MPI_COLL_GOTO(comm, rc, gathered, Allgather, &mine, 1, MPI_UINT64_T, all, 1,
                       MPI_UINT64_T, comm->mpi);
gathered:
  if (rc == WSP_OK) {
    /* A node's host is its lowest rank's (ranks come in order). */
    for (int r = m->p - 1; r >= 0; r--) {
      m->node_of[r] = comm->topo.node_of[r];
      m->host[m->node_of[r]] = all[r];
    }
  }
  free(all);
out:
  return rc;
}

int wsp__netmap_fits(wsp_comm_t *comm, const wsp_netmap_t *m, const char *fn,
                     const char *what, int status, uint64_t checked_shape) {
  /* Agree on the map first: the checks below then give every rank the
   * same verdict, and nobody leaves for a collective the others skip. */
  char differ[400];
  snprintf(differ, sizeof differ, "the ranks passed different maps (%s)", what);
  wsp__agree_t ag = {.what = fn, .fp = wsp__netmap_fingerprint(m), .compare = 1,
                     .differ_status = WSP_ERR_INTERNAL, .differ = differ};
  int rc = wsp__agree(comm, &ag);
  if (rc != WSP_OK) return rc;
  /* The same map everywhere, so the same answer to this everywhere. */
  if (checked_shape != 0 && wsp__netmap_shape(m) == checked_shape) return WSP_OK;
  if (m->p != comm->size)
    return wsp__fail(comm, status, "%s: %s was measured for %d ranks; this communicator has %d",
                     fn, what, m->p, comm->size);
  if (m->nodes != comm->topo.pub.nodes)
    return wsp__fail(comm, status,
                     "%s: %s was measured on %d nodes; this communicator has %d (WSP_NODES)", fn,
                     what, m->nodes, comm->topo.pub.nodes);
  wsp_netmap_t *mine = wsp__netmap_new(comm->size, comm->topo.pub.nodes);
  if ((rc = wsp__agree_alloc(comm, mine == NULL, fn)) != WSP_OK ||
      (rc = wsp__netmap_fill_shape(comm, mine)) != WSP_OK)
    goto out;
  if (memcmp(mine->node_of, m->node_of, (size_t)m->p * sizeof *m->node_of) != 0)
    rc = wsp__fail(comm, status,
                   "%s: %s places the ranks on nodes differently from this communicator", fn,
                   what);
  else if (memcmp(mine->host, m->host, (size_t)m->nodes * sizeof *m->host) != 0)
    rc = wsp__fail(comm, status, "%s: %s was measured on other hosts than this communicator's",
                   fn, what);
out:
  wsp_netmap_free(&mine);
  return rc;
}

int wsp_netmap_info(const wsp_netmap_t *map, wsp_netmap_info_t *info) {
  if (map == NULL) return wsp__fail(NULL, WSP_ERR_ARG, "wsp_netmap_info: map is NULL");
  if (info == NULL) return wsp__fail(NULL, WSP_ERR_ARG, "wsp_netmap_info: info is NULL");
  *info = (wsp_netmap_info_t){.p = map->p, .nodes = map->nodes, .groups = map->groups,
                              .reps = map->reps, .eager_intra = map->eager_intra,
                              .eager_inter = map->eager_inter, .seconds = map->seconds};
  return WSP_OK;
}

int wsp_netmap_pair(const wsp_netmap_t *map, int a, int b, double *latency,
                    double *inv_bandwidth) {
  const char *fn = "wsp_netmap_pair";
  if (map == NULL) return wsp__fail(NULL, WSP_ERR_ARG, "%s: map is NULL", fn);
  if (latency == NULL || inv_bandwidth == NULL)
    return wsp__fail(NULL, WSP_ERR_ARG, "%s: %s is NULL", fn,
                     latency == NULL ? "latency" : "inv_bandwidth");
  if (a < 0 || a >= map->p || b < 0 || b >= map->p)
    return wsp__fail(NULL, WSP_ERR_ARG, "%s: %s = %d is out of range [0, %d)", fn,
                     a < 0 || a >= map->p ? "a" : "b", a < 0 || a >= map->p ? a : b, map->p);
  if (a == b) {
    *latency = *inv_bandwidth = 0;
    return WSP_OK;
  }
  size_t k = (size_t)map->node_of[a] * (size_t)map->nodes + (size_t)map->node_of[b];
  *latency = map->lat[k];
  *inv_bandwidth = map->inv_bw[k];
  return WSP_OK;
}

int wsp_netmap_flows(const wsp_netmap_t *map, int a, int b, double *rate_one, double *rate_k,
                     int *k, size_t *threshold) {
  const char *fn = "wsp_netmap_flows";
  if (map == NULL) return wsp__fail(NULL, WSP_ERR_ARG, "%s: map is NULL", fn);
  if (!rate_one || !rate_k || !k || !threshold)
    return wsp__fail(NULL, WSP_ERR_ARG, "%s: %s is NULL", fn,
                     !rate_one ? "rate_one"
                     : !rate_k ? "rate_k"
                     : !k      ? "k"
                               : "threshold");
  if (a < 0 || a >= map->p || b < 0 || b >= map->p)
    return wsp__fail(NULL, WSP_ERR_ARG, "%s: %s = %d is out of range [0, %d)", fn,
                     a < 0 || a >= map->p ? "a" : "b", a < 0 || a >= map->p ? a : b, map->p);
  size_t i = (size_t)map->node_of[a] * (size_t)map->nodes + (size_t)map->node_of[b];
  *rate_one = map->rate_one[i];
  *rate_k = map->rate_k[i];
  *k = map->flows[i];
  *threshold = map->flows_min[i];
  return WSP_OK;
}

int wsp_netmap_rtt(const wsp_netmap_t *map, int a, int b, double *seconds) {
  const char *fn = "wsp_netmap_rtt";
  if (map == NULL) return wsp__fail(NULL, WSP_ERR_ARG, "%s: map is NULL", fn);
  if (seconds == NULL) return wsp__fail(NULL, WSP_ERR_ARG, "%s: seconds is NULL", fn);
  if (a < 0 || a >= map->p || b < 0 || b >= map->p)
    return wsp__fail(NULL, WSP_ERR_ARG, "%s: %s = %d is out of range [0, %d)", fn,
                     a < 0 || a >= map->p ? "a" : "b", a < 0 || a >= map->p ? a : b, map->p);
  *seconds = map->rtt[(size_t)map->node_of[a] * (size_t)map->nodes + (size_t)map->node_of[b]];
  return WSP_OK;
}

int wsp_netmap_node(const wsp_netmap_t *map, int rank, int *node, int *group) {
  const char *fn = "wsp_netmap_node";
  if (map == NULL) return wsp__fail(NULL, WSP_ERR_ARG, "%s: map is NULL", fn);
  if (node == NULL || group == NULL)
    return wsp__fail(NULL, WSP_ERR_ARG, "%s: %s is NULL", fn, node == NULL ? "node" : "group");
  if (rank < 0 || rank >= map->p)
    return wsp__fail(NULL, WSP_ERR_ARG, "%s: rank = %d is out of range [0, %d)", fn, rank,
                     map->p);
  *node = map->node_of[rank];
  *group = map->group[*node];
  return WSP_OK;
}
