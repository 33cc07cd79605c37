/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Internal interface of the all-pairs shuffle (src/exchange/shuffle*.c).
 *
 * The pure parts come first, so that unit tests can drive them without
 * MPI: the memory shares derived from cfg.mem_limit (wsp__shuffle_limits in
 * shuffle_config.c), the wire format of batches, and the pacing controller
 * (shuffle_pace.c). Then the engine, which owns MPI, buffers and handlers:
 * its state (struct wsp_shuffle) and the functions its files share. The
 * engine is split by concern: shuffle.c (the public API and termination),
 * shuffle_request.c (the requester), shuffle_serve.c (the responder) and
 * shuffle_pass.c (a pass, the waits, the progress thread).
 */
#ifndef WSP_SHUFFLE_INTERNAL_H
#define WSP_SHUFFLE_INTERNAL_H

#include "../core/wsp_internal.h"

/* ---- wire format ----
 * Both kinds of message are a 16-byte header followed by `count` entries of
 * (u64 length, payload). Integers are in the host's byte order: ranks are
 * assumed to share one (as MPI_BYTE transfers imply).
 *   request batch:  u64 seq | u32 count | f32 rate  | entries
 *   response chunk: u64 seq | u32 count | u32 flags | entries
 * `seq` numbers the request batches from one rank to one peer (0, 1, ...);
 * a response chunk carries the seq of the batch it answers. A batch's
 * responses may span several chunks; the last one has WSP__CHUNK_LAST.
 * `rate` is the requester's adaptive pacing rate (bytes of cost per second,
 * an IEEE single) when it sent the batch; 0 in fixed mode, in slow start,
 * and when pacing has not held it back within WSP__PACE_LIMITED_S. It lets
 * requesters compare their rates (shuffle_pace.c, "Fairness"). */
enum {
  WSP__HDR_BYTES = 16,
  WSP__ENTRY_BYTES = 8,
  WSP__CHUNK_LAST = 1
};

/* Response chunks larger than the piece size (wsp_shuffle_t.piece) travel
 * as an announcement, WSP__ANN_BYTES long (the chunk's seq and length), and
 * then the chunk's bytes in pieces of at most the piece size, all with the
 * response tag, back to back: the MPI keeps their order, and the requester
 * puts them together in one buffer whose size the announcement gave
 * (shuffle_request.c). A whole chunk is at least WSP__HDR_BYTES +
 * WSP__ENTRY_BYTES long, so a message of WSP__ANN_BYTES is an announcement.
 * Why: a message above the MPI's eager limit waits for a rendezvous answer
 * that queues behind the requester's own responses, and that held the
 * shuffle well below the link under both MPIs' defaults (docs/shuffle.md,
 * configuration; docs/results/shuffle.md, "Responses in pieces").
 *
 * A chunk's buffer starts with WSP__CHUNK_PREFIX bytes that are not the
 * chunk: the count of its sends still in flight (8 bytes; the buffer is
 * freed when it reaches 0), then room for the announcement. */
enum {
  WSP__ANN_BYTES = 16,
  WSP__CHUNK_PREFIX = 8 + WSP__ANN_BYTES,
  /* The piece size when neither the configuration nor a network map gives
   * one: small enough to go eagerly under both MPIs' defaults over TCP,
   * whose eager limits docs/shuffle.md gives. */
  WSP__PIECE_DEFAULT = 16 << 10,
  WSP__PIECE_MIN = 1 << 10
};

/* ---- memory shares ----
 * cfg.mem_limit M is split so that the parts can never add up to more than
 * M (docs/shuffle.md proves each bound):
 *   backlog   M/4  requests posted but not sent (batches being filled or
 *                  waiting for the window); a post waits while it would
 *                  exceed this
 *   inflight  M/4  requests sent and not yet answered (kept: the response
 *                  handler gets the request back)
 *   intake    M/4  requests received from other ranks, not yet answered;
 *                  bounded because every requester keeps at most peer_req
 *                  bytes unanswered per peer and peer_req = intake/(p-1)
 *   resp_out  M/8  responses being built or sent; the next request is only
 *                  served while at most half of it is used, and one reply
 *                  (<= max_response) can at most double a chunk
 *   resp_in   rest responses received and not yet handled; a probed chunk
 *                  is only received while it fits (or nothing is held)
 * The largest request follows from peer_req, the largest response from
 * resp_out: larger ones are refused, since no bound would hold for them. */
