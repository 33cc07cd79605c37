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
 * estimate (wsp__backoff_init_bulk), at most cfg.poll_max_sleep_us: with a
 * 50 us cap such a rank woke 20000 times a second, and 8 netlab ranks
 * forwarding a pipelined broadcast each spent 10-14% of a core on waking
 * up. Noticing the end late by up to 1/8 of a segment costs a pipeline
 * nothing while the next segments are already under way: progress of MPI
 * libraries without a progress thread happens in these polls, and between
 * them the kernel's socket buffers keep the data moving. (Growing every
 * long wait's sleeps to 1/8 of the time waited, whatever it waited for,
 * made NBX rounds 25% slower under SimGrid: a rank that waited long for a
 * slow peer then noticed each step of the consensus late.)
 *
 * Under SimGrid (smpicc maps nanosleep to a simulated sleep) the spinning
 * and yielding passes are skipped: they would cost wall-clock time without
 * letting simulated time advance, while a simulated sleep is one event.
 * The sleeps are the same as in real runs, so the simulation also charges
 * the latency this back-off really adds.
 */
#include "wsp_internal.h"

#include <sched.h>
#include <time.h>

enum {
  WSP__SPIN_PASSES = 32,
  WSP__YIELD_PASSES = 256,
  WSP__SHORT_SLEEP_US = 50, /* the cap of an ordinary wait */
  WSP__BULK_FRACTION = 8    /* a bulk wait sleeps <= its estimate / 8 */
};

static unsigned wsp__min_u(unsigned a, unsigned b) { return a < b ? a : b; }

void wsp__backoff_init(wsp__backoff_t *b, const wsp_comm_t *comm) {
  b->cap_us = wsp__min_u(WSP__SHORT_SLEEP_US, comm->cfg.poll_max_sleep_us);
  b->spin_passes = WSP__SPIN_PASSES;
  b->yield_passes = WSP__YIELD_PASSES - WSP__SPIN_PASSES;
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
}

void wsp__backoff_reset(wsp__backoff_t *b) {
  b->idle = 0;
  b->sleep_us = 1;
}

void wsp__backoff_idle(wsp__backoff_t *b) {
  b->idle++;
#ifdef WSP_SIMGRID
  if (b->cap_us == 0) return;
#else
  if (b->idle <= b->spin_passes) return;
  if (b->idle <= b->spin_passes + b->yield_passes || b->cap_us == 0) {
    sched_yield();
    return;
  }
#endif
  unsigned us = wsp__min_u(b->sleep_us, b->cap_us);
  struct timespec ts = {(time_t)(us / 1000000u), (long)(us % 1000000u) * 1000L};
  nanosleep(&ts, NULL);
  b->sleep_us = wsp__min_u(2 * us, b->cap_us);
}
