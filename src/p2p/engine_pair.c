/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A pair of the striped engine: its request queues, its failure (every
 * request of a failed pair ends with the failure's status, its lanes are
 * closed), the matching of sends to the receiver's clear-to-send, and the
 * probe.
 *
 * The probe. Set-up in auto mode (cfg.p2p_lanes = 0) measures the pair
 * once: the higher rank asks the lower one to stream over one lane, then
 * over all lanes opened, and times what arrives, leaving out the first
 * third of each phase (TCP's slow start). Each lane's stream ends with
 * what the streamer's kernel says of it (PEND: its smallest round trip,
 * the segments it sent and its loss episodes among them, whether it is
 * still in its first slow start). The rates tell whether several connections beat one
 * (a per-flow cap, a window over a long round trip); the kernel's figures
 * tell what a short probe cannot see: the path's round trip, and the loss
 * that will hold one flow down once it has run long enough to meet it.
 * wsp__stripe_choose turns them into the lanes and the smallest message
 * worth striping.
 */
#define _DEFAULT_SOURCE 1
#include "striped_internal.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

static void wsp__q_push(wsp__sreq_t **head, wsp__sreq_t **tail, wsp__sreq_t *r) {
  r->next = NULL;
  if (*tail)
    (*tail)->next = r;
  else
    *head = r;
  *tail = r;
}

void wsp__q_remove(wsp__sreq_t **head, wsp__sreq_t **tail, wsp__sreq_t *r) {
  wsp__sreq_t *prev = NULL;
  for (wsp__sreq_t *x = *head; x; prev = x, x = x->next)
    if (x == r) {
      if (prev)
        prev->next = x->next;
      else
        *head = x->next;
      if (*tail == x) *tail = prev;
      x->next = NULL;
      return;
    }
}

int wsp__pair_ctl(wsp__pair_t *pr, const wsp__frame_t *f) {
  if (pr->nctl == pr->ctl_cap) {
    size_t cap = pr->ctl_cap ? 2 * pr->ctl_cap : 16;
    wsp__frame_t *n = realloc(pr->ctl, cap * sizeof *n);
    if (n == NULL) return WSP_ERR_NOMEM;
    pr->ctl = n;
    pr->ctl_cap = cap;
  }
  pr->ctl[pr->nctl++] = *f;
  return WSP_OK;
}

void wsp__req_finish(wsp__stripe_t *st, wsp__sreq_t *r, int status, const char *why) {
  if (r->done) return;
  r->done = 1;
  r->status = status;
  if (status != WSP_OK && why) snprintf(r->why, sizeof r->why, "%s", why);
  if (st) st->live--;
  /* The report's rows (report.c): a send counts once it is done. */
  if (status == WSP_OK && r->counted && st && st->comm->report)
    wsp__report_add(
        &st->comm->report->striped[r->path == WSP__PATH_LANES ? WSP__REPORT_STRIPED_LANES
                                                              : WSP__REPORT_STRIPED_MPI],
        r->size, MPI_Wtime() - r->t0, -1);
  if (r->on_done) r->on_done(r);
}

/* ---- failure ---- */

const char *wsp__peer_status_name(uint32_t negated) {
  /* Named only when it is one of ours: negating any other value could
   * overflow. */
  return negated >= 1 && negated <= WSP__STATUS_MAX ? wsp_err_name(-(int)negated)
                                                    : "an unknown status";
}

static void wsp__fail_queue(wsp__stripe_t *st, wsp__sreq_t **head, wsp__sreq_t **tail, int status,
                            const char *why) {
  while (*head) {
    wsp__sreq_t *r = *head;
    *head = r->next;
    r->next = NULL;
    wsp__req_finish(st, r, status, why);
  }
  *tail = NULL;
}

/* The set-up's receives land in the pair's own buffers, which are freed
 * with it: they are cancelled and completed (a cancelled receive completes
 * at once). Its sends are let go. */
static void wsp__cancel_recv(MPI_Request *req) {
  if (*req == MPI_REQUEST_NULL) return;
  (void)MPI_Cancel(req);
  (void)MPI_Wait(req, MPI_STATUS_IGNORE);
}

void wsp__pair_drop_setup(wsp__pair_t *pr) {
  wsp__cancel_recv(&pr->xreq[1]);
  wsp__let_go(&pr->xreq[0], 0);
  if (pr->lower)
    wsp__let_go(&pr->vreq, 0); /* the verdict: sent by the lower rank */
  else
    wsp__cancel_recv(&pr->vreq);
}

