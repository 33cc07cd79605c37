/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Scatter + recursive-doubling allgather broadcast (MPICH's
 * scatter_recursive_doubling_allgather), for any p.
 *
 * The message is cut into p nearly equal blocks (wsp__part_start/len over
 * the n bytes; block j belongs to relative rank j = (rank - root) mod p)
 * and scattered from the root along a binomial tree, as in scatter_ring.
 * Then a recursive-doubling allgather over the relative ranks: in round
 * i = 0 .. ceil(lg p) - 1 (m = 2^i) rank j and rank j xor m swap the blocks
 * of their aligned groups of m ranks, so the groups double each round.
 * Transfers of blocks that the receiver already holds from the scatter are
 * left out, and empty blocks (n < p) are never sent.
 *
 * p not a power of two: in the one round where p cuts the upper half of a
 * pair group short (b + m < p < b + 2m, b = (p-1) & ~(2m-1)), only the
 * m' = p - b - m lowest ranks of the lower half have a partner. Fix-up
 * sub-steps then double the set of lower-half ranks that hold the upper
 * half's blocks [b + m, p): m' -> 2m' -> ... -> m, i.e.
 * f_i = ceil(lg(m / m')) extra steps carrying those m' blocks. Schedules
 * and their exhaustive simulation: src/patterns/bcast_sched.h.
 *
 * Preconditions: none (any p, any n, including n < p).
 */
#include "bcast.h"

#include "../../patterns/tree.h"

WSP__COST(bcast, scatter_rdb,
          "2.ceil(lg p).alpha + 2.sum_{i=1..ceil(lg p)} drain(n/2^i) + ((p-1)/p).n.(beta + "
          "beta_x) + sum over clipped rounds i of f_i.(alpha + drain((m'_i/p).n) + "
          "(m'_i/p).n.beta), empty for p a power of two") {
  double p = s->p, n = (double)s->bytes;
  /* Scatter at beta, the recursive-doubling exchanges at beta_x. */
  /* Every step waits for the whole of the one before (wsp__drain): the
   * scatter's halves, quarters, ..., the doublings in reverse, each
   * fix-up. */
  int lg = wsp__ceil_log2(s->p);
  double c = 2.0 * lg * m->alpha + 2.0 * wsp__drain_halving(m, n, lg) +
             (p - 1) / p * n * (m->beta + m->beta_x);
  for (int i = 0; i < wsp__bsched_rd_rounds(s->p); i++) {
    int f = wsp__bsched_rd_fixups(s->p, i);
    double b = wsp__bsched_rd_clipped(s->p, i) / p * n;
    if (f) c += f * (m->alpha + wsp__drain(m, b) + b * m->beta);
  }
  return c;
}

int wsp__bcast_scatter_rdb(wsp_comm_t *comm, const wsp__coll_args_t *a) {
  int p = comm->size, r = wsp__tree_rel(comm->rank, a->root, p), rc;
  if ((rc = wsp__bcast_scatter_phase(comm, a))) return rc;
  int rounds = wsp__bsched_rd_rounds(p);
  for (int i = 0; i < rounds; i++) {
    int fixups = wsp__bsched_rd_fixups(p, i);
    for (int j = 0; j <= fixups; j++) {
      wsp__bsched_xfer_t send, recv;
      wsp__bsched_rd_step(r, p, i, j, &send, &recv);
      if ((rc = wsp__bcast_step(comm, a, send, recv))) return rc;
    }
  }
  return WSP_OK;
}
