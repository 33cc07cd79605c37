/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Point-to-point on the private communicator (declarations and the reasons
 * in p2p.h).
 *
 * Messages of any size. MPI describes a message as (int count, datatype),
 * so a message of more than INT_MAX elements cannot be type x count. Here
 * such a message becomes one element of a derived type: q chunks of `limit`
 * elements followed by a remainder of r elements. The limit is
 * cfg.big_message (INT_MAX by default); tests lower it to walk this path
 * with small buffers.
 */
#include "p2p.h"

#include "tags.h"
#include "wsp_internal.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

int wsp__count_type(const wsp_comm_t *comm, size_t count, MPI_Datatype base,
                    int *n, MPI_Datatype *type, int *owned) {
  size_t limit = comm->cfg.big_message;
  *owned = 0;
  if (count <= limit) {
    *n = (int)count;
    *type = base;
    return WSP_OK;
  }
  size_t q = count / limit, r = count % limit;
  if (q > INT_MAX)
    return wsp__fail(comm, WSP_ERR_ARG,
                     "a message of %zu elements is too large to describe to MPI",
                     count);
  int rc = WSP_OK;
  MPI_Aint lb, ext;
  MPI_Datatype chunk = MPI_DATATYPE_NULL, body = MPI_DATATYPE_NULL,
               result = MPI_DATATYPE_NULL;
  WSP__MPI_GOTO(comm, MPI_Type_get_extent(base, &lb, &ext), rc, out);
  WSP__MPI_GOTO(comm, MPI_Type_contiguous((int)limit, base, &chunk), rc, out);
  WSP__MPI_GOTO(comm, MPI_Type_contiguous((int)q, chunk, &body), rc, out);
  if (r == 0) {
    result = body;
    body = MPI_DATATYPE_NULL;
  } else {
    int lens[2] = {1, (int)r};
    MPI_Aint disp[2] = {0, (MPI_Aint)(q * limit) * ext};
    MPI_Datatype types[2] = {body, base};
    WSP__MPI_GOTO(comm, MPI_Type_create_struct(2, lens, disp, types, &result),
                  rc, out);
  }
  WSP__MPI_GOTO(comm, MPI_Type_commit(&result), rc, out);
  *n = 1;
  *type = result;
  *owned = 1;
  result = MPI_DATATYPE_NULL;
out:
  if (chunk != MPI_DATATYPE_NULL) MPI_Type_free(&chunk);
  if (body != MPI_DATATYPE_NULL) MPI_Type_free(&body);
  if (result != MPI_DATATYPE_NULL) MPI_Type_free(&result);
  return rc;
}

int wsp__status_bytes(const wsp_comm_t *comm, MPI_Status *st, size_t *bytes) {
  int rc = WSP_OK, n = 0;
  WSP__MPI_GOTO(comm, MPI_Get_count(st, MPI_BYTE, &n), rc, out);
  if (n != MPI_UNDEFINED) {
    *bytes = (size_t)n;
    return WSP_OK;
  }
#ifdef WSP_SIMGRID
  /* SMPI has no MPI_Get_elements_x; simulated messages stay under 2 GiB. */
  return wsp__fail(comm, WSP_ERR_UNSUPPORTED,
                   "a message over INT_MAX bytes under SimGrid");
#else
  MPI_Count big = 0;
  WSP__MPI_GOTO(comm, MPI_Get_elements_x(st, MPI_BYTE, &big), rc, out);
  if (big < 0 || big == MPI_UNDEFINED)
    return wsp__fail(comm, WSP_ERR_INTERNAL,
                     "MPI_Get_elements_x returned %lld bytes", (long long)big);
  *bytes = (size_t)big;
#endif
out:
  return rc;
}

enum { WSP__POST_SEND, WSP__POST_SSEND, WSP__POST_RECV };