void wsp__pair_fail(wsp__stripe_t *st, wsp__pair_t *pr, int status, const char *fmt, ...) {
  if (pr->state == WSP__PAIR_FAILED) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(pr->why, sizeof pr->why, fmt, ap);
  va_end(ap);
  int told = status == WSP_ERR_REMOTE; /* the peer failed it: no need to answer */
  pr->state = WSP__PAIR_FAILED;
  pr->error = status;
  /* Tell the peer on the first lane that is up and takes a whole frame at
   * once; those that do not will see the connections close. */
  for (int i = 0; i < pr->nlanes; i++) {
    wsp__lane_t *l = &pr->lane[i];
    if (l->fd < 0) continue;
    if (!told && l->hs == WSP__HS_UP && !l->obusy) {
      wsp__frame_t f = wsp__frame_err(status);
      if (wsp__lane_set(l, &f, NULL, 0) == 0 &&
          send(l->fd, l->ohdr, l->ohdr_len, MSG_NOSIGNAL | MSG_DONTWAIT) == (ssize_t)l->ohdr_len)
        told = 1;
    }
    wsp__lane_release(l, 0);
    l->fl_n = 0;
    l->oreq = NULL;
    l->ireq = NULL;
    l->ipay = NULL;
    l->obusy = 0;
  }
  wsp__pair_drop_setup(pr);
  if (pr->priv) {
    wsp__sec_keyfree(pr->priv);
    pr->priv = NULL;
  }
  wsp__fail_queue(st, &pr->undecided, &pr->undecided_tail, status, pr->why);
  wsp__fail_queue(st, &pr->sends, &pr->sends_tail, status, pr->why);
  wsp__fail_queue(st, &pr->active, &pr->active_tail, status, pr->why);
  wsp__fail_queue(st, &pr->recvs, &pr->recvs_tail, status, pr->why);
  pr->nrecvs = 0;
  wsp__log(st->comm, st->closing ? WSP_LOG_DEBUG : WSP_LOG_WARN,
           "striped: pair with rank %d failed: %s", pr->peer, pr->why);
  if (!pr->lower) wsp__hs_idle(st, pr->peer);
}

void wsp__stripe_break(wsp__stripe_t *st, int status, const char *why) {
  st->broken = 1;
  for (int p = 0; p < st->comm->size; p++) {
    wsp__pair_t *pr = st->pair[p];
    if (pr && pr->state != WSP__PAIR_FAILED && !pr->fallback)
      wsp__pair_fail(st, pr, status, "%s", why);
  }
  wsp__hs_idle(st, -1);
}

/* Closes every lane of the pair; `reset` as wsp__lane_close. */
static void wsp__close_lanes(wsp__pair_t *pr, int reset) {
  for (int i = 0; i < pr->nlanes; i++) wsp__lane_release(&pr->lane[i], reset);
}

/* The peer freed its communicator: requests still waiting on the pair
 * fail; with none, the pair just ends, quietly. */
void wsp__pair_closed(wsp__stripe_t *st, wsp__pair_t *pr) {
  if (pr->undecided || pr->sends || pr->active || pr->recvs) {
    wsp__pair_fail(st, pr, WSP_ERR_CONN, "rank %d freed its communicator", pr->peer);
    return;
  }
  snprintf(pr->why, sizeof pr->why, "rank %d freed its communicator", pr->peer);
  pr->error = WSP_ERR_CONN;
  pr->state = WSP__PAIR_FAILED;
  wsp__close_lanes(pr, 0);
}

/* ---- matching ---- */

/* Matches sends, in posting order, with the earliest CTS of their tag among
 * those whose predecessors have all arrived (CTS frames travel on several
 * lanes and may arrive out of order). */
