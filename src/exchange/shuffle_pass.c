/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The shuffle's pass: the step every call into the engine repeats, the
 * waits built from it, the optional progress thread, and what every part
 * of the engine uses (locking, errors, allocations that may fail, the
 * receiving of messages).
 *
 * A pass. Each rank is requester and responder at once, and every call
 * into the engine that must wait (post when the backlog is full, close),
 * progress, and the optional progress thread run passes. A pass:
 *   0. tests every pending receive with one MPI_Testsome (here);
 *   1. receives response chunks and hands each complete response, with the
 *      request it answers, to on_response, in the order the requests to
 *      that peer were posted (shuffle_request.c);
 *   2. receives request batches (shuffle_serve.c);
 *   3. completes response sends (one MPI_Testsome; shuffle_serve.c);
 *   4. serves received request batches, round robin over their sources:
 *      on_request for each request, replies collected in a response chunk
 *      that is sent when it is large enough and at the end of the batch
 *      (shuffle_serve.c);
 *   5. seals batches being filled that are old enough (cfg.batch_delay;
 *      shuffle_request.c);
 *   6. sends sealed batches in the order they were sealed, as far as the
 *      flow control and the pacing controller allow (shuffle_request.c).
 * A pass never calls a handler from inside another handler: handlers run
 * only in steps 1 and 4, one at a time, and no call a handler may make
 * runs a pass (a response handler's post never waits; the other calls are
 * refused from handlers, shuffle.c).
 *
 * Receiving. Both kinds of message are received the same way
 * (wsp__shuffle_receive): MPI_Iprobe on any source, then an MPI_Irecv of
 * exactly that message into a buffer of its size, as src/exchange/sparse.c
 * does, the message then queued on its source's queue; at most
 * WSP__PROBES_PER_PASS per kind and pass, so that one busy sender cannot
 * keep a pass from serving and sending. The pending receives of both kinds
 * are then tested together, with one MPI_Testsome (step 0).
 *
 * No spinning: every loop that waits runs passes and calls the back-off of
 * src/core/backoff.c after a pass that made no progress (two idle passes,
 * then sleeps up to 1/32 of the round trip; see wsp__shuffle_backoff_init).
 * The progress thread is such a loop too; it and the caller's calls take
 * turns under a recursive mutex, held during passes and released during
 * the back-off's sleeps.
 */
#include "shuffle_internal.h"

#include "../core/tags.h"
#include "../p2p/xport.h"

#include <stdio.h>
#include <stdlib.h>

/* Messages probed per pass and kind, so that one busy sender cannot keep a
 * pass from serving and sending. */
#define WSP__PROBES_PER_PASS 64

/* ---- locking (only when a progress thread runs) ---- */

void wsp__shuffle_lock(wsp_shuffle_t *sh) {
#ifndef WSP_SIMGRID
  if (sh->thread_on) pthread_mutex_lock(&sh->mu);
#else
  (void)sh;
#endif
}

void wsp__shuffle_unlock(wsp_shuffle_t *sh) {
#ifndef WSP_SIMGRID
  if (sh->thread_on) pthread_mutex_unlock(&sh->mu);
#else
  (void)sh;
#endif
}

/* ---- accounting ---- */

void wsp__shuffle_note_peaks(wsp_shuffle_t *sh) {
  size_t t = sh->m_backlog + sh->m_inflight + sh->m_intake + sh->m_resp_out +
             sh->m_resp_in;
  if (t > sh->pk_total) sh->pk_total = t;
  if (sh->m_backlog > sh->pk_backlog) sh->pk_backlog = sh->m_backlog;
  if (sh->m_inflight > sh->pk_inflight) sh->pk_inflight = sh->m_inflight;
  if (sh->m_intake > sh->pk_intake) sh->pk_intake = sh->m_intake;
  if (sh->m_resp_out > sh->pk_resp_out) sh->pk_resp_out = sh->m_resp_out;
  if (sh->m_resp_in > sh->pk_resp_in) sh->pk_resp_in = sh->m_resp_in;
}

/* ---- errors ---- */

