/* SPDX-License-Identifier: BSD-3-Clause */
/* Two binary trees for broadcast; see twotree.h. */
#include "twotree.h"

/* The top of the in-order tree over labels lo .. hi (1 <= lo <= hi): the
 * label with the most trailing zeros, which is unique in a range. */
static int wsp__tt_top(int lo, int hi) {
  int b = 1;
  while (b <= hi / 2 && (hi / (2 * b)) * (2 * b) >= lo) b *= 2;
  return (hi / b) * b;
}

/* Parent label (0: the tree's top, whose parent is the root) and children
 * of label j in the tree over 1 .. n: walk down from the top, narrowing the
 * range, until j is the top of it. */
static void wsp__tt_label(int j, int n, int *parent, int *nchild, int child[2]) {
  int lo = 1, hi = n, up = 0;
  for (;;) {
    int t = wsp__tt_top(lo, hi);
    if (t == j) break;
    up = t;
    if (j < t)
      hi = t - 1;
    else
      lo = t + 1;
  }
  *parent = up;
  *nchild = 0;
  if (j > lo) child[(*nchild)++] = wsp__tt_top(lo, j - 1);
  if (j < hi) child[(*nchild)++] = wsp__tt_top(j + 1, hi);
}

/* Tree t's label of relative rank r (1 <= r <= n) and back. */
static int wsp__tt_to_label(int t, int r, int n) {
  if (t == 0) return r;
  return n % 2 == 0 ? n + 1 - r : r % n + 1;
}
static int wsp__tt_to_rank(int t, int j, int n) {
  if (t == 0) return j;
  return n % 2 == 0 ? n + 1 - j : (j + n - 2) % n + 1;
}

void wsp__twotree_node(int r, int p, wsp__twotree_node_t *node) {
  int n = p - 1;
  for (int t = 0; t < 2; t++) {
    node->nchild[t] = 0;
    node->child[t][0] = node->child[t][1] = -1;
    node->parent[t] = -1;
    if (n < 1) continue;
    if (r == 0) {
      node->nchild[t] = 1;
      node->child[t][0] = wsp__tt_to_rank(t, wsp__tt_top(1, n), n);
      continue;
    }
    int up, nc, ch[2];
    wsp__tt_label(wsp__tt_to_label(t, r, n), n, &up, &nc, ch);
    node->parent[t] = up == 0 ? 0 : wsp__tt_to_rank(t, up, n);
    node->nchild[t] = nc;
    for (int c = 0; c < nc; c++) node->child[t][c] = wsp__tt_to_rank(t, ch[c], n);
  }
}

int wsp__twotree_depth(int p) {
  /* Both trees have the shape of the in-order tree over 1 .. n. Going down
   * a level leaves a range without its top, so the most trailing zeros in
   * it drop by one at least: a path down from the top holds at most
   * floor(lg n) + 1 labels, and 2^k, 2^(k-1), ..., 1 holds that many. The
   * deepest rank is as many hops from the root: one to the top, one for
   * each label below it. */
  int n = p - 1, d = 0;
  if (n < 1) return 0;
  while ((2L << d) <= n) d++; /* d = floor(lg n) */
  return d + 1;
}