void wsp__pair_match(wsp__stripe_t *st, wsp__pair_t *pr) {
  if (pr->state != WSP__PAIR_READY) return;
  for (wsp__sreq_t *s = pr->sends, *next; s; s = next) {
    next = s->next;
    size_t best = pr->ncts;
    for (size_t i = 0; i < pr->ncts; i++)
      if (pr->cts[i].seq < pr->cts_next && pr->cts[i].tag == s->tag &&
          (best == pr->ncts || pr->cts[i].seq < pr->cts[best].seq))
        best = i;
    if (best == pr->ncts) continue;
    struct wsp__cts c = pr->cts[best];
    pr->cts[best] = pr->cts[--pr->ncts];
    if (c.size != s->size) {
      wsp__pair_fail(st, pr, WSP_ERR_ARG,
                     "a striped send of %zu bytes to rank %d met a receive of %llu "
                     "bytes (tag %d); striped sizes must match exactly",
                     s->size, pr->peer, (unsigned long long)c.size, s->tag);
      return;
    }
    wsp__q_remove(&pr->sends, &pr->sends_tail, s);
    s->matched = 1;
    s->rid = c.rid;
    s->next_off = 0;
    wsp__q_push(&pr->active, &pr->active_tail, s);
  }
}

/* CTS arrived with sequence numbers in any order; cts_next is the first
 * one not yet seen. */
void wsp__pair_cts_seen(wsp__pair_t *pr) {
  for (;;) {
    int found = 0;
    for (size_t i = 0; i < pr->ncts && !found; i++) found = pr->cts[i].seq == pr->cts_next;
    /* Matched CTS are gone from the list; a sequence number below
     * cts_next never comes back, so only the next one is looked for. */
    if (!found) return;
    pr->cts_next++;
  }
}

size_t wsp__stripe_chunk(size_t size, int k, double ratek, size_t forced, int sealed) {
  size_t c = forced;
  const size_t lanes = k >= 1 ? (size_t)k : 1;
  if (c == 0) {
    /* Sixteen chunks per lane, so that the free lanes can even out a slow
     * one and the last chunks end close together; where the probe measured
     * the lanes, no more than one lane carries in 20 ms (the longest a lane
     * can lag behind the others at the end). No smaller than 64 KiB (a
     * frame per syscall), or than those 20 ms where they are less (slow
     * lanes, where the syscalls cost nothing beside the wire), but not under
     * 8 KiB; no larger than 1 MiB. On a capped lane a longer chunk holds the
     * step that waits for a transfer's last chunk (docs/results/p2p.md,
     * "Segments over every lane"). */
    c = size / (16 * lanes);
    size_t lo = 65536;
    double per_lane = ratek > 0 ? 0.02 * ratek / (double)lanes : 0;
    if (per_lane > 0 && (double)c > per_lane) c = (size_t)per_lane;
    if (per_lane > 0 && per_lane < (double)lo) lo = per_lane < 8192 ? 8192 : (size_t)per_lane;
    c = c < lo ? lo : c > 1048576 ? 1048576 : c;
    /* A transfer too short for a chunk on every lane is cut into one per
     * lane (at least 4 KiB). The segments of a pipeline are such transfers:
     * one that took only two lanes would arrive at their rate, with the
     * later segments on the other lanes sharing the link, and every hop of
     * the pipeline would wait that much longer for it (docs/results/p2p.md,
     * "Segments over every lane"). */
    size_t each = size / lanes + (size % lanes != 0);
    if (c > each) c = each < WSP__STRIPE_CHUNK_MIN ? WSP__STRIPE_CHUNK_MIN : each;
  }
  /* A sealed lane seals a whole frame into a buffer of its own. */
  if (sealed && c > WSP__SEALED_CHUNK_MAX) c = WSP__SEALED_CHUNK_MAX;
  return c;
}

void wsp__lanes_start(wsp__stripe_t *st, wsp__sreq_t *r) {
  wsp__pair_t *pr = r->pair;
  r->path = WSP__PATH_LANES;
  if (r->is_send) {
    r->chunk =
        wsp__stripe_chunk(r->size, pr->k, pr->ratek, st->comm->cfg.p2p_chunk, pr->mine.encrypt);
    wsp__q_push(&pr->sends, &pr->sends_tail, r);
    wsp__pair_match(st, pr);
  } else {
    if (pr->nrecvs >= WSP__CTS_MAX) {
      char why[160];
      snprintf(why, sizeof why,
               "more than %d striped receives from rank %d are in flight on the lanes",
               WSP__CTS_MAX, pr->peer);
      wsp__req_finish(st, r, WSP_ERR_UNSUPPORTED, why);
      return;
    }
    r->rid = pr->next_rid++;
    r->got = 0;
    wsp__q_push(&pr->recvs, &pr->recvs_tail, r);
    pr->nrecvs++;
    wsp__frame_t f = wsp__frame_cts((wsp__cts_fields_t){
        .rid = r->rid, .size = r->size, .seq = pr->cts_seq++, .tag = (uint32_t)r->tag});
    if (wsp__pair_ctl(pr, &f) != WSP_OK)
      wsp__pair_fail(st, pr, WSP_ERR_NOMEM, "out of memory queueing a CTS");
  }
}

