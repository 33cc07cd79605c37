/* SPDX-License-Identifier: BSD-3-Clause */
/* The trees a communicator builds from its network map (aware.h). */
#include "aware.h"

#include "../core/measure.h"
#include "../netmap/netmap.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void wsp__aware_free(struct wsp__aware *aw) {
  if (aw == NULL) return;
  free(aw->alpha);
  free(aw->beta);
  free(aw->work);
  free(aw->ints);
  free(aw);
}

/* The figure of a pair of nodes, or `fallback` where the map has none (a
 * pair the probe's budget left out, a node's diagonal with one rank). */
static double wsp__aware_figure(const double *v, int nodes, int a, int b, double fallback) {
  double x = v[(size_t)a * (size_t)nodes + (size_t)b];
  return isfinite(x) && x >= 0 ? x : fallback;
}

/* The largest finite figure of the map, 0 if none: what an unmeasured pair
 * is taken to cost, so that no tree leans on a pair nobody measured. */
static double wsp__aware_worst(const double *v, size_t nn) {
  double w = 0;
  for (size_t i = 0; i < nn; i++)
    if (isfinite(v[i]) && v[i] > w) w = v[i];
  return w;
}

/* Whether a figure moved: by more than WSP__AWARE_DRIFT of its old value. */
static int wsp__aware_moved(double x_old, double x_new) {
  return fabs(x_new - x_old) > WSP__AWARE_DRIFT * x_old || (x_old == 0 && x_new != 0);
}

/* Fills aw's matrices and eager limit from m's figures. With `keep`, aw
 * holds the figures of a map attached before, and only the figures that
 * moved (wsp__aware_moved; latency and time per byte each on its own) are
 * replaced; returns how many rank pairs had a figure that moved, or -1
 * when the eager limit did, and (with keep) the largest relative change of a
 * latency and of a time per byte in most[0] and most[1]. The result
 * depends only on the old figures and the new map, both the same on every
 * rank. */
static long wsp__aware_figures(struct wsp__aware *aw, const wsp_netmap_t *m, int keep,
                               double *most) {
  int p = aw->p;
  size_t nn = (size_t)m->nodes * (size_t)m->nodes, up = (size_t)p;
  double worst_lat = wsp__aware_worst(m->lat, nn), worst_inv = wsp__aware_worst(m->inv_bw, nn);
  long moved = 0;
  for (int i = 0; i < p; i++)
    for (int j = 0; j < p; j++) {
      size_t k = (size_t)i * up + (size_t)j;
      int a = m->node_of[i], b = m->node_of[j];
      double al = i == j ? 0 : wsp__aware_figure(m->lat, m->nodes, a, b, worst_lat);
      double be = i == j ? 0 : wsp__aware_figure(m->inv_bw, m->nodes, a, b, worst_inv);
      int ma = !keep || wsp__aware_moved(aw->alpha[k], al);
      int mb = !keep || wsp__aware_moved(aw->beta[k], be);
      if (keep && aw->alpha[k] > 0) most[0] = fmax(most[0], fabs(al / aw->alpha[k] - 1));
      if (keep && aw->beta[k] > 0) most[1] = fmax(most[1], fabs(be / aw->beta[k] - 1));
      if (ma) aw->alpha[k] = al;
      if (mb) aw->beta[k] = be;
      moved += keep && (ma || mb);
    }
  size_t eager = m->eager_inter ? m->eager_inter : WSP__AWARE_EAGER_DEFAULT;
  if (keep && eager != aw->eager) moved = -1;
  aw->eager = eager;
  return moved;
}

static struct wsp__aware *wsp__aware_new(const wsp_netmap_t *m) {
  struct wsp__aware *aw = calloc(1, sizeof *aw);
  if (aw == NULL) return NULL;
  int p = m->p;
  size_t pp = (size_t)p * (size_t)p, up = (size_t)p;
  /* Per entry: parent p, child_start p + 1, children p, size, order, pos
   * p each; the scratch tree the first three. */
  size_t per = 6 * up + 1;
  aw->p = p;
  aw->alpha = malloc(pp * sizeof *aw->alpha);
  aw->beta = malloc(pp * sizeof *aw->beta);
  aw->work = malloc(wsp__aware_work_size(p));
  aw->ints = malloc(((size_t)WSP__AWARE_CACHE * per + 3 * up + 1) * sizeof *aw->ints);
  if (!aw->alpha || !aw->beta || !aw->work || !aw->ints) {
    wsp__aware_free(aw);
    return NULL;
  }
  int *q = aw->ints;
  for (int e = 0; e < WSP__AWARE_CACHE; e++) {
    wsp__aware_entry_t *en = &aw->entry[e];
    en->tree.parent = q, q += p;
    en->tree.child_start = q, q += p + 1;
    en->tree.children = q, q += p;
    en->size = q, q += p;
    en->order = q, q += p;
    en->pos = q, q += p;
  }
  aw->scratch.parent = q, q += p;
  aw->scratch.child_start = q, q += p + 1;
  aw->scratch.children = q;

