/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Trees over p ranks: the pure schedules (no MPI).
 *
 * Ranks are relative to the root: r = (rank - root + p) mod p, so the root
 * is r = 0. Helpers convert back with wsp__tree_abs.
 *
 * Binomial tree: r's parent is r with its lowest set bit cleared; its
 * children are r + 2^i for every 2^i below r's lowest set bit (below p for
 * the root) with r + 2^i < p. The subtree of r is the contiguous range
 * [r, r + wsp__binomial_subtree(r, p)), which is what makes binomial gather
 * and scatter move contiguous blocks. Depth ceil(lg p).
 *
 * k-nomial tree (k >= 2): write r in base k; r's parent is r with its
 * lowest non-zero digit cleared; its children are r + d.k^i for d = 1..k-1
 * and every k^i below the place of r's lowest non-zero digit, if < p.
 * Subtrees are contiguous too. Depth ceil(log_k p); k = 2 is binomial.
 */
#ifndef WSP_PATTERNS_TREE_H
#define WSP_PATTERNS_TREE_H

static inline int wsp__tree_rel(int rank, int root, int p) {
  return (rank - root + p) % p;
}
static inline int wsp__tree_abs(int rel, int root, int p) {
  return (rel + root) % p;
}

/* Parent of relative rank r in the k-nomial tree over p ranks; -1 for the
 * root. */
int wsp__knomial_parent(int r, int p, int k);
/* Children of r, largest subtree first (the order a broadcast sends in).
 * Writes at most max of them; returns how many r has. */
int wsp__knomial_children(int r, int p, int k, int *children, int max);
/* Number of ranks in r's subtree (r itself included). */
int wsp__knomial_subtree(int r, int p, int k);

static inline int wsp__binomial_parent(int r, int p) {
  return wsp__knomial_parent(r, p, 2);
}
static inline int wsp__binomial_children(int r, int p, int *children, int max) {
  return wsp__knomial_children(r, p, 2, children, max);
}
static inline int wsp__binomial_subtree(int r, int p) {
  return wsp__knomial_subtree(r, p, 2);
}

#endif