/* ---- the probe ---- */

/* The model behind the choice. A TCP flow starts with a window of
 * WSP__IW segments and doubles it every round trip (slow start) until the
 * window holds what the path carries in a round trip; from there it goes
 * at the rate it lasts at. wsp__stripe_time is the time n bytes take over
 * k such flows started together, cold, which together last at `cap`
 * bytes/s: whole round trips while the window grows, the rest at cap, and
 * half a round trip for the last byte to arrive. */
#define WSP__IW 10.0
/* Fewer segments than this say nothing of a path's loss. */
#define WSP__PROBE_SEGS_MIN 100
double wsp__stripe_time(const wsp__path_t *p, int k, double cap, double n) {
  const double R = p->rtt, full = cap * R;
  double w = k * WSP__IW * p->mss, t = 0;
  if (!(R > 0) || !(p->mss > 0)) return n / cap;
  for (;;) {
    if (w >= full || n <= w) return t + n / cap + R / 2;
    n -= w;
    t += R;
    w *= 2;
  }
}

/* The rate one flow lasts at: what the probe measured of one lane, unless
 * that figure was a ramp (p->ramping: then one flow may yet fill the
 * path); and under loss p no more than MSS / RTT x 1.22 / sqrt(p), the
 * rate at which TCP's window stops growing (Mathis et al., 1997; netlab
 * checks it: docs/netlab.md). */
double wsp__stripe_one_flow(const wsp__path_t *p) {
  const double path = fmax(p->rate1, p->ratek);
  double one = p->ramping ? path : fmin(p->rate1, path);
  if (p->loss > 0 && p->rtt > 0 && p->mss > 0)
    one = fmin(one, p->mss / p->rtt * 1.22 / sqrt(p->loss));
  return one;
}

/* The loss rate a probe that saw `episodes` loss episodes in `segs`
 * segments cannot rule out: the upper end of a 95% interval for a Poisson
 * count (Garwood's, one-sided 97.5%), by the Wilson-Hilferty cube
 * (within 0.2% of the exact bound from one episode on), per segment, at
 * most one in two. A 0.3 s probe sees a handful of episodes at most, and
 * on netlab's lossy paths it counted several times fewer than one flow
 * meets over a long transfer (docs/results/p2p.md, "The loss the probe
 * cannot rule out"). Too many lanes cost less than too few (one flow under
 * loss crawls), so the choice takes the bound, not the count.
 * Nothing seen (or too few segments to say) prices no loss: a path
 * without loss must not pay for lanes. */
double wsp__stripe_loss(uint64_t episodes, uint64_t segs) {
  if (episodes == 0 || segs < WSP__PROBE_SEGS_MIN) return 0;
  const double n1 = (double)episodes + 1, z = 1.959964;
  const double c = 1 - 1 / (9 * n1) + z / (3 * sqrt(n1));
  return fmin(n1 * c * c * c / (double)segs, 0.5);
}

/* The rate of the probe's phase of many lanes. The window (the phase's
 * last two thirds) is cut into n slices of dt seconds, and where those are
 * long enough the rate is the median slice's, not the window's mean.
 * Why: many lanes started
 * together grow their windows together until they overrun a queue on the
 * path at once, and a lane that lost the end of a burst waits for its
 * retransmission timer (at least 200 ms on Linux), so for part of a 0.3 s
 * probe several lanes send nothing. Under a per-flow cap that made the
 * probe's 16 lanes read well below what the same lanes then carried
 * (docs/results/p2p.md, "The probe's window in slices"): a stall that a
 * long transfer hardly notices fills a good part of the window. The
 * median leaves it out where a mean does not.
 * Slices are long enough when they span at least WSP__PROBE_SLICE_MIN
 * and four round trips: a flow held by its window over a longer round
 * trip delivers in bursts a round trip apart, its slices say nothing of
 * its rate, and its ramp is the figure the probe wants (the mean). */
