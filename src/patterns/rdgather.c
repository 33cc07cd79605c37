/* SPDX-License-Identifier: BSD-3-Clause */
/* Recursive-doubling allgather schedule; see rdgather.h. */
#include "rdgather.h"

int wsp__rdg_nsteps(int p) {
  int n = 0;
  while ((1L << n) < p) n++;
  return n;
}

wsp__rdg_step_t wsp__rdg_step(int r, int p, int k) {
  (void)p;
  int d = 1 << k;
  wsp__rdg_step_t s = {.peer = r ^ d, .send_lo = r & ~(d - 1),
                      .recv_lo = (r ^ d) & ~(d - 1), .nblocks = d};
  return s;
}
