/* SPDX-License-Identifier: BSD-3-Clause */
/* Reduction schedules (src/patterns/reduce_sched.h), exhaustively for small
 * p, with partial results tracked as ranges of ranks [lo, hi] so that a
 * combination out of rank order is caught:
 *   - ordered binomial reduce, every p <= 100 and every root: sends and
 *     receives match round by round, only adjacent ranges are combined
 *     (peer before or after as the step says), the root ends with [0, p-1]
 *     in ceil(lg p) rounds, every other rank sends once, last; for root 0
 *     the parents are those of the binomial tree (tree.h);
 *   - fold to a power of two, every p <= 100 and every keep: new ranks
 *     0..q-1 once each, oldrank inverts newrank, keep takes part, new
 *     ranks cover adjacent ranges in order;
 *   - halving windows, q <= 64, many counts: depth 0 is everything, a
 *     window is its two children (bit d = 0 first), the leaves partition;
 *   - fold + reduce-scatter by halving (lowest bit first), p <= 40: every
 *     new rank ends with [0, p-1] on each element of its leaf window. */
#include <stdlib.h>
#include <string.h>

#include "patterns/rdouble.h"
#include "patterns/reduce_sched.h"
#include "patterns/tree.h"
#include "check.h"

#define PMAX 100

static int ceil_lg(int p) {
  int l = 0;
  while ((1 << l) < p) l++;
  return l;
}

static void test_obin(int p, int root) {
  static wsp__obin_step_t st[PMAX][64];
  int n[PMAX], pos[PMAX], lo[PMAX], hi[PMAX], done[PMAX];
  int lg = ceil_lg(p);
  for (int i = 0; i < p; i++) {
    n[i] = wsp__obin_schedule(i, p, root, st[i], 64);
    CHECK(n[i] <= lg, "p=%d root=%d rank %d has %d steps", p, root, i, n[i]);
    pos[i] = 0, lo[i] = hi[i] = i, done[i] = 0;
    for (int s = 0; s < n[i]; s++) {
      CHECK(st[i][s].round >= 0 && st[i][s].round < lg, "round %d", st[i][s].round);
      if (s) CHECK(st[i][s].round > st[i][s - 1].round, "p=%d rounds not increasing", p);
      CHECK((st[i][s].action == WSP__OBIN_SEND) == (i != root && s == n[i] - 1),
            "p=%d root=%d rank %d step %d: send only last, never at root", p,
            root, i, s);
    }
    if (i != root) CHECK(n[i] >= 1, "p=%d root=%d: rank %d never sends", p, root, i);
    if (root == 0 && i != 0 && n[i] >= 1)
      CHECK(st[i][n[i] - 1].peer == wsp__binomial_parent(i, p),
            "p=%d rank %d parent %d, binomial %d", p, i, st[i][n[i] - 1].peer,
            wsp__binomial_parent(i, p));
  }
  for (int k = 0; k < lg; k++) {
    for (int i = 0; i < p; i++) {
      if (pos[i] >= n[i] || st[i][pos[i]].round != k) continue;
      wsp__obin_step_t s = st[i][pos[i]];
      int j = s.peer;
      if (!(j >= 0 && j < p && j != i)) {
        CHECK(0, "p=%d root=%d rank %d: bad peer %d", p, root, i, j);
        continue;
      }
      int ok = pos[j] < n[j] && st[j][pos[j]].round == k && st[j][pos[j]].peer == i;
      CHECK(ok, "p=%d root=%d round %d: %d's peer %d does not match", p, root, k, i, j);
      if (!ok) continue;
      if (s.action == WSP__OBIN_SEND) {
        CHECK(st[j][pos[j]].action != WSP__OBIN_SEND, "p=%d: two senders", p);
        continue; /* the receiver does the combining */
      }
      CHECK(st[j][pos[j]].action == WSP__OBIN_SEND, "p=%d: two receivers", p);
      CHECK(!done[j], "p=%d: %d sends twice", p, j);
      if (s.action == WSP__OBIN_RECV_BEFORE) {
        CHECK(hi[j] + 1 == lo[i], "p=%d root=%d round %d: [%d,%d] before [%d,%d]",
              p, root, k, lo[j], hi[j], lo[i], hi[i]);
        lo[i] = lo[j];
      } else {
        CHECK(hi[i] + 1 == lo[j], "p=%d root=%d round %d: [%d,%d] after [%d,%d]",
              p, root, k, lo[j], hi[j], lo[i], hi[i]);
        hi[i] = hi[j];
      }
      done[j] = 1;
    }
    for (int i = 0; i < p; i++)
      if (pos[i] < n[i] && st[i][pos[i]].round == k) pos[i]++;
  }
  CHECK(lo[root] == 0 && hi[root] == p - 1, "p=%d root=%d ends with [%d,%d]", p,
        root, lo[root], hi[root]);
  for (int i = 0; i < p; i++)
    CHECK(i == root || done[i], "p=%d root=%d: %d's partial never used", p, root, i);
}

