/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Back-off for polling loops. MPI has no call that waits for "a message
 * from anyone or this request", so NBX-style loops and the collectives'
 * waits poll. When polls find nothing, spinning would take a core away from
 * the processes that could make progress (jobs often share cores), so idle
 * passes escalate: a few immediate retries, then sched_yield, then sleeps
 * that double from 1 us up to a cap. Any progress resets the escalation.
 *
 * The cap is 50 us (WSP__SHORT_SLEEP_US) for waits whose end matters to
 * the microsecond: small messages, the steps of NBX's consensus, anything
 * on a latency-bound critical path. A wait for a bulk transfer whose
 * length the caller can estimate (a 64 KiB segment of a pipelined
 * broadcast takes 5 ms on a 100 Mbit/s link) may sleep up to 1/8 of that
 * estimate (wsp__backoff_init_bulk), at most cfg.poll_max_sleep_us: with
 * the 50 us cap such a rank wakes every 50 us for milliseconds, and on
 * netlab the ranks forwarding a pipelined broadcast spent a noticeable
 * share of a core on waking up (docs/results/coll.md, "Polling back-off:
 * waking up during bulk waits"). Noticing the end late by up to 1/8 of a
 * segment costs a pipeline nothing while the next segments are already
 * under way: progress of MPI libraries without a progress thread happens
 * in these polls, and between them the kernel's socket buffers keep the
 * data moving. (Growing every long wait's sleeps to 1/8 of the time
 * waited, whatever it waited for, made NBX rounds slower under SimGrid: a
 * rank that waited long for a slow peer then noticed each step of the
 * consensus late; docs/results/sparse.md, "Sleeping longer in every long
 * wait, tried under SimGrid and not kept".)
 *
 * A wait whose expected length is known and short (at most 1 ms,
 * WSP__POLL_EXPECT_MAX_S; a 4 KiB message on a 100 Mbit/s link takes
 * 330 us) keeps polling, yielding the core between polls, until 1.25 times
 * that length has passed, and only then starts to sleep. Otherwise a wait
 * longer than the spinning and yielding passes (about 250 us) would notice
 * its end up to one 50 us sleep late (more on Linux, whose timer slack
 * makes any sleep last 50 us or so), and a latency-bound algorithm pays
 * that on every step: under SimGrid recursive doubling at 4 KiB trailed
 * the simulated MPI's own recursive doubling by about a sleep per step,
 * and no longer does. Yielding lets another runnable process on the core
 * go first, but unlike a sleep the waiting rank stays runnable, so on
 * shared cores this costs CPU for at most 1.25 ms per wait; the gain was
 * measured only under SimGrid (docs/results/coll.md, "Small messages
 * under SimGrid").
 *
 * A time limit (cfg.timeout, src/core/timeout.c) is kept here too: past
 * the spinning passes, an idle pass reads the clock and reports when the
 * idle stretch since the last progress (wsp__backoff_reset) has outlasted
 * the limit, so every loop that backs off can end instead of waiting
 * forever for a rank that died or stopped. An idle pass also ends the wait
 * once a lane of the collectives' transport has failed on any rank
 * (wsp_comm_t.lane_fault), limit or not; the same functions then report
 * that failure instead of a timeout.
 *
 * Under SimGrid (smpicc maps nanosleep to a simulated sleep) a spinning,
 * yielding or polling pass is a simulated sleep of 1 us (WSP__SIM_PASS_US;
 * with the scripts' smpi/test of 1 us the pass costs about 2 us): a pass
 * on a real core (a test of the requests, perhaps a sched_yield) takes
 * about that long, and a pass that cost no simulated time could neither
 * reach a time limit nor let the network move. Skipping them instead, and
 * going straight to the doubling sleeps, charges a short wait up to twice
 * what a real core polling for its first 250 us sees, and latency-bound
 * algorithms then trail the simulated MPI running the same steps
 * (docs/results/simgrid.md, "Polling passes cost simulated time"). The
 * sleeps after the passes are the same as in real runs.
 */
#include "wsp_internal.h"

#include <sched.h>
#include <time.h>

enum {
  WSP__SPIN_PASSES = 32,
  WSP__YIELD_PASSES = 256,
  WSP__SHORT_SLEEP_US = 50, /* the cap of an ordinary wait */
  WSP__BULK_FRACTION = 8,   /* a bulk wait sleeps <= its estimate / 8 */
  WSP__SIM_PASS_US = 1      /* a polling pass under SimGrid */
};

/* The longest expected wait that polls until it should be over (see the
 * prose above), and the margin past the expected end. */
#define WSP__POLL_EXPECT_MAX_S 1e-3
#define WSP__POLL_EXPECT_MARGIN 1.25

static unsigned wsp__min_u(unsigned a, unsigned b) { return a < b ? a : b; }

/* The clock of the time limits. Real builds read the monotonic clock, which
 * works before MPI_Init (MPICH refuses MPI_Wtime there); SimGrid builds use
 * MPI_Wtime, which is simulated time there (the library runs under SMPI
 * only between MPI_Init and MPI_Finalize). */
double wsp__now(void) {
#ifdef WSP_SIMGRID
  return MPI_Wtime();
#else
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
#endif
}

void wsp__backoff_init(wsp__backoff_t *b, const wsp_comm_t *comm) {
  b->cap_us = wsp__min_u(WSP__SHORT_SLEEP_US, comm->cfg.poll_max_sleep_us);
  b->spin_passes = WSP__SPIN_PASSES;
  b->yield_passes = WSP__YIELD_PASSES - WSP__SPIN_PASSES;
  b->poll_until = 0;
  b->timeout = comm->cfg.timeout;
  const wsp_comm_t *o = comm->owner ? comm->owner : comm;
  b->lanes = o->xport ? o->lanes : NULL;
  b->drive = o->xport ? o->xport->drive : NULL;
  b->lane_failed = &o->lane_fault.failed;
  wsp__backoff_reset(b);
}

void wsp__backoff_expect(wsp__backoff_t *b, const wsp_comm_t *comm,
                         double expect_seconds) {
  b->cap_us = wsp__min_u(WSP__SHORT_SLEEP_US, comm->cfg.poll_max_sleep_us);
  double us = expect_seconds * 1e6 / WSP__BULK_FRACTION;
  if (us > b->cap_us)
    b->cap_us = us >= comm->cfg.poll_max_sleep_us ? comm->cfg.poll_max_sleep_us
                                                  : (unsigned)us;
}

void wsp__backoff_init_bulk(wsp__backoff_t *b, const wsp_comm_t *comm,
                            double expect_seconds) {
  wsp__backoff_init(b, comm);
  wsp__backoff_expect(b, comm, expect_seconds);
  if (expect_seconds > 0 && expect_seconds <= WSP__POLL_EXPECT_MAX_S)
    b->poll_until = wsp__now() + WSP__POLL_EXPECT_MARGIN * expect_seconds;
  /* A wait on one transfer sees no progress until it ends: the limit
   * counts from the time the model expects it to take. */
  if (b->timeout > 0 && expect_seconds > 0) b->timeout += expect_seconds;
}

void wsp__backoff_reset(wsp__backoff_t *b) {
  b->idle = 0;
  b->sleep_us = 1;
  b->idle_since = 0;
}

/* Whether the idle stretch has outlasted the time limit; the clock is read
 * only with a limit, and not during the first spinning passes. */
static int wsp__backoff_expired(wsp__backoff_t *b) {
  if (!(b->timeout > 0) || b->idle <= b->spin_passes) return 0;
  double now = wsp__now();
  if (b->idle_since == 0) {
    b->idle_since = now;
    return 0;
  }
  return now - b->idle_since > b->timeout;
}

void wsp__sleep_seconds(double s) {
  if (!(s > 0)) return;
  struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9 + 0.5)};
  if (ts.tv_nsec >= 1000000000L) ts.tv_sec++, ts.tv_nsec -= 1000000000L;
  nanosleep(&ts, NULL);
}

#ifdef WSP_SIMGRID
double wsp__backoff_sim_pass(wsp__backoff_t *b, double now) {
  b->idle++;
  const int polling = b->idle <= b->spin_passes + b->yield_passes ||
                      (b->poll_until > 0 && now < b->poll_until);
  if (polling || b->cap_us == 0) return WSP__SIM_PASS_US * 1e-6;
  unsigned us = wsp__min_u(b->sleep_us, b->cap_us);
  b->sleep_us = wsp__min_u(2 * us, b->cap_us);
  return us * 1e-6;
}

int wsp__backoff_idle(wsp__backoff_t *b) {
  /* Past the spinning and yielding passes, the clock is read only by waits
   * that have a time limit to poll to (a read costs simulated time). */
  const int timed = b->poll_until > 0 && b->idle + 1 > b->spin_passes + b->yield_passes;
  wsp__sleep_seconds(wsp__backoff_sim_pass(b, timed ? wsp__now() : 0));
  return wsp__backoff_expired(b);
}
#else
/* With transfers in flight on the lanes, an idle pass is a pass of their
 * progress, and its sleep is spent waiting on their sockets (woken early
 * when one is ready). Bytes moving on them count as progress for the time
 * limit, which a transfer that takes longer than the limit needs, but not
 * for the escalation: a pass that finds the lanes busy still sleeps. */
static int wsp__backoff_drive(wsp__backoff_t *b, double seconds) {
  if (b->lanes == NULL) return 0;
  int moved = b->drive(b->lanes, seconds);
  if (moved > 0) b->idle_since = 0;
  return moved >= 0 && seconds > 0;
}

int wsp__backoff_idle(wsp__backoff_t *b) {
  b->idle++;
  /* A lane of the collectives' transport failed here or elsewhere: what
   * this wait waits for may never come, with or without a time limit. */
  if (*b->lane_failed) return 1;
  if (wsp__backoff_expired(b)) return 1;
  /* Past the spinning and yielding passes, the clock is read only by waits
   * that have a time limit to poll to. */
  const int polling = b->idle <= b->spin_passes + b->yield_passes ||
                      (b->poll_until > 0 && wsp__now() < b->poll_until);
  if (b->idle <= b->spin_passes) {
    (void)wsp__backoff_drive(b, 0);
    return 0;
  }
  unsigned us = wsp__min_u(b->sleep_us, b->cap_us);
  if (polling || b->cap_us == 0) {
    /* With transfers on the lanes, the sleeps start at once: a lane that
     * becomes ready wakes the poll they are spent in, so only what waits
     * on MPI alone is noticed up to a sleep late. Yielding passes polled
     * every socket of every pair each time, and with eight ranks on two
     * cores the polls took most of the cores (docs/results/p2p.md, "The
     * lanes under the collectives"). */
    if (b->lanes && us > 0 && wsp__backoff_drive(b, us * 1e-6)) {
      b->sleep_us = wsp__min_u(2 * us, b->cap_us);
      return 0;
    }
    sched_yield();
    return 0;
  }
  if (!wsp__backoff_drive(b, us * 1e-6)) wsp__sleep_seconds(us * 1e-6);
  b->sleep_us = wsp__min_u(2 * us, b->cap_us);
  return 0;
}
#endif
