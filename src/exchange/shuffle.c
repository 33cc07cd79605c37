/*
 * The all-pairs shuffle engine: requests to any rank, batched per
 * destination, answered by the destination's request handler, the answers
 * handed to the requester's response handler; bounded memory, flow control,
 * adaptive pacing, and a collective close that detects termination.
 *
 * How it works. Each rank is requester and responder at once, and every
 * call into the engine (post when it must wait, progress, close, or the
 * optional progress thread) runs passes. A pass:
 *   0. tests every pending receive with one MPI_Testsome;
 *   1. receives response chunks (MPI_Iprobe on any source, then MPI_Irecv of
 *      exactly that message, as src/exchange/sparse.c does) and hands each
 *      complete response, with the request it answers, to on_response, in
 *      the order the requests to that peer were posted;
 *   2. receives request batches the same way;
 *   3. completes response sends (one MPI_Testsome);
 *   4. serves received request batches, round robin over their sources:
 *      on_request for each request, replies collected in a response chunk
 *      that is sent when it is large enough and at the end of the batch;
 *   5. seals batches being filled that are old enough (cfg.batch_delay);
 *   6. sends sealed batches in the order they were sealed, as far as the
 *      flow control and the pacing controller allow.
 * Requests to this rank itself take the same path without MPI: the sealed
 * batch is served from the requester's own buffer and its chunks are
 * handed over directly.
 *
 * Batching. A batch to one destination is sealed once its requests plus
 * their expected responses (the mean response per request seen so far; at
 * first, a whole batch, so the first batches carry one request each) would
 * pass cfg.batch_bytes, or its requests would pass the per-peer share
 * peer_req, or its oldest request is cfg.batch_delay old. So a 1 KiB request
 * with a 100 KiB response travels alone, as in G-thinker, while small
 * requests with small answers travel by the thousand.
 *
 * Flow control and memory (the shares are defined in shuffle_internal.h).
 * A requester keeps at most peer_req = intake/(p-1) request bytes and
 * cfg.peer_window bytes of cost unanswered per peer, and at most the
 * inflight share and cfg.window in total, and lets batches to network
 * peers out at the pacing rate (shuffle_pace.c). A responder therefore
 * never holds more than intake bytes of received requests: the per-peer
 * window does the job of credits, and that is why receiving everything
 * that arrives does not flood it. A responder serves the next request only while
 * its response buffers use at most half their share, so a slow requester
 * (whose chunks do not drain) stops its responders from answering it, and
 * a slow responder keeps its requesters' windows to it full, which throttles
 * them. Response chunks are received only while they fit the resp_in
 * share (one is always allowed); they are handed over as soon as they are
 * complete, so that share always drains. A post outside handlers waits,
 * running passes, while the backlog's memory share or its volume limit
 * (what the pacing rate lets out in WSP__BACKLOG_S: enough that pacing
 * never runs dry, little enough that requests do not queue for seconds) is
 * reached.
 *
 * Handlers. on_request may only reply (a request handler that posted would
 * make serving depend on the room for new requests, and the termination
 * argument below on its posts). on_response may post follow-up requests;
 * such a post never waits (a handler cannot wait for the responses whose
 * handling it is part of), so it may push the backlog past its share:
 * stats.peak_backlog shows by how much. A pass never calls a handler from
 * inside another handler.
 *
 * Termination (wsp_shuffle_close). A closing rank stops accepting posts
 * from outside handlers, seals everything and runs passes until all of its
 * own requests are answered and handled: nothing of its own is queued, in
 * flight, or being received. Only then does it start a non-blocking sum
 * (src/core/sum.c) of (failures, requests posted), and it
 * keeps running passes, serving others, until the sum completes. Claim:
 * when the sum completes on any rank, every request of every rank has been
 * answered and handled, and no shuffle message is in flight. Proof: the sum
 * completes only after every rank has contributed, that is entered it. A
 * rank enters only when all its requests are answered and handled. After
 * entering, a rank posts no more requests: posts then could only come from
 * response handlers, which only run on responses, and it has no request
 * left to be answered. So at the moment the last rank enters, no rank has
 * an unanswered request; every request message was received (it was
 * answered) and every response message was received (it was handled). The
 * sums of posted and (then final) served requests must agree, which close
 * checks with a second sum.
 * A rank whose handler failed still serves and enters with its failure
 * counted, so every rank learns it and nobody hangs.
 *
 * No spinning: every loop that waits runs passes and calls the back-off of
 * src/core/backoff.c after a pass that made no progress (two idle passes,
 * then sleeps up to 1/32 of the round trip; see wsp__shuffle_backoff_init).
 *
 * The shuffle's traffic runs on its own duplicate of the wsp_comm_t's
 * private communicator, so its tags (src/core/tags.h) meet nothing else.
 */
#include "shuffle_internal.h"
#include "../core/tags.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifndef WSP_SIMGRID
#include <pthread.h>
#endif

enum { WSP__ST_OPEN, WSP__ST_CLOSING, WSP__ST_CLOSED };
enum { WSP__IN_NONE, WSP__IN_REQUEST, WSP__IN_RESPONSE };
/* Messages probed per pass and kind, so that one busy sender cannot keep a
 * pass from serving and sending. */
#define WSP__PROBES_PER_PASS 64
/* The backlog's volume limit: this many seconds at the pacing rate, or
 * this many batches. */
#define WSP__BACKLOG_S 0.25
#define WSP__BACKLOG_BATCHES 4.0

/* A request batch this rank sends. */
typedef struct wsp__obatch {
  struct wsp__obatch *next;
  int dest;
  unsigned char *buf;
  size_t len, cap;
  uint32_t count;
  uint64_t seq;
  double cost;   /* requests + expected responses, fixed when sent */
  double t_open; /* first request posted */
  double t_sent;
  MPI_Request req;
  /* Pairing responses with requests, in order. */
  size_t cursor;
  uint32_t answered;
  size_t resp_bytes;
} wsp__obatch_t;

/* A request batch received (or, for self, borrowed from the obatch). */
typedef struct wsp__ibatch {
  struct wsp__ibatch *next;
  unsigned char *buf;
  size_t len;
  int owned, received, parsed;
  MPI_Request req;
  uint64_t seq;
  uint32_t count, done;
  size_t cursor;
} wsp__ibatch_t;

/* A response chunk being received. */
typedef struct wsp__ichunk {
  struct wsp__ichunk *next;
  unsigned char *buf;
  size_t len;
  int received;
  MPI_Request req;
} wsp__ichunk_t;

typedef struct wsp__peer {
  wsp__obatch_t *open;                    /* being filled */
  wsp__obatch_t *fly_head, *fly_tail;     /* sent, not fully answered */
  size_t fly_req;  /* request bytes unanswered */
  double fly_cost; /* their cost */
  uint64_t next_seq, expect_seq;
  wsp__ibatch_t *in_head, *in_tail;  /* received requests, in order */
  wsp__ichunk_t *rin_head, *rin_tail; /* response chunks, in order */
  int local; /* on this node: not paced */
  unsigned stamp; /* == the shuffle's stamp: skipped in this send pass */
  /* The pacing rate this peer reported in its last request batch (0:
   * none), and when it arrived (MPI_Wtime). */
  double rate_seen, rate_seen_t;
} wsp__peer_t;

/* A reply handle. Each request handler call gets the next of
 * WSP__REPLY_SLOTS handles, stamped with the call's number, so a handle
 * kept from an earlier call is recognised (its stamp is not the current
 * call's) unless exactly a multiple of WSP__REPLY_SLOTS calls lie between
 * (then it is the current call's handle again). The handles live as long as
 * the shuffle's handle, so a stale one used after close is still safe to
 * read. */
#define WSP__REPLY_SLOTS 1024
struct wsp_shuffle_reply {
  struct wsp_shuffle *sh;
  uint64_t call; /* the request handler call it was given to */
};

struct wsp_shuffle {
  wsp_comm_t c; /* the user's wsp_comm_t with mpi = the shuffle's own dup */
  wsp_shuffle_config_t cfg;
  wsp__shuffle_limits_t lim;
  wsp_shuffle_handlers_t h;
  void *user;
  int state, in_handler;
  int p, rank;
  wsp__peer_t *peers;
  wsp__pace_t pace;
  /* Room for p rates (the median of the peers' rates), and when that
   * median was last computed. */
  double *rate_buf;
  double peer_ref_t;
  /* When the controller last held a batch back (MPI_Wtime): a requester
   * that has not been held back for WSP__PACE_LIMITED_S asks less than its
   * rate allows and reports no rate. */
  double paced_at;
  /* The two termination sums of close, allocated at open (where a failure
   * is agreed on) and kept if close fails with one pending (MPI may still
   * write into it). */
  wsp__sum_t *close_sums;
  int close_sums_pending;

  /* Memory accounting (bytes of buffer capacity) and peaks. */
  size_t m_backlog, m_inflight, m_intake, m_resp_out, m_resp_in;
  size_t pk_total, pk_backlog, pk_inflight, pk_intake, pk_resp_out, pk_resp_in;
  double backlog_cost;  /* expected cost of posted, unsent requests */
  double net_cost;      /* cost in flight to network peers */
  size_t inflight_req;  /* request bytes in flight, all peers */
  double resp_per_req;  /* estimate; < 0 until the first answer */
  /* Counters that let a pass skip empty scans. */
  size_t n_open, n_ready, n_fly, n_in, n_rin;
  int rr_serve;
  /* Sealed batches not yet sent, all peers, in the order they were sealed
   * (linked by `next`; a batch's peer is its `dest`). */
  wsp__obatch_t *ready_head, *ready_tail;
  unsigned stamp;

