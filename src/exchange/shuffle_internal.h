/*
 * Internal interface of the all-pairs shuffle (src/exchange/shuffle*.c).
 *
 * The pure parts live here so that unit tests can drive them without MPI:
 * the memory shares derived from cfg.mem_limit (wsp__shuffle_limits in shuffle_config.c), the wire
 * format of batches, and the pacing controller (shuffle_pace.c). The engine
 * itself (shuffle.c) owns MPI, buffers and handlers.
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
/* The median of v[0..n-1] (the mean of the two middle values for even n;
 * 0 for n <= 0). Reorders v. */
double wsp__pace_median(double *v, int n);

#endif