typedef struct wsp__shuffle_limits {
  size_t mem, backlog, inflight, intake, resp_out, resp_in;
  size_t peer_req;     /* wire bytes of requests unanswered per peer */
  size_t max_request;  /* payload bytes */
  size_t max_response; /* payload bytes */
  size_t chunk;        /* a response chunk is sent once it holds this many */
} wsp__shuffle_limits_t;

/* Smallest mem_limit accepted, and the smallest request/response payload
 * limit a configuration must leave (else it is refused as too small). */
#define WSP__SHUFFLE_MIN_MEM ((size_t)64 << 10)
#define WSP__SHUFFLE_MIN_PAYLOAD ((size_t)64)

/* wsp_shuffle_open's checks of a configuration (WSP_ERR_ARG naming the
 * field), and a fingerprint of the fields all ranks must agree on. */
int wsp__shuffle_config_check(const wsp_shuffle_config_t *cfg);
/* The testing aid WSP_SHUFFLE_FAULT_NOMEM (docs/env.md) into *n, left
 * alone when unset; WSP_ERR_CONFIG naming it when bad (1 included). */
int wsp__shuffle_fault_nomem(const wsp_comm_t *comm, size_t *n);
uint64_t wsp__shuffle_config_fingerprint(const wsp_shuffle_config_t *cfg);

/* Fills *l for p ranks; WSP_ERR_ARG (message naming mem_limit) when mem is
 * too small to leave WSP__SHUFFLE_MIN_PAYLOAD per request and response. */
int wsp__shuffle_limits(size_t mem, int p, size_t batch_bytes,
                        wsp__shuffle_limits_t *l);

/* The capacity to grow a buffer of capacity `cap` to so that it holds
 * `need` bytes: doubling (from 256), at least `need`, and at most `max`
 * when need <= max (so the result is <= max(max, 2 need)). Batches and
 * chunks grow this way; the accounting counts capacity. */
size_t wsp__grow_cap(size_t cap, size_t need, size_t max);

/* Constants of the adaptive controller (shuffle_pace.c). */
#define WSP__PACE_HISTORY 8      /* intervals of delivered rate kept */
#define WSP__PACE_MIN_ACKS 8     /* answers per interval at least ... */
#define WSP__PACE_MIN_IV 0.2     /* ... and seconds at least ... */
#define WSP__PACE_MIN_IV_RTTS 2  /* ... and unloaded round trips at least */
#define WSP__PACE_D_GAIN 4.0     /* 1/weight of an interval in smoothed D */
#define WSP__PACE_STALL_RTTS 16  /* no answers for this long: a stall */
#define WSP__PACE_STALL_MIN 2.0  /* (at least this many seconds) */
#define WSP__PACE_Q_GAIN 2.0     /* 1/weight of an interval in the smoothed queue */
#define WSP__PACE_SS_LEVEL 8.0   /* slow start ends once the queue passes this many batches */
#define WSP__PACE_MD 0.95        /* the guard: decrease to this x delivered ... */
#define WSP__PACE_MD_DEEP 0.8    /* ... and to no less (nor does steering) */
#define WSP__PACE_TARGET 30.0    /* paced: steer the standing queue to this many batches */
#define WSP__PACE_TAU 4.0        /* ... within this many intervals ... */
#define WSP__PACE_STEP 0.1       /* ... raising the rate by at most this fraction */
#define WSP__PACE_AI 0.05        /* ... and at least this fraction x how far below */
#define WSP__PACE_OVER 2.0       /* queue > this x the target: decrease to MD_DEEP x D */
#define WSP__PACE_DRAIN 0.5      /* still draining: q fell by > this */
#define WSP__PACE_HOLD_MAX 1     /* intervals of holding at most */
#define WSP__PACE_DRAIN_IV 4.0   /* drain the excess within this many intervals */
#define WSP__PACE_WIN_GAIN 2.0   /* paced: in flight <= this x rate x srtt */
#define WSP__PACE_WIN_MIN 4.0    /* ... or this many batches */
#define WSP__PACE_START_S 0.01   /* rate before the first measurement */
#define WSP__PACE_FLOOR_S 10.0   /* slowest rate: one batch per this */
#define WSP__PACE_CAP 2.0        /* rate <= this x recent delivered rate */
#define WSP__PACE_GAIN 8.0       /* 1/weight of the moving averages */
#define WSP__PACE_FAIR 0.9       /* below this x the peers' median rate: catch up */
#define WSP__PACE_PEER_AGE 2.0   /* s: older peer rates are not counted */
#define WSP__PACE_PEER_EVERY 0.1 /* s: the median is recomputed this often */
#define WSP__PACE_LIMITED_S 1.0  /* s: held back by pacing this recently, or no report */