  /* The response chunk being built, and response chunks being sent. */
  unsigned char *chunk;
  size_t chunk_len, chunk_cap;
  uint32_t chunk_count;
  MPI_Request *osend;
  unsigned char **obuf;
  size_t *ocap;
  size_t n_osend, cap_osend;
  int *idx; /* MPI_Testsome's indices (cap_osend of them too) */
  /* wsp__test_receives' arrays. */
  MPI_Request *tr_req;
  int **tr_flag;
  int *tr_idx;
  size_t cap_tr;

  wsp_shuffle_reply_t replies[WSP__REPLY_SLOTS];
  uint64_t reply_call; /* number of the current (or last) handler call */
  int reply_active, reply_replied;
  wsp_shuffle_stats_t st;
  double t_open; /* MPI_Wtime at open (for traces) */
  /* Testing aid (WSP_SHUFFLE_FAULT_NOMEM=N): an allocation inside a pass
   * fails with probability 1/N (0: never), to exercise the out-of-memory
   * paths. Random, not every Nth: a pass that needs two allocations in a
   * row would otherwise fail the same way on every retry. */
  size_t fault_n;
  uint64_t fault_rng;
  int fatal;      /* first MPI/internal error: the shuffle is unusable */
  int failed;     /* first local failure (handler, memory): reported at close */
  char fatal_msg[256], failed_msg[256];

#ifndef WSP_SIMGRID
  int thread_on;
  volatile int thread_stop;
  pthread_t thread;
  pthread_mutex_t mu;
#endif
};

/* ---- locking (only when a progress thread runs) ---- */

static void wsp__lock(wsp_shuffle_t *sh) {
#ifndef WSP_SIMGRID
  if (sh->thread_on) pthread_mutex_lock(&sh->mu);
#else
  (void)sh;
#endif
}

static void wsp__unlock(wsp_shuffle_t *sh) {
#ifndef WSP_SIMGRID
  if (sh->thread_on) pthread_mutex_unlock(&sh->mu);
#else
  (void)sh;
#endif
}

/* ---- accounting ---- */

static void wsp__note_peaks(wsp_shuffle_t *sh) {
  size_t t = sh->m_backlog + sh->m_inflight + sh->m_intake + sh->m_resp_out +
             sh->m_resp_in;
  if (t > sh->pk_total) sh->pk_total = t;
  if (sh->m_backlog > sh->pk_backlog) sh->pk_backlog = sh->m_backlog;
  if (sh->m_inflight > sh->pk_inflight) sh->pk_inflight = sh->m_inflight;
  if (sh->m_intake > sh->pk_intake) sh->pk_intake = sh->m_intake;
  if (sh->m_resp_out > sh->pk_resp_out) sh->pk_resp_out = sh->m_resp_out;
  if (sh->m_resp_in > sh->pk_resp_in) sh->pk_resp_in = sh->m_resp_in;
}

/* Hands the controller the median of the rates the other ranks reported
 * in their request batches during the last WSP__PACE_PEER_AGE seconds
 * (shuffle_pace.c, "Fairness"), at most every WSP__PACE_PEER_EVERY s. */
static void wsp__update_peer_ref(wsp_shuffle_t *sh, double now) {
  if (sh->pace.mode != WSP_SHUFFLE_ADAPTIVE ||
      now - sh->peer_ref_t < WSP__PACE_PEER_EVERY)
    return;
  sh->peer_ref_t = now;
  int n = 0;
  for (int q = 0; q < sh->p; q++) {
    const wsp__peer_t *pe = &sh->peers[q];
    if (q != sh->rank && pe->rate_seen > 0 &&
        now - pe->rate_seen_t <= WSP__PACE_PEER_AGE)
      sh->rate_buf[n++] = pe->rate_seen;
  }
  wsp__pace_peers(&sh->pace, wsp__pace_median(sh->rate_buf, n));
}

/* Little helpers for the wire format (host byte order, unaligned). */
static uint64_t wsp__get64(const unsigned char *p) {
  uint64_t v;
  memcpy(&v, p, sizeof v);
  return v;
}
static uint32_t wsp__get32(const unsigned char *p) {
  uint32_t v;
  memcpy(&v, p, sizeof v);
  return v;
}
static void wsp__put64(unsigned char *p, uint64_t v) { memcpy(p, &v, sizeof v); }
static void wsp__put32(unsigned char *p, uint32_t v) { memcpy(p, &v, sizeof v); }

static void wsp__put_hdr(unsigned char *b, uint64_t seq, uint32_t count,
                         uint32_t flags) {
  wsp__put64(b, seq);
  wsp__put32(b + 8, count);
  wsp__put32(b + 12, flags);
}

/* ---- errors ---- */

/* Records a fatal error (MPI failure or broken invariant): every later call
 * returns it. */
static int wsp__set_fatal(wsp_shuffle_t *sh, int rc) {
  if (!sh->fatal) {
    sh->fatal = rc;
    snprintf(sh->fatal_msg, sizeof sh->fatal_msg, "%s", wsp_last_error());
  }
  return rc;
}

static int wsp__broken(wsp_shuffle_t *sh, const char *what) {
  return wsp__set_fatal(
      sh, wsp__fail(&sh->c, WSP_ERR_INTERNAL, "wsp_shuffle: %s", what));
}

/* A local failure that does not stop the protocol: reported at close. */
static void wsp__set_failed(wsp_shuffle_t *sh, int rc) {
  if (!sh->failed) {
    sh->failed = rc;
    snprintf(sh->failed_msg, sizeof sh->failed_msg, "%s", wsp_last_error());
  }
}

/* Allocations inside a pass. Running out of memory there is back-pressure,
 * not an error: the caller leaves what needed the memory where it is (a
 * message stays queued in MPI, a batch stays unserved), counts a wait in
 * stats.nomem_waits, and a later pass tries again once completed sends and
 * handed-over responses have given memory back (finding those completions
 * allocates nothing, or falls back to a way that does not). Failing
 * instead would leave the other ranks waiting in close for answers this
 * rank will never give. */
static int wsp__fault(wsp_shuffle_t *sh) {
  if (sh->fault_n == 0) return 0;
  uint64_t x = sh->fault_rng; /* xorshift64 */
  x ^= x << 13;
  x ^= x >> 7;
  x ^= x << 17;
  sh->fault_rng = x;
  return x % sh->fault_n == 0;
}
static void *wsp__sh_malloc(wsp_shuffle_t *sh, size_t n) {
  return wsp__fault(sh) ? NULL : malloc(n ? n : 1);
}
static void *wsp__sh_calloc(wsp_shuffle_t *sh, size_t n) {
  return wsp__fault(sh) ? NULL : calloc(1, n);
}
static void *wsp__sh_realloc(wsp_shuffle_t *sh, void *p, size_t n) {
  return wsp__fault(sh) ? NULL : realloc(p, n);
}
static void wsp__nomem_wait(wsp_shuffle_t *sh) { sh->st.nomem_waits++; }

/* Returns the fatal error again in the calling thread (the progress thread
 * may have recorded it). */
static int wsp__refail(wsp_shuffle_t *sh) {
  return wsp__fail(&sh->c, sh->fatal, "%s", sh->fatal_msg);
}

/* ---- batching (requester) ---- */

static double wsp__est_resp(const wsp_shuffle_t *sh) {
  return sh->resp_per_req >= 0 ? sh->resp_per_req : (double)sh->cfg.batch_bytes;
}

static void wsp__list_push(wsp__obatch_t **head, wsp__obatch_t **tail,
                           wsp__obatch_t *b) {
  b->next = NULL;
  if (*tail)
    (*tail)->next = b;
  else
    *head = b;
  *tail = b;
}

static wsp__obatch_t *wsp__list_pop(wsp__obatch_t **head, wsp__obatch_t **tail) {
  wsp__obatch_t *b = *head;
  if (b) {
    *head = b->next;
    if (*head == NULL) *tail = NULL;
    b->next = NULL;
  }
  return b;
}

/* Moves the open batch of `dest` to its ready queue. */
static void wsp__seal(wsp_shuffle_t *sh, int dest) {
  wsp__peer_t *pe = &sh->peers[dest];
  wsp__obatch_t *b = pe->open;
  if (b == NULL) return;
  pe->open = NULL;
  sh->n_open--;
  if (b->cap > b->len) { /* give back the doubling slack */
    unsigned char *nb = realloc(b->buf, b->len);
    if (nb) {
      sh->m_backlog -= b->cap - b->len;
      b->buf = nb;
      b->cap = b->len;
    }
  }
  b->seq = pe->next_seq++;
  wsp__put_hdr(b->buf, b->seq, b->count, 0);
  b->dest = dest;
  wsp__list_push(&sh->ready_head, &sh->ready_tail, b);
  sh->n_ready++;
}

/* The volume (cost) the backlog may hold before a post waits: what the
 * pacing rate lets out in WSP__BACKLOG_S (at most the window), or a few
 * batches: enough that pacing never runs dry, little enough that requests
 * do not queue for long before they are sent. */
static double wsp__backlog_cost_limit(const wsp_shuffle_t *sh) {
  double u = wsp__pace_unit(&sh->pace);
  double a = wsp__pace_rate(&sh->pace) * WSP__BACKLOG_S;
  if (a > wsp__pace_window(&sh->pace)) a = wsp__pace_window(&sh->pace);
  double b = WSP__BACKLOG_BATCHES * u;
  return a > b ? a : b;
}

/* Would a request of `bytes` to `dest` fit the backlog now? (*delta: the
 * capacity its batch would grow by.) */
