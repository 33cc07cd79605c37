/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Round-robin tournament over n players: a 1-factorisation of the complete
 * graph, the pure schedule (no MPI). The network map probes every pair of
 * nodes in rounds of disjoint pairs with it, so that no node takes part in
 * two probes at once and a round's probes do not disturb each other at
 * the nodes.
 *
 * The circle method. For even n, player n-1 stays put and the others sit
 * on a circle of n-1 places: in round r (0 <= r < n-1) player n-1 meets r,
 * and for k = 1 .. n/2-1 player (r+k) mod (n-1) meets (r-k) mod (n-1).
 * Every player meets every other exactly once over the n-1 rounds. For odd
 * n a phantom player n is added, and whoever meets it sits the round out:
 * n rounds, one bye each.
 */
#ifndef WSP_PATTERNS_TOURNAMENT_H
#define WSP_PATTERNS_TOURNAMENT_H

/* Rounds for n players: n-1 for even n, n for odd n, 0 for n <= 1. */
int wsp__tournament_rounds(int n);
/* The player that i meets in round r, or -1 when i sits round r out (and
 * for n <= 1). */
int wsp__tournament_partner(int n, int r, int i);

#endif