/* ---- pacing controller (shuffle_pace.c) ----
 * Decides whether one more batch may enter the network. Both modes pace
 * with a token bucket: fixed mode at cfg.rate, adaptive mode at a rate it
 * steers so that the standing queue stays near a target (see
 * shuffle_pace.c for the rule and why a target). cfg.window caps the
 * volume in flight in both. Costs are bytes of requests plus (expected)
 * responses of a batch. */
typedef struct wsp__pace {
  wsp_shuffle_mode_t mode;
  double batch;      /* cfg.batch_bytes */
  double window_max; /* cfg.window */
  double rate;       /* bytes/s: cfg.rate (fixed) or the adaptive rate */
  double cwnd;       /* adaptive slow start: the window (bytes of cost) */
  double good;       /* delivered rate before the last decrease */
  double dsmooth;    /* delivered rate, smoothed over intervals */
  double rate_lo_seen, rate_hi_seen;
  int slow_start;
  double avg_cost; /* smoothed cost of an answered batch; 0 before any */
  double srtt;     /* smoothed round-trip time of a batch (s) */
  double base;     /* smallest round-trip time per byte of cost (s/byte) */
  /* The current interval (adaptive): start, answered cost and answers,
   * smallest rtt per byte of cost in it. */
  double iv_start, iv_acked, iv_smin;
  int iv_acks;
  /* The previous intervals: standing queue (bytes, smoothed over
   * intervals), whether it is known, the lowest since the last decrease,
   * recent delivered rates (a ring), and a hold after a decrease. */
  double prev_q, floor;
  int have_prev_q, have_floor, hold;
  double delivered[WSP__PACE_HISTORY];
  int ndelivered;
  /* The median of the other requesters' rates (0: unknown), from the
   * engine (wsp__pace_peers). */
  double peer_ref;
  /* The token bucket. */
  double tokens, t_last;
  uint64_t n_increase, n_decrease, n_stall, n_intervals;
  /* Increase steps that moved towards the peers' median instead of
   * probing (up or down), and slow starts ended at that median. */
  uint64_t n_toward_median, n_joined;
  /* Slow starts ended by the standing queue (the others end by joining). */
  uint64_t n_exited;
} wsp__pace_t;

int wsp__pace_init(wsp__pace_t *p, wsp_shuffle_mode_t mode, double rate,
                   double batch, double window_max, double now);
/* The pacing rate in force (bytes of cost per second). */
double wsp__pace_rate(const wsp__pace_t *p);
/* The rate a request batch reports to its responder (wire format): the
 * adaptive rate once paced, 0 in slow start and in fixed mode. */
double wsp__pace_report(const wsp__pace_t *p);
/* The cap on the volume in flight (cfg.window). */
double wsp__pace_window(const wsp__pace_t *p);
/* One batch's cost: max(batch, smoothed cost of answered batches). */
double wsp__pace_unit(const wsp__pace_t *p);
/* 1 if a batch may be sent now with `inflight` bytes of cost in flight to
 * network peers. Advances the token bucket and, in adaptive mode, ends an
 * interval that has lasted too long without answers. */
int wsp__pace_may_send(wsp__pace_t *p, double inflight, double now);
/* A batch of (expected) `cost` was sent. */
void wsp__pace_sent(wsp__pace_t *p, double cost);
/* A batch of actual cost `cost` to a network peer was answered `rtt`
 * seconds after it was sent; `inflight` is what is still in flight (it
 * excluded), `now` the time of the answer. */
void wsp__pace_ack(wsp__pace_t *p, double rtt, double cost, double inflight,
                   double now);
/* The median of the rates other requesters last reported (0: none known).
 * Where the adaptive controller would increase, it first moves towards
 * [WSP__PACE_FAIR, 1/WSP__PACE_FAIR] x the median; in slow start it stops
 * once its rate reaches the median. */
void wsp__pace_peers(wsp__pace_t *p, double median);

/* ======================================================================
 * The engine (shuffle.c, shuffle_request.c, shuffle_serve.c,
 * shuffle_pass.c). Nothing below is used by the unit tests.
 * ====================================================================== */

