/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * wsp-bench shuffle — goodput of all-pairs request/response traffic.
 *
 * Every rank keeps asking every other rank for data: a request of --req-size
 * bytes is answered by a response --fold times larger (G-thinker's
 * experiment: 1 KiB, fold 100). Each strategy runs for --seconds seconds,
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
 *             response volume divided by --target-rate), during which the
 *             servers keep serving. --target-rate is the goodput asked for per
 *             host (divided among the host's ranks) and is what G-thinker
 *             tunes by hand per cluster; it defaults to --link-rate.
 *   adaptive  wsp_shuffle (src/exchange/shuffle.c), adaptive pacing: each
 *             rank posts requests round robin to the other ranks as fast
 *             as wsp_shuffle_post accepts them.
 *   fixed     the same engine in fixed-rate mode (WSP_SHUFFLE_RATE) at
 *             --target-rate per host: the hand-tuned approach done smoothly.
 *
 * What is counted (goodput): the payload bytes of responses received per
 * second per host, from ranks on other hosts (responses between ranks of one
 * host never touch its NIC). With one host (loopback) every response counts.
 * A response is counted in the second in which its receive completed,
 * seconds measured from a barrier at the start of the strategy; what arrives
 * after --seconds (while a strategy drains) is not counted. The table
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
 * Hosts are wirespeed's nodes (wsp_comm_node): ranks with the same
 * processor name (each netlab namespace has its own host name), or the
 * grouping WSP_NODES sets, so the benchmark and the library's node-aware
 * code count hosts the same way.
 *
 * Waiting never spins: every loop that polls backs off after a pass that
 * found nothing to do (two more passes, then sleeps doubling from 1 us up
 * to 1 ms), the policy of the engine, so that 16 ranks on two cores leave
 * the CPU to the network stack and no strategy wins or loses by its way of
 * waiting.
 */
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
#include "pattern.h"
#include "stats.h"

enum { S1, S2, S3, ADAPTIVE, FIXED, NSTRAT };
static const char *const strat_names[NSTRAT + 1] = {"s1", "s2", "s3", "adaptive",
                                                    "fixed", NULL};
static const char *const dest_names[] = {"rr", "random", NULL};
enum { TAG_REQ = 11, TAG_RESP = 12 };
#define MAX_DURATION 86400.0
#define WINDOW_5S 5
#define PROBES_PER_PASS 64
#define BACKOFF_SPIN 2
#define BACKOFF_MAX_US 1000u

typedef struct shuffle_opts {
  wsp_opt_ints_t strat;
  int explicit_strategies;
  size_t req;
  long fold;
  double duration, rate, link;
  long s2_window;
  long seed;
  int dest_random; /* --dest: index in dest_names (1: uniformly random) */
  int per_rank;
  wsp_bench_io_t io;
} shuffle_opts_t;

static const char shuffle_footer[] =
    "Rates: bytes/s (3000000, 3MB) or bits/s in tc syntax (25mbit).\n"
    "Goodput = payload bytes of responses received per second per host\n"
    "from ranks on other hosts (all ranks when there is one host);\n"
    "Mbit/s = 1e6 bits/s. min5/mean = the lowest 5-second window of a\n"
    "host over its mean; the worst host is shown. all5/mean = the\n"
    "same for the mean over hosts of each second. Exit status 1 if a\n"
    "response had the wrong size.\n";

static int parse(shuffle_opts_t *o, int argc, char **argv, int rank) {
  const wsp_opt_t table[] = {
      {"--strategies", WSP_OPT_CHOICE_LIST, &o->strat, "LIST",
       "among s1,s2,s3,adaptive,fixed; run one after the other",
       "s1,s2,s3,adaptive; s3 only with a rate", 0, 0, strat_names, &o->explicit_strategies},
      {"--req-size", WSP_OPT_SIZE, &o->req, "SIZE", "request payload, 1 to 1M", "1K", 1,
       (double)(1 << 20), NULL, NULL},
      {"--fold", WSP_OPT_INT, &o->fold, "N", "response = N x request", "100", 1, 100000, NULL,
       NULL},
      {"--seconds", WSP_OPT_DOUBLE, &o->duration, "SEC", "seconds per strategy", "10", 1,
       MAX_DURATION, NULL, NULL},
      WSP_OPT_DEPRECATED("--duration", "--seconds"),
      {"--link-rate", WSP_OPT_RATE, &o->link, "RATE",
       "NIC rate B of a host (e.g. 25mbit): goodput is also shown as a fraction of B", NULL, 0, 0,
       NULL, NULL},
      {"--target-rate", WSP_OPT_RATE, &o->rate, "RATE", "s3 and fixed: goodput asked for per host",
       "--link-rate; required for s3/fixed without it", 0, 0, NULL, NULL},
      WSP_OPT_DEPRECATED("--rate", "--target-rate"),
      {"--s2-window", WSP_OPT_INT, &o->s2_window, "N",
       "s2/s3: unanswered requests per peer at most, only so that memory is bounded", "32", 1,
       1000000, NULL, NULL},
      {"--dest", WSP_OPT_CHOICE, &o->dest_random, "rr|random",
       "destinations of s2's and the engine's requests: round robin or uniformly "
       "random among the other ranks (s1 and s3 ask every other rank in each round)",
       "rr", 0, 0, dest_names, NULL},
      {"--seed", WSP_OPT_INT, &o->seed, "N",
       "start of each rank's round robin, or seed of its random destinations", "1", 0,
       (double)(1LL << 40), NULL, NULL},
      {"--per-rank", WSP_OPT_FLAG, &o->per_rank, NULL,
       "per-second table per rank instead of per host", NULL, 0, 0, NULL, NULL},
      WSP_BENCH_OPT_JSON(o->io, "append JSON lines: a summary per strategy and one line per "
                                "second"),
      WSP_BENCH_OPT_LABEL(o->io),
      WSP_BENCH_OPT_PLOT(o->io, "after the run, draw goodput over time per strategy with "
                                "python/wsp_report (matplotlib)"),
      WSP_BENCH_OPT_QUIET(o->io),
      WSP_BENCH_OPT_END};
  const wsp_opt_cmd_t cmd = {"usage: mpirun -np N wsp-bench shuffle [options]\n",
                             table, shuffle_footer};
  return wsp_bench_parse(&cmd, argc, argv, rank);
}

/* What the options allow only together; also leaves s3 out of the default
 * list when there is no rate. -1 to go on, or 2 (message on rank 0). */
static int check_opts(shuffle_opts_t *o, int rank) {
  size_t resp = o->req * (size_t)o->fold;
  if (resp > (size_t)1 << 30) {
    if (rank == 0)
      fprintf(stderr,
              "error: --req-size x --fold = %zu bytes: at most 1G per response\n",
              resp);
    return 2;
  }
  if (!(o->rate > 0)) o->rate = o->link;
  if (!(o->rate > 0) && !o->explicit_strategies) { /* the default list: no s3 */
    int k = 0;
    for (int i = 0; i < o->strat.n; i++)
      if (o->strat.v[i] != S3) o->strat.v[k++] = o->strat.v[i];
    o->strat.n = k;
    if (rank == 0 && !o->io.quiet)
      printf("# s3 left out: it needs --target-rate or --link-rate (G-thinker's rule "
             "paces at a chosen rate)\n");
  }
  for (int i = 0; i < o->strat.n; i++)
    if ((o->strat.v[i] == S3 || o->strat.v[i] == FIXED) && !(o->rate > 0)) {
      if (rank == 0)
        fprintf(stderr, "error: %s needs --target-rate (or --link-rate, its default)\n",
                strat_names[o->strat.v[i]]);
      return 2;
    }
  return -1;
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


static void mpi_ok(int rc, int rank, const char *call) {
  if (rc != MPI_SUCCESS) wsp_bench_die(rank, call, "failed");
}

/* ---- one strategy's run on this rank ---- */
typedef struct run {
  const shuffle_opts_t *o;
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
  if (!rin || !rout || !respin || !reqs || !src || !idx) wsp_bench_die(r->rank, "out of memory", NULL);
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
    if (!l->r || !l->src || !l->buf) wsp_bench_die(rank, "out of memory", NULL);
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
    if (!s->idx) wsp_bench_die(s->r->rank, "out of memory", NULL);
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
        if (!s->pool) wsp_bench_die(s->r->rank, "out of memory", NULL);
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
    if (!buf) wsp_bench_die(r->rank, "out of memory", NULL);
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
  if (!s.out_peer || !s.reqtmp) wsp_bench_die(r->rank, "out of memory", NULL);
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
  if (wsp_shuffle_config_from_env(&cfg) != WSP_OK)
    wsp_bench_die(r->rank, "wsp_shuffle_config_from_env", wsp_last_error());
  if (fixed) {
    cfg.mode = WSP_SHUFFLE_FIXED;
    /* --target-rate is response goodput; the engine paces requests + responses. */
    cfg.rate = rate * (double)(r->o->req + r->resp) / (double)r->resp;
  } else {
    cfg.mode = WSP_SHUFFLE_ADAPTIVE;
    cfg.rate = 0;
  }
  const wsp_shuffle_handlers_t h = {on_request, on_response};
  wsp_shuffle_t *sh = NULL;
  if (wsp_shuffle_open(comm, &cfg, &h, r, &sh) != WSP_OK)
    wsp_bench_die(r->rank, "wsp_shuffle_open", wsp_last_error());
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
      wsp_bench_die(r->rank, "wsp_shuffle_post", wsp_last_error());
    r->requests++;
  }
  if (wsp_shuffle_close(sh, &r->st) != WSP_OK)
    wsp_bench_die(r->rank, "wsp_shuffle_close", wsp_last_error());
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

/* ---- the benchmark ---- */
typedef struct shuffle_bench {
  const shuffle_opts_t *o;
  int rank, size;
  wsp_comm_t *comm;
  int nhosts, host_ranks; /* host_ranks: ranks on this rank's host */
  int *host;              /* the host of every rank */
  size_t resp;
  int nsec;
  char *req_buf, *resp_buf; /* static contents */
  double *bytes, *window, *inflight; /* this rank's, per second */
  /* Rank 0: every rank's seconds [rank * nsec + t] (goodput, pacing rate,
   * volume in flight), goodput per host [host * nsec + t], peak RSS. */
  double *all, *wall, *iall, *hostsum;
  long *hwm;
  wsp_bench_out_t out;
  json_t *summaries; /* rank 0: the summary record of each strategy */
  unsigned long long bad_total;
  /* Rank 0: the wall clock (seconds since 1970) at each strategy's start,
   * so that a fault injected from outside (netlab fault) can be placed on
   * the strategy's seconds. */
  double start_epoch[NSTRAT];
} shuffle_bench_t;

/* One rank's own figures of a strategy. */
typedef struct strat_local {
  double t_open, t_done, cpu;
  long rss0, hwm;
} strat_local_t;

/* A strategy's figures reduced over the ranks (on rank 0). */
typedef struct strat_totals {
  double cpu_sum, open_max, tmax;
  unsigned long long requests, responses, bad, mem_peak, mem_limit;
  long rss0_max, hwm_max;
} strat_totals_t;

/* The goodput per host of a strategy, as the summary states it. */
typedef struct host_stats {
  double *hmean, *hratio; /* per host: mean, lowest 5-s window / mean */
  double mean;     /* mean over hosts */
  double minmean;  /* the smallest host's mean */
  double worst;    /* the lowest hratio */
  double allratio; /* lowest 5-s window of the mean over hosts / its mean */
} host_stats_t;

/* Hosts from the library's node map. */
static void find_hosts(shuffle_bench_t *b) {
  wsp_topology_t topo;
  if (wsp_comm_topology(b->comm, &topo) != WSP_OK)
    wsp_bench_die(b->rank, "wsp_comm_topology", wsp_last_error());
  b->nhosts = topo.nodes;
  b->host_ranks = topo.node_ranks;
  b->host = malloc((size_t)b->size * sizeof *b->host);
  if (b->host == NULL) wsp_bench_die(b->rank, "out of memory", NULL);
  for (int q = 0; q < b->size; q++)
    if (wsp_comm_node(b->comm, q, &b->host[q]) != WSP_OK)
      wsp_bench_die(b->rank, "wsp_comm_node", wsp_last_error());
}

static void alloc_buffers(shuffle_bench_t *b) {
  const size_t nsec = (size_t)b->nsec, size = (size_t)b->size;
  const int root = b->rank == 0;
  b->bytes = calloc(nsec, sizeof *b->bytes);
  b->window = malloc(nsec * sizeof *b->window);
  b->inflight = malloc(nsec * sizeof *b->inflight);
  b->iall = root ? malloc(size * nsec * sizeof *b->iall) : NULL;
  b->all = root ? malloc(size * nsec * sizeof *b->all) : NULL;
  b->wall = root ? malloc(size * nsec * sizeof *b->wall) : NULL;
  b->hostsum = root ? malloc((size_t)b->nhosts * nsec * sizeof *b->hostsum) : NULL;
  b->hwm = root ? malloc(size * sizeof *b->hwm) : NULL;
  b->req_buf = malloc(b->o->req);
  b->resp_buf = malloc(b->resp ? b->resp : 1);
  if (!b->bytes || !b->window || !b->inflight || !b->req_buf || !b->resp_buf ||
      (root && (!b->all || !b->wall || !b->iall || !b->hostsum || !b->hwm)))
    wsp_bench_die(b->rank, "out of memory", NULL);
  memset(b->req_buf, 0, b->o->req);
  for (size_t i = 0; i < b->resp; i++) b->resp_buf[i] = (char)(i * 131 + 7);
}

static void free_buffers(shuffle_bench_t *b) {
  free(b->bytes);
  free(b->window);
  free(b->inflight);
  free(b->iall);
  free(b->all);
  free(b->wall);
  free(b->hostsum);
  free(b->hwm);
  free(b->host);
  free(b->req_buf);
  free(b->resp_buf);
}

static void print_header(const shuffle_bench_t *b) {
  const shuffle_opts_t *o = b->o;
  char rq[32];
  printf("# wsp-bench shuffle: p=%d on %d host(s), request %s, fold %ld "
         "(response %zu bytes), %g s per strategy, %s\n",
         b->size, b->nhosts, wsp_fmt_size(o->req, rq, sizeof rq), o->fold, b->resp,
         o->duration, b->out.mpi);
  printf("# goodput: response payload received %s, Mbit/s = 1e6 bit/s%s\n",
         b->nhosts > 1 ? "from other hosts, per host" : "(one host: all ranks)",
         o->link > 0 ? "; frac = goodput / B" : "");
  if (o->link > 0) printf("# B = %.3f Mbit/s\n", o->link * 8e-6);
  fflush(stdout);
}

/* Runs strategy sgy on this rank: a fresh communicator, the engine opened
 * before the clock starts, the run and its drain. */
static void run_strategy(shuffle_bench_t *b, int sgy, run_t *r, strat_local_t *loc) {
  const shuffle_opts_t *o = b->o;
  *r = (run_t){.o = o, .rank = b->rank, .size = b->size, .nhosts = b->nhosts,
               .myhost = b->host[b->rank], .host_ranks = b->host_ranks,
               .host = b->host, .resp = b->resp, .nsec = b->nsec, .bytes = b->bytes,
               .window = b->window, .inflight = b->inflight, .req_buf = b->req_buf,
               .resp_buf = b->resp_buf,
               .rng = ((uint64_t)o->seed << 24) ^ (uint64_t)b->rank};
  memset(b->bytes, 0, (size_t)b->nsec * sizeof *b->bytes);
  for (int i = 0; i < b->nsec; i++) b->window[i] = b->inflight[i] = -1;
  mpi_ok(MPI_Comm_dup(MPI_COMM_WORLD, &r->comm), b->rank, "MPI_Comm_dup");
#ifdef WSP_BENCH_TRIM
  malloc_trim(0);
#endif
  hwm_reset();
  loc->rss0 = status_kib("VmRSS:");
  double rate_rank = o->rate / (double)b->host_ranks;
  double t_open = MPI_Wtime();
  wsp_shuffle_t *sh = sgy == ADAPTIVE || sgy == FIXED
                          ? open_engine(r, b->comm, sgy == FIXED, rate_rank)
                          : NULL;
  loc->t_open = MPI_Wtime() - t_open;
  MPI_Barrier(MPI_COMM_WORLD);
  double cpu0 = cpu_seconds();
  r->t0 = MPI_Wtime();
  struct timespec wall;
  clock_gettime(CLOCK_REALTIME, &wall);
  b->start_epoch[sgy] = (double)wall.tv_sec + 1e-9 * (double)wall.tv_nsec;
  if (b->rank == 0) { /* for scripts that time a fault from here */
    printf("# wsp-bench shuffle: strategy %s started\n", strat_names[sgy]);
    fflush(stdout);
  }
  r->t_end = r->t0 + o->duration;
  switch (sgy) {
    case S1: run_s1(r); break;
    case S2: run_servers(r, 0); break;
    case S3: run_servers(r, rate_rank); break;
    case ADAPTIVE:
    case FIXED: run_engine(r, sh); break;
  }
  loc->t_done = MPI_Wtime() - r->t0;
  loc->cpu = cpu_seconds() - cpu0;
  /* The ranks done first sleep until the last is done. */
  wsp_bench_barrier(b->rank, 1, "the end of a strategy");
  MPI_Comm_free(&r->comm);
  loc->hwm = status_kib("VmHWM:");
}

/* Every rank's figures onto rank 0. */
static void gather_strategy(shuffle_bench_t *b, const run_t *r, const strat_local_t *loc,
                            strat_totals_t *t) {
  const MPI_Comm w = MPI_COMM_WORLD;
  const int nsec = b->nsec;
  MPI_Reduce(&loc->cpu, &t->cpu_sum, 1, MPI_DOUBLE, MPI_SUM, 0, w);
  MPI_Reduce(&loc->t_open, &t->open_max, 1, MPI_DOUBLE, MPI_MAX, 0, w);
  MPI_Reduce(&loc->t_done, &t->tmax, 1, MPI_DOUBLE, MPI_MAX, 0, w);
  unsigned long long mine[3] = {r->requests, r->responses, r->bad}, tot[3] = {0};
  MPI_Reduce(mine, tot, 3, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, w);
  unsigned long long emem[2] = {r->have_st ? r->st.mem_peak : 0,
                                r->have_st ? r->st.mem_limit : 0},
                     emax[2] = {0};
  MPI_Reduce(emem, emax, 2, MPI_UNSIGNED_LONG_LONG, MPI_MAX, 0, w);
  MPI_Gather(b->bytes, nsec, MPI_DOUBLE, b->all, nsec, MPI_DOUBLE, 0, w);
  MPI_Gather(b->window, nsec, MPI_DOUBLE, b->wall, nsec, MPI_DOUBLE, 0, w);
  MPI_Gather(b->inflight, nsec, MPI_DOUBLE, b->iall, nsec, MPI_DOUBLE, 0, w);
  MPI_Gather(&loc->hwm, 1, MPI_LONG, b->hwm, 1, MPI_LONG, 0, w);
  MPI_Reduce(&loc->rss0, &t->rss0_max, 1, MPI_LONG, MPI_MAX, 0, w);
  t->requests = tot[0];
  t->responses = tot[1];
  t->bad = tot[2];
  t->mem_peak = emax[0];
  t->mem_limit = emax[1];
  t->hwm_max = 0;
  for (int q = 0; b->rank == 0 && q < b->size; q++)
    if (b->hwm[q] > t->hwm_max) t->hwm_max = b->hwm[q];
}

/* Rank 0: goodput per host and second. */
static void sum_hosts(shuffle_bench_t *b) {
  const int nsec = b->nsec;
  for (int i = 0; i < b->nhosts * nsec; i++) b->hostsum[i] = 0;
  for (int q = 0; q < b->size; q++)
    for (int t = 0; t < nsec; t++) b->hostsum[b->host[q] * nsec + t] += b->all[q * nsec + t];
}

/* Rank 0: the per-second table, per host (or per rank with --per-rank). */
static void print_seconds(const shuffle_bench_t *b, int sgy) {
  const shuffle_opts_t *o = b->o;
  const int nsec = b->nsec, ncol = o->per_rank ? b->size : b->nhosts;
  const double *tab = o->per_rank ? b->all : b->hostsum, B = o->link;
  printf("\n== %s: goodput per %s and second (Mbit/s)\n%4s", strat_names[sgy],
         o->per_rank ? "rank" : "host", "t");
  for (int c = 0; c < ncol; c++) printf(" %5s%-2d", o->per_rank ? "r" : "h", c);
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

/* Rank 0: the host figures of the summary. hostavg is the mean over hosts
 * of each second, for the second reading of "no 5-s window below 0.8 of
 * its own mean" (the strategy's, not a host's); the per-host reading (the
 * worst host) stays the headline. */
static void summarize_hosts(const shuffle_bench_t *b, host_stats_t *hs) {
  const int nsec = b->nsec, nh = b->nhosts;
  hs->hmean = malloc((size_t)nh * sizeof *hs->hmean);
  hs->hratio = malloc((size_t)nh * sizeof *hs->hratio);
  double *hostavg = calloc((size_t)nsec, sizeof *hostavg);
  if (!hs->hmean || !hs->hratio || !hostavg)
    wsp_bench_die(b->rank, "out of memory for the summary", NULL);
  hs->minmean = hs->worst = INFINITY;
  for (int h = 0; h < nh; h++) {
    const double *x = b->hostsum + (size_t)h * nsec;
    for (int t = 0; t < nsec; t++) hostavg[t] += x[t] / nh;
    hs->hmean[h] = wsp_mean(x, (size_t)nsec);
    hs->hratio[h] = wsp_min_window_ratio(x, (size_t)nsec, WINDOW_5S);
    if (hs->hmean[h] < hs->minmean) hs->minmean = hs->hmean[h];
    if (hs->hratio[h] < hs->worst) hs->worst = hs->hratio[h];
  }
  hs->mean = wsp_mean(hs->hmean, (size_t)nh);
  hs->allratio = wsp_min_window_ratio(hostavg, (size_t)nsec, WINDOW_5S);
  free(hostavg);
}

/* A record of this benchmark: the common fields, then what it is. */
static json_t *shuffle_record(const shuffle_bench_t *b, const char *kind, int sgy) {
  json_t *j = wsp_bench_record(&b->out);
  json_object_set_new(j, "kind", json_string(kind));
  json_object_set_new(j, "strategy", json_string(strat_names[sgy]));
  json_object_set_new(j, "hosts", json_integer(b->nhosts));
  return j;
}

/* Rank 0: the strategy's summary record (kept for the closing table and
 * written out). */
static void json_summary(shuffle_bench_t *b, int sgy, const strat_totals_t *t,
                         const host_stats_t *hs) {
  const shuffle_opts_t *o = b->o;
  const double B = o->link;
  const int engine = sgy >= ADAPTIVE, servers = sgy == S2 || sgy == S3;
  json_t *j = shuffle_record(b, "summary", sgy);
  json_object_set_new(j, "req_bytes", json_integer((json_int_t)o->req));
  json_object_set_new(j, "fold", json_integer(o->fold));
  json_object_set_new(j, "resp_bytes", json_integer((json_int_t)b->resp));
  json_object_set_new(j, "duration_s", json_real(o->duration));
  json_object_set_new(j, "finished_s", json_real(t->tmax));
  /* In integer milliseconds: the records' reals carry too few digits for
   * seconds since 1970. */
  json_object_set_new(j, "start_epoch_ms",
                      json_integer((json_int_t)llround(b->start_epoch[sgy] * 1e3)));
  json_object_set_new(j, "open_s", engine ? json_real(t->open_max) : json_null());
  json_object_set_new(j, "cpu_s_sum", json_real(t->cpu_sum));
  json_object_set_new(j, "cpu_cores", json_real(t->tmax > 0 ? t->cpu_sum / t->tmax : 0));
  json_object_set_new(j, "link_Bps", B > 0 ? json_real(B) : json_null());
  json_object_set_new(j, "rate_Bps",
                      sgy == S3 || sgy == FIXED ? json_real(o->rate) : json_null());
  json_object_set_new(j, "dest", json_string(sgy == S1 || sgy == S3 ? "all"
                                             : dest_names[o->dest_random]));
  json_object_set_new(j, "seed", json_integer((json_int_t)o->seed));
  json_object_set_new(j, "s2_window", servers ? json_integer(o->s2_window) : json_null());
  json_object_set_new(j, "counted",
                      json_string(b->nhosts > 1
                                      ? "payload bytes of responses received from "
                                        "ranks on other hosts, per host and second"
                                      : "payload bytes of responses received, per "
                                        "host and second (one host)"));
  json_object_set_new(j, "goodput_host_Bps",
                      wsp_bench_json_doubles(hs->hmean, (size_t)b->nhosts));
  json_object_set_new(j, "mean_Bps", json_real(hs->mean));
  json_object_set_new(j, "frac_B_mean", B > 0 ? json_real(hs->mean / B) : json_null());
  json_object_set_new(j, "frac_B_min_host",
                      B > 0 ? json_real(hs->minmean / B) : json_null());
  json_object_set_new(j, "min5s_over_mean_per_host",
                      wsp_bench_json_doubles(hs->hratio, (size_t)b->nhosts));
  json_object_set_new(j, "min5s_over_mean_worst", json_real(hs->worst));
  json_object_set_new(j, "min5s_over_mean_all_hosts", json_real(hs->allratio));
  json_object_set_new(j, "requests", json_integer((json_int_t)t->requests));
  json_object_set_new(j, "responses", json_integer((json_int_t)t->responses));
  json_object_set_new(j, "bad_responses", json_integer((json_int_t)t->bad));
  json_object_set_new(j, "engine_mem_peak_max",
                      engine ? json_integer((json_int_t)t->mem_peak) : json_null());
  json_object_set_new(j, "engine_mem_limit",
                      engine ? json_integer((json_int_t)t->mem_limit) : json_null());
  json_t *hw = json_array();
  for (int q = 0; q < b->size; q++) json_array_append_new(hw, json_integer(b->hwm[q]));
  json_object_set_new(j, "vmhwm_kib_per_rank", hw);
  json_object_set_new(j, "vmhwm_kib_max", json_integer(t->hwm_max));
  json_object_set_new(j, "vmrss_kib_at_start_max", json_integer(t->rss0_max));
  json_array_append(b->summaries, j);
  wsp_bench_emit(&b->out, j);
}

/* Rank 0: one record per second of the strategy. */
static void json_seconds(shuffle_bench_t *b, int sgy) {
  const int nsec = b->nsec;
  const double B = b->o->link;
  for (int t = 0; t < nsec; t++) {
    json_t *j = shuffle_record(b, "second", sgy);
    json_t *hv = json_array(), *rv = json_array(), *rr = json_array();
    double wsum = 0, isum = 0;
    int nw = 0;
    for (int h = 0; h < b->nhosts; h++)
      json_array_append_new(hv, json_real(b->hostsum[h * nsec + t]));
    for (int q = 0; q < b->size; q++) {
      double rate = b->wall[q * nsec + t];
      json_array_append_new(rv, json_real(b->all[q * nsec + t]));
      /* Each rank's pacing rate, to tell a controller's decrease from the
       * network's doing when one host's goodput dips (null: not paced). */
      json_array_append_new(rr, rate >= 0 ? json_real(rate) : json_null());
      if (rate >= 0) {
        wsum += rate;
        isum += b->iall[q * nsec + t];
        nw++;
      }
    }
    json_object_set_new(j, "t", json_integer(t));
    json_object_set_new(j, "link_Bps", B > 0 ? json_real(B) : json_null());
    json_object_set_new(j, "goodput_host_Bps", hv);
    json_object_set_new(j, "goodput_rank_Bps", rv);
    json_object_set_new(j, "rate_mean_Bps", nw ? json_real(wsum / nw) : json_null());
    json_object_set_new(j, "rate_rank_Bps", rr);
    json_object_set_new(j, "inflight_mean_bytes", nw ? json_real(isum / nw) : json_null());
    wsp_bench_emit(&b->out, j);
  }
}

/* One strategy: run, gather, and on rank 0 its table and records. */
static void run_one(shuffle_bench_t *b, int sgy) {
  run_t r;
  strat_local_t loc;
  strat_totals_t tot = {0};
  run_strategy(b, sgy, &r, &loc);
  gather_strategy(b, &r, &loc, &tot);
  if (b->rank != 0) return;
  b->bad_total += tot.bad;
  sum_hosts(b);
  if (!b->o->io.quiet) print_seconds(b, sgy);
  host_stats_t hs;
  summarize_hosts(b, &hs);
  json_summary(b, sgy, &tot, &hs);
  if (wsp_bench_out_wanted(&b->out)) json_seconds(b, sgy);
  free(hs.hmean);
  free(hs.hratio);
  fflush(stdout);
}

/* Rank 0: the closing table, one line per strategy. */
static void print_summary(const shuffle_bench_t *b) {
  const double B = b->o->link;
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
  for (size_t i = 0; i < json_array_size(b->summaries); i++) {
    json_t *s = json_array_get(b->summaries, i);
    double m = json_real_value(json_object_get(s, "mean_Bps"));
    json_t *e = json_object_get(s, "engine_mem_peak_max");
    printf("%-9s %10.2f", json_string_value(json_object_get(s, "strategy")), m * 8e-6);
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
  fflush(stdout);
}

int wsp_bench_shuffle(int argc, char **argv, int rank, int size,
                      wsp_bench_post_t *post) {
  shuffle_opts_t o = {.strat = {{S1, S2, S3, ADAPTIVE}, 4}, .req = 1024, .fold = 100,
                      .duration = 10, .s2_window = 32, .seed = 1, .io = {.label = ""}};
  int rc = parse(&o, argc, argv, rank);
  if (rc >= 0 || (rc = check_opts(&o, rank)) >= 0) return rc;
  shuffle_bench_t b = {.o = &o, .rank = rank, .size = size,
                       .resp = o.req * (size_t)o.fold, .nsec = (int)floor(o.duration)};
  if (wsp_comm_create(MPI_COMM_WORLD, NULL, &b.comm) != WSP_OK)
    wsp_bench_die(rank, "wsp_comm_create", wsp_last_error());
  find_hosts(&b);
  char extra[64];
  snprintf(extra, sizeof extra, ", %d hosts", b.nhosts);
  if ((rc = wsp_bench_out_open(&b.out, "shuffle", &o.io, rank, size, extra, post)) == 0) {
    alloc_buffers(&b);
    if (rank == 0 && !o.io.quiet) print_header(&b);
    b.summaries = json_array();
    for (int si = 0; si < o.strat.n; si++) run_one(&b, o.strat.v[si]);
    if (rank == 0 && !o.io.quiet) print_summary(&b);
    if (rank == 0 && b.bad_total)
      fprintf(stderr, "error: %llu responses had the wrong size\n", b.bad_total);
    json_decref(b.summaries);
  }
  wsp_bench_out_close(&b.out);
  wsp_comm_free(&b.comm);
  free_buffers(&b);
  if (rc) return rc;
  int anybad = b.bad_total > 0;
  MPI_Bcast(&anybad, 1, MPI_INT, 0, MPI_COMM_WORLD);
  return anybad ? 1 : 0;
}
