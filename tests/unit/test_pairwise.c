/* SPDX-License-Identifier: BSD-3-Clause */
/* Pairwise alltoall for every p up to 70: at each step the send and
 * receive partners match (r's send peer receives from r), and over the p-1
 * steps every ordered pair of distinct ranks exchanges its block exactly
 * once, so simulating the steps fills every receive block with the right
 * data. */
#include <stdlib.h>

#include "check.h"
#include "patterns/pairwise.h"

int main(void) {
  for (int p = 1; p <= 70; p++) {
    /* got[r*p + s]: the value rank r received from rank s (-1 none). */
    int *got = malloc((size_t)p * (size_t)p * sizeof *got);
    for (int i = 0; i < p * p; i++) got[i] = -1;
    for (int r = 0; r < p; r++) got[r * p + r] = r * p + r; /* own block */
    for (int i = 1; i < p; i++)
      for (int r = 0; r < p; r++) {
        int dst = wsp__pairwise_send_peer(r, p, i);
        CHECK(dst >= 0 && dst < p && dst != r, "p %d step %d: rank %d sends to %d", p, i, r, dst);
        CHECK(wsp__pairwise_recv_peer(dst, p, i) == r,
              "p %d step %d: %d sends to %d, which receives from %d", p, i, r, dst,
              wsp__pairwise_recv_peer(dst, p, i));
        CHECK(got[dst * p + r] == -1, "p %d: %d -> %d twice", p, r, dst);
        got[dst * p + r] = r * p + dst; /* r's block for dst */
      }
    for (int r = 0; r < p; r++)
      for (int s = 0; s < p; s++)
        CHECK(got[r * p + s] == s * p + r, "p %d: rank %d block %d wrong", p, r, s);
    free(got);
  }
  return check_summary("test_pairwise");
}