int wsp__shuffle_fatal(wsp_shuffle_t *sh, int rc) {
  if (!sh->fatal) {
    sh->fatal = rc;
    snprintf(sh->fatal_msg, sizeof sh->fatal_msg, "%s", wsp_last_error());
  }
  return rc;
}

int wsp__shuffle_broken(wsp_shuffle_t *sh, const char *what) {
  return wsp__shuffle_fatal(
      sh, wsp__fail(&sh->c, WSP_ERR_INTERNAL, "wsp_shuffle: %s", what));
}

int wsp__shuffle_refail(wsp_shuffle_t *sh) {
  return wsp__fail(&sh->c, sh->fatal, "%s", sh->fatal_msg);
}

void wsp__shuffle_failed(wsp_shuffle_t *sh, int rc) {
  if (!sh->failed) {
    sh->failed = rc;
    snprintf(sh->failed_msg, sizeof sh->failed_msg, "%s", wsp_last_error());
  }
}

void wsp__shuffle_handler_failed(wsp_shuffle_t *sh, const char *kind, int hrc,
                                 int rank) {
  wsp__fail(&sh->c, WSP_ERR_HANDLER,
            "wsp_shuffle: on_%s returned %d (%s from rank %d)", kind, hrc, kind,
            rank);
  wsp__shuffle_failed(sh, WSP_ERR_HANDLER);
}

/* ---- allocations inside a pass (see shuffle_internal.h) ---- */

static int wsp__fault(wsp_shuffle_t *sh) {
  if (sh->fault_n == 0) return 0;
  uint64_t x = sh->fault_rng; /* xorshift64 */
  x ^= x << 13;
  x ^= x >> 7;
  x ^= x << 17;
  sh->fault_rng = x;
  return x % sh->fault_n == 0;
}

void *wsp__shuffle_malloc(wsp_shuffle_t *sh, size_t n) {
  return wsp__fault(sh) ? NULL : malloc(n ? n : 1);
}

void *wsp__shuffle_calloc(wsp_shuffle_t *sh, size_t n) {
  return wsp__fault(sh) ? NULL : calloc(1, n);
}

void *wsp__shuffle_realloc(wsp_shuffle_t *sh, void *p, size_t n) {
  return wsp__fault(sh) ? NULL : realloc(p, n);
}

/* ---- receiving ---- */

/* Queues m (its buffer set) as a message of `bytes` from src with `tag`
 * and posts its receive. */
static int wsp__recv_post(wsp_shuffle_t *sh, const wsp__inbox_t *box, int src, int tag,
                          wsp__imsg_t *m, size_t bytes) {
  m->len = bytes;
  int rc = wsp__irecv_bytes(&sh->c, m->buf, bytes, src, tag, &m->req);
  if (rc != WSP_OK) return rc;
  wsp__imsgq_push((wsp__imsgq_t *)((char *)&sh->peers[src] + box->queue), m);
  (*box->queued)++;
  return WSP_OK;
}

/* Lets in the announced chunk of src, when its length fits the share (or
 * the share is empty) and memory allows: its assembly joins the queue and
 * takes the share for the whole chunk, so that its pieces never wait for
 * room. 1 when let in; 0 when the announcement must wait. */
static int wsp__assembly_admit(wsp_shuffle_t *sh, const wsp__inbox_t *box, int src) {
  wsp__peer_t *pe = &sh->peers[src];
  size_t len = (size_t)pe->ann_len;
  if (*box->held > 0 && *box->held + len > box->limit) return 0;
  wsp__imsg_t *m = wsp__shuffle_calloc(sh, box->elem);
  unsigned char *buf = m ? wsp__shuffle_malloc(sh, len) : NULL;
  if (buf == NULL) {
    free(m);
    wsp__shuffle_nomem_wait(sh);
    return 0;
  }
  m->buf = buf;
  m->len = len;
  m->kind = WSP__MSG_ASSEMBLY;
  m->seq = pe->ann_seq;
  m->req = MPI_REQUEST_NULL;
  wsp__imsgq_push((wsp__imsgq_t *)((char *)pe + box->queue), m);
  (*box->queued)++;
  *box->held += len;
  wsp__shuffle_note_peaks(sh);
  pe->assembling = m;
  pe->ann_len = 0;
  return 1;
}

