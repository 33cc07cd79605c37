/* SPDX-License-Identifier: BSD-3-Clause */
/* The split binary tree (src/patterns/splitbin.h) for every p up to 300,
 * checked by simulating the broadcast it describes, message by message:
 * every rank but the root has one parent, of its own side (or the root),
 * which lists it as a child; nobody has more than two children; a tree
 * message carries the half of the child's side, and only a rank that holds
 * that half sends it; after the swap every rank holds both halves, having
 * received each exactly once; partners are mutual except for the root,
 * which only sends; the root sends each half once down its tree and half 1
 * at most once more; the depth is what walking the parents gives and is at
 * most ceil(lg p). The halves cover the message exactly. */
#include "patterns/splitbin.h"
#include "check.h"

enum { PMAX = 300 };

static int walk_depth(int r, int p) {
  int d = 0;
  wsp__splitbin_node_t nd;
  while (r != 0) {
    wsp__splitbin_node(r, p, &nd);
    r = nd.parent, d++;
    if (d > p) return -1; /* a cycle */
  }
  return d;
}

int main(void) {
  static wsp__splitbin_node_t nd[PMAX];
  static int got[PMAX][2], order[PMAX];
  for (int p = 1; p <= PMAX; p++) {
    for (int r = 0; r < p; r++) wsp__splitbin_node(r, p, &nd[r]);
    CHECK(nd[0].side == -1 && nd[0].parent == -1, "root (p %d)", p);
    int children_of_root = (p > 1) + (p > 2);
    CHECK(nd[0].nchild == children_of_root, "root has %d children (p %d)", nd[0].nchild, p);
    CHECK(nd[0].partner == (p % 2 == 0 ? p - 1 : -1), "root partner %d (p %d)", nd[0].partner, p);
    /* Structure. */
    int maxd = 0;
    for (int r = 1; r < p; r++) {
      CHECK(nd[r].side == (r - 1) % 2, "side of %d (p %d)", r, p);
      int par = nd[r].parent;
      CHECK(par >= 0 && par < r, "parent %d of %d (p %d)", par, r, p);
      if (par < 0 || par >= r) continue;
      CHECK(par == 0 || nd[par].side == nd[r].side, "parent of %d in another side (p %d)", r, p);
      int listed = 0;
      for (int c = 0; c < nd[par].nchild; c++) listed += nd[par].child[c] == r;
      CHECK(listed == 1, "%d listed %d times by its parent %d (p %d)", r, listed, par, p);
      int d = walk_depth(r, p);
      CHECK(d > 0, "no path from %d to the root (p %d)", r, p);
      if (d > maxd) maxd = d;
      CHECK(nd[r].nchild >= 0 && nd[r].nchild <= 2, "%d children (p %d)", nd[r].nchild, p);
      for (int c = 0; c < nd[r].nchild; c++) {
        int ch = nd[r].child[c];
        CHECK(ch > r && ch < p, "child %d of %d (p %d)", ch, r, p);
      }
      /* Partners are mutual, except a rank paired with the root. */
      int q = nd[r].partner;
      CHECK(q >= 0 && q < p, "%d has no partner (p %d)", r, p);
      if (q > 0) CHECK(nd[q].partner == r, "partner of %d is %d, whose is %d (p %d)", r, q,
                       nd[q].partner, p);
      if (q == 0) CHECK(r == p - 1 && r % 2 == 1, "%d paired with the root (p %d)", r, p);
      if (q >= 0 && q < p) CHECK(q == 0 || nd[q].side != nd[r].side, "partners %d %d same side", r, q);
    }
    CHECK(wsp__splitbin_depth(p) == maxd, "depth %d, walked %d (p %d)", wsp__splitbin_depth(p),
          maxd, p);
    int lg = 0;
    while ((1 << lg) < p) lg++;
    CHECK(maxd <= lg, "depth %d above ceil(lg %d) = %d", maxd, p, lg);

    /* Simulate: tree phase in order of depth (a rank forwards only what it
     * holds), then the swap. */
    for (int r = 0; r < p; r++) got[r][0] = got[r][1] = r == 0;
    int n = 0, root_sent[2] = {0, 0};
    order[n++] = 0;
    for (int i = 0; i < n; i++) { /* breadth first from the root */
      int r = order[i];
      for (int c = 0; c < nd[r].nchild; c++) {
        int ch = nd[r].child[c], h = nd[ch].side;
        CHECK(got[r][h] >= 1, "%d forwards half %d it does not hold (p %d)", r, h, p);
        got[ch][h]++;
        if (r == 0) root_sent[h]++;
        if (n < PMAX) order[n++] = ch;
      }
    }
    CHECK(n == p, "tree reaches %d of %d ranks", n, p);
    for (int r = 1; r < p; r++)
      CHECK(got[r][nd[r].side] == 1 && got[r][1 - nd[r].side] == 0,
            "after the tree %d holds %d/%d (p %d)", r, got[r][0], got[r][1], p);
    /* The swap: each rank sends its side's half to its partner (the root
     * sends half 1). Snapshot first: the swap is one simultaneous step. */
    int sends[PMAX][2] = {{0}};
    for (int r = 0; r < p; r++) {
      int q = nd[r].partner;
      if (q <= 0) continue; /* nobody, or the root, which never receives */
      int h = r == 0 ? 1 : nd[r].side;
      CHECK(got[r][h] >= 1, "%d swaps half %d it does not hold (p %d)", r, h, p);
      sends[q][h]++;
      if (r == 0) root_sent[h]++;
    }
    for (int r = 1; r < p; r++)
      for (int h = 0; h < 2; h++) got[r][h] += sends[r][h];
    for (int r = 1; r < p; r++)
      CHECK(got[r][0] == 1 && got[r][1] == 1, "rank %d got halves %d/%d times (p %d)", r,
            got[r][0], got[r][1], p);
    CHECK(p == 1 || root_sent[0] == 1, "root sent half 0 %d times (p %d)", root_sent[0], p);
    CHECK(root_sent[1] == (p > 2) + (p % 2 == 0), "root sent half 1 %d times (p %d)",
          root_sent[1], p);
  }
  /* The halves tile the message, half 0 the larger. */
  for (size_t len = 0; len < 40; len++) {
    size_t lo0, n0, lo1, n1;
    wsp__splitbin_half(len, 0, &lo0, &n0);
    wsp__splitbin_half(len, 1, &lo1, &n1);
    CHECK(lo0 == 0 && lo1 == n0 && n0 + n1 == len && n0 >= n1 && n0 - n1 <= 1,
          "halves of %zu: [%zu,+%zu) [%zu,+%zu)", len, lo0, n0, lo1, n1);
  }
  return check_summary("test_splitbin");
}
