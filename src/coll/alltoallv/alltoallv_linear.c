/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Linear alltoallv: this rank's sends in the rotated order r+1, r+2, ...,
 * at most 8 in flight (the window of alltoall's linear algorithm); a send
 * is posted as soon as one of the window completes. Its receives are all
 * posted first (alltoallv.h). The rotation spreads the senders over the
 * receivers: at any moment each rank is the target of about 8.
 *
 * Preconditions: none.
 *
 * The window's latencies overlap, every further message adds the gap
 * (LogGP's g, as in wsp__fan_cost); sending while receiving: beta_x.
 */
#include "alltoallv.h"

WSP__COST(alltoallv, linear, "ceil(k/8).alpha + (k - ceil(k/8)).gap + N.beta_x") {
  int w = WSP__A2AV_WINDOW, rounds = (s->peers + w - 1) / w;
  return rounds * m->alpha + (s->peers - rounds) * m->gap + (double)s->total * m->beta_x;
}

int wsp__alltoallv_linear(wsp_comm_t *comm, const wsp__coll_args_t *a) {
  return wsp__alltoallv_paced(comm, a, WSP__A2AV_WINDOW, 0);
}