/* Posts the receive of the next piece (bytes long, with `tag`) of src's
 * assembly into its place in the assembly's buffer. *blocked: out of
 * memory for the queue element (the piece stays queued in MPI, or on the
 * lanes). */
static int wsp__piece_post(wsp_shuffle_t *sh, const wsp__inbox_t *box, int src, int tag,
                           size_t bytes, int *blocked) {
  wsp__peer_t *pe = &sh->peers[src];
  wsp__imsg_t *a = pe->assembling;
  *blocked = 0;
  if (bytes == 0 || a->posted + bytes > a->len)
    return wsp__shuffle_broken(sh, "a response piece overruns its chunk");
  wsp__imsg_t *m = wsp__shuffle_calloc(sh, box->elem);
  if (m == NULL) {
    wsp__shuffle_nomem_wait(sh);
    *blocked = 1;
    return WSP_OK;
  }
  m->buf = a->buf + a->posted;
  m->borrowed = 1;
  m->kind = WSP__MSG_PIECE;
  int rc = wsp__recv_post(sh, box, src, tag, m, bytes);
  if (rc != WSP_OK) {
    free(m);
    return rc;
  }
  a->posted += bytes;
  if (a->posted == a->len) pe->assembling = NULL;
  return WSP_OK;
}

/* src announced a chunk that comes over the lanes (lanes_wait): it is let
 * in, and its one receive posted on the lanes' tag, when room and memory
 * allow. *posted: done (src's later messages may be received again). */
static int wsp__lanes_chunk(wsp_shuffle_t *sh, const wsp__inbox_t *box, int src, int *posted) {
  wsp__peer_t *pe = &sh->peers[src];
  int blocked = 0, rc = WSP_OK;
  *posted = 0;
  if (pe->ann_len && !wsp__assembly_admit(sh, box, src)) return WSP_OK;
  const wsp__imsg_t *a = pe->assembling;
  if ((rc = wsp__piece_post(sh, box, src, WSP__TAG_SHUFFLE_LANES, a->len - a->posted, &blocked)) !=
          WSP_OK ||
      blocked)
    return rc;
  pe->lanes_wait = 0;
  sh->n_lanes_wait--;
  *posted = 1;
  return WSP_OK;
}

/* Each pass first retries the chunks announced for the lanes that wait:
 * nothing more may arrive from their sources through MPI to bring them
 * back (their responders may be waiting for these very transfers). */
static int wsp__lanes_retry(wsp_shuffle_t *sh, const wsp__inbox_t *box, int *progress) {
  int rc = WSP_OK, posted = 0;
  for (int q = 0; q < sh->p && sh->n_lanes_wait && rc == WSP_OK; q++)
    if (sh->peers[q].lanes_wait && (rc = wsp__lanes_chunk(sh, box, q, &posted)) == WSP_OK && posted)
      *progress = 1;
  return rc;
}

/* While an announcement or a whole chunk waits for room or memory:
 * receives the pieces of the chunks already let in, source by source
 * (MPI_Iprobe from any source may keep returning the waiting message, or
 * the waiting source's next piece), so that they complete and free the
 * share. A piece needs no memory but its queue element. */
static int wsp__pieces_only(wsp_shuffle_t *sh, const wsp__inbox_t *box, int *progress) {
  int budget = WSP__PROBES_PER_PASS, rc = WSP_OK;
  for (int q = 0; q < sh->p && budget > 0; q++)
    while (sh->peers[q].assembling && !sh->peers[q].lanes_wait && budget-- > 0) {
      int flag = 0, blocked = 0;
      MPI_Status st;
      size_t bytes;
      WSP__MPI_GOTO(&sh->c, MPI_Iprobe(q, box->tag, sh->c.mpi, &flag, &st), rc, out);
      if (!flag) break;
      if ((rc = wsp__status_bytes(&sh->c, &st, &bytes)) != WSP_OK ||
          (rc = wsp__piece_post(sh, box, q, box->tag, bytes, &blocked)) != WSP_OK)
        goto out;
      if (blocked) return WSP_OK;
      *progress = 1;
    }
out:
  return rc;
}

