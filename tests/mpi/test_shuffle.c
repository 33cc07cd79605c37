/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The all-pairs shuffle against an independent reference.
 *
 * Request number k that rank s makes for rank d is a pure function of
 * (seed, s, d, k): its size (zero 10% of the time, else at least 8 bytes,
 * now and then large) and every byte; its first 8 bytes encode k. The
 * response to a request is a pure function of the request's bytes and the
 * responder's rank. So without trusting the engine:
 *  - a responder decodes k, regenerates request k of s and compares every
 *    byte, and flags a k it has seen before (answered twice);
 *  - a requester records the order in which its posts to d returned (a
 *    follow-up posted by a handler while an outer post waits returns, and
 *    is queued, first); the j-th response from d must carry exactly the
 *    j-th request posted to d and the response d must give to it;
 *  - after close, each rank's count of requests served from s must equal
 *    s's count of requests posted to it (an MPI_Alltoall of the counts),
 *    and every posted request must have had exactly one response.
 * Phases: close with no traffic; skewed random traffic (one rank posts 100x
 * more, random sleeps in the posting loop and in handlers, requests and
 * responses of zero bytes, large ones past the eager limits) with follow-up
 * requests posted from the response handler; the same with a small
 * mem_limit, where posts must wait and the memory bound is asserted from the
 * engine's accounting; fixed-rate mode; a progress thread when the MPI
 * provides MPI_THREAD_MULTIPLE; a peer that does not serve for a while,
 * where the posts to it must wait for room; then bad arguments, each of which must give
 * WSP_ERR_ARG (or the documented code) with a message naming it, no hang,
 * and a handler failure that every rank learns about.
 *
 * Phases not part of all: pieces (responses on both sides of the piece
 * size into a small response share, on a communicator with a time limit),
 * unusable (close with a progress thread after a timeout made the
 * communicator unusable), post-nomem and post-nomem-serving (a post that no
 * memory can hold, with nothing held, and with memory held that only
 * another rank can give back).
 *
 * With --lanes 1 the pieces phase runs twice (without and with a progress
 * thread) on a communicator whose transfers between nodes take lanes
 * (WSP_TRANSPORT=lanes, each rank a node of its own: tests/CMakeLists.txt),
 * and fails unless every large chunk went over the shuffle's lanes, in one
 * transfer each, instead of in pieces.
 *
 * usage: test_shuffle [--requests N] [--lanes 0|1] [--phase all|basic|args|pieces|
 *                                             unusable|post-nomem|post-nomem-serving]
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pattern.h"
#include "wirespeed.h"
#include "mpi_check.h"


/* ---- the reference: requests and responses as pure functions ---- */

typedef struct traffic {
  uint64_t seed;
  size_t max_req, max_resp; /* the usual sizes */
  size_t big_req, big_resp; /* the occasional large one (0: never) */
} traffic_t;

static uint64_t mix(uint64_t a, uint64_t b, uint64_t c, uint64_t d) {
  uint64_t s = a ^ (b * 0x9E3779B97F4A7C15ULL) ^ (c * 0xC2B2AE3D27D4EB4FULL) ^
               (d * 0x165667B19E3779F9ULL);
  return wsp_splitmix64(&s);
}

/* Zero 10% of the time, else in [lo, usual + lo), now and then near big. */
static size_t draw_size(uint64_t h, size_t lo, size_t usual, size_t big) {
  if (h % 10 == 0) return 0;
  if (big && h % 97 == 1) return big - (size_t)((h >> 20) % 64);
  return lo + (size_t)((h >> 8) % (usual ? usual : 1));
}

#define KEY_BYTES 8 /* a non-empty request starts with its encoded k */

static void fill(uint64_t h, unsigned char *buf, size_t n) {
  uint64_t s = h;
  for (size_t i = 0; i < n; i += 8) {
    uint64_t v = wsp_splitmix64(&s);
    size_t m = n - i < 8 ? n - i : 8;
    memcpy(buf + i, &v, m);
  }
}

static uint64_t key_mask(const traffic_t *t, int src, int dst) {
  return mix(t->seed, (uint64_t)src, (uint64_t)dst, 0xfeed);
}

/* Request k from src to dst: size and content. buf has room for big_req. */
static size_t make_request(const traffic_t *t, int src, int dst, uint64_t k,
                           unsigned char *buf) {
  uint64_t h = mix(t->seed, (uint64_t)src, (uint64_t)dst, k);
  size_t n = draw_size(h, KEY_BYTES, t->max_req, t->big_req);
  if (n == 0) return 0;
  uint64_t key = k ^ key_mask(t, src, dst);
  memcpy(buf, &key, KEY_BYTES);
  fill(h ^ 0xabcdef, buf + KEY_BYTES, n - KEY_BYTES);
  return n;
}

static uint64_t hash_bytes(const unsigned char *b, size_t n) {
  uint64_t h = 1469598103934665603ULL;
  for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 1099511628211ULL;
  return h ^ n;
}

/* The response responder `who` gives to a request. */
static size_t make_response(const traffic_t *t, int who, const unsigned char *req,
                            size_t n, unsigned char *buf) {
  uint64_t h = mix(t->seed, hash_bytes(req, n), (uint64_t)who, 77);
  size_t m = draw_size(h, 1, t->max_resp, t->big_resp);
  fill(h ^ 0x12345, buf, m);
  return m;
}

/* ---- the test's handlers ---- */

typedef struct ctx {
  traffic_t t;
  wsp_shuffle_t *sh;
  uint64_t *posted;   /* per destination: requests made (indices taken) */
  uint64_t *answered; /* per destination: responses handled */
  uint64_t *served;   /* per source */
  uint64_t **order;   /* per destination: k of each post, in return order */
  uint64_t *norder, *caporder;
  unsigned char **seen; /* per source: k already served */
  uint64_t *capseen;
  uint64_t *empty_served; /* per source: zero-byte requests served */
  unsigned char *a, *b; /* scratch of the handlers */
  unsigned char *top;   /* the posting loop's request: handlers run while a
                           post waits, so they must not share it */
  int in_handler;
  /* With a progress thread, handlers run on it while the main thread posts:
   * a response may be handled before the main thread has seen its post
   * return. There are no follow-ups then, so the j-th response from d
   * answers request j, and handlers read nothing the main thread writes. */
  int threaded;
  uint64_t rng;
  long followups; /* follow-up posts the response handler may still make */
  long again;     /* follow-ups refused with WSP_ERR_AGAIN */
  long nomem_posts; /* posts refused with WSP_ERR_NOMEM, posted again */
  int sleepy;     /* random short sleeps in handlers */
  int skip_empty_reply; /* answer empty responses by not replying */
  int fail_in;    /* 1: on_request fails once, 2: on_response fails once */
  wsp_shuffle_reply_t *stale; /* a reply context kept past its handler */
  int stale_tried; /* the kept context was used in a later handler call */
  int post_in_request; /* try a post from a request handler (must fail) */
  int saw_post_refused;
  unsigned char *run; /* batched: the responses of the last on_requests call */
  size_t cap_run;
  long batched_calls;
  /* A batched request handler failed somewhere: the requests it was given
   * are answered with empty responses. */
  int empty_ok;
} ctx_t;

static void maybe_sleep(ctx_t *c) {
  if (!c->sleepy || wsp_splitmix64(&c->rng) % 64) return;
  struct timespec ts = {0, (long)(wsp_splitmix64(&c->rng) % 200) * 1000L};
  nanosleep(&ts, NULL);
}