/* The one place that posts a message: any count, any mode. */
static int wsp__post(const wsp_comm_t *comm, void *buf, size_t count,
                     MPI_Datatype type, int peer, int tag, int kind,
                     MPI_Request *req) {
  static const char *const call[] = {"MPI_Isend", "MPI_Issend", "MPI_Irecv"};
  int n, owned, rc = WSP__XPORT_MPI;
  MPI_Datatype ty;
  /* The collectives' transfers may take the pair's lanes (xport.c says
   * when); everything else, and what the transport leaves to MPI, here. */
  if (comm->xport && kind != WSP__POST_SSEND && wsp__tag_exact(tag))
    rc = comm->xport->post(comm, kind == WSP__POST_RECV, buf, count, type, peer, tag, req);
  if (rc == WSP__XPORT_MPI) {
    if ((rc = wsp__count_type(comm, count, type, &n, &ty, &owned)) != WSP_OK) return rc;
    int mrc = kind == WSP__POST_RECV    ? MPI_Irecv(buf, n, ty, peer, tag, comm->mpi, req)
              : kind == WSP__POST_SSEND ? MPI_Issend(buf, n, ty, peer, tag, comm->mpi, req)
                                        : MPI_Isend(buf, n, ty, peer, tag, comm->mpi, req);
    if (owned) MPI_Type_free(&ty); /* MPI keeps it until the request completes */
    if (mrc != MPI_SUCCESS) return wsp__mpi_fail(comm, mrc, call[kind], WSP__WHERE);
  }
  if (rc == WSP_OK && comm->cfg.timeout > 0) wsp__req_note(*req, peer, kind == WSP__POST_RECV);
  return rc;
}

int wsp__isend_typed(const wsp_comm_t *comm, const void *buf, size_t count,
                     MPI_Datatype type, int peer, int tag, MPI_Request *req) {
  return wsp__post(comm, (void *)buf, count, type, peer, tag, WSP__POST_SEND, req);
}

int wsp__irecv_typed(const wsp_comm_t *comm, void *buf, size_t count,
                     MPI_Datatype type, int peer, int tag, MPI_Request *req) {
  return wsp__post(comm, buf, count, type, peer, tag, WSP__POST_RECV, req);
}

int wsp__isend_bytes(const wsp_comm_t *comm, const void *buf, size_t bytes,
                     int peer, int tag, int synchronous, MPI_Request *req) {
  return wsp__post(comm, (void *)buf, bytes, MPI_BYTE, peer, tag,
                   synchronous ? WSP__POST_SSEND : WSP__POST_SEND, req);
}

#ifdef WSP_SIMGRID
/*
 * The polling loop of wsp__waitall, replayed instead of run. Under SimGrid
 * every test and every idle pass of the loop is an event of the
 * simulation, and a rank that waits 10 ms polls some 500 times; at p = 256
 * the network probe's ranks, waiting for their partners round after round,
 * made hours of simulation out of seconds of simulated time
 * (docs/results/simgrid.md, "The polling loop replayed"). SMPI moves
 * messages whether or not anyone tests them, so the loop's only effect on
 * the simulation is when it returns. This computes that instant and sleeps
 * until it: the loop's first test is run; then blocking waits record when
 * each request completes; then the loop's idle passes
 * (wsp__backoff_sim_pass) and tests are walked on the simulated clock.
 * SMPI's MPI_Testall tests the requests in turn, each after its injected
 * time (smpi/test; read from the first test), and frees those that are
 * complete even when others are not.
 */
enum { WSP__REPLAY_STACK = 64 };

