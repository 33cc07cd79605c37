/*
 * wsp-bench shuffle — goodput of all-pairs request/response traffic.
 *
 * Every rank keeps asking every other rank for data: a request of --req-size
 * bytes is answered by a response --fold times larger (G-thinker's
 * experiment: 1 KiB, fold 100). Each strategy runs for --duration seconds,
 * one after the other in the same job, so that their ratios hold on a
 * shared machine:
 *
 *   s1        synchronous all-to-all rounds from point-to-point: every rank
 *             sends one request to every other rank (MPI_Irecv/MPI_Isend,
 *             wait for all), then one response to every other rank (the
 *             same), repeated. A request carries a stop flag, so all ranks
 *             learn in the same round that the time is up.
 *   s2        the unpaced server-style exchange: a request server and a
 *             response server that poll MPI_Iprobe(MPI_ANY_SOURCE) and
 *             answer or receive each message, and requests sent as fast as
 *             possible. The only bound, so that the program cannot run out
 *             of memory, is --s2-window unanswered requests per peer
 *             (default 32: 3.2 MB of responses per peer at the defaults,
 *             hundreds of times what a LAN holds in flight).
 *   s3        G-thinker's rule, re-implemented faithfully on s2's servers:
 *             a batch of one request to every other rank (p-1 responses of
 *             fold x req-size, ~100 kB per pair at the defaults), then a
 *             sleep after each batch proportional to p (the batch's
 *             response volume divided by --rate), during which the
 *             servers keep serving. --rate is the goodput asked for per
 *             host (divided among the host's ranks) and is what G-thinker
 *             tunes by hand per cluster; it defaults to --link-rate.
 *   adaptive  wsp_shuffle (src/exchange/shuffle.c), adaptive pacing: each
 *             rank posts requests round robin to the other ranks as fast
 *             as wsp_shuffle_post accepts them.
 *   fixed     the same engine in fixed-rate mode (WSP_SHUFFLE_RATE) at
 *             --rate per host: the hand-tuned approach done smoothly.
 *
 * What is counted (goodput): the payload bytes of responses received per
 * second per host, from ranks on other hosts (responses between ranks of one
 * host never touch its NIC). With one host (loopback) every response counts.
 * A response is counted in the second in which its receive completed,
 * seconds measured from a barrier at the start of the strategy; what arrives
 * after --duration (while a strategy drains) is not counted. The table
 * gives per host and second Mbit/s (1e6 bits/s), and the summary: mean over
 * the run, as a fraction of --link-rate B when given, the smallest host's
 * mean, and for the worst host the lowest 5-second window divided by its
 * own mean (1.0 = perfectly steady). The "no 5-second window below
 * 0.8 of its own average" can also be read for the strategy as a whole, so
 * the summary gives that too: the lowest 5-second window of the mean over
 * hosts, over its mean (all5/mean). The per-host reading is the stricter
 * one and stays the headline.
 *
 * Memory per rank: the engine's own accounting (peak of every buffer it
 * held; 0 for the baselines, whose buffers are the benchmark's) and the
 * process's peak resident set (VmHWM, reset before each strategy through
 * /proc/self/clear_refs where Linux allows it, else the peak so far). A
 * reset sets the peak to the current resident set, which after s2 or s3
 * would still hold their freed buffers (glibc keeps freed heap), so the heap
 * is trimmed first (malloc_trim) and the resident set at the reset is
 * reported too (vmrss_kib_at_start).
 *
 * The engine's shuffle is opened before the clock starts, as the baselines
 * duplicate their communicator before it; its open time is in the JSON
 * (open_s).
 *
 * CPU: the seconds of user plus system time each rank used during the
 * strategy (its run and drain), as a fraction of the run's wall time, summed
 * over ranks: 2.0 would be both cores of the testbed machine.
 *
 * Waiting never spins: every loop that polls backs off after a pass that
 * found nothing to do (two more passes, then sleeps doubling from 1 us up
 * to 1 ms), the policy of the engine, so that 16 ranks on two cores leave
 * the CPU to the network stack and no strategy wins or loses by its way of
 * waiting.
 */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/resource.h>
#include <unistd.h>
/* Not under SimGrid: smpicc's helpers redefine malloc as a macro before
 * any header, which <malloc.h>'s prototypes cannot survive. */
#if defined(__GLIBC__) && !defined(WSP_SIMGRID)
#define WSP_BENCH_TRIM 1
#include <malloc.h>
#endif

#include "bench.h"
#include "opts.h"
#include "pattern.h"

enum { S1, S2, S3, ADAPTIVE, FIXED, NSTRAT };
static const char *const strat_names[NSTRAT] = {"s1", "s2", "s3", "adaptive",
                                                "fixed"};
enum { TAG_REQ = 11, TAG_RESP = 12 };
#define MAX_DURATION 86400.0
#define WINDOW_5S 5
#define PROBES_PER_PASS 64
#define BACKOFF_SPIN 2
#define BACKOFF_MAX_US 1000u

typedef struct opts {
  int strat[NSTRAT], nstrat;
  size_t req;
  long fold;
  double duration, rate, link;
  long s2_window;
  long seed;
  int dest_random; /* --dest random: uniform destinations, else round robin */
  const char *json, *label, *plot;
  int quiet, per_rank;
} opts_t;