int wsp__shuffle_receive(wsp_shuffle_t *sh, const wsp__inbox_t *box,
                         int *progress) {
  int rc = WSP_OK;
  if (box->pieces && sh->n_lanes_wait && (rc = wsp__lanes_retry(sh, box, progress)) != WSP_OK)
    goto out;
  for (int i = 0; i < WSP__PROBES_PER_PASS; i++) {
    int flag = 0;
    MPI_Status st;
    WSP__MPI_GOTO(&sh->c, MPI_Iprobe(MPI_ANY_SOURCE, box->tag, sh->c.mpi, &flag, &st),
                  rc, out);
    if (!flag) break;
    size_t bytes;
    if ((rc = wsp__status_bytes(&sh->c, &st, &bytes)) != WSP_OK) goto out;
    const int src = st.MPI_SOURCE;
    wsp__peer_t *pe = &sh->peers[src];
    if (box->pieces && pe->lanes_wait) {
      /* The probed message came after a chunk announced for the lanes
       * whose receive still waits (wsp__lanes_retry found no room): it
       * waits in MPI too. */
      rc = wsp__pieces_only(sh, box, progress);
      goto out;
    }
    if (box->pieces && (pe->assembling || pe->ann_len || bytes == WSP__ANN_BYTES)) {
      int announcement = 0;
      if (!pe->assembling && !pe->ann_len) { /* an announcement: tiny, and here */
        unsigned char ann[WSP__ANN_BYTES];
        WSP__MPI_GOTO(&sh->c, MPI_Recv(ann, WSP__ANN_BYTES, MPI_BYTE, src, box->tag,
                                       sh->c.mpi, MPI_STATUS_IGNORE),
                      rc, out);
        pe->ann_seq = wsp__get64(ann);
        pe->ann_len = wsp__get64(ann + 8);
        if (pe->ann_len < WSP__HDR_BYTES + WSP__ENTRY_BYTES || pe->ann_len > SIZE_MAX / 2) {
          rc = wsp__shuffle_broken(sh, "a malformed response announcement");
          goto out;
        }
        announcement = 1;
        *progress = 1;
        /* Its bytes come over the lanes in one transfer when the responder
         * decided so (shuffle_serve.c, wsp__send_chunk); both ends decide
         * alike. */
        if (wsp__xport_takes(&sh->c, src, (size_t)pe->ann_len)) {
          int posted = 0;
          pe->lanes_wait = 1;
          sh->n_lanes_wait++;
          if ((rc = wsp__lanes_chunk(sh, box, src, &posted)) != WSP_OK) goto out;
          if (!posted) {
            rc = wsp__pieces_only(sh, box, progress);
            goto out;
          }
          continue;
        }
      }
      if (pe->ann_len && !wsp__assembly_admit(sh, box, src)) {
        rc = wsp__pieces_only(sh, box, progress);
        goto out;
      }
      if (!announcement) { /* the probed message is the assembly's next piece */
        int blocked = 0;
        if ((rc = wsp__piece_post(sh, box, src, box->tag, bytes, &blocked)) != WSP_OK) goto out;
        if (blocked) break;
        *progress = 1;
      }
      continue;
    }
    /* A whole message that does not fit the share, or finds no memory,
     * stays queued in MPI until the share drains or memory frees. What
     * drains the response share may be queued behind it: the pieces of
     * chunks already let in, which hold the share for their whole length
     * and are received into it. A probe on any source may keep returning
     * this message first (MPICH matches in arrival order), so those pieces
     * are received by their sources instead; stopping here, as the engine
     * once did, left the share full for good and the shuffle stalled. */
    wsp__imsg_t *m = NULL;
    unsigned char *buf = NULL;
    int fits = *box->held == 0 || *box->held + bytes <= box->limit;
    if (fits && (m = wsp__shuffle_calloc(sh, box->elem)) != NULL)
      buf = wsp__shuffle_malloc(sh, bytes);
    if (buf == NULL) {
      if (fits) wsp__shuffle_nomem_wait(sh);
      free(m);
      if (box->pieces) rc = wsp__pieces_only(sh, box, progress);
      goto out;
    }
    m->buf = buf;
    if ((rc = wsp__recv_post(sh, box, src, box->tag, m, bytes)) != WSP_OK) {
      free(buf);
      free(m);
      goto out;
    }
    *box->held += bytes;
    wsp__shuffle_note_peaks(sh);
    *progress = 1;
  }
out:
  return rc == WSP_OK ? rc : wsp__shuffle_fatal(sh, rc);
}

