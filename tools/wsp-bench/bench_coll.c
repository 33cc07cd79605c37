/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * wsp-bench coll — time per call of every collective algorithm, side by
 * side with the MPI library's own collective, in nccl-tests' terms.
 *
 * The algorithms are whatever the collectives' tables hold at run time
 * (wsp_coll_alg_count / wsp_coll_alg_info), plus two rows that are not
 * table entries: "mpi", the plain MPI collective on MPI_COMM_WORLD (what a
 * program would call, the reference of every ratio), and "auto", which lets
 * wirespeed's rules and model choose. One wsp_comm_t serves the whole run;
 * rows switch algorithms with wsp_coll_set_alg.
 *
 * For each collective and size, the results are checked before anything is
 * timed. The input is recognisable data whose exact answer is known (small
 * integers, so sums are exact in double too). The MPI library's own
 * collective runs once on it and its output is checked element by element
 * against that answer; then every algorithm runs once on the same input
 * and its output is checked against the same answer, so an algorithm
 * passes exactly when it gives what native MPI gave (and a wrong answer
 * from MPI itself is caught too). A wrong result prints MISMATCH and makes
 * the exit status 1. Then each algorithm is timed: the iteration count
 * comes from timing a few calls so that the timed calls of a row take about
 * --max-time seconds (as OSU and nccl-tests do), followed by untimed warmup
 * calls. The repetitions interleave the algorithms in a random order, new
 * each repetition, so all figures of a row come from the same minutes of
 * the same machine and no algorithm always follows the same other one.
 * A repetition starts with a barrier; its time is the slowest rank's mean
 * per call; the row reports the median over repetitions.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "pattern.h"
#include "stats.h"

#define ALG_MPI (-2)  /* not a table index: the plain MPI collective */
#define ALG_NONE (-3) /* a name the collective does not have */
#define MAX_ALGS 64
#define MAX_ITERS 1000000L

static int whole_message(wsp_coll_t c) {
  return c == WSP_COLL_BCAST || c == WSP_COLL_REDUCE ||
         c == WSP_COLL_ALLREDUCE;
}

static int rooted(wsp_coll_t c) {
  return c == WSP_COLL_BCAST || c == WSP_COLL_REDUCE ||
         c == WSP_COLL_GATHER || c == WSP_COLL_SCATTER;
}

/* nccl-tests' bus bandwidth factors (gather/scatter: our choice). */
static double bus_factor(wsp_coll_t c, int p) {
  switch (c) {
  case WSP_COLL_ALLREDUCE:
    return 2.0 * (p - 1) / p;
  case WSP_COLL_BCAST:
  case WSP_COLL_REDUCE:
    return 1.0;
  default:
    return (double)(p - 1) / p;
  }
}

/* One row: a collective at one size. */
typedef struct row {
  wsp_coll_t coll;
  wsp_comm_t *comm;
  int p, rank, root, is_int, sync;
  MPI_Datatype dt;
  size_t esz;
  size_t count; /* elements: of the message, or of one block */
  size_t bytes; /* S actually moved: the message, or p blocks */
  size_t block; /* bytes the model takes: the message, or one block */
  void *sbuf, *rbuf;
} row_t;

/* ---- recognisable data and the exact answer ----
 * Data movement: element i of rank r's input is r.65536 + i mod 65521, so
 * a block in the wrong place or from the wrong rank shows. Reductions:
 * (i mod 251) + 251 (r mod 61 + 1), so a lost or doubled contribution
 * shows; sums stay far below 2^31 and are exact in double. */
static double move_val(int r, size_t i) {
  return (double)((long long)(r % 32768) * 65536 + (long long)(i % 65521));
}

static double red_val(int r, size_t i) {
  return (double)((long long)(i % 251) + 251LL * (r % 61 + 1));
}

/* The rank part of every reduced element: sum over r of 251 (r mod 61 + 1). */
static double red_base(int p) {
  long long s = 0;
  for (int r = 0; r < p; r++) s += 251LL * (r % 61 + 1);
  return (double)s;
}

static void put(const row_t *w, void *b, size_t i, double v) {
  if (w->is_int)
    ((int *)b)[i] = (int)v;
  else
    ((double *)b)[i] = v;
}

static double get(const row_t *w, const void *b, size_t i) {
  return w->is_int ? (double)((const int *)b)[i] : ((const double *)b)[i];
}

/* The vector forms run with equal blocks of w->count elements: counts and
 * displacements (elements) for wirespeed and for MPI, made once per p. */
static struct {
  int p;
  size_t count, *c, *d;
  int *ic, *id;
} vecs;

static void vec_layout(const row_t *w) {
  if (vecs.p != w->p) {
    free(vecs.c), free(vecs.ic);
    vecs.c = malloc(2 * (size_t)w->p * sizeof *vecs.c);
    vecs.ic = malloc(2 * (size_t)w->p * sizeof *vecs.ic);
    if (vecs.c == NULL || vecs.ic == NULL) wsp_bench_die(w->rank, "vector counts", "out of memory");
    vecs.d = vecs.c + w->p, vecs.id = vecs.ic + w->p;
    vecs.p = w->p, vecs.count = 0;
  }
  if (vecs.count == w->count) return;
  for (int i = 0; i < w->p; i++) {
    vecs.c[i] = w->count, vecs.d[i] = (size_t)i * w->count;
    vecs.ic[i] = (int)w->count, vecs.id[i] = (int)((size_t)i * w->count);
  }
  vecs.count = w->count;
}

/* Inputs of this rank, and a sentinel (-1, never a valid answer) in the
 * output. */
static void fill(const row_t *w) {
  size_t n = w->count, pn = n * (size_t)w->p;
  int me = w->rank;
  switch (w->coll) {
  case WSP_COLL_BCAST:
    for (size_t i = 0; i < n; i++)
      put(w, w->rbuf, i, me == w->root ? move_val(me, i) : -1.0);
    return;
  case WSP_COLL_REDUCE:
  case WSP_COLL_ALLREDUCE:
    for (size_t i = 0; i < n; i++) put(w, w->sbuf, i, red_val(me, i));
    for (size_t i = 0; i < n; i++) put(w, w->rbuf, i, -1.0);
    return;
  case WSP_COLL_GATHER:
  case WSP_COLL_ALLGATHER:
  case WSP_COLL_ALLGATHERV:
    for (size_t i = 0; i < n; i++) put(w, w->sbuf, i, move_val(me, i));
    for (size_t i = 0; i < pn; i++) put(w, w->rbuf, i, -1.0);
    return;
  case WSP_COLL_REDUCE_SCATTER:
    for (size_t i = 0; i < pn; i++) put(w, w->sbuf, i, red_val(me, i));
    for (size_t i = 0; i < n; i++) put(w, w->rbuf, i, -1.0);
    return;
  case WSP_COLL_SCATTER:
    for (size_t i = 0; i < pn; i++)
      put(w, w->sbuf, i, me == w->root ? move_val(me, i) : -2.0);
    for (size_t i = 0; i < n; i++) put(w, w->rbuf, i, -1.0);
    return;
  case WSP_COLL_ALLTOALL:
  case WSP_COLL_ALLTOALLV:
    for (size_t i = 0; i < pn; i++) put(w, w->sbuf, i, move_val(me, i));
    for (size_t i = 0; i < pn; i++) put(w, w->rbuf, i, -1.0);
    return;
  default:
    return;
  }
}