#include <string.h>
#ifndef WSP_SIMGRID
#include <pthread.h>
#endif

enum { WSP__ST_OPEN, WSP__ST_CLOSING, WSP__ST_CLOSED };
/* Which handler is running (sh->in_handler). */
enum { WSP__IN_NONE, WSP__IN_REQUEST, WSP__IN_RESPONSE };

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

/* A message being received: a response chunk, or the first member of a
 * request batch (wsp__ibatch_t). Both kinds are probed, received, tested
 * and queued per peer the same way (shuffle_pass.c). */
typedef struct wsp__imsg {
  struct wsp__imsg *next;
  unsigned char *buf;
  size_t len;
  int received;
  /* The buffer is not the message's own: a batch to this rank itself is
   * served from the requester's buffer, and a piece of a response chunk is
   * received into its assembly's; it is neither freed nor counted in a
   * memory share with the message. */
  int borrowed;
  /* A response chunk sent in pieces (WSP__ANN_BYTES): an assembly holds
   * the chunk's buffer (len bytes, counted in the share) and no request;
   * the pieces that fill it follow it on the queue, `posted` bytes of them
   * so far, each a message of its own. */
  enum { WSP__MSG_WHOLE = 0, WSP__MSG_ASSEMBLY, WSP__MSG_PIECE } kind;
  size_t posted;
  uint64_t seq;
  MPI_Request req;
} wsp__imsg_t;

/* A queue of messages from one peer, in the order they were probed (MPI
 * keeps the order of messages between two ranks, so also sent). */
typedef struct wsp__imsgq {
  wsp__imsg_t *head, *tail;
} wsp__imsgq_t;

static inline void wsp__imsgq_push(wsp__imsgq_t *q, wsp__imsg_t *m) {
  m->next = NULL;
  if (q->tail)
    q->tail->next = m;
  else
    q->head = m;
  q->tail = m;
}

static inline wsp__imsg_t *wsp__imsgq_pop(wsp__imsgq_t *q) {
  wsp__imsg_t *m = q->head;
  if (m) {
    q->head = m->next;
    if (q->head == NULL) q->tail = NULL;
    m->next = NULL;
  }
  return m;
}

/* A request batch received (or, for self, borrowing the obatch's buffer).
 * The message comes first, so that a wsp__imsg_t of the request queue is
 * its batch. */
typedef struct wsp__ibatch {
  wsp__imsg_t m;
  int parsed;
  uint64_t seq;
  uint32_t count, done;
  size_t cursor;
} wsp__ibatch_t;

typedef struct wsp__peer {
  wsp__obatch_t *open;                    /* being filled */
  wsp__obatch_t *fly_head, *fly_tail;     /* sent, not fully answered */
  size_t fly_req;  /* request bytes unanswered */
  double fly_cost; /* their cost */
  uint64_t next_seq, expect_seq;
  wsp__imsgq_t in;  /* received request batches (wsp__ibatch_t), in order */
  wsp__imsgq_t rin; /* response chunks, in order */
  int local; /* on this node: not paced */
  unsigned stamp; /* == the shuffle's stamp: skipped in this send pass */
  /* The pacing rate this peer reported in its last request batch (0:
   * none), and when it arrived (MPI_Wtime). */
  double rate_seen, rate_seen_t;
  /* Responses in pieces from this peer: the assembly whose pieces are
   * still arriving (NULL: none), and an announcement received but not yet
   * let in because the resp_in share was full (ann_len > 0). */
  struct wsp__imsg *assembling;
  uint64_t ann_len, ann_seq;
  /* The announced chunk comes over the lanes (wsp__xport_takes), in one
   * transfer whose receive is not posted yet (it waits for room or
   * memory); what this peer sends after it waits in MPI until then. */
  int lanes_wait;
} wsp__peer_t;

/* A reply handle. Each request handler call gets the next of
 * WSP__REPLY_SLOTS handles, stamped with the call's number, so a handle
 * kept from an earlier call is recognised (its stamp is not the current
 * call's) unless exactly a multiple of WSP__REPLY_SLOTS calls lie between
 * (then it is the current call's handle again). The handles live as long as
 * the shuffle's handle, so a stale one used after close is still safe to
 * read. */
#define WSP__REPLY_SLOTS 1024
/* Most requests or responses one batched handler call gets: enough that
 * an interpreter's per-call cost is spread thin, small enough for the
 * response side's stack array. */