  wsp__aware_figures(aw, m, 0, NULL);
  aw->shape = wsp__netmap_shape(m);
  return aw;
}

/* The same map attached again, or a refreshed one: the figures that moved
 * replace theirs, and the trees are built again only when one did
 * (aware.h). Local: every rank passed the same map. */
static void wsp__aware_update(wsp_comm_t *comm, const wsp_netmap_t *map, const char *fn) {
  double most[2] = {0, 0};
  long moved = wsp__aware_figures(comm->aware, map, 1, most);
  if (moved != 0)
    for (int e = 0; e < WSP__AWARE_CACHE; e++) comm->aware->entry[e].valid = 0;
  if (moved < 0)
    wsp__log(comm, WSP_LOG_DEBUG, "%s: the eager limit changed; the trees will be built again", fn);
  else
    wsp__log(comm, WSP_LOG_DEBUG,
             "%s: %ld of %d x %d rank pairs' figures moved by more than %g%% (at most: "
             "latency %.0f%%, time per byte %.0f%%)%s",
             fn, moved, map->p, map->p, 100 * WSP__AWARE_DRIFT, 100 * most[0], 100 * most[1],
             moved ? "; the trees will be built again" : "; the trees are kept");
}

/* When the sites are the map's groups, the model's figures between sites
 * are the map's: the largest latency and inverse bandwidth between nodes
 * of different sites (one connection each; the link as a whole stays
 * unknown, as the probe measures pairs one at a time). Where the map's
 * flows measured the TCP round trip, the latency is at least half of it. */
static void wsp__aware_wan_model(wsp_comm_t *comm, const wsp_netmap_t *map) {
  const wsp__sites_t *st = &comm->sites;
  if (st->count < 2 || (st->mode != WSP__SITES_AUTO && st->mode != WSP__SITES_MAP)) return;
  double lat = 0, inv = 0;
  for (int a = 0; a < map->nodes; a++)
    for (int b = 0; b < map->nodes; b++) {
      if (map->group[a] == map->group[b]) continue;
      size_t k = (size_t)a * (size_t)map->nodes + (size_t)b;
      if (isfinite(map->lat[k]) && map->lat[k] > lat) lat = map->lat[k];
      if (map->rtt[k] / 2 > lat) lat = map->rtt[k] / 2;
      if (isfinite(map->inv_bw[k]) && map->inv_bw[k] > inv) inv = map->inv_bw[k];
    }
  wsp_model_t *m = &comm->model;
  m->alpha_wan = lat > 0 ? lat : m->alpha;
  m->beta_wan = inv > 0 ? inv : m->beta;
  m->beta_wan_link = 0;
}

/* What the map's flows say, for the transport's verdict (wsp_comm_t.
 * map_flows): pairs measured, pairs where the flows paid, and over those
 * the most flows, the largest threshold, the median pair's rate of all
 * flows, the longest round trip (twice the map's one-way latency). The
 * median, as the verdict takes it without a map (src/p2p/xport.c): the
 * map's flows are one short probe per pair too, and the model's one rate
 * for every pair of nodes stands for the typical pair; where pairs truly
 * differ, the map-aware algorithms price each. Over at most
 * WSP__AWARE_MEDIAN_MAX pairs, every k-th of the paying pairs in the
 * map's order when there are more: no allocation, so the same figure on
 * every rank whatever each one's memory. */
