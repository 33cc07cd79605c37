/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The shuffle's pure logic, without MPI: the pacing controller driven by a
 * simulated network, the memory shares derived from mem_limit, buffer
 * growth, and the WSP_SHUFFLE_* variables.
 *
 * The simulated network is independent of the controller: K requesters
 * send batches (fixed cost c) whenever their controller allows; a batch
 * reaches a FIFO bottleneck after L/2, is served at the capacity available
 * at that time (C, or less while cross traffic takes a share), and its
 * answer reaches the requester L/2 after service ends. The test checks what
 * the controller is for: it keeps the link busy (goodput >= 0.9 of what is
 * available), keeps the queue bounded (near the bandwidth-delay product
 * plus its target, under the guard, whatever the path), reacts when capacity
 * drops, shares among competing requesters, and halves on severe delay.
 * Time advances in steps of 10 us; no timing of this machine is involved.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/core/measure.h"
#include "../../src/exchange/shuffle_internal.h"
#include "check.h"

#define MAXK 8
#define MAXQ 100000

typedef struct sim_batch {
  int owner;
  double t_send, arrive, remaining, done_at;
} sim_batch_t;

/* A FIFO ring per requester at the bottleneck, and one for answers on
 * their way back (in completion order). */
typedef struct ring {
  sim_batch_t *b;
  size_t head, tail;
} ring_t;

typedef struct sim {
  int k;
  double C, L, c, dt, T;
  double cross_from, cross_share; /* from this time, cross traffic takes a share */
  /* fifo: one queue for all, served in order of arrival (shares in
   * proportion to what each asks, as one queue of a link gives), instead of
   * round robin over requesters. start[i]: when requester i begins. peers:
   * each controller is told the median of the others' reported rates, as
   * request batches tell responders. */
  int fifo, peers;
  double start[MAXK];
  wsp__pace_t pace[MAXK];
  double inflight[MAXK];
  double acked_late[MAXK];   /* bytes answered in the second half */
  double inflight_late_max[MAXK], inflight_late_sum[MAXK];
  long late_steps;
  ring_t q[MAXK], fly;
} sim_t;

/* The simulated network: requesters send what their controller allows; a
 * batch reaches the bottleneck after L/2; the bottleneck shares its
 * capacity equally among the requesters with a batch there (each served in
 * order, as the engine's responders serve requesters round robin and TCP
 * flows share a link); an answer returns L/2 after service. */
static void sim_run(sim_t *s, wsp_shuffle_mode_t mode, double rate) {
  for (int i = 0; i < s->k; i++) {
    wsp__pace_init(&s->pace[i], mode, rate, 65536, 64e6, 0);
    s->inflight[i] = s->acked_late[i] = s->inflight_late_max[i] = 0;
    s->inflight_late_sum[i] = 0;
    s->q[i].b = calloc(MAXQ, sizeof(sim_batch_t));
    s->q[i].head = s->q[i].tail = 0;
  }
  s->fly.b = calloc(MAXQ, sizeof(sim_batch_t));
  s->fly.head = s->fly.tail = 0;
  for (double t = 0; t < s->T; t += s->dt) {
    if (s->peers) {
      for (int i = 0; i < s->k; i++) {
        double v[MAXK];
        int n = 0;
        for (int j = 0; j < s->k; j++)
          if (j != i && wsp__pace_report(&s->pace[j]) > 0)
            v[n++] = wsp__pace_report(&s->pace[j]);
        wsp__pace_peers(&s->pace[i], wsp__measure_median(v, n, v));
      }
    }
    for (int i = 0; i < s->k; i++) {
      ring_t *r = &s->q[s->fifo ? 0 : i];
      if (t < s->start[i]) { /* not begun: no time passes for it */
        s->pace[i].t_last = s->pace[i].iv_start = t;
        continue;
      }
      while (r->tail - r->head < MAXQ - 1 &&
             wsp__pace_may_send(&s->pace[i], s->inflight[i], t)) {
        s->inflight[i] += s->c;
        wsp__pace_sent(&s->pace[i], s->c);
        r->b[r->tail++ % MAXQ] = (sim_batch_t){.owner = i, .t_send = t,
                                               .arrive = t + s->L / 2,
                                               .remaining = s->c};
      }
    }
    double cap = s->C * (t >= s->cross_from ? 1 - s->cross_share : 1) * s->dt;
    if (s->fifo) { /* the head of the one queue takes it all */
      ring_t *r = &s->q[0];
      while (cap > 0 && r->head < r->tail && r->b[r->head % MAXQ].arrive <= t) {
        sim_batch_t *b = &r->b[r->head % MAXQ];
        double take = b->remaining < cap ? b->remaining : cap;
        b->remaining -= take;
        cap -= take;
        if (b->remaining > 0) break;
        b->done_at = t + s->L / 2;
        s->fly.b[s->fly.tail++ % MAXQ] = *b;
        r->head++;
      }
      cap = 0;
    }
    int active = 0;
    for (int i = 0; i < s->k; i++)
      active += s->q[i].head < s->q[i].tail && s->q[i].b[s->q[i].head % MAXQ].arrive <= t;
    for (int i = 0; i < s->k && active; i++) {
      ring_t *r = &s->q[i];
      if (r->head == r->tail) continue;
      sim_batch_t *b = &r->b[r->head % MAXQ];
      if (b->arrive > t) continue;
      b->remaining -= cap / active;
      if (b->remaining <= 0) {
        b->done_at = t + s->L / 2;
        s->fly.b[s->fly.tail++ % MAXQ] = *b;
        r->head++;
      }
    }
    while (s->fly.head < s->fly.tail && s->fly.b[s->fly.head % MAXQ].done_at <= t) {
      sim_batch_t *b = &s->fly.b[s->fly.head++ % MAXQ];
      int i = b->owner;
      s->inflight[i] -= s->c;
      wsp__pace_ack(&s->pace[i], t - b->t_send, s->c, s->inflight[i], t);
      if (t >= s->T / 2) s->acked_late[i] += s->c;
    }
    if (t >= s->T / 2) {
      s->late_steps++;
      for (int i = 0; i < s->k; i++) {
        s->inflight_late_sum[i] += s->inflight[i];
        if (s->inflight[i] > s->inflight_late_max[i])
          s->inflight_late_max[i] = s->inflight[i];
      }
    }
  }
  for (int i = 0; i < s->k; i++) free(s->q[i].b);
  free(s->fly.b);
}

