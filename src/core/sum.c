/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A non-blocking sum of a few 64-bit counters over all ranks of a
 * wsp_comm_t, built from point-to-point messages on the private
 * communicator by recursive doubling (src/patterns/rdouble.c).
 *
 * Why not MPI_Iallreduce: NBX polls MPI_Iprobe while its consensus is in
 * flight, and under SimGrid 3.32 each MPI_Iprobe made while an
 * MPI_Iallreduce is pending costs time that grows with every round already
 * run, which made simulations of NBX quadratic in their rounds
 * (docs/results/simgrid.md, "MPI_Iprobe beside a pending
 * MPI_Iallreduce"). This engine costs lg(p) message latencies
 * like a good MPI_Iallreduce, is progressed exactly when the caller polls,
 * and behaves alike under every MPI.
 */
#include "wsp_internal.h"

#include "../patterns/rdouble.h"

int wsp__sum_start(wsp__sum_t *s, const wsp_comm_t *comm, int tag,
                   const uint64_t *v, int n) {
  if (n < 1 || n > WSP__SUM_MAX)
    return wsp__fail(comm, WSP_ERR_INTERNAL, "wsp__sum_start: n = %d", n);
  s->comm = comm;
  s->tag = tag;
  s->n = n;
  s->step = 0;
  s->started = 0;
  s->nreq = 0;
  s->nsteps = wsp__rd_nsteps(comm->size, comm->rank);
  for (int i = 0; i < n; i++) s->val[i] = v[i];
  return WSP_OK;
}

int wsp__sum_test(wsp__sum_t *s, int *done) {
  const wsp_comm_t *c = s->comm;
  int rc = WSP_OK;
  *done = 0;
  while (s->step < s->nsteps) {
    wsp__rd_step_t st = wsp__rd_step(c->size, c->rank, s->step);
    if (!s->started) {
      size_t n = (size_t)s->n;
      s->nreq = 0;
      s->req[0] = s->req[1] = MPI_REQUEST_NULL;
      if (st.action == WSP__RD_SEND || st.action == WSP__RD_EXCHANGE)
        rc = wsp__isend_typed(c, s->val, n, MPI_UINT64_T, st.peer, s->tag, &s->req[s->nreq++]);
      if (rc == WSP_OK && (st.action == WSP__RD_RECV || st.action == WSP__RD_EXCHANGE))
        rc = wsp__irecv_typed(c, s->in, n, MPI_UINT64_T, st.peer, s->tag, &s->req[s->nreq++]);
      if (rc == WSP_OK && st.action == WSP__RD_RECV_RESULT)
        rc = wsp__irecv_typed(c, s->val, n, MPI_UINT64_T, st.peer, s->tag, &s->req[s->nreq++]);
      if (rc != WSP_OK) goto out;
      s->started = 1;
    }
    int flag = 0;
    WSP__MPI_GOTO(c, MPI_Testall(s->nreq, s->req, &flag, MPI_STATUSES_IGNORE),
                  rc, out);
    if (!flag) return WSP_OK;
    if (st.action == WSP__RD_RECV || st.action == WSP__RD_EXCHANGE)
      for (int i = 0; i < s->n; i++) s->val[i] += s->in[i];
    s->step++;
    s->started = 0;
  }
  *done = 1;
out:
  return rc;
}

int wsp__sum_wait(wsp__sum_t *s) {
  wsp__backoff_t bo;
  wsp__backoff_init(&bo, s->comm);
  for (;;) {
    int done, rc = wsp__sum_test(s, &done);
    if (rc != WSP_OK || done) return rc;
    if (wsp__backoff_idle(&bo)) return wsp__timeout(s->comm, s->nreq, s->req, "a sum of counters");
  }
}
