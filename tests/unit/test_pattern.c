/* SPDX-License-Identifier: BSD-3-Clause */
/* The seeded pattern that tests and benchmarks use as their reference. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "pattern.h"

int main(void) {
  int dests[100];
  size_t bytes[100];
  for (int p = 1; p <= 17; p++) {
    const double ds[] = {0.0, 0.1, 0.5, 1.0};
    for (int di = 0; di < 4; di++) {
      wsp_pattern_t pt = {.seed = 5, .round = 3, .p = p, .density = ds[di],
                          .min_bytes = 0, .max_bytes = 9, .with_self = p % 2};
      int k = wsp_pattern_k(&pt);
      int expect = p == 1 || ds[di] == 0 ? 0 : (int)(ds[di] * (p - 1) + 0.5);
      if (p > 1 && ds[di] > 0 && expect < 1) expect = 1;
      CHECK(k == expect, "p=%d d=%g k=%d expected %d", p, ds[di], k, expect);
      for (int s = 0; s < p; s++) {
        int n = wsp_pattern_sends(&pt, s, dests, bytes);
        CHECK(n == k + pt.with_self, "count p=%d s=%d", p, s);
        int selfs = 0;
        for (int i = 0; i < n; i++) {
          CHECK(dests[i] >= 0 && dests[i] < p, "in range");
          if (i) CHECK(dests[i] > dests[i - 1], "ascending, no duplicates");
          selfs += dests[i] == s;
          CHECK(bytes[i] <= 9, "size in range");
        }
        CHECK(selfs == pt.with_self, "self only when asked");
        int again[64];
        size_t b2[64];
        CHECK(wsp_pattern_sends(&pt, s, again, b2) == n &&
                  !memcmp(again, dests, (size_t)n * sizeof *dests),
              "deterministic");
      }
    }
  }
  /* Different rounds give different patterns; content checks round-trip
   * and catch a flipped byte. */
  wsp_pattern_t a = {.seed = 1, .round = 0, .p = 100, .density = 0.1,
                     .min_bytes = 10, .max_bytes = 10};
  wsp_pattern_t b = a;
  b.round = 1;
  int d2[100];
  size_t b2[100];
  int na = wsp_pattern_sends(&a, 0, dests, bytes);
  int nb = wsp_pattern_sends(&b, 0, d2, b2);
  CHECK(na == nb && memcmp(dests, d2, (size_t)na * sizeof *d2) != 0,
        "rounds differ");
  unsigned char buf[37];
  wsp_pattern_fill(&a, 3, 4, buf, sizeof buf);
  CHECK(wsp_pattern_check(&a, 3, 4, buf, sizeof buf), "content round trip");
  CHECK(!wsp_pattern_check(&a, 4, 3, buf, sizeof buf), "pair matters");
  buf[36] ^= 1;
  CHECK(!wsp_pattern_check(&a, 3, 4, buf, sizeof buf), "last byte checked");
  return check_summary("test_pattern");
}