static double goodput(const sim_t *s, int i) { return s->acked_late[i] / (s->T / 2); }

static void test_short_path(void) {
  /* netlab: 25 Mbit/s, no latency to speak of, 1 KiB requests x 100. */
  sim_t s = {.k = 1, .C = 25e6 / 8, .L = 0.2e-3, .c = 1032 + 102400,
             .dt = 1e-5, .T = 30, .cross_from = 1e9};
  sim_run(&s, WSP_SHUFFLE_ADAPTIVE, 0);
  double g = goodput(&s, 0);
  CHECK(g >= 0.9 * s.C, "short path: goodput %.3f of C", g / s.C);
  /* The standing queue stays bounded: near its target, under the guard
   * of WSP__PACE_OVER x the target (plus the batches being served). */
  CHECK(s.inflight_late_max[0] <= (WSP__PACE_OVER * WSP__PACE_TARGET + 8) * s.c,
        "short path: up to %.1f batches "
        "in flight", s.inflight_late_max[0] / s.c);
  printf("short path: goodput %.3f C, at most %.1f batches in flight\n",
         g / s.C, s.inflight_late_max[0] / s.c);
}

static void test_long_path(void) {
  /* A WAN: 1 Gbit/s, 50 ms: the volume in flight must grow to the BDP. */
  sim_t s = {.k = 1, .C = 125e6, .L = 0.05, .c = 1032 + 102400, .dt = 1e-5,
             .T = 20, .cross_from = 1e9};
  sim_run(&s, WSP_SHUFFLE_ADAPTIVE, 0);
  double g = goodput(&s, 0), bdp = s.C * s.L + s.c;
  CHECK(g >= 0.85 * s.C, "long path: goodput %.3f of C", g / s.C);
  double mean = s.inflight_late_sum[0] / (double)s.late_steps;
  CHECK(mean <= 2.0 * bdp && s.inflight_late_max[0] <= 3.0 * bdp,
        "long path: %.2f BDP in flight on average, %.2f at most", mean / bdp,
        s.inflight_late_max[0] / bdp);
  printf("long path: goodput %.3f C, %.2f BDP in flight on average, %.2f at "
         "most\n", g / s.C, mean / bdp, s.inflight_late_max[0] / bdp);
}

static void test_capacity_drop(void) {
  /* Cross traffic takes 60% of a 10 ms path from t = 5 s on. */
  sim_t s = {.k = 1, .C = 12.5e6, .L = 0.01, .c = 1032 + 102400, .dt = 1e-5,
             .T = 30, .cross_from = 5, .cross_share = 0.6};
  sim_run(&s, WSP_SHUFFLE_ADAPTIVE, 0);
  double g = goodput(&s, 0), avail = s.C * 0.4, bdp = avail * s.L + s.c;
  CHECK(g >= 0.85 * avail, "capacity drop: goodput %.3f of what is left",
        g / avail);
  CHECK(s.inflight_late_max[0] <= bdp + (WSP__PACE_OVER * WSP__PACE_TARGET + 8) * s.c,
        "capacity drop: %.1f batches in flight for a BDP of %.1f",
        s.inflight_late_max[0] / s.c, bdp / s.c);
  printf("capacity drop: goodput %.3f of the rest, at most %.1f batches in "
         "flight\n", g / avail, s.inflight_late_max[0] / s.c);
}