static void test_fold(int p, int keep) {
  int q = wsp__rsched_pow2_floor(p);
  CHECK(q <= p && 2 * q > p && (q & (q - 1)) == 0, "p=%d q=%d", p, q);
  int seen[PMAX] = {0};
  for (int i = 0; i < p; i++) {
    int nr = wsp__fold_newrank(i, p, keep), pr = wsp__fold_partner(i, p);
    if (i == keep) CHECK(nr >= 0, "p=%d keep %d sits out", p, keep);
    if (nr < 0) {
      CHECK(pr >= 0 && wsp__fold_newrank(pr, p, keep) >= 0,
            "p=%d keep=%d: %d sits out without a taking-part partner", p, keep, i);
      continue;
    }
    CHECK(nr < q && !seen[nr], "p=%d keep=%d: new rank %d", p, keep, nr);
    if (nr >= 0 && nr < q) seen[nr] = 1;
    CHECK(wsp__fold_oldrank(nr, p, keep) == i, "p=%d keep=%d: oldrank(%d) != %d", p,
          keep, nr, i);
    if (pr >= 0)
      CHECK(wsp__fold_newrank(pr, p, keep) < 0 && wsp__fold_partner(pr, p) == i,
            "p=%d keep=%d: pair %d %d", p, keep, i, pr);
  }
  /* Ranges in order: new rank nr covers [oldrank, oldrank] or the pair. */
  int next = 0;
  for (int nr = 0; nr < q; nr++) {
    int o = wsp__fold_oldrank(nr, p, keep), pr = wsp__fold_partner(o, p);
    int lo = pr >= 0 && pr < o ? pr : o, hi = pr > o ? pr : o;
    CHECK(lo == next, "p=%d keep=%d: new rank %d starts at %d, want %d", p, keep,
          nr, lo, next);
    next = hi + 1;
  }
  CHECK(next == p, "p=%d keep=%d: ranges end at %d", p, keep, next);
}

static void test_windows(int q, size_t count) {
  int lg = ceil_lg(q);
  size_t s, l, s0, l0, s1, l1;
  for (int nr = 0; nr < q; nr++) {
    wsp__halving_window(nr, 0, q, count, &s, &l);
    CHECK(s == 0 && l == count, "q=%d count=%zu: depth 0", q, count);
    for (int d = 0; d < lg; d++) {
      wsp__halving_window(nr, d, q, count, &s, &l);
      int low = nr & ~(1 << d), high = nr | (1 << d);
      wsp__halving_window(low, d + 1, q, count, &s0, &l0);
      wsp__halving_window(high, d + 1, q, count, &s1, &l1);
      CHECK(s0 == s && s1 == s0 + l0 && l0 + l1 == l && l0 >= l1 && l0 - l1 <= (size_t)(q >> (d + 1)),
            "q=%d count=%zu nr=%d depth %d: [%zu,+%zu] != [%zu,+%zu] + [%zu,+%zu]",
            q, count, nr, d, s, l, s0, l0, s1, l1);
    }
  }
  /* Leaves: block bitrev(nr), so they partition [0, count). */
  unsigned char *cov = calloc(count + 1, 1);
  for (int nr = 0; nr < q; nr++) {
    wsp__halving_window(nr, lg, q, count, &s, &l);
    CHECK(s + l <= count, "q=%d leaf past the end", q);
    for (size_t e = s; e < s + l && e < count; e++) cov[e]++;
  }
  for (size_t e = 0; e < count; e++)
    CHECK(cov[e] == 1, "q=%d count=%zu: element %zu covered %d times", q, count, e, cov[e]);
  free(cov);
}

