/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * wsp-bench sparse — time per round of the sparse-exchange algorithms.
 *
 * For each density and message size, every rank draws a random set of
 * destinations per round from a seed (the pattern changes every round, as
 * in a graph engine), and each algorithm runs `iters` back-to-back rounds.
 * Algorithms are interleaved within each repetition (in a random order,
 * new each repetition) and the median over repetitions is reported, so all figures of one row
 * come from the same minutes of the same machine. The time of a block of
 * rounds is the slowest rank's.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "pattern.h"
#include "stats.h"

#define NPAT 8 /* distinct patterns cycled through */

typedef struct sparse_opts {
  wsp_opt_sizes_t sizes;
  wsp_opt_doubles_t dens;
  wsp_opt_ints_t algs; /* wsp_sparse_alg_t values */
  long iters, reps, warmup, seed;
  wsp_bench_io_t io;
} sparse_opts_t;

/* The choices of --algs: the algorithms in enum order, then auto, whose
 * index (WSP_SPARSE_ALG_COUNT) parse turns into WSP_SPARSE_AUTO. */
static const char *alg_names[WSP_SPARSE_ALG_COUNT + 2];

static const char *alg_name(int alg) { return wsp_sparse_alg_info((wsp_sparse_alg_t)alg)->name; }

static int parse(sparse_opts_t *o, int argc, char **argv, int rank) {
  for (int a = 0; a < WSP_SPARSE_ALG_COUNT; a++) alg_names[a] = alg_name(a);
  alg_names[WSP_SPARSE_ALG_COUNT] = alg_name(WSP_SPARSE_AUTO);
  const wsp_opt_t table[] = {
      {"--sizes", WSP_OPT_SIZE_LIST, &o->sizes, "LIST", "message sizes, at most 1G", "1K,64K", 0,
       (double)(1 << 30), NULL, NULL},
      {"--densities", WSP_OPT_DENSITY_LIST, &o->dens, "LIST",
       "fractions of the other ranks each rank sends to; 1/p means one peer", "1/p,0.1,0.5", 0, 0,
       NULL, NULL},
      {"--algs", WSP_OPT_CHOICE_LIST, &o->algs, "LIST", "among nbx,pex,alltoallv,auto", "all", 0, 0,
       alg_names, NULL},
      {"--iters", WSP_OPT_INT, &o->iters, "N", "rounds per timing", "50", 1, 1000000, NULL, NULL},
      {"--reps", WSP_OPT_INT, &o->reps, "N", "repetitions; the median is reported", "5", 1, 1000,
       NULL, NULL},
      {"--warmup", WSP_OPT_INT, &o->warmup, "N",
       "untimed rounds per algorithm first; auto needs 10 to finish its first "
       "measurement",
       "12", 0, 1000000, NULL, NULL},
      {"--seed", WSP_OPT_INT, &o->seed, "N", "pattern seed", "1", 0, (double)(1LL << 40), NULL,
       NULL},
      WSP_BENCH_OPT_JSON(o->io, "append one JSON line per measurement"),
      WSP_BENCH_OPT_LABEL(o->io),
      WSP_BENCH_OPT_QUIET(o->io),
      WSP_BENCH_OPT_END};
  const wsp_opt_cmd_t cmd = {"usage: mpirun -np N wsp-bench sparse [options]\n", table,
                             NULL};
  int rc = wsp_bench_parse(&cmd, argc, argv, rank);
  for (int a = 0; a < o->algs.n; a++)
    if (o->algs.v[a] == WSP_SPARSE_ALG_COUNT) o->algs.v[a] = WSP_SPARSE_AUTO;
  return rc;
}

/* ---- one row: a density and a message size ---- */
typedef struct sparse_run {
  const sparse_opts_t *o;
  int rank, size;
  char *payload;
  int *dests;
  size_t *bytes;
  wsp_send_t *sends[NPAT];
  size_t nsend[NPAT];
  double *times; /* [rep * nalgs + alg], the slowest rank's (read on rank 0) */
} sparse_run_t;

static void run_alloc(sparse_run_t *r) {
  size_t maxsize = 1;
  for (int i = 0; i < r->o->sizes.n; i++)
    if (r->o->sizes.v[i] > maxsize) maxsize = r->o->sizes.v[i];
  r->payload = malloc(maxsize);
  r->dests = malloc((size_t)r->size * sizeof *r->dests);
  r->bytes = malloc((size_t)r->size * sizeof *r->bytes);
  r->times = malloc((size_t)r->o->reps * (size_t)r->o->algs.n * sizeof *r->times);
  int ok = r->payload && r->dests && r->bytes && r->times;
  for (int k = 0; k < NPAT; k++)
    ok &= (r->sends[k] = malloc((size_t)r->size * sizeof(wsp_send_t))) != NULL;
  if (!ok) wsp_bench_die(r->rank, "out of memory", NULL);
  memset(r->payload, 0xab, maxsize);
}

