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
 * available), keeps the queue small (window near the bandwidth-delay
 * product plus a few batches, whatever the path), reacts when capacity
 * drops, shares among competing requesters, and halves on severe delay.
 * Time advances in steps of 10 us; no timing of this machine is involved.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/exchange/shuffle_internal.h"
#include "check.h"

#define MAXK 8
#define MAXQ 100000

typedef struct sim_batch {
  int owner;
  double t_send, arrive, remaining, w_sent, done_at;
} sim_batch_t;

typedef struct sim {
  int k;
  double C, L, c, dt, T;
  double cross_from, cross_share; /* from this time, cross traffic takes a share */
  wsp__pace_t pace[MAXK];
  double inflight[MAXK];
  double acked_late[MAXK]; /* bytes answered in the second half */
  double cwnd_late_max[MAXK], cwnd_late_min[MAXK];
  sim_batch_t *q; /* FIFO at the bottleneck (ring) */
  size_t head, tail;
  sim_batch_t *fly; /* served, answer on its way (ring, in completion order) */
  size_t fhead, ftail;
} sim_t;

static void sim_run(sim_t *s, wsp_shuffle_mode_t mode, double rate) {
  s->q = calloc(MAXQ, sizeof *s->q);
  s->fly = calloc(MAXQ, sizeof *s->fly);
  for (int i = 0; i < s->k; i++) {
    wsp__pace_init(&s->pace[i], mode, rate, 65536, 64e6, 0);
    s->inflight[i] = s->acked_late[i] = 0;
    s->cwnd_late_max[i] = 0;
    s->cwnd_late_min[i] = 1e300;
  }
  s->head = s->tail = s->fhead = s->ftail = 0;
  for (double t = 0; t < s->T; t += s->dt) {
    /* Requesters send what they may. */
    for (int i = 0; i < s->k; i++)
      while (wsp__pace_may_send(&s->pace[i], s->inflight[i], t) &&
             s->tail - s->head < MAXQ - 1) {
        s->inflight[i] += s->c;
        wsp__pace_sent(&s->pace[i], s->c);
        s->q[s->tail % MAXQ] = (sim_batch_t){.owner = i, .t_send = t,
                                            .arrive = t + s->L / 2,
                                            .remaining = s->c,
                                            .w_sent = s->inflight[i]};
        s->tail++;
      }
    /* The bottleneck serves in arrival order. */
    double cap = s->C * (t >= s->cross_from ? 1 - s->cross_share : 1) * s->dt;
    while (cap > 0 && s->head < s->tail && s->q[s->head % MAXQ].arrive <= t) {
      sim_batch_t *b = &s->q[s->head % MAXQ];
      double x = b->remaining < cap ? b->remaining : cap;
      b->remaining -= x;
      cap -= x;
      if (b->remaining <= 0) {
        b->done_at = t + s->L / 2;
        s->fly[s->ftail++ % MAXQ] = *b;
        s->head++;
      }
    }
    /* Answers arrive. */
    while (s->fhead < s->ftail && s->fly[s->fhead % MAXQ].done_at <= t) {
      sim_batch_t *b = &s->fly[s->fhead++ % MAXQ];
      int i = b->owner;
      s->inflight[i] -= s->c;
      wsp__pace_ack(&s->pace[i], t - b->t_send, s->c, b->w_sent);
      if (t >= s->T / 2) s->acked_late[i] += s->c;
    }
    if (t >= s->T / 2)
      for (int i = 0; i < s->k; i++) {
        double w = wsp__pace_window(&s->pace[i]);
        if (w > s->cwnd_late_max[i]) s->cwnd_late_max[i] = w;
        if (w < s->cwnd_late_min[i]) s->cwnd_late_min[i] = w;
      }
  }
  free(s->q);
  free(s->fly);
}

static void sim_done(sim_t *s) { (void)s; }

static double goodput(const sim_t *s, int i) { return s->acked_late[i] / (s->T / 2); }

static void test_short_path(void) {
  /* netlab: 25 Mbit/s, no latency to speak of, 1 KiB requests x 100. */
  sim_t s = {.k = 1, .C = 25e6 / 8, .L = 0.2e-3, .c = 1032 + 102400,
             .dt = 1e-5, .T = 20, .cross_from = 1e9};
  sim_run(&s, WSP_SHUFFLE_ADAPTIVE, 0);
  double g = goodput(&s, 0), u = wsp__pace_unit(&s.pace[0]);
  CHECK(g >= 0.95 * s.C, "short path: goodput %.3f of C", g / s.C);
  CHECK(s.cwnd_late_max[0] <= 4 * u, "short path: window up to %.1f batches",
        s.cwnd_late_max[0] / u);
  CHECK(s.cwnd_late_min[0] >= u, "short path: window below one batch");
  printf("short path: goodput %.3f C, window %.2f..%.2f batches\n", g / s.C,
         s.cwnd_late_min[0] / u, s.cwnd_late_max[0] / u);
  sim_done(&s);
}

