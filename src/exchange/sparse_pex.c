/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pex — personalized exchange with counts found by a reduce-scatter.
 *
 * How it works. Each rank fills a vector of p numbers with a 1 for every
 * destination it sends to. MPI_Reduce_scatter_block with MPI_SUM hands
 * rank j the sum of everybody's entry j: the number of messages j will
 * receive. Then every rank sends its messages (MPI_Isend) and receives
 * exactly that many, probing from any source and receiving the probed source
 * and tag, sizing each buffer from the probe.
 *
 * A rank that failed its argument checks contributes p to every entry; as
 * no true count can reach p (nobody sends to itself here), every rank sees
 * the failure before any data moves, and all skip the data phase.
 *
 * Cost = lg(p).alpha + 8.p.beta (reduce-scatter of p 8-byte counts)
 *        + k.alpha + m.beta; the reduce-scatter grows with p whatever the
 * density, which is what NBX avoids.
 */
#include "sparse_internal.h"


int wsp__sparse_pex(wsp__sparse_round_t *r) {
  wsp_comm_t *c = r->comm;
  int rc = WSP_OK;
  int tag = r->parity ? WSP__TAG_SPARSE_ODD : WSP__TAG_SPARSE_EVEN;
  /* The p counts and the send requests (two per send at most) are the
   * communicator's scratch: nothing here can run out of memory before the
   * reduce-scatter, where every rank must state its part. A message over
   * the lanes is counted once: its announcement is what the probe finds. */
  uint64_t *counts = c->sparse->u64, incoming = 0;
  MPI_Request *reqs = c->sparse->reqs;
  size_t nreq = 0;
  for (int j = 0; j < c->size; j++) counts[j] = r->poisoned ? (uint64_t)c->size : 0;
  for (size_t i = 0; !r->poisoned && i < r->nsends; i++)
    if (r->sends[i].peer != c->rank) counts[r->sends[i].peer] = 1;
  WSP__MPI_COLL_GOTO(c, rc, out, Reduce_scatter_block, counts, &incoming, 1, MPI_UINT64_T,
                     MPI_SUM, c->mpi);
  if (incoming >= (uint64_t)c->size) {
    r->remote_failed = 1;
    goto out;
  }

  if ((rc = wsp__sparse_post_sends(r, tag, 0, reqs, &nreq)) != WSP_OK) goto out;
  /* MPI_Iprobe with back-off rather than a blocking MPI_Probe: some MPI
   * libraries (and SimGrid) busy-poll inside MPI_Probe. */
  wsp__backoff_t bo;
  wsp__backoff_init(&bo, c);
  for (uint64_t k = 0; k < incoming;) {
    MPI_Status st;
    int flag = 0;
    if ((rc = wsp__sparse_probe(r, tag, &flag, &st)) != WSP_OK) goto out;
    if (!flag) {
      if (wsp__backoff_idle(&bo)) {
        rc = wsp__timeout_peers(c, NULL, -1, "the messages the counts announced");
        goto out;
      }
      continue;
    }
    wsp__backoff_reset(&bo);
    if ((rc = wsp__recv_probed(r, &st)) != WSP_OK) goto out;
    k++;
  }
  if ((rc = wsp__recv_wait(r)) != WSP_OK) goto out;
  if (nreq) rc = wsp__waitall(c, (int)nreq, reqs, 0);
out:
  return rc;
}