static int wsp__fits(const wsp_shuffle_t *sh, int dest, size_t bytes,
                     double cost, size_t *delta) {
  const wsp__peer_t *pe = &sh->peers[dest];
  const wsp__obatch_t *b = pe->open;
  size_t need = (b ? b->len : WSP__HDR_BYTES) + WSP__ENTRY_BYTES + bytes;
  size_t cap = b ? b->cap : 0;
  *delta = wsp__grow_cap(cap, need, sh->lim.peer_req) - cap;
  if (sh->m_backlog > 0 && sh->m_backlog + *delta > sh->lim.backlog) return 0;
  if (sh->backlog_cost > 0 &&
      sh->backlog_cost + cost > wsp__backlog_cost_limit(sh))
    return 0;
  return 1;
}

/* ---- passes ---- */

static int wsp__send_chunk(wsp_shuffle_t *sh, int dest, uint64_t seq, int last);

/* Hands the responses of one chunk from `src` to on_response. */
static int wsp__dispatch(wsp_shuffle_t *sh, int src, const unsigned char *buf,
                         size_t len, double now) {
  wsp__peer_t *pe = &sh->peers[src];
  if (len < WSP__HDR_BYTES) return wsp__broken(sh, "short response chunk");
  uint64_t seq = wsp__get64(buf);
  uint32_t count = wsp__get32(buf + 8), flags = wsp__get32(buf + 12);
  wsp__obatch_t *b = pe->fly_head;
  if (b == NULL || b->seq != seq)
    return wsp__broken(sh, "a response chunk does not answer the oldest "
                           "batch in flight to its peer");
  size_t off = WSP__HDR_BYTES;
  for (uint32_t i = 0; i < count; i++) {
    if (off + WSP__ENTRY_BYTES > len || b->answered >= b->count ||
        b->cursor + WSP__ENTRY_BYTES > b->len)
      return wsp__broken(sh, "malformed response chunk");
    uint64_t rl = wsp__get64(buf + off);
    uint64_t ql = wsp__get64(b->buf + b->cursor);
    off += WSP__ENTRY_BYTES;
    if (rl > len - off || ql > b->len - b->cursor - WSP__ENTRY_BYTES)
      return wsp__broken(sh, "malformed response chunk");
    const unsigned char *q = b->buf + b->cursor + WSP__ENTRY_BYTES;
    sh->in_handler = WSP__IN_RESPONSE;
    int hrc = sh->h.on_response(sh->user, src, ql ? q : NULL, (size_t)ql,
                                rl ? buf + off : NULL, (size_t)rl);
    sh->in_handler = WSP__IN_NONE;
    if (hrc != 0) {
      wsp__fail(&sh->c, WSP_ERR_HANDLER,
                "wsp_shuffle: on_response returned %d (response from rank %d)",
                hrc, src);
      wsp__set_failed(sh, WSP_ERR_HANDLER);
    }
    sh->st.responses_handled++;
    sh->st.response_bytes_received += rl;
    b->resp_bytes += (size_t)rl;
    b->cursor += WSP__ENTRY_BYTES + (size_t)ql;
    b->answered++;
    off += (size_t)rl;
  }
  if (!(flags & WSP__CHUNK_LAST)) return WSP_OK;
  if (b->answered != b->count)
    return wsp__broken(sh, "a batch's last chunk left requests unanswered");
  /* Answered: the batch leaves the windows. */
  if (src != sh->rank) {
    int mrc = MPI_Wait(&b->req, MPI_STATUS_IGNORE); /* matched: done or nearly */
    if (mrc != MPI_SUCCESS)
      return wsp__set_fatal(sh, wsp__mpi_fail(&sh->c, mrc, "MPI_Wait", WSP__WHERE));
  }
  wsp__list_pop(&pe->fly_head, &pe->fly_tail);
  sh->n_fly--;
  pe->fly_req -= b->len;
  pe->fly_cost -= b->cost;
  if (pe->fly_head == NULL) pe->fly_cost = 0; /* no rounding residue */
  sh->inflight_req -= b->len;
  sh->m_inflight -= b->cap;
  double actual = (double)b->len + (double)b->resp_bytes;
  if (src != sh->rank && !pe->local) {
    sh->net_cost -= b->cost;
    if (sh->net_cost < 0 || sh->n_fly == 0) sh->net_cost = 0; /* rounding */
    uint64_t iv = sh->pace.n_intervals;
    wsp__update_peer_ref(sh, now);
    wsp__pace_ack(&sh->pace, now - b->t_sent, actual, sh->net_cost, now);
    if (sh->pace.n_intervals != iv && sh->c.cfg.log_level >= WSP_LOG_TRACE)
      wsp__log(&sh->c, WSP_LOG_TRACE,
               "shuffle pace: t %.4f interval %llu: rate %.0f B/s, queue %.0f "
               "B over a floor of %.0f B, delivered %.0f B/s (smoothed %.0f), "
               "srtt %.4f s, in flight %.0f B, peers' median %.0f B/s, %llu up "
               "(%llu towards the median), %llu down, %llu stalls, slow start left %llu "
               "on the queue and %llu at the median%s",
               now - sh->t_open, (unsigned long long)sh->pace.n_intervals,
               wsp__pace_rate(&sh->pace), sh->pace.prev_q, sh->pace.floor,
               sh->pace.ndelivered > 0 ? sh->pace.delivered[sh->pace.ndelivered - 1] : 0.0,
               sh->pace.dsmooth, sh->pace.srtt, sh->net_cost, sh->pace.peer_ref,
               (unsigned long long)sh->pace.n_increase,
               (unsigned long long)sh->pace.n_toward_median,
               (unsigned long long)sh->pace.n_decrease,
               (unsigned long long)sh->pace.n_stall,
               (unsigned long long)sh->pace.n_exited,
               (unsigned long long)sh->pace.n_joined,
               sh->pace.slow_start ? " (slow start)" : "");
  }
  double per = (double)b->resp_bytes / (double)b->count;
  sh->resp_per_req = sh->resp_per_req < 0
                         ? per
                         : sh->resp_per_req + (per - sh->resp_per_req) / WSP__PACE_GAIN;
  free(b->buf);
  free(b);
  return WSP_OK;
}

/* One MPI_Test of a pending receive (see wsp__test_receives_each). */
static int wsp__test_one(wsp_shuffle_t *sh, MPI_Request *req, int *received,
                         int *progress) {
  if (*received) return WSP_OK;
  int mrc = MPI_Test(req, received, MPI_STATUS_IGNORE);
  if (mrc != MPI_SUCCESS)
    return wsp__set_fatal(sh, wsp__mpi_fail(&sh->c, mrc, "MPI_Test", WSP__WHERE));
  if (*received) *progress = 1;
  return WSP_OK;
}

/* Tests the pending receives with one MPI_Test each: wsp__test_receives's
 * way when it has no memory for its arrays (completed receives are what
 * lets memory be given back, so testing them must not need any). */
static int wsp__test_receives_each(wsp_shuffle_t *sh, int *progress) {
  int rc = WSP_OK;
  for (int q = 0; q < sh->p && rc == WSP_OK; q++) {
    wsp__peer_t *pe = &sh->peers[q];
    for (wsp__ichunk_t *ch = pe->rin_head; ch && rc == WSP_OK; ch = ch->next)
      rc = wsp__test_one(sh, &ch->req, &ch->received, progress);
    for (wsp__ibatch_t *ib = pe->in_head; ib && rc == WSP_OK; ib = ib->next)
      rc = wsp__test_one(sh, &ib->req, &ib->received, progress);
  }
  return rc;
}

/* Tests every pending receive (response chunks and request batches) with
 * one MPI_Testsome and marks the completed ones (see wsp__pass_sends for
 * why one call). The passes then hand over what is complete, in order. */
static int wsp__test_receives(wsp_shuffle_t *sh, int *progress) {
  size_t n = 0;
  if (sh->n_rin + sh->n_in == 0) return WSP_OK;
  for (int q = 0; q < sh->p; q++) {
    wsp__peer_t *pe = &sh->peers[q];
    for (wsp__ichunk_t *ch = pe->rin_head; ch; ch = ch->next)
      if (!ch->received) n++;
    for (wsp__ibatch_t *ib = pe->in_head; ib; ib = ib->next)
      if (!ib->received) n++;
  }
  if (n == 0) return WSP_OK;
  if (sh->cap_tr < n) {
    /* Each array that grew is kept; cap_tr is what all three hold. */
    MPI_Request *r = wsp__sh_realloc(sh, sh->tr_req, n * sizeof *r);
    if (r) sh->tr_req = r;
    int **f = r ? wsp__sh_realloc(sh, sh->tr_flag, n * sizeof *f) : NULL;
    if (f) sh->tr_flag = f;
    int *ix = f ? wsp__sh_realloc(sh, sh->tr_idx, n * sizeof *ix) : NULL;
    if (ix) sh->tr_idx = ix;
    if (ix == NULL) {
      wsp__nomem_wait(sh);
      return wsp__test_receives_each(sh, progress);
    }
    sh->cap_tr = n;
  }
  /* The requests are copied; MPI_Testsome frees the completed ones, and
   * their originals are never used again (only `received` is). */
  size_t k = 0;
  for (int q = 0; q < sh->p; q++) {
    wsp__peer_t *pe = &sh->peers[q];
    for (wsp__ichunk_t *ch = pe->rin_head; ch; ch = ch->next)
      if (!ch->received) {
        sh->tr_req[k] = ch->req;
        sh->tr_flag[k++] = &ch->received;
      }
    for (wsp__ibatch_t *ib = pe->in_head; ib; ib = ib->next)
      if (!ib->received) {
        sh->tr_req[k] = ib->req;
        sh->tr_flag[k++] = &ib->received;
      }
  }
  int out = 0;
  int mrc = MPI_Testsome((int)k, sh->tr_req, &out, sh->tr_idx, MPI_STATUSES_IGNORE);
  if (mrc != MPI_SUCCESS)
    return wsp__set_fatal(sh, wsp__mpi_fail(&sh->c, mrc, "MPI_Testsome", WSP__WHERE));
  if (out == MPI_UNDEFINED) return WSP_OK;
  for (int i = 0; i < out; i++) *sh->tr_flag[sh->tr_idx[i]] = 1;
  if (out > 0) *progress = 1;
  return WSP_OK;
}