int wsp__probe_slice_of(double since, double dt) {
  const double at = dt > 0 && since > 0 ? since / dt : 0;
  return at < WSP__PROBE_SLICES - 1 ? (int)at : WSP__PROBE_SLICES - 1;
}

double wsp__probe_rate(const double *slice, int n, double dt, double bytes, double span,
                       double rtt) {
  const double mean = span > 0 ? bytes / span : 0;
  if (n < 3 || n > WSP__PROBE_SLICES || !(dt >= WSP__PROBE_SLICE_MIN) || !(dt >= 4 * rtt))
    return mean;
  double v[WSP__PROBE_SLICES];
  for (int i = 0; i < n; i++) { /* insertion sort: n is 8 */
    int j = i;
    for (; j > 0 && v[j - 1] > slice[i]; j--) v[j] = v[j - 1];
    v[j] = slice[i];
  }
  const double mid = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  return mid / dt;
}

/* Whether the one lane's rate, measured from the first third of its
 * probe_s-second stream on, is a ramp. `flagged`: its kernel called it in
 * its first slow start at the end of the stream. The kernel clears that
 * flag when the window first stops growing (a loss, or HyStart seeing the
 * round trip rise), so a flow held below its window by a cap in front of
 * it (a shaper on its own host, as on netlab's cloud lab) may keep it for
 * good. A ramp, though, starts from WSP__IW segments and doubles them
 * every round trip, and holds what the path carries in a round trip (the
 * larger rate times the smallest round trip; a ramp builds no queue) after
 * ceil(log2 of their ratio) round trips. If that was over before the
 * measurement began, the flag means no loss yet, not a ramp. At the
 * boundary either verdict is right: the ramp ends as the measurement
 * starts. Without a round trip or a segment size the flag stands. */
int wsp__stripe_ramping(const wsp__path_t *p, int flagged, double probe_s) {
  if (!flagged) return 0;
  if (!(p->rtt > 0) || !(p->mss > 0)) return 1;
  const double path = fmax(p->rate1, p->ratek), w0 = WSP__IW * p->mss, full = path * p->rtt;
  const double rounds = full > w0 ? ceil(log2(full / w0)) : 0;
  return probe_s / 3 < rounds * p->rtt;
}

/* From the probe's figures, the lanes to use and the smallest message to
 * stripe (SIZE_MAX: none; everything goes through MPI).
 *
 * Lanes for the rate: where one flow lasts at less than the path carries
 * (by 1.3x at least: a per-flow cap, a window over a long round trip,
 * loss), as many lanes as it takes, with a margin of half again for
 * connections that share a bottleneck by chance (a hash of ports picks
 * the queue of a per-flow cap), up to the lanes opened. Lanes for the
 * ramp: where one flow may fill the path once it is up, but the probe saw
 * its slow start hold it back (a long round trip), every lane opened: k
 * cold lanes start with k windows and reach the path's rate log2(k) round
 * trips sooner. Otherwise (one flow fills the path within the probe, as on
 * a LAN) no lanes.
 *
 * The threshold: a striped message pays one round trip more than MPI's
 * (the CTS) and gains in rate and in ramp; it pays from the smallest size
 * where wsp__stripe_time of the k lanes, plus that round trip, beats one
 * flow's, never below `min`. On a short round trip this is rtt / (1/one -
 * 1/lanes), as before the ramp was modelled. */
void wsp__stripe_choose(const wsp__path_t *p, int nlanes, size_t min, int *k, size_t *threshold) {
  *k = 1;
  *threshold = SIZE_MAX;
  const double path = fmax(p->rate1, p->ratek);
  if (!(p->rate1 > 0) || !(path > 0) || nlanes < 2) return;
  const double one = wsp__stripe_one_flow(p);
  int want;
  if (path >= 1.3 * one) {
    double w = ceil(1.5 * path / one);
    want = w > nlanes ? nlanes : (int)w;
  } else if (p->ramping && path >= 1.3 * p->rate1) {
    want = nlanes;
  } else {
    return;
  }
  const double lanes = fmin(path, want * one), R = p->rtt > 0 ? p->rtt : 0;
  /* The smallest size that pays, to within 1/64: double until it pays
   * (up to 2^50 bytes), then halve the step. */
  double lo = 0, hi = (double)(min > 0 ? min : 1);
  while (wsp__stripe_time(p, want, lanes, hi) + R >= wsp__stripe_time(p, 1, one, hi)) {
    lo = hi;
    hi *= 2;
    if (hi > 0x1p50) return;
  }
  while (hi - lo > fmax(1.0, hi / 64)) {
    double mid = (lo + hi) / 2;
    if (wsp__stripe_time(p, want, lanes, mid) + R < wsp__stripe_time(p, 1, one, mid))
      hi = mid;
    else
      lo = mid;
  }
  *k = want;
  const size_t t = hi >= 0x1p64 ? SIZE_MAX : (size_t)ceil(hi);
  *threshold = t < min ? min : t;
}