static void usage(FILE *f) {
  fprintf(f,
          "usage: mpirun -np N wsp-bench shuffle [options]\n\n"
          "  --strategies LIST  among s1,s2,s3,adaptive,fixed (default\n"
          "                     s1,s2,s3,adaptive; s3 only with a rate); run\n"
          "                     one after the other\n"
          "  --req-size SIZE    request payload (default 1K; at least 1)\n"
          "  --fold N           response = N x request (default 100)\n"
          "  --duration SEC     seconds per strategy (default 10)\n"
          "  --link-rate RATE   NIC rate B of a host (e.g. 25mbit): goodput is\n"
          "                     also shown as a fraction of B\n"
          "  --rate RATE        s3 and fixed: goodput asked for per host\n"
          "                     (default: --link-rate; required for s3/fixed\n"
          "                     without it)\n"
          "  --s2-window N      s2/s3: unanswered requests per peer at most\n"
          "                     (default 32), only so that memory is bounded\n"
          "  --dest rr|random   destinations of s2's and the engine's\n"
          "                     requests: round robin (default) or uniformly\n"
          "                     random among the other ranks (s1 and s3 ask\n"
          "                     every other rank in each round)\n"
          "  --seed N           start of each rank's round robin, or seed of\n"
          "                     its random destinations (default 1)\n"
          "  --per-rank         per-second table per rank instead of per host\n"
          "  --json FILE        append JSON lines: a summary per strategy and\n"
          "                     one line per second\n"
          "  --label TEXT       free text stored in the JSON (e.g. testbed)\n"
          "  --plot PNG         after the run, draw goodput over time per\n"
          "                     strategy with python/wsp_plot.py (matplotlib)\n"
          "  --quiet            summary only\n\n"
          "Rates: bytes/s (3000000, 3MB) or bits/s in tc syntax (25mbit).\n"
          "Goodput = payload bytes of responses received per second per host\n"
          "from ranks on other hosts (all ranks when there is one host);\n"
          "Mbit/s = 1e6 bits/s. min5/mean = the lowest 5-second window of a\n"
          "host over its mean; the worst host is shown. all5/mean = the\n"
          "same for the mean over hosts of each second. Exit status 1 if a\n"
          "response had the wrong size.\n");
}

/* ---- polling without burning a core ---- */
typedef struct bo {
  unsigned idle, us;
} bo_t;

static void bo_reset(bo_t *b) {
  b->idle = 0;
  b->us = 1;
}

static void bo_idle(bo_t *b) {
  if (++b->idle <= BACKOFF_SPIN) return;
  struct timespec ts = {0, (long)b->us * 1000L};
  nanosleep(&ts, NULL);
  if (b->us < BACKOFF_MAX_US) b->us = b->us * 2 > BACKOFF_MAX_US ? BACKOFF_MAX_US : b->us * 2;
}

static void bo_step(bo_t *b, int progress) {
  if (progress)
    bo_reset(b);
  else
    bo_idle(b);
}

static void die(int rank, const char *what) {
  fprintf(stderr, "error: rank %d: %s\n", rank, what);
  MPI_Abort(MPI_COMM_WORLD, 1);
}

static void mpi_ok(int rc, int rank, const char *call) {
  if (rc != MPI_SUCCESS) die(rank, call);
}

/* ---- one strategy's run on this rank ---- */
typedef struct run {
  const opts_t *o;
  int rank, size, nhosts, myhost, host_ranks;
  const int *host; /* host index of every rank */
  MPI_Comm comm;   /* a duplicate of MPI_COMM_WORLD per strategy */
  size_t resp;
  double t0, t_end;
  int nsec;
  double *bytes;  /* per second: counted response payload */
  double *window; /* per second: the engine's pacing rate (B/s), else -1 */
  double *inflight; /* per second: the engine's volume in flight, else -1 */
  uint64_t requests, responses, bad;
  uint64_t rng; /* --dest random: splitmix64 state of (seed, rank) */
  wsp_shuffle_stats_t st;
  int have_st;
  char *req_buf, *resp_buf; /* static contents */
} run_t;

static void account(run_t *r, int src, size_t bytes) {
  r->responses++;
  if (bytes != r->resp) r->bad++;
  if (r->nhosts > 1 && r->host[src] == r->myhost) return;
  double s = floor(MPI_Wtime() - r->t0);
  if (s >= 0 && s < r->nsec) r->bytes[(int)s] += (double)bytes;
}

/* The next destination: round robin from *cursor, or with --dest random a
 * uniformly random rank other than this one (the modulo bias of a 64-bit
 * draw is below 1e-9 for any communicator size). */
static int next_peer(run_t *r, int *cursor) {
  if (r->o->dest_random && r->size > 1) {
    *cursor = (int)(wsp_splitmix64(&r->rng) % (uint64_t)(r->size - 1));
    if (*cursor >= r->rank) ++*cursor;
    return *cursor;
  }
  *cursor = (*cursor + 1) % r->size;
  if (*cursor == r->rank) *cursor = (*cursor + 1) % r->size;
  return *cursor;
}

/* Waits for n requests; receives among the first nrecv are accounted as
 * responses from src[i]. */
static void wait_all(run_t *r, int n, MPI_Request *reqs, int nrecv,
                     const int *src, int *idx) {
  int left = n;
  bo_t bo;
  bo_reset(&bo);
  while (left > 0) {
    int out = 0;
    mpi_ok(MPI_Testsome(n, reqs, &out, idx, MPI_STATUSES_IGNORE), r->rank,
           "MPI_Testsome");
    if (out == MPI_UNDEFINED) break;
    for (int i = 0; i < out; i++)
      if (idx[i] < nrecv) account(r, src[idx[i]], r->resp);
    left -= out;
    bo_step(&bo, out > 0);
  }
}

/* s1: synchronous request round, then response round. */
static void run_s1(run_t *r) {
  int p = r->size, n = p - 1;
  size_t req = r->o->req;
  if (n == 0) return;
  char *rin = malloc((size_t)p * req), *rout = malloc((size_t)p * req);
  char *respin = malloc((size_t)p * r->resp);
  MPI_Request *reqs = malloc(2 * (size_t)p * sizeof *reqs);
  int *src = malloc(2 * (size_t)p * sizeof *src), *idx = malloc(2 * (size_t)p * sizeof *idx);
  if (!rin || !rout || !respin || !reqs || !src || !idx) die(r->rank, "out of memory");
  for (;;) {
    char stop = MPI_Wtime() >= r->t_end;
    int k = 0;
    for (int q = 0; q < p; q++)
      if (q != r->rank) {
        src[k] = q;
        mpi_ok(MPI_Irecv(rin + (size_t)q * req, (int)req, MPI_BYTE, q, TAG_REQ,
                         r->comm, &reqs[k++]),
               r->rank, "MPI_Irecv");
      }
    for (int q = 0; q < p; q++)
      if (q != r->rank) {
        rout[(size_t)q * req] = stop;
        mpi_ok(MPI_Isend(rout + (size_t)q * req, (int)req, MPI_BYTE, q, TAG_REQ,
                         r->comm, &reqs[k++]),
               r->rank, "MPI_Isend");
      }
    wait_all(r, k, reqs, 0, src, idx);
    r->requests += (uint64_t)n;
    int any = stop;
    for (int q = 0; q < p; q++)
      if (q != r->rank) any |= rin[(size_t)q * req] != 0;
    k = 0;
    for (int q = 0; q < p; q++)
      if (q != r->rank) {
        src[k] = q;
        mpi_ok(MPI_Irecv(respin + (size_t)q * r->resp, (int)r->resp, MPI_BYTE,
                         q, TAG_RESP, r->comm, &reqs[k++]),
               r->rank, "MPI_Irecv");
      }
    for (int q = 0; q < p; q++)
      if (q != r->rank)
        mpi_ok(MPI_Isend(r->resp_buf, (int)r->resp, MPI_BYTE, q, TAG_RESP,
                         r->comm, &reqs[k++]),
               r->rank, "MPI_Isend");
    wait_all(r, k, reqs, n, src, idx);
    if (any) break;
  }
  free(rin);
  free(rout);
  free(respin);
  free(reqs);
  free(src);
  free(idx);
}