static int wsp__waitall_replay(const wsp_comm_t *comm, int n, MPI_Request *reqs,
                               wsp__backoff_t *b) {
  int pending = 0, done = 0;
  for (int i = 0; i < n; i++) pending += reqs[i] != MPI_REQUEST_NULL;
  double start = MPI_Wtime();
  int mrc = MPI_Testall(n, reqs, &done, MPI_STATUSES_IGNORE);
  if (mrc != MPI_SUCCESS) return wsp__mpi_fail(comm, mrc, "MPI_Testall", WSP__WHERE);
  if (done) return WSP_OK;
  /* A test's cost without the clock's: SMPI charges a read of the clock
   * too (smpi/wtime), and the loop being replayed does not read it. */
  double s = MPI_Wtime(), clock = MPI_Wtime() - s;
  double test = (s - start - clock) / pending;
  s = start + test * pending;
  /* When each request still pending completes (-1: not pending). */
  double stack[WSP__REPLAY_STACK], *at = stack;
  if (n > WSP__REPLAY_STACK && (at = malloc((size_t)n * sizeof *at)) == NULL)
    return wsp__fail(comm, WSP_ERR_NOMEM, "waiting for %d requests: out of memory", n);
  pending = 0;
  for (int i = 0; i < n; i++) {
    at[i] = -1;
    pending += reqs[i] != MPI_REQUEST_NULL;
  }
  for (; pending > 0; pending--) {
    int idx = MPI_UNDEFINED;
    if ((mrc = MPI_Waitany(n, reqs, &idx, MPI_STATUS_IGNORE)) != MPI_SUCCESS) {
      if (at != stack) free(at);
      return wsp__mpi_fail(comm, mrc, "MPI_Waitany", WSP__WHERE);
    }
    if (idx == MPI_UNDEFINED) break;
    at[idx] = MPI_Wtime();
  }
  /* s: the end of the first test; then idle passes and tests. */
  for (int left = 1; left;) {
    s += wsp__backoff_sim_pass(b, s);
    left = 0;
    for (int i = 0; i < n; i++)
      if (at[i] >= 0) {
        s += test;
        if (at[i] <= s) at[i] = -1;
        else left++;
      }
  }
  if (at != stack) free(at);
  wsp__sleep_seconds(s - MPI_Wtime());
  return WSP_OK;
}
#endif

#ifdef WSP_SIMGRID
/* wsp__waitany's loop replayed, as wsp__waitall_replay's: one blocking
 * MPI_Waitany records when the first request completes, and the loop's
 * passes (an idle pass, then a test of each pending request) are walked on
 * the simulated clock until the pass that would have seen it.
 *
 * The first pass tests the requests one MPI_Test at a time, not with
 * MPI_Testany: under SMPI 3.32 each MPI_Testany that finds nothing costs
 * smpi/test once more than the one before, smpi/grow-injected-times:no
 * or not, and the replay, which takes a test's cost from this first
 * pass, charged the grown cost to every pass of a long pipelined call
 * (docs/results/simgrid.md, "sites_chain against its cost"). With
 * smpi/grow-injected-times:no, as the scripts and tests run SMPI, an
 * MPI_Test costs smpi/test every time. */
static int wsp__waitany_replay(const wsp_comm_t *comm, int n, MPI_Request *reqs, int *idx,
                               wsp__backoff_t *b) {
  int pending = 0, done = 0, mrc;
  for (int i = 0; i < n; i++) pending += reqs[i] != MPI_REQUEST_NULL;
  double start = MPI_Wtime();
  for (int i = 0; i < n && !done; i++) {
    if (reqs[i] == MPI_REQUEST_NULL) continue;
    mrc = MPI_Test(&reqs[i], &done, MPI_STATUS_IGNORE);
    if (mrc != MPI_SUCCESS) return wsp__mpi_fail(comm, mrc, "MPI_Test", WSP__WHERE);
    if (done) *idx = i;
  }
  if (done || pending == 0) return WSP_OK;
  double s = MPI_Wtime(), clock = MPI_Wtime() - s;
  double test = (s - start - clock) / pending;
  s = start + test * pending;
  if ((mrc = MPI_Waitany(n, reqs, idx, MPI_STATUS_IGNORE)) != MPI_SUCCESS)
    return wsp__mpi_fail(comm, mrc, "MPI_Waitany", WSP__WHERE);
  double at = MPI_Wtime();
  while (s < at) s += wsp__backoff_sim_pass(b, s) + test * pending;
  wsp__sleep_seconds(s - MPI_Wtime());
  return WSP_OK;
}
#endif

/* The back-off of a wait for `bytes`. 0 bytes means small or unknown (a
 * tree's sends, a wait on an upstream rank): an ordinary wait. Otherwise
 * the model's time for the transfer, which sets both the sleep cap and,
 * when short, how long to poll. */
static void wsp__wait_backoff(const wsp_comm_t *comm, size_t bytes, wsp__backoff_t *b) {
  if (bytes == 0)
    wsp__backoff_init(b, comm);
  else
    wsp__backoff_init_bulk(b, comm, comm->model.alpha + (double)bytes * comm->model.beta);
}