static void test_long_path(void) {
  /* A WAN: 1 Gbit/s, 50 ms: the window must grow far past a few batches. */
  sim_t s = {.k = 1, .C = 125e6, .L = 0.05, .c = 1032 + 102400, .dt = 1e-5,
             .T = 20, .cross_from = 1e9};
  sim_run(&s, WSP_SHUFFLE_ADAPTIVE, 0);
  double g = goodput(&s, 0), u = wsp__pace_unit(&s.pace[0]);
  double bdp = s.C * s.L;
  CHECK(g >= 0.9 * s.C, "long path: goodput %.3f of C", g / s.C);
  CHECK(s.cwnd_late_max[0] <= bdp + s.c + 3 * u,
        "long path: window %.0f bytes for a BDP of %.0f", s.cwnd_late_max[0], bdp);
  printf("long path: goodput %.3f C, window %.2f..%.2f BDP\n", g / s.C,
         s.cwnd_late_min[0] / bdp, s.cwnd_late_max[0] / bdp);
  sim_done(&s);
}

static void test_capacity_drop(void) {
  /* Cross traffic takes 60% of a 10 ms path from t = 5 s on. */
  sim_t s = {.k = 1, .C = 12.5e6, .L = 0.01, .c = 1032 + 102400, .dt = 1e-5,
             .T = 20, .cross_from = 5, .cross_share = 0.6};
  sim_run(&s, WSP_SHUFFLE_ADAPTIVE, 0);
  double g = goodput(&s, 0), u = wsp__pace_unit(&s.pace[0]);
  double avail = s.C * 0.4, bdp = avail * s.L;
  CHECK(g >= 0.9 * avail, "capacity drop: goodput %.3f of what is left",
        g / avail);
  CHECK(s.cwnd_late_max[0] <= bdp + s.c + 3 * u,
        "capacity drop: window %.1f batches for a BDP of %.1f",
        s.cwnd_late_max[0] / u, bdp / u);
  printf("capacity drop: goodput %.3f of the rest, window up to %.2f batches\n",
         g / avail, s.cwnd_late_max[0] / u);
  sim_done(&s);
}

static void test_competition(void) {
  /* Four requesters behind one 25 Mbit/s bottleneck with 2 ms. */
  sim_t s = {.k = 4, .C = 25e6 / 8, .L = 0.002, .c = 1032 + 102400, .dt = 1e-5,
             .T = 40, .cross_from = 1e9};
  sim_run(&s, WSP_SHUFFLE_ADAPTIVE, 0);
  double sum = 0, lo = 1e300;
  for (int i = 0; i < s.k; i++) {
    sum += goodput(&s, i);
    if (goodput(&s, i) < lo) lo = goodput(&s, i);
  }
  CHECK(sum >= 0.95 * s.C, "competition: total %.3f of C", sum / s.C);
  CHECK(lo >= 0.5 * s.C / s.k, "competition: the slowest got %.3f of a fair "
        "share", lo / (s.C / s.k));
  double u = wsp__pace_unit(&s.pace[0]), wsum = 0;
  for (int i = 0; i < s.k; i++) wsum += s.cwnd_late_max[i];
  CHECK(wsum <= 4.0 * s.k * u, "competition: windows sum to %.1f batches",
        wsum / u);
  printf("competition: total %.3f C, slowest %.3f of fair, windows %.1f batches\n",
         sum / s.C, lo / (s.C / s.k), wsum / u);
  sim_done(&s);
}

/* Feeds answers of one batch (cost 1000) until the controller has made its
 * decision for the round; returns the window afterwards. */
static double round_of(wsp__pace_t *p, double rtt, double w) {
  uint64_t n = p->n_increase + p->n_decrease + p->n_halve;
  double before = p->cwnd;
  for (int i = 0; i < 1000; i++) {
    wsp__pace_ack(p, rtt, 1000, w);
    if (p->n_increase + p->n_decrease + p->n_halve != n || p->round_acked == 0)
      break;
  }
  (void)before;
  return wsp__pace_window(p);
}

