/* SPDX-License-Identifier: BSD-3-Clause */
/* Scatter-based broadcast schedules; see bcast_sched.h. */
#include "bcast_sched.h"

#include "tree.h"

static const wsp__bsched_xfer_t wsp__none = {-1, 0, 0};

static wsp__bsched_xfer_t wsp__xfer(int peer, int lo, int hi) {
  wsp__bsched_xfer_t x = {peer, lo, hi};
  return x;
}

void wsp__bsched_scatter_held(int r, int p, int *lo, int *hi) {
  *lo = r;
  *hi = r + wsp__binomial_subtree(r, p);
}

/* Does r hold all of [lo, hi) right after the scatter? */
static int wsp__held(int r, int p, int lo, int hi) {
  int a, b;
  wsp__bsched_scatter_held(r, p, &a, &b);
  return a <= lo && hi <= b;
}

int wsp__bsched_scatter_sends(int r, int p, wsp__bsched_xfer_t *sends, int max) {
  int ch[64];
  int n = wsp__binomial_children(r, p, ch, 64);
  for (int i = 0; i < n && i < max && i < 64; i++)
    sends[i] = wsp__xfer(ch[i], ch[i], ch[i] + wsp__binomial_subtree(ch[i], p));
  return n;
}

wsp__bsched_xfer_t wsp__bsched_scatter_recv(int r, int p) {
  int parent = wsp__binomial_parent(r, p);
  if (parent < 0) return wsp__none;
  return wsp__xfer(parent, r, r + wsp__binomial_subtree(r, p));
}

void wsp__bsched_ring_step(int r, int p, int s, wsp__bsched_xfer_t *send,
                          wsp__bsched_xfer_t *recv) {
  *send = *recv = wsp__none;
  if (p < 2 || s < 0 || s >= p - 1) return;
  int right = (r + 1) % p, left = (r - 1 + p) % p;
  int sb = ((r - s) % p + p) % p, rb = ((r - s - 1) % p + p) % p;
  if (!wsp__held(right, p, sb, sb + 1)) *send = wsp__xfer(right, sb, sb + 1);
  if (!wsp__held(r, p, rb, rb + 1)) *recv = wsp__xfer(left, rb, rb + 1);
}

int wsp__bsched_rd_rounds(int p) {
  int l = 0;
  while (p > 1 && (1L << l) < p) l++;
  return l;
}

int wsp__bsched_rd_clipped(int p, int i) {
  if (p < 2 || i < 0 || i >= wsp__bsched_rd_rounds(p)) return 0;
  long m = 1L << i, b = (long)(p - 1) & ~(2 * m - 1);
  if (b + m < p && p < b + 2 * m) return (int)(p - b - m);
  return 0;
}

int wsp__bsched_rd_fixups(int p, int i) {
  long c = wsp__bsched_rd_clipped(p, i), m = 1L << i;
  int n = 0;
  if (c == 0) return 0;
  for (long have = c; have < m; have *= 2) n++;
  return n;
}

/* G_i(x): the group x holds before round i, clipped to p. */
static wsp__bsched_xfer_t wsp__group(int x, int p, long m, int peer) {
  long lo = (long)x & ~(m - 1), hi = lo + m;
  if (hi > p) hi = p;
  return wsp__xfer(peer, (int)lo, (int)hi);
}

void wsp__bsched_rd_step(int r, int p, int i, int j, wsp__bsched_xfer_t *send,
                        wsp__bsched_xfer_t *recv) {
  *send = *recv = wsp__none;
  if (p < 2 || r < 0 || r >= p || i < 0 || i >= wsp__bsched_rd_rounds(p)) return;
  long m = 1L << i;
  if (j == 0) {
    int q = (int)((long)r ^ m);
    if (q >= p) return;
    wsp__bsched_xfer_t mine = wsp__group(r, p, m, q),
                      theirs = wsp__group(q, p, m, q);
    if (!wsp__held(q, p, mine.lo, mine.hi)) *send = mine;
    if (!wsp__held(r, p, theirs.lo, theirs.hi)) *recv = theirs;
    return;
  }
  long c = wsp__bsched_rd_clipped(p, i);
  if (j > wsp__bsched_rd_fixups(p, i)) return;
  long b = (long)(p - 1) & ~(2 * m - 1), o = r - b;
  if (o < 0 || o >= m) return; /* not in the clipped pair group's lower half */
  long h = c << (j - 1);
  int lo = (int)(b + m), hi = p;
  if (o < h && o + h < m) *send = wsp__xfer((int)(r + h), lo, hi);
  if (o >= h && o < 2 * h) *recv = wsp__xfer((int)(r - h), lo, hi);
}
