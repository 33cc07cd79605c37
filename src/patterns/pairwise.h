/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Pairwise exchange for alltoall over p ranks: the pure schedule (no MPI).
 *
 * p-1 steps i = 1..p-1. For a power of two p the partners are symmetric:
 * at step i rank r exchanges with r XOR i (sends its block for that rank
 * and receives that rank's block for it). For any other p rank r sends to
 * (r+i) mod p and receives from (r-i) mod p; over the p-1 steps every
 * ordered pair of distinct ranks meets exactly once, and at each step every
 * rank sends one message and receives one.
 */
#ifndef WSP_PATTERNS_PAIRWISE_H
#define WSP_PATTERNS_PAIRWISE_H

static inline int wsp__pairwise_pow2(int p) { return p > 0 && (p & (p - 1)) == 0; }
/* Rank that r sends to at step i (1 <= i < p). */
static inline int wsp__pairwise_send_peer(int r, int p, int i) {
  return wsp__pairwise_pow2(p) ? (r ^ i) : (r + i) % p;
}
/* Rank that r receives from at step i. */
static inline int wsp__pairwise_recv_peer(int r, int p, int i) {
  return wsp__pairwise_pow2(p) ? (r ^ i) : ((r - i) % p + p) % p;
}

#endif