static void test_competition(void) {
  /* Four requesters behind one 25 Mbit/s bottleneck with 2 ms. */
  sim_t s = {.k = 4, .C = 25e6 / 8, .L = 0.002, .c = 1032 + 102400, .dt = 1e-5,
             .T = 40, .cross_from = 1e9};
  sim_run(&s, WSP_SHUFFLE_ADAPTIVE, 0);
  double sum = 0, lo = 1e300, infl = 0;
  for (int i = 0; i < s.k; i++) {
    sum += goodput(&s, i);
    if (goodput(&s, i) < lo) lo = goodput(&s, i);
    infl += s.inflight_late_max[i];
  }
  CHECK(sum >= 0.9 * s.C, "competition: total %.3f of C", sum / s.C);
  CHECK(lo >= 0.7 * s.C / s.k, "competition: the slowest got %.3f of a fair "
        "share", lo / (s.C / s.k));
  CHECK(infl <= (WSP__PACE_OVER * WSP__PACE_TARGET + 8) * s.k * s.c,
        "competition: %.1f batches in flight",
        infl / s.c);
  printf("competition: total %.3f C, slowest %.3f of fair, %.1f batches in "
         "flight\n", sum / s.C, lo / (s.C / s.k), infl / s.c);
}

/* Feeds answers of one batch (cost 1000, rtt `rtt`) spaced `gap` apart
 * from time *t on, with `inflight` still in flight after each, until the
 * controller has decided one interval; returns the rate afterwards. With
 * gap 0.02 an interval is 4 answers over 0.08 s (D = 50 000 B/s). */
static double feed(wsp__pace_t *p, double *t, int n, double rtt, double gap,
                   double inflight) {
  (void)n;
  uint64_t k = p->n_intervals;
  for (int i = 0; i < 1000 && p->n_intervals == k; i++) {
    *t += gap;
    wsp__pace_ack(p, rtt, 1000, inflight, *t);
  }
  return wsp__pace_rate(p);
}

/* How deep a decrease goes. Answers every 20 ms: D = 5e4 B/s; the unloaded
 * path is 0.01 s for a batch of 1000 B, and a round trip of x s reads as a
 * queue of about 5e4.(x - 0.01) B (smoothed: half of each new interval).
 * Each case starts from a paced rank whose floor is a queue of 3 batches. */
static void paced(wsp__pace_t *p, double *t) {
  const double u = 1000;
  *t = 0;
  CHECK(wsp__pace_init(p, WSP_SHUFFLE_ADAPTIVE, 0, u, 1e6, 0) == WSP_OK, "init");
  feed(p, t, 0, 0.01, 0.02, 8 * u);
  feed(p, t, 4, 0.01, 0.02, 8 * u);
  double over_level = 0.01 + 1.3 * WSP__PACE_SS_LEVEL * u / 5e4;
  for (int i = 0; i < 10 && p->slow_start; i++) feed(p, t, 4, over_level, 0.02, 8 * u);
  CHECK(!p->slow_start && p->n_exited == 1 && p->n_decrease == 0,
        "slow start ended on the queue");
  for (int i = 0; i < 3; i++) feed(p, t, 4, 0.07, 0.02, 0); /* steady: the floor */
}

static void test_decrease_depth(void) {
  wsp__pace_t p;
  double t, r = 0;
  /* Paced, a queue over WSP__PACE_OVER x the target (capacity fell, or
   * the rate is far too high): down to MD_DEEP x D, or deeper to drain. */
  paced(&p, &t);
  uint64_t dec = p.n_decrease;
  double far = 0.01 + 1.5 * WSP__PACE_OVER * WSP__PACE_TARGET * 1000 / 5e4;
  for (int i = 0; i < 10 && p.n_decrease == dec; i++) r = feed(&p, &t, 4, far, 0.02, 0);
  CHECK(p.n_decrease == dec + 1 && r <= WSP__PACE_MD_DEEP * p.good + 1e-9 &&
            r >= 0.5 * p.good,
        "a queue over the guard: down to %g (good %g)", r, p.good);
  /* A rate already below those floors (after a stall, say) is never
   * raised by a decrease. */
  paced(&p, &t);
  p.rate = 0.5 * p.dsmooth;
  p.prev_q = 1.5 * WSP__PACE_OVER * WSP__PACE_TARGET * 1000; /* already far over */
  double before = p.rate;
  dec = p.n_decrease;
  r = feed(&p, &t, 4, far, 0.02, 0);
  CHECK(p.n_decrease == dec + 1 && r <= WSP__PACE_MD * before + 1e-9,
        "a decrease from %g went to %g", before, r);
}