/* One MPI_Test of a pending receive (see wsp__test_receives_each). */
static int wsp__test_one(wsp_shuffle_t *sh, wsp__imsg_t *m, int *progress) {
  if (m->received || m->kind == WSP__MSG_ASSEMBLY) return WSP_OK;
  int mrc = MPI_Test(&m->req, &m->received, MPI_STATUS_IGNORE);
  if (mrc != MPI_SUCCESS)
    return wsp__shuffle_fatal(sh, wsp__mpi_fail(&sh->c, mrc, "MPI_Test", WSP__WHERE));
  if (m->received) *progress = 1;
  return WSP_OK;
}

/* Tests the pending receives with one MPI_Test each: wsp__test_receives's
 * way when it has no memory for its arrays (completed receives are what
 * lets memory be given back, so testing them must not need any). */
static int wsp__test_receives_each(wsp_shuffle_t *sh, int *progress) {
  int rc = WSP_OK;
  for (int q = 0; q < sh->p && rc == WSP_OK; q++) {
    wsp__imsgq_t *queues[2] = {&sh->peers[q].rin, &sh->peers[q].in};
    for (int k = 0; k < 2; k++)
      for (wsp__imsg_t *m = queues[k]->head; m && rc == WSP_OK; m = m->next)
        rc = wsp__test_one(sh, m, progress);
  }
  return rc;
}

/* Step 0: tests every pending receive (response chunks and request
 * batches) with one MPI_Testsome and marks the completed ones (see
 * wsp__shuffle_pass_sends for why one call). The later steps then hand
 * over what is complete, in order. */
static int wsp__test_receives(wsp_shuffle_t *sh, int *progress) {
  size_t n = 0;
  if (sh->n_rin + sh->n_in == 0) return WSP_OK;
  for (int q = 0; q < sh->p; q++) {
    wsp__imsgq_t *queues[2] = {&sh->peers[q].rin, &sh->peers[q].in};
    for (int k = 0; k < 2; k++)
      for (wsp__imsg_t *m = queues[k]->head; m; m = m->next)
        if (!m->received && m->kind != WSP__MSG_ASSEMBLY) n++;
  }
  if (n == 0) return WSP_OK;
  if (sh->cap_tr < n) {
    /* Each array that grew is kept; cap_tr is what all three hold. */
    MPI_Request *r = wsp__shuffle_realloc(sh, sh->tr_req, n * sizeof *r);
    if (r) sh->tr_req = r;
    int **f = r ? wsp__shuffle_realloc(sh, sh->tr_flag, n * sizeof *f) : NULL;
    if (f) sh->tr_flag = f;
    int *ix = f ? wsp__shuffle_realloc(sh, sh->tr_idx, n * sizeof *ix) : NULL;
    if (ix) sh->tr_idx = ix;
    if (ix == NULL) {
      wsp__shuffle_nomem_wait(sh);
      return wsp__test_receives_each(sh, progress);
    }
    sh->cap_tr = n;
  }
  /* The requests are copied; MPI_Testsome frees the completed ones, and
   * their originals are never used again (only `received` is). */
  size_t k = 0;
  for (int q = 0; q < sh->p; q++) {
    wsp__imsgq_t *queues[2] = {&sh->peers[q].rin, &sh->peers[q].in};
    for (int j = 0; j < 2; j++)
      for (wsp__imsg_t *m = queues[j]->head; m; m = m->next)
        if (!m->received && m->kind != WSP__MSG_ASSEMBLY) {
          sh->tr_req[k] = m->req;
          sh->tr_flag[k++] = &m->received;
        }
  }
  int out = 0;
  int mrc = MPI_Testsome((int)k, sh->tr_req, &out, sh->tr_idx, MPI_STATUSES_IGNORE);
  if (mrc != MPI_SUCCESS)
    return wsp__shuffle_fatal(sh, wsp__mpi_fail(&sh->c, mrc, "MPI_Testsome", WSP__WHERE));
  if (out == MPI_UNDEFINED) return WSP_OK;
  for (int i = 0; i < out; i++) *sh->tr_flag[sh->tr_idx[i]] = 1;
  if (out > 0) *progress = 1;
  return WSP_OK;
}

