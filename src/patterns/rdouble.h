/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Recursive doubling for any p: the pure schedule (no MPI).
 *
 * p' is the largest power of two <= p and r = p - p'. Ranks below 2r pair
 * up: each even one hands its value to the odd one above it and waits; the
 * odd ones and all ranks >= 2r (p' of them, renumbered 0..p'-1) run lg(p')
 * exchange steps with the partner whose new number differs in one bit;
 * finally each odd rank below 2r hands the result back to its even
 * neighbour. Every rank ends with the combination of all p values.
 */
#ifndef WSP_PATTERNS_RDOUBLE_H
#define WSP_PATTERNS_RDOUBLE_H

typedef enum wsp__rd_action {
  WSP__RD_DONE = 0,     /* nothing left */
  WSP__RD_SEND = 1,     /* send own value to peer */
  WSP__RD_RECV = 2,     /* receive a value from peer (and combine it) */
  WSP__RD_EXCHANGE = 3, /* send own value to peer and combine peer's */
  WSP__RD_RECV_RESULT = 4 /* receive the final result from peer (replace) */
} wsp__rd_action_t;

typedef struct wsp__rd_step {
  wsp__rd_action_t action;
  int peer;
} wsp__rd_step_t;

/* Number of steps of `rank` (its schedule is steps 0..n-1). */
int wsp__rd_nsteps(int p, int rank);
/* Step `step` of `rank`; WSP__RD_DONE past the end. */
wsp__rd_step_t wsp__rd_step(int p, int rank, int step);

#endif
