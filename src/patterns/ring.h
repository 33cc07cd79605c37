/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Ring schedule for allgather over p ranks: the pure schedule (no MPI).
 *
 * Rank r sends to r+1 and receives from r-1 (mod p). At step i
 * (0 <= i < p-1) it forwards the block it got at the previous step (its own
 * at step 0), which is the block of rank r-i, and receives the block of
 * rank r-i-1. After p-1 steps every rank holds every block; each link
 * carries p-1 blocks, which is why the ring is bandwidth-optimal.
 */
#ifndef WSP_PATTERNS_RING_H
#define WSP_PATTERNS_RING_H

static inline int wsp__ring_next(int r, int p) { return (r + 1) % p; }
static inline int wsp__ring_prev(int r, int p) { return (r - 1 + p) % p; }
/* Block that rank r sends at step i (0 <= i < p-1). */
static inline int wsp__ring_send_block(int r, int p, int i) {
  return ((r - i) % p + p) % p;
}
/* Block that rank r receives at step i. */
static inline int wsp__ring_recv_block(int r, int p, int i) {
  return ((r - i - 1) % p + p) % p;
}

#endif
