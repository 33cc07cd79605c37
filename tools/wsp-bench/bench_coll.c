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
 * For each collective and size, every algorithm first runs once on
 * recognisable data and its result is checked element by element against
 * the exact answer (small integers, so sums are exact in double too; the
 * answer a correct MPI collective gives): a wrong result prints MISMATCH
 * and makes the exit status 1. Then it is timed: the iteration count comes
 * from timing a few calls so that the timed calls of a row take about
 * --max-time seconds (as OSU and nccl-tests do), followed by untimed warmup
 * calls. The repetitions interleave the algorithms in a random order, new
 * each repetition, so all figures of a row come from the same minutes of
 * the same machine and no algorithm always follows the same other one.
 * A repetition starts with a barrier; its time is the slowest rank's mean
 * per call; the row reports the median over repetitions.
 */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <spawn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"
#include "opts.h"
#include "pattern.h"

extern char **environ;

#define ALG_MPI (-2) /* not a table index: the plain MPI collective */
#define MAX_ALGS 64
#define MAX_ITERS 1000000L

static const size_t default_sizes[] = {8,       64,       512,      4096,
                                       32768,   262144,   1u << 20, 4u << 20,
                                       16u << 20, 64u << 20};

static void usage(FILE *f) {
  fprintf(f,
          "usage: mpirun -np N wsp-bench coll [options]\n\n"
          "  --colls LIST       among bcast,reduce,allreduce,gather,scatter,\n"
          "                     allgather,alltoall (default all)\n"
          "  --sizes LIST       message sizes S in bytes, as in nccl-tests: the\n"
          "                     whole message for bcast/reduce/allreduce, the\n"
          "                     p-block buffer for gather/scatter/allgather/\n"
          "                     alltoall (block = S/p rounded down to whole\n"
          "                     elements; sizes whose block is empty are\n"
          "                     skipped) (default 8,64,512,4K,32K,256K,1M,4M,\n"
          "                     16M,64M)\n"
          "  --algs LIST        algorithm names of the collectives' tables (see\n"
          "                     wsp-info), \"native\" (wirespeed's native row, the\n"
          "                     MPI collective on its private communicator),\n"
          "                     \"mpi\" (the plain MPI collective on\n"
          "                     MPI_COMM_WORLD: the reference) and \"auto\"\n"
          "                     (default: every table algorithm, mpi and auto);\n"
          "                     a name a collective does not have is skipped\n"
          "                     for that collective\n"
          "  --iters N          timed calls per repetition (default: chosen so\n"
          "                     that the timed calls of a row take --max-time)\n"
          "  --max-time SEC     seconds of timed calls per row, all repetitions\n"
          "                     together, when --iters is not given; at least\n"
          "                     one call per repetition (default 0.2)\n"
          "  --warmup N         untimed calls per algorithm and row before the\n"
          "                     repetitions (default min(iters, 5)), after one\n"
          "                     checked call and the calls that time one\n"
          "  --reps N           repetitions; the median is reported (default 5)\n"
          "  --root R           root of bcast/reduce/gather/scatter (default 0)\n"
          "  --dtype T          double or int; reductions use MPI_SUM (default\n"
          "                     double)\n"
          "  --max-bytes-per-rank SIZE\n"
          "                     refuse to start when the send and receive\n"
          "                     buffers of the largest row (2 S per rank) need\n"
          "                     more (default 1G)\n"
          "  --json FILE        append one JSON line per row\n"
          "  --label TEXT       free text stored in the JSON (e.g. testbed)\n"
          "  --plot PNG         after the run, draw busbw per algorithm with\n"
          "                     python/wsp_plot.py (rank 0; needs Python 3 with\n"
          "                     matplotlib; WSP_PLOT_SCRIPT overrides the\n"
          "                     script's path)\n"
          "  --quiet            no table\n\n"
          "Columns: time = the slowest rank's mean time per call (median over\n"
          "repetitions); algbw = S / time; busbw = algbw x factor, with\n"
          "nccl-tests' factors: allreduce 2(p-1)/p; allgather, alltoall\n"
          "(p-1)/p; bcast, reduce 1; gather and scatter, which nccl-tests does\n"
          "not define, (p-1)/p (the root moves p-1 of the p blocks through its\n"
          "link). GB/s = 1e9 bytes per second. ratio = mpi time / this time\n"
          "(> 1: faster than the MPI collective). pred = the model's predicted\n"
          "time of the algorithm that ran (wsp_coll_predict; '-' when it has\n"
          "no cost, as native). auto shows the algorithm it chose, and an\n"
          "algorithm whose preconditions fail here (e.g. p not a power of two)\n"
          "shows the fallback that ran instead (wsp_coll_select). Exit status\n"
          "1 when any result was wrong.\n");
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v, long n) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static void die(int rank, const char *what) {
  fprintf(stderr, "error: rank %d: %s: %s\n", rank, what, wsp_last_error());
  MPI_Abort(MPI_COMM_WORLD, 1);
}

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
  int p, rank, root, is_int;
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
    for (size_t i = 0; i < n; i++) put(w, w->sbuf, i, move_val(me, i));
    for (size_t i = 0; i < pn; i++) put(w, w->rbuf, i, -1.0);
    return;
  case WSP_COLL_SCATTER:
    for (size_t i = 0; i < pn; i++)
      put(w, w->sbuf, i, me == w->root ? move_val(me, i) : -2.0);
    for (size_t i = 0; i < n; i++) put(w, w->rbuf, i, -1.0);
    return;
  case WSP_COLL_ALLTOALL:
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
  case WSP_COLL_GATHER:
  case WSP_COLL_ALLGATHER:
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
  default: break;
  }
  if (rc != WSP_OK) die(w->rank, wsp_coll_name(w->coll));
}