/* ---- the pass ---- */

int wsp__shuffle_pass(wsp_shuffle_t *sh, int *progress) {
  *progress = 0;
  if (sh->fatal) return sh->fatal;
  double now = MPI_Wtime();
  int rc;
  /* The shuffle's lanes (shuffle.c, wsp__shuffle_lanes) move here, under
   * the lock the progress thread takes too, without sleeping. A chunk
   * whose transfer failed completes all the same: the failure, recorded
   * on the shuffle's communicator, fails the shuffle before anything is
   * handed on. */
  if (sh->c.xport && sh->c.xport->drive(sh->c.lanes, 0) > 0) *progress = 1;
  if ((rc = wsp__test_receives(sh, progress)) != WSP_OK) return rc;
  if (sh->c.lane_fault.failed) return wsp__shuffle_fatal(sh, wsp__lane_failure(&sh->c, WSP_OK));
  if ((rc = wsp__shuffle_pass_responses(sh, now, progress)) != WSP_OK) return rc;
  if ((rc = wsp__shuffle_pass_requests(sh, progress)) != WSP_OK) return rc;
  if ((rc = wsp__shuffle_pass_sends(sh, progress)) != WSP_OK) return rc;
  if ((rc = wsp__shuffle_pass_serve(sh, now, progress)) != WSP_OK) return rc;
  wsp__shuffle_pass_seal(sh, now);
  return wsp__shuffle_pass_send(sh, MPI_Wtime(), progress);
}

/* ---- waiting ---- */

/* The longest sleep of a waiting loop. A shuffle waits on transfers that
 * take a round-trip time (tens of ms on a shaped LAN): waking every 50 us
 * (the cap of an ordinary wait) for that would cost each of many ranks on
 * few cores a good part of a core, which the network stack then lacks. So
 * the sleep may grow to 1/32 of the smoothed round-trip time (never above
 * cfg.poll_max_sleep_us, 1 ms by default), which delays a batch by about 3 %
 * of its round trip at worst: the back-off's bulk rule (1/8 of the expected
 * wait) applied to a quarter of the round trip. */
#define WSP__SLEEP_RTT_FRACTION 4.0
static void wsp__sleep_cap(const wsp_shuffle_t *sh, wsp__backoff_t *bo) {
  wsp__backoff_expect(bo, &sh->c, sh->pace.srtt / WSP__SLEEP_RTT_FRACTION);
}

/* The shuffle's back-off: two idle passes, then sleeps. The library's
 * default (32 spinning passes and 224 yields before the first sleep) suits
 * waits of microseconds; a shuffle waits on transfers of milliseconds, and
 * its ranks often outnumber the cores: on netlab (16 ranks, 2 cores) the
 * yields took CPU the network stack needed (docs/results/shuffle.md, "How
 * the controller got here"). */
#define WSP__SHUFFLE_SPIN 2
void wsp__shuffle_backoff_init(wsp_shuffle_t *sh, wsp__backoff_t *bo) {
  wsp__backoff_init(bo, &sh->c);
  bo->spin_passes = WSP__SHUFFLE_SPIN;
  bo->yield_passes = 0;
  /* The back-off's sleeps run outside the lock: with a progress thread the
   * lanes move only in passes (and a sleep is a plain one). */
#ifndef WSP_SIMGRID
  if (sh->thread_on) bo->lanes = NULL;
#endif
}

/* No progress for cfg.timeout: names the peers whose answers are missing
 * (none: this rank waits for the others to close, or, for_memory, for the
 * memory its serving would give back) and fails the shuffle. */
