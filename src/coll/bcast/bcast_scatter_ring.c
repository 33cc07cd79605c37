/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Scatter + ring allgather broadcast (van de Geijn; MPICH's
 * scatter_ring_allgather).
 *
 * The message is cut into p nearly equal blocks (wsp__part_start/len over
 * the n bytes; block j belongs to relative rank j = (rank - root) mod p).
 * First a binomial scatter from the root: each rank receives from its
 * parent the blocks of its whole subtree (one contiguous byte range) and
 * passes each child the blocks of that child's subtree, so rank j ends up
 * holding at least block j. Then a ring allgather over the relative ranks:
 * in step s = 0 .. p-2, rank j sends block (j - s) mod p to j + 1 and
 * receives block (j - s - 1) mod p from j - 1; after p - 1 steps every rank
 * has every block. A transfer is left out when the receiver already holds
 * the block from the scatter (e.g. everything sent to the root), and empty
 * blocks (n < p) are never sent. Schedules: src/patterns/bcast_sched.h.
 * Bandwidth-optimal for long messages (each rank receives about n bytes
 * twice over, instead of lg p times), at the price of p - 1 latencies.
 *
 * Preconditions: none (any p, any n, including n < p).
 *
 * In the ring every rank sends and receives at once: beta_x for that part.
 */
#include "bcast.h"

#include "../../patterns/tree.h"

WSP__COST(bcast, scatter_ring,
          "(ceil(lg p) + p-1).alpha + sum_{i=1..ceil(lg p)} drain(n/2^i) + (p-1).drain(n/p) + "
          "((p-1)/p).n.(beta + beta_x)") {
  double p = s->p, f = (p - 1) / p * (double)s->bytes;
  /* Every step waits for the whole of the one before (wsp__drain): the
   * scatter's halves, quarters, ..., then p - 1 blocks around the ring,
   * each sent once its block has arrived. */
  int lg = wsp__ceil_log2(s->p);
  return (lg + p - 1) * m->alpha + wsp__drain_halving(m, (double)s->bytes, lg) +
         (p - 1) * wsp__drain(m, (double)s->bytes / p) + f * (m->beta + m->beta_x);
}

int wsp__bcast_scatter_ring(wsp_comm_t *comm, const wsp__coll_args_t *a) {
  int p = comm->size, r = wsp__tree_rel(comm->rank, a->root, p), rc;
  if ((rc = wsp__bcast_scatter_phase(comm, a))) return rc;
  for (int s = 0; s < p - 1; s++) {
    wsp__bsched_xfer_t send, recv;
    wsp__bsched_ring_step(r, p, s, &send, &recv);
    if ((rc = wsp__bcast_step(comm, a, send, recv))) return rc;
  }
  return WSP_OK;
}
