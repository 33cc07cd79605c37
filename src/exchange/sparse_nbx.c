/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nbx — the nonblocking consensus of Hoefler, Siebert and Lumsdaine
 * (PPoPP 2010) for dynamic sparse data exchange.
 *
 * How it works. Each rank starts a synchronous send (MPI_Issend) to every
 * peer. A synchronous send completes only once the receiver has matched it,
 * so when all of a rank's sends have completed, every message it sent has
 * been received. The rank then enters a non-blocking collective and keeps
 * receiving (MPI_Iprobe from any source, then MPI_Recv of exactly the probed
 * source and tag) until that collective
 * completes. The collective completes once every rank has entered it, that
 * is once every message of the round has been matched: the round is over
 * and no message is left behind, without anyone knowing in advance who
 * sends to whom.
 *
 * Where the paper uses MPI_Ibarrier, this uses a non-blocking sum
 * (wsp__sum_*, recursive doubling on point-to-point messages; see
 * src/core/sum.c for why not MPI_Iallreduce) of three numbers: a failure
 * count (a rank with bad arguments enters at once
 * and the others learn that the round must be abandoned) and the round's
 * total messages and bytes, with which `auto` notices a changed pattern.
 * Both cost about lg(p) latencies.
 *
 * Cost = k.(2.alpha) + lg(p).alpha + m.beta for k peers and m bytes sent by
 * the busiest rank; nothing is proportional to p.
 */
#include "sparse_internal.h"


int wsp__sparse_nbx(wsp__sparse_round_t *r) {
  wsp_comm_t *c = r->comm;
  int rc = WSP_OK;
  int tag = r->parity ? WSP__TAG_SPARSE_ODD : WSP__TAG_SPARSE_EVEN;
  size_t nreq = 0;
  MPI_Request *reqs = c->sparse->reqs; /* 2 per send at most, nsends < p: the scratch holds them */
  wsp__sum_t consensus;
  uint64_t mine[3];

  if ((rc = wsp__sparse_post_sends(r, tag, 1, reqs, &nreq)) != WSP_OK) goto out;

  wsp__backoff_t bo;
  wsp__backoff_init(&bo, c);
  int entered = 0;
  for (;;) {
    int progress = 0, flag = 0;
    MPI_Status st;
    if ((rc = wsp__sparse_probe(r, tag, &flag, &st)) != WSP_OK) goto out;
    if (flag) {
      if ((rc = wsp__recv_probed(r, &st)) != WSP_OK) goto out;
      progress = 1;
    }
    if (!entered) {
      int done = 1;
      if (nreq)
        WSP__MPI_GOTO(c, MPI_Testall((int)nreq, reqs, &done,
                                     MPI_STATUSES_IGNORE),
                      rc, out);
      if (done) {
        mine[0] = (uint64_t)r->poisoned;
        mine[1] = r->local.sends;
        mine[2] = r->local.bytes;
        if ((rc = wsp__sum_start(&consensus, c,
                                 r->parity ? WSP__TAG_SPARSE_SUM_ODD
                                           : WSP__TAG_SPARSE_SUM_EVEN,
                                 mine, 3)) != WSP_OK)
          goto out;
        entered = 1;
        progress = 1;
      }
    } else {
      int done = 0;
      if ((rc = wsp__sum_test(&consensus, &done)) != WSP_OK) goto out;
      if (done) break;
    }
    if (progress) {
      wsp__backoff_reset(&bo);
    } else if (wsp__backoff_idle(&bo)) {
      rc = entered ? wsp__timeout(c, consensus.nreq, consensus.req,
                                  "the sparse exchange's consensus")
                   : wsp__timeout(c, (int)nreq, reqs, "its messages to be received");
      goto out;
    }
  }
  if ((rc = wsp__recv_wait(r)) != WSP_OK) goto out;
  r->remote_failed = consensus.val[0] != 0;
  r->have_global = 1;
  r->global.sends = consensus.val[1];
  r->global.bytes = consensus.val[2];

out:
  /* Only reached with pending requests after an MPI failure, when the
   * communicator is unusable anyway; the requests are left to MPI. */
  return rc;
}
