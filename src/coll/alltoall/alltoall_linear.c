/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Linear alltoall with a bounded window.
 *
 * Rank r copies its own block, then exchanges with its peers in the order
 * i = 1, 2, ..., p-1: it sends its block for (r+i) mod p there and receives
 * the block of (r-i) mod p, straight between sendbuf and recvbuf. At most
 * W = 8 such exchanges (8 receives and 8 sends) are in flight at once; as
 * soon as both requests of one complete, the next peer's pair is posted in
 * its slot, the send before the receive. The rotated order means that at
 * any moment each rank is the target of about W senders, not all p-1 at
 * once, and the window bounds the requests and unexpected messages in
 * flight. Deadlock-free: the
 * lowest step not yet done anywhere is posted on every rank (its
 * predecessors are all complete), so it can complete.
 *
 * Waiting polls MPI_Testsome with the library's back-off (no spinning).
 *
 * Preconditions: none (any p, any block size).
 */
#include "../coll_internal.h"

#include "../../patterns/pairwise.h"

enum { WSP__A2A_WINDOW = 8 };

/* Every rank sends and receives at once all along: beta_x. */
WSP__COST(alltoall, linear,
          "(p-1).n.beta_x + ceil((p-1)/8).alpha") {
  int w = WSP__A2A_WINDOW;
  return (double)(s->p - 1) * (double)s->bytes * m->beta_x +
         (double)((s->p - 1 + w - 1) / w) * m->alpha;
}

int wsp__alltoall_linear(wsp_comm_t *comm, const wsp__coll_args_t *a) {
  enum { W = WSP__A2A_WINDOW };
  int p = comm->size, r = comm->rank, rc = WSP_OK;
  size_t n = a->block;
  const char *in = a->sendbuf;
  char *out = a->recvbuf;
  /* Slot s uses req[2s] (receive) and req[2s+1] (send). */
  MPI_Request req[2 * W];
  int busy[W] = {0}, idx[2 * W];
  for (int i = 0; i < 2 * W; i++) req[i] = MPI_REQUEST_NULL;
  wsp__copy_bytes(out + (size_t)r * n, in + (size_t)r * n, n);
  int next = 1, active = 0;
  wsp__backoff_t b;
  wsp__backoff_init(&b, comm);
  for (;;) {
    /* Fill free slots with the next steps. */
    for (int s = 0; s < W && next < p && rc == WSP_OK; s++) {
      if (busy[s]) continue;
      int dst = (r + next) % p, src = ((r - next) % p + p) % p;
      /* Send first (wsp__sendrecv_typed in src/core/p2p.h says why): at small p
       * the windows of r and its peers pair up into exchanges. */
      rc = wsp__isend_typed(comm, in + (size_t)dst * n, n, MPI_BYTE, dst, a->tag,
                            &req[2 * s + 1]);
      if (rc == WSP_OK)
        rc = wsp__irecv_typed(comm, out + (size_t)src * n, n, MPI_BYTE, src, a->tag,
                              &req[2 * s]);
      if (req[2 * s] != MPI_REQUEST_NULL || req[2 * s + 1] != MPI_REQUEST_NULL)
        busy[s] = 1, active++;
      next++;
    }
    if (rc != WSP_OK || active == 0) break;
    int done = 0;
    int mrc = MPI_Testsome(2 * W, req, &done, idx, MPI_STATUSES_IGNORE);
    if (mrc != MPI_SUCCESS) {
      rc = wsp__mpi_fail(comm, mrc, "MPI_Testsome", WSP__WHERE);
      break;
    }
    for (int s = 0; s < W; s++)
      if (busy[s] && req[2 * s] == MPI_REQUEST_NULL && req[2 * s + 1] == MPI_REQUEST_NULL)
        busy[s] = 0, active--;
    if (done > 0 && done != MPI_UNDEFINED) {
      if ((rc = wsp__lane_failure(comm, WSP_OK)) != WSP_OK) break;
      wsp__backoff_reset(&b);
    } else if (wsp__backoff_idle(&b)) {
      rc = wsp__timeout(comm, 2 * W, req, "the exchanges in flight");
      break;
    }
  }
  if (rc != WSP_OK) {
    for (int s = 0; s < W; s++) wsp__abandon(comm, rc, 1, &req[2 * s], 1, &req[2 * s + 1]);
  }
  return rc;
}