#define WSP__RUN_MAX 128
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
  size_t n_lanes_wait; /* peers with lanes_wait */
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
  unsigned char **obuf; /* the chunk buffer each send is from (shared by pieces) */
  size_t *ocap;         /* its capacity, given back when its last send completes */
  size_t n_osend, cap_osend;
  /* The piece size, and the sends one chunk needs at most (its
   * announcement and pieces): serving reserves that many slots. */
  size_t piece, osend_per_chunk;
  int *idx; /* MPI_Testsome's indices (cap_osend of them too) */
  /* wsp__test_receives' arrays (shuffle_pass.c). */
  MPI_Request *tr_req;
  int **tr_flag;
  int *tr_idx;
  size_t cap_tr;

  /* Batched handlers (wsp_shuffle_open_batched; batched = 1, h unused):
   * the requests handed to the last on_requests call, from batch run_ib,
   * whose responses serving copies into chunks one by one, with the room
   * checks of a single reply (run_next of run_n copied). The handler is
   * called again only once all are copied, so its response memory is only
   * needed until then. */
  wsp_shuffle_batch_handlers_t hb;
  int batched;
  wsp_shuffle_item_t *run;
  size_t run_n, run_next;
  const struct wsp__ibatch *run_ib;

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

/* ---- the wire format's integers (host byte order, unaligned) ---- */
static inline uint64_t wsp__get64(const unsigned char *p) {
  uint64_t v;
  memcpy(&v, p, sizeof v);
  return v;
}
static inline uint32_t wsp__get32(const unsigned char *p) {
  uint32_t v;
  memcpy(&v, p, sizeof v);
  return v;
}
static inline void wsp__put64(unsigned char *p, uint64_t v) {
  memcpy(p, &v, sizeof v);
}
static inline void wsp__put_hdr(unsigned char *b, uint64_t seq, uint32_t count,
                                uint32_t flags) {
  wsp__put64(b, seq);
  memcpy(b + 8, &count, sizeof count);
  memcpy(b + 12, &flags, sizeof flags);
}

/* ---- what every part uses (shuffle_pass.c) ---- */

/* The shuffle's recursive mutex, taken only when a progress thread runs. */
void wsp__shuffle_lock(wsp_shuffle_t *sh);
void wsp__shuffle_unlock(wsp_shuffle_t *sh);

/* Updates the peaks of the memory accounting after a share grew. */
void wsp__shuffle_note_peaks(wsp_shuffle_t *sh);

/* Records a fatal error (MPI failure or broken invariant; rc's message is
 * wsp_last_error()): every later call returns it. Returns rc. */
int wsp__shuffle_fatal(wsp_shuffle_t *sh, int rc);
/* A broken invariant ("wsp_shuffle: <what>"), fatal. */
int wsp__shuffle_broken(wsp_shuffle_t *sh, const char *what);
/* The fatal error again, recorded in the calling thread (the progress
 * thread may have recorded it). */
int wsp__shuffle_refail(wsp_shuffle_t *sh);
/* A local failure that does not stop the protocol (rc's message is
 * wsp_last_error()): reported at close. */
void wsp__shuffle_failed(wsp_shuffle_t *sh, int rc);
/* A handler returned hrc != 0 while handling a `kind` ("request" or
 * "response") from rank `rank`: a local failure. */
void wsp__shuffle_handler_failed(wsp_shuffle_t *sh, const char *kind, int hrc,
                                 int rank);

/* Allocations inside a pass, which WSP_SHUFFLE_FAULT_NOMEM may make fail.
 * Running out of memory there is back-pressure, not an error: the caller
 * leaves what needed the memory where it is (a message stays queued in
 * MPI, a batch stays unserved), counts a wait in stats.nomem_waits
 * (wsp__shuffle_nomem_wait), and a later pass tries again once completed
 * sends and handed-over responses have given memory back (finding those
 * completions allocates nothing, or falls back to a way that does not).
 * Failing instead would leave the other ranks waiting in close for answers
 * this rank will never give. */
void *wsp__shuffle_malloc(wsp_shuffle_t *sh, size_t n);
void *wsp__shuffle_calloc(wsp_shuffle_t *sh, size_t n);
void *wsp__shuffle_realloc(wsp_shuffle_t *sh, void *p, size_t n);
static inline void wsp__shuffle_nomem_wait(wsp_shuffle_t *sh) {
  sh->st.nomem_waits++;
}

