/*
 * auto — choosing the sparse-exchange algorithm by measuring it.
 *
 * Which algorithm wins depends on things no formula here knows well: the
 * MPI library's all-to-all and reduce-scatter, whether ranks share cores,
 * the network's latency and the pattern's density (on 16 oversubscribed
 * loopback ranks PEX beats NBX; at large p NBX wins; MPI_Alltoallv can win
 * dense exchanges of small messages on a real network). So auto measures,
 * the way a careful user would, and keeps measuring as the job runs:
 *
 * 1. Explore: the next 7 rounds run nbx, pex, alltoallv, nbx, pex,
 *    alltoallv and a last nbx. Each exploring round also carries, in a small
 *    non-blocking sum (src/core/sum.c) overlapped with the round, the sum
 *    over ranks of the
 *    previous round's time and of this round's message count and bytes, so
 *    after the 7th round every rank knows the same 6 timings.
 * 2. Commit to the candidate with the smallest of its two timings and run
 *    it for `interval` rounds (64 by default).
 * 3. Explore again when the interval is over. If the same algorithm wins,
 *    the interval doubles (up to 64 times the first), so a steady job spends
 *    ever less time exploring; if another wins, it starts over at 64.
 * 4. NBX and alltoallv rounds learn the round's total message count and
 *    bytes for free; if either moves by 4x or more from what was measured,
 *    the pattern has changed and auto explores at once.
 *
 * Every input to this state machine is identical on all ranks (sums over
 * all ranks), so all ranks always choose the same algorithm. This file is
 * pure logic, unit-tested without MPI.
 */
#include "sparse_internal.h"

#include <string.h>

static const wsp_sparse_alg_t wsp__explore_order[WSP__AUTO_EXPLORE_ROUNDS] = {
    WSP_SPARSE_NBX, WSP_SPARSE_PEX, WSP_SPARSE_ALLTOALLV, WSP_SPARSE_NBX,
    WSP_SPARSE_PEX, WSP_SPARSE_ALLTOALLV, WSP_SPARSE_NBX};

enum { WSP__AUTO_INTERVAL_GROWTH_MAX = 64 };

static int wsp__log2_bucket(uint64_t v) {
  int b = 0;
  while (v) v >>= 1, b++;
  return b;
}

void wsp__sparse_auto_init(wsp__sparse_auto_t *a, uint64_t interval) {
  memset(a, 0, sizeof *a);
  a->first_interval = interval ? interval : 1;
  a->interval = a->first_interval;
  a->exploring = 1;
  a->choice = WSP_SPARSE_NBX;
}

wsp_sparse_alg_t wsp__sparse_auto_next(const wsp__sparse_auto_t *a, int p,
                                       int *report) {
  *report = 0;
  if (p <= 1) return WSP_SPARSE_NBX; /* nothing to exchange with anyone */
  if (!a->exploring) return a->choice;
  *report = 1;
  return wsp__explore_order[a->step];
}

static void wsp__set_class(wsp__sparse_auto_t *a, const wsp__sparse_stats_t *s) {
  a->cls_sends = wsp__log2_bucket(s->sends);
  a->cls_bytes = wsp__log2_bucket(s->bytes);
}

void wsp__sparse_auto_update(wsp__sparse_auto_t *a, int p,
                             const wsp__sparse_stats_t *stats,
                             const uint64_t *prev_time_ns) {
  if (p <= 1) return;
  if (a->exploring) {
    /* This round's report carries the previous round's time; the previous
     * exploring round is step - 1 (none for the first step). */
    if (prev_time_ns && a->step > 0) {
      wsp_sparse_alg_t prev = wsp__explore_order[a->step - 1];
      if (!a->have_time[prev] || *prev_time_ns < a->time_ns[prev])
        a->time_ns[prev] = *prev_time_ns;
      a->have_time[prev] = 1;
    }
    if (stats) wsp__set_class(a, stats);
    if (++a->step < WSP__AUTO_EXPLORE_ROUNDS) return;
    /* Commit to the fastest candidate. */
    wsp_sparse_alg_t best = WSP_SPARSE_NBX;
    for (int c = 1; c < WSP_SPARSE_ALG_COUNT; c++)
      if (a->have_time[c] &&
          (!a->have_time[best] || a->time_ns[c] < a->time_ns[best]))
        best = (wsp_sparse_alg_t)c;
    if (a->explorations > 0 && best == a->choice) {
      if (a->interval < a->first_interval * WSP__AUTO_INTERVAL_GROWTH_MAX)
        a->interval *= 2;
    } else {
      a->interval = a->first_interval;
    }
    a->choice = best;
    a->explorations++;
    a->exploring = 0;
    a->left = a->interval;
    return;
  }
  if (stats) {
    int cs = wsp__log2_bucket(stats->sends), cb = wsp__log2_bucket(stats->bytes);
    if (cs - a->cls_sends >= 2 || a->cls_sends - cs >= 2 ||
        cb - a->cls_bytes >= 2 || a->cls_bytes - cb >= 2) {
      a->interval = a->first_interval;
      a->left = 0;
    }
  }
  if (a->left > 0) a->left--;
  if (a->left == 0) wsp__sparse_auto_restart(a);
}

void wsp__sparse_auto_restart(wsp__sparse_auto_t *a) {
  a->exploring = 1;
  a->step = 0;
  memset(a->have_time, 0, sizeof a->have_time);
  memset(a->time_ns, 0, sizeof a->time_ns);
}