static void select_alg(const row_t *w, int alg) {
  if (alg != ALG_MPI && wsp_coll_set_alg(w->comm, w->coll, alg) != WSP_OK)
    die(w->rank, "wsp_coll_set_alg");
}

/* Seconds of `n` back-to-back calls, the slowest rank's (on every rank). */
static double time_calls(const row_t *w, int alg, long n) {
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  for (long i = 0; i < n; i++) run_once(w, alg);
  double t = MPI_Wtime() - t0, tmax = 0;
  MPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return tmax;
}

static const char *alg_name(wsp_coll_t c, int alg) {
  if (alg == ALG_MPI) return "mpi";
  if (alg == WSP_ALG_AUTO) return "auto";
  return wsp_coll_alg_info(c, alg)->name;
}

/* ---- options ---- */
typedef struct opts {
  wsp_coll_t colls[WSP_COLL_COUNT];
  int ncolls;
  size_t sizes[WSP_OPTS_MAX_LIST];
  int nsizes;
  char *algs[MAX_ALGS]; /* names; NULL list = default */
  int nalgs;
  char algbuf[1024];
  long iters, warmup, reps, root;
  double max_time;
  size_t max_bytes;
  int is_int, quiet;
  const char *json, *label, *plot;
} opts_t;

static int parse_colls(const char *opt, const char *v, opts_t *o, int rank) {
  char buf[256];
  snprintf(buf, sizeof buf, "%s", v);
  o->ncolls = 0;
  for (char *sv = NULL, *t = strtok_r(buf, ",", &sv); t;
       t = strtok_r(NULL, ",", &sv)) {
    wsp_coll_t c;
    if (wsp_coll_from_name(t, &c) != WSP_OK) {
      if (rank == 0) fprintf(stderr, "error: %s: %s\n", opt, wsp_last_error());
      return -1;
    }
    int dup = 0;
    for (int i = 0; i < o->ncolls; i++) dup |= o->colls[i] == c;
    if (!dup) o->colls[o->ncolls++] = c;
  }
  if (o->ncolls == 0) {
    if (rank == 0) fprintf(stderr, "error: %s: empty list\n", opt);
    return -1;
  }
  return 0;
}