/* Step 1: receive and hand over response chunks. */
static int wsp__pass_responses(wsp_shuffle_t *sh, double now, int *progress) {
  int rc = WSP_OK;
  for (int i = 0; i < WSP__PROBES_PER_PASS; i++) {
    int flag = 0;
    MPI_Status st;
    WSP__MPI_GOTO(&sh->c, MPI_Iprobe(MPI_ANY_SOURCE, WSP__TAG_SHUFFLE_RESP, sh->c.mpi,
                                     &flag, &st),
                  rc, out);
    if (!flag) break;
    size_t bytes;
    if ((rc = wsp__status_bytes(&sh->c, &st, &bytes)) != WSP_OK) goto out;
    if (sh->m_resp_in > 0 && sh->m_resp_in + bytes > sh->lim.resp_in) break;
    wsp__ichunk_t *ch = wsp__sh_calloc(sh, sizeof *ch);
    unsigned char *buf = ch ? wsp__sh_malloc(sh, bytes) : NULL;
    if (buf == NULL) { /* the chunk stays queued in MPI until memory frees */
      free(ch);
      wsp__nomem_wait(sh);
      break;
    }
    ch->buf = buf;
    ch->len = bytes;
    if ((rc = wsp__irecv_bytes(&sh->c, buf, bytes, st.MPI_SOURCE,
                               WSP__TAG_SHUFFLE_RESP, &ch->req)) != WSP_OK) {
      free(buf);
      free(ch);
      goto out;
    }
    wsp__peer_t *pe = &sh->peers[st.MPI_SOURCE];
    if (pe->rin_tail)
      pe->rin_tail->next = ch;
    else
      pe->rin_head = ch;
    pe->rin_tail = ch;
    sh->n_rin++;
    sh->m_resp_in += bytes;
    wsp__note_peaks(sh);
    *progress = 1;
  }
  if (sh->n_rin == 0) return WSP_OK;
  for (int q = 0; q < sh->p; q++) {
    wsp__peer_t *pe = &sh->peers[q];
    wsp__ichunk_t *ch;
    while ((ch = pe->rin_head) != NULL) {
      if (!ch->received) break; /* tested by wsp__test_receives */
      if ((rc = wsp__dispatch(sh, q, ch->buf, ch->len, now)) != WSP_OK)
        return rc;
      pe->rin_head = ch->next;
      if (pe->rin_head == NULL) pe->rin_tail = NULL;
      sh->n_rin--;
      sh->m_resp_in -= ch->len;
      free(ch->buf);
      free(ch);
      *progress = 1;
    }
  }
out:
  return rc == WSP_OK ? rc : wsp__set_fatal(sh, rc);
}

static void wsp__in_push(wsp__peer_t *pe, wsp__ibatch_t *ib) {
  ib->next = NULL;
  if (pe->in_tail)
    pe->in_tail->next = ib;
  else
    pe->in_head = ib;
  pe->in_tail = ib;
}

/* Step 2: receive request batches. Always: the windows bound them. */
static int wsp__pass_requests(wsp_shuffle_t *sh, int *progress) {
  int rc = WSP_OK;
  for (int i = 0; i < WSP__PROBES_PER_PASS; i++) {
    int flag = 0;
    MPI_Status st;
    WSP__MPI_GOTO(&sh->c, MPI_Iprobe(MPI_ANY_SOURCE, WSP__TAG_SHUFFLE_REQ, sh->c.mpi,
                                     &flag, &st),
                  rc, out);
    if (!flag) break;
    size_t bytes;
    if ((rc = wsp__status_bytes(&sh->c, &st, &bytes)) != WSP_OK) goto out;
    wsp__ibatch_t *ib = wsp__sh_calloc(sh, sizeof *ib);
    unsigned char *buf = ib ? wsp__sh_malloc(sh, bytes) : NULL;
    if (buf == NULL) { /* the batch stays queued in MPI until memory frees */
      free(ib);
      wsp__nomem_wait(sh);
      break;
    }
    ib->buf = buf;
    ib->len = bytes;
    ib->owned = 1;
    if ((rc = wsp__irecv_bytes(&sh->c, buf, bytes, st.MPI_SOURCE, WSP__TAG_SHUFFLE_REQ,
                               &ib->req)) != WSP_OK) {
      free(buf);
      free(ib);
      goto out;
    }
    wsp__in_push(&sh->peers[st.MPI_SOURCE], ib);
    sh->n_in++;
    sh->m_intake += bytes;
    wsp__note_peaks(sh);
    *progress = 1;
  }
out:
  return rc == WSP_OK ? rc : wsp__set_fatal(sh, rc);
}

/* Step 3: response chunks whose send completed are freed. One
 * MPI_Testsome for all of them: each MPI_Test that finds its request
 * unfinished drives the MPI's progress engine (a poll of its sockets), and
 * with a dozen chunks out, separate tests cost a dozen polls per pass. */
static int wsp__pass_sends(wsp_shuffle_t *sh, int *progress) {
  if (sh->n_osend == 0) return WSP_OK;
  /* No allocation here: completing sends is what gives memory back, so
   * idx grows with osend (wsp__osend_room). */
  int out = 0;
  int mrc = MPI_Testsome((int)sh->n_osend, sh->osend, &out, sh->idx,
                         MPI_STATUSES_IGNORE);
  if (mrc != MPI_SUCCESS)
    return wsp__set_fatal(sh, wsp__mpi_fail(&sh->c, mrc, "MPI_Testsome", WSP__WHERE));
  if (out == MPI_UNDEFINED || out == 0) return WSP_OK;
  for (int i = 0; i < out; i++) {
    size_t j = (size_t)sh->idx[i];
    free(sh->obuf[j]);
    sh->obuf[j] = NULL;
    sh->m_resp_out -= sh->ocap[j];
  }
  size_t k = 0; /* completed requests are MPI_REQUEST_NULL now */
  for (size_t i = 0; i < sh->n_osend; i++)
    if (sh->obuf[i] != NULL) {
      sh->osend[k] = sh->osend[i];
      sh->obuf[k] = sh->obuf[i];
      sh->ocap[k] = sh->ocap[i];
      k++;
    }
  sh->n_osend = k;
  *progress = 1;
  return WSP_OK;
}

/* Makes room for `need` bytes in the chunk being built. `pass`: called by
 * a pass (its allocation may be made to fail, WSP_SHUFFLE_FAULT_NOMEM), not
 * by wsp_shuffle_reply. */
static int wsp__chunk_room(wsp_shuffle_t *sh, size_t need, int pass) {
  if (need <= sh->chunk_cap) return WSP_OK;
  size_t cap = wsp__grow_cap(sh->chunk_cap, need, sh->lim.resp_out / 2);
  unsigned char *nb = pass ? wsp__sh_realloc(sh, sh->chunk, cap) : realloc(sh->chunk, cap);
  if (nb == NULL) return WSP_ERR_NOMEM;
  sh->m_resp_out += cap - sh->chunk_cap;
  sh->chunk = nb;
  sh->chunk_cap = cap;
  wsp__note_peaks(sh);
  return WSP_OK;
}

/* Makes sure a response send has a slot in osend/obuf/ocap/idx. */
static int wsp__osend_room(wsp_shuffle_t *sh) {
  if (sh->n_osend < sh->cap_osend) return WSP_OK;
  size_t n = sh->cap_osend ? 2 * sh->cap_osend : 16;
  /* Each array that grew is kept; cap_osend is what all four hold. */
  MPI_Request *r = wsp__sh_realloc(sh, sh->osend, n * sizeof *r);
  if (r) sh->osend = r;
  unsigned char **b = r ? wsp__sh_realloc(sh, sh->obuf, n * sizeof *b) : NULL;
  if (b) sh->obuf = b;
  size_t *c = b ? wsp__sh_realloc(sh, sh->ocap, n * sizeof *c) : NULL;
  if (c) sh->ocap = c;
  int *x = c ? wsp__sh_realloc(sh, sh->idx, n * sizeof *x) : NULL;
  if (x == NULL) return WSP_ERR_NOMEM;
  sh->idx = x;
  sh->cap_osend = n;
  return WSP_OK;
}

/* Reserves what serving one more request (extra = WSP__ENTRY_BYTES, room
 * for at least an empty response) or sending the chunk (extra = 0) needs:
 * room in the chunk and a slot for its send; then starts the chunk (its
 * header) if none is being built. Reserved before the request handler
 * runs, so that nothing after it can fail for lack of memory (the handler
 * cannot be called twice); a failure leaves everything as it was, and
 * serving resumes there on a later pass. */
static int wsp__serve_room(wsp_shuffle_t *sh, int dest, size_t extra) {
  size_t len = sh->chunk_len ? sh->chunk_len : WSP__HDR_BYTES;
  if (wsp__chunk_room(sh, len + extra, 1) != WSP_OK ||
      (dest != sh->rank && wsp__osend_room(sh) != WSP_OK)) /* self: no send */
    return WSP_ERR_NOMEM;
  sh->chunk_len = len;
  return WSP_OK;
}

/* Sends (or, to self, hands over) the chunk being built; its memory and
 * send slot were reserved by wsp__serve_room. */