int wsp__waitany(const wsp_comm_t *comm, int n, MPI_Request *reqs, size_t bytes, int *idx) {
  *idx = MPI_UNDEFINED;
  if (n <= 0) return WSP_OK;
  wsp__backoff_t b;
  wsp__wait_backoff(comm, bytes, &b);
#ifdef WSP_SIMGRID
  return wsp__waitany_replay(comm, n, reqs, idx, &b);
#else
  for (;;) {
    int done = 0;
    int mrc = MPI_Testany(n, reqs, idx, &done, MPI_STATUS_IGNORE);
    if (mrc != MPI_SUCCESS) return wsp__mpi_fail(comm, mrc, "MPI_Testany", WSP__WHERE);
    if (done) return wsp__lane_failure(comm, WSP_OK);
    if (wsp__backoff_idle(&b)) return wsp__timeout(comm, n, reqs, "any of several transfers");
  }
#endif
}

int wsp__waitall(const wsp_comm_t *comm, int n, MPI_Request *reqs, size_t bytes) {
  if (n <= 0) return WSP_OK;
  wsp__backoff_t b;
  wsp__wait_backoff(comm, bytes, &b);
#ifdef WSP_SIMGRID
  return wsp__waitall_replay(comm, n, reqs, &b);
#else
  for (;;) {
    int done = 0;
    int mrc = MPI_Testall(n, reqs, &done, MPI_STATUSES_IGNORE);
    if (mrc != MPI_SUCCESS) return wsp__mpi_fail(comm, mrc, "MPI_Testall", WSP__WHERE);
    if (done) return wsp__lane_failure(comm, WSP_OK);
    if (wsp__backoff_idle(&b)) return wsp__timeout(comm, n, reqs, "a step's transfers");
  }
#endif
}

int wsp__coll_wait(const wsp_comm_t *comm, MPI_Request *req) {
  if (comm->cfg.timeout > 0) wsp__req_note(*req, WSP__PEER_ALL, 0);
  return wsp__waitall(comm, 1, req, 0);
}

int wsp__allreduce_wait(const wsp_comm_t *comm, void *buf, int count, MPI_Datatype type,
                        MPI_Op op) {
#ifdef WSP_SIMGRID
  /* SMPI 3.32's non-blocking collectives send from every rank to every
   * other at once, whatever the selector: at p = 256 the probe's allreduce
   * of its 256 x 256 matrices (1 MiB) never finished, and its
   * MPI_Iallreduce did not take MPI_IN_PLACE either. The blocking call runs
   * the selector's algorithm, and a simulated rank that blocks costs no
   * core (docs/results/simgrid.md, "SMPI's plain collectives at p = 256"). */
  int mrc = MPI_Allreduce(MPI_IN_PLACE, buf, count, type, op, comm->mpi);
  return mrc != MPI_SUCCESS ? wsp__mpi_fail(comm, mrc, "MPI_Allreduce", WSP__WHERE) : WSP_OK;
#else
  MPI_Request r = MPI_REQUEST_NULL;
  int mrc = MPI_Iallreduce(MPI_IN_PLACE, buf, count, type, op, comm->mpi, &r);
  return mrc != MPI_SUCCESS ? wsp__mpi_fail(comm, mrc, "MPI_Iallreduce", WSP__WHERE)
                            : wsp__coll_wait(comm, &r);
#endif
}

#ifndef WSP_SIMGRID
/* Whether every request of reqs[0..n) is done; completes (and frees)
 * those that are, and reports a completion as progress. */
