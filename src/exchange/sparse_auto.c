/* SPDX-License-Identifier: BSD-3-Clause */
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
 * 1. Explore. The first exploration (and the first after the pattern
 *    changed) runs nbx, pex, alltoallv three times over and one more round
 *    of nbx; later ones run each candidate twice and then the current
 *    choice. Each exploring round carries, in a small non-blocking sum
 *    (src/core/sum.c) overlapped with the round, the sum over ranks of the
 *    previous round's time and of this round's message count and bytes, so
 *    after the last exploring round every rank knows the same timings (the
 *    last round only reports the one before it).
 * 2. Commit to the candidate with the smallest of its timings (one round is
 *    a noisy sample: a shaped link's queue, a shared core) and run it for
 *    `interval` rounds (64 by default).
 * 3. Explore again when the interval is over. If the same algorithm wins,
 *    the interval doubles (up to 64 times the first), so a steady job spends
 *    ever less time exploring; if another wins, it starts over.
 * 4. A candidate that took 1.5 times the winner's time or more sits out the
 *    next exploration, then 2, 4, ... up to 16 while it keeps losing that
 *    badly: re-measuring a clear loser is what makes exploring expensive.
 *    Within an exploration, a candidate whose first timing is 4 times the
 *    fastest's or more is not run again in that exploration.
 * 5. NBX and alltoallv rounds learn the round's total message count and
 *    bytes for free; if either moves by about 4x from what was measured,
 *    the pattern has changed: auto forgets what it knew and explores.
 *
 * Every input to this state machine is identical on all ranks (sums over
 * all ranks), so all ranks always choose the same algorithm. The state
 * machine is pure logic, unit-tested without MPI; the auto round at the end
 * of this file drives it. The candidates are every other algorithm of
 * WSP_SPARSE_ALG_MAP (wirespeed.h).
 */
#include "sparse_internal.h"

#include <stdio.h>
#include <string.h>

enum {
  WSP__AUTO_INTERVAL_GROWTH_MAX = 64,
  WSP__AUTO_SKIP_MAX = 16,
  WSP__AUTO_PRUNE = 4 /* see wsp__prune */
};

/* Candidate i is algorithm i + 1: auto is row 0 and the others follow. */
#define WSP__CAND(i) ((wsp_sparse_alg_t)(i))

static int wsp__log2_bucket(uint64_t v) {
  int b = 0;
  while (v) v >>= 1, b++;
  return b;
}

/* Lays out the next exploration. `full`: every candidate
 * WSP__AUTO_FULL_REPS times (no knowledge yet); otherwise each candidate not
 * sitting out, twice. The last round only carries the report of the one
 * before it. */
static void wsp__plan(wsp__sparse_auto_t *a, int full) {
  int out[WSP_SPARSE_ALG_COUNT] = {0};
  for (int c = 0; c < WSP_SPARSE_ALG_COUNT; c++)
    if (!full && a->skip[c] > 0) {
      out[c] = 1; /* sits out this exploration */
      a->skip[c]--;
    }
  a->nplan = 0;
  for (int rep = 0; rep < (full ? WSP__AUTO_FULL_REPS : 2); rep++)
    for (int i = 0; i < WSP__AUTO_NCAND; i++)
      if (!out[WSP__CAND(i)]) a->plan[a->nplan++] = WSP__CAND(i);
  a->plan[a->nplan++] = full ? WSP_SPARSE_NBX : a->choice;
  a->step = 0;
  a->exploring = 1;
  memset(a->have_time, 0, sizeof a->have_time);
  memset(a->time_ns, 0, sizeof a->time_ns);
}

void wsp__sparse_auto_init(wsp__sparse_auto_t *a, uint64_t interval) {
  memset(a, 0, sizeof *a);
  a->first_interval = interval ? interval : 1;
  a->interval = a->first_interval;
  a->choice = WSP_SPARSE_NBX;
  wsp__plan(a, 1);
}

void wsp__sparse_auto_restart(wsp__sparse_auto_t *a) { wsp__plan(a, 0); }

/* The pattern changed: nothing measured so far holds. */
static void wsp__forget(wsp__sparse_auto_t *a) {
  memset(a->skip, 0, sizeof a->skip);
  memset(a->skip_len, 0, sizeof a->skip_len);
  a->interval = a->first_interval;
  a->explorations = 0;
  wsp__plan(a, 1);
}

wsp_sparse_alg_t wsp__sparse_auto_next(const wsp__sparse_auto_t *a, int p,
                                       int *report) {
  *report = 0;
  if (p <= 1) return WSP_SPARSE_NBX; /* nothing to exchange with anyone */
  if (!a->exploring) return a->choice;
  *report = 1;
  return a->plan[a->step];
}

static void wsp__set_class(wsp__sparse_auto_t *a, const wsp__sparse_stats_t *s) {
  a->have_cls = 1;
  a->cls_sends = wsp__log2_bucket(s->sends);
  a->cls_bytes = wsp__log2_bucket(s->bytes);
}

static int wsp__class_changed(const wsp__sparse_auto_t *a,
                              const wsp__sparse_stats_t *s) {
  int cs = wsp__log2_bucket(s->sends), cb = wsp__log2_bucket(s->bytes);
  if (!a->have_cls) return 0;
  return cs - a->cls_sends >= 2 || a->cls_sends - cs >= 2 ||
         cb - a->cls_bytes >= 2 || a->cls_bytes - cb >= 2;
}

/* The candidate with the smallest timing so far, or WSP_SPARSE_ALG_COUNT. */
static wsp_sparse_alg_t wsp__fastest(const wsp__sparse_auto_t *a) {
  wsp_sparse_alg_t best = WSP_SPARSE_ALG_COUNT;
  for (int c = 0; c < WSP_SPARSE_ALG_COUNT; c++)
    if (a->have_time[c] &&
        (best == WSP_SPARSE_ALG_COUNT || a->time_ns[c] < a->time_ns[best]))
      best = (wsp_sparse_alg_t)c;
  return best;
}

/* Drops the remaining rounds of a candidate that already took
 * WSP__AUTO_PRUNE times the fastest timing of this exploration: measuring
 * it again cannot make it the winner unless the first sample was off by
 * that much, and each of its rounds costs that many rounds of the winner
 * (alltoallv on 16 oversubscribed MPICH ranks, which busy-poll, took an
 * order of magnitude longer than NBX: docs/results/sparse.md,
 * "Loopback"). Rounds already
 * started (up to `step`) are kept; the last round, which only carries the
 * report of the one before it, runs the fastest candidate instead. */
static void wsp__prune(wsp__sparse_auto_t *a) {
  wsp_sparse_alg_t best = wsp__fastest(a);
  if (best == WSP_SPARSE_ALG_COUNT) return;
  for (int c = 0; c < WSP_SPARSE_ALG_COUNT; c++) {
    if (!a->have_time[c] || c == (int)best ||
        a->time_ns[c] < WSP__AUTO_PRUNE * a->time_ns[best])
      continue;
    int k = a->step + 1;
    for (int i = k; i < a->nplan; i++)
      if (a->plan[i] != (wsp_sparse_alg_t)c || i == a->nplan - 1)
        a->plan[k++] = a->plan[i] == (wsp_sparse_alg_t)c ? best : a->plan[i];
    a->nplan = k;
  }
}

static void wsp__commit(wsp__sparse_auto_t *a) {
  wsp_sparse_alg_t best = wsp__fastest(a);
  if (best == WSP_SPARSE_ALG_COUNT) best = a->choice; /* nothing measured */
  for (int c = 0; c < WSP_SPARSE_ALG_COUNT; c++) {
    if (!a->have_time[c] || c == (int)best) continue;
    if (2 * a->time_ns[c] >= 3 * a->time_ns[best]) {
      a->skip_len[c] = a->skip_len[c] ? 2 * a->skip_len[c] : 1;
      if (a->skip_len[c] > WSP__AUTO_SKIP_MAX) a->skip_len[c] = WSP__AUTO_SKIP_MAX;
      a->skip[c] = a->skip_len[c];
    } else {
      a->skip_len[c] = 0;
    }
  }
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
}

void wsp__sparse_auto_update(wsp__sparse_auto_t *a, int p,
                             const wsp__sparse_stats_t *stats,
                             const uint64_t *prev_time_ns) {
  if (p <= 1) return;
  if (a->exploring) {
    /* This round's report carries the previous round's time; the previous
     * exploring round is step - 1 (none for the first step). */
    if (prev_time_ns && a->step > 0) {
      wsp_sparse_alg_t prev = a->plan[a->step - 1];
      if (!a->have_time[prev] || *prev_time_ns < a->time_ns[prev])
        a->time_ns[prev] = *prev_time_ns;
      a->have_time[prev] = 1;
      wsp__prune(a);
    }
    if (stats) {
      if (wsp__class_changed(a, stats)) {
        wsp__set_class(a, stats);
        wsp__forget(a); /* timings of another pattern: start over */
        return;
      }
      wsp__set_class(a, stats);
    }
    if (++a->step < a->nplan) return;
    wsp__commit(a);
    return;
  }
  if (stats && wsp__class_changed(a, stats)) {
    wsp__set_class(a, stats);
    wsp__forget(a);
    return;
  }
  if (a->left > 0) a->left--;
  if (a->left == 0) wsp__sparse_auto_restart(a);
}

/* ---- the auto round ----
 * Picks this round's algorithm, runs it, and on exploring rounds carries
 * the timing report in a small non-blocking sum overlapped with the round:
 * the sum over ranks of the previous auto round's time and of this round's
 * messages and bytes. Then the state machine steps, on every rank alike. */
int wsp__sparse_auto(wsp__sparse_round_t *r) {
  wsp_comm_t *comm = r->comm;
  if (comm->sparse == NULL)
    return wsp__fail(comm, WSP_ERR_INTERNAL, "sparse auto: no chooser on this communicator");
  wsp__sparse_auto_t *au = &comm->sparse->chooser;
  int report = 0;
  wsp_sparse_alg_t alg = wsp__sparse_auto_next(au, comm->size, &report);
  wsp__sum_t rep;
  int rc = WSP_OK;
  if (report) {
    uint64_t rep_in[3] = {au->last_ns, r->local.sends, r->local.bytes};
    rc = wsp__sum_start(&rep, comm,
                        r->parity ? WSP__TAG_SPARSE_REPORT_ODD : WSP__TAG_SPARSE_REPORT_EVEN,
                        rep_in, 3);
    if (rc == WSP_OK) {
      int done; /* post the first step now, so it overlaps the round */
      rc = wsp__sum_test(&rep, &done);
    }
    if (rc != WSP_OK) return rc;
  }
  rc = wsp__sparse_run(r, alg);
  if (report && rc == WSP_OK) rc = wsp__sum_wait(&rep);
  if (rc != WSP_OK) return rc; /* an MPI failure: already recorded */
  /* Every input is a sum over all ranks: all ranks step alike. */
  wsp__sparse_stats_t st;
  const wsp__sparse_stats_t *stp = NULL;
  uint64_t prev = 0;
  if (report) {
    st.sends = rep.val[1];
    st.bytes = rep.val[2];
    prev = rep.val[0];
    stp = &st;
  } else if (r->have_global) {
    stp = &r->global;
  }
  int was_exploring = au->exploring;
  wsp__sparse_auto_update(au, comm->size, stp, report ? &prev : NULL);
  if (was_exploring && !au->exploring && comm->rank == 0 &&
      comm->cfg.log_level >= WSP_LOG_INFO) {
    char times[256] = "";
    size_t used = 0;
    for (int i = 0; i < WSP__AUTO_NCAND; i++) {
      wsp_sparse_alg_t c = WSP__CAND(i);
      int n = snprintf(times + used, sizeof times - used, "%s%s %.3g s", i ? ", " : "",
                       wsp_sparse_alg_info(c)->name, au->time_ns[c] * 1e-9);
      if (n > 0 && (size_t)n < sizeof times - used) used += (size_t)n;
    }
    wsp__log(comm, WSP_LOG_INFO,
             "sparse auto: runs %s for %llu rounds (summed round times: %s; 0 = not "
             "measured)",
             wsp_sparse_alg_info(au->choice)->name, (unsigned long long)au->interval, times);
  }
  return WSP_OK;
}