static int wsp__send_chunk(wsp_shuffle_t *sh, int dest, uint64_t seq, int last) {
  int rc;
  if (sh->chunk_len == 0 || (dest != sh->rank && sh->n_osend == sh->cap_osend))
    return wsp__broken(sh, "response chunk sent without its reservation");
  wsp__put_hdr(sh->chunk, seq, sh->chunk_count, last ? WSP__CHUNK_LAST : 0);
  unsigned char *buf = sh->chunk;
  size_t len = sh->chunk_len, cap = sh->chunk_cap;
  sh->chunk = NULL;
  sh->chunk_len = sh->chunk_cap = 0;
  sh->chunk_count = 0;
  if (dest == sh->rank) {
    rc = wsp__dispatch(sh, dest, buf, len, MPI_Wtime());
    free(buf);
    sh->m_resp_out -= cap;
    return rc;
  }
  rc = wsp__isend_bytes(&sh->c, buf, len, dest, WSP__TAG_SHUFFLE_RESP, 0,
                        &sh->osend[sh->n_osend]);
  if (rc != WSP_OK) {
    free(buf);
    sh->m_resp_out -= cap;
    return wsp__set_fatal(sh, rc);
  }
  sh->obuf[sh->n_osend] = buf;
  sh->ocap[sh->n_osend] = cap;
  sh->n_osend++;
  sh->st.chunks_sent++;
  return WSP_OK;
}

/* Step 4: serve received request batches, round robin over sources, while
 * the response buffers have room. */
static int wsp__pass_serve(wsp_shuffle_t *sh, double now, int *progress) {
  if (sh->n_in == 0) return WSP_OK;
  int rc = WSP_OK;
  for (int k = 0; k < sh->p; k++) {
    int q = (sh->rr_serve + k) % sh->p;
    wsp__peer_t *pe = &sh->peers[q];
    wsp__ibatch_t *ib;
    while ((ib = pe->in_head) != NULL) {
      if (!ib->received) break; /* tested by wsp__test_receives */
      if (!ib->parsed) { /* just arrived */
        ib->parsed = 1;
        if (ib->len < WSP__HDR_BYTES) return wsp__broken(sh, "short request batch");
        ib->seq = wsp__get64(ib->buf);
        ib->count = wsp__get32(ib->buf + 8);
        ib->cursor = WSP__HDR_BYTES;
        float rate;
        memcpy(&rate, ib->buf + 12, sizeof rate);
        if (rate > 0 && isfinite(rate)) {
          pe->rate_seen = rate;
          pe->rate_seen_t = now;
        }
        if (ib->seq != pe->expect_seq)
          return wsp__broken(sh, "request batches out of order");
        pe->expect_seq++;
      }
      while (ib->done < ib->count) {
        if (sh->m_resp_out > sh->lim.resp_out / 2) {
          sh->rr_serve = q; /* resume here */
          return WSP_OK;
        }
        if (ib->cursor + WSP__ENTRY_BYTES > ib->len)
          return wsp__broken(sh, "malformed request batch");
        uint64_t ql = wsp__get64(ib->buf + ib->cursor);
        if (ql > ib->len - ib->cursor - WSP__ENTRY_BYTES)
          return wsp__broken(sh, "malformed request batch");
        const unsigned char *req = ib->buf + ib->cursor + WSP__ENTRY_BYTES;
        if (wsp__serve_room(sh, q, WSP__ENTRY_BYTES) != WSP_OK) {
          wsp__nomem_wait(sh);
          sh->rr_serve = q; /* resume here */
          return WSP_OK;
        }
        wsp_shuffle_reply_t *reply = &sh->replies[++sh->reply_call % WSP__REPLY_SLOTS];
        reply->call = sh->reply_call;
        sh->reply_active = 1;
        sh->reply_replied = 0;
        sh->in_handler = WSP__IN_REQUEST;
        int hrc = sh->h.on_request(sh->user, q, ql ? req : NULL, (size_t)ql, reply);
        sh->in_handler = WSP__IN_NONE;
        sh->reply_active = 0;
        if (hrc != 0) {
          wsp__fail(&sh->c, WSP_ERR_HANDLER,
                    "wsp_shuffle: on_request returned %d (request from rank %d)",
                    hrc, q);
          wsp__set_failed(sh, WSP_ERR_HANDLER);
        }
        if (!sh->reply_replied) { /* an empty response, its room reserved */
          if (sh->chunk_len + WSP__ENTRY_BYTES > sh->chunk_cap)
            return wsp__broken(sh, "no room reserved for an empty response");
          wsp__put64(sh->chunk + sh->chunk_len, 0);
          sh->chunk_len += WSP__ENTRY_BYTES;
          sh->chunk_count++;
        }
        sh->st.requests_served++;
        ib->cursor += WSP__ENTRY_BYTES + (size_t)ql;
        ib->done++;
        *progress = 1;
        if (sh->chunk_len >= sh->lim.chunk && ib->done < ib->count &&
            (rc = wsp__send_chunk(sh, q, ib->seq, 0)) != WSP_OK)
          return rc;
      }
      /* The batch is answered: release it before the last chunk goes out
       * (for self, handing that chunk over frees the borrowed buffer). An
       * empty batch has no chunk yet: reserve one first. */
      if (wsp__serve_room(sh, q, 0) != WSP_OK) {
        wsp__nomem_wait(sh);
        sh->rr_serve = q;
        return WSP_OK;
      }
      uint64_t seq = ib->seq;
      pe->in_head = ib->next;
      if (pe->in_head == NULL) pe->in_tail = NULL;
      sh->n_in--;
      if (ib->owned) {
        sh->m_intake -= ib->len;
        free(ib->buf);
      }
      free(ib);
      if ((rc = wsp__send_chunk(sh, q, seq, 1)) != WSP_OK) return rc;
    }
  }
  sh->rr_serve = (sh->rr_serve + 1) % sh->p;
  return rc;
}

/* Step 5: seal batches that waited long enough (all of them when closing;
 * self batches at once, as waiting gains nothing there). */
static void wsp__pass_seal(wsp_shuffle_t *sh, double now) {
  if (sh->n_open == 0) return;
  for (int q = 0; q < sh->p; q++) {
    wsp__obatch_t *b = sh->peers[q].open;
    if (b && (q == sh->rank || sh->state != WSP__ST_OPEN ||
              now - b->t_open >= sh->cfg.batch_delay))
      wsp__seal(sh, q);
  }
}

/* Step 6: send sealed batches in the order they were sealed (so, for the
 * usual application, the order of posting), within the per-peer and total
 * bounds and the pacing controller's permission. A batch whose peer's
 * window is full is skipped, and so is every later batch of that peer
 * (order per peer is kept); batches to other peers still go. Why the
 * posting order and not a round robin over peer indices: applications
 * that post to peers in a staggered order (rank + 1, rank + 2, ...) spread
 * the load evenly over responders; a rotating index scrambled that, and on
 * netlab the collisions left some responders idle and others queued. */
static int wsp__pass_send(wsp_shuffle_t *sh, double now, int *progress) {
  if (sh->ready_head == NULL) return WSP_OK;
  sh->stamp++;
  int paced_out = 0; /* the controller said no: network peers wait */
  wsp__obatch_t *prev = NULL, *b = sh->ready_head;
  while (b) {
    int q = b->dest;
    wsp__peer_t *pe = &sh->peers[q];
    int net = q != sh->rank && !pe->local;
    int skip = pe->stamp == sh->stamp || (net && paced_out);
    if (!skip && ((pe->fly_req > 0 && pe->fly_req + b->len > sh->lim.peer_req) ||
                  (pe->fly_cost > 0 && pe->fly_cost >= (double)sh->cfg.peer_window)))
      skip = 1;
    if (!skip && sh->m_inflight > 0 && sh->m_inflight + b->cap > sh->lim.inflight)
      return WSP_OK; /* the inflight share: nothing else may go either */
    if (!skip && net && !wsp__pace_may_send(&sh->pace, sh->net_cost, now)) {
      skip = paced_out = 1;
      sh->paced_at = now;
    }
    if (skip) {
      pe->stamp = sh->stamp; /* later batches of this peer wait too */
      prev = b;
      b = b->next;
      continue;
    }
    wsp__obatch_t *next = b->next;
    wsp__ibatch_t *self_ib = NULL;
    if (q == sh->rank && (self_ib = wsp__sh_calloc(sh, sizeof *self_ib)) == NULL) {
      wsp__nomem_wait(sh); /* b stays queued, and so do later self batches */
      pe->stamp = sh->stamp;
      prev = b;
      b = next;
      continue;
    }
    b->t_sent = now;
    if (q != sh->rank) {
      float rate = now - sh->paced_at <= WSP__PACE_LIMITED_S
                       ? (float)wsp__pace_report(&sh->pace)
                       : 0.0f;
      memcpy(b->buf + 12, &rate, sizeof rate);
      int rc = wsp__isend_bytes(&sh->c, b->buf, b->len, q, WSP__TAG_SHUFFLE_REQ, 0,
                                &b->req);
      if (rc != WSP_OK) return wsp__set_fatal(sh, rc); /* b stays queued */
    } else {
      /* Self: served from this very buffer. */
      wsp__ibatch_t *ib = self_ib;
      ib->buf = b->buf;
      ib->len = b->len;
      ib->owned = 0;
      ib->received = 1;
      ib->parsed = 1;
      ib->seq = b->seq;
      ib->count = b->count;
      ib->cursor = WSP__HDR_BYTES;
      pe->expect_seq++;
      wsp__in_push(pe, ib);
      sh->n_in++;
    }
    /* Unlink from the ready queue. */
    if (prev)
      prev->next = next;
    else
      sh->ready_head = next;
    if (sh->ready_tail == b) sh->ready_tail = prev;
    sh->n_ready--;
    b->cursor = WSP__HDR_BYTES;
    wsp__list_push(&pe->fly_head, &pe->fly_tail, b);
    sh->n_fly++;
    sh->m_backlog -= b->cap;
    sh->m_inflight += b->cap;
    sh->backlog_cost -= b->cost;
    if (sh->n_open == 0 && sh->n_ready == 0) sh->backlog_cost = 0;
    sh->inflight_req += b->len;
    pe->fly_req += b->len;
    pe->fly_cost += b->cost;
    if (net) {
      sh->net_cost += b->cost;
      wsp__pace_sent(&sh->pace, b->cost);
    }
    sh->st.batches_sent++;
    wsp__note_peaks(sh);
    *progress = 1;
    b = next;
  }
  return WSP_OK;
}