static void run_free(sparse_run_t *r) {
  for (int k = 0; k < NPAT; k++) free(r->sends[k]);
  free(r->payload);
  free(r->dests);
  free(r->bytes);
  free(r->times);
}

/* This rank's sends of the NPAT patterns of the row. */
static void make_patterns(sparse_run_t *r, wsp_pattern_t *pt) {
  for (int k = 0; k < NPAT; k++) {
    pt->round = (uint64_t)k;
    int n = wsp_pattern_sends(pt, r->rank, r->dests, r->bytes);
    for (int j = 0; j < n; j++)
      r->sends[k][j] = (wsp_send_t){.peer = r->dests[j], .data = r->payload,
                                    .bytes = r->bytes[j]};
    r->nsend[k] = (size_t)n;
  }
}

/* Round `it` of algorithm `alg`; returns the algorithm that ran. */
static wsp_sparse_alg_t round_once(sparse_run_t *r, wsp_comm_t *comm,
                                   wsp_sparse_alg_t alg, long it) {
  wsp_recvset_t out;
  int k = (int)(it % NPAT);
  if (wsp_sparse_exchange_alg(comm, alg, r->sends[k], r->nsend[k], &out) != WSP_OK)
    wsp_bench_die(r->rank, "wsp_sparse_exchange_alg", wsp_last_error());
  wsp_sparse_alg_t ran = out.alg;
  wsp_recvset_free(&out);
  return ran;
}

/* The timed repetitions; returns what auto chose last. */
static wsp_sparse_alg_t time_row(sparse_run_t *r, wsp_comm_t *comm,
                                 uint64_t order_state) {
  const sparse_opts_t *o = r->o;
  const int na = o->algs.n;
  wsp_sparse_alg_t chose = WSP_SPARSE_AUTO;
  for (int a = 0; a < na; a++)
    for (long it = 0; it < o->warmup; it++)
      round_once(r, comm, (wsp_sparse_alg_t)o->algs.v[a], it);
  for (long rep = 0; rep < o->reps; rep++) {
    /* A fresh random order per repetition (the same on every rank): with
     * a fixed rotation one algorithm always ran right after another
     * (auto after alltoallv in 3 of 4 repetitions) and carried whatever
     * that one left behind (busy-polling stragglers under MPICH). */
    int order[WSP_OPTS_MAX_LIST];
    wsp_random_order(order, na, &order_state);
    for (int j = 0; j < na; j++) {
      int a = order[j];
      wsp_sparse_alg_t alg = (wsp_sparse_alg_t)o->algs.v[a];
      MPI_Barrier(MPI_COMM_WORLD);
      double t0 = MPI_Wtime();
      for (long it = 0; it < o->iters; it++) {
        wsp_sparse_alg_t ran = round_once(r, comm, alg, it);
        if (alg == WSP_SPARSE_AUTO) chose = ran;
      }
      double t = (MPI_Wtime() - t0) / (double)o->iters, tmax = 0;
      wsp_bench_max(&t, &tmax, 1, r->rank, "the rounds' times");
      r->times[rep * na + a] = tmax;
    }
  }
  return chose;
}

static void print_header(const sparse_opts_t *o, int size, const char *mpiv) {
  printf("# wsp-bench sparse: p=%d, %ld iters x %ld reps (median), %s\n", size,
         o->iters, o->reps, mpiv);
  printf("# time per round in microseconds (slowest rank); ratio = time / "
         "alltoallv time\n");
  printf("%-9s %4s %7s", "density", "k", "size");
  for (int a = 0; a < o->algs.n; a++) printf(" %12s", alg_name(o->algs.v[a]));
  for (int a = 0; a < o->algs.n; a++) printf(" %9s", alg_name(o->algs.v[a]));
  printf("  auto-chose\n");
}