static int wsp__abandon_test(int n, MPI_Request *reqs, int *progress) {
  int left = 0;
  for (int i = 0; i < n; i++) {
    if (reqs[i] == MPI_REQUEST_NULL) continue;
    int done = 0;
    if (MPI_Test(&reqs[i], &done, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
      /* A transfer that failed is over; its request, if MPI left it, is
       * let go. */
      if (reqs[i] != MPI_REQUEST_NULL) (void)MPI_Request_free(&reqs[i]);
      done = 1;
    }
    if (done) *progress = 1;
    else left++;
  }
  return left == 0;
}
#endif

void wsp__let_go(MPI_Request *req, int is_recv) {
  if (*req == MPI_REQUEST_NULL) return;
  if (is_recv) (void)MPI_Cancel(req);
  (void)MPI_Request_free(req);
  *req = MPI_REQUEST_NULL;
}

int wsp__abandon(const wsp_comm_t *comm, int rc, int nrecv, MPI_Request *recvs, int nsend,
                 MPI_Request *sends) {
  for (int i = 0; i < nrecv; i++)
    if (recvs[i] != MPI_REQUEST_NULL) (void)MPI_Cancel(&recvs[i]);
  const wsp_comm_t *owner = comm->owner ? comm->owner : comm;
  if (rc == WSP_ERR_TIMEOUT || comm->broken || owner->broken) {
    /* A peer stopped answering: waiting for its transfers could last
     * forever. They are let go instead (src/core/timeout.c), as are those
     * of a clean-up after the communicator became unusable (an earlier
     * clean-up of the same call waited out the limit). */
    for (int i = 0; i < nrecv; i++) wsp__let_go(&recvs[i], 0); /* cancelled above */
    for (int i = 0; i < nsend; i++) wsp__let_go(&sends[i], 0);
    return rc;
  }
#ifdef WSP_SIMGRID
  /* The simulated build ignores the limit (docs/faults.md). */
  if (nrecv > 0) (void)MPI_Waitall(nrecv, recvs, MPI_STATUSES_IGNORE);
  if (nsend > 0) (void)MPI_Waitall(nsend, sends, MPI_STATUSES_IGNORE);
  return rc;
#else
  /* The cancelled receives complete at once, or deliver what had begun to
   * arrive. The sends complete when their receivers take them; a stopped
   * receiver never does, so this wait obeys the limit like every other:
   * when it passes with nothing completing, the rest is let go, and the
   * communicator is unusable, since the peers may still receive what was
   * let go. Waiting (not freeing at once) keeps the caller's buffers, which
   * it may free as soon as this returns, out of MPI's hands. The sizes are
   * not known here, so a single send that moves for longer than the limit
   * is let go as well: the call has failed already. */
  wsp__backoff_t b;
  wsp__backoff_init(&b, comm);
  for (;;) {
    int progress = 0;
    int all = wsp__abandon_test(nrecv, recvs, &progress);
    all &= wsp__abandon_test(nsend, sends, &progress);
    if (all) return rc;
    if (progress) wsp__backoff_reset(&b);
    else if (wsp__backoff_idle(&b))
      return wsp__timeout_abandon(comm, rc, nrecv, recvs, nsend, sends);
  }
#endif
}

/* Bytes of count elements of type, for the back-off's estimate (0 when
 * MPI cannot tell: an ordinary wait). */
static size_t wsp__type_bytes(MPI_Datatype type, size_t count) {
  int size = 0;
  if (MPI_Type_size(type, &size) != MPI_SUCCESS || size < 0) size = 0;
  return count * (size_t)size;
}

int wsp__send_typed(const wsp_comm_t *comm, const void *buf, size_t count,
                    MPI_Datatype type, int peer, int tag) {
  MPI_Request r = MPI_REQUEST_NULL;
  int rc = wsp__isend_typed(comm, buf, count, type, peer, tag, &r);
  return rc ? rc : wsp__waitall(comm, 1, &r, wsp__type_bytes(type, count));
}

int wsp__recv_typed(const wsp_comm_t *comm, void *buf, size_t count,
                    MPI_Datatype type, int peer, int tag) {
  MPI_Request r = MPI_REQUEST_NULL;
  int rc = wsp__irecv_typed(comm, buf, count, type, peer, tag, &r);
  return rc ? rc : wsp__waitall(comm, 1, &r, wsp__type_bytes(type, count));
}

int wsp__sendrecv_typed(const wsp_comm_t *comm, const void *sbuf, size_t scount,
                        int dst, void *rbuf, size_t rcount, int src,
                        MPI_Datatype type, int tag) {
  MPI_Request r[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL}; /* receive, send */
  int rc = wsp__isend_typed(comm, sbuf, scount, type, dst, tag, &r[1]);
  if (rc == WSP_OK) rc = wsp__irecv_typed(comm, rbuf, rcount, type, src, tag, &r[0]);
  if (rc != WSP_OK) return wsp__abandon(comm, rc, 1, &r[0], 1, &r[1]);
  return wsp__waitall(comm, 2, r, wsp__type_bytes(type, scount > rcount ? scount : rcount));
}
