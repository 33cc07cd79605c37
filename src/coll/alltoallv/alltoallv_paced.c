/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The alltoallv engine (alltoallv.h says why every receive is posted
 * first).
 */
#include "alltoallv.h"

#include "../../patterns/pairwise.h"

#include <stdlib.h>

static int wsp__a2av_peer(int r, int p, int i, int pairwise, int send) {
  if (pairwise) return send ? wsp__pairwise_send_peer(r, p, i) : wsp__pairwise_recv_peer(r, p, i);
  return send ? (r + i) % p : ((r - i) % p + p) % p;
}

int wsp__alltoallv_paced(wsp_comm_t *comm, const wsp__coll_args_t *a, int window, int pairwise) {
  int p = comm->size, r = comm->rank, rc = WSP_OK;
  const char *in = a->sendbuf;
  char *out = a->recvbuf;
  /* Receives in slots 0..p-1, sends in p..2p-1 (by step). */
  MPI_Request *req = malloc(2 * (size_t)p * sizeof *req);
  if (req == NULL) return wsp__fail(comm, WSP_ERR_NOMEM, "alltoallv: out of memory");
  for (int i = 0; i < 2 * p; i++) req[i] = MPI_REQUEST_NULL;
  MPI_Request *sreq = req + p;
  wsp__copy_bytes(out + a->rdispls[r], in + a->sdispls[r], a->rcounts[r]);
  size_t inbytes = 0;
  for (int i = 1; i < p && rc == WSP_OK; i++) {
    int src = wsp__a2av_peer(r, p, i, pairwise, 0);
    if (a->rcounts[src] == 0) continue;
    inbytes += a->rcounts[src];
    rc = wsp__irecv_bytes(comm, out + a->rdispls[src], a->rcounts[src], src, a->tag, &req[i]);
  }
  int next = 1, inflight = 0;
  while (rc == WSP_OK && next < p) {
    while (next < p && inflight < window && rc == WSP_OK) {
      int dst = wsp__a2av_peer(r, p, next, pairwise, 1);
      if (a->scounts[dst] > 0) {
        rc = wsp__isend_bytes(comm, in + a->sdispls[dst], a->scounts[dst], dst, a->tag, 0,
                              &sreq[next]);
        inflight += rc == WSP_OK;
      }
      next++;
    }
    if (rc != WSP_OK || next >= p) break;
    /* The window is full: wait for one of its sends. */
    int idx = MPI_UNDEFINED;
    if ((rc = wsp__waitany(comm, p, sreq, 0, &idx)) != WSP_OK) break;
    if (idx != MPI_UNDEFINED) inflight--;
  }
  if (rc == WSP_OK) rc = wsp__waitall(comm, 2 * p, req, inbytes);
  if (rc != WSP_OK) wsp__abandon(comm, rc, p, req, p, sreq);
  free(req);
  return rc;
}
