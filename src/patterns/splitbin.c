/* SPDX-License-Identifier: BSD-3-Clause */
/* Split binary tree; see splitbin.h. */
#include "splitbin.h"

/* Relative rank of index j in side s. */
static int wsp__sb_rank(int s, int j) { return 1 + s + 2 * j; }

void wsp__splitbin_node(int r, int p, wsp__splitbin_node_t *node) {
  node->nchild = 0;
  node->child[0] = node->child[1] = -1;
  if (r == 0) {
    node->side = -1;
    node->parent = -1;
    for (int s = 0; s < 2; s++)
      if (wsp__splitbin_side_size(p, s) > 0) node->child[node->nchild++] = wsp__sb_rank(s, 0);
    node->partner = p % 2 == 0 && p > 1 ? p - 1 : -1;
    return;
  }
  int s = (r - 1) % 2, j = (r - 1 - s) / 2, size = wsp__splitbin_side_size(p, s);
  node->side = s;
  node->parent = j == 0 ? 0 : wsp__sb_rank(s, (j - 1) / 2);
  for (int c = 2 * j + 1; c <= 2 * j + 2; c++)
    if (c < size) node->child[node->nchild++] = wsp__sb_rank(s, c);
  node->partner = s == 0 ? (r + 1) % p : r - 1;
}

int wsp__splitbin_depth(int p) {
  int size = wsp__splitbin_side_size(p, 0), d = 0;
  if (size == 0) return 0;
  while ((2L << d) <= size) d++; /* d = floor(lg size) */
  return d + 1;
}