/* ---- s2 and s3: request and response servers ---- */
typedef struct reqlist {
  MPI_Request *r;
  int *src;
  char **buf;
  int n, cap;
} reqlist_t;

static void rl_push(reqlist_t *l, int rank, MPI_Request q, int src, char *buf) {
  if (l->n == l->cap) {
    l->cap = l->cap ? 2 * l->cap : 64;
    l->r = realloc(l->r, (size_t)l->cap * sizeof *l->r);
    l->src = realloc(l->src, (size_t)l->cap * sizeof *l->src);
    l->buf = realloc(l->buf, (size_t)l->cap * sizeof *l->buf);
    if (!l->r || !l->src || !l->buf) die(rank, "out of memory");
  }
  l->r[l->n] = q;
  l->src[l->n] = src;
  l->buf[l->n] = buf;
  l->n++;
}

static void rl_free(reqlist_t *l) {
  free(l->r);
  free(l->src);
  free(l->buf);
}

typedef struct srv {
  run_t *r;
  reqlist_t rsend, qsend, rrecv;
  long *out_peer, outstanding;
  char **pool; /* free response buffers */
  int npool, cappool;
  char *reqtmp;
  int *idx;
  int capidx;
} srv_t;

/* Completes what it can in l; on_done(i) for each completed entry. */
static int rl_test(srv_t *s, reqlist_t *l, int recv) {
  if (l->n == 0) return 0;
  if (s->capidx < l->n) {
    s->capidx = l->n;
    s->idx = realloc(s->idx, (size_t)s->capidx * sizeof *s->idx);
    if (!s->idx) die(s->r->rank, "out of memory");
  }
  int out = 0;
  mpi_ok(MPI_Testsome(l->n, l->r, &out, s->idx, MPI_STATUSES_IGNORE),
         s->r->rank, "MPI_Testsome");
  if (out == MPI_UNDEFINED || out == 0) return 0;
  for (int i = 0; i < out; i++) {
    int j = s->idx[i];
    if (recv) {
      account(s->r, l->src[j], s->r->resp);
      s->out_peer[l->src[j]]--;
      s->outstanding--;
      if (s->npool == s->cappool) {
        s->cappool = s->cappool ? 2 * s->cappool : 64;
        s->pool = realloc(s->pool, (size_t)s->cappool * sizeof *s->pool);
        if (!s->pool) die(s->r->rank, "out of memory");
      }
      s->pool[s->npool++] = l->buf[j];
    }
  }
  int k = 0; /* compact: completed requests are MPI_REQUEST_NULL now */
  for (int j = 0; j < l->n; j++)
    if (l->r[j] != MPI_REQUEST_NULL) {
      l->r[k] = l->r[j];
      l->src[k] = l->src[j];
      l->buf[k] = l->buf[j];
      k++;
    }
  l->n = k;
  return 1;
}

/* One pass of both servers. */
static int serve(srv_t *s) {
  run_t *r = s->r;
  int progress = 0;
  for (int i = 0; i < PROBES_PER_PASS; i++) { /* the request server */
    int flag = 0;
    MPI_Status st;
    mpi_ok(MPI_Iprobe(MPI_ANY_SOURCE, TAG_REQ, r->comm, &flag, &st), r->rank,
           "MPI_Iprobe");
    if (!flag) break;
    mpi_ok(MPI_Recv(s->reqtmp, (int)r->o->req, MPI_BYTE, st.MPI_SOURCE, TAG_REQ,
                    r->comm, MPI_STATUS_IGNORE),
           r->rank, "MPI_Recv");
    MPI_Request q;
    mpi_ok(MPI_Isend(r->resp_buf, (int)r->resp, MPI_BYTE, st.MPI_SOURCE,
                     TAG_RESP, r->comm, &q),
           r->rank, "MPI_Isend");
    rl_push(&s->rsend, r->rank, q, st.MPI_SOURCE, NULL);
    progress = 1;
  }
  for (int i = 0; i < PROBES_PER_PASS; i++) { /* the response server */
    int flag = 0, count = 0;
    MPI_Status st;
    mpi_ok(MPI_Iprobe(MPI_ANY_SOURCE, TAG_RESP, r->comm, &flag, &st), r->rank,
           "MPI_Iprobe");
    if (!flag) break;
    mpi_ok(MPI_Get_count(&st, MPI_BYTE, &count), r->rank, "MPI_Get_count");
    if ((size_t)count != r->resp) r->bad++;
    char *buf = s->npool ? s->pool[--s->npool] : malloc(r->resp ? r->resp : 1);
    if (!buf) die(r->rank, "out of memory");
    MPI_Request q;
    mpi_ok(MPI_Irecv(buf, (int)r->resp, MPI_BYTE, st.MPI_SOURCE, TAG_RESP,
                     r->comm, &q),
           r->rank, "MPI_Irecv");
    rl_push(&s->rrecv, r->rank, q, st.MPI_SOURCE, buf);
    progress = 1;
  }
  progress |= rl_test(s, &s->rrecv, 1);
  progress |= rl_test(s, &s->rsend, 0);
  progress |= rl_test(s, &s->qsend, 0);
  return progress;
}

static void send_request(srv_t *s, int q) {
  MPI_Request rq;
  mpi_ok(MPI_Isend(s->r->req_buf, (int)s->r->o->req, MPI_BYTE, q, TAG_REQ,
                   s->r->comm, &rq),
         s->r->rank, "MPI_Isend");
  rl_push(&s->qsend, s->r->rank, rq, q, NULL);
  s->out_peer[q]++;
  s->outstanding++;
  s->r->requests++;
}