static void wsp__probe_phase(wsp__stripe_t *st, wsp__pair_t *pr, int phase) {
  pr->probe.phase = phase;
  pr->probe.lanes = phase == 1 ? 1 : pr->nlanes - 1;
  pr->probe.ends = 0;
  pr->probe.t_first = 0;
  pr->probe.in_window = 0;
  pr->probe.bytes_win = 0;
  memset(pr->probe.slice, 0, sizeof pr->probe.slice);
  pr->probe.stopped = 0;
  pr->probe.streaming = 1; /* measuring, on this side */
  pr->probe.t_go = wsp__now();
  for (int i = 0; i < pr->nlanes; i++) pr->lane[i].pend_seen = 0;
  wsp__frame_t f = wsp__frame_pgo(phase, pr->probe.lanes);
  if (wsp__pair_ctl(pr, &f) != WSP_OK)
    wsp__pair_fail(st, pr, WSP_ERR_NOMEM, "out of memory starting the probe");
}

void wsp__probe_bytes(wsp__stripe_t *st, wsp__pair_t *pr, size_t n) {
  if (!pr->probe.streaming) return;
  double t = wsp__now(), T = 1e-3 * st->comm->cfg.p2p_probe_ms;
  if (pr->probe.t_first == 0) {
    pr->probe.t_first = t;
    if (pr->probe.phase == 1) pr->rtt = t - pr->probe.t_go;
    return;
  }
  if (!pr->probe.in_window) {
    if (t >= pr->probe.t_first + T / 3) {
      pr->probe.in_window = 1;
      pr->probe.t_win = t;
      pr->probe.dt = (pr->probe.t_first + T - t) / WSP__PROBE_SLICES;
    }
    return;
  }
  pr->probe.bytes_win += (double)n;
  pr->probe.slice[wsp__probe_slice_of(t - pr->probe.t_win, pr->probe.dt)] += (double)n;
  if (t >= pr->probe.t_first + T) {
    /* Phase 2's by its slices, with the round trip the kernel gave in
     * phase 1 (else the time to phase 1's first byte, which is longer).
     * Phase 1's one lane overruns no queue the way 16 do, and its slices
     * came in lumps that put their median well under the mean
     * (docs/results/p2p.md, "The probe's window in slices"): its mean. */
    const double rtt = pr->probe.rtt_us > 0 ? pr->probe.rtt_us * 1e-6 : pr->rtt;
    const double span = t - pr->probe.t_win;
    const double rate =
        wsp__probe_rate(pr->probe.slice, pr->probe.phase == 1 ? 0 : WSP__PROBE_SLICES, pr->probe.dt,
                        pr->probe.bytes_win, span, rtt);
    char sl[WSP__PROBE_SLICES * 12] = "";
    for (int i = 0, o = 0; pr->probe.dt > 0 && i < WSP__PROBE_SLICES && o < (int)sizeof sl; i++)
      o +=
          snprintf(sl + o, sizeof sl - (size_t)o, " %.3g", pr->probe.slice[i] / pr->probe.dt / 1e6);
    wsp__log(st->comm, WSP_LOG_DEBUG,
             "striped: rank %d: probe phase %d: %.3g MB/s over the window, by slices of %.3g "
             "ms (MB/s):%s; %.3g MB/s taken",
             pr->peer, pr->probe.phase, span > 0 ? pr->probe.bytes_win / span / 1e6 : 0,
             pr->probe.dt * 1e3, sl, rate / 1e6);
    if (pr->probe.phase == 1)
      pr->rate1 = rate;
    else
      pr->ratek = rate;
    pr->probe.streaming = 0;
    pr->probe.stopped = 1;
    wsp__frame_t f = wsp__frame_pstop(pr->probe.phase);
    if (wsp__pair_ctl(pr, &f) != WSP_OK)
      wsp__pair_fail(st, pr, WSP_ERR_NOMEM, "out of memory in the probe");
  }
}