enum { WSP__AWARE_MEDIAN_MAX = 2048 };
static void wsp__aware_flows(wsp_comm_t *comm, const wsp_netmap_t *map) {
  memset(&comm->map_flows, 0, sizeof comm->map_flows);
  const int n = map->nodes;
  for (int a = 0; a < n; a++)
    for (int b = a + 1; b < n; b++) {
      const size_t ab = (size_t)a * (size_t)n + (size_t)b;
      if (map->flows[ab] == 0) continue;
      comm->map_flows.pairs++;
      if (map->flows_min[ab] == 0) continue;
      comm->map_flows.pay++;
      comm->map_flows.lanes = fmax(comm->map_flows.lanes, map->flows[ab]);
      comm->map_flows.threshold = fmax(comm->map_flows.threshold, (double)map->flows_min[ab]);
      comm->map_flows.rate_one = fmax(comm->map_flows.rate_one, map->rate_one[ab]);
      /* The kernel's round trip where the map has it, else twice MPI's
       * one-way latency. */
      if (map->rtt[ab] > 0)
        comm->map_flows.rtt = fmax(comm->map_flows.rtt, map->rtt[ab]);
      else if (isfinite(map->lat[ab]))
        comm->map_flows.rtt = fmax(comm->map_flows.rtt, 2 * map->lat[ab]);
    }
  double inv[WSP__AWARE_MEDIAN_MAX];
  const size_t stride = (size_t)comm->map_flows.pay / WSP__AWARE_MEDIAN_MAX + 1;
  size_t seen = 0;
  int ninv = 0;
  for (int a = 0; a < n; a++)
    for (int b = a + 1; b < n; b++) {
      const size_t ab = (size_t)a * (size_t)n + (size_t)b;
      if (map->flows[ab] == 0 || map->flows_min[ab] == 0) continue;
      if (seen++ % stride == 0 && ninv < WSP__AWARE_MEDIAN_MAX && map->rate_k[ab] > 0)
        inv[ninv++] = 1 / map->rate_k[ab];
    }
  if (ninv > 0) comm->map_flows.rate_k = 1 / wsp__measure_median(inv, ninv, inv);
}

int wsp_comm_set_netmap(wsp_comm_t *comm, const wsp_netmap_t *map) {
  static const char fn[] = "wsp_comm_set_netmap";
  if (comm == NULL) return wsp__fail(NULL, WSP_ERR_ARG, "%s: comm is NULL", fn);
  /* Detaching is local: no traffic, nothing to agree on. */
  if (map == NULL) {
    wsp__aware_free(comm->aware);
    comm->aware = NULL;
    memset(&comm->map_flows, 0, sizeof comm->map_flows);
    comm->model.eager = comm->eager_own;
    comm->model.eager_node = 0;
    comm->model.eager_from = comm->eager_own_from;
    wsp__topo_set_models(comm);
    wsp__sites_from_map(comm, NULL, NULL);
    return WSP_OK;
  }
  if (wsp__usable(comm, fn) != WSP_OK) return WSP_ERR_TIMEOUT;
  /* A map of the shape already attached (a refreshed one) fits. */
  int rc = wsp__netmap_fits(comm, map, fn, "map", WSP_ERR_ARG,
                            comm->aware ? comm->aware->shape : 0);
  if (rc != WSP_OK) return rc;
  if (comm->aware && comm->aware->shape == wsp__netmap_shape(map)) {
    wsp__aware_update(comm, map, fn);
  } else {
    /* The same map everywhere: the same answer to this everywhere. */
    if (map->p > WSP__AWARE_MAX_P)
      return wsp__fail(comm, WSP_ERR_ARG,
                       "%s: map has %d ranks; trees are built for at most %d", fn, map->p,
                       WSP__AWARE_MAX_P);
    struct wsp__aware *aw = wsp__aware_new(map);
    if ((rc = wsp__agree_alloc(comm, aw == NULL, fn)) != WSP_OK) {
      wsp__aware_free(aw);
      return rc;
    }
    wsp__aware_free(comm->aware);
    comm->aware = aw;
  }
  /* The map's limits replace the communicator's own, unless it was
   * probed without them (wsp_netmap_probe_config_t.eager_limits = 0). */
  if (map->eager_inter || map->eager_intra) {
    comm->model.eager = map->eager_inter;
    comm->model.eager_node = map->eager_intra;
    comm->model.eager_from = WSP_EAGER_FROM_MAP;
  }
  wsp__aware_flows(comm, map);
  wsp__topo_set_models(comm);
  wsp__sites_from_map(comm, map->node_of, map->group);
  wsp__aware_wan_model(comm, map);
  return WSP_OK;
}

/* Depth-first order, subtree sizes and positions of e's tree. */
static void wsp__aware_walk(int p, wsp__aware_entry_t *e) {
  const wsp__aware_tree_t *t = &e->tree;
  /* Preorder with an explicit stack (kept in `pos`, filled afterwards):
   * children are pushed in reverse so that they come out in order. */
  int *stack = e->pos, top = 0, n = 0;
  stack[top++] = e->root;
  while (top > 0) {
    int v = stack[--top];
    e->order[n++] = v;
    for (int k = t->child_start[v + 1] - 1; k >= t->child_start[v]; k--)
      stack[top++] = t->children[k];
  }
  for (int k = 0; k < p; k++) e->pos[e->order[k]] = k;
  /* Sizes bottom up: in preorder every child comes after its parent. */
  for (int v = 0; v < p; v++) e->size[v] = 1;
  for (int k = p - 1; k > 0; k--) {
    int v = e->order[k];
    e->size[t->parent[v]] += e->size[v];
  }
}

