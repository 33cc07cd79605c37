/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Measuring the network map (wsp_netmap_probe).
 *
 * Who measures. Every node's lowest rank (its leader) stands for the node
 * towards the others; inside a node of two ranks or more, its two lowest
 * ranks measure the node's own figures. The leaders meet in the rounds of a
 * round-robin tournament (src/patterns/tournament.h): in each round every
 * leader is in at most one pair, so no node takes part in two probes at once
 * and about nodes - 1 rounds cover every pair. A leader goes on to its next
 * round as soon as its pair is done; its next partner may still be busy, and
 * the warm-up of the next measurement absorbs that wait. After the rounds,
 * every node's two lowest ranks measure the node's own pair, all nodes at
 * once (disjoint pairs again).
 *
 * What is measured. Each pass over the pairs takes, per pair, one round trip
 * of 8 bytes and one stream of stream_bytes (8 messages back to back,
 * answered when all have arrived), each after a warm-up (src/core/measure.h).
 * Over the passes: the one-way latency is half the smallest round trip (the
 * minimum: delays only ever add), the inverse bandwidth is the median stream
 * less that round trip over the bytes (the median: a stream that shared its
 * link with another pair's is slow, one that was lucky is not much fast). A
 * sample more than WSP__OUTLIER times its pair's median is counted as an
 * outlier. The number of passes is cfg.reps, fewer when another pass would
 * break the budget in time or bytes, which the ranks decide together after
 * each pass from their largest figures.
 *
 * The eager limit. An eager send completes at the sender without the
 * receiver having posted its receive; a rendezvous send cannot, as it waits
 * for the receiver's answer. So the lower rank of a pair sends n bytes, and
 * the higher rank posts the receive only after the sender has watched its
 * send for a while and sent the verdict (completed or not) on another tag.
 * Doubling n from 1 KiB, then halving the interval between the largest
 * eager and the smallest rendezvous size, finds the largest eager size to
 * the byte, up to WSP__EAGER_MAX. This reads the MPI's behaviour, not a
 * setting: the same probe works for Open MPI's BTLs, UCX and SimGrid. One
 * pair between the first two nodes and one inside the first node of two
 * ranks or more are probed; others are assumed alike (a pair class).
 *
 * The flows (cfg.flows). MPI's stream is one TCP flow per pair, or what
 * the MPI makes of it; where one flow gets only part of the link, several
 * get more, and the collectives' transport wants to know where. So the
 * leaders of each pair of a tournament round exchange one message of
 * cfg.p2p_min bytes each way through the striped engine of a lanes
 * communicator made for the purpose, which runs its probe between them
 * (one lane, then all it opens; docs/p2p.md), and keep its figures. A
 * reduction between rounds keeps them apart, so that no NIC is in two
 * probes at once. A failed exchange leaves its pair unmeasured; only a
 * timeout fails the probe.
 */
#include "netmap.h"

#include "../core/measure.h"
#include "../core/tags.h"
#include "../p2p/xport.h"
#include "../patterns/tournament.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define WSP__OUTLIER 2.0
/* The largest size the eager search tries, and its first. */
#define WSP__EAGER_MAX ((size_t)8 << 20)
#define WSP__EAGER_FIRST ((size_t)1024)
/* How long a send is watched before it is judged rendezvous: this, plus
 * four times the pair's predicted time for the message. */
#define WSP__EAGER_WATCH_S 0.01
enum { WSP__STREAM_WINDOW = 8, WSP__SMALL = 8, WSP__REPS_MAX = 1000 };
#define WSP__STREAM_MIN ((size_t)64)
/* The stream of a refresh: short, as a refresh runs beside the job. Its
 * latency is the smallest of a few round trips, the probe's estimator (the
 * minimum over its passes), so that a refreshed figure and a probed one
 * can be compared when the map is attached again (src/coll/aware.h; what
 * the testbeds showed: docs/results/netmap.md). */
#define WSP__REFRESH_STREAM ((size_t)256 << 10)
enum { WSP__REFRESH_RTTS = 4 };
#define WSP__STREAM_MAX ((size_t)256 << 20)

int wsp_netmap_probe_config_init(wsp_netmap_probe_config_t *cfg) {
  if (cfg == NULL) return wsp__fail(NULL, WSP_ERR_ARG, "wsp_netmap_probe_config_init: cfg is NULL");
  *cfg =
      (wsp_netmap_probe_config_t){.reps = 5, .stream_bytes = (size_t)512 << 10, .eager_limits = 1};
  return WSP_OK;
}

static int wsp__probe_check(const wsp_netmap_probe_config_t *c) {
  const char *fn = "wsp_netmap_probe";
  if (c->reps < 1 || c->reps > WSP__REPS_MAX)
    return wsp__fail(NULL, WSP_ERR_ARG, "%s: cfg->reps = %d is not in [1, %d]", fn, c->reps,
                     WSP__REPS_MAX);
  if (c->stream_bytes < WSP__STREAM_MIN || c->stream_bytes > WSP__STREAM_MAX)
    return wsp__fail(NULL, WSP_ERR_ARG, "%s: cfg->stream_bytes = %zu is not in [%zu, %zu]",
                     fn, c->stream_bytes, WSP__STREAM_MIN, WSP__STREAM_MAX);
  if (!(c->budget_seconds >= 0) || !isfinite(c->budget_seconds))
    return wsp__fail(NULL, WSP_ERR_ARG, "%s: cfg->budget_seconds = %g is not a time >= 0", fn,
                     c->budget_seconds);
  if (c->eager_limits != 0 && c->eager_limits != 1)
    return wsp__fail(NULL, WSP_ERR_ARG, "%s: cfg->eager_limits = %d is neither 0 nor 1", fn,
                     c->eager_limits);
  if (c->flows != 0 && c->flows != 1)
    return wsp__fail(NULL, WSP_ERR_ARG, "%s: cfg->flows = %d is neither 0 nor 1", fn, c->flows);
  return WSP_OK;
}

static uint64_t wsp__probe_cfg_fingerprint(const wsp_netmap_probe_config_t *c) {
  uint64_t v[6] = {(uint64_t)c->reps,         c->stream_bytes,    (uint64_t)c->budget_bytes,
                   (uint64_t)c->eager_limits, (uint64_t)c->flows, 0};
  memcpy(&v[5], &c->budget_seconds, sizeof v[5]);
  return wsp__fnv(WSP__FNV_INIT, v, sizeof v);
}

/* What one rank is in the probe. */
typedef struct wsp__probe {
  wsp_comm_t *comm;
  const wsp_netmap_probe_config_t *cfg;
  wsp_netmap_t *m;
  int *leader, *second; /* per node: lowest and second lowest rank (-1: none) */
  int node;             /* this rank's */
  char *buf;            /* 1 + window stream messages */
  int msg;              /* bytes of one stream message */
  /* Samples of the pairs this rank records (it is their lower rank):
   * rtt[(k * reps) + pass] for its k-th pair, likewise stream. */
  int npairs, *pair_peer_node;
  double *rtt, *stream;
  uint64_t bytes; /* sent by this rank */
  char *ebuf;     /* WSP__EAGER_MAX bytes on the ranks of an eager pair */
  int eager_inter[2], eager_intra[2]; /* the pairs of the eager search; -1: none */
} wsp__probe_t;

/* The nodes' leaders and seconds, and the eager search's pairs. */
static void wsp__probe_roles(wsp__probe_t *pr) {
  const wsp_netmap_t *m = pr->m;
  for (int n = 0; n < m->nodes; n++) pr->leader[n] = pr->second[n] = -1;
  for (int r = 0; r < m->p; r++) {
    int n = m->node_of[r];
    if (pr->leader[n] < 0) pr->leader[n] = r;
    else if (pr->second[n] < 0) pr->second[n] = r;
  }
  pr->eager_inter[0] = pr->eager_inter[1] = pr->eager_intra[0] = pr->eager_intra[1] = -1;
  if (m->nodes >= 2) pr->eager_inter[0] = pr->leader[0], pr->eager_inter[1] = pr->leader[1];
  for (int n = 0; n < m->nodes; n++)
    if (pr->second[n] >= 0) {
      pr->eager_intra[0] = pr->leader[n], pr->eager_intra[1] = pr->second[n];
      break;
    }
}

/* One pass's measurements with `peer`; the lower rank records them as its
 * k-th pair's samples of pass `pass`. */
static int wsp__probe_pair(wsp__probe_t *pr, int peer, int k, int pass) {
  double rtt, stream;
  int rc = wsp__measure_pingpong(pr->comm, peer, WSP__TAG_PROBE, pr->buf, WSP__SMALL, 1, &rtt);
  if (rc == WSP_OK)
    rc = wsp__measure_stream(pr->comm, peer, WSP__TAG_PROBE, pr->buf, pr->msg,
                             WSP__STREAM_WINDOW, 1, 0, &stream);
  if (rc != WSP_OK) return rc;
  int me = pr->comm->rank, reps = pr->cfg->reps;
  /* Two round trips and, on the lower rank, two streams (warm-up included). */
  pr->bytes += 2 * WSP__SMALL + (me < peer ? 2 * (uint64_t)pr->msg * WSP__STREAM_WINDOW : 16);
  if (me < peer) {
    pr->rtt[k * reps + pass] = rtt;
    pr->stream[k * reps + pass] = stream;
  }
  return WSP_OK;
}

/* Estimates of the pairs this rank recorded, into the node matrices
 * (everything else +INF or 0, for the MIN and MAX reductions). */
static void wsp__probe_estimate(wsp__probe_t *pr, int passes, double *lat, double *inv,
                                int *samples, int *outliers) {
  wsp_netmap_t *m = pr->m;
  int reps = pr->cfg->reps;
  double tmp[WSP__REPS_MAX];
  for (int k = 0; k < pr->npairs; k++) {
    int b = pr->pair_peer_node[k];
    if (b < 0) continue;
    const double *r = pr->rtt + (size_t)k * reps, *s = pr->stream + (size_t)k * reps;
    double rmin = wsp__measure_min(r, passes), rmed = wsp__measure_median(r, passes, tmp);
    double smed = wsp__measure_median(s, passes, tmp);
    int out = 0;
    for (int i = 0; i < passes; i++)
      out += (r[i] > WSP__OUTLIER * rmed) + (s[i] > WSP__OUTLIER * smed);
    double bytes = (double)pr->msg * WSP__STREAM_WINDOW;
    size_t ab = (size_t)pr->node * (size_t)m->nodes + (size_t)b;
    size_t ba = (size_t)b * (size_t)m->nodes + (size_t)pr->node;
    lat[ab] = lat[ba] = rmin / 2;
    inv[ab] = inv[ba] = fmax((smed - rmin) / bytes, 1e-13);
    samples[ab] = samples[ba] = passes;
    outliers[ab] = outliers[ba] = out;
  }
}

/* ---- the eager search ---- */

/* The largest eager size between this rank and peer, to the byte (both
 * call it; src/core/measure.c). A send is watched for WSP__EAGER_WATCH_S
 * plus four times the pair's predicted time for it. */
static int wsp__eager_search(wsp__probe_t *pr, int peer, size_t *limit) {
  const wsp_netmap_t *m = pr->m;
  size_t k = (size_t)m->node_of[pr->comm->rank] * (size_t)m->nodes + (size_t)m->node_of[peer];
  double lat = isfinite(m->lat[k]) ? m->lat[k] : 0, inv = isfinite(m->inv_bw[k]) ? m->inv_bw[k] : 0;
  return wsp__measure_eager(pr->comm, peer, WSP__TAG_PROBE_EAGER, WSP__TAG_PROBE_VERDICT, pr->ebuf,
                            WSP__EAGER_FIRST, WSP__EAGER_MAX, 0, WSP__EAGER_WATCH_S + 4 * lat,
                            4 * inv, limit, &pr->bytes);
}

static int wsp__probe_eager(wsp__probe_t *pr) {
  int me = pr->comm->rank, rc = WSP_OK;
  uint64_t found[2] = {0, 0};
  const int *pairs[2] = {pr->eager_inter, pr->eager_intra};
  for (int c = 0; c < 2 && rc == WSP_OK; c++) {
    const int *pair = pairs[c];
    if (pair[0] < 0 || (me != pair[0] && me != pair[1])) continue;
    size_t lim = 0;
    rc = wsp__eager_search(pr, me == pair[0] ? pair[1] : pair[0], &lim);
    found[c] = lim;
  }
  if (rc != WSP_OK || (rc = wsp__allreduce_wait(pr->comm, found, 2, MPI_UINT64_T, MPI_MAX)))
    return rc;
  pr->m->eager_inter = (size_t)found[0];
  pr->m->eager_intra = (size_t)found[1];
  return WSP_OK;
}

/* ---- the passes ---- */

static int wsp__probe_passes(wsp__probe_t *pr, double t0, int *passes) {
  wsp_comm_t *c = pr->comm;
  const wsp_netmap_t *m = pr->m;
  int me = c->rank, n = m->nodes, rounds = wsp__tournament_rounds(n), rc = WSP_OK;
  int leader = pr->leader[pr->node] == me;
  *passes = 0;
  for (int pass = 0; pass < pr->cfg->reps; pass++) {
    int k = 0;
    for (int r = 0; r < rounds && leader; r++) {
      int b = wsp__tournament_partner(n, r, pr->node);
      if (b >= 0 && (rc = wsp__probe_pair(pr, pr->leader[b], k, pass))) return rc;
      if (b >= 0 && pr->node < b) k++;
    }
    int sec = pr->second[pr->node];
    if (sec >= 0 && (me == sec || leader) &&
        (rc = wsp__probe_pair(pr, leader ? sec : pr->leader[pr->node], pr->npairs - 1, pass)))
      return rc;
    (*passes)++;
    /* Another pass only if it fits the budget, on every rank's figures. */
    double most[2] = {wsp__now() - t0, (double)pr->bytes};
    if ((rc = wsp__allreduce_wait(c, most, 2, MPI_DOUBLE, MPI_MAX))) return rc;
    double per_s = most[0] / *passes, per_b = most[1] / *passes;
    if (pr->cfg->budget_seconds > 0 && most[0] + per_s > pr->cfg->budget_seconds) break;
    if (pr->cfg->budget_bytes > 0 && most[1] + per_b > (double)pr->cfg->budget_bytes) break;
  }
  return WSP_OK;
}

/* The pairs this rank records: the nodes after its own that it meets (as
 * a leader), then its node's own pair (as a leader of a node of two ranks
 * or more), in the order the passes meet them. */
static int wsp__probe_plan(wsp__probe_t *pr) {
  const wsp_netmap_t *m = pr->m;
  int me = pr->comm->rank, n = m->nodes, rounds = wsp__tournament_rounds(n);
  pr->npairs = 0;
  if (pr->leader[pr->node] != me) return 0;
  int cap = rounds + 1;
  pr->pair_peer_node = malloc((size_t)cap * sizeof *pr->pair_peer_node);
  if (pr->pair_peer_node == NULL) return -1;
  for (int r = 0; r < rounds; r++) {
    int b = wsp__tournament_partner(n, r, pr->node);
    if (b > pr->node) pr->pair_peer_node[pr->npairs++] = b;
  }
  if (pr->second[pr->node] >= 0) pr->pair_peer_node[pr->npairs++] = pr->node;
  return 0;
}

/* Local preparation; 0, or non-zero when out of memory. */
static int wsp__probe_prepare(wsp__probe_t *pr) {
  const wsp_netmap_t *m = pr->m;
  int me = pr->comm->rank, reps = pr->cfg->reps;
  pr->leader = malloc((size_t)m->nodes * sizeof *pr->leader);
  pr->second = malloc((size_t)m->nodes * sizeof *pr->second);
  if (!pr->leader || !pr->second) return -1;
  wsp__probe_roles(pr);
  pr->node = m->node_of[me];
  if (wsp__probe_plan(pr)) return -1;
  pr->msg = (int)(pr->cfg->stream_bytes / WSP__STREAM_WINDOW);
  if (pr->msg < WSP__SMALL) pr->msg = WSP__SMALL;
  pr->buf = calloc(1 + WSP__STREAM_WINDOW, (size_t)pr->msg);
  size_t ns = (size_t)(pr->npairs ? pr->npairs : 1) * (size_t)reps;
  pr->rtt = malloc(ns * sizeof *pr->rtt);
  pr->stream = malloc(ns * sizeof *pr->stream);
  if (!pr->buf || !pr->rtt || !pr->stream) return -1;
  int in_eager = me == pr->eager_inter[0] || me == pr->eager_inter[1] ||
                 me == pr->eager_intra[0] || me == pr->eager_intra[1];
  if (pr->cfg->eager_limits && in_eager && (pr->ebuf = calloc(1, WSP__EAGER_MAX)) == NULL)
    return -1;
  return 0;
}

static void wsp__probe_release(wsp__probe_t *pr) {
  free(pr->leader);
  free(pr->second);
  free(pr->pair_peer_node);
  free(pr->buf);
  free(pr->rtt);
  free(pr->stream);
  free(pr->ebuf);
}

/* Every rank's estimates into every rank's map. */
static int wsp__probe_gather(wsp__probe_t *pr, int passes) {
  wsp_comm_t *c = pr->comm;
  wsp_netmap_t *m = pr->m;
  size_t nn = (size_t)m->nodes * (size_t)m->nodes;
  double *d = malloc(2 * nn * sizeof *d);
  int *ints = malloc(2 * nn * sizeof *ints), rc = WSP_OK;
  rc = wsp__agree_alloc(c, d == NULL || ints == NULL, "wsp_netmap_probe");
  if (rc != WSP_OK) goto out;
  for (size_t i = 0; i < 2 * nn; i++) d[i] = INFINITY, ints[i] = 0;
  wsp__probe_estimate(pr, passes, d, d + nn, ints, ints + nn);
  if ((rc = wsp__allreduce_wait(c, d, (int)(2 * nn), MPI_DOUBLE, MPI_MIN)) ||
      (rc = wsp__allreduce_wait(c, ints, (int)(2 * nn), MPI_INT, MPI_MAX)))
    goto out;
  for (size_t i = 0; i < nn; i++) {
    m->lat[i] = isfinite(d[i]) ? d[i] : NAN;
    m->inv_bw[i] = isfinite(d[nn + i]) ? d[nn + i] : NAN;
    m->samples[i] = ints[i];
    m->outliers[i] = ints[nn + i];
  }
out:
  free(d);
  free(ints);
  return rc;
}

/* The flows of every pair of nodes (the top of this file says how). */
static int wsp__probe_flows(wsp__probe_t *pr) {
  static const char fn[] = "wsp_netmap_probe";
  wsp_comm_t *c = pr->comm;
  wsp_netmap_t *m = pr->m;
  const int n = m->nodes, rounds = wsp__tournament_rounds(n), me = c->rank;
  const size_t nn = (size_t)n * (size_t)n;
#ifdef WSP_SIMGRID
  (void)me, (void)nn, (void)rounds, (void)fn;
  return WSP_OK; /* no sockets in a simulation */
#else
  if (rounds == 0) return WSP_OK;
  wsp_comm_t *w = NULL;
  int rc = wsp__lanes_comm(c, 0, 0, "wsp_netmap_probe: the flows' lanes", &w);
  if (rc != WSP_OK) {
    if (rc == WSP_ERR_TIMEOUT) return rc;
    wsp__log(c, WSP_LOG_WARN, "%s: no lanes for the flows' probe (%s); flows not measured", fn,
             wsp_last_error());
    return WSP_OK;
  }
  const size_t bytes = wsp__p2p_min(&w->cfg);
  double *d = malloc(4 * nn * sizeof *d);
  int *k = malloc(nn * sizeof *k);
  unsigned char *buf = calloc(2, bytes);
  if ((rc = wsp__agree_alloc(c, !d || !k || !buf, fn)) != WSP_OK) goto out;
  for (size_t i = 0; i < 4 * nn; i++) d[i] = INFINITY;
  for (size_t i = 0; i < nn; i++) k[i] = 0;
  const int leader = pr->leader[pr->node] == me;
  for (int r = 0; r < rounds && rc == WSP_OK; r++) {
    int b = leader ? wsp__tournament_partner(n, r, pr->node) : -1;
    if (b >= 0) {
      const int peer = pr->leader[b];
      wsp_striped_request_t *req[2] = {NULL, NULL};
      int prc = wsp_striped_isend(w, buf, bytes, peer, 0, &req[0]);
      if (prc == WSP_OK) prc = wsp_striped_irecv(w, buf + bytes, bytes, peer, 0, &req[1]);
      int wrc = wsp_striped_waitall(2, req);
      if (prc == WSP_OK) prc = wrc;
      if (prc == WSP_ERR_TIMEOUT) rc = prc;
      wsp_striped_info_t info;
      if (prc == WSP_OK && pr->node < b && wsp_striped_info(w, peer, &info) == WSP_OK &&
          info.rate_one > 0) {
        const size_t ab = (size_t)pr->node * (size_t)n + (size_t)b;
        const int pays = wsp__lanes_pay(&info);
        d[ab] = -info.rate_one; /* maxima through MPI_MIN */
        d[nn + ab] = info.rate_lanes > 0 ? -info.rate_lanes : -info.rate_one;
        d[2 * nn + ab] = pays ? -(double)info.threshold : 0;
        k[ab] = pays ? info.lanes : 1;
        /* The round trip from this rank's own kernel (it is the lower of
         * the pair: the probe's streamer). */
        if (info.rtt > 0 && info.rtt <= 60) d[3 * nn + ab] = info.rtt;
      }
    }
    /* The rounds apart; a timeout on one rank ends every rank's probe. */
    int failed = rc != WSP_OK;
    int arc = wsp__allreduce_wait(c, &failed, 1, MPI_INT, MPI_MAX);
    if (rc == WSP_OK) rc = arc;
    if (rc == WSP_OK && failed)
      rc = wsp__fail(c, WSP_ERR_TIMEOUT, "%s: a pair's flows timed out", fn);
  }
  if (rc == WSP_OK &&
      (rc = wsp__allreduce_wait(c, d, (int)(4 * nn), MPI_DOUBLE, MPI_MIN)) == WSP_OK &&
      (rc = wsp__allreduce_wait(c, k, (int)nn, MPI_INT, MPI_MAX)) == WSP_OK) {
    for (int a = 0; a < n; a++)
      for (int b = a + 1; b < n; b++) {
        const size_t ab = (size_t)a * (size_t)n + (size_t)b, ba = (size_t)b * (size_t)n + (size_t)a;
        if (!isfinite(d[ab])) continue;
        m->rate_one[ab] = m->rate_one[ba] = -d[ab];
        m->rate_k[ab] = m->rate_k[ba] = -d[nn + ab];
        m->flows_min[ab] = m->flows_min[ba] = (size_t)-d[2 * nn + ab];
        m->flows[ab] = m->flows[ba] = k[ab];
        m->rtt[ab] = m->rtt[ba] = isfinite(d[3 * nn + ab]) ? d[3 * nn + ab] : 0;
      }
  }
out:
  free(d);
  free(k);
  free(buf);
  (void)wsp__lanes_comm_free(&w);
  return rc;
#endif
}

int wsp_netmap_probe(wsp_comm_t *comm, const wsp_netmap_probe_config_t *cfg, wsp_netmap_t **out) {
  const char *fn = "wsp_netmap_probe";
  if (comm == NULL) return wsp__fail(NULL, WSP_ERR_ARG, "%s: comm is NULL", fn);
  if (wsp__usable(comm, fn) != WSP_OK) return WSP_ERR_TIMEOUT;
  wsp_netmap_probe_config_t dflt;
  wsp_netmap_probe_config_init(&dflt);
  if (cfg == NULL) cfg = &dflt;
  int local = out == NULL ? wsp__fail(comm, WSP_ERR_ARG, "%s: out is NULL", fn)
                          : wsp__probe_check(cfg);
  if (out) *out = NULL;
  double t0 = wsp__now();
  wsp__probe_t pr = {.comm = comm, .cfg = cfg};
  int nomem = 0;
  if (local == WSP_OK) {
    pr.m = wsp__netmap_new(comm->size, comm->topo.pub.nodes);
    nomem = pr.m == NULL;
  }
  /* Everybody agrees on the arguments and the configuration before any
   * pair starts: a rank that skipped its pairs would leave its partners
   * waiting. */
  wsp__agree_t ag = {
      .what = fn,
      .status = local != WSP_OK ? local
                : nomem         ? wsp__fail(comm, WSP_ERR_NOMEM, "%s: out of memory", fn)
                                : WSP_OK,
      .fp = wsp__probe_cfg_fingerprint(cfg),
      .compare = 1,
      .differ_status = WSP_ERR_CONFIG,
      .differ = "the probe configuration differs between ranks; every rank must pass the same",
  };
  int rc = wsp__agree(comm, &ag);
  if (rc != WSP_OK) goto fail;
  if ((rc = wsp__netmap_fill_shape(comm, pr.m)) != WSP_OK) goto fail;
  rc = wsp__agree_alloc(comm, wsp__probe_prepare(&pr) != 0, fn);
  int passes = 0;
  if (rc == WSP_OK) rc = wsp__probe_passes(&pr, t0, &passes);
  if (rc == WSP_OK) rc = wsp__probe_gather(&pr, passes);
  if (rc == WSP_OK && cfg->eager_limits) rc = wsp__probe_eager(&pr);
  if (rc == WSP_OK && cfg->flows) rc = wsp__probe_flows(&pr);
  if (rc != WSP_OK) goto fail;
  wsp__netmap_group(pr.m);
  pr.m->reps = passes;
  double el = wsp__now() - t0;
  WSP__MPI_COLL_GOTO(comm, rc, fail, Allreduce, &el, &pr.m->seconds, 1, MPI_DOUBLE, MPI_MAX, comm->mpi);
  wsp__probe_release(&pr);
  wsp__log(comm, WSP_LOG_DEBUG,
           "%s: %d nodes, %d groups, %d passes, eager %zu / %zu bytes, %.3f s", fn,
           pr.m->nodes, pr.m->groups, passes, pr.m->eager_intra, pr.m->eager_inter,
           pr.m->seconds);
  *out = pr.m;
  return WSP_OK;

fail:
  wsp__probe_release(&pr);
  wsp_netmap_free(&pr.m);
  return rc;
}

/* ---- refreshing a map ---- */

int wsp_netmap_refresh(wsp_comm_t *comm, wsp_netmap_t *map, int rounds) {
  static const char fn[] = "wsp_netmap_refresh";
  if (comm == NULL) return wsp__fail(NULL, WSP_ERR_ARG, "%s: comm is NULL", fn);
  if (wsp__usable(comm, fn) != WSP_OK) return WSP_ERR_TIMEOUT;
  int local = map == NULL ? wsp__fail(comm, WSP_ERR_ARG, "%s: map is NULL", fn)
              : rounds < 1
                  ? wsp__fail(comm, WSP_ERR_ARG, "%s: rounds = %d is not >= 1", fn, rounds)
                  : WSP_OK;
  /* One agreement on the arguments, the memory and the map (its
   * fingerprint), then the same checks of its shape everywhere: a refresh
   * runs beside the job, so it spends one agreement on them, not the
   * host-name exchange of wsp__netmap_fits (the hosts were checked when the
   * map was loaded or attached). */
  double t0 = wsp__now();
  int n = local == WSP_OK ? map->nodes : 0, total = wsp__tournament_rounds(n);
  if (rounds > total) rounds = total;
  wsp_netmap_probe_config_t cfg;
  wsp_netmap_probe_config_init(&cfg);
  cfg.reps = 1;
  cfg.stream_bytes = WSP__REFRESH_STREAM;
  wsp__probe_t pr = {.comm = comm, .cfg = &cfg, .m = map};
  /* Per round, this rank's record of the pair it leads (it is the lower
   * leader): the other node, the round trip, the stream; -1: none. */
  double *mine = NULL, *all = NULL;
  int nomem = 0, rc = WSP_OK;
  if (local == WSP_OK && rounds > 0) {
    mine = malloc((size_t)rounds * 3 * sizeof *mine);
    all = malloc((size_t)comm->size * (size_t)rounds * 3 * sizeof *all);
    pr.leader = malloc((size_t)n * sizeof *pr.leader);
    pr.second = malloc((size_t)n * sizeof *pr.second);
    pr.msg = (int)(cfg.stream_bytes / WSP__STREAM_WINDOW);
    pr.buf = calloc(1 + WSP__STREAM_WINDOW, (size_t)pr.msg);
    nomem = !mine || !all || !pr.leader || !pr.second || !pr.buf;
  }
  wsp__agree_t ag = {
      .what = fn,
      .status = local != WSP_OK ? local
                : nomem         ? wsp__fail(comm, WSP_ERR_NOMEM, "%s: out of memory", fn)
                                : WSP_OK,
      .fp = local == WSP_OK ? wsp__netmap_fingerprint(map) : 0,
      .compare = 1,
      .differ_status = WSP_ERR_INTERNAL,
      .differ = "the ranks passed different maps",
  };
  rc = wsp__agree(comm, &ag);
  /* The same map everywhere, so the same answer to this everywhere. */
  if (rc == WSP_OK &&
      (map->p != comm->size || map->nodes != comm->topo.pub.nodes ||
       memcmp(map->node_of, comm->topo.node_of, (size_t)map->p * sizeof *map->node_of)))
    rc = wsp__fail(comm, WSP_ERR_ARG,
                   "%s: map was measured for another job shape (%d ranks on %d nodes; this "
                   "communicator has %d on %d, WSP_NODES)",
                   fn, map->p, map->nodes, comm->size, comm->topo.pub.nodes);
  if (rc != WSP_OK || total == 0) goto out; /* one node: no pair between nodes */
  double t1 = wsp__now();
  wsp__probe_roles(&pr);
  int me = comm->rank;
  pr.node = map->node_of[me];
  int leader = pr.leader[pr.node] == me;
  for (int i = 0; i < rounds; i++) {
    int r = (map->refresh_next + i) % total;
    int b = leader ? wsp__tournament_partner(n, r, pr.node) : -1;
    double rtts[WSP__REFRESH_RTTS], rtt, stream = 0;
    mine[3 * i] = -1;
    if (b < 0) continue;
    int peer = pr.leader[b];
    if ((rc = wsp__measure_pingpong(comm, peer, WSP__TAG_PROBE, pr.buf, WSP__SMALL,
                                    WSP__REFRESH_RTTS, rtts)) ||
        (rc = wsp__measure_stream(comm, peer, WSP__TAG_PROBE, pr.buf, pr.msg,
                                  WSP__STREAM_WINDOW, 1, 0, &stream)))
      goto out;
    rtt = wsp__measure_min(rtts, WSP__REFRESH_RTTS);
    if (pr.node < b) mine[3 * i] = b, mine[3 * i + 1] = rtt, mine[3 * i + 2] = stream;
  }
  double t2 = wsp__now();
  WSP__MPI_COLL_GOTO(comm, rc, out, Allgather, mine, 3 * rounds, MPI_DOUBLE, all, 3 * rounds,
                     MPI_DOUBLE, comm->mpi);
  wsp__log(comm, WSP_LOG_DEBUG, "%s: %d round(s) from %d: %.4f s (checks %.4f, pairs %.4f)", fn,
           rounds, map->refresh_next, wsp__now() - t0, t1 - t0, t2 - t1);
  /* Every rank applies the same records in the same order: the same map. */
  double bytes = (double)pr.msg * WSP__STREAM_WINDOW;
  for (int q = 0; q < comm->size; q++) {
    int a = map->node_of[q];
    if (pr.leader[a] != q) continue;
    for (int i = 0; i < rounds; i++) {
      const double *x = all + ((size_t)q * (size_t)rounds + (size_t)i) * 3;
      if (x[0] < 0) continue;
      int b = (int)x[0];
      size_t ab = (size_t)a * (size_t)n + (size_t)b, ba = (size_t)b * (size_t)n + (size_t)a;
      map->lat[ab] = map->lat[ba] = x[1] / 2;
      map->inv_bw[ab] = map->inv_bw[ba] = fmax((x[2] - x[1]) / bytes, 1e-13);
      map->samples[ab] = map->samples[ba] = 1;
      map->outliers[ab] = map->outliers[ba] = 0;
    }
  }
  map->refresh_next = (map->refresh_next + rounds) % total;
  wsp__netmap_group(map);
out:
  free(mine);
  free(all);
  free(pr.leader);
  free(pr.second);
  free(pr.buf);
  return rc;
}