/* Rank 0: the row's table line and JSON records. */
static void report_row(const sparse_run_t *r, wsp_bench_out_t *out,
                       const wsp_pattern_t *pt, wsp_sparse_alg_t chose) {
  const sparse_opts_t *o = r->o;
  const int na = o->algs.n, k = wsp_pattern_k(pt);
  double med[WSP_OPTS_MAX_LIST], mn[WSP_OPTS_MAX_LIST], ref = 0;
  double *col = malloc((size_t)o->reps * sizeof *col);
  if (col == NULL) wsp_bench_die(r->rank, "out of memory", NULL);
  for (int a = 0; a < na; a++) {
    wsp_stats_t st;
    for (long rep = 0; rep < o->reps; rep++) col[rep] = r->times[rep * na + a];
    wsp_stats_sorted(col, (size_t)o->reps, &st);
    med[a] = st.median;
    mn[a] = st.min;
    if (o->algs.v[a] == WSP_SPARSE_ALLTOALLV) ref = med[a];
  }
  free(col);
  if (!o->io.quiet) {
    char sz[32];
    printf("%-9.4f %4d %7s", pt->density, k, wsp_fmt_size(pt->max_bytes, sz, sizeof sz));
    for (int a = 0; a < na; a++) printf(" %12.1f", med[a] * 1e6);
    for (int a = 0; a < na; a++) printf(" %9.3f", ref > 0 ? med[a] / ref : NAN);
    printf("  %s\n", alg_name(chose));
    fflush(stdout);
  }
  for (int a = 0; a < na && wsp_bench_out_wanted(out); a++) {
    int alg = o->algs.v[a];
    json_t *j = wsp_bench_record(out);
    json_object_set_new(j, "density", json_real(pt->density));
    json_object_set_new(j, "k", json_integer(k));
    json_object_set_new(j, "bytes", json_integer((json_int_t)pt->max_bytes));
    json_object_set_new(j, "alg", json_string(alg_name(alg)));
    json_object_set_new(j, "chosen",
                        json_string(alg_name(alg == WSP_SPARSE_AUTO ? (int)chose : alg)));
    json_object_set_new(j, "iters", json_integer(o->iters));
    json_object_set_new(j, "reps", json_integer(o->reps));
    json_object_set_new(j, "t_round_us", json_real(med[a] * 1e6));
    json_object_set_new(j, "t_round_us_min", json_real(mn[a] * 1e6));
    json_object_set_new(j, "ratio_to_alltoallv", json_real(ref > 0 ? med[a] / ref : -1.0));
    wsp_bench_emit(out, j);
  }
}

static void run_row(sparse_run_t *r, wsp_bench_out_t *out, int di, int si) {
  const sparse_opts_t *o = r->o;
  wsp_pattern_t pt = {.seed = (uint64_t)o->seed, .p = r->size,
                      .density = wsp_density_resolve(o->dens.v[di], r->size),
                      .min_bytes = o->sizes.v[si], .max_bytes = o->sizes.v[si]};
  make_patterns(r, &pt);
  /* A fresh communicator per row: auto then meets one steady pattern, as
   * in a job, instead of the previous row's. */
  wsp_comm_t *comm = NULL;
  if (wsp_comm_create(MPI_COMM_WORLD, NULL, &comm) != WSP_OK)
    wsp_bench_die(r->rank, "wsp_comm_create", wsp_last_error());
  uint64_t order_state = (uint64_t)o->seed * 7919u + (uint64_t)(di * 131 + si);
  wsp_sparse_alg_t chose = time_row(r, comm, order_state);
  wsp_comm_free(&comm);
  if (r->rank == 0) report_row(r, out, &pt, chose);
}

int wsp_bench_sparse(int argc, char **argv, int rank, int size,
                     wsp_bench_post_t *post) {
  sparse_opts_t o = {
      .sizes = {{1024, 65536}, 2},
      .dens = {{-1.0, 0.1, 0.5}, 3},
      .algs = {{WSP_SPARSE_NBX, WSP_SPARSE_PEX, WSP_SPARSE_ALLTOALLV, WSP_SPARSE_AUTO}, 4},
      .iters = 50, .reps = 5, .warmup = 12, .seed = 1, .io = {.label = ""}};
  int rc = parse(&o, argc, argv, rank);
  if (rc >= 0) return rc;
  wsp_bench_out_t out;
  if ((rc = wsp_bench_out_open(&out, "sparse", &o.io, rank, size, NULL, post)) != 0)
    return rc;
  sparse_run_t r = {.o = &o, .rank = rank, .size = size};
  run_alloc(&r);
  if (rank == 0 && !o.io.quiet) print_header(&o, size, out.mpi);
  for (int di = 0; di < o.dens.n; di++)
    for (int si = 0; si < o.sizes.n; si++) run_row(&r, &out, di, si);
  wsp_bench_out_close(&out);
  run_free(&r);
  return 0;
}
