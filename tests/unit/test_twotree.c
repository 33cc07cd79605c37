/* SPDX-License-Identifier: BSD-3-Clause */
/* The two trees of the two-tree broadcast (src/patterns/twotree.h) for
 * every p up to 300, checked by simulating the broadcast they describe:
 * in each tree every rank but the root has one parent, which lists it as
 * a child, and a path to the root; the root sends each half once; walking
 * each tree from the root, every rank is reached and receives each half
 * exactly once; no rank but the root has children in both trees (so none
 * sends more than the message); nobody has more than two children in a
 * tree; no rank has the same parent in both trees (one pair would carry
 * both halves under one tag); and the depth is what walking the parents
 * gives, which is ceil(lg p) hops. The reference for the depth is the
 * walk, not the formula. */
#include "patterns/twotree.h"
#include "check.h"

enum { PMAX = 300 };

static int walk_depth(const wsp__twotree_node_t *nd, int t, int r, int p) {
  int d = 0;
  while (r != 0) {
    r = nd[r].parent[t], d++;
    if (r < 0 || r >= p || d > p) return -1; /* off the tree, or a cycle */
  }
  return d;
}

int main(void) {
  static wsp__twotree_node_t nd[PMAX];
  static int got[PMAX][2], order[PMAX];
  for (int p = 1; p <= PMAX; p++) {
    for (int r = 0; r < p; r++) wsp__twotree_node(r, p, &nd[r]);
    int maxd = 0;
    for (int t = 0; t < 2; t++) {
      CHECK(nd[0].parent[t] == -1, "root's parent in tree %d (p %d)", t, p);
      CHECK(nd[0].nchild[t] == (p > 1), "root has %d children in tree %d (p %d)", nd[0].nchild[t],
            t, p);
      for (int r = 1; r < p; r++) {
        int par = nd[r].parent[t];
        CHECK(par >= 0 && par < p && par != r, "parent %d of %d in tree %d (p %d)", par, r, t, p);
        if (par < 0 || par >= p) continue;
        int listed = 0;
        for (int c = 0; c < nd[par].nchild[t]; c++) listed += nd[par].child[t][c] == r;
        CHECK(listed == 1, "%d listed %d times by its parent %d in tree %d (p %d)", r, listed, par,
              t, p);
        int d = walk_depth(nd, t, r, p);
        CHECK(d > 0, "no path from %d to the root in tree %d (p %d)", r, t, p);
        if (d > maxd) maxd = d;
        CHECK(nd[r].nchild[t] >= 0 && nd[r].nchild[t] <= 2, "%d children (p %d)", nd[r].nchild[t],
              p);
      }
    }
    for (int r = 1; r < p; r++) {
      CHECK(nd[r].nchild[0] == 0 || nd[r].nchild[1] == 0,
            "%d is an inner node of both trees (p %d)", r, p);
      CHECK(p == 2 || nd[r].parent[0] != nd[r].parent[1], "%d has parent %d in both (p %d)", r,
            nd[r].parent[0], p);
    }
    CHECK(wsp__twotree_depth(p) == maxd, "depth %d, walked %d (p %d)", wsp__twotree_depth(p), maxd,
          p);
    int lg = 0;
    while ((1 << lg) < p) lg++;
    CHECK(maxd == lg, "depth %d, not ceil(lg %d) = %d", maxd, p, lg);

    /* Walk each tree breadth first from the root, counting what each rank
     * receives. */
    for (int r = 0; r < p; r++) got[r][0] = got[r][1] = r == 0;
    for (int t = 0; t < 2; t++) {
      int n = 0, root_sent = 0;
      order[n++] = 0;
      for (int i = 0; i < n; i++) {
        int r = order[i];
        for (int c = 0; c < nd[r].nchild[t]; c++) {
          int ch = nd[r].child[t][c];
          CHECK(ch > 0 && ch < p, "child %d of %d in tree %d (p %d)", ch, r, t, p);
          if (ch <= 0 || ch >= p) continue;
          got[ch][t]++;
          root_sent += r == 0;
          if (n < PMAX) order[n++] = ch;
        }
      }
      CHECK(n == p, "tree %d reaches %d of %d ranks", t, n, p);
      CHECK(root_sent == (p > 1), "root sent half %d %d times (p %d)", t, root_sent, p);
    }
    for (int r = 1; r < p; r++)
      CHECK(got[r][0] == 1 && got[r][1] == 1, "rank %d got halves %d/%d times (p %d)", r, got[r][0],
            got[r][1], p);
  }
  return check_summary("test_twotree");
}