static int wsp__shuffle_timeout(wsp_shuffle_t *sh, int for_memory) {
  enum { SHOW = 16 };
  int peers[SHOW], n = 0;
  for (int r = 0; r < sh->p && n < SHOW; r++)
    if (sh->peers[r].fly_head) peers[n++] = r;
  const char *what = for_memory ? "memory for a request, which serving the other ranks "
                                  "would give back as they take its responses"
                                : "the other ranks to serve and close";
  return wsp__shuffle_fatal(
      sh, n ? wsp__timeout_peers(&sh->c, peers, n, "answers to the requests sent to them")
            : wsp__timeout_peers(&sh->c, NULL, -1, what));
}

int wsp__shuffle_wait_step(wsp_shuffle_t *sh, wsp__backoff_t *bo, int for_memory) {
  wsp__sleep_cap(sh, bo);
  int progress = 0, expired = 0;
  int rc = wsp__shuffle_pass(sh, &progress);
  wsp__shuffle_unlock(sh);
  if (rc == WSP_OK) {
    if (progress)
      wsp__backoff_reset(bo);
    else
      expired = wsp__backoff_idle(bo);
  }
  wsp__shuffle_lock(sh);
  /* Idle time counts only while this rank waits for others: answers to its
   * requests, their close, or, for a post waiting for memory with nothing
   * of its own queued or in flight, the serving of their requests, which
   * is all that can give memory back then (what serving holds goes when
   * they take the responses). A progress thread idling while the
   * application computes is waiting for nobody, nor is a post whose
   * batches the pacing or the batch delay holds back (that ends by
   * itself). */
  if (expired && rc == WSP_OK) {
    if (sh->n_fly || sh->state == WSP__ST_CLOSING)
      rc = wsp__shuffle_timeout(sh, 0);
    else if (for_memory && !sh->n_open && !sh->n_ready)
      rc = wsp__shuffle_timeout(sh, 1);
    else
      bo->idle_since = 0;
  }
  return rc;
}

/* ---- the progress thread ---- */

#ifndef WSP_SIMGRID
/* The thread waits as a caller does, until close stops it or the shuffle
 * fails (every failure of a pass is recorded as fatal, so the error reaches
 * the caller's next call). */
static void *wsp__progress_thread(void *arg) {
  wsp_shuffle_t *sh = arg;
  wsp__backoff_t bo;
  wsp__shuffle_backoff_init(sh, &bo);
  wsp__shuffle_lock(sh);
  int rc = WSP_OK;
  while (rc == WSP_OK && !sh->thread_stop && !sh->fatal)
    rc = wsp__shuffle_wait_step(sh, &bo, 0);
  wsp__shuffle_unlock(sh);
  return NULL;
}
#endif

int wsp__shuffle_thread_start(wsp_shuffle_t *sh) {
#ifndef WSP_SIMGRID
  pthread_mutexattr_t at;
  int ok = pthread_mutexattr_init(&at) == 0;
  ok = ok && pthread_mutexattr_settype(&at, PTHREAD_MUTEX_RECURSIVE) == 0;
  ok = ok && pthread_mutex_init(&sh->mu, &at) == 0;
  pthread_mutexattr_destroy(&at);
  if (ok) {
    sh->thread_on = 1;
    if (pthread_create(&sh->thread, NULL, wsp__progress_thread, sh) != 0) {
      sh->thread_on = 0;
      pthread_mutex_destroy(&sh->mu);
      ok = 0;
    }
  }
  return ok;
#else
  (void)sh;
  return 0;
#endif
}

void wsp__shuffle_thread_stop(wsp_shuffle_t *sh) {
#ifndef WSP_SIMGRID
  if (!sh->thread_on) return;
  sh->thread_stop = 1;
  wsp__shuffle_unlock(sh); /* the caller's lock: the thread can now see the flag */
  pthread_join(sh->thread, NULL);
  /* From here on one thread: no more locking. */
  pthread_mutex_destroy(&sh->mu);
  sh->thread_on = 0;
#else
  (void)sh;
#endif
}