/* The problem a call of `bytes` bytes per edge is given: rounded up to a
 * power of two (and, for eager edges, down to the eager limit), so that
 * sizes close to each other share a tree, and the tree depends only on the
 * cache key. Every rank then builds the same tree for the same call, what
 * else its cache has seen. */
static void wsp__aware_problem(const struct wsp__aware *aw, wsp_coll_t coll, int root,
                               size_t bytes, wsp__aware_problem_t *pb) {
  size_t n = 1;
  while (n < bytes && n <= SIZE_MAX / 2) n *= 2;
  wsp__aware_proto_t proto = bytes <= aw->eager ? WSP__AWARE_EAGER : WSP__AWARE_RNDV;
  if (proto == WSP__AWARE_EAGER && n > aw->eager) n = aw->eager;
  *pb = (wsp__aware_problem_t){
      .p = aw->p,
      .root = root,
      .alpha = aw->alpha,
      .beta = aw->beta,
      .n = n,
      .proto = proto,
      .dir = coll == WSP_COLL_REDUCE || coll == WSP_COLL_GATHER ? WSP__AWARE_UP
                                                                 : WSP__AWARE_DOWN,
      .load = coll == WSP_COLL_GATHER || coll == WSP_COLL_SCATTER ? WSP__AWARE_BLOCKS
                                                                  : WSP__AWARE_WHOLE,
      .eager = aw->eager};
}

/* For bcast and reduce: the pipelined path, if one is predicted to beat
 * the tree (aware.h, "Segments"). */
static void wsp__aware_try_path(struct wsp__aware *aw, const wsp__aware_problem_t *pb,
                                wsp__aware_entry_t *en) {
  if (pb->load != WSP__AWARE_WHOLE) return;
  wsp__aware_problem_t sp = *pb;
  int p = aw->p;
  for (size_t g = WSP__AWARE_SEG_MIN; g <= WSP__AWARE_SEG_MAX && g <= pb->n / 2; g *= 2) {
    double t = 0, chain = 0;
    sp.proto = g <= aw->eager ? WSP__AWARE_EAGER : WSP__AWARE_RNDV;
    wsp__aware_path(&sp, g, aw->work, &aw->scratch, &t, &chain);
    if (t >= en->time) continue;
    /* The fastest so far: the entry takes it (a path has p - 1 edges). */
    memcpy(en->tree.parent, aw->scratch.parent, (size_t)p * sizeof(int));
    memcpy(en->tree.child_start, aw->scratch.child_start, (size_t)(p + 1) * sizeof(int));
    memcpy(en->tree.children, aw->scratch.children, (size_t)(p - 1) * sizeof(int));
    en->time = t, en->ref = chain, en->seg = g;
  }
}

const wsp__aware_entry_t *wsp__aware_get(struct wsp__aware *aw, wsp_coll_t coll, int root,
                                         size_t bytes) {
  wsp__aware_problem_t pb;
  wsp__aware_problem(aw, coll, root, bytes, &pb);
  for (int e = 0; e < WSP__AWARE_CACHE; e++) {
    const wsp__aware_entry_t *en = &aw->entry[e];
    if (en->valid && en->coll == coll && en->root == root && en->bytes == pb.n &&
        en->proto == (int)pb.proto)
      return en;
  }
  wsp__aware_entry_t *en = &aw->entry[aw->next];
  aw->next = (aw->next + 1) % WSP__AWARE_CACHE;
  /* The map's figures are finite and >= 0 and the arguments were checked
   * by the entry points, so neither call can fail. */
  en->valid = 0;
  en->time = en->ref = 0;
  en->seg = 0;
  wsp__aware_build(&pb, aw->work, &en->tree, &en->time, NULL);
  wsp__aware_binomial(&pb, &aw->scratch);
  wsp__aware_time(&pb, &aw->scratch, aw->work, &en->ref);
  wsp__aware_try_path(aw, &pb, en);
  en->coll = coll, en->root = root, en->bytes = pb.n, en->proto = (int)pb.proto;
  wsp__aware_walk(aw->p, en);
  en->valid = 1;
  return en;
}

double wsp__aware_cost(const wsp__coll_shape_t *s, wsp_coll_t coll, double binomial_cost,
                       double chain_cost) {
  const wsp__aware_entry_t *e = wsp__aware_get(s->aware, coll, s->root, s->bytes);
  double ratio = e->ref > 0 ? e->time / e->ref : 1;
  return (e->seg ? chain_cost : binomial_cost) * (ratio > 1 - WSP__AWARE_MARGIN ? 1 : ratio);
}
