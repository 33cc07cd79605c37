/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Split binary tree for broadcast: the pure schedule (no MPI).
 *
 * Ranks are relative to the root (r = 0), as in tree.h. The other p - 1
 * ranks form two binary trees, the two "sides": side 0 holds the odd
 * ranks 1, 3, 5, ... and side 1 the even ranks 2, 4, 6, .... Inside side s
 * the rank r has index j = (r - 1 - s) / 2, and the side is a binary heap
 * over those indices: index j's children are 2j + 1 and 2j + 2 (when they
 * exist), index 0's parent is the root. So the root has up to two
 * children (ranks 1 and 2), every other rank at most two.
 *
 * The message is cut into two halves, half 0 = bytes [0, ceil(n/2)) and
 * half 1 = the rest. Side s carries half s only, so every link inside a
 * side carries n/2 bytes, and the root sends each half once down the trees
 * (n bytes, plus half 1 again to its partner when p is even: 1.5 n at
 * most), against ceil(lg p).n for a binomial tree.
 *
 * Afterwards the sides swap halves pairwise: rank r odd is partnered with
 * r + 1, which is in side 1 (index j in both). When p - 1 is odd, side 0
 * has one rank more, r = p - 1, whose "r + 1" wraps to the root: it gets
 * half 1 from the root, which has nothing left to do by then. So the
 * partner of odd r is (r + 1) mod p, the partner of even r > 0 is r - 1,
 * and the root's partner is p - 1 when p is even (it only sends).
 *
 * Depth: index j sits floor(lg(j + 1)) levels below its side's top rank, so
 * the deepest rank is floor(lg(size of side 0)) + 1 hops from the root
 * (side 0 is never smaller than side 1).
 */
#ifndef WSP_PATTERNS_SPLITBIN_H
#define WSP_PATTERNS_SPLITBIN_H

#include <stddef.h>

typedef struct wsp__splitbin_node {
  int side;     /* 0 or 1; -1 for the root */
  int parent;   /* relative rank; -1 for the root */
  int nchild;   /* 0, 1 or 2 */
  int child[2]; /* relative ranks, the first the larger subtree */
  /* The rank this one swaps halves with (-1: none). For the root, the rank
   * it sends half 1 to at the end; a rank whose partner is the root only
   * receives from it. */
  int partner;
} wsp__splitbin_node_t;

/* Number of ranks in side s (0 or 1) for p ranks. */
static inline int wsp__splitbin_side_size(int p, int s) {
  return p > s ? (p - s) / 2 : 0;
}

/* Fills *node for relative rank r of p (0 <= r < p). */
void wsp__splitbin_node(int r, int p, wsp__splitbin_node_t *node);

/* Hops from the root to the deepest rank (0 for p = 1). */
int wsp__splitbin_depth(int p);

/* Half h (0 or 1) of n bytes: bytes [*lo, *lo + *len). Half 0 is the
 * larger by one byte when n is odd. */
static inline void wsp__splitbin_half(size_t n, int h, size_t *lo, size_t *len) {
  size_t h0 = n - n / 2;
  *lo = h ? h0 : 0;
  *len = h ? n / 2 : h0;
}

#endif
