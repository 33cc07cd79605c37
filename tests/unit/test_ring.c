/* SPDX-License-Identifier: BSD-3-Clause */
/* Ring allgather for every p up to 70: simulating the p-1 steps (every
 * rank sends the block the schedule names to its next rank, which stores
 * it where its own schedule says it receives) must leave every rank with
 * every block, each block sent only once it is held, and each received
 * block new to its receiver. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "patterns/ring.h"

int main(void) {
  for (int p = 1; p <= 70; p++) {
    /* have[r*p + b]: rank r holds block b (its value is b). */
    int *have = calloc((size_t)p * (size_t)p, sizeof *have);
    int *sent = malloc((size_t)p * sizeof *sent);
    for (int r = 0; r < p; r++) have[r * p + r] = 1;
    for (int i = 0; i < p - 1; i++) {
      for (int r = 0; r < p; r++) {
        int b = wsp__ring_send_block(r, p, i);
        CHECK(have[r * p + b], "p %d step %d: rank %d sends block %d it lacks", p, i, r, b);
        sent[r] = b;
      }
      for (int r = 0; r < p; r++) {
        int src = wsp__ring_prev(r, p);
        CHECK(wsp__ring_next(src, p) == r, "p %d: prev/next", p);
        int b = wsp__ring_recv_block(r, p, i);
        CHECK(sent[src] == b, "p %d step %d: rank %d expects %d, gets %d", p, i, r, b, sent[src]);
        CHECK(!have[r * p + b], "p %d step %d: rank %d gets block %d twice", p, i, r, b);
        have[r * p + b] = 1;
      }
    }
    for (int r = 0; r < p; r++)
      for (int b = 0; b < p; b++)
        CHECK(have[r * p + b], "p %d: rank %d lacks block %d", p, r, b);
    free(have);
    free(sent);
  }
  return check_summary("test_ring");
}
