/*
 * Back-off for polling loops. MPI has no call that waits for "a message
 * from anyone or this request", so NBX-style loops and the collectives'
 * waits poll. When polls find nothing, spinning would take a core away from
 * the processes that could make progress (jobs often share cores), so idle
 * passes escalate: a few immediate retries, then sched_yield, then sleeps.
 * Any progress resets the escalation.
 *
 * A sleep is at most 1/8 of the time this wait has already lasted (and at
 * most cfg.poll_max_sleep_us): a short wait (a small message, a latency
 * of tens of microseconds) polls every few microseconds, while a long one
 * (a segment of a large transfer, milliseconds on a 100 Mbit/s link) wakes
 * up rarely, so that eight ranks waiting on two cores do not spend a core
 * on wake-ups between the socket reads that move their data. Sleeping at
 * most 1/8 of what was waited so far delays noticing a completion by at
 * most an eighth of the wait. (The earlier rule, sleeps doubling up to a
 * fixed 50 us, woke 20000 times a second per waiting rank: on netlab 8
 * ranks forwarding a pipelined broadcast spent 10-14% of a core each on
 * it.) Progress of MPI libraries without a progress thread happens in
 * these polls; between them the kernel's socket buffers keep the data
 * moving.
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
  WSP__SLEEP_FRACTION = 8 /* sleep <= waited / 8 */
};

void wsp__backoff_init(wsp__backoff_t *b, const wsp_comm_t *comm) {
  b->idle = 0;
  b->since = 0;
  b->max_sleep_us = comm->cfg.poll_max_sleep_us;
}

void wsp__backoff_reset(wsp__backoff_t *b) {
  b->idle = 0;
  b->since = 0;
}

void wsp__backoff_idle(wsp__backoff_t *b) {
  if (b->idle++ == 0) b->since = MPI_Wtime();
#ifdef WSP_SIMGRID
  if (b->max_sleep_us == 0) return;
#else
  if (b->idle <= WSP__SPIN_PASSES) return;
  if (b->idle <= WSP__YIELD_PASSES || b->max_sleep_us == 0) {
    sched_yield();
    return;
  }
#endif
  double waited_us = (MPI_Wtime() - b->since) * 1e6;
  double us = waited_us / WSP__SLEEP_FRACTION;
  if (us > b->max_sleep_us) us = b->max_sleep_us;
  if (us < 1) us = 1;
  unsigned u = (unsigned)us;
  struct timespec ts = {(time_t)(u / 1000000u), (long)(u % 1000000u) * 1000L};
  nanosleep(&ts, NULL);
}
