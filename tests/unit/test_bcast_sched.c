/* SPDX-License-Identifier: BSD-3-Clause */
/* Scatter-based broadcast schedules (src/patterns/bcast_sched.h) for every
 * p up to 130, simulated step by step with a table of which rank holds
 * which block:
 *   scatter  every parent's send is the child's receive, the sender holds
 *            what it sends, and afterwards rank r holds exactly
 *            wsp__bsched_scatter_held(r);
 *   ring and recursive doubling, starting from the scatter's holdings:
 *            every send has the matching receive at the peer (same blocks)
 *            and vice versa, the sender holds the blocks at the start of
 *            the step, the receiver holds none of them (nothing is sent
 *            twice), a rank's send and receive blocks in one step do not
 *            overlap, and at the end every rank holds every block.
 *   counts   ring: p - 1 steps; recursive doubling: ceil(lg p) rounds and
 *            no fix-ups for powers of two, at most i fix-ups in round i,
 *            and every rank receives p - 1 - (scatter blocks - 1) blocks
 *            over the whole allgather. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "patterns/bcast_sched.h"
#include "patterns/tree.h"

enum { MAXP = 130 };

static unsigned char held[MAXP][MAXP];
static long received[MAXP];

static int holds_all(int r, int lo, int hi) {
  for (int b = lo; b < hi; b++)
    if (!held[r][b]) return 0;
  return 1;
}
static int holds_none(int r, int lo, int hi) {
  for (int b = lo; b < hi; b++)
    if (held[r][b]) return 0;
  return 1;
}

static int same(wsp__bsched_xfer_t a, wsp__bsched_xfer_t b) {
  return a.lo == b.lo && a.hi == b.hi;
}

/* Scatter from the root, parents before children (relative ranks: a
 * parent is always smaller than its children). */
static void scatter(int p) {
  memset(held, 0, sizeof held);
  memset(received, 0, sizeof received);
  for (int b = 0; b < p; b++) held[0][b] = 1;
  CHECK(wsp__bsched_scatter_recv(0, p).peer == -1, "root receives in the scatter (p %d)", p);
  for (int r = 0; r < p; r++) {
    wsp__bsched_xfer_t s[64];
    int n = wsp__bsched_scatter_sends(r, p, s, 64);
    for (int i = 0; i < n; i++) {
      int c = s[i].peer;
      CHECK(c > r && c < p, "scatter child %d of %d (p %d)", c, r, p);
      wsp__bsched_xfer_t rv = wsp__bsched_scatter_recv(c, p);
      CHECK(rv.peer == r && same(rv, s[i]), "scatter %d -> %d: recv %d [%d,%d) vs send [%d,%d)",
            r, c, rv.peer, rv.lo, rv.hi, s[i].lo, s[i].hi);
      CHECK(s[i].lo < s[i].hi, "empty scatter send %d -> %d (p %d)", r, c, p);
      CHECK(holds_all(r, s[i].lo, s[i].hi), "scatter %d sends blocks it lacks (p %d)", r, p);
      CHECK(holds_none(c, s[i].lo, s[i].hi), "scatter %d -> %d twice (p %d)", r, c, p);
      for (int b = s[i].lo; b < s[i].hi; b++) held[c][b] = 1;
    }
  }
  for (int r = 0; r < p; r++) {
    int lo, hi;
    wsp__bsched_scatter_held(r, p, &lo, &hi);
    for (int b = 0; b < p; b++)
      CHECK(held[r][b] == (b >= lo && b < hi), "after scatter %d holds block %d: %d (p %d)", r,
            b, held[r][b], p);
  }
}

typedef void (*step_fn)(int r, int p, int a, int b, wsp__bsched_xfer_t *s, wsp__bsched_xfer_t *v);

/* One synchronous step: checks the pairing and the holdings, then moves
 * the blocks. */