/* Index of the first wrong output element on this rank (and the value
 * it should have in *want), or -1. */
static long long verify(const row_t *w, double *want) {
  size_t n = w->count;
  int me = w->rank, p = w->p;
  const void *o = w->rbuf;
  double e;
  switch (w->coll) {
  case WSP_COLL_BCAST:
    for (size_t i = 0; i < n; i++)
      if (get(w, o, i) != (e = move_val(w->root, i))) {
        *want = e;
        return (long long)i;
      }
    return -1;
  case WSP_COLL_REDUCE:
  case WSP_COLL_ALLREDUCE: {
    if (w->coll == WSP_COLL_REDUCE && me != w->root) return -1;
    double base = red_base(p);
    for (size_t i = 0; i < n; i++)
      if (get(w, o, i) != (e = (double)p * (double)(i % 251) + base)) {
        *want = e;
        return (long long)i;
      }
    return -1;
  }
  case WSP_COLL_REDUCE_SCATTER: {
    double base = red_base(p);
    for (size_t i = 0; i < n; i++)
      if (get(w, o, i) != (e = (double)p * (double)(((size_t)me * n + i) % 251) + base)) {
        *want = e;
        return (long long)i;
      }
    return -1;
  }
  case WSP_COLL_GATHER:
  case WSP_COLL_ALLGATHER:
  case WSP_COLL_ALLGATHERV:
    if (w->coll == WSP_COLL_GATHER && me != w->root) return -1;
    for (int r = 0; r < p; r++)
      for (size_t i = 0; i < n; i++)
        if (get(w, o, (size_t)r * n + i) != (e = move_val(r, i))) {
          *want = e;
          return (long long)((size_t)r * n + i);
        }
    return -1;
  case WSP_COLL_SCATTER:
    for (size_t i = 0; i < n; i++)
      if (get(w, o, i) != (e = move_val(w->root, (size_t)me * n + i))) {
        *want = e;
        return (long long)i;
      }
    return -1;
  case WSP_COLL_ALLTOALL:
  case WSP_COLL_ALLTOALLV:
    for (int r = 0; r < p; r++)
      for (size_t i = 0; i < n; i++)
        if (get(w, o, (size_t)r * n + i) !=
            (e = move_val(r, (size_t)me * n + i))) {
          *want = e;
          return (long long)((size_t)r * n + i);
        }
    return -1;
  default:
    return -1;
  }
}

/* One call of the collective with algorithm `alg` (ALG_MPI: the plain MPI
 * collective; otherwise wirespeed with whatever wsp_coll_set_alg set). */
