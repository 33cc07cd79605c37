/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Two binary trees for broadcast: the pure schedule (no MPI).
 *
 * Ranks are relative to the root (r = 0), as in tree.h. The other n = p - 1
 * ranks carry two trees at once: tree 0 carries half 0 of the message and
 * tree 1 half 1, and the root sends each half once, to the top of its tree.
 * Every other rank is in both trees, and is an inner node (one that
 * forwards) in at most one of them, so no rank sends more than the message,
 * yet the depth is about lg p instead of the chain's p - 1 (the two-tree
 * broadcast of Sanders, Speck and Träff).
 *
 * Each tree is the same in-order binary tree over labels 1 .. n: the top
 * is the label with the most trailing zero bits, and each subrange on
 * either side of a node is a subtree whose top is again the label with the
 * most trailing zero bits in it. In such a tree every odd label is a leaf
 * (a range of two or more consecutive labels holds an even one, which
 * would have more trailing zeros) and every even label j > 0 has j - 1 in
 * its range, so it is an inner node.
 *
 * Tree 0 gives rank r the label r. Tree 1 gives it the label sigma(r):
 * n + 1 - r when n is even (which turns even labels into odd ones), and
 * (r mod n) + 1 when n is odd (r -> r + 1, the last rank to label 1). So
 * the inner nodes of tree 0 are the even ranks and those of tree 1 the odd
 * ranks (below n when n is odd): disjoint, and one rank is a leaf in both
 * when n is odd.
 */
#ifndef WSP_PATTERNS_TWOTREE_H
#define WSP_PATTERNS_TWOTREE_H

#include <stddef.h>

typedef struct wsp__twotree_node {
  int parent[2];   /* relative rank in tree t (0 = the root); -1 for the root */
  int nchild[2];   /* 0, 1 or 2 children in tree t */
  int child[2][2]; /* relative ranks; the root's child[t][0] is tree t's top */
} wsp__twotree_node_t;

/* Fills *node for relative rank r of p (0 <= r < p). For p = 2 both trees
 * are the one rank 1 (its two parents are the root). */
void wsp__twotree_node(int r, int p, wsp__twotree_node_t *node);

/* Hops from the root to the deepest rank of either tree (0 for p = 1). */
int wsp__twotree_depth(int p);

#endif
