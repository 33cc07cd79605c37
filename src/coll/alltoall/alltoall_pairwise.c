/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Pairwise-exchange alltoall.
 *
 * Rank r copies its own block, then runs p-1 steps (src/patterns/
 * pairwise.h): for a power of two p it exchanges blocks with r XOR i at
 * step i (both directions of one pair at once); for any other p it sends
 * its block for (r+i) mod p there and receives the block of (r-i) mod p,
 * each straight from sendbuf into recvbuf. One message in and one out per
 * step keeps every rank's link evenly loaded without flooding anyone.
 *
 * Preconditions: none (any p, any block size).
 *
 * Every step a rank sends one block and receives one at once (from the
 * same partner for a power of two, else from another): beta_x.
 */
#include "../coll_internal.h"

#include "../../patterns/pairwise.h"

WSP__COST(alltoall, pairwise,
          "(p-1).(alpha + n.beta_x)") {
  double b = m->beta_x;
  return (s->p - 1) * (m->alpha + (double)s->bytes * b);
}

int wsp__alltoall_pairwise(wsp_comm_t *comm, const wsp__coll_args_t *a) {
  int p = comm->size, r = comm->rank, rc = WSP_OK;
  size_t n = a->block;
  const char *in = a->sendbuf;
  char *out = a->recvbuf;
  wsp__copy_bytes(out + (size_t)r * n, in + (size_t)r * n, n);
  for (int i = 1; i < p && rc == WSP_OK; i++) {
    int dst = wsp__pairwise_send_peer(r, p, i), src = wsp__pairwise_recv_peer(r, p, i);
    rc = wsp__sendrecv_bytes(comm, in + (size_t)dst * n, n, dst, out + (size_t)src * n,
                             n, src, a->tag);
  }
  return rc;
}
