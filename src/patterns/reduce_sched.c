/* SPDX-License-Identifier: BSD-3-Clause */
/* Schedules of the reductions; see reduce_sched.h. */
#include "reduce_sched.h"

enum { WSP__OBIN_MAXR = 64 };

/* Absolute rank of index x of the live list after `k` rounds, given each
 * earlier round's root parity b[] and list length m[]: survivor j of round
 * kk came from index min(2j + b[kk], m[kk] - 1). */
static int wsp__obin_abs(int x, int k, const int *b, const int *m) {
  for (int kk = k - 1; kk >= 0; kk--) {
    int y = 2 * x + b[kk];
    x = y < m[kk] - 1 ? y : m[kk] - 1;
  }
  return x;
}

int wsp__obin_schedule(int rank, int p, int root, wsp__obin_step_t *steps,
                      int max) {
  if (p < 1 || rank < 0 || rank >= p || root < 0 || root >= p) return 0;
  int b[WSP__OBIN_MAXR], m[WSP__OBIN_MAXR];
  int idx = rank, t = root, len = p, n = 0;
  for (int k = 0; len > 1 && k < WSP__OBIN_MAXR; k++) {
    b[k] = t & 1;
    m[k] = len;
    int j = idx >> 1;
    if (2 * j + 1 < len) { /* a full pair */
      int surv = 2 * j + b[k], other = 2 * j + 1 - b[k];
      wsp__obin_step_t s;
      s.round = k;
      if (idx == surv) {
        s.action = other < surv ? WSP__OBIN_RECV_BEFORE : WSP__OBIN_RECV_AFTER;
        s.peer = wsp__obin_abs(other, k, b, m);
      } else {
        s.action = WSP__OBIN_SEND;
        s.peer = wsp__obin_abs(surv, k, b, m);
      }
      if (n < max) steps[n] = s;
      n++;
      if (s.action == WSP__OBIN_SEND) return n;
    }
    idx = j;
    t >>= 1;
    len = (len + 1) / 2;
  }
  return n;
}

int wsp__rsched_pow2_floor(int p) {
  if (p < 2) return 1;
  /* The highest set bit: O(1), for the sites' crossing counts call it per
   * rank and step (src/core/sites.c). */
  unsigned v = (unsigned)p;
  v |= v >> 1;
  v |= v >> 2;
  v |= v >> 4;
  v |= v >> 8;
  v |= v >> 16;
  return (int)(v - (v >> 1));
}

int wsp__rsched_log2(int q) {
  int l = 0;
  while ((1 << l) < q) l++;
  return l;
}

int wsp__fold_newrank(int rank, int p, int keep) {
  int r = p - wsp__rsched_pow2_floor(p);
  if (rank >= 2 * r) return rank - r;
  int pair = rank / 2;
  int keeper = (keep >= 0 && keep / 2 == pair && keep < 2 * r) ? keep
                                                                : 2 * pair + 1;
  return rank == keeper ? pair : -1;
}

int wsp__fold_oldrank(int nr, int p, int keep) {
  int r = p - wsp__rsched_pow2_floor(p);
  if (nr >= r) return nr + r;
  if (keep >= 0 && keep < 2 * r && keep / 2 == nr) return keep;
  return 2 * nr + 1;
}

int wsp__fold_partner(int rank, int p) {
  int r = p - wsp__rsched_pow2_floor(p);
  if (rank >= 2 * r) return -1;
  return rank ^ 1;
}

void wsp__halving_parts(int nr, int depth, int q, int *first, int *n) {
  int b0 = 0, span = q;
  for (int i = 0; i < depth; i++) {
    span /= 2;
    if ((nr >> i) & 1) b0 += span;
  }
  *first = b0;
  *n = span;
}

void wsp__halving_window_in(int nr, int depth, int q, const size_t *bounds, size_t *start,
                            size_t *len) {
  int b0, span;
  wsp__halving_parts(nr, depth, q, &b0, &span);
  *start = bounds[b0];
  *len = bounds[b0 + span] - bounds[b0];
}

int wsp__bitrev(int x, int lg) {
  int y = 0;
  for (int i = 0; i < lg; i++) y |= ((x >> i) & 1) << (lg - 1 - i);
  return y;
}

void wsp__halving_window(int nr, int depth, int q, size_t count, size_t *start, size_t *len) {
  int b0, span;
  wsp__halving_parts(nr, depth, q, &b0, &span);
  size_t s = wsp__rsched_part_start(count, q, b0);
  *start = s;
  *len = wsp__rsched_part_start(count, q, b0 + span) - s;
}