static void test_state_machine(void) {
  wsp__pace_t p;
  double t = 0;
  const double u = 1000;
  CHECK(wsp__pace_init(&p, WSP_SHUFFLE_ADAPTIVE, 0, u, 1e6, 0) == WSP_OK, "init");
  CHECK(p.slow_start && p.cwnd == u, "slow start with a window of one batch");
  CHECK(wsp__pace_window(&p) == 1e6, "the window is the cap");
  /* Slow start is a window: one batch, unpaced. */
  CHECK(wsp__pace_may_send(&p, 0, 0) && !wsp__pace_may_send(&p, u, 0),
        "slow start: one batch in flight");
  CHECK(!wsp__pace_may_send(&p, 1e6, 0), "the cap holds");
  /* Each answer grows it by its cost while it is used... */
  wsp__pace_ack(&p, 0.01, u, 0, t += 0.001);
  CHECK(p.cwnd == 2 * u, "grown to %g", p.cwnd);
  /* ... and not when it is not (less than half in flight). */
  p.cwnd = 8 * u;
  wsp__pace_ack(&p, 0.01, u, 0, t += 0.001);
  CHECK(p.cwnd == 8 * u, "unused window not grown: %g", p.cwnd);
  feed(&p, &t, 0, 0.01, 0.02, 8 * u); /* close the interval begun above */
  /* An interval (>= 8 answers, >= 0.2 s) without a standing queue keeps
   * slow start (answers every 20 ms: D = 50 000 B/s). */
  feed(&p, &t, 4, 0.01, 0.02, 8 * u);
  CHECK(p.slow_start && p.n_exited == 0, "still slow start");
  /* A standing queue, but under WSP__PACE_SS_LEVEL batches: rtt 0.07 s
   * for 1000 B vs a base of 1e-5 s/B is 6e-5 s/B of queue x 1000 B x D
   * (about 5e4 B/s) = about 3000 B, three batches. Slow start goes on: a
   * queue that small is noise, and no reason to slow down when the target
   * is WSP__PACE_TARGET batches. */
  for (int i = 0; i < 6; i++) feed(&p, &t, 4, 0.07, 0.02, 8 * u);
  CHECK(p.slow_start && p.n_exited == 0 && p.prev_q > 2.5 * u && p.prev_q < 3.5 * u,
        "a queue of %.1f batches keeps slow start", p.prev_q / u);
  /* A round trip that reads as 1.3 x the level. q is smoothed over
   * intervals (half weight for the newest): from 3 batches, the first such
   * interval reads as (3 + 10.4) / 2 = 6.7 batches, under the level; the
   * second as 8.55, over it. Slow start then ends without a decrease:
   * the rate is D plus the fill term, at most WSP__PACE_STEP over D (D is
   * the good rate). */
  double over_level = 0.01 + 1.3 * WSP__PACE_SS_LEVEL * u / 5e4;
  feed(&p, &t, 4, over_level, 0.02, 8 * u);
  CHECK(WSP__PACE_Q_GAIN == 2.0 && p.slow_start && p.n_exited == 0,
        "one interval of queue is smoothed, not yet over the level");
  double r = feed(&p, &t, 4, over_level, 0.02, 8 * u);
  CHECK(!p.slow_start && p.n_exited == 1 && p.n_decrease == 0 && r > p.good &&
            r <= (1 + WSP__PACE_STEP) * p.good + 1e-6,
        "slow start ends at %g (good %g)", r, p.good);
  CHECK(p.good > 4e4 && p.good < 6e4, "remembers the good rate: %g", p.good);
  CHECK(p.hold == 0, "no hold after slow start");
  /* Paced now: the token bucket and the loose cap. */
  double t0 = t;
  CHECK(wsp__pace_may_send(&p, 0, t0), "a first paced batch");
  wsp__pace_sent(&p, u);
  CHECK(!wsp__pace_may_send(&p, 0, t0) &&
            wsp__pace_may_send(&p, 0, t0 + 1.01 * u / r),
        "then one per cost/rate");
  CHECK(!wsp__pace_may_send(&p, 1e5, t0 + 0.03), "the loose in-flight cap");
  /* Paced: the standing queue is steered to WSP__PACE_TARGET batches. A
   * steady queue of 3 batches is far below it: the rate rises, by
   * WSP__PACE_STEP per interval at most, and settles above the delivered
   * rate by what fills the queue to the target within WSP__PACE_TAU
   * intervals. It never passes WSP__PACE_CAP x the delivered rate. */
  double before = r;
  r = feed(&p, &t, 4, 0.07, 0.02, 0);
  CHECK(r > before && r <= (1 + WSP__PACE_STEP) * fmax(before, p.dsmooth) + 1e-6,
        "under the target: up from %g to %g", before, r);
  for (int i = 0; i < 40; i++) {
    r = feed(&p, &t, 4, 0.07, 0.02, 0);
    CHECK(r > 5e4 && r <= WSP__PACE_CAP * 5e4, "under the target: %g, over D, under the cap", r);
  }
  /* (An interval is 0.2 s or one answer more.) */
  double gap = WSP__PACE_TARGET * u - p.prev_q;
  CHECK(r >= 5e4 + gap / (WSP__PACE_TAU * 0.25) && r <= 5e4 + gap / (WSP__PACE_TAU * 0.2) &&
            p.n_decrease == 0,
        "settled at %g: D and the queue's gap to the target over TAU intervals", r);
  /* A queue standing at the target: the rate settles at what is
   * delivered. A round trip of x s reads as a queue of (x - 0.01) x 5e4 B. */
  double at = 0.01 + WSP__PACE_TARGET * u / 5e4;
  for (int i = 0; i < 30; i++) r = feed(&p, &t, 4, at, 0.02, 0);
  CHECK(fabs(r - 5e4) < 0.01 * 5e4 && p.n_decrease == 0,
        "at the target: %g, delivered 5e4", r);
  /* Over the target (by a fifth): below the delivered rate, not below
   * MD_DEEP x D, and still no decrease counted (it is steering). */
  double over = 0.01 + 1.2 * WSP__PACE_TARGET * u / 5e4;
  for (int i = 0; i < 30; i++) r = feed(&p, &t, 4, over, 0.02, 0);
  CHECK(r < 5e4 && r >= WSP__PACE_MD_DEEP * 5e4 - 1e-6 && p.n_decrease == 0,
        "over the target: %g", r);
  /* Over WSP__PACE_OVER x the target: a decrease, to MD_DEEP x D or below. */
  uint64_t dec = p.n_decrease;
  double far = 0.01 + 1.5 * WSP__PACE_OVER * WSP__PACE_TARGET * u / 5e4;
  for (int i = 0; i < 30 && p.n_decrease == dec; i++) r = feed(&p, &t, 4, far, 0.02, 0);
  CHECK(p.n_decrease == dec + 1 && r <= WSP__PACE_MD_DEEP * 5e4 + 1e-6 && p.hold,
        "far over the target: a decrease to %g, then a hold", r);
  /* Stall: batches in flight, no answer for the stall time: halve. */
  before = wsp__pace_rate(&p);
  t += fmax(WSP__PACE_STALL_MIN, 4 * p.srtt) + 0.01;
  wsp__pace_may_send(&p, 5 * u, t);
  CHECK(fabs(wsp__pace_rate(&p) - before / 2) < 1e-6 && p.n_stall == 1,
        "stall halves: %g", wsp__pace_rate(&p));
  /* Idle (nothing in flight, no answers): no judgement. */
  before = wsp__pace_rate(&p);
  t += 5 * WSP__PACE_STALL_MIN;
  wsp__pace_may_send(&p, 0, t);
  CHECK(wsp__pace_rate(&p) == before, "idle keeps the rate");
  /* Never below one batch per FLOOR_S. */
  for (int i = 0; i < 40; i++) {
    t += 2 * WSP__PACE_STALL_MIN;
    wsp__pace_may_send(&p, 5 * u, t);
  }
  CHECK(fabs(wsp__pace_rate(&p) - u / WSP__PACE_FLOOR_S) < 1e-9, "floor: %g",
        wsp__pace_rate(&p));
  /* Nonsense answers are ignored. */
  uint64_t n = p.n_increase + p.n_decrease + p.n_stall;
  int acks = p.iv_acks;
  wsp__pace_ack(&p, 0, u, 0, t);
  wsp__pace_ack(&p, -1, u, 0, t);
  wsp__pace_ack(&p, 0.01, 0, 0, t);
  wsp__pace_ack(&p, 0.01, -5, 0, t);
  CHECK(p.iv_acks == acks && p.n_increase + p.n_decrease + p.n_stall == n,
        "ignored");
}

