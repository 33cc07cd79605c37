/* SPDX-License-Identifier: BSD-3-Clause */
/* Recursive-doubling allgather for every power of two p up to 64: partners
 * are mutual, each rank sends only blocks it holds, the partner's send is
 * what this rank receives, no block arrives twice, and at the end every
 * rank holds all p blocks. */
#include <stdlib.h>

#include "check.h"
#include "patterns/rdgather.h"

int main(void) {
  for (int p = 1; p <= 64; p *= 2) {
    int *have = calloc((size_t)p * (size_t)p, sizeof *have);
    for (int r = 0; r < p; r++) have[r * p + r] = 1;
    int n = wsp__rdg_nsteps(p);
    CHECK((1 << n) == p, "nsteps %d for p %d", n, p);
    for (int k = 0; k < n; k++) {
      int *next = malloc((size_t)p * (size_t)p * sizeof *next);
      for (int i = 0; i < p * p; i++) next[i] = have[i];
      for (int r = 0; r < p; r++) {
        wsp__rdg_step_t s = wsp__rdg_step(r, p, k), t = wsp__rdg_step(s.peer, p, k);
        CHECK(t.peer == r, "p %d k %d: partners %d %d", p, k, r, s.peer);
        CHECK(t.send_lo == s.recv_lo && t.nblocks == s.nblocks, "p %d k %d: ranges", p, k);
        CHECK(s.send_lo >= 0 && s.send_lo + s.nblocks <= p, "range in bounds");
        CHECK(s.recv_lo >= 0 && s.recv_lo + s.nblocks <= p, "range in bounds");
        for (int b = s.send_lo; b < s.send_lo + s.nblocks; b++)
          CHECK(have[r * p + b], "p %d k %d: %d sends %d it lacks", p, k, r, b);
        for (int b = s.recv_lo; b < s.recv_lo + s.nblocks; b++) {
          CHECK(!have[r * p + b], "p %d k %d: %d gets %d twice", p, k, r, b);
          CHECK(have[s.peer * p + b], "p %d k %d: peer lacks %d", p, k, b);
          next[r * p + b] = 1;
        }
      }
      free(have);
      have = next;
    }
    for (int i = 0; i < p * p; i++) CHECK(have[i], "p %d: block %d missing at %d", p, i % p, i / p);
    free(have);
  }
  return check_summary("test_rdgather");
}
