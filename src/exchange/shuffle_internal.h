/*
 * Internal interface of the all-pairs shuffle (src/exchange/shuffle*.c).
 *
 * The pure parts live here so that unit tests can drive them without MPI:
 * the memory shares derived from cfg.mem_limit (shuffle_limits.c), the wire
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
 *   request batch:  u64 seq | u32 count | u32 0     | entries
 *   response chunk: u64 seq | u32 count | u32 flags | entries
 * `seq` numbers the request batches from one rank to one peer (0, 1, ...);
 * a response chunk carries the seq of the batch it answers. A batch's
 * responses may span several chunks; the last one has WSP__CHUNK_LAST. */
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

/* ---- pacing controller (shuffle_pace.c) ----
 * Decides whether one more batch may enter the network. Adaptive mode is a
 * delay-based window (see shuffle_pace.c for the state machine and why it
 * settles near the bottleneck); fixed mode is a token bucket at cfg.rate.
 * Costs are bytes of requests plus (expected) responses of a batch. */
typedef struct wsp__pace {
  wsp_shuffle_mode_t mode;
  double batch;      /* cfg.batch_bytes */
  double window_max; /* cfg.window */
  double rate;       /* fixed mode: bytes/s */
  double cwnd;       /* adaptive: the window (bytes of cost) */
  double cwnd_lo_seen, cwnd_hi_seen;
  int slow_start;
  double avg_cost; /* smoothed cost of an answered batch; 0 before any */
  double srtt;     /* smoothed round-trip time of a batch (s) */
  /* The current round: one window's worth of answered cost. */
  double round_target, round_acked, round_qmin, round_xmin;
  double round_w; /* the in-flight volume of the round's best sample */
  int round_samples;
  /* Fixed mode: the token bucket. */
  double tokens, t_last;
  /* Smallest round-trip time per byte of cost seen (s/byte; 0 = none). */
  double base_min;
  uint64_t n_increase, n_decrease, n_halve;
} wsp__pace_t;

/* Thresholds of the adaptive controller, in units of one batch's cost (the
 * larger of cfg.batch_bytes and the smoothed cost of answered batches). */
#define WSP__PACE_ALPHA 0.5   /* queued below this: grow */
#define WSP__PACE_BETA 1.5    /* queued above this: shrink by one step */
#define WSP__PACE_SEVERE 2.0  /* rtt > this x what our window explains: halve */
#define WSP__PACE_STEP 0.5    /* additive step */
#define WSP__PACE_TARGET 1.0  /* queue aimed at after a decrease */
#define WSP__PACE_GAIN 8.0    /* 1/weight of the moving averages */

int wsp__pace_init(wsp__pace_t *p, wsp_shuffle_mode_t mode, double rate,
                   double batch, double window_max, double now);
/* The window in force (adaptive: cwnd; fixed: window_max). */
double wsp__pace_window(const wsp__pace_t *p);
/* The unit of the thresholds: max(batch, smoothed batch cost). */
double wsp__pace_unit(const wsp__pace_t *p);
/* 1 if a batch may be sent now with `inflight` bytes of cost in flight to
 * network peers. Updates the token bucket's clock. */
int wsp__pace_may_send(wsp__pace_t *p, double inflight, double now);
/* A batch of (expected) `cost` was sent. */
void wsp__pace_sent(wsp__pace_t *p, double cost);
/* A batch of actual cost `cost` to a network peer was answered `rtt`
 * seconds after it was sent, when `inflight` bytes of cost (itself
 * included) were in flight to network peers. */
void wsp__pace_ack(wsp__pace_t *p, double rtt, double cost, double inflight);

#endif