/* A latecomer behind one FIFO queue. Four requesters share a 25 Mbit/s
 * path with 2 ms; the fourth begins 8 s after the others, while they hold
 * a queue standing, so the smallest round trip it ever sees, its unloaded
 * path, includes that queue. Alone, it reads the queue as none, stays in
 * slow start until its window is several times the target, and takes the
 * others' share; and in one FIFO every decrease and probe meets all
 * requesters alike, so the shares stay unequal over 30-60 s (the test
 * prints both runs' shares and windows). Told the others' median
 * rate, it leaves slow start at that rate, and the requesters converge to
 * equal shares. Returns max / min of the
 * requesters' goodput over 30-60 s; *window: the latecomer's slow-start
 * window at its end, in batches. */
static double latecomer(int peers, double *window) {
  sim_t s = {.k = 4, .C = 25e6 / 8, .L = 0.002, .c = 1032 + 102400, .dt = 1e-4,
             .T = 60, .cross_from = 1e9, .fifo = 1, .peers = peers,
             .start = {0, 0, 0, 8}};
  sim_run(&s, WSP_SHUFFLE_ADAPTIVE, 0);
  double sum = 0, lo = 1e300, hi = 0;
  for (int i = 0; i < s.k; i++) {
    double g = goodput(&s, i);
    sum += g;
    if (g < lo) lo = g;
    if (g > hi) hi = g;
  }
  *window = s.pace[3].cwnd / s.c;
  printf("latecomer (%s): total %.3f C, latecomer %.3f of fair, the first "
         "%.3f; its slow start ended at %.1f batches\n",
         peers ? "peers' median" : "alone", sum / s.C,
         goodput(&s, 3) / (s.C / s.k), goodput(&s, 0) / (s.C / s.k), *window);
  CHECK(sum >= 0.9 * s.C, "latecomer: total %.3f of C", sum / s.C);
  return lo > 0 ? hi / lo : INFINITY;
}

static void test_latecomer(void) {
  double w_alone, w_told;
  double alone = latecomer(0, &w_alone), told = latecomer(1, &w_told);
  CHECK(told <= 1.25, "latecomer, peers' median: goodput max / min %.3f", told);
  CHECK(told < alone, "the peers' median evens the shares: max / min %.3f "
        "(alone %.3f)", told, alone);
  /* Its window then is the median rate times a round trip that includes
   * the others' standing queue (steered to WSP__PACE_TARGET batches). */
  CHECK(w_told <= WSP__PACE_OVER * WSP__PACE_TARGET && w_told < w_alone / 4,
        "the latecomer leaves slow start at the median: %.1f batches (alone "
        "%.1f)", w_told, w_alone);
}