static int parse_algs(const char *opt, const char *v, opts_t *o, int rank) {
  if (strlen(v) >= sizeof o->algbuf) {
    if (rank == 0) fprintf(stderr, "error: %s: list too long\n", opt);
    return -1;
  }
  strcpy(o->algbuf, v);
  o->nalgs = 0;
  for (char *sv = NULL, *t = strtok_r(o->algbuf, ",", &sv); t;
       t = strtok_r(NULL, ",", &sv)) {
    if (o->nalgs == MAX_ALGS) {
      if (rank == 0) fprintf(stderr, "error: %s: too many names\n", opt);
      return -1;
    }
    o->algs[o->nalgs++] = t;
  }
  if (o->nalgs == 0) {
    if (rank == 0) fprintf(stderr, "error: %s: empty list\n", opt);
    return -1;
  }
  return 0;
}

/* Index of algorithm `name` of collective c (WSP_ALG_AUTO for "auto"), or
 * -3 when it has none: looked up here, not with wsp_coll_alg_from_name,
 * which would log an error for every collective that lacks the name. */
static int find_alg(wsp_coll_t c, const char *name) {
  if (!strcmp(name, "auto")) return WSP_ALG_AUTO;
  for (int a = 0; a < wsp_coll_alg_count(c); a++)
    if (!strcmp(wsp_coll_alg_info(c, a)->name, name)) return a;
  return -3;
}

/* The rows of collective c: --algs resolved against its table, or every
 * table algorithm + mpi + auto. "mpi" first: the reference. */
static int resolve_algs(const opts_t *o, wsp_coll_t c, int *algs) {
  int n = 0;
  if (o->nalgs == 0) {
    algs[n++] = ALG_MPI;
    for (int a = 0; a < wsp_coll_alg_count(c) && n < MAX_ALGS - 1; a++)
      algs[n++] = a;
    algs[n++] = WSP_ALG_AUTO;
    return n;
  }
  for (int i = 0; i < o->nalgs; i++) {
    int a = !strcmp(o->algs[i], "mpi") ? ALG_MPI : find_alg(c, o->algs[i]);
    if (a == -3) continue;
    int dup = 0;
    for (int j = 0; j < n; j++) dup |= algs[j] == a;
    if (!dup) algs[n++] = a;
  }
  return n;
}

/* ---- JSON ---- */
static void json_line(FILE *const *files, int nfiles, json_t *o) {
  char *s = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER |
                              JSON_REAL_PRECISION(8));
  for (int i = 0; i < nfiles && s; i++)
    if (files[i]) {
      fprintf(files[i], "%s\n", s);
      fflush(files[i]);
    }
  free(s);
  json_decref(o);
}

/* ---- the plot, run by main after MPI_Finalize ---- */
static const char *plot_script(void) {
  const char *env = getenv("WSP_PLOT_SCRIPT");
  if (env && *env) return env;
#ifdef WSP_PLOT_SCRIPT_INSTALL
  if (access(WSP_PLOT_SCRIPT_INSTALL, R_OK) == 0) return WSP_PLOT_SCRIPT_INSTALL;
#endif
#ifdef WSP_PLOT_SCRIPT_SRC
  if (access(WSP_PLOT_SCRIPT_SRC, R_OK) == 0) return WSP_PLOT_SCRIPT_SRC;
#endif
  return NULL;
}