/* One pass (see the top of the file). */
static int wsp__pass(wsp_shuffle_t *sh, int *progress) {
  *progress = 0;
  if (sh->fatal) return sh->fatal;
  double now = MPI_Wtime();
  int rc;
  if ((rc = wsp__test_receives(sh, progress)) != WSP_OK) return rc;
  if ((rc = wsp__pass_responses(sh, now, progress)) != WSP_OK) return rc;
  if ((rc = wsp__pass_requests(sh, progress)) != WSP_OK) return rc;
  if ((rc = wsp__pass_sends(sh, progress)) != WSP_OK) return rc;
  if ((rc = wsp__pass_serve(sh, now, progress)) != WSP_OK) return rc;
  wsp__pass_seal(sh, now);
  return wsp__pass_send(sh, MPI_Wtime(), progress);
}

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
 * yields alone took most of the CPU the network stack needed. */
#define WSP__SHUFFLE_SPIN 2
static void wsp__shuffle_backoff_init(wsp_shuffle_t *sh, wsp__backoff_t *bo) {
  wsp__backoff_init(bo, &sh->c);
  bo->spin_passes = WSP__SHUFFLE_SPIN;
  bo->yield_passes = 0;
}

/* A pass with the lock held, then the back-off outside it. */
static int wsp__wait_step(wsp_shuffle_t *sh, wsp__backoff_t *bo) {
  wsp__sleep_cap(sh, bo);
  int progress = 0;
  int rc = wsp__pass(sh, &progress);
  wsp__unlock(sh);
  if (rc == WSP_OK) {
    if (progress)
      wsp__backoff_reset(bo);
    else
      wsp__backoff_idle(bo);
  }
  wsp__lock(sh);
  return rc;
}

#ifndef WSP_SIMGRID
static void *wsp__progress_thread(void *arg) {
  wsp_shuffle_t *sh = arg;
  wsp__backoff_t bo;
  wsp__shuffle_backoff_init(sh, &bo);
  for (;;) {
    wsp__lock(sh);
    if (sh->thread_stop || sh->fatal) {
      wsp__unlock(sh);
      break;
    }
    int progress = 0;
    wsp__pass(sh, &progress);
    wsp__sleep_cap(sh, &bo);
    wsp__unlock(sh);
    if (progress)
      wsp__backoff_reset(&bo);
    else
      wsp__backoff_idle(&bo);
  }
  return NULL;
}
#endif

/* ---- public API ---- */

int wsp_shuffle_open(wsp_comm_t *comm, const wsp_shuffle_config_t *cfg,
                     const wsp_shuffle_handlers_t *handlers, void *user,
                     wsp_shuffle_t **out) {
  const char *fn = "wsp_shuffle_open";
  if (comm == NULL) return wsp__fail(NULL, WSP_ERR_ARG, "%s: comm is NULL", fn);
  if (out) *out = NULL;

  /* Local checks first; a failing rank still takes part in the collective
   * steps below so that every rank returns, then reports. */
  int local_rc = WSP_OK;
  char local_msg[512] = "";
  wsp_shuffle_config_t c;
  wsp_shuffle_config_init(&c);
  if (out == NULL)
    local_rc = wsp__fail(comm, WSP_ERR_ARG, "%s: out is NULL", fn);
  else if (handlers == NULL)
    local_rc = wsp__fail(comm, WSP_ERR_ARG, "%s: handlers is NULL", fn);
  else if (handlers->on_request == NULL)
    local_rc = wsp__fail(comm, WSP_ERR_ARG, "%s: handlers->on_request is NULL", fn);
  else if (handlers->on_response == NULL)
    local_rc = wsp__fail(comm, WSP_ERR_ARG, "%s: handlers->on_response is NULL", fn);
  else if (cfg)
    local_rc = wsp__shuffle_config_check(cfg);
  else
    local_rc = wsp_shuffle_config_from_env(&c);
  if (local_rc == WSP_OK && cfg) c = *cfg;
  /* Testing aid, local to this rank and not part of the configuration
   * (docs/env.md): an allocation inside a pass fails with probability 1/N. */
  size_t fault_n = 0;
  if (local_rc == WSP_OK)
    local_rc = wsp__env_size("WSP_SHUFFLE_FAULT_NOMEM", 0, (size_t)1 << 30, &fault_n);
  if (local_rc == WSP_OK && fault_n == 1) /* nothing could ever be received */
    local_rc = wsp__fail(comm, WSP_ERR_CONFIG,
                         "WSP_SHUFFLE_FAULT_NOMEM=1: every allocation would fail "
                         "and the shuffle could never progress; use 0 (off) or "
                         "N >= 2 (one in N fails)");
  wsp__shuffle_limits_t lim;
  if (local_rc == WSP_OK) local_rc = wsp__shuffle_limits(c.mem_limit, comm->size, c.batch_bytes, &lim);
  if (local_rc == WSP_OK && c.progress_thread) {
#ifdef WSP_SIMGRID
    local_rc = wsp__fail(comm, WSP_ERR_UNSUPPORTED,
                         "%s: no progress thread under SimGrid", fn);
#else
    int level = MPI_THREAD_SINGLE;
    if (MPI_Query_thread(&level) != MPI_SUCCESS || level != MPI_THREAD_MULTIPLE)
      local_rc = wsp__fail(comm, WSP_ERR_UNSUPPORTED,
                           "%s: cfg->progress_thread needs MPI_THREAD_MULTIPLE "
                           "(initialize MPI with MPI_Init_thread)",
                           fn);
#endif
  }
  wsp_shuffle_t *sh = NULL;
  if (local_rc == WSP_OK) {
    sh = calloc(1, sizeof *sh);
    if (sh) {
      sh->peers = calloc((size_t)comm->size, sizeof *sh->peers);
      sh->rate_buf = calloc((size_t)comm->size, sizeof *sh->rate_buf);
      sh->close_sums = calloc(2, sizeof *sh->close_sums);
    }
    if (sh == NULL || sh->peers == NULL || sh->rate_buf == NULL ||
        sh->close_sums == NULL ||
        wsp__pace_init(&sh->pace, c.mode, c.rate, (double)c.batch_bytes,
                       (double)c.window, MPI_Wtime()) != WSP_OK) {
      local_rc = wsp__fail(comm, WSP_ERR_NOMEM, "%s: out of memory", fn);
      if (sh) {
        free(sh->peers);
        free(sh->rate_buf);
        free(sh->close_sums);
        free(sh);
        sh = NULL;
      }
    }
  }
  if (local_rc != WSP_OK) snprintf(local_msg, sizeof local_msg, "%s", wsp_last_error());

  /* Collective: the shuffle's own communicator, who shares a node, and
   * the agreement on configuration and local failures. */
  int rc = WSP_OK;
  MPI_Comm dup = MPI_COMM_NULL;
  WSP__MPI_GOTO(comm, MPI_Comm_dup(comm->mpi, &dup), rc, fail);
  WSP__MPI_GOTO(comm, MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN), rc, fail);
  {
    /* Agreement: every fingerprint equal, nobody failed locally. */
    uint64_t fp = wsp__shuffle_config_fingerprint(&c);
    unsigned long long v[3] = {fp, ~fp, local_rc != WSP_OK}, r[3];
    WSP__MPI_GOTO(comm, MPI_Allreduce(v, r, 3, MPI_UNSIGNED_LONG_LONG, MPI_MAX, dup),
                  rc, fail);
    if (local_rc != WSP_OK) {
      rc = wsp__fail(comm, local_rc, "%s", local_msg);
      goto fail;
    }
    if (r[2]) {
      rc = wsp__fail(comm, WSP_ERR_REMOTE,
                     "%s: another rank failed to open the shuffle", fn);
      goto fail;
    }
    if (r[0] != fp || r[1] != ~fp) {
      rc = wsp__fail(comm, WSP_ERR_CONFIG,
                     "%s: the shuffle configuration differs between ranks "
                     "(WSP_SHUFFLE_* variables or wsp_shuffle_config_t); every "
                     "rank must use the same",
                     fn);
      goto fail;
    }
  }
  /* Who shares this node (the communicator's node map, src/core/topo.c):
   * ranks there talk through shared memory, not the network, and are not
   * paced. */
  for (int q = 0; q < comm->size; q++)
    sh->peers[q].local = comm->topo.node_of[q] == comm->topo.node_of[comm->rank];
  sh->c = *comm;
  sh->c.mpi = dup;
  sh->cfg = c;
  sh->lim = lim;
  sh->fault_n = fault_n;
  sh->fault_rng = 0x9E3779B97F4A7C15ULL ^ (uint64_t)(comm->rank + 1);
  sh->h = *handlers;
  sh->user = user;
  sh->state = WSP__ST_OPEN;
  sh->p = comm->size;
  sh->rank = comm->rank;
  sh->resp_per_req = -1;
  for (int i = 0; i < WSP__REPLY_SLOTS; i++) sh->replies[i].sh = sh;
  sh->t_open = MPI_Wtime();
  sh->paced_at = -1e300; /* never held back yet */
  sh->peers[sh->rank].local = 1;
