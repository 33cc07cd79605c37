/*
 * Back-off for polling loops. MPI has no call that waits for "a message
 * from anyone or this request", so NBX-style loops poll. When polls find
 * nothing, spinning would take a core away from the processes that could
 * make progress (jobs often share cores), so idle passes escalate: a few
 * immediate retries, then sched_yield, then sleeps that double up to
 * cfg.poll_max_sleep_us. Any progress resets the escalation.
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

enum { WSP__SPIN_PASSES = 32, WSP__YIELD_PASSES = 256 };

void wsp__backoff_init(wsp__backoff_t *b, const wsp_comm_t *comm) {
  b->idle = 0;
  b->sleep_us = 1;
  b->max_sleep_us = comm->cfg.poll_max_sleep_us;
  b->spin_passes = WSP__SPIN_PASSES;
  b->yield_passes = WSP__YIELD_PASSES - WSP__SPIN_PASSES;
}

void wsp__backoff_reset(wsp__backoff_t *b) {
  b->idle = 0;
  b->sleep_us = 1;
}

void wsp__backoff_idle(wsp__backoff_t *b) {
  b->idle++;
#ifdef WSP_SIMGRID
  if (b->max_sleep_us == 0) return;
#else
  if (b->idle <= b->spin_passes) return;
  if (b->idle <= b->spin_passes + b->yield_passes || b->max_sleep_us == 0) {
    sched_yield();
    return;
  }
#endif
  struct timespec ts = {(time_t)(b->sleep_us / 1000000u),
                        (long)(b->sleep_us % 1000000u) * 1000L};
  nanosleep(&ts, NULL);
  if (b->sleep_us < b->max_sleep_us) {
    b->sleep_us *= 2;
    if (b->sleep_us > b->max_sleep_us) b->sleep_us = b->max_sleep_us;
  }
}
