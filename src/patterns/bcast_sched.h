/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Scatter-based broadcasts: the pure schedules (no MPI).
 *
 * The message is cut into p blocks, block j belonging to relative rank j
 * (ranks relative to the root, as in tree.h; block j is bytes
 * [wsp__part_start(n, p, j), wsp__part_start(n, p, j + 1)) of the message,
 * so a range of blocks [lo, hi) is one contiguous range of bytes).
 *
 * Scatter: a binomial scatter from the root. Relative rank r receives from
 * its binomial parent the blocks of its subtree, [r, r + subtree(r)), and
 * sends each child c the blocks [c, c + subtree(c)). Afterwards r holds
 * exactly [r, r + subtree(r)) (the root holds everything).
 *
 * Ring allgather (van de Geijn): p - 1 steps; in step s rank r sends block
 * (r - s) mod p to r + 1 and receives block (r - s - 1) mod p from r - 1.
 * A transfer is left out when the receiver already holds the block from
 * the scatter (both ends know it), so no rank ever receives a block twice.
 *
 * Recursive-doubling allgather, any p: rounds i = 0 .. ceil(lg p) - 1 with
 * m = 2^i. Before round i rank r holds (at least) its group
 * G_i(r) = [r & ~(m-1), (r & ~(m-1)) + m) clipped to [0, p). In round i, r
 * and r ^ m (when < p) exchange their groups (a transfer is left out when
 * the receiver already holds that group from the scatter). Then r holds its
 * pair group [b, b + 2m), b = r & ~(2m-1), clipped to p, except in the one
 * pair group that p clips inside its upper half (b + m < p < b + 2m): there
 * only the m' = p - b - m lowest ranks of the lower half had a partner.
 * Fix-up sub-steps then spread the upper half's blocks [b + m, p) inside
 * the lower half by doubling: in sub-step j (h = m'.2^(j-1)) lower-half
 * rank b + o, o < h, sends them to b + o + h (if o + h < m), until all m
 * have them: ceil(lg(m / m')) sub-steps. For p a power of two there are no
 * fix-ups and this is the plain recursive doubling of MPICH's
 * scatter_recursive_doubling_allgather.
 */
#ifndef WSP_PATTERNS_BCAST_SCHED_H
#define WSP_PATTERNS_BCAST_SCHED_H

/* One transfer of the blocks [lo, hi) with relative rank peer; peer = -1
 * (and lo = hi = 0) when there is none. */
typedef struct wsp__bsched_xfer {
  int peer;
  int lo, hi;
} wsp__bsched_xfer_t;

/* Blocks that relative rank r holds after the binomial scatter: [*lo, *hi). */
void wsp__bsched_scatter_held(int r, int p, int *lo, int *hi);

/* The scatter's message from r's parent (recv) and to its i-th child (in
 * wsp__binomial_children order, largest subtree first): the child's
 * subtree blocks. Returns the number of children; fills at most max. */
int wsp__bsched_scatter_sends(int r, int p, wsp__bsched_xfer_t *sends, int max);
wsp__bsched_xfer_t wsp__bsched_scatter_recv(int r, int p);

/* Ring allgather step s in [0, p-1): what r sends to r+1 and receives from
 * r-1 (peer -1 when left out). Blocks are single: hi = lo + 1. */
void wsp__bsched_ring_step(int r, int p, int s, wsp__bsched_xfer_t *send,
                          wsp__bsched_xfer_t *recv);

/* Recursive doubling: number of rounds (ceil(lg p)); fix-up sub-steps
 * after round i (0 for p a power of two); the size m' of the clipped
 * upper half in round i (0 when no pair group is clipped inside its upper
 * half). */
int wsp__bsched_rd_rounds(int p);
int wsp__bsched_rd_fixups(int p, int i);
int wsp__bsched_rd_clipped(int p, int i);
/* What r sends and receives in round i, sub-step j (0: the exchange,
 * 1..fixups: the fix-ups). A rank sends at most one and receives at most
 * one transfer per sub-step, never overlapping blocks. */
void wsp__bsched_rd_step(int r, int p, int i, int j, wsp__bsched_xfer_t *send,
                        wsp__bsched_xfer_t *recv);

#endif
