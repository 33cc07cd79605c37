/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Ring allgather.
 *
 * Rank r copies its own block into place, then runs p-1 steps on the ring
 * r -> r+1 (src/patterns/ring.h): at step i it sends block r-i (its own at
 * step 0, afterwards the one it just received) to r+1 and receives block
 * r-i-1 from r-1, each straight into its final place in recvbuf. Every
 * link carries p-1 blocks and no more, so for large blocks it runs at link
 * speed; the price is p-1 latencies.
 *
 * Preconditions: none (any p, any block size).
 *
 * Each step a rank sends and receives at once: beta_x (src/model/model.h).
 */
#include "../coll_internal.h"

#include "../../patterns/ring.h"

WSP__COST(allgather, ring,
          "(p-1).alpha + (p-1).n.beta_x") {
  return (s->p - 1) * m->alpha + (double)(s->p - 1) * (double)s->bytes * m->beta_x;
}

int wsp__allgather_ring(wsp_comm_t *comm, const wsp__coll_args_t *a) {
  int p = comm->size, r = comm->rank, rc = WSP_OK;
  size_t n = a->block;
  char *out = a->recvbuf;
  wsp__copy_bytes(out + (size_t)r * n, a->sendbuf, n);
  int next = wsp__ring_next(r, p), prev = wsp__ring_prev(r, p);
  for (int i = 0; i < p - 1 && rc == WSP_OK; i++)
    rc = wsp__sendrecv_bytes(comm, out + (size_t)wsp__ring_send_block(r, p, i) * n, n,
                             next, out + (size_t)wsp__ring_recv_block(r, p, i) * n,
                             n, prev, a->tag);
  return rc;
}