void wsp__probe_end(wsp__stripe_t *st, wsp__pair_t *pr) {
  if (++pr->probe.ends < pr->probe.lanes) return;
  if (pr->probe.phase == 1) {
    wsp__probe_phase(st, pr, 2);
    return;
  }
  /* The path: the kernel's round trip where it gave one (else the time to
   * the first bytes, an upper bound), and its loss: loss episodes per
   * segment sent, over both phases (at most one in two). */
  wsp__path_t path = {
      .rate1 = pr->rate1, .ratek = pr->ratek, .rtt = pr->rtt, .mss = WSP__MSS_DEFAULT};
  const uint64_t segs = pr->probe.segs[0] + pr->probe.segs[1];
  if (pr->probe.rtt_us > 0) path.rtt = pr->rtt = pr->probe.rtt_us * 1e-6;
  const uint64_t losses = pr->probe.losses[0] + pr->probe.losses[1];
  path.loss = wsp__stripe_loss(losses, segs);
  wsp__tcpstat_t ts;
  if (wsp__tcpstat(pr->lane[1].fd, &ts) == 0 && ts.mss > 0) path.mss = ts.mss;
  int flagged = pr->probe.slow[0] > 0;
  path.ramping = wsp__stripe_ramping(&path, flagged, 1e-3 * st->comm->cfg.p2p_probe_ms);
  if (st->probe_as[0] > 0) { /* a test's figures (WSP_P2P_PROBE_FIGURES) */
    path = (wsp__path_t){.rate1 = st->probe_as[0],
                         .ratek = st->probe_as[1],
                         .rtt = st->probe_as[2],
                         .loss = st->probe_as[3],
                         .ramping = st->probe_as[4] > 0,
                         .mss = WSP__MSS_DEFAULT};
    pr->rate1 = path.rate1;
    pr->ratek = path.ratek;
    pr->rtt = path.rtt;
    flagged = 0;
  }
  pr->loss = path.loss;
  pr->ramping = path.ramping;
  wsp__stripe_choose(&path, pr->nlanes - 1,
                     st->probe_floor ? st->probe_floor : wsp__p2p_min(&st->comm->cfg), &pr->k,
                     &pr->threshold);
  wsp__frame_t f = wsp__frame_result((wsp__result_fields_t){.lanes = (uint32_t)pr->k,
                                                            .threshold = (uint64_t)pr->threshold,
                                                            .rate1 = pr->rate1,
                                                            .ratek = pr->ratek});
  if (wsp__pair_ctl(pr, &f) != WSP_OK) {
    wsp__pair_fail(st, pr, WSP_ERR_NOMEM, "out of memory in the probe");
    return;
  }
  /* The choice in words: no threshold (SIZE_MAX) is every message on MPI. */
  char choice[64];
  if (pr->threshold == SIZE_MAX)
    snprintf(choice, sizeof choice, "every message through MPI");
  else
    snprintf(choice, sizeof choice, "%d lanes from %zu bytes", pr->k, pr->threshold);
  wsp__log(st->comm, WSP_LOG_INFO,
           "striped: rank %d: one lane %.3g MB/s%s, %d lanes %.3g MB/s, rtt %.3g ms, "
           "%llu loss episodes in %llu segments: one flow lasts at %.3g MB/s; %s",
           pr->peer, pr->rate1 / 1e6,
           path.ramping ? " (in slow start)"
           : flagged ? " (in slow start by the kernel, not a ramp at this round trip: no loss yet)"
                     : "",
           pr->nlanes - 1, pr->ratek / 1e6, pr->rtt * 1e3, (unsigned long long)losses,
           (unsigned long long)segs, wsp__stripe_one_flow(&path) / 1e6, choice);
  wsp__pair_ready(st, pr);
}

void wsp__pair_connected(wsp__stripe_t *st, wsp__pair_t *pr) {
  if (st->comm->cfg.p2p_lanes > 0) {
    pr->k = (int)st->comm->cfg.p2p_lanes;
    pr->threshold = wsp__p2p_min(&st->comm->cfg);
    wsp__pair_ready(st, pr);
    return;
  }
  pr->state = WSP__PAIR_PROBE;
  if (!pr->lower) wsp__probe_phase(st, pr, 1);
}
