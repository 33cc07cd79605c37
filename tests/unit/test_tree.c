/* SPDX-License-Identifier: BSD-3-Clause */
/* Binomial and k-nomial trees for every p up to 200 and k in 2..8: every
 * non-root rank has exactly one parent, which lists it as a child; a
 * subtree is the contiguous range [r, r + size) and is the union of r and
 * its children's subtrees; the depth is at most ceil(log_k p) and reaches
 * it for powers of k; children come farthest (largest nominal subtree)
 * first. */
#include "patterns/tree.h"
#include "check.h"

static int depth(int r, int p, int k) {
  int d = 0;
  while (r != 0) r = wsp__knomial_parent(r, p, k), d++;
  return d;
}

int main(void) {
  for (int k = 2; k <= 8; k++)
    for (int p = 1; p <= 200; p++) {
      int maxd = 0, logk = 0;
      for (long v = 1; v < p; v *= k) logk++;
      CHECK(wsp__knomial_parent(0, p, k) == -1, "root has a parent (p %d k %d)", p, k);
      CHECK(wsp__knomial_subtree(0, p, k) == p, "root subtree (p %d k %d)", p, k);
      for (int r = 0; r < p; r++) {
        int ch[256];
        int n = wsp__knomial_children(r, p, k, ch, 256);
        int covered = 1, prev = p;
        for (int i = 0; i < n; i++) {
          CHECK(ch[i] > r && ch[i] < p, "child %d of %d out of range", ch[i], r);
          CHECK(wsp__knomial_parent(ch[i], p, k) == r, "child %d of %d has parent %d (p %d k %d)",
                ch[i], r, wsp__knomial_parent(ch[i], p, k), p, k);
          int sz = wsp__knomial_subtree(ch[i], p, k);
          CHECK(ch[i] < prev, "children of %d not farthest first (p %d k %d)", r, p, k);
          prev = ch[i];
          /* child subtrees tile [r+1, r+size) in some order */
          CHECK(ch[i] + sz <= r + wsp__knomial_subtree(r, p, k), "subtree of %d leaves %d's", ch[i], r);
          covered += sz;
        }
        CHECK(covered == wsp__knomial_subtree(r, p, k), "subtree of %d: %d != %d (p %d k %d)", r,
              covered, wsp__knomial_subtree(r, p, k), p, k);
        if (r > 0) {
          int par = wsp__knomial_parent(r, p, k);
          CHECK(par >= 0 && par < r, "parent of %d is %d", r, par);
        }
        int d = depth(r, p, k);
        if (d > maxd) maxd = d;
      }
      long pw = 1;
      while (pw < p) pw *= k;
      CHECK(maxd <= logk && (pw != p || maxd == logk), "depth %d vs ceil(log_%d %d) = %d", maxd,
            k, p, logk);
      CHECK(wsp__tree_abs(wsp__tree_rel(3 % p, p - 1, p), p - 1, p) == 3 % p, "rel/abs");
    }
  return check_summary("test_tree");
}