int wsp_bench_post_run(wsp_bench_post_t *post) {
  if (post->plot_png == NULL) return 0;
  int rc = 1;
  const char *script = plot_script();
  if (script == NULL) {
    fprintf(stderr,
            "error: --plot: python/wsp_plot.py not found (set WSP_PLOT_SCRIPT "
            "to its path); the data is in %s\n",
            post->json_tmp);
    return 1; /* keep the JSON for the user */
  }
  /* Debian's python3 (with python3-matplotlib) before whatever is first
   * on PATH (often a pyenv without matplotlib). */
  const char *py = access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3"
                                                         : "python3";
  char *argv[] = {(char *)py, (char *)script, post->json_tmp, "--out",
                  (char *)post->plot_png, "--title", post->title, NULL};
  pid_t pid;
  int err = posix_spawnp(&pid, py, NULL, NULL, argv, environ);
  if (err != 0) {
    fprintf(stderr, "error: --plot: cannot run %s: %s\n", py, strerror(err));
  } else {
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
    }
    if (WIFEXITED(st) && WEXITSTATUS(st) == 0) {
      printf("# plot: %s\n", post->plot_png);
      rc = 0;
    } else {
      fprintf(stderr, "error: --plot: %s %s failed\n", py, script);
    }
  }
  remove(post->json_tmp);
  return rc;
}

