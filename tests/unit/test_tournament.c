/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The round-robin tournament for every n up to 200: in each round every
 * player meets at most one other, and the meeting is mutual; over all
 * rounds every pair meets exactly once; n-1 rounds for even n with no bye,
 * n rounds for odd n with exactly one bye each.
 */
#include <stdlib.h>

#include "check.h"
#include "patterns/tournament.h"

int main(void) {
  CHECK(wsp__tournament_rounds(0) == 0 && wsp__tournament_rounds(1) == 0, "no rounds for n <= 1");
  CHECK(wsp__tournament_partner(1, 0, 0) == -1, "n = 1: nobody to meet");
  for (int n = 2; n <= 200; n++) {
    int rounds = wsp__tournament_rounds(n);
    CHECK(rounds == (n % 2 ? n : n - 1), "n %d: %d rounds", n, rounds);
    int *met = calloc((size_t)n * (size_t)n, sizeof *met);
    for (int r = 0; r < rounds; r++) {
      int byes = 0;
      for (int i = 0; i < n; i++) {
        int j = wsp__tournament_partner(n, r, i);
        if (j < 0) {
          byes++;
          continue;
        }
        CHECK(j < n && j != i, "n %d round %d: %d meets %d", n, r, i, j);
        if (j >= n || j == i) continue;
        CHECK(wsp__tournament_partner(n, r, j) == i, "n %d round %d: %d -> %d is not mutual", n,
              r, i, j);
        met[i * n + j]++;
      }
      CHECK(byes == n % 2, "n %d round %d: %d byes", n, r, byes);
    }
    for (int i = 0; i < n; i++)
      for (int j = 0; j < n; j++)
        if (i != j) CHECK(met[i * n + j] == 1, "n %d: %d met %d %d times", n, i, j, met[i * n + j]);
    CHECK(wsp__tournament_partner(n, rounds, 0) == -1, "n %d: a round past the end", n);
    CHECK(wsp__tournament_partner(n, 0, n) == -1, "n %d: a player past the end", n);
    free(met);
  }
  return check_summary("test_tournament");
}