static int post_next(ctx_t *c, int dst) {
  unsigned char *buf = c->in_handler ? c->a : c->top;
  /* The index is taken before posting: a follow-up posted by a handler
   * while this post waits gets the next one. */
  uint64_t k = c->posted[dst]++;
  size_t n = make_request(&c->t, rank, dst, k, buf);
  int rc = wsp_shuffle_post(c->sh, dst, n ? buf : NULL, n);
  /* Without memory while the shuffle holds none it could give back
   * (WSP_SHUFFLE_FAULT_NOMEM), a post outside handlers returns
   * WSP_ERR_NOMEM and posts nothing: the same request is posted again. */
  for (int tries = 0; rc == WSP_ERR_NOMEM && !c->in_handler && tries < 1000; tries++) {
    c->nomem_posts++;
    rc = wsp_shuffle_post(c->sh, dst, n ? buf : NULL, n);
  }
  /* A follow-up refused for want of memory was not posted: its index is
   * free again (no post can have run inside a handler's post). */
  if (rc == WSP_ERR_AGAIN && c->in_handler) c->posted[dst]--;
  if (rc != WSP_OK) return rc; /* k stays unused */
  if (c->norder[dst] == c->caporder[dst]) {
    c->caporder[dst] = c->caporder[dst] ? 2 * c->caporder[dst] : 64;
    c->order[dst] = realloc(c->order[dst], c->caporder[dst] * sizeof **c->order);
    if (c->order[dst] == NULL) MPI_Abort(MPI_COMM_WORLD, 2);
  }
  c->order[dst][c->norder[dst]++] = k;
  return rc;
}

/* Checks one request against the reference and makes its response in
 * c->b; returns the response's size. */
static size_t serve_request(ctx_t *c, int src, const void *req, size_t n) {
  c->served[src]++;
  CHECK((n == 0) == (req == NULL), "request pointer vs size");
  if (n == 0) {
    c->empty_served[src]++;
  } else if (n < KEY_BYTES) {
    CHECK(0, "a %zu-byte request from %d (none is made)", n, src);
  } else {
    uint64_t key;
    memcpy(&key, req, KEY_BYTES);
    uint64_t k = key ^ key_mask(&c->t, src, rank);
    size_t want = k < (1u << 30) ? make_request(&c->t, src, rank, k, c->b) : 0;
    CHECK(n == want && memcmp(req, c->b, n) == 0,
          "request from %d: %zu bytes with key %llu does not match request "
          "%llu of %zu bytes", src, n, (unsigned long long)key,
          (unsigned long long)k, want);
    if (n == want) {
      if (k >= c->capseen[src]) {
        uint64_t cap = c->capseen[src] ? c->capseen[src] : 64;
        while (cap <= k) cap *= 2;
        c->seen[src] = realloc(c->seen[src], cap);
        if (c->seen[src] == NULL) MPI_Abort(MPI_COMM_WORLD, 2);
        memset(c->seen[src] + c->capseen[src], 0, cap - c->capseen[src]);
        c->capseen[src] = cap;
      }
      CHECK(!c->seen[src][k], "request %llu from %d served twice",
            (unsigned long long)k, src);
      c->seen[src][k] = 1;
    }
  }
  size_t m = make_response(&c->t, rank, req, n, c->b);
  maybe_sleep(c);
  if (c->post_in_request) {
    c->post_in_request = 0;
    int rc = wsp_shuffle_post(c->sh, src, NULL, 0);
    CHECK(rc == WSP_ERR_ARG && strstr(wsp_last_error(), "request handler"),
          "post from a request handler: %s %s", wsp_err_name(rc), wsp_last_error());
    rc = wsp_shuffle_progress(c->sh);
    CHECK(rc == WSP_ERR_ARG && strstr(wsp_last_error(), "handler"),
          "progress from a handler: %s", wsp_err_name(rc));
    c->saw_post_refused = 1;
  }
  return m;
}

static int on_request(void *user, int src, const void *req, size_t n,
                      wsp_shuffle_reply_t *reply) {
  ctx_t *c = user;
  size_t m = serve_request(c, src, req, n);
  if (c->stale && !c->stale_tried && c->stale != reply) {
    /* The context kept from an earlier call must not answer this request
     * (this request's own reply below must still succeed). */
    c->stale_tried = 1;
    int stale_rc = wsp_shuffle_reply(c->stale, NULL, 0);
    CHECK(stale_rc == WSP_ERR_ARG && strstr(wsp_last_error(), "earlier request"),
          "reply through a context kept from an earlier call: %s %s",
          wsp_err_name(stale_rc), wsp_last_error());
  }
  if (m == 0 && c->skip_empty_reply && (c->served[src] & 1))
    return 0; /* an implicit empty response */
  int rc = wsp_shuffle_reply(reply, m ? c->b : NULL, m);
  CHECK(rc == WSP_OK, "reply: %s", wsp_last_error());
  if (c->stale == NULL) {
    rc = wsp_shuffle_reply(reply, NULL, 0);
    CHECK(rc == WSP_ERR_ARG && strstr(wsp_last_error(), "already answered"),
          "second reply: %s %s", wsp_err_name(rc), wsp_last_error());
    c->stale = reply;
  }
  if (c->fail_in == 1) {
    c->fail_in = 0;
    return -7;
  }
  return 0;
}

static int on_response(void *user, int dst, const void *req, size_t n,
                       const void *resp, size_t m) {
  ctx_t *c = user;
  uint64_t j = c->answered[dst]++;
  if (!c->threaded && j >= c->norder[dst]) {
    /* Possible only for a follow-up still inside wsp_shuffle_post, which
     * cannot be answered yet: an engine error either way. */
    CHECK(0, "response %llu from %d, but only %llu posts to it returned",
          (unsigned long long)j, dst, (unsigned long long)c->norder[dst]);
    return 0;
  }
  uint64_t k = c->threaded ? j : c->order[dst][j];
  size_t want = make_request(&c->t, rank, dst, k, c->a);
  CHECK(n == want && (n == 0 || memcmp(req, c->a, n) == 0),
        "response %llu from %d carries the wrong request (%zu bytes, expected "
        "%zu of request %llu)", (unsigned long long)j, dst, n, want,
        (unsigned long long)k);
  size_t wm = make_response(&c->t, dst, c->a, want, c->b);
  CHECK((m == wm && (m == 0 || memcmp(resp, c->b, m) == 0)) || (m == 0 && c->empty_ok),
        "response %llu from %d: %zu bytes, expected %zu (or content differs)",
        (unsigned long long)k, dst, m, wm);
  CHECK((m == 0) == (resp == NULL), "response pointer vs size");
  maybe_sleep(c);
  if (c->followups > 0 && wsp_splitmix64(&c->rng) % 3 == 0) {
    c->followups--;
    int to = (int)(wsp_splitmix64(&c->rng) % (uint64_t)size);
    c->in_handler = 1;
    int rc = post_next(c, to);
    c->in_handler = 0;
    /* Without memory (WSP_SHUFFLE_FAULT_NOMEM) a follow-up is refused with
     * WSP_ERR_AGAIN, and tried again from a later handler call. */
    if (rc == WSP_ERR_AGAIN) {
      c->followups++;
      c->again++;
    }
    CHECK(rc == WSP_OK || rc == WSP_ERR_AGAIN, "follow-up post: %s", wsp_last_error());
  }
  if (c->fail_in == 2) {
    c->fail_in = 0;
    return 3;
  }
  return 0;
}

static const wsp_shuffle_handlers_t handlers = {on_request, on_response};

/* The same handlers, batched (--batched): the responses of one call are
 * packed into c->run, which must stay as it is until the next call. */