static void step(int p, step_fn f, int a, int b, const char *what) {
  static wsp__bsched_xfer_t snd[MAXP], rcv[MAXP];
  for (int r = 0; r < p; r++) f(r, p, a, b, &snd[r], &rcv[r]);
  for (int r = 0; r < p; r++) {
    wsp__bsched_xfer_t s = snd[r], v = rcv[r];
    if (s.peer >= 0) {
      CHECK(s.peer < p && s.peer != r, "%s p %d step %d.%d: %d sends to %d", what, p, a, b, r,
            s.peer);
      CHECK(s.lo >= 0 && s.lo < s.hi && s.hi <= p, "%s p %d: bad range [%d,%d)", what, p, s.lo,
            s.hi);
      CHECK(rcv[s.peer].peer == r && same(rcv[s.peer], s),
            "%s p %d step %d.%d: %d sends [%d,%d) to %d, which expects %d [%d,%d)", what, p, a,
            b, r, s.lo, s.hi, s.peer, rcv[s.peer].peer, rcv[s.peer].lo, rcv[s.peer].hi);
      CHECK(holds_all(r, s.lo, s.hi), "%s p %d step %d.%d: %d sends blocks it lacks", what, p,
            a, b, r);
      CHECK(holds_none(s.peer, s.lo, s.hi), "%s p %d step %d.%d: %d already holds [%d,%d)",
            what, p, a, b, s.peer, s.lo, s.hi);
    }
    if (v.peer >= 0) {
      CHECK(v.peer < p && snd[v.peer].peer == r,
            "%s p %d step %d.%d: %d expects from %d, which does not send", what, p, a, b, r,
            v.peer);
      if (s.peer >= 0)
        CHECK(v.hi <= s.lo || s.hi <= v.lo, "%s p %d: %d sends and receives overlapping blocks",
              what, p, r);
    }
  }
  for (int r = 0; r < p; r++)
    if (rcv[r].peer >= 0) {
      for (int bl = rcv[r].lo; bl < rcv[r].hi; bl++) held[r][bl] = 1;
      received[r] += rcv[r].hi - rcv[r].lo;
    }
}

static void ring_fn(int r, int p, int s, int unused, wsp__bsched_xfer_t *a, wsp__bsched_xfer_t *b) {
  (void)unused;
  wsp__bsched_ring_step(r, p, s, a, b);
}

static void finish(int p, const char *what) {
  for (int r = 0; r < p; r++) {
    CHECK(holds_all(r, 0, p), "%s p %d: rank %d misses blocks", what, p, r);
    int lo, hi;
    wsp__bsched_scatter_held(r, p, &lo, &hi);
    CHECK(received[r] == p - (hi - lo), "%s p %d: rank %d received %ld blocks", what, p, r,
          received[r]);
  }
}

int main(void) {
  for (int p = 1; p <= MAXP; p++) {
    /* ring */
    scatter(p);
    for (int s = 0; s < p - 1; s++) step(p, ring_fn, s, 0, "ring");
    wsp__bsched_xfer_t x, y;
    wsp__bsched_ring_step(0, p, p - 1, &x, &y);
    CHECK(x.peer == -1 && y.peer == -1, "ring step p-1 is not empty (p %d)", p);
    finish(p, "ring");

    /* recursive doubling */
    scatter(p);
    int rounds = wsp__bsched_rd_rounds(p), lg = 0;
    while ((1 << lg) < p) lg++;
    CHECK(rounds == lg, "rd rounds %d for p %d", rounds, p);
    int pow2 = (p & (p - 1)) == 0;
    for (int i = 0; i < rounds; i++) {
      int f = wsp__bsched_rd_fixups(p, i);
      CHECK(f <= i, "rd p %d round %d: %d fix-ups", p, i, f);
      CHECK(!pow2 || (f == 0 && wsp__bsched_rd_clipped(p, i) == 0), "rd fix-ups for p %d", p);
      for (int j = 0; j <= f; j++) step(p, wsp__bsched_rd_step, i, j, "rd");
      for (int r = 0; r < p; r++) {
        wsp__bsched_rd_step(r, p, i, f + 1, &x, &y);
        CHECK(x.peer == -1 && y.peer == -1, "rd p %d: sub-step past the fix-ups", p);
      }
    }
    for (int r = 0; r < p; r++) {
      wsp__bsched_rd_step(r, p, rounds, 0, &x, &y);
      CHECK(x.peer == -1 && y.peer == -1, "rd p %d: round past the end", p);
    }
    finish(p, "rd");
  }
  return check_summary("test_bcast_sched");
}