#ifndef WSP_SIMGRID
  if (c.progress_thread) {
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
    if (!ok) {
      /* Too late to fail alone (the others have an open shuffle): run
       * without the thread, which is correct, only less lively. */
      wsp__log(&sh->c, WSP_LOG_WARN,
               "wsp_shuffle_open: could not start the progress thread; "
               "progress is driven by the caller's calls only");
    }
  }
#endif
  wsp__log(&sh->c, WSP_LOG_DEBUG,
           "wsp_shuffle_open: p %d, mem_limit %zu (backlog %zu, inflight %zu, "
           "intake %zu, resp_out %zu, resp_in %zu), peer_req %zu, max request "
           "%zu, max response %zu, chunk %zu, mode %s",
           sh->p, lim.mem, lim.backlog, lim.inflight, lim.intake, lim.resp_out,
           lim.resp_in, lim.peer_req, lim.max_request, lim.max_response,
           lim.chunk, c.mode == WSP_SHUFFLE_FIXED ? "fixed" : "adaptive");
  *out = sh;
  return WSP_OK;

fail:
  if (dup != MPI_COMM_NULL) MPI_Comm_free(&dup);
  if (sh) {
    free(sh->peers);
    free(sh->rate_buf);
    free(sh->close_sums);
    free(sh);
  }
  return rc;
}

int wsp_shuffle_post(wsp_shuffle_t *sh, int dest, const void *data,
                     size_t bytes) {
  const char *fn = "wsp_shuffle_post";
  if (sh == NULL) return wsp__fail(NULL, WSP_ERR_ARG, "%s: sh is NULL", fn);
  wsp__lock(sh);
  int rc = WSP_OK;
  const int from_handler = sh->in_handler == WSP__IN_RESPONSE;
  if (sh->state == WSP__ST_CLOSED) {
    rc = wsp__fail(&sh->c, WSP_ERR_ARG, "%s: the shuffle is closed", fn);
  } else if (sh->in_handler == WSP__IN_REQUEST) {
    rc = wsp__fail(&sh->c, WSP_ERR_ARG,
                   "%s: called from a request handler (request handlers may "
                   "only reply; post follow-ups from the response handler)",
                   fn);
  } else if (sh->state == WSP__ST_CLOSING && !from_handler) {
    rc = wsp__fail(&sh->c, WSP_ERR_ARG,
                   "%s: the shuffle is closing (only response handlers may "
                   "still post)",
                   fn);
  } else if (dest < 0 || dest >= sh->p) {
    rc = wsp__fail(&sh->c, WSP_ERR_ARG, "%s: dest = %d is out of range [0, %d)",
                   fn, dest, sh->p);
  } else if (data == NULL && bytes > 0) {
    rc = wsp__fail(&sh->c, WSP_ERR_ARG, "%s: data is NULL but bytes = %zu", fn,
                   bytes);
  } else if (bytes > sh->lim.max_request) {
    rc = wsp__fail(&sh->c, WSP_ERR_ARG,
                   "%s: bytes = %zu exceeds the largest request, %zu bytes (a "
                   "peer's share of mem_limit = %zu at p = %d; raise "
                   "WSP_SHUFFLE_MEMORY for larger requests)",
                   fn, bytes, sh->lim.max_request, sh->lim.mem, sh->p);
  } else if (sh->fatal) {
    rc = wsp__refail(sh);
  }
  if (rc != WSP_OK) {
    wsp__unlock(sh);
    return rc;
  }

  wsp__peer_t *pe = &sh->peers[dest];
  double cost = 0, t0 = 0;
  wsp__backoff_t bo;
  wsp__shuffle_backoff_init(sh, &bo);
  for (int waited = 0;; waited = 1) {
    /* Passes may have sealed the open batch or (handlers) added to it. */
    cost = (double)(WSP__ENTRY_BYTES + bytes) + wsp__est_resp(sh);
    /* A batch that this request would overfill goes first. */
    if (pe->open && (pe->open->len + WSP__ENTRY_BYTES + bytes > sh->lim.peer_req ||
                     pe->open->cost + cost > (double)sh->cfg.batch_bytes))
      wsp__seal(sh, dest);
    size_t delta;
    if (from_handler || wsp__fits(sh, dest, bytes, cost, &delta)) break;
    if (!waited) {
      sh->st.post_waits++;
      t0 = MPI_Wtime();
    }
    if ((rc = wsp__wait_step(sh, &bo)) != WSP_OK) {
      wsp__unlock(sh);
      return sh->fatal ? wsp__refail(sh) : rc;
    }
  }
  if (t0 > 0) sh->st.post_wait_seconds += MPI_Wtime() - t0;
  wsp__obatch_t *b = pe->open;
  if (b == NULL) {
    b = calloc(1, sizeof *b);
    if (b == NULL) {
      wsp__unlock(sh);
      return wsp__fail(&sh->c, WSP_ERR_NOMEM, "%s: out of memory", fn);
    }
    b->len = WSP__HDR_BYTES;
    b->t_open = MPI_Wtime();
  }
  size_t need = b->len + WSP__ENTRY_BYTES + bytes;
  if (need > b->cap) {
    size_t cap = wsp__grow_cap(b->cap, need, sh->lim.peer_req);
    unsigned char *nb = realloc(b->buf, cap);
    if (nb == NULL) {
      if (b != pe->open) free(b);
      wsp__unlock(sh);
      return wsp__fail(&sh->c, WSP_ERR_NOMEM, "%s: out of memory", fn);
    }
    sh->m_backlog += cap - b->cap;
    b->buf = nb;
    b->cap = cap;
  }
  if (b != pe->open) {
    pe->open = b;
    sh->n_open++;
  }
  wsp__put64(b->buf + b->len, (uint64_t)bytes);
  if (bytes) memcpy(b->buf + b->len + WSP__ENTRY_BYTES, data, bytes);
  b->len = need;
  b->count++;
  b->cost += cost;
  sh->backlog_cost += cost;
  sh->st.requests_posted++;
  sh->st.request_bytes += bytes;
  wsp__note_peaks(sh);
  if (b->cost >= (double)sh->cfg.batch_bytes) wsp__seal(sh, dest); /* full */
  wsp__unlock(sh);
  return WSP_OK;
}

static int wsp__reply(wsp_shuffle_t *sh, wsp_shuffle_reply_t *reply,
                      const void *data, size_t bytes) {
  const char *fn = "wsp_shuffle_reply";
  if (!sh->reply_active)
    return wsp__fail(&sh->c, WSP_ERR_ARG,
                     "%s: not inside a request handler (the reply context is "
                     "only valid during the on_request call)",
                     fn);
  if (reply->call != sh->reply_call)
    return wsp__fail(&sh->c, WSP_ERR_ARG,
                     "%s: this reply context belongs to an earlier request "
                     "(it is only valid during the on_request call it was "
                     "given to)",
                     fn);
  if (sh->reply_replied)
    return wsp__fail(&sh->c, WSP_ERR_ARG,
                     "%s: this request was already answered (at most one "
                     "reply per request)",
                     fn);
  if (data == NULL && bytes > 0)
    return wsp__fail(&sh->c, WSP_ERR_ARG, "%s: data is NULL but bytes = %zu",
                     fn, bytes);
  if (bytes > sh->lim.max_response)
    return wsp__fail(&sh->c, WSP_ERR_ARG,
                     "%s: bytes = %zu exceeds the largest response, %zu bytes "
                     "(an eighth of mem_limit = %zu, over 4; raise "
                     "WSP_SHUFFLE_MEMORY for larger responses)",
                     fn, bytes, sh->lim.max_response, sh->lim.mem);
  if (wsp__chunk_room(sh, sh->chunk_len + WSP__ENTRY_BYTES + bytes, 0) != WSP_OK) {
    int rc = wsp__fail(&sh->c, WSP_ERR_NOMEM,
                       "%s: no memory for a %zu-byte response", fn, bytes);
    wsp__set_failed(sh, rc);
    return rc;
  }
  wsp__put64(sh->chunk + sh->chunk_len, (uint64_t)bytes);
  if (bytes) memcpy(sh->chunk + sh->chunk_len + WSP__ENTRY_BYTES, data, bytes);
  sh->chunk_len += WSP__ENTRY_BYTES + bytes;
  sh->chunk_count++;
  sh->reply_replied = 1;
  sh->st.response_bytes_sent += bytes;
  return WSP_OK;
}

/* Under the shuffle's lock: with a progress thread, a handle used from
 * another thread then waits for the pass and finds no handler running,
 * instead of writing the response chunk beside the handler. */
int wsp_shuffle_reply(wsp_shuffle_reply_t *reply, const void *data,
                      size_t bytes) {
  if (reply == NULL)
    return wsp__fail(NULL, WSP_ERR_ARG, "wsp_shuffle_reply: reply is NULL");
  wsp_shuffle_t *sh = reply->sh;
  wsp__lock(sh);
  int rc = wsp__reply(sh, reply, data, bytes);
  wsp__unlock(sh);
  return rc;
}

int wsp_shuffle_progress(wsp_shuffle_t *sh) {
  if (sh == NULL)
    return wsp__fail(NULL, WSP_ERR_ARG, "wsp_shuffle_progress: sh is NULL");
  wsp__lock(sh);
  int rc = WSP_OK, progress;
  if (sh->state == WSP__ST_CLOSED)
    rc = wsp__fail(&sh->c, WSP_ERR_ARG, "wsp_shuffle_progress: the shuffle is closed");
  else if (sh->in_handler)
    rc = wsp__fail(&sh->c, WSP_ERR_ARG,
                   "wsp_shuffle_progress: called from a handler");
  else if (sh->fatal)
    rc = wsp__refail(sh);
  else if ((rc = wsp__pass(sh, &progress)) != WSP_OK)
    rc = wsp__refail(sh);
  wsp__unlock(sh);
  return rc;
}