static void test_state_machine(void) {
  wsp__pace_t p;
  CHECK(wsp__pace_init(&p, WSP_SHUFFLE_ADAPTIVE, 0, 1000, 1e6, 0) == WSP_OK,
        "init");
  CHECK(wsp__pace_window(&p) == 1000, "initial window of one batch: %g",
        wsp__pace_window(&p));
  CHECK(wsp__pace_may_send(&p, 0, 0) && wsp__pace_may_send(&p, 999, 0) &&
            !wsp__pace_may_send(&p, 1000, 0),
        "window admits below cwnd only");
  /* Slow start: answers with no queue double the window every round. */
  CHECK(round_of(&p, 0.01, 1000) == 2000, "doubled: %g", wsp__pace_window(&p));
  CHECK(round_of(&p, 0.01, 1000) == 4000, "doubled: %g", wsp__pace_window(&p));
  /* A queue of one batch (rtt doubled with two in flight) ends slow start
   * and brings the window to what the sample implies: W - q + 1 = 2. */
  CHECK(round_of(&p, 0.02, 2000) == 2000 && !p.slow_start,
        "slow start ends at %g", wsp__pace_window(&p));
  /* The same queue now is within ALPHA..BETA: hold. */
  CHECK(round_of(&p, 0.02, 2000) == 2000, "held at %g", wsp__pace_window(&p));
  /* Three batches queued (rtt 4x with 4 in flight): down by at least a
   * step, towards W - q + 1 = 2, not below half. */
  CHECK(fabs(round_of(&p, 0.04, 4000) - 1500) < 1e-9, "stepped to %g",
        wsp__pace_window(&p));
  /* No queue: additive increase of half a batch per round. */
  for (int r = 0; r < 5; r++) round_of(&p, 0.01, 1000);
  CHECK(fabs(wsp__pace_window(&p) - 4000) < 1e-9, "grew to %g",
        wsp__pace_window(&p));
  /* Severe: round trips 20x what the window explains: halve. */
  CHECK(fabs(round_of(&p, 0.01 * 20 * 3, 2000) - 2000) < 1e-9 &&
            p.n_halve == 1,
        "halved to %g", wsp__pace_window(&p));
  /* Never below one batch, whatever happens. */
  for (int r = 0; r < 20; r++) round_of(&p, 10.0, 1000);
  CHECK(fabs(wsp__pace_window(&p) - wsp__pace_unit(&p)) < 1e-9, "floor: %g",
        wsp__pace_window(&p));
  /* A faster path lowers the base: then nothing reads as queued. */
  double before = wsp__pace_window(&p);
  CHECK(round_of(&p, 0.001, 1000) > before, "grows on an unloaded path");
  /* Nonsense samples are ignored. */
  double w = wsp__pace_window(&p);
  uint64_t n = p.n_increase + p.n_decrease + p.n_halve;
  double acked = p.round_acked;
  wsp__pace_ack(&p, 0, 1000, 1000);
  wsp__pace_ack(&p, -1, 1000, 1000);
  wsp__pace_ack(&p, 0.01, 0, 1000);
  wsp__pace_ack(&p, 0.01, -5, 1000);
  CHECK(wsp__pace_window(&p) == w && p.round_acked == acked &&
            p.n_increase + p.n_decrease + p.n_halve == n,
        "ignored");
  /* Never above the configured ceiling. */
  for (int r = 0; r < 3000; r++) round_of(&p, 0.001, 1000);
  CHECK(wsp__pace_window(&p) == 1e6, "ceiling: %g", wsp__pace_window(&p));
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
  CHECK(wsp__pace_window(&p) == 16e6, "fixed window is cfg.window");
  CHECK(!wsp__pace_may_send(&p, 16e6, 100), "fixed: window still bounds");
  /* Acks do not change a fixed window. */
  for (int i = 0; i < 10; i++) wsp__pace_ack(&p, 5.0, 65536, 65536);
  CHECK(wsp__pace_window(&p) == 16e6, "fixed window unchanged by acks");
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
  CHECK(wsp_shuffle_config_from_env(&c) == WSP_OK, "env: %s", wsp_last_error());
  CHECK(c.batch_bytes == 32768 && fabs(c.batch_delay - 0.0005) < 1e-12 &&
            c.mem_limit == (size_t)8 << 20 && c.progress_thread == 1,
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
                          {"WSP_SHUFFLE_PROGRESS_THREAD", "yes"}};
  for (int i = 0; i < 6; i++) {
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
                        "WSP_SHUFFLE_PROGRESS_THREAD"};
  for (int i = 0; i < 5; i++) unsetenv(vars[i]);

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
  wsp_shuffle_config_t a, b;
  wsp_shuffle_config_init(&a);
  wsp_shuffle_config_init(&b);
  b.progress_thread = 1;
  CHECK(wsp__shuffle_config_fingerprint(&a) == wsp__shuffle_config_fingerprint(&b),
        "the progress thread is a local choice");
  b.mem_limit *= 2;
  CHECK(wsp__shuffle_config_fingerprint(&a) != wsp__shuffle_config_fingerprint(&b),
        "mem_limit must agree");
}

int main(void) {
  test_state_machine();
  test_fixed();
  test_short_path();
  test_long_path();
  test_capacity_drop();
  test_competition();
  test_limits();
  test_grow();
  test_env();
  return check_summary("test_shuffle_pace");
}
