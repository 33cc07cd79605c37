/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Schedules of the reductions (reduce, allreduce): the pure math, no MPI.
 *
 * Every schedule here keeps MPI's rank order: each partial result is the
 * combination of a contiguous range of ranks, and two partials are only
 * ever combined when their ranges are adjacent, the lower range on the
 * left. So non-commutative ops come out as a0 op a1 op ... op a(p-1).
 *
 * 1. Ordered binomial reduce (wsp__obin_schedule). The live ranks form a
 *    sorted list (index 0, 1, ..., m-1; at the start every rank, m = p).
 *    In each round the list is cut into pairs (2j, 2j+1); one of each pair
 *    receives the other's partial and combines it (the partner's range is
 *    adjacent: right before or right after its own), the other sends and is
 *    done. Which member survives is the one whose index has the parity of
 *    the root's index, so the root survives every round; a last unpaired
 *    index just carries over. The survivors, in order, are the next list
 *    (index j); m becomes ceil(m/2), so the root has everything after
 *    ceil(lg p) rounds. For root 0 this is exactly the binomial tree.
 *
 * 2. Fold to a power of two (wsp__fold_*): q = the largest power of two
 *    <= p, r = p - q. Ranks 2i and 2i+1 (i < r) form a pair: one of them
 *    (2i+1, unless `keep` is 2i) combines both values and takes part in
 *    the power-of-two phase as new rank i; ranks >= 2r are new rank
 *    rank - r. New ranks are in the order of the (contiguous) ranges their
 *    ranks cover.
 *
 * 3. Recursive halving windows (wsp__halving_window): count elements are
 *    cut into q blocks (wsp__rsched_part_start); at depth d the window of new rank
 *    nr is the run of q/2^d blocks picked by nr's low d bits, bit 0 first
 *    (bit 0 chooses the lower/upper half, bit 1 the half of that, ...).
 *    Reduce-scatter step k (k = 0, 1, ...) pairs nr with nr ^ 2^k: both
 *    hold the depth-k window, each keeps its depth-(k+1) half and sends
 *    the other half. Pairing the lowest bit first keeps ranges contiguous:
 *    before step k, nr's partial covers the new ranks that agree with it
 *    above bit k-1, which is a contiguous run adjacent to its partner's.
 *    Gathering (or allgathering) undoes it: step k = lg q - 1 down to 0
 *    joins sibling depth-(k+1) windows into the depth-k window.
 */
#ifndef WSP_PATTERNS_REDUCE_SCHED_H
#define WSP_PATTERNS_REDUCE_SCHED_H

#include <stddef.h>

/* ---- 1. ordered binomial reduce ---- */
typedef enum wsp__obin_action {
  WSP__OBIN_RECV_BEFORE = 1, /* receive peer's partial; its ranks come first:
                               mine = peer op mine */
  WSP__OBIN_RECV_AFTER = 2,  /* receive peer's partial; its ranks come after:
                               mine = mine op peer */
  WSP__OBIN_SEND = 3         /* send my partial to peer; then done */
} wsp__obin_action_t;

typedef struct wsp__obin_step {
  wsp__obin_action_t action;
  int peer;
  int round; /* 0 .. ceil(lg p) - 1 */
} wsp__obin_step_t;

/* Writes rank's steps in order (at most max; ceil(lg p) <= 63 suffice)
 * and returns how many there are. Non-root ranks end with one SEND. */
int wsp__obin_schedule(int rank, int p, int root, wsp__obin_step_t *steps,
                      int max);

/* ---- 2. fold to a power of two ---- */
/* Largest power of two <= p (p >= 1), and its log. */
int wsp__rsched_pow2_floor(int p);
int wsp__rsched_log2(int q);
/* New rank of `rank` in the power-of-two phase, or -1 if it hands its
 * value to its pair partner and sits out. keep: a rank that must take
 * part (the root of a reduce), or -1. */
int wsp__fold_newrank(int rank, int p, int keep);
/* The rank that plays new rank nr. */
int wsp__fold_oldrank(int nr, int p, int keep);
/* The other member of rank's pair, or -1 when rank is not in a pair. */
int wsp__fold_partner(int rank, int p);

/* ---- 3. recursive halving windows ---- */
/* Start of part i when count items are split into parts nearly equal
 * parts (the first count % parts parts have one more). */
static inline size_t wsp__rsched_part_start(size_t count, int parts, int i) {
  size_t q = count / (size_t)parts, r = count % (size_t)parts;
  size_t ui = (size_t)i;
  return ui * q + (ui < r ? ui : r);
}
/* The depth-d window of new rank nr among q (a power of two) ranks, as an
 * element range [*start, *start + *len) of count elements. */
void wsp__halving_window(int nr, int depth, int q, size_t count, size_t *start,
                        size_t *len);
/* The same window as a run of parts [*first, *first + *n) of the q. */
void wsp__halving_parts(int nr, int depth, int q, int *first, int *n);
/* The same window over parts of given sizes: part i is the elements
 * [bounds[i], bounds[i + 1]) (q + 1 entries, nondecreasing). */
void wsp__halving_window_in(int nr, int depth, int q, const size_t *bounds, size_t *start,
                            size_t *len);
/* After lg q steps new rank nr's window is part wsp__bitrev(nr, lg q): x's
 * lowest lg bits in reverse order (bit 0 picks the half first). */
int wsp__bitrev(int x, int lg);

#endif