/* s2 (rate <= 0) or s3 (rate = this rank's share, bytes/s). */
static void run_servers(run_t *r, double rate) {
  srv_t s;
  memset(&s, 0, sizeof s);
  s.r = r;
  s.out_peer = calloc((size_t)r->size, sizeof *s.out_peer);
  s.reqtmp = malloc(r->o->req);
  if (!s.out_peer || !s.reqtmp) die(r->rank, "out of memory");
  int cursor = (int)((r->rank + r->o->seed) % r->size);
  const long cap = r->o->s2_window;
  /* s3: one batch = a request to every other rank; then sleep for the
   * time the batch's responses take at `rate`. */
  const double pause = rate > 0 ? (double)(r->size - 1) * (double)r->resp / rate : 0;
  double next_batch = 0;
  bo_t bo;
  bo_reset(&bo);
  while (MPI_Wtime() < r->t_end) {
    int progress = 0;
    if (r->size > 1 && rate <= 0) { /* s2: as fast as possible */
      for (int k = 0; k < r->size - 1; k++) {
        int q = next_peer(r, &cursor);
        if (s.out_peer[q] < cap) {
          send_request(&s, q);
          progress = 1;
        }
      }
    } else if (r->size > 1 && MPI_Wtime() >= next_batch) { /* s3 */
      for (int q = 0; q < r->size; q++)
        if (q != r->rank && s.out_peer[q] < cap) send_request(&s, q);
      next_batch = MPI_Wtime() + pause;
      progress = 1;
    }
    progress |= serve(&s);
    bo_step(&bo, progress);
  }
  /* Drain: own requests answered, then a non-blocking barrier while still
   * serving, then the last sends complete. */
  while (s.outstanding > 0) bo_step(&bo, serve(&s));
  MPI_Request bar;
  mpi_ok(MPI_Ibarrier(r->comm, &bar), r->rank, "MPI_Ibarrier");
  for (;;) {
    int done = 0;
    mpi_ok(MPI_Test(&bar, &done, MPI_STATUS_IGNORE), r->rank, "MPI_Test");
    if (done) break;
    bo_step(&bo, serve(&s));
  }
  while (s.rsend.n || s.qsend.n) bo_step(&bo, serve(&s));
  for (int i = 0; i < s.npool; i++) free(s.pool[i]);
  free(s.pool);
  free(s.out_peer);
  free(s.reqtmp);
  free(s.idx);
  rl_free(&s.rsend);
  rl_free(&s.qsend);
  rl_free(&s.rrecv);
}

/* ---- the engine ---- */
static int on_request(void *user, int src, const void *req, size_t n,
                      wsp_shuffle_reply_t *reply) {
  run_t *r = user;
  return wsp_shuffle_reply(reply, r->resp_buf, r->resp) == WSP_OK ? 0 : 1;
}

static int on_response(void *user, int dst, const void *req, size_t n,
                       const void *resp, size_t m) {
  account(user, dst, m);
  return 0;
}

/* Opens the engine's shuffle (collective; before the clock starts, as the
 * baselines duplicate their communicator before it). */
static wsp_shuffle_t *open_engine(run_t *r, wsp_comm_t *comm, int fixed,
                                  double rate) {
  wsp_shuffle_config_t cfg;
  wsp_shuffle_config_init(&cfg);
  if (wsp_shuffle_config_from_env(&cfg) != WSP_OK) die(r->rank, wsp_last_error());
  if (fixed) {
    cfg.mode = WSP_SHUFFLE_FIXED;
    /* --rate is response goodput; the engine paces requests + responses. */
    cfg.rate = rate * (double)(r->o->req + r->resp) / (double)r->resp;
  } else {
    cfg.mode = WSP_SHUFFLE_ADAPTIVE;
    cfg.rate = 0;
  }
  const wsp_shuffle_handlers_t h = {on_request, on_response};
  wsp_shuffle_t *sh = NULL;
  if (wsp_shuffle_open(comm, &cfg, &h, r, &sh) != WSP_OK) die(r->rank, wsp_last_error());
  return sh;
}

static void run_engine(run_t *r, wsp_shuffle_t *sh) {
  int cursor = (int)((r->rank + r->o->seed) % r->size);
  int sec = 0;
  double now;
  while ((now = MPI_Wtime()) < r->t_end) {
    while (sec < r->nsec && now - r->t0 >= sec) {
      wsp_shuffle_stats_t st;
      wsp_shuffle_stats(sh, &st);
      r->window[sec] = st.rate;
      r->inflight[sec++] = st.inflight;
    }
    if (r->size == 1) break;
    if (wsp_shuffle_post(sh, next_peer(r, &cursor), r->req_buf, r->o->req) != WSP_OK)
      die(r->rank, wsp_last_error());
    r->requests++;
  }
  if (wsp_shuffle_close(sh, &r->st) != WSP_OK) die(r->rank, wsp_last_error());
  r->have_st = 1;
  wsp_shuffle_free(&sh);
}

static double cpu_seconds(void) {
  struct rusage u;
  if (getrusage(RUSAGE_SELF, &u) != 0) return 0;
  return (double)u.ru_utime.tv_sec + 1e-6 * (double)u.ru_utime.tv_usec +
         (double)u.ru_stime.tv_sec + 1e-6 * (double)u.ru_stime.tv_usec;
}

/* ---- memory ---- */
static void hwm_reset(void) {
  FILE *f = fopen("/proc/self/clear_refs", "w");
  if (f) {
    fputs("5", f); /* resets the peak RSS (Linux >= 4.0) */
    fclose(f);
  }
}

/* A field of /proc/self/status in KiB ("VmHWM:", "VmRSS:"); -1 if none. */
static long status_kib(const char *field) {
  FILE *f = fopen("/proc/self/status", "r");
  long kib = -1;
  char line[256];
  size_t n = strlen(field);
  while (f && fgets(line, sizeof line, f))
    if (strncmp(line, field, n) == 0) kib = strtol(line + n, NULL, 10);
  if (f) fclose(f);
  return kib;
}