static void wsp__fill_stats(const wsp_shuffle_t *sh, wsp_shuffle_stats_t *s) {
  *s = sh->st;
  s->mem_limit = sh->lim.mem;
  s->mem_current = sh->m_backlog + sh->m_inflight + sh->m_intake +
                   sh->m_resp_out + sh->m_resp_in;
  s->mem_peak = sh->pk_total;
  s->peak_backlog = sh->pk_backlog;
  s->peak_inflight = sh->pk_inflight;
  s->peak_intake = sh->pk_intake;
  s->peak_resp_out = sh->pk_resp_out;
  s->peak_resp_in = sh->pk_resp_in;
  s->max_request = sh->lim.max_request;
  s->max_response = sh->lim.max_response;
  s->rate = wsp__pace_rate(&sh->pace);
  s->rate_min = sh->pace.rate_lo_seen;
  s->rate_max = sh->pace.rate_hi_seen;
  s->rtt_min_per_byte = sh->pace.base;
  s->srtt = sh->pace.srtt;
  s->inflight = sh->net_cost;
}

int wsp_shuffle_stats(const wsp_shuffle_t *sh, wsp_shuffle_stats_t *stats) {
  if (sh == NULL) return wsp__fail(NULL, WSP_ERR_ARG, "wsp_shuffle_stats: sh is NULL");
  if (stats == NULL)
    return wsp__fail(&sh->c, WSP_ERR_ARG, "wsp_shuffle_stats: stats is NULL");
  wsp_shuffle_t *m = (wsp_shuffle_t *)sh; /* the lock only */
  wsp__lock(m);
  wsp__fill_stats(sh, stats);
  wsp__unlock(m);
  return WSP_OK;
}

/* Frees every buffer; only called when no MPI request is pending. */
static void wsp__release(wsp_shuffle_t *sh) {
  for (int q = 0; q < sh->p; q++) {
    wsp__peer_t *pe = &sh->peers[q];
    wsp__obatch_t *lists[2] = {pe->open, pe->fly_head};
    for (int l = 0; l < 2; l++)
      for (wsp__obatch_t *b = lists[l], *n; b; b = n) {
        n = b->next;
        free(b->buf);
        free(b);
      }
    for (wsp__ibatch_t *b = pe->in_head, *n; b; b = n) {
      n = b->next;
      if (b->owned) free(b->buf);
      free(b);
    }
    for (wsp__ichunk_t *b = pe->rin_head, *n; b; b = n) {
      n = b->next;
      free(b->buf);
      free(b);
    }
    memset(pe, 0, sizeof *pe);
  }
  for (wsp__obatch_t *b = sh->ready_head, *n; b; b = n) {
    n = b->next;
    free(b->buf);
    free(b);
  }
  sh->ready_head = sh->ready_tail = NULL;
  for (size_t i = 0; i < sh->n_osend; i++) free(sh->obuf[i]);
  free(sh->osend);
  free(sh->obuf);
  free(sh->ocap);
  free(sh->idx);
  sh->idx = NULL;
  free(sh->tr_req);
  free(sh->tr_flag);
  free(sh->tr_idx);
  sh->tr_req = NULL;
  sh->tr_flag = NULL;
  sh->tr_idx = NULL;
  sh->cap_tr = 0;
  free(sh->chunk);
  sh->osend = NULL;
  sh->obuf = NULL;
  sh->ocap = NULL;
  sh->chunk = NULL;
  sh->n_osend = sh->cap_osend = 0;
  sh->m_backlog = sh->m_inflight = sh->m_intake = sh->m_resp_out =
      sh->m_resp_in = 0;
}

static void wsp__stop_thread(wsp_shuffle_t *sh) {
#ifndef WSP_SIMGRID
  if (!sh->thread_on) return;
  sh->thread_stop = 1;
  wsp__unlock(sh); /* close's own lock: the thread can now see the flag */
  pthread_join(sh->thread, NULL);
  /* From here on one thread: no more locking. */
  pthread_mutex_destroy(&sh->mu);
  sh->thread_on = 0;
#else
  (void)sh;
#endif
}

int wsp_shuffle_close(wsp_shuffle_t *sh, wsp_shuffle_stats_t *stats) {
  const char *fn = "wsp_shuffle_close";
  if (sh == NULL) return wsp__fail(NULL, WSP_ERR_ARG, "%s: sh is NULL", fn);
  wsp__lock(sh);
  if (sh->in_handler) {
    wsp__unlock(sh);
    return wsp__fail(&sh->c, WSP_ERR_ARG, "%s: called from a handler", fn);
  }
  if (sh->state != WSP__ST_OPEN) {
    wsp__unlock(sh);
    return wsp__fail(&sh->c, WSP_ERR_ARG, "%s: the shuffle is %s", fn,
                     sh->state == WSP__ST_CLOSED ? "already closed"
                                                 : "being closed by another thread");
  }
  sh->state = WSP__ST_CLOSING;
  int rc = WSP_OK;
  wsp__backoff_t bo;
  wsp__shuffle_backoff_init(sh, &bo);

  /* 1. Everything of this rank's own answered and handled. */
  while (rc == WSP_OK && !sh->fatal &&
         (sh->n_open || sh->n_ready || sh->n_fly || sh->n_rin))
    rc = wsp__wait_step(sh, &bo);

  /* 2. The termination sum, serving others until it completes. What a rank
   * has posted is final when it enters; what it has served is not (it keeps
   * serving), nor whether one of its handlers failed, so both are summed
   * once more afterwards. */
  wsp__sum_t *sum = &sh->close_sums[0], *check = &sh->close_sums[1];
  int sum_pending = 0;
  if (rc == WSP_OK && !sh->fatal) {
    uint64_t mine = sh->st.requests_posted;
    sum_pending = 1; /* until it completes (a failed start may have posted) */
    rc = wsp__sum_start(sum, &sh->c, WSP__TAG_SHUFFLE_DONE, &mine, 1);
    int done = 0;
    while (rc == WSP_OK && !sh->fatal) {
      if ((rc = wsp__sum_test(sum, &done)) != WSP_OK) break;
      if (done) {
        sum_pending = 0;
        break;
      }
      rc = wsp__wait_step(sh, &bo);
    }
  }
  /* 3. Response sends complete (their requesters have all they need). */
  while (rc == WSP_OK && !sh->fatal && sh->n_osend) rc = wsp__wait_step(sh, &bo);
  if (rc == WSP_OK && sh->fatal) rc = sh->fatal;
  wsp__stop_thread(sh);
  /* 4. Nothing is in flight any more: the served requests and the handler
   * failures, summed. */
  if (rc == WSP_OK) {
    uint64_t mine[2] = {sh->failed != 0, sh->st.requests_served};
    sum_pending = 1;
    rc = wsp__sum_start(check, &sh->c, WSP__TAG_SHUFFLE_CHECK, mine, 2);
    if (rc == WSP_OK && (rc = wsp__sum_wait(check)) == WSP_OK) sum_pending = 0;
  }
  uint64_t posted = 0, served = 0, failed_ranks = 0;
  if (rc == WSP_OK) {
    posted = sum->val[0];
    failed_ranks = check->val[0];
    served = check->val[1];
  }
  sh->close_sums_pending = sum_pending;

  if (rc == WSP_OK && (sh->n_in || sh->chunk_len))
    rc = wsp__broken(sh, "requests left unserved after termination");
  if (rc == WSP_OK) {
    sh->st.global_requests_posted = posted;
    sh->st.global_requests_served = served;
    if (posted != served)
      rc = wsp__broken(sh, "the ranks posted and served different numbers "
                           "of requests");
  }
  wsp_shuffle_stats_t s;
  wsp__fill_stats(sh, &s); /* before release: mem_current as it ended */
  if (rc == WSP_OK) wsp__release(sh); /* else MPI may still own buffers */
  if (sh->c.mpi != MPI_COMM_NULL) {
    int mrc = MPI_Comm_free(&sh->c.mpi);
    if (mrc != MPI_SUCCESS && rc == WSP_OK)
      rc = wsp__mpi_fail(&sh->c, mrc, "MPI_Comm_free", WSP__WHERE);
    sh->c.mpi = MPI_COMM_NULL;
  }
  sh->state = WSP__ST_CLOSED;
  if (stats) *stats = s;
  if (rc != WSP_OK) return sh->fatal ? wsp__refail(sh) : rc;
  if (sh->failed)
    return wsp__fail(&sh->c, sh->failed, "%s", sh->failed_msg);
  if (failed_ranks)
    return wsp__fail(&sh->c, WSP_ERR_REMOTE,
                     "%s: a handler failed on %llu other rank(s); every "
                     "request was still answered",
                     fn, (unsigned long long)failed_ranks);
  return WSP_OK;
}

int wsp_shuffle_free(wsp_shuffle_t **sh) {
  if (sh == NULL) return wsp__fail(NULL, WSP_ERR_ARG, "wsp_shuffle_free: sh is NULL");
  wsp_shuffle_t *s = *sh;
  if (s == NULL) return WSP_OK;
  if (s->state != WSP__ST_CLOSED)
    return wsp__fail(&s->c, WSP_ERR_ARG,
                     "wsp_shuffle_free: the shuffle is open; close it first "
                     "(wsp_shuffle_close is collective)");
  free(s->peers);
  free(s->rate_buf);
  if (!s->close_sums_pending) free(s->close_sums); /* else MPI may write it */
  free(s);
  *sh = NULL;
  return WSP_OK;
}
