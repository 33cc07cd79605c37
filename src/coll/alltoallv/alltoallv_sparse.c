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
 * wsp__fan_cost; sending while receiving: beta_x. Beyond linear's window
 * each message is also charged a latency: the model has no term for many
 * flows into one receiver at once (incast), and until a measurement says
 * what they cost the model never prefers sparse: up to linear's window the
 * two send alike and cost the same (linear, listed first, is taken), and
 * beyond it linear's rounds cost less. Force it
 * (WSP_ALLTOALLV_ALGORITHM=sparse) for rows with many small blocks.
 */
#include "alltoallv.h"

#include <limits.h>

WSP__COST(alltoallv, sparse, "alpha + (k-1).gap + max(0, k-8).alpha + N.beta_x") {
  int over = s->peers > WSP__A2AV_WINDOW ? s->peers - WSP__A2AV_WINDOW : 0;
  return (1 + over) * m->alpha + (s->peers > 1 ? s->peers - 1 : 0) * m->gap +
         (double)s->total * m->beta_x;
}

int wsp__alltoallv_sparse(wsp_comm_t *comm, const wsp__coll_args_t *a) {
  return wsp__alltoallv_paced(comm, a, INT_MAX, 0);
}