/* ---- JSON ---- */
static void json_line(FILE *const *files, json_t *o) {
  char *s = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(8));
  for (int i = 0; i < 2 && s; i++)
    if (files[i]) {
      fprintf(files[i], "%s\n", s);
      fflush(files[i]);
    }
  free(s);
  json_decref(o);
}

/* The keys every JSON line of this benchmark starts with. */
static json_t *json_head(const char *kind, const char *strategy, const char *label,
                         int p, int hosts) {
  json_t *j = json_object();
  json_object_set_new(j, "bench", json_string("shuffle"));
  json_object_set_new(j, "kind", json_string(kind));
  json_object_set_new(j, "strategy", json_string(strategy));
  json_object_set_new(j, "label", json_string(label));
  json_object_set_new(j, "p", json_integer(p));
  json_object_set_new(j, "hosts", json_integer(hosts));
  return j;
}

/* The lowest mean of w consecutive seconds of x[0..n) divided by the mean of
 * all n; 0 when the mean is 0. With w >= n it is 1 (one window, the mean). */
static double min_window_ratio(const double *x, int n, int w) {
  if (n <= 0) return 0;
  if (w > n) w = n;
  double s = 0, lo = 1e300;
  for (int t = 0; t < n; t++) s += x[t];
  for (int t = 0; t + w <= n; t++) {
    double ws = 0;
    for (int k = 0; k < w; k++) ws += x[t + k];
    if (ws / w < lo) lo = ws / w;
  }
  return s > 0 ? lo / (s / n) : 0;
}

static json_t *json_doubles(const double *v, int n) {
  json_t *a = json_array();
  for (int i = 0; i < n; i++) json_array_append_new(a, json_real(v[i]));
  return a;
}

static int parse_strategies(const char *opt, const char *v, opts_t *o, int rank) {
  char buf[256];
  snprintf(buf, sizeof buf, "%s", v);
  o->nstrat = 0;
  for (char *sv = NULL, *t = strtok_r(buf, ",", &sv); t; t = strtok_r(NULL, ",", &sv)) {
    int found = -1;
    for (int i = 0; i < NSTRAT; i++)
      if (!strcmp(t, strat_names[i])) found = i;
    if (found < 0 || o->nstrat == NSTRAT) {
      if (rank == 0)
        fprintf(stderr,
                "error: %s: \"%s\" is not a strategy (s1, s2, s3, adaptive, "
                "fixed)\n",
                opt, t);
      return 1;
    }
    o->strat[o->nstrat++] = found;
  }
  if (o->nstrat == 0) {
    if (rank == 0) fprintf(stderr, "error: %s: empty list\n", opt);
    return 1;
  }
  return 0;
}

