/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Sparse alltoallv: every non-empty send at once, after every non-empty
 * receive (alltoallv.h). The shape of a real alltoallv is often sparse
 * (most counts zero, a few pairs carrying most of the bytes: the source
 * document on sparse exchange): then this rank's few messages all move
 * together, and no send waits behind another whose receiver is busy.
 *
 * Preconditions: none.
 *
 * All latencies overlap and each further message adds the gap, as in
 * wsp__fan_cost; sending while receiving: beta_x. The model sees no cost
 * in many flows at once into one receiver (incast): where a fabric
 * suffers from it, force linear (WSP_ALLTOALLV_ALGORITHM=linear).
 */
#include "alltoallv.h"

#include <limits.h>

WSP__COST(alltoallv, sparse, "alpha + (k-1).gap + N.beta_x") {
  return m->alpha + (s->peers > 1 ? s->peers - 1 : 0) * m->gap + (double)s->total * m->beta_x;
}

int wsp__alltoallv_sparse(wsp_comm_t *comm, const wsp__coll_args_t *a) {
  return wsp__alltoallv_paced(comm, a, INT_MAX, 0);
}