/* The pure parts of the fairness rule: the median, what a batch reports,
 * and the catch-up or giving way against the peers' median rate. */
static void test_peers_rule(void) {
  double v0[1] = {0}, v1[] = {5}, v2[] = {4, 2}, v5[] = {9, 1, 7, 3, 5};
  CHECK(wsp__measure_median(v0, 0, v0) == 0, "median of nothing");
  CHECK(wsp__measure_median(v1, 1, v1) == 5, "median of one");
  CHECK(wsp__measure_median(v2, 2, v2) == 3, "median of two: the mean");
  CHECK(wsp__measure_median(v5, 5, v5) == 5, "median of five");
  const double c4[] = {8, 1, 6, 3};
  double sorted[4];
  CHECK(wsp__measure_median(c4, 4, sorted) == 4.5 && c4[0] == 8 && sorted[0] == 1 && sorted[3] == 8,
        "through scratch: the input is left as it was");
  wsp__pace_t p;
  double t = 0;
  const double u = 1000;
  wsp__pace_init(&p, WSP_SHUFFLE_FIXED, 7e5, u, 1e6, 0);
  CHECK(wsp__pace_report(&p) == 0, "fixed mode reports no rate");
  wsp__pace_init(&p, WSP_SHUFFLE_ADAPTIVE, 0, u, 1e6, 0);
  CHECK(wsp__pace_report(&p) == 0, "slow start reports no rate");
  wsp__pace_peers(&p, NAN);
  CHECK(p.peer_ref == 0, "a NaN median is ignored");
  /* Others paced already: slow start ends once its rate reaches their
   * median, at that rate. (cwnd 2u over srtt 0.01 s: 2e5 B/s.) */
  wsp__pace_ack(&p, 0.01, u, 0, t += 0.001);
  wsp__pace_peers(&p, 5e5);
  wsp__pace_ack(&p, 0.01, u, u, t += 0.001);
  CHECK(p.slow_start && p.n_joined == 0, "below the median: still slow start");
  wsp__pace_peers(&p, 3e5);
  wsp__pace_ack(&p, 0.01, u, 2 * u, t += 0.001);
  CHECK(!p.slow_start && p.rate == 3e5 && p.good == 3e5 && p.n_joined == 1,
        "joined at the median: %g", p.rate);
  /* Leave slow start on the queue, then sit at a steady queue of 3
   * batches, under the target, so that the rate stays above the good rate
   * (D = 5e4 B/s). */
  paced(&p, &t);
  CHECK(wsp__pace_report(&p) == p.rate, "reports its rate once paced");
  double r = 0;
  for (int i = 0; i < 3; i++) r = feed(&p, &t, 4, 0.07, 0.02, 0);
  CHECK(r > p.good && r < WSP__PACE_CAP * 5e4,
        "steering above the good rate, below the cap: %g", r);
  /* The rule moves what steering alone would give (a twin controller fed
   * the same answers without a median is the reference). The others at
   * 1.5 times the rate: half the gap to FAIR x their median (under the
   * cap of WSP__PACE_CAP x D, which would clip a larger step). */
  wsp__pace_t twin = p;
  double ref = 1.5 * r, t2 = t;
  wsp__pace_peers(&p, ref);
  double alone = feed(&twin, &t2, 4, 0.07, 0.02, 0);
  double want = alone + 0.5 * (WSP__PACE_FAIR * ref - alone);
  r = feed(&p, &t, 4, 0.07, 0.02, 0);
  CHECK(alone < WSP__PACE_FAIR * ref && fabs(r - want) < 1e-6 && p.n_toward_median == 1,
        "catching up: %g (want %g)", r, want);
  /* At the median: steering alone. */
  twin = p;
  t2 = t;
  twin.peer_ref = 0;
  alone = feed(&twin, &t2, 4, 0.07, 0.02, 0);
  wsp__pace_peers(&p, alone);
  r = feed(&p, &t, 4, 0.07, 0.02, 0);
  CHECK(r == alone && p.n_toward_median == 1, "at the median: %g (alone %g)", r, alone);
  /* The others at a third: half the way down to their median / FAIR. */
  twin = p;
  t2 = t;
  ref = r / 3;
  wsp__pace_peers(&p, ref);
  alone = feed(&twin, &t2, 4, 0.07, 0.02, 0);
  want = alone - 0.5 * (alone - ref / WSP__PACE_FAIR);
  r = feed(&p, &t, 4, 0.07, 0.02, 0);
  CHECK(fabs(r - want) < 1e-6 && p.n_toward_median == 2, "giving way: %g (want %g)",
        r, want);
  /* No median known: steering alone again. */
  twin = p;
  t2 = t;
  twin.peer_ref = 0;
  wsp__pace_peers(&p, 0);
  alone = feed(&twin, &t2, 4, 0.07, 0.02, 0);
  r = feed(&p, &t, 4, 0.07, 0.02, 0);
  CHECK(r == alone && p.n_toward_median == 2, "no median: %g", r);
}