/* Windows over parts of given sizes (reduce_scatter's halving): each
 * depth's window is the union of its two children's, the parts are those
 * given, and the leaf of new rank nr is part bitrev(nr), checked against
 * the bit reversal written out here. */
static void test_windows_in(int q, unsigned seed) {
  int lg = ceil_lg(q);
  size_t *b = malloc(sizeof(size_t) * (size_t)(q + 1));
  b[0] = 0;
  for (int i = 0; i < q; i++) { /* sizes 0..6, about a third empty */
    seed = seed * 1103515245u + 12345u;
    b[i + 1] = b[i] + (seed >> 16) % 7 / 2 * (size_t)((seed >> 8) % 3);
  }
  size_t s, l, s0, l0, s1, l1;
  for (int nr = 0; nr < q; nr++) {
    wsp__halving_window_in(nr, 0, q, b, &s, &l);
    CHECK(s == 0 && l == b[q], "q=%d bounded: depth 0", q);
    for (int d = 0; d < lg; d++) {
      wsp__halving_window_in(nr, d, q, b, &s, &l);
      wsp__halving_window_in(nr & ~(1 << d), d + 1, q, b, &s0, &l0);
      wsp__halving_window_in(nr | (1 << d), d + 1, q, b, &s1, &l1);
      CHECK(s0 == s && s1 == s0 + l0 && l0 + l1 == l,
            "q=%d bounded nr=%d depth %d: [%zu,+%zu] != [%zu,+%zu] + [%zu,+%zu]", q, nr, d, s, l,
            s0, l0, s1, l1);
    }
    int rev = 0;
    for (int k = 0; k < lg; k++)
      if (nr & (1 << k)) rev += q >> (k + 1);
    CHECK(wsp__bitrev(nr, lg) == rev, "bitrev(%d, %d) = %d, want %d", nr, lg, wsp__bitrev(nr, lg),
          rev);
    wsp__halving_window_in(nr, lg, q, b, &s, &l);
    CHECK(s == b[rev] && l == b[rev + 1] - b[rev], "q=%d bounded: leaf of %d is not part %d", q, nr,
          rev);
  }
  free(b);
}

/* Fold + reduce-scatter with ranges per element. */
static void test_rs_order(int p, size_t count, int keep) {
  int q = wsp__rsched_pow2_floor(p), lg = ceil_lg(q);
  int *lo = malloc(sizeof(int) * (size_t)q * (count + 1));
  int *hi = malloc(sizeof(int) * (size_t)q * (count + 1));
  int *nlo = malloc(sizeof(int) * (size_t)q * (count + 1));
  int *nhi = malloc(sizeof(int) * (size_t)q * (count + 1));
#define AT(a, nr, e) a[(size_t)(nr) * (count + 1) + (e)]
  for (int nr = 0; nr < q; nr++) {
    int o = wsp__fold_oldrank(nr, p, keep), pr = wsp__fold_partner(o, p);
    for (size_t e = 0; e < count; e++) {
      AT(lo, nr, e) = pr >= 0 && pr < o ? pr : o;
      AT(hi, nr, e) = pr > o ? pr : o;
    }
  }
  for (int k = 0; k < lg; k++) {
    memcpy(nlo, lo, sizeof(int) * (size_t)q * (count + 1));
    memcpy(nhi, hi, sizeof(int) * (size_t)q * (count + 1));
    for (int nr = 0; nr < q; nr++) {
      int peer = nr ^ (1 << k);
      size_t s, l;
      wsp__halving_window(nr, k + 1, q, count, &s, &l); /* kept half */
      for (size_t e = s; e < s + l; e++) {
        int a = peer < nr ? peer : nr, b = peer < nr ? nr : peer;
        CHECK(AT(hi, a, e) + 1 == AT(lo, b, e), "p=%d step %d element %zu: [%d,%d] then [%d,%d]",
              p, k, e, AT(lo, a, e), AT(hi, a, e), AT(lo, b, e), AT(hi, b, e));
        AT(nlo, nr, e) = AT(lo, a, e);
        AT(nhi, nr, e) = AT(hi, b, e);
      }
    }
    memcpy(lo, nlo, sizeof(int) * (size_t)q * (count + 1));
    memcpy(hi, nhi, sizeof(int) * (size_t)q * (count + 1));
  }
  for (int nr = 0; nr < q; nr++) {
    size_t s, l;
    wsp__halving_window(nr, lg, q, count, &s, &l);
    for (size_t e = s; e < s + l; e++)
      CHECK(AT(lo, nr, e) == 0 && AT(hi, nr, e) == p - 1,
            "p=%d count=%zu keep=%d: new rank %d element %zu has [%d,%d]", p,
            count, keep, nr, e, AT(lo, nr, e), AT(hi, nr, e));
  }
#undef AT
  free(lo), free(hi), free(nlo), free(nhi);
}