static void run_once(const row_t *w, int alg) {
  int n = (int)w->count, rc = WSP_OK, root = w->root;
  void *s = w->sbuf, *r = w->rbuf;
  MPI_Datatype t = w->dt;
  if (w->coll == WSP_COLL_ALLTOALLV || w->coll == WSP_COLL_ALLGATHERV) vec_layout(w);
  if (alg == ALG_MPI) {
    MPI_Comm c = MPI_COMM_WORLD;
    switch (w->coll) {
    case WSP_COLL_BCAST: rc = MPI_Bcast(r, n, t, root, c); break;
    case WSP_COLL_REDUCE: rc = MPI_Reduce(s, r, n, t, MPI_SUM, root, c); break;
    case WSP_COLL_ALLREDUCE: rc = MPI_Allreduce(s, r, n, t, MPI_SUM, c); break;
    case WSP_COLL_GATHER: rc = MPI_Gather(s, n, t, r, n, t, root, c); break;
    case WSP_COLL_SCATTER: rc = MPI_Scatter(s, n, t, r, n, t, root, c); break;
    case WSP_COLL_ALLGATHER: rc = MPI_Allgather(s, n, t, r, n, t, c); break;
    case WSP_COLL_ALLTOALL: rc = MPI_Alltoall(s, n, t, r, n, t, c); break;
    case WSP_COLL_ALLTOALLV:
      rc = MPI_Alltoallv(s, vecs.ic, vecs.id, t, r, vecs.ic, vecs.id, t, c);
      break;
    case WSP_COLL_ALLGATHERV:
      rc = MPI_Allgatherv(s, n, t, r, vecs.ic, vecs.id, t, c);
      break;
    case WSP_COLL_REDUCE_SCATTER:
      rc = MPI_Reduce_scatter_block(s, r, n, t, MPI_SUM, c);
      break;
    default: break;
    }
    if (rc != MPI_SUCCESS) {
      fprintf(stderr, "error: rank %d: MPI %s failed (code %d)\n", w->rank,
              wsp_coll_name(w->coll), rc);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    return;
  }
  size_t k = w->count;
  wsp_comm_t *m = w->comm;
  switch (w->coll) {
  case WSP_COLL_BCAST: rc = wsp_bcast(m, r, k, t, root); break;
  case WSP_COLL_REDUCE: rc = wsp_reduce(m, s, r, k, t, MPI_SUM, root); break;
  case WSP_COLL_ALLREDUCE: rc = wsp_allreduce(m, s, r, k, t, MPI_SUM); break;
  case WSP_COLL_GATHER: rc = wsp_gather(m, s, k, t, r, k, t, root); break;
  case WSP_COLL_SCATTER: rc = wsp_scatter(m, s, k, t, r, k, t, root); break;
  case WSP_COLL_ALLGATHER: rc = wsp_allgather(m, s, k, t, r, k, t); break;
  case WSP_COLL_ALLTOALL: rc = wsp_alltoall(m, s, k, t, r, k, t); break;
  case WSP_COLL_ALLTOALLV:
    rc = wsp_alltoallv(m, s, vecs.c, vecs.d, t, r, vecs.c, vecs.d, t);
    break;
  case WSP_COLL_ALLGATHERV:
    rc = wsp_allgatherv(m, s, k, t, r, vecs.c, vecs.d, t);
    break;
  case WSP_COLL_REDUCE_SCATTER:
    rc = wsp_reduce_scatter_block(m, s, r, k, t, MPI_SUM);
    break;
  default: break;
  }
  if (rc != WSP_OK) wsp_bench_die(w->rank, wsp_coll_name(w->coll), wsp_last_error());
}

static void select_alg(const row_t *w, int alg) {
  if (alg != ALG_MPI && wsp_coll_set_alg(w->comm, w->coll, alg) != WSP_OK)
    wsp_bench_die(w->rank, "wsp_coll_set_alg", wsp_last_error());
}

/* How a repetition starts (--sync). */
enum { SYNC_BARRIER = 0, SYNC_WINDOW = 1 };
static const char *const sync_names[] = {"barrier", "window", NULL};

/* --sync window: the ranks start at one instant, this far past the last
 * rank's arrival; doubled whenever a rank reaches the instant late (the
 * same on every rank: it follows from agreed values only). */
static double window_margin = 1e-3;
enum { WINDOW_TRIES = 12 };

/* Sleeps until MPI_Wtime() reaches t. Under SimGrid a sleep is simulated
 * and exact (reading the clock in a loop would cost simulated time per
 * read); on a real machine the last 100 us are spun, as sleeps overshoot. */
static void sleep_until(double t) {
  for (double now; (now = MPI_Wtime()) < t;) {
    double left = t - now;
#ifndef WSP_SIMGRID
    if (left < 2e-4) continue;
    left -= 1e-4;
#endif
    struct timespec ts = {(time_t)left, (long)((left - (double)(time_t)left) * 1e9)};
    nanosleep(&ts, NULL);
  }
}

/* Seconds of `n` back-to-back calls, the slowest rank's (on every rank).
 * barrier: each rank's clock starts as it leaves a barrier, as in
 * nccl-tests; ranks leave a barrier at different times, and a rank that
 * leaves late may find its data already there, so for latency-bound calls
 * this reads less than a call's latency. window: every rank starts at one
 * instant of MPI_Wtime agreed ahead, and the time runs from it to the last
 * rank's end (the window scheme of ReproMPI and SKaMPI): one call's
 * latency, with n = 1. It needs one clock for all ranks (check_sync). */
static double time_calls(const row_t *w, int alg, long n) {
  for (int tries = 0; w->sync == SYNC_WINDOW; tries++) {
    MPI_Barrier(MPI_COMM_WORLD);
    double now = MPI_Wtime(), last = 0;
    MPI_Allreduce(&now, &last, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    double start = last + window_margin, v[2], most[2];
    v[0] = MPI_Wtime() > start; /* late */
    sleep_until(start);
    for (long i = 0; i < n; i++) run_once(w, alg);
    v[1] = MPI_Wtime();
    wsp_bench_max(v, most, 2, w->rank, "the window's times");
    if (most[0] == 0) return most[1] - start;
    window_margin *= 2;
    if (tries + 1 >= WINDOW_TRIES)
      wsp_bench_die(w->rank, "--sync window",
                    "a rank reached the agreed start late every time; "
                    "is MPI_Wtime one clock for all ranks?");
  }
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  for (long i = 0; i < n; i++) run_once(w, alg);
  double t = MPI_Wtime() - t0, tmax = 0;
  wsp_bench_max(&t, &tmax, 1, w->rank, "the calls' times");
  return tmax;
}

static const char *alg_name(wsp_coll_t c, int alg) {
  if (alg == ALG_MPI) return "mpi";
  if (alg == WSP_ALG_AUTO) return "auto";
  return wsp_coll_alg_info(c, alg)->name;
}


/* ---- options ---- */
typedef struct coll_opts {
  wsp_opt_ints_t colls; /* wsp_coll_t values */
  wsp_opt_sizes_t sizes;
  wsp_opt_strings_t algs; /* names; none given: every algorithm */
  long iters, warmup, reps, root;
  double max_time;
  double refresh_every; /* seconds; 0: never */
  size_t max_bytes;
  int is_int; /* --dtype: index in dtype_names */
  int sync;   /* --sync: SYNC_BARRIER or SYNC_WINDOW */
  int sites;  /* --sites: report the bandwidth through each link between sites */
  wsp_bench_io_t io;
} coll_opts_t;

static const char *const dtype_names[] = {"double", "int", NULL};
static const char *coll_names[WSP_COLL_COUNT + 1];

static const char coll_footer[] =
    "Columns: time = the slowest rank's mean time per call (with --sync\n"
    "window: from the agreed start to the last rank's end, per call; median\n"
    "over repetitions); algbw = S / time; busbw = algbw x factor, with\n"
    "nccl-tests' factors: allreduce 2(p-1)/p; allgather, alltoall\n"
    "(p-1)/p; bcast, reduce 1; gather and scatter, which nccl-tests does\n"
    "not define, (p-1)/p (the root moves p-1 of the p blocks through its\n"
    "link). GB/s = 1e9 bytes per second. ratio = mpi time / this time\n"
    "(> 1: faster than the MPI collective). pred = the model's predicted\n"
    "time of the algorithm that ran (wsp_coll_predict; '-' when it has\n"
    "no cost, as native). auto shows the algorithm it chose, and an\n"
    "algorithm whose preconditions fail here (e.g. p not a power of two)\n"
    "shows the fallback that ran instead (wsp_coll_select). Before timing,\n"
    "the MPI collective and every algorithm run once on the same input and\n"
    "their results are checked against its exact answer: exit status 1\n"
    "when any result was wrong.\n";

static int parse(coll_opts_t *o, int argc, char **argv, int rank, int size) {
  for (int c = 0; c < WSP_COLL_COUNT; c++) coll_names[c] = wsp_coll_name((wsp_coll_t)c);
  const wsp_opt_t table[] = {
      {"--colls", WSP_OPT_CHOICE_LIST, &o->colls, "LIST",
       "comma-separated, among bcast, reduce, allreduce, gather, scatter, "
       "allgather, alltoall",
       "all", 0, 0, coll_names, NULL},
      {"--sizes", WSP_OPT_SIZE_LIST, &o->sizes, "LIST",
       "message sizes S in bytes, at most 1G, as in nccl-tests: the whole message "
       "for bcast/reduce/allreduce, the p-block buffer for gather/scatter/"
       "allgather/alltoall (block = S/p rounded down to whole elements; sizes "
       "whose block is empty are skipped)",
       "8,64,512,4K,32K,256K,1M,4M,16M,64M", 0, (double)(1 << 30), NULL, NULL},
      {"--algs", WSP_OPT_STRING_LIST, &o->algs, "LIST",
       "algorithm names of the collectives' tables (see wsp-info), \"native\" "
       "(wirespeed's native row, the MPI collective on its private "
       "communicator), \"mpi\" (the plain MPI collective on MPI_COMM_WORLD: the "
       "reference) and \"auto\"; a name a collective does not have is skipped "
       "for that collective",
       "every table algorithm, mpi and auto", 0, 0, NULL, NULL},
      {"--iters", WSP_OPT_INT, &o->iters, "N", "timed calls per repetition",
       "as many as make the timed calls of a row take --seconds", 1, MAX_ITERS, NULL, NULL},
      {"--seconds", WSP_OPT_DOUBLE, &o->max_time, "SEC",
       "seconds of timed calls per row, all repetitions together, when --iters is "
       "not given; at least one call per repetition",
       "0.2", 1e-6, 1e5, NULL, NULL},
      WSP_OPT_DEPRECATED("--max-time", "--seconds"),
      {"--warmup", WSP_OPT_INT, &o->warmup, "N",
       "untimed calls per algorithm and row before the repetitions, after one "
       "checked call and the calls that time one",
       "min(iters, 5)", 0, MAX_ITERS, NULL, NULL},
      {"--reps", WSP_OPT_INT, &o->reps, "N", "repetitions; the median is reported", "5", 1, 1000,
       NULL, NULL},
      {"--root", WSP_OPT_INT, &o->root, "R", "root of bcast/reduce/gather/scatter", "0", 0,
       size - 1, NULL, NULL},
      {"--dtype", WSP_OPT_CHOICE, &o->is_int, "T", "double or int; reductions use MPI_SUM",
       "double", 0, 0, dtype_names, NULL},
      {"--sync", WSP_OPT_CHOICE, &o->sync, "HOW",
       "how a repetition starts: barrier (each rank's clock starts as it "
       "leaves a barrier; back-to-back calls, as nccl-tests) or window (all "
       "ranks start at one agreed instant and the time runs to the last "
       "rank's end: with --iters 1, one call's latency; needs one clock for "
       "all ranks: SimGrid, MPI_WTIME_IS_GLOBAL, or one machine)",
       "barrier", 0, 0, sync_names, NULL},
      {"--refresh-every", WSP_OPT_DOUBLE, &o->refresh_every, "SEC",
       "with a network map attached (WSP_NETMAP), refresh one round of it "
       "(wsp_netmap_refresh) and attach it again between rows whenever SEC "
       "seconds have passed since the last refresh; the end of the run "
       "reports the refreshes' share of the run time (0: never)",
       "0", 0, 1e6, NULL, NULL},
      {"--sites", WSP_OPT_FLAG, &o->sites, NULL,
       "the communicator has sites (WSP_SITES, or a network map's groups): "
       "show them and the model's figures between them, and report wanbw, the "
       "bytes each link between two sites carries per direction over the time "
       "(S / time for bcast and allreduce, whose every byte crosses each "
       "link once per direction; other collectives get no wanbw); refuse to run "
       "without sites",
       NULL, 0, 0, NULL, NULL},
      {"--max-bytes-per-rank", WSP_OPT_SIZE, &o->max_bytes, "SIZE",
       "refuse to start when the send and receive buffers of the largest row "
       "(2 S per rank) need more",
       "1G", 0, 0, NULL, NULL},
      WSP_BENCH_OPT_JSON(o->io, "append one JSON line per row"),
      WSP_BENCH_OPT_LABEL(o->io),
      WSP_BENCH_OPT_PLOT(o->io, "after the run, draw busbw per algorithm with "
                                "python/wsp_report (rank 0; needs Python 3 with "
                                "matplotlib; WSP_PLOT_SCRIPT overrides its directory)"),
      WSP_BENCH_OPT_QUIET(o->io),
      WSP_BENCH_OPT_END};
  const wsp_opt_cmd_t cmd = {"usage: mpirun -np N wsp-bench coll [options]\n", table,
                             coll_footer};
  return wsp_bench_parse(&cmd, argc, argv, rank);
}

/* Index of algorithm `name` of collective c (WSP_ALG_AUTO for "auto"), or
 * ALG_NONE when it has none: looked up here, not with
 * wsp_coll_alg_from_name, which would log an error for every collective
 * that lacks the name. */
static int find_alg(wsp_coll_t c, const char *name) {
  if (!strcmp(name, "auto")) return WSP_ALG_AUTO;
  for (int a = 0; a < wsp_coll_alg_count(c); a++)
    if (!strcmp(wsp_coll_alg_info(c, a)->name, name)) return a;
  return ALG_NONE;
}

/* Rank 0: the names --algs accepts for the selected collectives, each once. */
static void list_alg_names(const coll_opts_t *o) {
  fprintf(stderr, "  mpi, auto");
  for (int k = 0; k < o->colls.n; k++) {
    wsp_coll_t c = (wsp_coll_t)o->colls.v[k];
    for (int a = 0; a < wsp_coll_alg_count(c); a++) {
      const char *nm = wsp_coll_alg_info(c, a)->name;
      int seen = 0; /* listed for an earlier collective, or earlier here */
      for (int j = 0; j < k && !seen; j++)
        seen = find_alg((wsp_coll_t)o->colls.v[j], nm) >= 0;
      for (int b = 0; b < a && !seen; b++)
        seen = !strcmp(wsp_coll_alg_info(c, b)->name, nm);
      if (!seen) fprintf(stderr, ", %s", nm);
    }
  }
  fprintf(stderr, "\n");
}

/* Every --algs name must exist in some selected collective, or it is a
 * typo. 0, or 2 (message on rank 0). */
static int check_alg_names(const coll_opts_t *o, int rank) {
  for (int i = 0; i < o->algs.n; i++) {
    const char *name = o->algs.item[i];
    int found = !strcmp(name, "mpi");
    for (int k = 0; k < o->colls.n && !found; k++)
      found = find_alg((wsp_coll_t)o->colls.v[k], name) != ALG_NONE;
    if (found) continue;
    if (rank == 0) {
      fprintf(stderr,
              "error: --algs: no selected collective has an algorithm \"%s\"; "
              "valid names:\n",
              name);
      list_alg_names(o);
    }
    return 2;
  }
  return 0;
}

/* The rows of collective c: --algs resolved against its table, or every
 * table algorithm + mpi + auto. "mpi" first: the reference. */
static int resolve_algs(const coll_opts_t *o, wsp_coll_t c, int *algs) {
  int n = 0;
  if (o->algs.n == 0) {
    algs[n++] = ALG_MPI;
    for (int a = 0; a < wsp_coll_alg_count(c) && n < MAX_ALGS - 1; a++)
      algs[n++] = a;
    algs[n++] = WSP_ALG_AUTO;
    return n;
  }
  for (int i = 0; i < o->algs.n; i++) {
    const char *name = o->algs.item[i];
    int a = !strcmp(name, "mpi") ? ALG_MPI : find_alg(c, name);
    if (a == ALG_NONE) continue;
    int dup = 0;
    for (int j = 0; j < n; j++) dup |= algs[j] == a;
    if (!dup) algs[n++] = a;
  }
  return n;
}

/* ---- the run ---- */
typedef struct coll_bench {
  const coll_opts_t *o;
  int rank, size;
  int algs[WSP_COLL_COUNT][MAX_ALGS], nalgs[WSP_COLL_COUNT]; /* per --colls entry */
  size_t esz;
  MPI_Datatype dt;
  size_t maxs; /* bytes of each buffer */
  void *sbuf, *rbuf;
  double *times; /* [rep * MAX_ALGS + alg] */
  wsp_comm_t *comm;
  wsp_model_t model;
  wsp_bench_out_t out;
  int mismatches; /* algorithms (and references) that gave a wrong result */
  int lanes_shown; /* 1 once the model over the lanes has been printed */
  /* --refresh-every: the map, when the last refresh ended, how many there
   * were and the seconds they took (the slowest rank's). */
  wsp_netmap_t *map;
  double refreshed_at, refresh_s;
  int refreshes;
} coll_bench_t;

/* What each algorithm of a row needs between its check and its report. */
typedef struct row_state {
  int na;
  const int *al;
  int ran[MAX_ALGS];        /* the algorithm that really runs */
  long iters[MAX_ALGS];
  long long bad[MAX_ALGS];  /* ranks whose result was wrong */
} row_state_t;

/* The buffers of the largest row, two of S bytes (see fill()), refused
 * when over --max-bytes-per-rank. 0, or 2 (message on rank 0). */
static int size_buffers(coll_bench_t *b) {
  const coll_opts_t *o = b->o;
  size_t maxs = 0;
  for (int k = 0; k < o->colls.n; k++)
    for (int i = 0; i < o->sizes.n && b->nalgs[k] > 0; i++)
      if (o->sizes.v[i] > maxs) maxs = o->sizes.v[i];
  b->maxs = maxs / b->esz * b->esz;
  if (2 * b->maxs <= o->max_bytes) return 0;
  if (b->rank == 0) {
    char s1[32], s2[32];
    fprintf(stderr,
            "error: the largest size, %s, needs send and receive buffers of "
            "%s each = %zu bytes per rank, more than --max-bytes-per-rank "
            "%s (%zu bytes); drop that size from --sizes or raise "
            "--max-bytes-per-rank\n",
            wsp_fmt_size(b->maxs, s1, sizeof s1), s1, 2 * b->maxs,
            wsp_fmt_size(o->max_bytes, s2, sizeof s2), o->max_bytes);
  }
  return 2;
}

/* The same buffers on every rank of a node must fit its memory. The node
 * map is the library's (wsp_comm_topology, which honours WSP_NODES), so
 * this check and the node-aware algorithms agree on what a node is. 0, or
 * 2 on every rank (message from the ranks whose node is short). */
static int check_node_memory(const coll_bench_t *b) {
  wsp_topology_t topo;
  if (wsp_comm_topology(b->comm, &topo) != WSP_OK)
    wsp_bench_die(b->rank, "wsp_comm_topology", wsp_last_error());
  long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
  double phys = pages > 0 && psize > 0 ? (double)pages * (double)psize : 0;
  double need = 2.0 * (double)b->maxs * topo.node_ranks;
  int bad = phys > 0 && need > 0.75 * phys, anybad = 0;
  MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (bad)
    fprintf(stderr,
            "error: rank %d: %d ranks on this node x 2 x %zu bytes of "
            "buffers = %.1f GiB, over 3/4 of its %.1f GiB of memory; "
            "use smaller --sizes or fewer ranks per node\n",
            b->rank, topo.node_ranks, b->maxs, need / (1 << 30), phys / (1 << 30));
  return anybad ? 2 : 0;
}

/* --sync window compares MPI_Wtime across ranks: allowed when it is one
 * clock, that is under SimGrid (simulated time), when the MPI says so
 * (MPI_WTIME_IS_GLOBAL), or when every rank runs on one machine (the same
 * kernel boot id: netlab's hosts are namespaces of one kernel). 0, or 2. */
static int check_sync(const coll_bench_t *b) {
  if (b->o->sync != SYNC_WINDOW) return 0;
#ifdef WSP_SIMGRID
  return 0;
#else
  int *global = NULL, flag = 0;
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_WTIME_IS_GLOBAL, &global, &flag);
  if (flag && global && *global) return 0;
  char boot[64] = "";
  FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
  if (f) {
    if (!fgets(boot, sizeof boot, f)) boot[0] = '\0';
    fclose(f);
  }
  char first[64];
  memcpy(first, boot, sizeof first);
  MPI_Bcast(first, sizeof first, MPI_CHAR, 0, MPI_COMM_WORLD);
  int differ = boot[0] == '\0' || strcmp(first, boot) != 0, any = 0;
  MPI_Allreduce(&differ, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (any && b->rank == 0)
    fprintf(stderr, "error: --sync window needs one clock for all ranks: the ranks run on "
                    "more than one machine and MPI_WTIME_IS_GLOBAL is not set; use --sync "
                    "barrier\n");
  return any ? 2 : 0;
#endif
}

static void alloc_buffers(coll_bench_t *b) {
  size_t n = b->maxs ? b->maxs : 1;
  b->sbuf = malloc(n);
  b->rbuf = malloc(n);
  b->times = malloc((size_t)b->o->reps * MAX_ALGS * sizeof *b->times);
  if (!b->sbuf || !b->rbuf || !b->times) {
    char what[96];
    snprintf(what, sizeof what, "out of memory (2 x %zu bytes)", b->maxs);
    wsp_bench_die(b->rank, what, NULL);
  }
  memset(b->sbuf, 0, n);
  memset(b->rbuf, 0, n);
}

static void print_header(const coll_bench_t *b) {
  const wsp_model_t *m = &b->model;
  wsp_topology_t topo;
  wsp_comm_topology(b->comm, &topo);
  printf("# wsp-bench coll: p=%d, %s, op sum, root %ld, %ld reps (median), %s\n",
         b->size, dtype_names[b->o->is_int], b->o->root, b->o->reps, b->out.mpi);
  printf("# model: alpha %.3g s, beta %.3g s/B, gamma %.3g s/B, beta_x "
         "%.3g s/B, gap %.3g s, node alpha %.3g s, node beta %.3g s/B (%s)\n",
         m->alpha, m->beta, m->gamma, m->beta_x, m->gap, m->alpha_node, m->beta_node,
         m->calibrated ? "calibrated" : "configured");
  if (m->eager || m->eager_node)
    printf("# eager limit (%s): %zu bytes between nodes, %zu inside a node\n",
           wsp_eager_from_name(m->eager_from), m->eager, m->eager_node);
  printf("# nodes: %d, at most %d ranks per node%s\n", topo.nodes, topo.max_node_ranks,
         topo.blocks ? " (blocks of consecutive ranks)" : "");
  if (b->o->sites)
    printf("# sites: %d, this rank's of %d ranks; %d connections between two sites of %d "
           "lanes each; alpha_wan %.3g s, beta_wan %.3g s/B per connection, beta_wan_link %.3g s/B "
           "(0: unknown); wanbw in the note (GB/s through each link between sites)\n",
           topo.sites, topo.site_ranks, topo.wan_connections, topo.wan_lanes, m->alpha_wan,
           m->beta_wan, m->beta_wan_link);
  printf("# time: %s; algbw = size/time, busbw = ",
         b->o->sync == SYNC_WINDOW ? "from an instant all ranks start at to the last rank's "
                                     "end, per call"
                                   : "slowest rank's mean per call");
  printf("algbw x nccl-tests factor (GB/s = 1e9 B/s);\n# ratio = mpi time / "
         "time (>1: faster than MPI); pred = model's time of what ran\n");
  printf("%-9s %7s %7s %-20s %8s %11s %9s %9s %7s %11s  %s\n", "coll", "size",
         "block", "alg", "iters", "time_us", "algbw", "busbw", "ratio", "pred_us",
         "note");
  fflush(stdout);
}

/* The row of collective c at size S: element counts, or 0 (with a note in
 * the table) when an element does not fit. */
static int row_init(const coll_bench_t *b, wsp_coll_t c, size_t S, row_t *w) {
  *w = (row_t){.coll = c, .comm = b->comm, .p = b->size, .rank = b->rank,
               .root = rooted(c) ? (int)b->o->root : 0, .is_int = b->o->is_int,
               .sync = b->o->sync,
               .dt = b->dt, .esz = b->esz, .sbuf = b->sbuf, .rbuf = b->rbuf};
  if (whole_message(c)) {
    w->count = S / b->esz;
    w->bytes = w->block = w->count * b->esz;
  } else {
    w->count = S / (size_t)b->size / b->esz;
    w->block = w->count * b->esz;
    w->bytes = w->block * (size_t)b->size;
  }
  if (w->count > 0) return 1;
  if (b->rank == 0 && !b->o->io.quiet)
    printf("# %s %zu: skipped (%s)\n", wsp_coll_name(c), S,
           whole_message(c) ? "less than one element"
                            : "a block would be less than one element");
  return 0;
}

/* One call of `alg` on fresh input, its output checked against the exact
 * answer. Returns the number of ranks with a wrong result (on every rank);
 * each of them prints the first wrong element. */
static long long checked_call(const row_t *w, int alg, const char *who) {
  fill(w);
  run_once(w, alg);
  double want = 0;
  long long first = verify(w, &want);
  long long mine = first >= 0, anybad = 0;
  MPI_Allreduce(&mine, &anybad, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (first >= 0)
    fprintf(stderr,
            "MISMATCH: rank %d: %s %s, %zu bytes: element %lld of the result is "
            "%.17g, expected %.17g\n",
            w->rank, wsp_coll_name(w->coll), who, w->bytes, first,
            get(w, w->rbuf, (size_t)first), want);
  return anybad;
}

/* Calls per repetition: given, or timed 1, 8, 64, ... calls until they
 * take a millisecond, then as many as fill --max-time over the reps. */
static long choose_iters(const coll_opts_t *o, const row_t *w, int alg) {
  if (o->iters > 0) return o->iters;
  long n = 1;
  double t;
  for (;;) {
    t = time_calls(w, alg, n);
    if (t >= 1e-3 || n >= MAX_ITERS / 8) break;
    n *= 8;
  }
  double per = t / (double)n;
  double goal = o->max_time / ((double)o->reps * (per > 0 ? per : 1e-9));
  return goal < 1 ? 1 : goal > MAX_ITERS ? MAX_ITERS : (long)goal;
}

/* Before timing: MPI's own result on this input, then per algorithm its
 * checked call, what really runs (a forced algorithm whose preconditions
 * fail runs its fallback; asked after the call, which may have decided
 * the transport and with it the model), its iteration count and its
 * warmup. */
static void prepare_row(coll_bench_t *b, const row_t *w, row_state_t *s) {
  if (checked_call(w, ALG_MPI, "mpi (the reference)") > 0) b->mismatches++;
  for (int a = 0; a < s->na; a++) {
    int alg = s->al[a];
    select_alg(w, alg);
    s->ran[a] = -1;
    s->bad[a] = checked_call(w, alg, alg_name(w->coll, alg));
    if (alg != ALG_MPI && wsp_coll_select(b->comm, w->coll, w->block, 1, &s->ran[a]) != WSP_OK)
      wsp_bench_die(b->rank, "wsp_coll_select", wsp_last_error());
    b->mismatches += s->bad[a] > 0;
    s->iters[a] = choose_iters(b->o, w, alg);
    long wu = b->o->warmup >= 0 ? b->o->warmup : (s->iters[a] < 5 ? s->iters[a] : 5);
    for (long i = 0; i < wu; i++) run_once(w, alg);
  }
}

/* The timed repetitions, algorithms in a new random order each. */
static void time_row(coll_bench_t *b, const row_t *w, const row_state_t *s,
                     uint64_t order_state) {
  for (long r = 0; r < b->o->reps; r++) {
    int order[MAX_ALGS];
    wsp_random_order(order, s->na, &order_state);
    for (int j = 0; j < s->na; j++) {
      int a = order[j];
      select_alg(w, s->al[a]);
      b->times[r * MAX_ALGS + a] =
          time_calls(w, s->al[a], s->iters[a]) / (double)s->iters[a];
    }
  }
}

/* Collectives whose every byte crosses each link between two sites once
 * per direction (bcast from the root's site; allreduce both ways): their
 * wanbw is S / time. */
static int crosses_once(wsp_coll_t c) { return c == WSP_COLL_BCAST || c == WSP_COLL_ALLREDUCE; }

/* One algorithm's figures in a row, as the table and the JSON show them. */
typedef struct alg_result {
  double t, t_min, algbw, fac, ratio, pred; /* ratio, pred: -1 when none */
} alg_result_t;

static void print_line(const coll_bench_t *b, const row_t *w, size_t S,
                       const row_state_t *s, int a, const alg_result_t *r) {
  wsp_coll_t c = w->coll;
  char sz[32], bk[32], pr[32], ra[32], note[128] = "";
  wsp_fmt_size(S, sz, sizeof sz);
  wsp_fmt_size(w->block, bk, sizeof bk);
  if (r->pred >= 0) snprintf(pr, sizeof pr, "%.2f", r->pred * 1e6);
  else snprintf(pr, sizeof pr, "-");
  if (r->ratio > 0) snprintf(ra, sizeof ra, "%.3f", r->ratio);
  else snprintf(ra, sizeof ra, "-");
  if (s->al[a] == WSP_ALG_AUTO)
    snprintf(note, sizeof note, "-> %s", alg_name(c, s->ran[a]));
  else if (s->al[a] >= 0 && s->ran[a] != s->al[a])
    snprintf(note, sizeof note, "preconditions fail: ran %s", alg_name(c, s->ran[a]));
  if (b->o->sites && crosses_once(c))
    snprintf(note + strlen(note), sizeof note - strlen(note), "%swanbw %.4f", *note ? " " : "",
             (double)w->bytes / r->t * 1e-9);
  if (s->bad[a])
    snprintf(note + strlen(note), sizeof note - strlen(note), "%sMISMATCH on %lld rank(s)",
             *note ? " " : "", s->bad[a]);
  printf("%-9s %7s %7s %-20s %8ld %11.2f %9.4f %9.4f %7s %11s  %s\n", wsp_coll_name(c),
         sz, whole_message(c) ? "-" : bk, alg_name(c, s->al[a]), s->iters[a], r->t * 1e6,
         r->algbw, r->algbw * r->fac, ra, pr, note);
}

static void json_line(coll_bench_t *b, const row_t *w, size_t S, const row_state_t *s,
                      int a, const alg_result_t *r) {
  const wsp_model_t *m = &b->model;
  wsp_coll_t c = w->coll;
  int alg = s->al[a], ran = s->ran[a];
  json_t *j = wsp_bench_record(&b->out);
  json_object_set_new(j, "coll", json_string(wsp_coll_name(c)));
  json_object_set_new(j, "alg", json_string(alg_name(c, alg)));
  json_object_set_new(j, "chosen",
                      alg == WSP_ALG_AUTO ? json_string(alg_name(c, ran)) : json_null());
  json_object_set_new(j, "ran", ran >= 0 ? json_string(alg_name(c, ran)) : json_null());
  json_object_set_new(j, "size", json_integer((json_int_t)S));
  json_object_set_new(j, "bytes", json_integer((json_int_t)w->bytes));
  json_object_set_new(j, "block", json_integer((json_int_t)w->block));
  json_object_set_new(j, "count", json_integer((json_int_t)w->count));
  json_object_set_new(j, "dtype", json_string(dtype_names[b->o->is_int]));
  json_object_set_new(j, "root", rooted(c) ? json_integer(b->o->root) : json_null());
  json_object_set_new(j, "iters", json_integer(s->iters[a]));
  json_object_set_new(j, "sync", json_string(sync_names[b->o->sync]));
  json_object_set_new(j, "reps", json_integer(b->o->reps));
  json_object_set_new(j, "time_s", json_real(r->t));
  json_object_set_new(j, "time_s_min", json_real(r->t_min));
  json_object_set_new(j, "algbw_GBps", json_real(r->algbw));
  json_object_set_new(j, "busbw_GBps", json_real(r->algbw * r->fac));
  json_object_set_new(j, "busbw_factor", json_real(r->fac));
  if (r->ratio > 0) json_object_set_new(j, "ratio_to_mpi", json_real(r->ratio));
  json_object_set_new(j, "predicted_s", r->pred >= 0 ? json_real(r->pred) : json_null());
  json_object_set_new(j, "check", json_string(s->bad[a] ? "MISMATCH" : "ok"));
  if (b->o->sites) {
    wsp_topology_t topo;
    wsp_comm_topology(b->comm, &topo);
    json_object_set_new(j, "sites", json_integer(topo.sites));
    json_object_set_new(j, "wan_connections", json_integer(topo.wan_connections));
    json_object_set_new(j, "wan_lanes", json_integer(topo.wan_lanes));
    json_object_set_new(j, "wanbw_GBps", crosses_once(c)
                                             ? json_real((double)w->bytes / r->t * 1e-9)
                                             : json_null());
    json_object_set_new(j, "model_wan",
                        json_pack("{s:f, s:f, s:f}", "alpha_wan", m->alpha_wan, "beta_wan",
                                  m->beta_wan, "beta_wan_link", m->beta_wan_link));
  }
  json_object_set_new(j, "model",
                      json_pack("{s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:b, s:I, s:I, s:s, s:I, s:f}",
                                "alpha", m->alpha, "beta", m->beta, "gamma", m->gamma, "beta_x",
                                m->beta_x, "alpha_node", m->alpha_node, "beta_node", m->beta_node,
                                "gap", m->gap, "calibrated", m->calibrated, "eager",
                                (json_int_t)m->eager, "eager_node", (json_int_t)m->eager_node,
                                "eager_from", wsp_eager_from_name(m->eager_from), "lanes_min",
                                (json_int_t)m->lanes_min, "lanes_drain", m->lanes_drain));
  wsp_bench_emit(&b->out, j);
}

/* Rank 0: the row's statistics, table lines and JSON records. */
static void report_row(coll_bench_t *b, const row_t *w, size_t S, const row_state_t *s) {
  alg_result_t res[MAX_ALGS];
  double tmpi = -1, col[1000]; /* --reps is at most 1000 */
  /* The model as the row's calls saw it: the first large call may have
   * put the lanes under the collectives, and their figures into it. */
  if (wsp_comm_model(b->comm, &b->model) != WSP_OK)
    wsp_bench_die(b->rank, "wsp_comm_model", wsp_last_error());
  if (b->model.lanes_min && !b->lanes_shown && !b->o->io.quiet) {
    /* The header's model was the one before the lanes were decided. */
    const wsp_model_t *m = &b->model;
    printf("# model over the lanes from here on: alpha %.3g s, beta %.3g s/B, beta_x %.3g s/B; "
           "transfers of %zu bytes or more between nodes take the lanes, whose queue drains "
           "in %.3g s\n",
           m->alpha, m->beta, m->beta_x, m->lanes_min, m->lanes_drain);
    b->lanes_shown = 1;
  }
  for (int a = 0; a < s->na; a++) {
    wsp_stats_t st;
    for (long r = 0; r < b->o->reps; r++) col[r] = b->times[r * MAX_ALGS + a];
    wsp_stats_sorted(col, (size_t)b->o->reps, &st);
    res[a] = (alg_result_t){.t = st.median, .t_min = st.min,
                            .fac = bus_factor(w->coll, b->size), .pred = -1};
    if (s->al[a] == ALG_MPI) tmpi = st.median;
  }
  for (int a = 0; a < s->na; a++) {
    alg_result_t *r = &res[a];
    r->algbw = r->t > 0 ? (double)w->bytes / r->t / 1e9 : 0;
    r->ratio = tmpi > 0 && r->t > 0 ? tmpi / r->t : -1;
    if (s->ran[a] >= 0 &&
        wsp_coll_predict(b->comm, w->coll, s->ran[a], w->block, 1, &r->pred) != WSP_OK)
      wsp_bench_die(b->rank, "wsp_coll_predict", wsp_last_error());
    if (!b->o->io.quiet) print_line(b, w, S, s, a, r);
    if (wsp_bench_out_wanted(&b->out)) json_line(b, w, S, s, a, r);
  }
  if (!b->o->io.quiet) fflush(stdout);
}

static void run_row(coll_bench_t *b, int k, int si) {
  wsp_coll_t c = (wsp_coll_t)b->o->colls.v[k];
  size_t S = b->o->sizes.v[si];
  row_t w;
  if (!row_init(b, c, S, &w)) return;
  row_state_t s = {.na = b->nalgs[k], .al = b->algs[k]};
  prepare_row(b, &w, &s);
  time_row(b, &w, &s, (uint64_t)(k * 1000 + si) * 0x9e3779b97f4a7c15ull);
  if (b->rank == 0) report_row(b, &w, S, &s);
}

/* --refresh-every: between rows, when rank 0 finds the time has come,
 * every rank refreshes one round of the map and attaches it again. */
static void maybe_refresh(coll_bench_t *b) {
  if (b->map == NULL) return;
  int due = MPI_Wtime() - b->refreshed_at >= b->o->refresh_every;
  MPI_Bcast(&due, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (!due) return;
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  if (wsp_netmap_refresh(b->comm, b->map, 1) != WSP_OK ||
      wsp_comm_set_netmap(b->comm, b->map) != WSP_OK)
    wsp_bench_die(b->rank, "--refresh-every", wsp_last_error());
  double t = MPI_Wtime() - t0, most = 0;
  wsp_bench_max(&t, &most, 1, b->rank, "the refresh's times");
  b->refresh_s += most;
  b->refreshes++;
  b->refreshed_at = MPI_Wtime();
}

static void report_refresh(coll_bench_t *b, double run_s) {
  if (b->map == NULL || b->rank != 0) return;
  double share = run_s > 0 ? b->refresh_s / run_s : 0;
  if (!b->o->io.quiet)
    printf("# refresh: %d refreshes of one round every %g s took %.4f s of %.2f s (%.3f%%)\n",
           b->refreshes, b->o->refresh_every, b->refresh_s, run_s, 100 * share);
  if (wsp_bench_out_wanted(&b->out)) {
    json_t *j = wsp_bench_record(&b->out);
    json_object_set_new(j, "bench", json_string("coll-refresh"));
    json_object_set_new(j, "refresh_every_s", json_real(b->o->refresh_every));
    json_object_set_new(j, "refreshes", json_integer(b->refreshes));
    json_object_set_new(j, "refresh_s", json_real(b->refresh_s));
    json_object_set_new(j, "run_s", json_real(run_s));
    json_object_set_new(j, "share", json_real(share));
    wsp_bench_emit(&b->out, j);
  }
}

/* Everything before the first row; 0, or the exit code. */
static int setup(coll_bench_t *b, wsp_bench_post_t *post) {
  const coll_opts_t *o = b->o;
  int rc = check_alg_names(o, b->rank);
  if (rc) return rc;
  for (int k = 0; k < o->colls.n; k++)
    b->nalgs[k] = resolve_algs(o, (wsp_coll_t)o->colls.v[k], b->algs[k]);
  b->esz = o->is_int ? sizeof(int) : sizeof(double);
  b->dt = o->is_int ? MPI_INT : MPI_DOUBLE;
  if ((rc = size_buffers(b)) != 0) return rc;
  if (wsp_comm_create(MPI_COMM_WORLD, NULL, &b->comm) != WSP_OK)
    wsp_bench_die(b->rank, "wsp_comm_create", wsp_last_error());
  if ((rc = check_node_memory(b)) != 0) return rc;
  if (o->sites) {
    wsp_topology_t topo;
    wsp_comm_topology(b->comm, &topo);
    if (topo.sites < 2) {
      if (b->rank == 0)
        fprintf(stderr, "error: --sites: the communicator has %s; set WSP_SITES (e.g. "
                        "WSP_SITES=\"ranks:0-3;4-7\") or attach a network map whose nodes "
                        "form groups (WSP_NETMAP)\n",
                topo.sites ? "one site" : "no sites");
      return 2;
    }
  }
  if ((rc = check_sync(b)) != 0) return rc;
  if (wsp_comm_model(b->comm, &b->model) != WSP_OK)
    wsp_bench_die(b->rank, "wsp_comm_model", wsp_last_error());
  if ((rc = wsp_bench_out_open(&b->out, "coll", &o->io, b->rank, b->size, NULL, post)))
    return rc;
  if (o->refresh_every > 0) {
    const char *path = getenv("WSP_NETMAP");
    if (path == NULL || *path == '\0') {
      if (b->rank == 0)
        fprintf(stderr, "error: --refresh-every needs a network map attached: set WSP_NETMAP "
                        "to a map file (wsp-probe --out FILE)\n");
      return 2;
    }
    if (wsp_netmap_load(b->comm, path, &b->map) != WSP_OK)
      wsp_bench_die(b->rank, "wsp_netmap_load", wsp_last_error());
    b->refreshed_at = MPI_Wtime();
  }
  alloc_buffers(b);
  return 0;
}

int wsp_bench_coll(int argc, char **argv, int rank, int size, wsp_bench_post_t *post) {
  coll_opts_t o = {.colls = {.n = WSP_COLL_COUNT}, .iters = 0, .warmup = -1, .reps = 5,
                   .root = 0, .max_time = 0.2, .max_bytes = (size_t)1 << 30,
                   .sizes = {{8, 64, 512, 4096, 32768, 262144, 1u << 20, 4u << 20,
                              16u << 20, 64u << 20},
                             10},
                   .io = {.label = ""}};
  for (int c = 0; c < WSP_COLL_COUNT; c++) o.colls.v[c] = c;
  int rc = parse(&o, argc, argv, rank, size);
  if (rc >= 0) return rc;
  coll_bench_t b = {.o = &o, .rank = rank, .size = size};
  if ((rc = setup(&b, post)) == 0) {
    if (rank == 0 && !o.io.quiet) print_header(&b);
    double t0 = MPI_Wtime();
    for (int k = 0; k < o.colls.n; k++)
      for (int si = 0; si < o.sizes.n && b.nalgs[k] > 0; si++) {
        run_row(&b, k, si);
        maybe_refresh(&b);
      }
    report_refresh(&b, MPI_Wtime() - t0);
  }
  wsp_netmap_free(&b.map);
  if (b.comm) wsp_comm_free(&b.comm);
  wsp_bench_out_close(&b.out);
  free(b.sbuf);
  free(b.rbuf);
  free(b.times);
  if (rc) return rc;
  if (b.mismatches) {
    if (rank == 0)
      fprintf(stderr, "error: %d result(s) were wrong (MISMATCH above)\n", b.mismatches);
    return 1;
  }
  return 0;
}
