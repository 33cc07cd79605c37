/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Pairwise alltoallv: this rank's sends one at a time, in the pairwise
 * exchange's order (rank XOR i at step i for a power-of-two p, else r+i;
 * src/patterns/pairwise.h), each finished before the next is posted. Its
 * receives are all posted first (alltoallv.h), so unlike alltoall's
 * pairwise exchange no step waits for a partner's step: a rank with
 * little to send does not hold the others up. When every rank runs it,
 * each receives from about one sender at a time, as in the exchange.
 *
 * Preconditions: none.
 *
 * One latency per send, one after another, and each send's overhead as
 * in the others (the gap); sending while receiving: beta_x. Never below
 * linear's cost: one send at a time was slower than all at once where it
 * was measured (docs/results/coll.md, "alltoallv: which pacing"), and
 * priced without the gaps it had been chosen wherever the calibrated gap
 * came out above the latency.
 */
#include "alltoallv.h"

WSP__COST(alltoallv, pairwise, "k.alpha + (k-1).gap + N.beta_x") {
  return s->peers * m->alpha + (s->peers > 1 ? s->peers - 1 : 0) * m->gap +
         (double)s->total * m->beta_x;
}

int wsp__alltoallv_pairwise(wsp_comm_t *comm, const wsp__coll_args_t *a) {
  return wsp__alltoallv_paced(comm, a, 1, 1);
}