/* One kind of message a pass receives, and where it goes: queue elements
 * of `elem` bytes (a wsp__imsg_t first), queued on the source's queue at
 * byte offset `queue` of wsp__peer_t, counted in *queued, their buffers in
 * the memory share *held, which a message may only join while the result
 * stays within `limit` or the share is empty (SIZE_MAX: no limit). */
typedef struct wsp__inbox {
  int tag;
  size_t elem, queue;
  size_t *queued, *held, limit;
  int pieces; /* messages may be announcements and pieces (responses) */
} wsp__inbox_t;

/* Receives what has arrived of one kind: MPI_Iprobe on any source, a
 * buffer of exactly the message's size, an MPI_Irecv into it, the message
 * queued on its source's queue. Stops after WSP__PROBES_PER_PASS messages,
 * when nothing more has arrived, when the share is full or when memory
 * runs out (the message then stays queued in MPI, and the pieces of the
 * response chunks being assembled, which free the share, are received by
 * their sources). */
int wsp__shuffle_receive(wsp_shuffle_t *sh, const wsp__inbox_t *box,
                         int *progress);

/* ---- the pass and the waits (shuffle_pass.c) ---- */

/* One pass (shuffle_pass.c lists its steps). *progress: something moved. */
int wsp__shuffle_pass(wsp_shuffle_t *sh, int *progress);
/* The back-off a waiting loop of the shuffle starts with. */
void wsp__shuffle_backoff_init(wsp_shuffle_t *sh, wsp__backoff_t *bo);
/* Called with the lock held: a pass, then the back-off outside the lock.
 * for_memory: a post waits for memory for its request (shuffle_pass.c says
 * when its idle time counts towards cfg.timeout). */
int wsp__shuffle_wait_step(wsp_shuffle_t *sh, wsp__backoff_t *bo, int for_memory);
/* Starts the progress thread (cfg.progress_thread); 0 if it could not. */
int wsp__shuffle_thread_start(wsp_shuffle_t *sh);
/* Called with the lock held: stops the thread, if one runs, and joins it;
 * from then on there is one thread and no locking. */
void wsp__shuffle_thread_stop(wsp_shuffle_t *sh);

/* ---- the requester (shuffle_request.c) ---- */

/* One send of the chunk buffer `buf` (capacity cap) completed: its count
 * of sends in flight drops, and at 0 it is freed and its capacity given
 * back to the resp_out share (shuffle_serve.c). */
void wsp__shuffle_chunk_sent(wsp_shuffle_t *sh, unsigned char *buf, size_t cap);

/* Readies dest's open batch for a request of `bytes`: seals it first if
 * the request would overfill it. Returns 1 if the request then fits the
 * backlog (its memory share and its volume limit), 0 if a post must wait;
 * *cost is the request's expected cost. */
int wsp__shuffle_batch_room(wsp_shuffle_t *sh, int dest, size_t bytes,
                            double *cost);
/* Appends the request to dest's open batch (starting one if needed) and
 * seals the batch when it is full. WSP_ERR_NOMEM (no message recorded)
 * leaves everything as it was. */
int wsp__shuffle_batch_add(wsp_shuffle_t *sh, int dest, const void *data,
                           size_t bytes, double cost);
/* Hands the responses of one chunk from `src` to on_response. */
int wsp__shuffle_dispatch(wsp_shuffle_t *sh, int src, const unsigned char *buf,
                          size_t len, double now);
/* Steps of a pass: receive and hand over response chunks; seal batches
 * that waited long enough; send sealed batches. */
int wsp__shuffle_pass_responses(wsp_shuffle_t *sh, double now, int *progress);
void wsp__shuffle_pass_seal(wsp_shuffle_t *sh, double now);
int wsp__shuffle_pass_send(wsp_shuffle_t *sh, double now, int *progress);

/* ---- the responder (shuffle_serve.c) ---- */

/* Steps of a pass: receive request batches; free response chunks whose
 * send completed; serve received batches. */
int wsp__shuffle_pass_requests(wsp_shuffle_t *sh, int *progress);
int wsp__shuffle_pass_sends(wsp_shuffle_t *sh, int *progress);
int wsp__shuffle_pass_serve(wsp_shuffle_t *sh, double now, int *progress);
/* Appends a reply of `bytes` to the chunk being built (the caller checked
 * the reply). WSP_ERR_NOMEM (no message recorded) if the chunk cannot
 * grow. */
int wsp__shuffle_reply_put(wsp_shuffle_t *sh, const void *data, size_t bytes);

#endif
