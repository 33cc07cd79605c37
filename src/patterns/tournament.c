/* SPDX-License-Identifier: BSD-3-Clause */
/* Round-robin tournament: see tournament.h. */
#include "tournament.h"

int wsp__tournament_rounds(int n) {
  if (n <= 1) return 0;
  return n % 2 ? n : n - 1;
}

int wsp__tournament_partner(int n, int r, int i) {
  if (n <= 1 || i < 0 || i >= n || r < 0 || r >= wsp__tournament_rounds(n)) return -1;
  int m = n % 2 ? n + 1 : n; /* with the phantom player for odd n */
  int fixed = m - 1, c = m - 1; /* the player that stays put; places on the circle */
  int partner;
  if (i == fixed) {
    partner = r;
  } else if (i == r) {
    partner = fixed;
  } else {
    /* i = r + k or r - k on the circle; its partner is the mirror image. */
    partner = ((2 * r - i) % c + c) % c;
  }
  return partner >= n ? -1 : partner;
}
