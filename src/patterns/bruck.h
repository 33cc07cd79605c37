/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Bruck's allgather and alltoall (Bruck, Ho, Kipnis, Upfal & Weathersby
 * 1997) for any p: the pure schedules and the local block moves (no MPI).
 *
 * Both work on a local array of p blocks indexed relative to the rank, and
 * take ceil(lg p) steps k = 0, 1, ... with distance d = 2^k.
 *
 * Allgather. Local block j is the block of rank (r + j) mod p; rank r
 * starts with only its own block at j = 0. At step k it sends local blocks
 * [0, c) to rank r - d and receives local blocks [d, d + c) from rank r + d,
 * where c = min(d, p - d). Before step k every rank holds local [0, d)
 * (ranks r .. r+d-1); rank r + d's [0, d) is the next d ranks, which are
 * r's local [d, 2d), so the held range doubles (capped at p). After the
 * last step local j holds rank (r + j)'s block for all j, and a rotation
 * right by r blocks puts block i at index i.
 *
 * Alltoall. First a local rotation: local block j is the block r sends to
 * rank (r + j) mod p, i.e. r's send block (r + j) mod p. At step k rank r
 * sends every local block whose index has bit k set to rank r + d and
 * receives the same indices from rank r - d, replacing them. A block at
 * index j therefore moves forward by exactly j ranks over the steps (one
 * hop per set bit) and keeps its index, so at the end local j of rank r
 * came from rank (r - j) mod p and is meant for r: the final placement is
 * recv block (r - j) mod p = local j, which is reversing local [0, r] and
 * reversing local [r+1, p) in place.
 */
#ifndef WSP_PATTERNS_BRUCK_H
#define WSP_PATTERNS_BRUCK_H

#include <stddef.h>

/* ceil(lg p): the steps of both algorithms (0 for p = 1). */
int wsp__bruck_nsteps(int p);

/* ---- allgather ---- */
/* Rank r sends local [0, count) to send_peer and receives local
 * [recv_lo, recv_lo + count) from recv_peer at step k. */
typedef struct wsp__bruck_ag_step {
  int send_peer, recv_peer;
  int count;
  int recv_lo;
} wsp__bruck_ag_step_t;
wsp__bruck_ag_step_t wsp__bruck_ag_step(int r, int p, int k);
/* Index in the final buffer of local block j of rank r: (r + j) mod p. */
static inline int wsp__bruck_ag_final(int r, int p, int j) { return (r + j) % p; }

/* ---- alltoall ---- */
/* Send block of rank r that goes to local index j at the start. */
static inline int wsp__bruck_a2a_initial(int r, int p, int j) { return (r + j) % p; }
/* Receive-buffer index of local block j of rank r at the end. */
static inline int wsp__bruck_a2a_final(int r, int p, int j) {
  return ((r - j) % p + p) % p;
}
static inline int wsp__bruck_a2a_send_peer(int r, int p, int k) {
  return (r + (1 << k)) % p;
}
static inline int wsp__bruck_a2a_recv_peer(int r, int p, int k) {
  return ((r - (1 << k)) % p + p) % p;
}
/* Local indices moved at step k (those in [0, p) with bit k set), in
 * increasing order; writes them to idx (if not NULL) and returns how many. */
int wsp__bruck_a2a_blocks(int p, int k, int *idx);
/* The most blocks any step moves (the size of a packing buffer). */
int wsp__bruck_a2a_max_blocks(int p);
/* Copies the blocks of step k from the local array buf to out (pack) or
 * from out back into buf (unpack). */
void wsp__bruck_a2a_pack(const char *buf, int p, int k, size_t block, char *out);
void wsp__bruck_a2a_unpack(char *buf, int p, int k, size_t block, const char *in);

/* ---- local block moves on an array of blocks of `block` bytes ---- */
/* Reverses the order of blocks [lo, hi). */
void wsp__blocks_reverse(char *buf, int lo, int hi, size_t block);
/* Rotates the p blocks right by s: block j moves to (j + s) mod p. */
void wsp__blocks_rotate_right(char *buf, int p, int s, size_t block);
/* The alltoall's final placement in place: block j moves to (r - j) mod p. */
void wsp__bruck_a2a_finish(char *buf, int r, int p, size_t block);

#endif