static int on_requests(void *user, int src, size_t n, wsp_shuffle_item_t *items) {
  ctx_t *c = user;
  CHECK(n >= 1, "on_requests with n = %zu", n);
  size_t *len = malloc(n * sizeof *len), used = 0;
  if (len == NULL) MPI_Abort(MPI_COMM_WORLD, 2);
  for (size_t i = 0; i < n; i++) {
    CHECK(items[i].resp == NULL && items[i].resp_bytes == 0, "items[%zu] comes filled", i);
    len[i] = serve_request(c, src, items[i].req, items[i].req_bytes);
    if (used + len[i] > c->cap_run) {
      c->cap_run = 2 * (used + len[i]);
      c->run = realloc(c->run, c->cap_run);
      if (c->run == NULL) MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (len[i]) memcpy(c->run + used, c->b, len[i]);
    used += len[i];
  }
  c->batched_calls++;
  for (size_t i = 0, off = 0; i < n; off += len[i++]) {
    /* An empty response: left as it came, or set explicitly. */
    if (len[i] == 0 && c->skip_empty_reply && (c->served[src] & 1)) continue;
    items[i].resp = len[i] ? c->run + off : NULL;
    items[i].resp_bytes = len[i];
  }
  free(len);
  if (c->fail_in == 4) { /* a response larger than any allowed */
    c->fail_in = 0;
    items[0].resp = c->b;
    items[0].resp_bytes = (size_t)1 << 62;
  }
  if (c->fail_in == 1) {
    c->fail_in = 0;
    return -7;
  }
  return 0;
}

static int on_responses(void *user, int dst, size_t n, const wsp_shuffle_item_t *items) {
  CHECK(n >= 1, "on_responses with n = %zu", n);
  int rc = 0;
  for (size_t i = 0; i < n; i++) {
    const wsp_shuffle_item_t *it = &items[i];
    int r = on_response(user, dst, it->req, it->req_bytes, it->resp, it->resp_bytes);
    if (rc == 0) rc = r;
  }
  return rc;
}

static const wsp_shuffle_batch_handlers_t batch_handlers = {on_requests, on_responses};
static int batched; /* --batched 1: every shuffle of the traffic phases is batched */

static int open_shuffle(wsp_comm_t *comm, const wsp_shuffle_config_t *cfg, ctx_t *c) {
  return batched ? wsp_shuffle_open_batched(comm, cfg, &batch_handlers, c, &c->sh)
                 : wsp_shuffle_open(comm, cfg, &handlers, c, &c->sh);
}

static void ctx_init(ctx_t *c, const traffic_t *t) {
  memset(c, 0, sizeof *c);
  c->t = *t;
  c->posted = calloc((size_t)size, sizeof *c->posted);
  c->answered = calloc((size_t)size, sizeof *c->answered);
  c->served = calloc((size_t)size, sizeof *c->served);
  c->order = calloc((size_t)size, sizeof *c->order);
  c->norder = calloc((size_t)size, sizeof *c->norder);
  c->caporder = calloc((size_t)size, sizeof *c->caporder);
  c->seen = calloc((size_t)size, sizeof *c->seen);
  c->capseen = calloc((size_t)size, sizeof *c->capseen);
  c->empty_served = calloc((size_t)size, sizeof *c->empty_served);
  size_t big = t->big_req > t->max_req ? t->big_req : t->max_req;
  size_t bigr = t->big_resp > t->max_resp ? t->big_resp : t->max_resp;
  size_t scratch = (big > bigr ? big : bigr) + 64;
  c->a = malloc(scratch);
  c->b = malloc(scratch);
  c->top = malloc(scratch);
  c->rng = 99 + (uint64_t)rank * 7919;
  if (!c->posted || !c->answered || !c->served || !c->order || !c->norder ||
      !c->caporder || !c->seen || !c->capseen || !c->empty_served || !c->a || !c->b || !c->top) {
    fprintf(stderr, "test: out of memory\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
}

static void ctx_free(ctx_t *c) {
  for (int i = 0; i < size; i++) {
    free(c->order[i]);
    free(c->seen[i]);
  }
  free(c->order);
  free(c->norder);
  free(c->caporder);
  free(c->seen);
  free(c->capseen);
  free(c->empty_served);
  free(c->posted);
  free(c->answered);
  free(c->served);
  free(c->a);
  free(c->b);
  free(c->top);
  free(c->run);
}

/* After close: exactly one response per request, and every rank served
 * exactly what the others posted to it. */
static void check_counts(const ctx_t *c, const wsp_shuffle_stats_t *st,
                         const char *what) {
  uint64_t total = 0, served = 0;
  uint64_t *empties = calloc((size_t)size, sizeof *empties);
  for (int d = 0; d < size; d++) {
    CHECK(c->norder[d] == c->posted[d], "%s: a post to %d failed", what, d);
    for (uint64_t j = 0; j < c->norder[d]; j++)
      empties[d] += make_request(&c->t, rank, d, c->order[d][j], c->a) == 0;
    CHECK(c->answered[d] == c->posted[d],
          "%s: %llu responses from %d for %llu requests", what,
          (unsigned long long)c->answered[d], d,
          (unsigned long long)c->posted[d]);
    total += c->posted[d];
    served += c->served[d];
  }
  uint64_t *theirs = malloc((size_t)size * sizeof *theirs);
  MPI_Alltoall(c->posted, 1, MPI_UINT64_T, theirs, 1, MPI_UINT64_T,
               MPI_COMM_WORLD);
  for (int s = 0; s < size; s++)
    CHECK(theirs[s] == c->served[s],
          "%s: rank %d posted %llu requests to me, I served %llu", what, s,
          (unsigned long long)theirs[s], (unsigned long long)c->served[s]);
  /* Zero-byte requests carry no key: counted instead. */
  MPI_Alltoall(empties, 1, MPI_UINT64_T, theirs, 1, MPI_UINT64_T,
               MPI_COMM_WORLD);
  for (int s = 0; s < size; s++)
    CHECK(theirs[s] == c->empty_served[s],
          "%s: rank %d posted %llu empty requests to me, I served %llu", what,
          s, (unsigned long long)theirs[s],
          (unsigned long long)c->empty_served[s]);
  free(theirs);
  free(empties);
  CHECK(st->requests_posted == total, "%s: stats posted %llu, counted %llu",
        what, (unsigned long long)st->requests_posted, (unsigned long long)total);
  CHECK(st->requests_served == served, "%s: stats served %llu, counted %llu",
        what, (unsigned long long)st->requests_served, (unsigned long long)served);
  uint64_t gsum = 0;
  MPI_Allreduce(&total, &gsum, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
  CHECK(st->global_requests_posted == gsum &&
            st->global_requests_served == gsum,
        "%s: global sums %llu/%llu, expected %llu", what,
        (unsigned long long)st->global_requests_posted,
        (unsigned long long)st->global_requests_served, (unsigned long long)gsum);
}

/* The engine's accounting against the documented shares of mem_limit. */
static void check_memory(const wsp_shuffle_stats_t *st, size_t mem,
                         int handler_posts, const char *what) {
  CHECK(st->mem_limit == mem, "%s: mem_limit %zu, configured %zu", what,
        st->mem_limit, mem);
  CHECK(st->peak_inflight <= mem / 4, "%s: inflight peak %zu > %zu", what,
        st->peak_inflight, mem / 4);
  CHECK(st->peak_intake <= mem / 4, "%s: intake peak %zu > %zu", what,
        st->peak_intake, mem / 4);
  CHECK(st->peak_resp_out <= mem / 8, "%s: resp_out peak %zu > %zu", what,
        st->peak_resp_out, mem / 8);
  CHECK(st->peak_resp_in <= mem - 3 * (mem / 4) - mem / 8,
        "%s: resp_in peak %zu", what, st->peak_resp_in);
  if (!handler_posts) {
    CHECK(st->peak_backlog <= mem / 4, "%s: backlog peak %zu > %zu", what,
          st->peak_backlog, mem / 4);
    CHECK(st->mem_peak <= mem, "%s: memory peak %zu > bound %zu", what,
          st->mem_peak, mem);
  }
  CHECK(st->mem_peak >= st->peak_backlog && st->mem_peak >= st->peak_intake,
        "%s: total peak below a part's peak", what);
  CHECK(st->mem_current == 0, "%s: %zu bytes still held after close", what,
        st->mem_current);
}

/* One shuffle of skewed random traffic; returns the stats. */
static void run_traffic(wsp_comm_t *comm, const wsp_shuffle_config_t *cfg,
                        const traffic_t *t, long base, long followups,
                        const char *what, wsp_shuffle_stats_t *out) {
  ctx_t c;
  ctx_init(&c, t);
  c.sleepy = 1;
  c.skip_empty_reply = 1;
  c.threaded = cfg && cfg->progress_thread;
  c.followups = c.threaded ? 0 : followups;
  int rc = open_shuffle(comm, cfg, &c);
  CHECK(rc == WSP_OK, "%s: open: %s", what, wsp_last_error());
  if (rc != WSP_OK) MPI_Abort(MPI_COMM_WORLD, 3);
  /* Skew: the last rank posts 100x the base, rank 0 nothing at all when
   * there are at least 3 ranks, the others a random amount up to 2x. */
  uint64_t r = 4242 + (uint64_t)rank;
  long n = rank == size - 1 ? 100 * base
           : (rank == 0 && size >= 3) ? 0
                                      : (long)(wsp_splitmix64(&r) % (uint64_t)(2 * base + 1));
  for (long i = 0; i < n; i++) {
    int dst = (int)(wsp_splitmix64(&r) % (uint64_t)size);
    rc = post_next(&c, dst);
    CHECK(rc == WSP_OK, "%s: post: %s", what, wsp_last_error());
    if (wsp_splitmix64(&r) % 128 == 0) {
      struct timespec ts = {0, (long)(wsp_splitmix64(&r) % 300) * 1000L};
      nanosleep(&ts, NULL);
    }
    if (i % 16 == 0) CHECK(wsp_shuffle_progress(c.sh) == WSP_OK, "progress");
  }
  wsp_shuffle_stats_t st;
  rc = wsp_shuffle_close(c.sh, &st);
  CHECK(rc == WSP_OK, "%s: close: %s: %s", what, wsp_err_name(rc), wsp_last_error());
  check_counts(&c, &st, what);
  check_memory(&st, cfg ? cfg->mem_limit : ((size_t)64 << 20), followups > 0, what);
  long again[2] = {c.again, c.nomem_posts}, all[2] = {0, 0};
  MPI_Allreduce(again, all, 2, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0 && (all[0] > 0 || all[1] > 0))
    printf("%s: %ld follow-ups refused with WSP_ERR_AGAIN and posted again later, %ld posts "
           "refused with WSP_ERR_NOMEM and posted again\n", what, all[0], all[1]);
  int tried = 0;
  MPI_Allreduce(&c.stale_tried, &tried, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  CHECK(tried || batched, "%s: no rank tried a reply context from an earlier call", what);
  if (batched) { /* fewer calls than requests served, somewhere */
    long calls[2] = {c.batched_calls, (long)st.requests_served}, sum[2];
    MPI_Allreduce(calls, sum, 2, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    CHECK(sum[1] == 0 || sum[0] < sum[1], "%s: %ld on_requests calls for %ld requests", what,
          sum[0], sum[1]);
    if (rank == 0)
      printf("%s: batched: %ld on_requests calls served %ld requests\n", what, sum[0], sum[1]);
  }
  CHECK(wsp_shuffle_free(&c.sh) == WSP_OK && c.sh == NULL, "free");
  if (out) *out = st;
  ctx_free(&c);
}

static void phase_basic(wsp_comm_t *comm, long base, int thread_ok) {
  traffic_t t = {.seed = 5, .max_req = 200, .max_resp = 3000,
                 .big_req = 40000, .big_resp = 200000};
  wsp_shuffle_stats_t st;

  /* Close with no traffic at all. */
  {
    ctx_t c;
    ctx_init(&c, &t);
    CHECK(open_shuffle(comm, NULL, &c) == WSP_OK, "open: %s", wsp_last_error());
    CHECK(wsp_shuffle_close(c.sh, &st) == WSP_OK, "empty close: %s",
          wsp_last_error());
    check_counts(&c, &st, "empty");
    CHECK(st.mem_peak == 0, "empty: memory used %zu", st.mem_peak);
    wsp_shuffle_free(&c.sh);
    ctx_free(&c);
  }
  /* Defaults, follow-ups from the response handler. */
  run_traffic(comm, NULL, &t, base, base / 2, "default", &st);
  /* A small memory bound (so posts must wait) and small batches. */
  wsp_shuffle_config_t cfg;
  wsp_shuffle_config_init(&cfg);
  cfg.mem_limit = (size_t)256 << 10;
  cfg.batch_bytes = 4096;
  cfg.batch_delay = 0.0005;
  /* The smallest pieces: nearly every chunk between ranks is announced and
   * sent in pieces, and announcements wait for room in a resp_in share of
   * 32 KiB. */
  cfg.piece_bytes = 1024;
  traffic_t small = {.seed = 6, .max_req = 300, .max_resp = 2000,
                     .big_req = 2000, .big_resp = 7000};
  run_traffic(comm, &cfg, &small, base, 0, "small-mem", &st);
  long mine[2] = {(long)st.post_waits, (long)st.chunks_in_pieces}, any[2] = {0, 0};
  MPI_Allreduce(mine, any, 2, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0)
    printf("small-mem: %ld posts waited for room, %ld chunks went in pieces of %zu bytes\n",
           any[0], any[1], st.piece_bytes);
  CHECK(st.piece_bytes == 1024, "small-mem: piece size %zu, configured 1024", st.piece_bytes);
  CHECK(size == 1 || any[1] > 0, "small-mem: no chunk went in pieces");
  /* Fixed-rate mode (correctness only; tests never assert timings). */
  wsp_shuffle_config_init(&cfg);
  cfg.mode = WSP_SHUFFLE_FIXED;
  cfg.rate = 200e6;
  run_traffic(comm, &cfg, &t, base / 2 + 1, base / 4, "fixed", &st);
  /* A progress thread. */
  if (thread_ok) {
    wsp_shuffle_config_init(&cfg);
    cfg.progress_thread = 1;
    run_traffic(comm, &cfg, &t, base / 2 + 1, 0, "thread", &st);
  } else if (rank == 0) {
    printf("progress thread: skipped (MPI_THREAD_MULTIPLE not provided)\n");
  }
}

/* A peer that does not serve for a while: posts to it must wait for room
 * (stats.post_waits > 0 on the poster) instead of holding more memory than
 * the bound. Rank 1 sleeps 300 ms after open before it first calls into the
 * shuffle; meanwhile rank 0 posts it 4096 requests averaging ~140 bytes,
 * over four times the backlog and in-flight shares of a 256 KiB bound,
 * so with nobody answering the posting loop cannot finish without waiting.
 * (The random-traffic phases cannot assert this: whether a post ever finds
 * the memory full there depends on the MPI and on scheduling.) */
static void phase_backpressure(wsp_comm_t *comm) {
  if (size < 2) {
    if (rank == 0) printf("back-pressure: skipped (needs 2 ranks)\n");
    return;
  }
  traffic_t t = {.seed = 9, .max_req = 300, .max_resp = 2000};
  wsp_shuffle_config_t cfg;
  wsp_shuffle_config_init(&cfg);
  cfg.mem_limit = (size_t)256 << 10;
  cfg.batch_bytes = 4096;
  ctx_t c;
  ctx_init(&c, &t);
  int rc = wsp_shuffle_open(comm, &cfg, &handlers, &c, &c.sh);
  CHECK(rc == WSP_OK, "back-pressure: open: %s", wsp_last_error());
  if (rc != WSP_OK) MPI_Abort(MPI_COMM_WORLD, 3);
  if (rank == 1) {
    struct timespec ts = {0, 300L * 1000 * 1000};
    nanosleep(&ts, NULL);
  }
  for (long i = 0; rank == 0 && i < 4096; i++)
    CHECK(post_next(&c, 1) == WSP_OK, "back-pressure: post: %s", wsp_last_error());
  wsp_shuffle_stats_t st;
  rc = wsp_shuffle_close(c.sh, &st);
  CHECK(rc == WSP_OK, "back-pressure: close: %s", wsp_last_error());
  check_counts(&c, &st, "back-pressure");
  check_memory(&st, cfg.mem_limit, 0, "back-pressure");
  if (rank == 0)
    CHECK(st.post_waits > 0, "back-pressure: no post waited for room although "
          "rank 1 did not serve (backlog peak %zu, in-flight peak %zu)",
          st.peak_backlog, st.peak_inflight);
  CHECK(wsp_shuffle_free(&c.sh) == WSP_OK, "free");
  ctx_free(&c);
}

/* Running out of memory in the middle of a shuffle is back-pressure: with
 * WSP_SHUFFLE_FAULT_NOMEM=4 a quarter of the engine's allocations inside its
 * passes fail (receive buffers, response chunks, send slots, test arrays),
 * and the same random traffic must still be answered exactly once with the
 * right payloads, within the memory bound, on every rank. Before allocation
 * failures were retried, the first one was fatal on its rank and the others
 * hung in close (the test's timeout). A bad value of the variable is a
 * configuration error naming it. */
static void phase_nomem(wsp_comm_t *comm, long base, int thread_ok) {
  traffic_t t = {.seed = 11, .max_req = 200, .max_resp = 3000,
                 .big_req = 20000, .big_resp = 100000};
  wsp_shuffle_config_t cfg;
  wsp_shuffle_config_init(&cfg);
  cfg.mem_limit = (size_t)4 << 20; /* largest response 128 KiB */
  cfg.batch_bytes = 8192;
  MPI_Barrier(MPI_COMM_WORLD);
  setenv("WSP_SHUFFLE_FAULT_NOMEM", "4", 1);
  MPI_Barrier(MPI_COMM_WORLD);
  wsp_shuffle_stats_t st;
  run_traffic(comm, &cfg, &t, base / 2 + 1, base / 4, "nomem", &st);
  unsigned long long mine = st.nomem_waits, all = 0;
  MPI_Allreduce(&mine, &all, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  CHECK(all > 0, "nomem: no allocation failed, so the injection did not run");
  if (rank == 0) printf("nomem: %llu allocations failed and were retried\n", all);
  if (thread_ok) { /* the same with the passes on a progress thread */
    cfg.progress_thread = 1;
    run_traffic(comm, &cfg, &t, base / 4 + 1, 0, "nomem-thread", &st);
    mine = st.nomem_waits;
    MPI_Allreduce(&mine, &all, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    CHECK(all > 0, "nomem-thread: no allocation failed");
    cfg.progress_thread = 0;
  }

  /* The barriers keep one rank's setenv/unsetenv away from another's open
   * where ranks share one environment (SimGrid runs them in one process). */
  /* "1" would fail every allocation: nothing could ever be received. */
  const char *bad[] = {"often", "1"};
  for (int i = 0; i < 2; i++) {
    MPI_Barrier(MPI_COMM_WORLD);
    setenv("WSP_SHUFFLE_FAULT_NOMEM", bad[i], 1);
    MPI_Barrier(MPI_COMM_WORLD);
    ctx_t c;
    ctx_init(&c, &t);
    int rc = wsp_shuffle_open(comm, &cfg, &handlers, &c, &c.sh);
    CHECK(rc == WSP_ERR_CONFIG && c.sh == NULL &&
              strstr(wsp_last_error(), "WSP_SHUFFLE_FAULT_NOMEM") != NULL,
          "nomem: WSP_SHUFFLE_FAULT_NOMEM=%s gave %s: %s", bad[i], wsp_err_name(rc),
          wsp_last_error());
    ctx_free(&c);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  unsetenv("WSP_SHUFFLE_FAULT_NOMEM");
}

/* ---- responses on both sides of the piece size (--phase pieces) ----
 * Rank 0 asks every other rank `n` times. Ranks 1 .. p-2 answer every
 * request with the largest response allowed (stats.max_response), so that
 * each of their chunks is exactly a quarter of rank 0's resp_in share and
 * travels as an announcement and pieces; rank p-1 answers with a few
 * hundred bytes, whole chunks below the piece size. So rank 0's share is
 * full with four chunks being assembled, while whole chunks keep arriving
 * between their pieces. Request k from 0 to d is 8 bytes (d << 32 | k);
 * response byte i is a pure function of (d, k, i), and its size of (d, k):
 * every byte and exactly one response per request are checked. */

typedef struct {
  size_t big;          /* the largest response */
  unsigned char *buf;  /* room for it */
  unsigned char **seen; /* per destination: k answered */
  long n, answered, bad;
} pieces_t;

static size_t pieces_size(const pieces_t *u, int who, uint64_t k) {
  if (who == size - 1) return 1 + (size_t)(mix(7, (uint64_t)who, k, 1) % 400);
  return u->big;
}

static void pieces_fill(int who, uint64_t k, unsigned char *buf, size_t n) {
  fill(mix(8, (uint64_t)who, k, 2), buf, n);
}

static int pieces_on_request(void *user, int src, const void *req, size_t n,
                             wsp_shuffle_reply_t *reply) {
  pieces_t *u = user;
  uint64_t key = 0;
  CHECK(src == 0 && n == sizeof key, "pieces: request of %zu bytes from %d", n, src);
  if (n != sizeof key) return 1;
  memcpy(&key, req, sizeof key);
  CHECK((int)(key >> 32) == rank, "pieces: request for rank %d reached %d", (int)(key >> 32),
        rank);
  uint64_t k = key & 0xffffffffu;
  size_t m = pieces_size(u, rank, k);
  pieces_fill(rank, k, u->buf, m);
  return wsp_shuffle_reply(reply, u->buf, m) == WSP_OK ? 0 : 2;
}

static int pieces_on_response(void *user, int dst, const void *req, size_t n,
                              const void *resp, size_t m) {
  pieces_t *u = user;
  uint64_t key = 0;
  if (n == sizeof key) memcpy(&key, req, sizeof key);
  uint64_t k = key & 0xffffffffu;
  size_t want = pieces_size(u, dst, k);
  int ok = n == sizeof key && (int)(key >> 32) == dst && k < (uint64_t)u->n && m == want;
  if (ok) {
    pieces_fill(dst, k, u->buf, want);
    ok = memcmp(resp, u->buf, want) == 0 && !u->seen[dst][k];
    u->seen[dst][k] = 1;
  }
  if (!ok && u->bad++ < 5)
    CHECK(0, "pieces: response from %d to request %llu: %zu bytes, expected %zu (or its "
          "bytes differ, or it came twice)", dst, (unsigned long long)k, m, want);
  u->answered++;
  return 0;
}

static void phase_pieces(long n, int lanes, int thread) {
  if (size < 3) {
    if (rank == 0) printf("pieces: skipped (needs 3 ranks)\n");
    return;
  }
  /* Its own communicator with a time limit: a shuffle that stops making
   * progress fails with WSP_ERR_TIMEOUT instead of hanging the test. */
  wsp_config_t wc;
  wsp_config_init(&wc);
  wsp_config_from_env(&wc);
  if (!(wc.timeout > 0)) wc.timeout = 5;
  wsp_comm_t *comm = NULL;
  if (wsp_comm_create(MPI_COMM_WORLD, &wc, &comm) != WSP_OK) {
    fprintf(stderr, "wsp_comm_create: %s\n", wsp_last_error());
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const wsp_shuffle_handlers_t h = {pieces_on_request, pieces_on_response};
  wsp_shuffle_config_t cfg;
  wsp_shuffle_config_init(&cfg);
  cfg.mem_limit = (size_t)1 << 20; /* resp_in 128 KiB, the largest chunk 32 KiB */
  cfg.piece_bytes = 1024;
  cfg.progress_thread = thread;
  /* The handlers' state is complete before open: with a progress thread
   * the first request may be served before open returns. The largest
   * response makes a chunk of a quarter of resp_in: the chunk's header and
   * the response's length, 24 bytes, then the response (docs/shuffle.md,
   * memory); the shuffle's own figure is checked against it below. */
  pieces_t u = {.n = n, .big = cfg.mem_limit / 32 - 24};
  u.buf = malloc(u.big);
  u.seen = calloc((size_t)size, sizeof *u.seen);
  for (int d = 0; u.seen && d < size; d++) u.seen[d] = calloc((size_t)n, 1);
  if (u.buf == NULL || u.seen == NULL || u.seen[size - 1] == NULL) MPI_Abort(MPI_COMM_WORLD, 2);
  wsp_shuffle_t *sh = NULL;
  int rc = wsp_shuffle_open(comm, &cfg, &h, &u, &sh);
  CHECK(rc == WSP_OK, "pieces: open: %s", wsp_last_error());
  if (rc != WSP_OK) MPI_Abort(MPI_COMM_WORLD, 3);
  wsp_shuffle_stats_t st;
  wsp_shuffle_stats(sh, &st);
  CHECK(st.max_response == u.big,
        "pieces: the largest response is %zu bytes, not %zu (a chunk of a quarter of resp_in)",
        st.max_response, u.big);
  double t0 = MPI_Wtime();
  for (long k = 0; rank == 0 && k < n && rc == WSP_OK; k++)
    for (int d = 1; d < size && rc == WSP_OK; d++) {
      uint64_t key = (uint64_t)d << 32 | (uint64_t)k;
      rc = wsp_shuffle_post(sh, d, &key, sizeof key);
      CHECK(rc == WSP_OK, "pieces: post: %s", wsp_last_error());
    }
  rc = wsp_shuffle_close(sh, &st);
  CHECK(rc == WSP_OK, "pieces: close: %s: %s", wsp_err_name(rc), wsp_last_error());
  double t = MPI_Wtime() - t0;
  if (rank == 0)
    CHECK(u.answered == n * (size - 1), "pieces: %ld responses for %ld requests", u.answered,
          n * (size - 1));
  if (rc == WSP_OK) check_memory(&st, cfg.mem_limit, 0, "pieces");
  unsigned long long mine[2] = {st.chunks_in_pieces, st.chunks_on_lanes}, all[2] = {0, 0};
  MPI_Allreduce(mine, all, 2, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (lanes)
    CHECK(all[1] == (unsigned long long)(n * (size - 2)),
          "pieces: %llu chunks over the lanes and %llu in pieces; expected the %ld large ones "
          "over the lanes",
          all[1], all[0], n * (size - 2));
  else
    CHECK(all[0] > 0 && all[1] == 0, "pieces: %llu chunks in pieces and %llu over the lanes",
          all[0], all[1]);
  if (rank == 0)
    printf("pieces%s: %ld requests, %llu chunks in pieces of %zu bytes, %llu over the lanes, "
           "%.2f s\n",
           thread ? " (progress thread)" : "", n * (size - 1), all[0], st.piece_bytes, all[1], t);
  wsp_shuffle_free(&sh);
  for (int d = 0; d < size; d++) free(u.seen[d]);
  free(u.seen);
  free(u.buf);
  wsp_comm_free(&comm);
}

/* ---- close on a communicator a timeout made unusable (--phase unusable) ----
 * Two ranks open a shuffle with a progress thread on a communicator with a
 * time limit of 0.5 s, then make the communicator unusable: each enters a
 * bcast rooted at the other, which therefore never sends, and both time
 * out. Close must then return WSP_ERR_TIMEOUT at once, and it must have
 * stopped and joined the progress thread: the process's thread count
 * (from the kernel, /proc/self/status) must be back where it was before
 * open, and freeing the shuffle must not leave a thread that touches the
 * freed handle (AddressSanitizer reports that; the test waits a little
 * after the free so that such a thread would wake up). */

static int thread_count(void) {
  FILE *f = fopen("/proc/self/status", "r");
  char line[256];
  int n = -1;
  while (f && fgets(line, sizeof line, f))
    if (sscanf(line, "Threads: %d", &n) == 1) break;
  if (f) fclose(f);
  return n;
}

static void phase_unusable(int thread_ok) {
  if (size != 2 || !thread_ok) {
    if (rank == 0) printf("unusable: skipped (needs 2 ranks and MPI_THREAD_MULTIPLE)\n");
    return;
  }
  wsp_config_t wc;
  wsp_config_init(&wc);
  wc.timeout = 0.5;
  /* A bcast of wirespeed's own, whose receive the timeout can cancel (an
   * abandoned MPI_Ibcast would stay pending until MPI_Finalize). */
  CHECK(wsp_coll_alg_from_name(WSP_COLL_BCAST, "binomial", &wc.coll_alg[WSP_COLL_BCAST]) ==
            WSP_OK,
        "unusable: bcast algorithm binomial: %s", wsp_last_error());
  wsp_comm_t *comm = NULL;
  if (wsp_comm_create(MPI_COMM_WORLD, &wc, &comm) != WSP_OK) {
    fprintf(stderr, "wsp_comm_create: %s\n", wsp_last_error());
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  traffic_t t = {.seed = 12, .max_req = 50, .max_resp = 50};
  ctx_t c;
  ctx_init(&c, &t);
  wsp_shuffle_config_t cfg;
  wsp_shuffle_config_init(&cfg);
  cfg.progress_thread = 1;
  int before = thread_count();
  int rc = wsp_shuffle_open(comm, &cfg, &handlers, &c, &c.sh);
  CHECK(rc == WSP_OK, "unusable: open: %s", wsp_last_error());
  if (rc != WSP_OK) MPI_Abort(MPI_COMM_WORLD, 3);
  CHECK(thread_count() == before + 1, "unusable: %d threads with the shuffle open, %d before",
        thread_count(), before);
  {
    char b = 0;
    rc = wsp_bcast(comm, &b, 1, MPI_CHAR, 1 - rank);
    CHECK(rc == WSP_ERR_TIMEOUT, "unusable: a bcast from a rank that never sends returned %s",
          wsp_err_name(rc));
  }
  wsp_shuffle_stats_t st;
  rc = wsp_shuffle_close(c.sh, &st);
  CHECK(rc == WSP_ERR_TIMEOUT, "unusable: close returned %s: %s", wsp_err_name(rc),
        wsp_last_error());
  CHECK(thread_count() == before,
        "unusable: %d threads after close, %d before open: the progress thread still runs",
        thread_count(), before);
  CHECK(wsp_shuffle_free(&c.sh) == WSP_OK && c.sh == NULL, "unusable: free: %s",
        wsp_last_error());
  struct timespec ts = {0, 50L * 1000 * 1000};
  nanosleep(&ts, NULL);
  ctx_free(&c);
  CHECK(wsp_comm_free(&comm) == WSP_OK, "unusable: comm free: %s", wsp_last_error());
  MPI_Barrier(MPI_COMM_WORLD);
}

/* The same post while the shuffle holds memory that only another rank can
 * give back (--phase post-nomem-serving): rank 0 has served rank 1 a
 * response of 256 KiB, whose send waits for rank 1 (a rendezvous: the
 * pieces are 1 GiB), and rank 1 waits in an MPI_Recv of its own for a
 * message that rank 0 sends only after its post returned. Rank 0's post
 * must end with WSP_ERR_TIMEOUT after the limit, naming the memory it
 * waited for (before, nothing of its own being in flight, its idle time
 * did not count and the two ranks waited for each other for good). Rank 1
 * then closes and times out waiting for rank 0. Both shuffles keep their
 * buffers after the timeout, as MPI may still use them (docs/faults.md). */
#define SERVED_BYTES ((size_t)256 << 10)

static int served_on_request(void *user, int src, const void *req, size_t n,
                             wsp_shuffle_reply_t *reply) {
  unsigned char *buf = user;
  (void)src, (void)req, (void)n;
  fill(77, buf, SERVED_BYTES);
  return wsp_shuffle_reply(reply, buf, SERVED_BYTES) == WSP_OK ? 0 : 1;
}

static int served_on_response(void *user, int dst, const void *req, size_t n,
                              const void *resp, size_t m) {
  unsigned char *buf = user;
  (void)dst, (void)req, (void)n;
  fill(77, buf, SERVED_BYTES);
  CHECK(m == SERVED_BYTES && memcmp(resp, buf, m) == 0,
        "post-nomem: the served response has %zu bytes (or they differ)", m);
  return 0;
}

static void phase_post_nomem_serving(void) {
  if (size < 2) {
    if (rank == 0) printf("post-nomem-serving: skipped (needs 2 ranks)\n");
    return;
  }
  wsp_config_t wc;
  wsp_config_init(&wc);
  wc.timeout = 1;
  wsp_comm_t *comm = NULL;
  if (wsp_comm_create(MPI_COMM_WORLD, &wc, &comm) != WSP_OK) {
    fprintf(stderr, "wsp_comm_create: %s\n", wsp_last_error());
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const wsp_shuffle_handlers_t h = {served_on_request, served_on_response};
  wsp_shuffle_config_t cfg;
  wsp_shuffle_config_init(&cfg);
  cfg.mem_limit = (size_t)1 << 44;
  cfg.piece_bytes = (size_t)1 << 30;
  unsigned char *buf = malloc(SERVED_BYTES);
  if (buf == NULL) MPI_Abort(MPI_COMM_WORLD, 2);
  wsp_shuffle_t *sh = NULL;
  int rc = wsp_shuffle_open(comm, &cfg, &h, buf, &sh);
  CHECK(rc == WSP_OK, "post-nomem: open: %s", wsp_last_error());
  if (rc != WSP_OK) MPI_Abort(MPI_COMM_WORLD, 3);
  wsp_shuffle_stats_t st;
  int token = 0;
  if (rank == 1) {
    char key[8] = {1};
    CHECK(wsp_shuffle_post(sh, 0, key, sizeof key) == WSP_OK, "post-nomem: post: %s",
          wsp_last_error());
    do wsp_shuffle_progress(sh), wsp_shuffle_stats(sh, &st);
    while (st.batches_sent == 0);
    MPI_Recv(&token, 1, MPI_INT, 0, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  } else if (rank == 0) {
    do wsp_shuffle_progress(sh), wsp_shuffle_stats(sh, &st);
    while (st.requests_served == 0);
    char small[8] = {0};
    rc = wsp_shuffle_post(sh, 1, small, (size_t)1 << 40);
    CHECK(rc == WSP_ERR_TIMEOUT && strstr(wsp_last_error(), "memory for a request"),
          "post-nomem: a post waiting for memory that only rank 1 can give back: %s: %s",
          wsp_err_name(rc), wsp_last_error());
    MPI_Send(&token, 1, MPI_INT, 1, 99, MPI_COMM_WORLD);
  }
  rc = wsp_shuffle_close(sh, &st);
  CHECK(rc == WSP_ERR_TIMEOUT || rank > 1, "post-nomem: close after the timeout: %s",
        wsp_err_name(rc));
  wsp_shuffle_free(&sh);
  wsp_comm_free(&comm);
  free(buf);
  MPI_Barrier(MPI_COMM_WORLD);
}

/* ---- a post no memory can hold (--phase post-nomem) ----
 * Rank 0 posts, as its first request, one of a TiB (the largest request
 * of a shuffle of the largest mem_limit at p = 2 is 4 TiB), whose copy no
 * allocation can hold: the system refuses that much, which the test checks
 * first with malloc of its own (and skips where it does not). Nothing is
 * queued, in flight or being served, so no pass could give memory back:
 * the post must return WSP_ERR_NOMEM, naming the request, instead of
 * waiting forever (before, it waited, and WSP_TIMEOUT did not end that
 * wait: the test's time limit caught it). The shuffle must then still
 * work: every rank posts to every rank, and everything is answered once.
 * The pieces are 1 GiB, so that serving's send slots, counted per piece of
 * the largest chunk, stay few at this mem_limit. */
static void phase_post_nomem(void) {
  const size_t huge = (size_t)1 << 40;
  void *probe = malloc(huge + 64);
  int refused = probe == NULL, all = 0;
  free(probe);
  MPI_Allreduce(&refused, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
  if (!all) {
    if (rank == 0) printf("post-nomem: skipped (this system lets a process allocate 1 TiB)\n");
    return;
  }
  wsp_config_t wc;
  wsp_config_init(&wc);
  wsp_config_from_env(&wc);
  if (!(wc.timeout > 0)) wc.timeout = 2;
  wsp_comm_t *comm = NULL;
  if (wsp_comm_create(MPI_COMM_WORLD, &wc, &comm) != WSP_OK) {
    fprintf(stderr, "wsp_comm_create: %s\n", wsp_last_error());
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  traffic_t t = {.seed = 13, .max_req = 100, .max_resp = 500};
  ctx_t c;
  ctx_init(&c, &t);
  wsp_shuffle_config_t cfg;
  wsp_shuffle_config_init(&cfg);
  cfg.mem_limit = (size_t)1 << 44;
  cfg.piece_bytes = (size_t)1 << 30;
  int rc = wsp_shuffle_open(comm, &cfg, &handlers, &c, &c.sh);
  CHECK(rc == WSP_OK, "post-nomem: open: %s", wsp_last_error());
  if (rc != WSP_OK) MPI_Abort(MPI_COMM_WORLD, 3);
  wsp_shuffle_stats_t st;
  wsp_shuffle_stats(c.sh, &st);
  CHECK(st.max_request >= huge, "post-nomem: the largest request is %zu bytes", st.max_request);
  if (rank == 0) {
    char small[8] = {0}; /* never read: the copy fails first */
    printf("post-nomem: posting a request of %zu bytes\n", huge);
    fflush(stdout);
    rc = wsp_shuffle_post(c.sh, size - 1, small, huge);
    CHECK(rc == WSP_ERR_NOMEM && strstr(wsp_last_error(), "no memory for a request of"),
          "post-nomem: a request no memory can hold: %s: %s", wsp_err_name(rc),
          wsp_last_error());
  }
  for (int d = 0; d < size; d++)
    for (int k = 0; k < 4; k++) CHECK(post_next(&c, d) == WSP_OK, "post-nomem: post: %s",
                                      wsp_last_error());
  rc = wsp_shuffle_close(c.sh, &st);
  CHECK(rc == WSP_OK, "post-nomem: close: %s", wsp_last_error());
  check_counts(&c, &st, "post-nomem");
  CHECK(wsp_shuffle_free(&c.sh) == WSP_OK, "post-nomem: free");
  ctx_free(&c);
  wsp_comm_free(&comm);
}

/* Every rank opens; `culprit` passes something bad. */
static void phase_args(wsp_comm_t *comm) {
  traffic_t t = {.seed = 8, .max_req = 50, .max_resp = 50};
  const int culprit = size - 1;
  ctx_t c;
  ctx_init(&c, &t);
  int rc;

  /* Open: bad handlers / config on one rank: ERR_ARG there, REMOTE elsewhere. */
  wsp_shuffle_handlers_t no_req = {NULL, on_response};
  wsp_shuffle_handlers_t no_resp = {on_request, NULL};
  wsp_shuffle_config_t bad;
  wsp_shuffle_config_init(&bad);
  bad.batch_bytes = 0;
  struct {
    const wsp_shuffle_handlers_t *h;
    const wsp_shuffle_config_t *cfg;
    int null_out;
    const char *text;
  } cases[] = {{NULL, NULL, 0, "handlers is NULL"},
               {&no_req, NULL, 0, "on_request is NULL"},
               {&no_resp, NULL, 0, "on_response is NULL"},
               {&handlers, &bad, 0, "batch_bytes"},
               {&handlers, NULL, 1, "out is NULL"}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    wsp_shuffle_t *sh = NULL;
    int me = rank == culprit;
    rc = wsp_shuffle_open(comm, me ? cases[i].cfg : NULL,
                          me ? cases[i].h : &handlers, &c,
                          me && cases[i].null_out ? NULL : &sh);
    if (me)
      CHECK(rc == WSP_ERR_ARG && strstr(wsp_last_error(), cases[i].text),
            "open case %zu: %s: %s", i, wsp_err_name(rc), wsp_last_error());
    else if (size > 1)
      CHECK(rc == WSP_ERR_REMOTE, "open case %zu: others got %s", i,
            wsp_err_name(rc));
    CHECK(sh == NULL, "open case %zu left a handle", i);
  }
  /* The batched open checks its handlers the same way. */
  const wsp_shuffle_batch_handlers_t no_reqs = {NULL, on_responses}, no_resps = {on_requests,
                                                                                NULL};
  const wsp_shuffle_batch_handlers_t *bcases[] = {NULL, &no_reqs, &no_resps};
  const char *btext[] = {"handlers is NULL", "on_requests is NULL", "on_responses is NULL"};
  for (int i = 0; i < 3; i++) {
    wsp_shuffle_t *sh = NULL;
    int me = rank == culprit;
    rc = wsp_shuffle_open_batched(comm, NULL, me ? bcases[i] : &batch_handlers, &c, &sh);
    if (me)
      CHECK(rc == WSP_ERR_ARG && strstr(wsp_last_error(), btext[i]) &&
                strstr(wsp_last_error(), "wsp_shuffle_open_batched"),
            "batched open case %d: %s: %s", i, wsp_err_name(rc), wsp_last_error());
    else if (size > 1)
      CHECK(rc == WSP_ERR_REMOTE, "batched open case %d: others got %s", i, wsp_err_name(rc));
    CHECK(sh == NULL, "batched open case %d left a handle", i);
  }
  /* A configuration that differs between ranks. */
  if (size > 1) {
    wsp_shuffle_config_t d;
    wsp_shuffle_config_init(&d);
    if (rank == culprit) d.batch_bytes = 8192;
    wsp_shuffle_t *sh = NULL;
    rc = wsp_shuffle_open(comm, &d, &handlers, &c, &sh);
    CHECK(rc == WSP_ERR_CONFIG && strstr(wsp_last_error(), "differs"),
          "mismatched config: %s %s", wsp_err_name(rc), wsp_last_error());
  }
  /* Posts with bad arguments (local: no collective involved). */
  rc = wsp_shuffle_open(comm, NULL, &handlers, &c, &c.sh);
  CHECK(rc == WSP_OK, "open: %s", wsp_last_error());
  wsp_shuffle_stats_t st;
  wsp_shuffle_stats(c.sh, &st);
  char buf[16] = {0};
  rc = wsp_shuffle_post(c.sh, size, buf, 1);
  CHECK(rc == WSP_ERR_ARG && strstr(wsp_last_error(), "dest"), "dest = p: %s",
        wsp_last_error());
  rc = wsp_shuffle_post(c.sh, -1, buf, 1);
  CHECK(rc == WSP_ERR_ARG && strstr(wsp_last_error(), "dest = -1"),
        "dest = -1: %s", wsp_last_error());
  rc = wsp_shuffle_post(c.sh, 0, NULL, 5);
  CHECK(rc == WSP_ERR_ARG && strstr(wsp_last_error(), "data is NULL"),
        "NULL data: %s", wsp_last_error());
  rc = wsp_shuffle_post(c.sh, 0, buf, (size_t)-5);
  CHECK(rc == WSP_ERR_ARG && strstr(wsp_last_error(), "bytes") &&
            strstr(wsp_last_error(), "largest request"),
        "absurd size: %s", wsp_last_error());
  rc = wsp_shuffle_post(c.sh, 0, buf, st.max_request + 1);
  CHECK(rc == WSP_ERR_ARG, "max_request + 1 accepted");
  CHECK(wsp_shuffle_post(NULL, 0, buf, 1) == WSP_ERR_ARG &&
            strstr(wsp_last_error(), "sh is NULL"),
        "NULL sh");
  CHECK(wsp_shuffle_stats(c.sh, NULL) == WSP_ERR_ARG, "NULL stats");
  CHECK(wsp_shuffle_reply(NULL, buf, 1) == WSP_ERR_ARG, "NULL reply");
  wsp_shuffle_t *open_sh = c.sh;
  CHECK(wsp_shuffle_free(&open_sh) == WSP_ERR_ARG &&
            strstr(wsp_last_error(), "close it first") && open_sh == c.sh,
        "free of an open shuffle");
  /* Some real traffic: a post and a progress from inside a request handler
   * are refused, a second reply is refused, and a stale reply context too. */
  c.post_in_request = 1;
  for (int d = 0; d < size; d++) CHECK(post_next(&c, d) == WSP_OK, "post");
  rc = wsp_shuffle_close(c.sh, &st);
  CHECK(rc == WSP_OK, "close: %s", wsp_last_error());
  check_counts(&c, &st, "args");
  CHECK(c.saw_post_refused, "the request handler ran");
  if (c.stale) {
    rc = wsp_shuffle_reply(c.stale, buf, 1);
    CHECK(rc == WSP_ERR_ARG && strstr(wsp_last_error(), "not inside"),
          "stale reply: %s %s", wsp_err_name(rc), wsp_last_error());
  }
  /* After close. */
  rc = wsp_shuffle_post(c.sh, 0, buf, 1);
  CHECK(rc == WSP_ERR_ARG && strstr(wsp_last_error(), "closed"),
        "post after close: %s", wsp_last_error());
  CHECK(wsp_shuffle_progress(c.sh) == WSP_ERR_ARG, "progress after close");
  rc = wsp_shuffle_close(c.sh, NULL);
  CHECK(rc == WSP_ERR_ARG && strstr(wsp_last_error(), "already closed"),
        "second close: %s", wsp_last_error());
  CHECK(wsp_shuffle_stats(c.sh, &st) == WSP_OK, "stats after close");
  CHECK(wsp_shuffle_free(&c.sh) == WSP_OK && c.sh == NULL, "free");
  CHECK(wsp_shuffle_free(&c.sh) == WSP_OK, "free of NULL");
  CHECK(wsp_shuffle_free(NULL) == WSP_ERR_ARG, "free(NULL)");
  CHECK(wsp_shuffle_close(NULL, NULL) == WSP_ERR_ARG, "close(NULL)");
  ctx_free(&c);

  /* A handler that fails: every request is still answered, close reports
   * WSP_ERR_HANDLER on that rank and WSP_ERR_REMOTE on the others. Case 3:
   * the request handler of a rank that posts nothing fails, so it fails
   * after that rank has entered the termination sum (it keeps serving). */
  /* Batched, case 4: on_requests sets a response larger than allowed. */
  for (int where = 1; where <= 3 + batched; where++) {
    if (where == 3 && size < 2) continue; /* nobody would send it a request */
    ctx_init(&c, &t);
    if (rank == culprit) c.fail_in = where == 3 ? 1 : where;
    c.empty_ok = batched && where != 2;
    CHECK(open_shuffle(comm, NULL, &c) == WSP_OK, "open");
    if (!(where == 3 && rank == culprit))
      for (int d = 0; d < size; d++)
        for (int k = 0; k < 3; k++) CHECK(post_next(&c, d) == WSP_OK, "post");
    rc = wsp_shuffle_close(c.sh, &st);
    if (rank == culprit)
      CHECK(rc == WSP_ERR_HANDLER && strstr(wsp_last_error(),
                                            where == 2 ? "on_response" : "on_request") &&
                (!batched || strstr(wsp_last_error(), where == 2 ? "on_responses" :
                                                                   "on_requests")) &&
                (where != 4 || strstr(wsp_last_error(), "set items[0]")),
            "failing handler %d: %s %s", where, wsp_err_name(rc), wsp_last_error());
    else
      CHECK(rc == WSP_ERR_REMOTE, "failing handler %d elsewhere: %s", where,
            wsp_err_name(rc));
    for (int d = 0; d < size; d++)
      CHECK(c.answered[d] == c.posted[d], "answered despite the failure");
    wsp_shuffle_free(&c.sh);
    ctx_free(&c);
  }
}

int main(int argc, char **argv) {
  long base = 400;
  int lanes = 0;
  const char *phase = "all";
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--requests")) base = atol(argv[i + 1]);
    else if (!strcmp(argv[i], "--phase")) phase = argv[i + 1];
    else if (!strcmp(argv[i], "--batched")) batched = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--lanes"))
      lanes = atoi(argv[i + 1]);
  }
  int provided = MPI_THREAD_SINGLE;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  wsp_comm_t *comm = NULL;
  if (wsp_comm_create(MPI_COMM_WORLD, NULL, &comm) != WSP_OK) {
    fprintf(stderr, "wsp_comm_create: %s\n", wsp_last_error());
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
#ifdef WSP_SIMGRID
  int thread_ok = 0; /* no progress thread under SimGrid (documented) */
#else
  int thread_ok = provided == MPI_THREAD_MULTIPLE;
#endif
  if (!strcmp(phase, "all") || !strcmp(phase, "basic"))
  {
    phase_basic(comm, base, thread_ok);
    phase_backpressure(comm);
    phase_nomem(comm, base, thread_ok);
  }
  if (!strcmp(phase, "all") || !strcmp(phase, "args")) phase_args(comm);
  if (!strcmp(phase, "pieces")) {
    phase_pieces(base, lanes, 0);
    if (lanes && thread_ok) phase_pieces(base, lanes, 1);
  }
  if (!strcmp(phase, "unusable")) phase_unusable(thread_ok);
  if (!strcmp(phase, "post-nomem")) phase_post_nomem();
  if (!strcmp(phase, "post-nomem-serving")) phase_post_nomem_serving();
  long total = 0;
  MPI_Allreduce(&failures, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0)
    printf("test_shuffle: p=%d, %ld base requests%s: %ld failures\n", size, base,
           batched ? ", batched handlers" : "", total);
  wsp_comm_free(&comm);
  MPI_Finalize();
  return total ? 1 : 0;
}