int wsp_bench_shuffle(int argc, char **argv, int rank, int size,
                      wsp_bench_post_t *post) {
  opts_t o = {.strat = {S1, S2, S3, ADAPTIVE}, .nstrat = 4, .req = 1024,
              .fold = 100, .duration = 10, .rate = 0, .link = 0,
              .s2_window = 32, .seed = 1, .label = ""};
  memset(post, 0, sizeof *post);
  int explicit_strategies = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    int bad = 0;
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      if (rank == 0) usage(stdout);
      return 0;
    } else if (!strcmp(a, "--quiet")) {
      o.quiet = 1;
      continue;
    } else if (!strcmp(a, "--per-rank")) {
      o.per_rank = 1;
      continue;
    }
    if (v == NULL) {
      if (rank == 0) fprintf(stderr, "error: %s needs a value (see --help)\n", a);
      return 2;
    }
    i++;
    if (!strcmp(a, "--strategies")) {
      bad = parse_strategies(a, v, &o, rank);
      explicit_strategies = 1;
    }
    else if (!strcmp(a, "--req-size"))
      bad = wsp_opt_size(a, v, &o.req) || o.req == 0 || o.req > (1u << 20);
    else if (!strcmp(a, "--fold"))
      bad = wsp_opt_int(a, v, 1, 100000, &o.fold);
    else if (!strcmp(a, "--duration"))
      bad = wsp_opt_seconds(a, v, 1, MAX_DURATION, &o.duration);
    else if (!strcmp(a, "--rate"))
      bad = wsp_opt_rate(a, v, &o.rate);
    else if (!strcmp(a, "--link-rate"))
      bad = wsp_opt_rate(a, v, &o.link);
    else if (!strcmp(a, "--s2-window"))
      bad = wsp_opt_int(a, v, 1, 1000000, &o.s2_window);
    else if (!strcmp(a, "--dest")) {
      bad = strcmp(v, "rr") != 0 && strcmp(v, "random") != 0;
      if (bad && rank == 0)
        fprintf(stderr, "error: --dest: \"%s\" is neither rr nor random\n", v);
      o.dest_random = !strcmp(v, "random");
    } else if (!strcmp(a, "--seed"))
      bad = wsp_opt_int(a, v, 0, 1L << 40, &o.seed);
    else if (!strcmp(a, "--json"))
      o.json = v;
    else if (!strcmp(a, "--label"))
      o.label = v;
    else if (!strcmp(a, "--plot"))
      o.plot = v;
    else {
      if (rank == 0) fprintf(stderr, "error: unknown option %s (see --help)\n", a);
      return 2;
    }
    if (bad) {
      if (rank == 0 && !strcmp(a, "--req-size") && (o.req == 0 || o.req > (1u << 20)))
        fprintf(stderr, "error: --req-size: between 1 and 1M\n");
      return 2;
    }
  }
  size_t resp = o.req * (size_t)o.fold;
  if (resp > (size_t)1 << 30) {
    if (rank == 0)
      fprintf(stderr, "error: --req-size x --fold = %zu bytes: at most 1G per "
                      "response\n", resp);
    return 2;
  }
  if (!(o.rate > 0)) o.rate = o.link;
  if (!(o.rate > 0) && !explicit_strategies) { /* the default list: no s3 */
    int k = 0;
    for (int i = 0; i < o.nstrat; i++)
      if (o.strat[i] != S3) o.strat[k++] = o.strat[i];
    o.nstrat = k;
    if (rank == 0)
      printf("# s3 left out: it needs --rate or --link-rate (G-thinker's rule "
             "paces at a chosen rate)\n");
  }
  for (int i = 0; i < o.nstrat; i++)
    if ((o.strat[i] == S3 || o.strat[i] == FIXED) && !(o.rate > 0)) {
      if (rank == 0)
        fprintf(stderr, "error: %s needs --rate (or --link-rate, its default)\n",
                strat_names[o.strat[i]]);
      return 2;
    }

  /* Hosts: ranks with the same processor name (MPI_Get_processor_name
   * names the host; each netlab namespace has its own hostname). Not
   * MPI_Comm_split_type(MPI_COMM_TYPE_SHARED): under Open MPI 4.1.4 on
   * netlab with two ranks per host it gave inconsistent groups (ranks 0
   * and 1 saw a node of 3, ranks 2 and 3 one of 2), and a collective on the
   * result hung. */
  int *host = malloc((size_t)size * sizeof *host);
  char *names = malloc((size_t)size * (MPI_MAX_PROCESSOR_NAME + 1));
  char myname[MPI_MAX_PROCESSOR_NAME + 1];
  if (!host || !names) die(rank, "out of memory");
  memset(myname, 0, sizeof myname);
  int namelen = 0;
  mpi_ok(MPI_Get_processor_name(myname, &namelen), rank, "MPI_Get_processor_name");
  mpi_ok(MPI_Allgather(myname, MPI_MAX_PROCESSOR_NAME + 1, MPI_CHAR, names,
                       MPI_MAX_PROCESSOR_NAME + 1, MPI_CHAR, MPI_COMM_WORLD),
         rank, "MPI_Allgather");
  int nhosts = 0;
  for (int i = 0; i < size; i++) {
    int h = -1;
    for (int j = 0; j < i && h < 0; j++)
      if (!strcmp(names + (size_t)j * (MPI_MAX_PROCESSOR_NAME + 1),
                  names + (size_t)i * (MPI_MAX_PROCESSOR_NAME + 1)))
        h = host[j];
    host[i] = h >= 0 ? h : nhosts++;
  }
  int host_ranks = 0;
  for (int i = 0; i < size; i++) host_ranks += host[i] == host[rank];
  free(names);

  wsp_comm_t *comm = NULL;
  if (wsp_comm_create(MPI_COMM_WORLD, NULL, &comm) != WSP_OK) die(rank, wsp_last_error());

  const char *mpiv = wsp_bench_mpi_version();
  FILE *files[2] = {wsp_bench_json_open(o.json, rank), NULL};
  if (rank == 0 && o.json && files[0] == NULL) {
    fprintf(stderr, "error: --json: cannot open %s\n", o.json);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  if (rank == 0 && o.plot) {
    const char *tmp = getenv("TMPDIR");
    snprintf(post->json_tmp, sizeof post->json_tmp, "%s/wsp-bench-json-XXXXXX",
             tmp && *tmp ? tmp : "/tmp");
    int fd = mkstemp(post->json_tmp);
    if (fd < 0 || (files[1] = fdopen(fd, "w")) == NULL) {
      fprintf(stderr, "error: --plot: cannot create %s: %s\n", post->json_tmp,
              strerror(errno));
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
    post->plot_png = o.plot;
    snprintf(post->title, sizeof post->title,
             "wsp-bench shuffle, p = %d, %d hosts%s%s", size, nhosts,
             *o.label ? ", " : "", o.label);
  }

  const int nsec = (int)floor(o.duration);
  const double B = o.link;
  char rq[32];
  wsp_fmt_size(o.req, rq, sizeof rq);
  if (rank == 0) {
    printf("# wsp-bench shuffle: p=%d on %d host(s), request %s, fold %ld "
           "(response %zu bytes), %g s per strategy, %s\n",
           size, nhosts, rq, o.fold, resp, o.duration, mpiv);
    printf("# goodput: response payload received %s, Mbit/s = 1e6 bit/s%s\n",
           nhosts > 1 ? "from other hosts, per host" : "(one host: all ranks)",
           B > 0 ? "; frac = goodput / B" : "");
    if (B > 0) printf("# B = %.3f Mbit/s\n", B * 8e-6);
    fflush(stdout);
  }

  double *bytes = calloc((size_t)nsec, sizeof *bytes);
  double *window = malloc((size_t)nsec * sizeof *window);
  double *inflight = malloc((size_t)nsec * sizeof *inflight);
  double *iall = rank == 0 ? malloc((size_t)size * nsec * sizeof *iall) : NULL;
  double *all = rank == 0 ? malloc((size_t)size * nsec * sizeof *all) : NULL;
  double *wall = rank == 0 ? malloc((size_t)size * nsec * sizeof *wall) : NULL;
  double *hostsum = rank == 0 ? malloc((size_t)nhosts * nsec * sizeof *hostsum) : NULL;
  long *hwm = rank == 0 ? malloc((size_t)size * sizeof *hwm) : NULL;
  char *req_buf = malloc(o.req), *resp_buf = malloc(resp ? resp : 1);
  if (!bytes || !window || !inflight || !req_buf || !resp_buf ||
      (rank == 0 && (!all || !wall || !iall || !hostsum || !hwm)))
    die(rank, "out of memory");
  memset(req_buf, 0, o.req);
  for (size_t i = 0; i < resp; i++) resp_buf[i] = (char)(i * 131 + 7);

  json_t *summaries = json_array();
  uint64_t bad_total = 0;
  for (int si = 0; si < o.nstrat; si++) {
    int sgy = o.strat[si];
    run_t r = {.o = &o, .rank = rank, .size = size, .nhosts = nhosts,
               .myhost = host[rank], .host_ranks = host_ranks, .host = host,
               .resp = resp, .nsec = nsec, .bytes = bytes, .window = window,
               .inflight = inflight,
               .req_buf = req_buf, .resp_buf = resp_buf,
               .rng = ((uint64_t)o.seed << 24) ^ (uint64_t)rank};
    memset(bytes, 0, (size_t)nsec * sizeof *bytes);
    for (int i = 0; i < nsec; i++) window[i] = inflight[i] = -1;
    if (MPI_Comm_dup(MPI_COMM_WORLD, &r.comm) != MPI_SUCCESS) die(rank, "MPI_Comm_dup");
#ifdef WSP_BENCH_TRIM
    malloc_trim(0);
#endif
    hwm_reset();
    long rss0 = status_kib("VmRSS:");
    double rate_rank = o.rate / (double)host_ranks;
    double t_open = MPI_Wtime();
    wsp_shuffle_t *sh = sgy == ADAPTIVE || sgy == FIXED
                            ? open_engine(&r, comm, sgy == FIXED, rate_rank)
                            : NULL;
    t_open = MPI_Wtime() - t_open;
    MPI_Barrier(MPI_COMM_WORLD);
    double cpu0 = cpu_seconds();
    r.t0 = MPI_Wtime();
    r.t_end = r.t0 + o.duration;
    switch (sgy) {
      case S1: run_s1(&r); break;
      case S2: run_servers(&r, 0); break;
      case S3: run_servers(&r, rate_rank); break;
      case ADAPTIVE:
      case FIXED: run_engine(&r, sh); break;
    }
    double t_done = MPI_Wtime() - r.t0;
    double cpu = cpu_seconds() - cpu0, cpu_sum = 0, open_max = 0;
    MPI_Reduce(&cpu, &cpu_sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(&t_open, &open_max, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Comm_free(&r.comm);
    long myhwm = status_kib("VmHWM:");
    unsigned long long mine[4] = {r.requests, r.responses, r.bad, 0}, tot[4];
    MPI_Reduce(mine, tot, 3, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    unsigned long long emem[2] = {r.have_st ? r.st.mem_peak : 0,
                                  r.have_st ? r.st.mem_limit : 0}, emax[2];
    MPI_Reduce(emem, emax, 2, MPI_UNSIGNED_LONG_LONG, MPI_MAX, 0, MPI_COMM_WORLD);
    double tmax = 0;
    MPI_Reduce(&t_done, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Gather(bytes, nsec, MPI_DOUBLE, all, nsec, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    MPI_Gather(window, nsec, MPI_DOUBLE, wall, nsec, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    MPI_Gather(inflight, nsec, MPI_DOUBLE, iall, nsec, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    MPI_Gather(&myhwm, 1, MPI_LONG, hwm, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    long rss0_max = 0;
    MPI_Reduce(&rss0, &rss0_max, 1, MPI_LONG, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank != 0) continue;
    bad_total += tot[2];

    /* Per host and second, then the summary. */
    for (int i = 0; i < nhosts * nsec; i++) hostsum[i] = 0;
    for (int q = 0; q < size; q++)
      for (int t = 0; t < nsec; t++) hostsum[host[q] * nsec + t] += all[q * nsec + t];
    const int ncol = o.per_rank ? size : nhosts;
    const double *tab = o.per_rank ? all : hostsum;
    if (!o.quiet) {
      printf("\n== %s: goodput per %s and second (Mbit/s)\n%4s", strat_names[sgy],
             o.per_rank ? "rank" : "host", "t");
      for (int c = 0; c < ncol; c++) printf(" %5s%-2d", o.per_rank ? "r" : "h", c);
      printf(" %7s%s\n", "mean", B > 0 ? "   frac" : "");
      for (int t = 0; t < nsec; t++) {
        double m = 0;
        printf("%4d", t);
        for (int c = 0; c < ncol; c++) {
          printf(" %7.2f", tab[c * nsec + t] * 8e-6);
          m += tab[c * nsec + t];
        }
        m /= ncol;
        printf(" %7.2f", m * 8e-6);
        if (B > 0) printf(" %6.3f", m / B);
        printf("\n");
      }
    }
    double *hmean = malloc((size_t)nhosts * sizeof *hmean);
    double *hratio = malloc((size_t)nhosts * sizeof *hratio);
    /* hostavg: the mean over hosts of each second, for the second reading of
     * "no 5-s window below 0.8 of its own mean" (the strategy's, not a
     * host's); the per-host reading (the worst host) stays the headline. */
    double *hostavg = calloc((size_t)(nsec > 0 ? nsec : 1), sizeof *hostavg);
    if (!hmean || !hratio || !hostavg) die(rank, "out of memory for the summary");
    double mean = 0, minmean = 1e300, worst = 1e300;
    for (int h = 0; h < nhosts; h++) {
      double s = 0;
      for (int t = 0; t < nsec; t++) {
        s += hostsum[h * nsec + t];
        hostavg[t] += hostsum[h * nsec + t] / nhosts;
      }
      hmean[h] = s / nsec;
      hratio[h] = min_window_ratio(hostsum + (size_t)h * nsec, nsec, WINDOW_5S);
      mean += hmean[h] / nhosts;
      if (hmean[h] < minmean) minmean = hmean[h];
      if (hratio[h] < worst) worst = hratio[h];
    }
    const double allratio = min_window_ratio(hostavg, nsec, WINDOW_5S);
    free(hostavg);
    long hwm_max = 0;
    for (int q = 0; q < size; q++)
      if (hwm[q] > hwm_max) hwm_max = hwm[q];
    json_t *sj = json_head("summary", strat_names[sgy], o.label, size, nhosts);
    json_object_set_new(sj, "mpi", json_string(mpiv));
    json_object_set_new(sj, "req_bytes", json_integer((json_int_t)o.req));
    json_object_set_new(sj, "fold", json_integer(o.fold));
    json_object_set_new(sj, "resp_bytes", json_integer((json_int_t)resp));
    json_object_set_new(sj, "duration_s", json_real(o.duration));
    json_object_set_new(sj, "finished_s", json_real(tmax));
    json_object_set_new(sj, "open_s",
                        sgy >= ADAPTIVE ? json_real(open_max) : json_null());
    json_object_set_new(sj, "cpu_s_sum", json_real(cpu_sum));
    json_object_set_new(sj, "cpu_cores", json_real(tmax > 0 ? cpu_sum / tmax : 0));
    json_object_set_new(sj, "link_Bps", B > 0 ? json_real(B) : json_null());
    json_object_set_new(sj, "rate_Bps",
                        sgy == S3 || sgy == FIXED ? json_real(o.rate) : json_null());
    json_object_set_new(sj, "dest", json_string(sgy == S1 || sgy == S3 ? "all"
                                                : o.dest_random ? "random" : "rr"));
    json_object_set_new(sj, "seed", json_integer((json_int_t)o.seed));
    json_object_set_new(sj, "s2_window",
                        sgy == S2 || sgy == S3 ? json_integer(o.s2_window) : json_null());
    json_object_set_new(sj, "counted",
                        json_string(nhosts > 1
                                        ? "payload bytes of responses received "
                                          "from ranks on other hosts, per host "
                                          "and second"
                                        : "payload bytes of responses received, "
                                          "per host and second (one host)"));
    json_object_set_new(sj, "goodput_host_Bps", json_doubles(hmean, nhosts));
    json_object_set_new(sj, "mean_Bps", json_real(mean));
    json_object_set_new(sj, "frac_B_mean", B > 0 ? json_real(mean / B) : json_null());
    json_object_set_new(sj, "frac_B_min_host", B > 0 ? json_real(minmean / B) : json_null());
    json_object_set_new(sj, "min5s_over_mean_per_host", json_doubles(hratio, nhosts));
    json_object_set_new(sj, "min5s_over_mean_worst", json_real(worst));
    json_object_set_new(sj, "min5s_over_mean_all_hosts", json_real(allratio));
    json_object_set_new(sj, "requests", json_integer((json_int_t)tot[0]));
    json_object_set_new(sj, "responses", json_integer((json_int_t)tot[1]));
    json_object_set_new(sj, "bad_responses", json_integer((json_int_t)tot[2]));
    json_object_set_new(sj, "engine_mem_peak_max",
                        sgy >= ADAPTIVE ? json_integer((json_int_t)emax[0]) : json_null());
    json_object_set_new(sj, "engine_mem_limit",
                        sgy >= ADAPTIVE ? json_integer((json_int_t)emax[1]) : json_null());
    json_t *hw = json_array();
    for (int q = 0; q < size; q++) json_array_append_new(hw, json_integer(hwm[q]));
    json_object_set_new(sj, "vmhwm_kib_per_rank", hw);
    json_object_set_new(sj, "vmhwm_kib_max", json_integer(hwm_max));
    json_object_set_new(sj, "vmrss_kib_at_start_max", json_integer(rss0_max));
    json_object_set_new(sj, "wirespeed", json_string(wsp_version_string()));
    json_array_append(summaries, sj);
    json_line(files, sj);
    for (int t = 0; t < nsec && (files[0] || files[1]); t++) {
      json_t *j = json_head("second", strat_names[sgy], o.label, size, nhosts);
      double hv[4096], rv[4096], wsum = 0, isum = 0;
      int nw = 0;
      for (int h = 0; h < nhosts && h < 4096; h++) hv[h] = hostsum[h * nsec + t];
      for (int q = 0; q < size && q < 4096; q++) {
        rv[q] = all[q * nsec + t];
        if (wall[q * nsec + t] >= 0) {
          wsum += wall[q * nsec + t];
          isum += iall[q * nsec + t];
          nw++;
        }
      }
      json_object_set_new(j, "t", json_integer(t));
      json_object_set_new(j, "link_Bps", B > 0 ? json_real(B) : json_null());
      json_object_set_new(j, "goodput_host_Bps", json_doubles(hv, nhosts < 4096 ? nhosts : 4096));
      json_object_set_new(j, "goodput_rank_Bps", json_doubles(rv, size < 4096 ? size : 4096));
      json_object_set_new(j, "rate_mean_Bps", nw ? json_real(wsum / nw) : json_null());
      /* Each rank's pacing rate, to tell a controller's decrease from the
       * network's doing when one host's goodput dips (null: not paced). */
      json_t *rr = json_array();
      for (int q = 0; q < size && q < 4096; q++)
        json_array_append_new(rr, wall[q * nsec + t] >= 0 ? json_real(wall[q * nsec + t])
                                                          : json_null());
      json_object_set_new(j, "rate_rank_Bps", rr);
      json_object_set_new(j, "inflight_mean_bytes", nw ? json_real(isum / nw) : json_null());
      json_line(files, j);
    }
    free(hmean);
    free(hratio);
    fflush(stdout);
  }
  if (rank == 0) {
    printf("\n# summary: goodput per host (mean over hosts and seconds)%s; "
           "min5/mean = worst host's lowest 5-s window / its mean; all5/mean "
           "= the same for the mean over hosts; engine "
           "memory = peak of the engine's own accounting, max over ranks; "
           "VmHWM = peak resident set, max over ranks; cores = CPU seconds of "
           "all ranks / wall seconds\n",
           B > 0 ? ", frac = / B" : "");
    printf("%-9s %10s %8s %10s %9s %9s %12s %10s %12s %6s\n", "strategy", "Mbit/s",
           B > 0 ? "frac" : "-", B > 0 ? "min-host" : "-", "min5/mean", "all5/mean",
           "engine-KiB", "VmHWM-MiB", "requests", "cores");
    size_t n = json_array_size(summaries);
    for (size_t i = 0; i < n; i++) {
      json_t *s = json_array_get(summaries, i);
      double m = json_real_value(json_object_get(s, "mean_Bps"));
      json_t *e = json_object_get(s, "engine_mem_peak_max");
      printf("%-9s %10.2f", json_string_value(json_object_get(s, "strategy")),
             m * 8e-6);
      if (B > 0)
        printf(" %8.3f %10.3f", m / B,
               json_real_value(json_object_get(s, "frac_B_min_host")));
      else
        printf(" %8s %10s", "-", "-");
      printf(" %9.3f %9.3f", json_real_value(json_object_get(s, "min5s_over_mean_worst")),
             json_real_value(json_object_get(s, "min5s_over_mean_all_hosts")));
      if (json_is_integer(e))
        printf(" %12.1f", (double)json_integer_value(e) / 1024.0);
      else
        printf(" %12s", "-");
      printf(" %10.1f %12lld %6.2f\n",
             (double)json_integer_value(json_object_get(s, "vmhwm_kib_max")) / 1024.0,
             (long long)json_integer_value(json_object_get(s, "requests")),
             json_real_value(json_object_get(s, "cpu_cores")));
    }
    if (bad_total)
      fprintf(stderr, "error: %llu responses had the wrong size\n",
              (unsigned long long)bad_total);
    fflush(stdout);
  }
  json_decref(summaries);
  wsp_comm_free(&comm);
  for (int i = 0; i < 2; i++)
    if (files[i]) fclose(files[i]);
  free(bytes);
  free(window);
  free(inflight);
  free(iall);
  free(all);
  free(wall);
  free(hostsum);
  free(hwm);
  free(host);
  free(req_buf);
  free(resp_buf);
  int anybad = bad_total > 0;
  MPI_Bcast(&anybad, 1, MPI_INT, 0, MPI_COMM_WORLD);
  return anybad ? 1 : 0;
}
