/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Calibration of the α-β-γ model (model.h).
 *
 * When: wsp_comm_create, unless the configuration gives all three of
 * alpha, beta and gamma. How: ranks pair up across the communicator, i with i + floor(p/2) (so that on
 * a block-mapped multi-host job the pairs cross hosts, the links collectives
 * mostly use). alpha is half the round trip of an 8-byte ping-pong, the
 * best of three batches of round trips spread over the pair's measurements
 * (before, between and after its streams), and then the lower median over
 * the pairs, not the largest (below). beta
 * comes from a stream: the lower rank sends a window of 8 messages of
 * 64 KiB back to back and the other answers with 8 bytes when all have
 * arrived; beta = (time - 2 alpha) / 512 KiB; beta_x the same with both
 * sides sending their window at once. (Not a single 64 KiB ping-pong: on
 * shaped TCP links one message after an idle pause does not reach the link
 * rate, so it overestimated beta several times over; collectives stream.)
 * alpha_node and beta_node are the same ping-pong and stream between
 * ranks 2i and 2i+1 of each node (when nodes hold two ranks or more).
 * gamma times MPI_Reduce_local(MPI_SUM) over 64 KiB of doubles. Each
 * figure is the best of a few repetitions on a rank, and then the largest
 * over all ranks: the slowest pair bounds a collective. alpha is the
 * exception. Where ranks share cores, a pair whose two processes wait on
 * each other's core sees only slow round trips for milliseconds; one such
 * pair made the largest alpha vary many times over between runs of the
 * same job, and with it every choice alpha weighs (small messages, the
 * chain's segment). Spread batches let a pair catch a quiet moment, and
 * the lower median keeps the latency that at least half the pairs see: a
 * latency of the network, not of the scheduler (docs/results/coll.md,
 * "The calibrated alpha between runs"). gap (LogGP's g)
 * is the time between small messages arriving back to back: the lower
 * rank sends a window of 16 messages of 8 bytes at once and the other
 * answers when all have arrived, gap = (time - 2 alpha) / 15; it is what
 * each further message costs a root that has all its messages in flight
 * (linear gather and scatter), where the latencies overlap.
 * With sites (src/core/sites.c), the pairs are made inside each site, so
 * that alpha and beta are the site's own, and the figures between sites
 * are measured apart (wsp__calibrate_wan): alpha_wan, beta_wan of one
 * connection, and beta_wan_link of all the pairs of two sites streaming
 * at once (the link's capacity, which caps how many connections the
 * multi-site algorithms use); where one connection is slower than a NIC,
 * the link again over the lanes the multi-site collectives will cross on
 * (wsp__calibrate_wan_lanes). The whole
 * calibration costs about 250 small messages (most of them in the gap's
 * windows, which take about 11 round trips) and 32 large ones per rank.
 *
 * The eager limit between nodes (wsp__model_eager), after the calibration:
 * pipelined algorithms keep their segments within it, as a segment above
 * it waits for the receiver's answer at every hop (docs/coll.md, "The
 * eager limit"). Rank 0 and the lowest rank of the next node search it
 * with the measurement the network map's probe makes (measure.h), coarser
 * and cheaper: sizes from WSP__EAGER_FROM (below which segments are not
 * bounded anyway) doubling up to WSP__EAGER_TO, then halved to within
 * 1/WSP__EAGER_DIV of the limit; a send is watched for 1 ms plus twice
 * its calibrated time. On slow links most of the cost is the bytes of the
 * eager sends (what it cost: docs/results/coll.md); every other rank waits
 * in one allreduce.
 */
#include "model.h"

#include "../core/measure.h"
#include "../core/p2p.h"
#include "../core/tags.h"
#include "../core/wsp_internal.h"
#include "../p2p/wan.h"

#include <math.h>
#include <stdlib.h>

enum { WSP__CAL_SMALL = 8, WSP__CAL_LARGE = 65536, WSP__CAL_WINDOW = 8,
       WSP__CAL_GAP_WINDOW = 16, WSP__CAL_REPS_SMALL = 10, WSP__CAL_REPS_LARGE = 3 };
_Static_assert((int)WSP__CAL_GAP_WINDOW <= (int)WSP__MEASURE_WINDOW_MAX &&
                   WSP__CAL_WINDOW <= WSP__CAL_GAP_WINDOW,
               "a stream holds the largest window");
_Static_assert(WSP__CAL_REPS_LARGE <= WSP__CAL_REPS_SMALL, "the samples arrays hold every rep");

/* The best of reps round trips (measure.h). */
static int wsp__pingpong(wsp_comm_t *comm, int peer, char *buf, int bytes, int reps,
                         double *best) {
  double t[WSP__CAL_REPS_SMALL];
  int rc = wsp__measure_pingpong(comm, peer, WSP__TAG_CALIBRATE, buf, bytes, reps, t);
  *best = wsp__measure_min(t, reps);
  return rc;
}

/* The best of reps streams (measure.h). */
static int wsp__stream(wsp_comm_t *comm, int peer, char *buf, int bytes, int window,
                       int reps, int both, double *best) {
  double t[WSP__CAL_REPS_SMALL];
  int rc = wsp__measure_stream(comm, peer, WSP__TAG_CALIBRATE, buf, bytes, window, reps,
                               both, t);
  *best = wsp__measure_min(t, reps);
  return rc;
}

/* Lets every rank of comm go at once, as far as one rank can: each tells
 * `leader` that it is ready and waits for its word, which the leader sends
 * to all as soon as all are ready, WINDOW sends at a time. An MPI
 * collective promises only that no rank leaves before all have come; over
 * a WAN the rounds of its usual algorithms can let ranks leave a crossing
 * or more apart, and streams meant to share the link then ran partly one
 * after the other, each faster than its share: under SimGrid the link of
 * two sites of 64 came out several times too fast, by how much depending
 * on the algorithms SMPI ran for the collectives before the streams
 * (docs/results/sites.md, "The link's calibration at 64 pairs"). Here the
 * ranks of the leader's site leave within the leader's sends of each
 * other, and the other site's one crossing later, all alike. */
static int wsp__release_together(wsp_comm_t *comm, int leader) {
  enum { WINDOW = 64 };
  char b = 0;
  int rc = WSP_OK, p = comm->size;
  if (comm->rank != leader) {
    if ((rc = wsp__send_bytes(comm, &b, 1, leader, WSP__TAG_CALIBRATE))) return rc;
    return wsp__recv_bytes(comm, &b, 1, leader, WSP__TAG_CALIBRATE);
  }
  /* From each rank by name, in rank order: the last to come sets the time
   * either way, and a named receive is one that a timeout can cancel. */
  for (int r = 0; r < p; r++)
    if (r != leader && (rc = wsp__recv_bytes(comm, &b, 1, r, WSP__TAG_CALIBRATE))) return rc;
  MPI_Request req[WINDOW];
  for (int r0 = 0; r0 < p; r0 += WINDOW) {
    int n = 0;
    for (int r = r0; r < p && r < r0 + WINDOW; r++) {
      if (r == leader) continue;
      if ((rc = wsp__isend_bytes(comm, &b, 1, r, WSP__TAG_CALIBRATE, 0, &req[n])))
        return wsp__abandon(comm, rc, 0, NULL, n, req);
      n++;
    }
    if ((rc = wsp__waitall(comm, n, req, 0))) return rc;
  }
  return rc;
}

/* The best of reps streams of WSP__CAL_WINDOW / 2 (t[0]) and of
 * WSP__CAL_WINDOW (t[1]) messages with peer. With leader >= 0, every rank
 * of comm calls it (those without a peer give -1, and get zeros) and each
 * series starts with all ranks let go at once by the leader; its
 * repetitions follow on from there, the pairs sharing the link alike. */
static int wsp__stream_series(wsp_comm_t *comm, int peer, char *buf, int leader, double t[2]) {
  int rc;
  t[0] = t[1] = 0;
  for (int k = 0; k < 2; k++) {
    if (leader >= 0 && (rc = wsp__release_together(comm, leader))) return rc;
    if (peer >= 0 && (rc = wsp__stream(comm, peer, buf, WSP__CAL_LARGE,
                                       k ? WSP__CAL_WINDOW : WSP__CAL_WINDOW / 2,
                                       WSP__CAL_REPS_LARGE, 0, &t[k])))
      return rc;
  }
  return WSP_OK;
}

/* The inverse bandwidth that `pairs` pairs streaming at once give from
 * their series' times: the difference of the two times over the bytes the
 * longer adds. Where the longer was not the slower, its time less the
 * round trip rtt over its bytes; 0 where that is not positive either. */
static double wsp__stream_slope(const double t[2], double rtt, int pairs) {
  const double added = (double)pairs * (WSP__CAL_WINDOW - WSP__CAL_WINDOW / 2) * WSP__CAL_LARGE;
  const double bytes = (double)pairs * WSP__CAL_WINDOW * WSP__CAL_LARGE;
  return t[1] > t[0] ? (t[1] - t[0]) / added : t[1] > rtt ? (t[1] - rtt) / bytes : 0;
}

/* Between sites 0 and 1: rank i of one and rank i of the other pair up,
 * for i < nw = the smaller site's size. Pair 0 measures the latency
 * (ping-pong) and one connection's inverse bandwidth (a stream) into
 * fig[0] and fig[1]; then all nw pairs stream at once, site 0 to site 1,
 * and the link's inverse bandwidth is the median pair's over nw (fig[2],
 * below; with one pair the link cannot be told apart from one
 * connection, and fig[2] stays 0: unknown). Other pairs of
 * sites are taken to be like these two.
 *
 * A rate between sites is a slope: the time of a stream of 8 messages
 * less that of one of 4, over the 4 messages' bytes. A stream's time also
 * holds what it pays before its data flows and after (the rendezvous's
 * handshake, TCP's ramp, the answer's way back), a round trip or more,
 * which the two streams pay alike. Over a WAN of 10 ms one stream's time
 * less one round trip made a connection look slower than the NIC that
 * held it, and priced every flat algorithm between sites too slow by as
 * much (docs/results/sites.md, "The model of the flat algorithms between
 * sites"). Where the slope says nothing (the longer stream was not the
 * slower), the longer stream's time less a round trip stands. */
static int wsp__calibrate_wan(wsp_comm_t *comm, char *buf, double *fig) {
  const wsp__sites_t *st = &comm->sites;
  int me = comm->rank, s = st->site_of[me], i = st->index[me], rc = WSP_OK;
  int nw = st->start[1] - st->start[0];
  if (st->start[2] - st->start[1] < nw) nw = st->start[2] - st->start[1];
  int peer = -1;
  if (s <= 1 && i < nw) peer = st->rank[st->start[1 - s] + i];
  double ts = 0, t[2];
  if (peer >= 0 && i == 0) {
    if ((rc = wsp__pingpong(comm, peer, buf, WSP__CAL_SMALL, WSP__CAL_REPS_SMALL, &ts)) ||
        (rc = wsp__stream_series(comm, peer, buf, -1, t)))
      return rc;
    fig[0] = ts / 2;
    fig[1] = wsp__stream_slope(t, ts, 1);
  }
  /* Everybody's ping-pong must be over before the streams start together;
   * pair 0's round trip is everybody's estimate of it. */
  WSP__MPI_COLL_GOTO(comm, rc, out, Bcast, &ts, 1, MPI_DOUBLE, st->rank[0], comm->mpi);
  if (nw < 2) goto out;
  if ((rc = wsp__stream_series(comm, peer, buf, st->rank[st->start[0]], t))) return rc;
  /* The link: nw pairs share it, so one pair's series over all the pairs'
   * bytes, with the median of the pairs' times (of each series apart: the
   * two medians may come from different pairs). Not the sum of the
   * pairs' rates, which a pair that ran alone for a moment inflates (under
   * SimGrid a few such pairs made the link of two sites of 64 look several
   * times as fast as it is), nor the slowest pair's, which a pair slowed by
   * a per-flow class that it shares with another would set. */
  double *all = malloc(sizeof *all * 4 * (size_t)comm->size);
  if ((rc = wsp__agree_alloc(comm, all == NULL, "model calibration")) != WSP_OK) goto done;
  double mine[2] = {0, 0};
  if (s == 0 && peer >= 0) mine[0] = t[0], mine[1] = t[1];
  WSP__MPI_COLL_GOTO(comm, rc, done, Allgather, mine, 2, MPI_DOUBLE, all, 2, MPI_DOUBLE, comm->mpi);
  double *shorts = all + 2 * comm->size, *longs = all + 3 * comm->size;
  int n = 0;
  for (int r = 0; r < comm->size; r++)
    if (all[2 * r + 1] > 0) shorts[n] = all[2 * r], longs[n++] = all[2 * r + 1];
  if (n > 0) {
    double med[2] = {wsp__measure_median(shorts, n, shorts), wsp__measure_median(longs, n, longs)};
    fig[2] = wsp__stream_slope(med, ts, nw);
  }
done:
  free(all);
out:
  return rc;
}

#ifndef WSP_SIMGRID
/* Where one connection between sites is slower than a NIC (a per-flow
 * cap), the pairs' MPI streams of wsp__calibrate_wan measured nw capped
 * connections rather than the link: nw times one connection's rate,
 * whatever the link carries. The multi-site bcast and
 * allreduce then cross over lanes (src/p2p/wan.c), each connection up
 * to a NIC's rate, so the link is measured again with the same pairs
 * streaming over those lanes at once. This makes the lanes here instead
 * of at the first collective that needs them. Where a pair's lanes fail,
 * every rank keeps the figure as it was (the collectives move a failed
 * pair's crossings through MPI on their own). Unlike the MPI streams'
 * figure, this one still sums the pairs' rates after a barrier: the
 * median of pairs let go together gave a lower figure on the capped lab,
 * and the collectives have not been measured with it yet
 * (docs/results/sites.md, "The link's calibration at 64 pairs"). */
static int wsp__calibrate_wan_lanes(wsp_comm_t *comm, char *buf, wsp_model_t *out) {
  const wsp__sites_t *st = &comm->sites;
  int nw = st->start[1] - st->start[0];
  if (st->start[2] - st->start[1] < nw) nw = st->start[2] - st->start[1];
  if (nw < 2 || out->beta_wan_link <= 0 || wsp__sites_lanes_rule(out) <= 1) return WSP_OK;
  int rc = WSP_OK;
  wsp_comm_t *wan = wsp__sites_wan_with(comm, wsp__sites_lanes_of(comm, out), &rc);
  /* NULL with WSP_OK: one lane configured, or making them failed (logged). */
  if (wan == NULL) return rc;
  int me = comm->rank, s = st->site_of[me], i = st->index[me];
  int peer = s <= 1 && i < nw ? st->rank[st->start[1 - s] + i] : -1;
  size_t len = (size_t)WSP__CAL_WINDOW * WSP__CAL_LARGE;
  /* [0]: pairs that failed; [1]: the sum of the senders' rates. */
  double fig[2] = {0, 0}, best = INFINITY;
  int failed = 0;
  /* Round -1 sets each pair's lanes up (addresses over MPI, connections);
   * the timed rounds start together after it. After each round the two
   * ends of a pair tell each other whether it failed, so that both stop
   * alike. */
  for (int rep = -1; rep < WSP__CAL_REPS_LARGE; rep++) {
    if (rep == 0) WSP__MPI_COLL_GOTO(comm, rc, out, Barrier, comm->mpi);
    if (peer < 0 || failed) continue;
    double t0 = MPI_Wtime();
    failed = (s == 0 ? wsp_striped_send(wan, buf, len, peer, WSP__TAG_CALIBRATE)
                     : wsp_striped_recv(wan, buf, len, peer, WSP__TAG_CALIBRATE)) != WSP_OK;
    /* A striped send completes when the receiver has every byte; it pays
     * one round trip before its data (the receiver's clear to send). */
    double t = MPI_Wtime() - t0 - 2 * out->alpha_wan;
    if (rep >= 0 && t < best) best = t;
    int theirs = 0;
    if ((rc = wsp__sendrecv_bytes(comm, &failed, sizeof failed, peer, &theirs, sizeof theirs,
                                  peer, WSP__TAG_CALIBRATE)))
      goto out;
    failed |= theirs;
  }
  fig[0] = failed && s == 0;
  if (s == 0 && peer >= 0 && !failed && best > 0 && best < INFINITY) fig[1] = len / best;
  WSP__MPI_COLL_GOTO(comm, rc, out, Allreduce, MPI_IN_PLACE, fig, 2, MPI_DOUBLE, MPI_SUM,
                     comm->mpi);
  if (fig[0] > 0)
    wsp__log(comm, WSP_LOG_WARN,
             "model calibration: %d pairs' lanes between sites failed; the link keeps the "
             "figure measured through MPI",
             (int)fig[0]);
  else if (fig[1] > 0)
    out->beta_wan_link = fmin(out->beta_wan_link, 1 / fig[1]);
out:
  return rc;
}
#endif /* no sockets, so no lanes, in a simulation */

int wsp__model_calibrate(wsp_comm_t *comm, wsp_model_t *out) {
  int rc = WSP_OK, p = comm->size, me = comm->rank;
  double local[11] = {0}, global[11];
  char *buf = calloc(1 + WSP__CAL_WINDOW, WSP__CAL_LARGE);
  double *red = calloc(WSP__CAL_LARGE / sizeof(double), sizeof(double) * 2);
  double *alphas = calloc((size_t)p, sizeof *alphas);
  /* Everybody learns of a local allocation failure before any pair starts
   * (a rank that skipped its ping-pong would leave its partner waiting). */
  rc = wsp__agree_alloc(comm, buf == NULL || red == NULL || alphas == NULL,
                        "model calibration");
  if (rc != WSP_OK) goto out;
  /* Pairing: i <-> i + h with h = floor(p/2); the last rank of an odd p
   * sits out (its figures are 0 and do not count in the maximum). With
   * sites, the same inside each site (the links between sites have figures
   * of their own, below). */
  const wsp__sites_t *st = &comm->sites;
  int q = p, i = me, peer = -1;
  if (st->count >= 2) {
    q = st->start[st->site_of[me] + 1] - st->start[st->site_of[me]];
    i = st->index[me];
  }
  int h = q / 2;
  if (h > 0) {
    int j = i < h ? i + h : i < 2 * h ? i - h : -1;
    if (j >= 0) peer = st->count >= 2 ? st->rank[st->start[st->site_of[me]] + j] : j;
  }
  if (peer >= 0) {
    /* The ping-pong's batches go before, between and after the streams
     * (see the prose at the top); ts is the best round trip of all. */
    double ts, tb[2], tl, tx, tg;
    if ((rc = wsp__pingpong(comm, peer, buf, WSP__CAL_SMALL, WSP__CAL_REPS_SMALL, &ts)) ||
        (rc = wsp__stream(comm, peer, buf, WSP__CAL_LARGE, WSP__CAL_WINDOW,
                          WSP__CAL_REPS_LARGE, 0, &tl)) ||
        (rc = wsp__stream(comm, peer, buf, WSP__CAL_LARGE, WSP__CAL_WINDOW,
                          WSP__CAL_REPS_LARGE, 1, &tx)) ||
        (rc = wsp__pingpong(comm, peer, buf, WSP__CAL_SMALL, WSP__CAL_REPS_SMALL, &tb[0])) ||
        (rc = wsp__stream(comm, peer, buf, WSP__CAL_SMALL, WSP__CAL_GAP_WINDOW,
                          WSP__CAL_REPS_SMALL, 0, &tg)) ||
        (rc = wsp__pingpong(comm, peer, buf, WSP__CAL_SMALL, WSP__CAL_REPS_SMALL, &tb[1])))
      goto out;
    ts = fmin(ts, fmin(tb[0], tb[1]));
    local[0] = ts / 2;
    /* Negative when the window was faster than the best ping-pong (noise);
     * the floor below applies. */
    local[7] = (tg - ts) / (WSP__CAL_GAP_WINDOW - 1);
    local[1] = (tl - ts) / ((double)WSP__CAL_WINDOW * WSP__CAL_LARGE);
    /* The exchange has no acknowledgement: subtract one way only. */
    local[4] = (tx - ts / 2) / ((double)WSP__CAL_WINDOW * WSP__CAL_LARGE);
  }
  /* Inside nodes (shared memory): local ranks 2i and 2i+1 pair up. */
  wsp_comm_t *node = comm->topo.local;
  if (node && node->size >= 2 && (node->rank ^ 1) < node->size) {
    double ts, tl;
    int npeer = node->rank ^ 1;
    if ((rc = wsp__pingpong(node, npeer, buf, WSP__CAL_SMALL, WSP__CAL_REPS_SMALL, &ts)) ||
        (rc = wsp__stream(node, npeer, buf, WSP__CAL_LARGE, WSP__CAL_WINDOW,
                          WSP__CAL_REPS_LARGE, 0, &tl)))
      goto out;
    local[5] = ts / 2;
    local[6] = (tl - ts) / ((double)WSP__CAL_WINDOW * WSP__CAL_LARGE);
  }
  if (st->count >= 2 && (rc = wsp__calibrate_wan(comm, buf, local + 8)) != WSP_OK) goto out;
  {
    size_t n = WSP__CAL_LARGE / sizeof(double);
    double best = INFINITY;
    for (int rep = 0; rep < 4; rep++) {
      double t0 = MPI_Wtime();
      WSP__MPI_GOTO(comm, MPI_Reduce_local(red, red + n, (int)n, MPI_DOUBLE, MPI_SUM), rc, out);
      double t = MPI_Wtime() - t0;
      if (t < best) best = t;
    }
    local[2] = best / WSP__CAL_LARGE;
  }
  /* local[3] is unused (it once carried the allocation failure, agreed on
   * above now). */
  WSP__MPI_COLL_GOTO(comm, rc, out, Allreduce, local, global, 11, MPI_DOUBLE, MPI_MAX, comm->mpi);
  /* alpha: the lower median over the ranks that measured one (both ranks
   * of a pair report its figure). */
  WSP__MPI_COLL_GOTO(comm, rc, out, Allgather, &local[0], 1, MPI_DOUBLE, alphas, 1, MPI_DOUBLE,
                     comm->mpi);
  {
    int n = 0;
    for (int r = 0; r < p; r++)
      if (alphas[r] > 0) alphas[n++] = alphas[r];
    wsp__measure_sort(alphas, (size_t)n);
    global[0] = n > 0 ? alphas[(n - 1) / 2] : 0;
  }
  /* Floors keep the model meaningful when a timer cannot resolve a term
   * (shared memory, simulated computation). */
  out->alpha = fmax(global[0], 1e-7);
  out->beta = fmax(global[1], 1e-12);
  out->gamma = fmax(global[2], 1e-13);
  out->beta_x = fmax(global[4], out->beta);
  /* Back-to-back messages cannot take longer apart than one alone. */
  out->gap = fmin(fmax(global[7], 1e-8), out->alpha);
  /* No node holds a pair: the node figures are the network's. */
  out->alpha_node = global[5] > 0 ? fmax(global[5], 1e-7) : out->alpha;
  out->beta_node = global[6] > 0 ? fmax(global[6], 1e-12) : out->beta;
  if (st->count >= 2) {
    out->alpha_wan = fmax(global[8], out->alpha);
    out->beta_wan = fmax(global[9], out->beta);
    /* Not above one connection's (the link carries at least that). */
    out->beta_wan_link = global[10] > 0 ? fmin(global[10], out->beta_wan) : 0;
#ifndef WSP_SIMGRID
    if ((rc = wsp__calibrate_wan_lanes(comm, buf, out)) != WSP_OK) goto out;
#endif
  } else {
    out->alpha_wan = out->alpha;
    out->beta_wan = out->beta;
    out->beta_wan_link = 0;
  }
  out->calibrated = 1;
out:
  free(buf);
  free(red);
  free(alphas);
  return rc;
}

#define WSP__EAGER_FROM WSP__SEG_EAGER_MIN /* where a limit starts to bound segments */
#define WSP__EAGER_TO ((size_t)256 << 10)
#define WSP__EAGER_DIV 16
#define WSP__EAGER_WATCH_S 1e-3

int wsp__model_eager(wsp_comm_t *comm, wsp_model_t *m) {
  const size_t given = comm->cfg.eager_limit;
  m->eager = 0;
  m->eager_from = WSP_EAGER_FROM_NONE;
  if (given != WSP_EAGER_LIMIT_AUTO && given != WSP_EAGER_LIMIT_NONE) {
    m->eager = given;
    m->eager_from = WSP_EAGER_FROM_CONFIG;
  }
  if (given == WSP_EAGER_LIMIT_AUTO && comm->topo.pub.nodes >= 2) {
    const int *node = comm->topo.node_of, me = comm->rank;
    int other = -1, rc = WSP_OK;
    for (int r = 1; r < comm->size && other < 0; r++)
      if (node[r] != node[0]) other = r;
    const int in_pair = me == 0 || me == other;
    char *buf = in_pair ? malloc(WSP__EAGER_TO) : NULL;
    if ((rc = wsp__agree_alloc(comm, in_pair && buf == NULL, "wsp_comm_create: the eager limit")))
      return rc;
    /* found[0]: the limit; found[1]: 1 when a rendezvous size was found
     * (otherwise every size up to WSP__EAGER_TO went eagerly). */
    uint64_t found[2] = {0, 0};
    const double t0 = wsp__now();
    if (in_pair) {
      size_t lim = 0;
      rc = wsp__measure_eager(comm, me == 0 ? other : 0, WSP__TAG_PROBE_EAGER,
                              WSP__TAG_PROBE_VERDICT, buf, WSP__EAGER_FROM, WSP__EAGER_TO,
                              1.0 / WSP__EAGER_DIV, WSP__EAGER_WATCH_S + 2 * m->alpha,
                              2 * m->beta_x, &lim, NULL);
      free(buf);
      if (rc == WSP_ERR_TIMEOUT) return rc;
      if (rc != WSP_OK) /* the others wait below: the limit stays unknown */
        wsp__log(comm, WSP_LOG_WARN, "wsp_comm_create: the eager limit was not measured (%s)",
                 wsp_last_error());
      else
        found[0] = lim, found[1] = lim < WSP__EAGER_TO;
    }
    if ((rc = wsp__allreduce_wait(comm, found, 2, MPI_UINT64_T, MPI_MAX)) != WSP_OK) return rc;
    /* Eager throughout: no bound is known, and none is needed below
     * WSP__EAGER_TO. Below WSP__EAGER_FROM (found[0] = 0): none that
     * segments would keep to (wsp__pipeline_seg). */
    m->eager = found[1] ? (size_t)found[0] : 0;
    m->eager_from = WSP_EAGER_FROM_MEASURED;
    const char *how = !found[1] ? "none up to " : found[0] ? "" : "below ";
    const size_t shown = !found[1] ? WSP__EAGER_TO : found[0] ? (size_t)found[0] : WSP__EAGER_FROM;
    wsp__log(comm, WSP_LOG_DEBUG,
             "wsp_comm_create: eager limit between ranks 0 and %d: %s%zu bytes (%.1f ms)", other,
             how, shown, (wsp__now() - t0) * 1e3);
  }
  comm->eager_own = m->eager;
  comm->eager_own_from = m->eager_from;
  return WSP_OK;
}
