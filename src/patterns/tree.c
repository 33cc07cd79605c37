/* SPDX-License-Identifier: BSD-3-Clause */
/* Binomial and k-nomial trees; see tree.h. */
#include "tree.h"

/* The place value k^i of r's lowest non-zero base-k digit; for r = 0 the
 * first power of k that is >= p (the root spans everything). */
static long wsp__low_place(int r, int p, int k) {
  long place = 1;
  if (r == 0) {
    while (place < p) place *= k;
    return place;
  }
  while ((r / place) % k == 0) place *= k;
  return place;
}

int wsp__knomial_parent(int r, int p, int k) {
  if (r <= 0 || r >= p || k < 2) return -1;
  long place = wsp__low_place(r, p, k);
  long digit = (r / place) % k;
  return (int)(r - digit * place);
}

int wsp__knomial_children(int r, int p, int k, int *children, int max) {
  if (r < 0 || r >= p || k < 2) return 0;
  long top = wsp__low_place(r, p, k);
  int n = 0;
  /* Largest subtree first: highest place, highest digit. */
  for (long place = top / k; place >= 1; place /= k)
    for (long d = k - 1; d >= 1; d--) {
      long c = r + d * place;
      if (c >= p) continue;
      if (n < max) children[n] = (int)c;
      n++;
    }
  return n;
}

int wsp__knomial_subtree(int r, int p, int k) {
  if (r < 0 || r >= p || k < 2) return 0;
  long span = wsp__low_place(r, p, k);
  long left = (long)p - r;
  return (int)(span < left ? span : left);
}
