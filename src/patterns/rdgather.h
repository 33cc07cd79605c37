/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Recursive-doubling allgather for a power of two p: the pure schedule (no
 * MPI).
 *
 * At step k (0 <= k < lg p) rank r exchanges with r XOR 2^k. Before the
 * step r holds the 2^k blocks of the ranks that agree with r in every bit
 * from k up: the contiguous range starting at r with its low k bits
 * cleared. It sends that range and receives the partner's (the adjacent
 * range of the same length), so the range doubles; after lg p steps it is
 * all p blocks.
 */
#ifndef WSP_PATTERNS_RDGATHER_H
#define WSP_PATTERNS_RDGATHER_H

typedef struct wsp__rdg_step {
  int peer;     /* partner of this step */
  int send_lo;  /* first block sent (the range held before the step) */
  int recv_lo;  /* first block received */
  int nblocks;  /* blocks in each direction: 2^k */
} wsp__rdg_step_t;

/* Steps for p (lg p; p must be a power of two). */
int wsp__rdg_nsteps(int p);
/* Step k of rank r. */
wsp__rdg_step_t wsp__rdg_step(int r, int p, int k);

#endif