static void test_fixed(void) {
  /* A token bucket at 1 MB/s with 64 KiB batches: over 10 s about 10 MB
   * leave, in bursts of at most one batch. */
  wsp__pace_t p;
  wsp__pace_init(&p, WSP_SHUFFLE_FIXED, 1e6, 65536, 16e6, 0);
  double sent = 0;
  for (double t = 0; t <= 10; t += 1e-4)
    while (wsp__pace_may_send(&p, 0, t)) {
      wsp__pace_sent(&p, 65536);
      sent += 65536;
    }
  CHECK(fabs(sent - 10e6) <= 2 * 65536, "fixed: %.0f bytes in 10 s", sent);
  CHECK(!wsp__pace_may_send(&p, 16e6, 100), "fixed: the window still caps");
  /* Answers, stalls and time do not change a fixed rate. */
  for (int i = 0; i < 100; i++) wsp__pace_ack(&p, 5.0, 65536, 0, 10 + i);
  wsp__pace_may_send(&p, 1e6, 1000);
  CHECK(wsp__pace_rate(&p) == 1e6, "fixed rate unchanged: %g", wsp__pace_rate(&p));
}

static void test_limits(void) {
  wsp__shuffle_limits_t l;
  const size_t mems[] = {(size_t)64 << 10, (size_t)256 << 10, (size_t)64 << 20,
                         ((size_t)64 << 20) + 12345};
  const int ps[] = {1, 2, 3, 16, 1024};
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 5; j++) {
      int rc = wsp__shuffle_limits(mems[i], ps[j], 65536, &l);
      if (rc != WSP_OK) {
        CHECK(strstr(wsp_last_error(), "mem_limit"), "names mem_limit");
        CHECK(ps[j] > 16, "mem %zu refused at p = %d", mems[i], ps[j]);
        continue;
      }
      size_t M = mems[i];
      CHECK(l.backlog + l.inflight + l.intake + l.resp_out + l.resp_in == M,
            "shares add up to mem_limit %zu", M);
      CHECK(l.backlog == M / 4 && l.inflight == M / 4 && l.intake == M / 4 &&
                l.resp_out == M / 8 && l.resp_in >= M / 8,
            "documented shares");
      /* Every peer sending its full share at once fits the intake. */
      CHECK((size_t)(ps[j] > 1 ? ps[j] - 1 : 1) * l.peer_req <= l.intake,
            "intake bound at p = %d", ps[j]);
      CHECK(l.max_request + WSP__HDR_BYTES + WSP__ENTRY_BYTES <= l.peer_req,
            "a lone request fits its share");
      /* One reply on top of a chunk that has not reached `chunk` stays
       * within half of resp_out (the serving rule's precondition). */
      CHECK(l.chunk + WSP__ENTRY_BYTES + l.max_response <= l.resp_out / 2,
            "reply growth bound");
      CHECK(2 * l.chunk <= l.resp_out / 4, "chunk slack");
      CHECK(l.resp_out / 2 <= l.resp_in, "a whole chunk fits resp_in");
    }
  CHECK(wsp__shuffle_limits((size_t)64 << 10, 4096, 65536, &l) == WSP_ERR_ARG,
        "too small for 4096 ranks");
}

static void test_grow(void) {
  CHECK(wsp__grow_cap(0, 1, 1000) == 256, "starts at 256");
  CHECK(wsp__grow_cap(256, 300, 1000) == 512, "doubles");
  CHECK(wsp__grow_cap(512, 900, 1000) == 1000, "capped by max");
  CHECK(wsp__grow_cap(512, 5000, 1000) >= 5000, "need beyond max is met");
  CHECK(wsp__grow_cap(512, 100, 1000) == 512, "no shrink");
  for (size_t need = 1; need < 100000; need = need * 3 + 1) {
    size_t c = wsp__grow_cap(300, need, 1u << 30);
    CHECK(c >= need && (need <= 300 || c < 2 * need + 300), "grow %zu -> %zu",
          need, c);
  }
}