/* ---- the benchmark ---- */
int wsp_bench_coll(int argc, char **argv, int rank, int size,
                   wsp_bench_post_t *post) {
  opts_t o = {.ncolls = 0, .iters = 0, .warmup = -1, .reps = 5, .root = 0,
              .max_time = 0.2, .max_bytes = (size_t)1 << 30, .label = ""};
  for (int c = 0; c < WSP_COLL_COUNT; c++) o.colls[o.ncolls++] = (wsp_coll_t)c;
  o.nsizes = (int)(sizeof default_sizes / sizeof default_sizes[0]);
  memcpy(o.sizes, default_sizes, sizeof default_sizes);
  memset(post, 0, sizeof *post);

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
    }
    if (v == NULL) {
      if (rank == 0) fprintf(stderr, "error: %s needs a value (see --help)\n", a);
      return 2;
    }
    i++;
    if (!strcmp(a, "--colls"))
      bad = parse_colls(a, v, &o, rank);
    else if (!strcmp(a, "--sizes"))
      bad = (o.nsizes = wsp_opt_size_list(a, v, o.sizes, WSP_OPTS_MAX_LIST)) < 0;
    else if (!strcmp(a, "--algs"))
      bad = parse_algs(a, v, &o, rank);
    else if (!strcmp(a, "--iters"))
      bad = wsp_opt_int(a, v, 1, MAX_ITERS, &o.iters);
    else if (!strcmp(a, "--warmup"))
      bad = wsp_opt_int(a, v, 0, MAX_ITERS, &o.warmup);
    else if (!strcmp(a, "--reps"))
      bad = wsp_opt_int(a, v, 1, 1000, &o.reps);
    else if (!strcmp(a, "--root"))
      bad = wsp_opt_int(a, v, 0, size - 1, &o.root);
    else if (!strcmp(a, "--max-time")) {
      char *end = NULL;
      o.max_time = strtod(v, &end);
      if (end == v || *end != '\0' || !(o.max_time > 0) || o.max_time > 1e5) {
        if (rank == 0)
          fprintf(stderr, "error: %s: \"%s\" is not a number of seconds > 0\n",
                  a, v);
        bad = 1;
      }
    } else if (!strcmp(a, "--max-bytes-per-rank"))
      bad = wsp_opt_size(a, v, &o.max_bytes);
    else if (!strcmp(a, "--dtype")) {
      if (!strcmp(v, "double"))
        o.is_int = 0;
      else if (!strcmp(v, "int"))
        o.is_int = 1;
      else {
        if (rank == 0)
          fprintf(stderr, "error: %s: \"%s\" is not double or int\n", a, v);
        bad = 1;
      }
    } else if (!strcmp(a, "--json"))
      o.json = v;
    else if (!strcmp(a, "--label"))
      o.label = v;
    else if (!strcmp(a, "--plot"))
      o.plot = v;
    else {
      if (rank == 0) fprintf(stderr, "error: unknown option %s (see --help)\n", a);
      return 2;
    }
    if (bad) return 2;
  }
  for (int i = 0; i < o.nsizes; i++)
    if (o.sizes[i] > ((size_t)1 << 30)) {
      if (rank == 0) fprintf(stderr, "error: --sizes: at most 1G per message\n");
      return 2;
    }

  /* Every --algs name must exist somewhere, or it is a typo. */
  int algs[WSP_COLL_COUNT][MAX_ALGS], nalgs[WSP_COLL_COUNT];
  for (int i = 0; i < o.nalgs; i++) {
    int found = !strcmp(o.algs[i], "mpi");
    for (int k = 0; k < o.ncolls && !found; k++)
      found = find_alg(o.colls[k], o.algs[i]) != -3;
    if (!found) {
      if (rank == 0) {
        fprintf(stderr,
                "error: --algs: no selected collective has an algorithm "
                "\"%s\"; valid names:\n  mpi, auto",
                o.algs[i]);
        for (int k = 0; k < o.ncolls; k++)
          for (int a = 0; a < wsp_coll_alg_count(o.colls[k]); a++) {
            const char *nm = wsp_coll_alg_info(o.colls[k], a)->name;
            int seen = 0; /* listed for an earlier collective */
            for (int j = 0; j < k && !seen; j++)
              seen = find_alg(o.colls[j], nm) >= 0;
            for (int b = 0; b < a && !seen; b++)
              seen = !strcmp(wsp_coll_alg_info(o.colls[k], b)->name, nm);
            if (!seen) fprintf(stderr, ", %s", nm);
          }
        fprintf(stderr, "\n");
      }
      return 2;
    }
  }
  for (int k = 0; k < o.ncolls; k++)
    nalgs[k] = resolve_algs(&o, o.colls[k], algs[k]);

  const size_t esz = o.is_int ? sizeof(int) : sizeof(double);
  const MPI_Datatype dt = o.is_int ? MPI_INT : MPI_DOUBLE;

  /* Buffers: every row fits in two of S bytes (see fill()). */
  size_t maxs = 0;
  for (int k = 0; k < o.ncolls; k++)
    for (int i = 0; i < o.nsizes && nalgs[k] > 0; i++)
      if (o.sizes[i] > maxs) maxs = o.sizes[i];
  maxs = maxs / esz * esz;
  if (2 * maxs > o.max_bytes) {
    if (rank == 0) {
      char s1[32], s2[32];
      fprintf(stderr,
              "error: the largest size, %s, needs send and receive buffers of "
              "%s each = %zu bytes per rank, more than --max-bytes-per-rank "
              "%s (%zu bytes); drop that size from --sizes or raise "
              "--max-bytes-per-rank\n",
              wsp_fmt_size(maxs, s1, sizeof s1), s1, 2 * maxs,
              wsp_fmt_size(o.max_bytes, s2, sizeof s2), o.max_bytes);
    }
    return 2;
  }
  /* The same buffers on every rank of this node must fit its memory. */
  {
    MPI_Comm node;
    int local = 1, bad = 0, anybad = 0;
    if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0,
                            MPI_INFO_NULL, &node) == MPI_SUCCESS) {
      MPI_Comm_size(node, &local);
      MPI_Comm_free(&node);
    }
    long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
    double phys = pages > 0 && psize > 0 ? (double)pages * (double)psize : 0;
    double need = 2.0 * (double)maxs * local;
    if (phys > 0 && need > 0.75 * phys) bad = 1;
    MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (anybad) {
      if (bad)
        fprintf(stderr,
                "error: rank %d: %d ranks on this node x 2 x %zu bytes of "
                "buffers = %.1f GiB, over 3/4 of its %.1f GiB of memory; "
                "use smaller --sizes or fewer ranks per node\n",
                rank, local, maxs, need / (1 << 30), phys / (1 << 30));
      return 2;
    }
  }
  void *sbuf = malloc(maxs ? maxs : 1), *rbuf = malloc(maxs ? maxs : 1);
  double *times = malloc((size_t)o.reps * MAX_ALGS * sizeof *times);
  double *col = malloc((size_t)o.reps * sizeof *col);
  if (!sbuf || !rbuf || !times || !col) {
    fprintf(stderr, "error: rank %d: out of memory (2 x %zu bytes)\n", rank,
            maxs);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  memset(sbuf, 0, maxs ? maxs : 1);
  memset(rbuf, 0, maxs ? maxs : 1);

  wsp_comm_t *comm = NULL;
  if (wsp_comm_create(MPI_COMM_WORLD, NULL, &comm) != WSP_OK)
    die(rank, "wsp_comm_create");
  wsp_model_t model;
  if (wsp_comm_model(comm, &model) != WSP_OK) die(rank, "wsp_comm_model");

  const char *mpiv = wsp_bench_mpi_version();
  FILE *files[2] = {wsp_bench_json_open(o.json, rank), NULL};
  if (rank == 0 && o.json && files[0] == NULL) {
    fprintf(stderr, "error: --json: cannot open %s\n", o.json);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  if (rank == 0 && o.plot) {
    /* The plot shows this run only: its rows also go to a private file. */
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
    snprintf(post->title, sizeof post->title, "wsp-bench coll, p = %d%s%s",
             size, *o.label ? ", " : "", o.label);
  }

  if (rank == 0 && !o.quiet) {
    printf("# wsp-bench coll: p=%d, %s, op sum, root %ld, %ld reps (median), "
           "%s\n",
           size, o.is_int ? "int" : "double", o.root, o.reps, mpiv);
    wsp_topology_t topo;
    wsp_comm_topology(comm, &topo);
    printf("# model: alpha %.3g s, beta %.3g s/B, gamma %.3g s/B, beta_x "
           "%.3g s/B, gap %.3g s, node alpha %.3g s, node beta %.3g s/B (%s)\n",
           model.alpha, model.beta, model.gamma, model.beta_x, model.gap, model.alpha_node,
           model.beta_node, model.calibrated ? "calibrated" : "configured");
    printf("# nodes: %d, at most %d ranks per node%s\n", topo.nodes,
           topo.max_node_ranks, topo.blocks ? " (blocks of consecutive ranks)" : "");
    printf("# time: slowest rank's mean per call; algbw = size/time, busbw = "
           "algbw x nccl-tests factor (GB/s = 1e9 B/s);\n# ratio = mpi time / "
           "time (>1: faster than MPI); pred = model's time of what ran\n");
    printf("%-9s %7s %7s %-20s %8s %11s %9s %9s %7s %11s  %s\n", "coll",
           "size", "block", "alg", "iters", "time_us", "algbw", "busbw",
           "ratio", "pred_us", "note");
    fflush(stdout);
  }

  int mismatches = 0;
  for (int k = 0; k < o.ncolls; k++) {
    wsp_coll_t c = o.colls[k];
    int na = nalgs[k];
    int *al = algs[k];
    if (na == 0) continue;
    for (int si = 0; si < o.nsizes; si++) {
      row_t w = {.coll = c, .comm = comm, .p = size, .rank = rank,
                 .root = rooted(c) ? (int)o.root : 0, .is_int = o.is_int,
                 .dt = dt, .esz = esz, .sbuf = sbuf, .rbuf = rbuf};
      size_t S = o.sizes[si];
      if (whole_message(c)) {
        w.count = S / esz;
        w.bytes = w.block = w.count * esz;
      } else {
        w.count = S / (size_t)size / esz;
        w.block = w.count * esz;
        w.bytes = w.block * (size_t)size;
      }
      if (w.count == 0) {
        if (rank == 0 && !o.quiet)
          printf("# %s %zu: skipped (%s)\n", wsp_coll_name(c), S,
                 whole_message(c) ? "less than one element"
                                  : "a block would be less than one element");
        continue;
      }
      long iters[MAX_ALGS];
      long long bad[MAX_ALGS];

      /* Per algorithm: what really runs (a forced algorithm whose
       * preconditions fail runs its fallback), one checked call, the
       * iteration count, warmup. */
      int ran[MAX_ALGS];
      for (int a = 0; a < na; a++) {
        select_alg(&w, al[a]);
        ran[a] = -1;
        if (al[a] != ALG_MPI &&
            wsp_coll_select(comm, c, w.block, 1, &ran[a]) != WSP_OK)
          die(rank, "wsp_coll_select");
        fill(&w);
        run_once(&w, al[a]);
        double want = 0;
        long long first = verify(&w, &want);
        long long anybad = 0, mine = first >= 0 ? 1 : 0;
        MPI_Allreduce(&mine, &anybad, 1, MPI_LONG_LONG, MPI_SUM,
                      MPI_COMM_WORLD);
        if (first >= 0)
          fprintf(stderr,
                  "MISMATCH: rank %d: %s %s, %zu bytes: element %lld of the "
                  "result is %.17g, expected %.17g\n",
                  rank, wsp_coll_name(c), alg_name(c, al[a]), w.bytes, first,
                  get(&w, w.rbuf, (size_t)first), want);
        bad[a] = anybad;
        mismatches += anybad > 0;
        if (o.iters > 0) {
          iters[a] = o.iters;
        } else {
          /* Time 1, 8, 64, ... calls until they take a millisecond. */
          long n = 1;
          double t;
          for (;;) {
            t = time_calls(&w, al[a], n);
            if (t >= 1e-3 || n >= MAX_ITERS / 8) break;
            n *= 8;
          }
          double per = t / (double)n;
          double goal = o.max_time / ((double)o.reps * (per > 0 ? per : 1e-9));
          iters[a] = goal < 1 ? 1 : goal > MAX_ITERS ? MAX_ITERS : (long)goal;
        }
        long wu = o.warmup >= 0 ? o.warmup : (iters[a] < 5 ? iters[a] : 5);
        for (long i = 0; i < wu; i++) run_once(&w, al[a]);
      }
      uint64_t order_state = (uint64_t)(k * 1000 + si) * 0x9e3779b97f4a7c15ull;
      for (long r = 0; r < o.reps; r++) {
        int order[MAX_ALGS];
        wsp_random_order(order, na, &order_state);
        for (int j = 0; j < na; j++) {
          int a = order[j];
          select_alg(&w, al[a]);
          times[r * MAX_ALGS + a] = time_calls(&w, al[a], iters[a]) /
                                    (double)iters[a];
        }
      }
      if (rank != 0) continue;

      double med[MAX_ALGS], mn[MAX_ALGS], tmpi = -1;
      for (int a = 0; a < na; a++) {
        for (long r = 0; r < o.reps; r++) col[r] = times[r * MAX_ALGS + a];
        med[a] = median(col, o.reps);
        mn[a] = col[0];
        if (al[a] == ALG_MPI) tmpi = med[a];
      }
      double fac = bus_factor(c, size);
      char sz[32], bk[32];
      wsp_fmt_size(S, sz, sizeof sz);
      wsp_fmt_size(w.block, bk, sizeof bk);
      for (int a = 0; a < na; a++) {
        double t = med[a];
        double algbw = t > 0 ? (double)w.bytes / t / 1e9 : 0;
        double pred = -1;
        if (ran[a] >= 0 &&
            wsp_coll_predict(comm, c, ran[a], w.block, 1, &pred) != WSP_OK)
          die(rank, "wsp_coll_predict");
        double ratio = tmpi > 0 && t > 0 ? tmpi / t : -1;
        if (!o.quiet) {
          char pr[32], ra[32], note[128] = "";
          if (pred >= 0) snprintf(pr, sizeof pr, "%.2f", pred * 1e6);
          else snprintf(pr, sizeof pr, "-");
          if (ratio > 0) snprintf(ra, sizeof ra, "%.3f", ratio);
          else snprintf(ra, sizeof ra, "-");
          if (al[a] == WSP_ALG_AUTO)
            snprintf(note, sizeof note, "-> %s", alg_name(c, ran[a]));
          else if (al[a] >= 0 && ran[a] != al[a])
            snprintf(note, sizeof note, "preconditions fail: ran %s",
                     alg_name(c, ran[a]));
          if (bad[a])
            snprintf(note + strlen(note), sizeof note - strlen(note),
                     "%sMISMATCH on %lld rank(s)", *note ? " " : "", bad[a]);
          printf("%-9s %7s %7s %-20s %8ld %11.2f %9.4f %9.4f %7s %11s  %s\n",
                 wsp_coll_name(c), sz, whole_message(c) ? "-" : bk,
                 alg_name(c, al[a]), iters[a], t * 1e6, algbw, algbw * fac, ra,
                 pr, note);
        }
        if (files[0] || files[1]) {
          json_t *j = json_object();
          json_object_set_new(j, "bench", json_string("coll"));
          json_object_set_new(j, "coll", json_string(wsp_coll_name(c)));
          json_object_set_new(j, "alg", json_string(alg_name(c, al[a])));
          json_object_set_new(j, "chosen",
                              al[a] == WSP_ALG_AUTO
                                  ? json_string(alg_name(c, ran[a]))
                                  : json_null());
          json_object_set_new(j, "ran", ran[a] >= 0
                                            ? json_string(alg_name(c, ran[a]))
                                            : json_null());
          json_object_set_new(j, "p", json_integer(size));
          json_object_set_new(j, "size", json_integer((json_int_t)S));
          json_object_set_new(j, "bytes", json_integer((json_int_t)w.bytes));
          json_object_set_new(j, "block", json_integer((json_int_t)w.block));
          json_object_set_new(j, "count", json_integer((json_int_t)w.count));
          json_object_set_new(j, "dtype",
                              json_string(o.is_int ? "int" : "double"));
          json_object_set_new(j, "root", rooted(c) ? json_integer(o.root)
                                                   : json_null());
          json_object_set_new(j, "iters", json_integer(iters[a]));
          json_object_set_new(j, "reps", json_integer(o.reps));
          json_object_set_new(j, "time_s", json_real(t));
          json_object_set_new(j, "time_s_min", json_real(mn[a]));
          json_object_set_new(j, "algbw_GBps", json_real(algbw));
          json_object_set_new(j, "busbw_GBps", json_real(algbw * fac));
          json_object_set_new(j, "busbw_factor", json_real(fac));
          if (ratio > 0)
            json_object_set_new(j, "ratio_to_mpi", json_real(ratio));
          json_object_set_new(j, "predicted_s",
                              pred >= 0 ? json_real(pred) : json_null());
          json_object_set_new(j, "check",
                              json_string(bad[a] ? "MISMATCH" : "ok"));
          json_object_set_new(j, "mpi", json_string(mpiv));
          json_object_set_new(j, "label", json_string(o.label));
          json_object_set_new(
              j, "model",
              json_pack("{s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:b}", "alpha", model.alpha,
                        "beta", model.beta, "gamma", model.gamma, "beta_x",
                        model.beta_x, "alpha_node", model.alpha_node, "beta_node",
                        model.beta_node, "gap", model.gap, "calibrated", model.calibrated));
          json_object_set_new(j, "wirespeed",
                              json_string(wsp_version_string()));
          json_line(files, 2, j);
        }
      }
      if (!o.quiet) fflush(stdout);
    }
  }
  wsp_comm_free(&comm);
  for (int i = 0; i < 2; i++)
    if (files[i]) fclose(files[i]);
  free(sbuf);
  free(rbuf);
  free(times);
  free(col);
  if (mismatches) {
    if (rank == 0)
      fprintf(stderr, "error: %d algorithm(s) gave wrong results (MISMATCH "
                      "above)\n", mismatches);
    return 1;
  }
  return 0;
}