/* Recursive doubling (rdouble.h) folds and pairs as the fold above with no
 * rank kept: the costs price both by the same crossing counts
 * (wsp__sites_cross). */
static void test_rd_pairs(int p) {
  int q = wsp__rsched_pow2_floor(p);
  for (int i = 0; i < p; i++) {
    int nr = wsp__fold_newrank(i, p, -1), k = 0, n = wsp__rd_nsteps(p, i);
    for (int j = 0; j < n; j++) {
      wsp__rd_step_t s = wsp__rd_step(p, i, j);
      if (s.action == WSP__RD_EXCHANGE) {
        CHECK(nr >= 0 && k < 31 && s.peer == wsp__fold_oldrank(nr ^ (1 << k), p, -1),
              "p=%d rank %d step %d: exchange with %d", p, i, j, s.peer);
        k++;
      } else {
        CHECK(s.peer == wsp__fold_partner(i, p), "p=%d rank %d step %d: peer %d, fold's %d", p, i,
              j, s.peer, wsp__fold_partner(i, p));
      }
    }
    CHECK(nr < 0 ? k == 0 : (1 << k) == q, "p=%d rank %d: %d exchanges", p, i, k);
  }
}

int main(void) {
  for (int p = 1; p <= 1 << 20; p += 1 + p / 64) {
    int q = 1;
    while (2 * q <= p) q *= 2;
    CHECK(wsp__rsched_pow2_floor(p) == q, "pow2_floor(%d) = %d, want %d", p,
          wsp__rsched_pow2_floor(p), q);
  }
  CHECK(wsp__rsched_pow2_floor(0x7fffffff) == 1 << 30, "pow2_floor(INT_MAX)");
  for (int p = 1; p <= PMAX; p++) test_rd_pairs(p);
  for (int p = 1; p <= PMAX; p++)
    for (int root = 0; root < p; root++) test_obin(p, root);
  for (int p = 1; p <= PMAX; p++)
    for (int keep = -1; keep < p; keep++) test_fold(p, keep);
  for (int q = 1; q <= 64; q *= 2) {
    for (size_t c = 0; c <= 200; c++) test_windows(q, c);
    test_windows(q, 100003);
    for (unsigned seed = 1; seed <= 50; seed++) test_windows_in(q, seed);
  }
  size_t counts[] = {0, 1, 3, 7, 16, 33, 100};
  for (int p = 1; p <= 40; p++)
    for (size_t ci = 0; ci < sizeof counts / sizeof counts[0]; ci++) {
      test_rs_order(p, counts[ci], -1);
      test_rs_order(p, counts[ci], p - 1);
      test_rs_order(p, counts[ci], p / 2);
    }
  return check_summary("test_reduce_sched");
}