static void test_env(void) {
  wsp_shuffle_config_t c;
  CHECK(wsp_shuffle_config_init(&c) == WSP_OK, "init");
  CHECK(c.mode == WSP_SHUFFLE_ADAPTIVE && c.batch_bytes == 65536 &&
            c.mem_limit == (size_t)64 << 20 && c.progress_thread == 0,
        "defaults");
  CHECK(wsp__shuffle_config_check(&c) == WSP_OK, "defaults valid");
  setenv("WSP_SHUFFLE_BATCH", "32K", 1);
  setenv("WSP_SHUFFLE_BATCH_DELAY_US", "500", 1);
  setenv("WSP_SHUFFLE_MEMORY", "8M", 1);
  setenv("WSP_SHUFFLE_RATE", "24mbit", 1);
  setenv("WSP_SHUFFLE_PROGRESS_THREAD", "1", 1);
  setenv("WSP_SHUFFLE_PIECE", "8K", 1);
  CHECK(wsp_shuffle_config_from_env(&c) == WSP_OK, "env: %s", wsp_last_error());
  CHECK(c.batch_bytes == 32768 && fabs(c.batch_delay - 0.0005) < 1e-12 &&
            c.mem_limit == (size_t)8 << 20 && c.progress_thread == 1 && c.piece_bytes == 8192,
        "parsed");
  CHECK(c.mode == WSP_SHUFFLE_FIXED && fabs(c.rate - 3e6) < 1e-6,
        "a rate selects fixed mode: %g", c.rate);
  setenv("WSP_SHUFFLE_RATE", "3MB", 1);
  CHECK(wsp_shuffle_config_from_env(&c) == WSP_OK && fabs(c.rate - 3e6) < 1e-6,
        "3MB");
  wsp_shuffle_config_t before = c;
  const char *bad[][2] = {{"WSP_SHUFFLE_RATE", "fast"},
                          {"WSP_SHUFFLE_RATE", "-5mbit"},
                          {"WSP_SHUFFLE_MODE", "turbo"},
                          {"WSP_SHUFFLE_BATCH", "1"},
                          {"WSP_SHUFFLE_MEMORY", "1K"},
                          {"WSP_SHUFFLE_PROGRESS_THREAD", "yes"},
                          {"WSP_SHUFFLE_PIECE", "512"},
                          {"WSP_SHUFFLE_PIECE", "2G"}};
  for (int i = 0; i < 8; i++) {
    const char *old = getenv(bad[i][0]);
    char keep[64] = "";
    if (old) snprintf(keep, sizeof keep, "%s", old);
    setenv(bad[i][0], bad[i][1], 1);
    int rc = wsp_shuffle_config_from_env(&c);
    CHECK(rc == WSP_ERR_CONFIG && strstr(wsp_last_error(), bad[i][0]),
          "%s=%s: %s", bad[i][0], bad[i][1], wsp_last_error());
    CHECK(memcmp(&c, &before, sizeof c) == 0, "untouched on error");
    if (old)
      setenv(bad[i][0], keep, 1);
    else
      unsetenv(bad[i][0]);
  }
  setenv("WSP_SHUFFLE_MODE", "adaptive", 1);
  CHECK(wsp_shuffle_config_from_env(&c) == WSP_ERR_CONFIG &&
            strstr(wsp_last_error(), "WSP_SHUFFLE_RATE"),
        "rate with adaptive mode");
  unsetenv("WSP_SHUFFLE_RATE");
  setenv("WSP_SHUFFLE_MODE", "fixed", 1);
  wsp_shuffle_config_init(&c);
  CHECK(wsp_shuffle_config_from_env(&c) == WSP_ERR_CONFIG, "fixed without a rate");
  const char *vars[] = {"WSP_SHUFFLE_MODE", "WSP_SHUFFLE_BATCH",
                        "WSP_SHUFFLE_BATCH_DELAY_US", "WSP_SHUFFLE_MEMORY",
                        "WSP_SHUFFLE_PROGRESS_THREAD", "WSP_SHUFFLE_PIECE"};
  for (int i = 0; i < 6; i++) unsetenv(vars[i]);

  /* The open-time checks name the field. */
  wsp_shuffle_config_init(&c);
  c.window = 10;
  CHECK(wsp__shuffle_config_check(&c) == WSP_ERR_ARG &&
            strstr(wsp_last_error(), "cfg->window"),
        "window");
  wsp_shuffle_config_init(&c);
  c.mode = WSP_SHUFFLE_FIXED;
  CHECK(wsp__shuffle_config_check(&c) == WSP_ERR_ARG &&
            strstr(wsp_last_error(), "cfg->rate"),
        "fixed without rate");
  wsp_shuffle_config_init(&c);
  c.batch_delay = -1;
  CHECK(wsp__shuffle_config_check(&c) == WSP_ERR_ARG &&
            strstr(wsp_last_error(), "batch_delay"),
        "delay");
  wsp_shuffle_config_init(&c);
  c.piece_bytes = 100;
  CHECK(wsp__shuffle_config_check(&c) == WSP_ERR_ARG &&
            strstr(wsp_last_error(), "cfg->piece_bytes"),
        "piece below 1 KiB");
  wsp_shuffle_config_t a, b;
  wsp_shuffle_config_init(&a);
  wsp_shuffle_config_init(&b);
  b.progress_thread = 1;
  CHECK(wsp__shuffle_config_fingerprint(&a) == wsp__shuffle_config_fingerprint(&b),
        "the progress thread is a local choice");
  b.piece_bytes = 4096;
  CHECK(wsp__shuffle_config_fingerprint(&a) == wsp__shuffle_config_fingerprint(&b),
        "the piece size is a local choice (announcements carry each chunk's length)");
  b.mem_limit *= 2;
  CHECK(wsp__shuffle_config_fingerprint(&a) != wsp__shuffle_config_fingerprint(&b),
        "mem_limit must agree");
}

int main(void) {
  test_state_machine();
  test_decrease_depth();
  test_fixed();
  test_short_path();
  test_long_path();
  test_capacity_drop();
  test_competition();
  test_peers_rule();
  test_latecomer();
  test_limits();
  test_grow();
  test_env();
  return check_summary("test_shuffle_pace");
}
