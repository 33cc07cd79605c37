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
#include "opts.h"
#include "pattern.h"

#define NPAT 8 /* distinct patterns cycled through */

static void usage(FILE *f) {
  fprintf(f,
          "usage: mpirun -np N wsp-bench sparse [options]\n\n"
          "  --sizes LIST       message sizes (default 1K,64K)\n"
          "  --densities LIST   fractions of the other ranks each rank sends\n"
          "                     to; 1/p means one peer (default 1/p,0.1,0.5)\n"
          "  --algs LIST        among nbx,pex,alltoallv,auto (default all)\n"
          "  --iters N          rounds per timing (default 50)\n"
          "  --reps N           repetitions; the median is reported (default 5)\n"
          "  --warmup N         untimed rounds per algorithm first (default 12;\n"
          "                     auto needs 10 to finish its first measurement)\n"
          "  --seed N           pattern seed (default 1)\n"
          "  --json FILE        append one JSON line per measurement\n"
          "  --label TEXT       free text stored in the JSON (e.g. testbed)\n"
          "  --quiet            no table\n");
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int wsp_bench_sparse(int argc, char **argv, int rank, int size) {
  size_t sizes[WSP_OPTS_MAX_LIST] = {1024, 65536};
  int nsizes = 2;
  double dens[WSP_OPTS_MAX_LIST] = {-1.0, 0.1, 0.5};
  int ndens = 3;
  wsp_sparse_alg_t algs[WSP_SPARSE_ALG_COUNT] = {
      WSP_SPARSE_NBX, WSP_SPARSE_PEX, WSP_SPARSE_ALLTOALLV, WSP_SPARSE_AUTO};
  int nalgs = 4;
  long iters = 50, reps = 5, warmup = 12, seed = 1;
  const char *json = NULL, *label = "";
  int quiet = 0;

  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    int bad = 0;
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      if (rank == 0) usage(stdout);
      return 0;
    } else if (!strcmp(a, "--quiet")) {
      quiet = 1;
      continue;
    }
    if (v == NULL) {
      if (rank == 0) fprintf(stderr, "error: %s needs a value (see --help)\n", a);
      return 2;
    }
    i++;
    if (!strcmp(a, "--sizes"))
      bad = (nsizes = wsp_opt_size_list(a, v, sizes, WSP_OPTS_MAX_LIST)) < 0;
    else if (!strcmp(a, "--densities"))
      bad = (ndens = wsp_opt_density_list(a, v, dens, WSP_OPTS_MAX_LIST)) < 0;
    else if (!strcmp(a, "--iters"))
      bad = wsp_opt_int(a, v, 1, 1000000, &iters);
    else if (!strcmp(a, "--reps"))
      bad = wsp_opt_int(a, v, 1, 1000, &reps);
    else if (!strcmp(a, "--warmup"))
      bad = wsp_opt_int(a, v, 0, 1000000, &warmup);
    else if (!strcmp(a, "--seed"))
      bad = wsp_opt_int(a, v, 0, 1L << 40, &seed);
    else if (!strcmp(a, "--json"))
      json = v;
    else if (!strcmp(a, "--label")) {
      /* Stored in JSON: keep it to characters that need no escaping. */
      static char lab[128];
      snprintf(lab, sizeof lab, "%s", v);
      for (char *ch = lab; *ch; ch++)
        if (*ch == '"' || *ch == '\\' || (unsigned char)*ch < 0x20) *ch = '_';
      label = lab;
    }
    else if (!strcmp(a, "--algs")) {
      char buf[256];
      snprintf(buf, sizeof buf, "%s", v);
      nalgs = 0;
      for (char *sv = NULL, *t = strtok_r(buf, ",", &sv); t && !bad;
           t = strtok_r(NULL, ",", &sv)) {
        if (nalgs == WSP_SPARSE_ALG_COUNT ||
            wsp_sparse_alg_from_name(t, &algs[nalgs++]) != WSP_OK) {
          if (rank == 0)
            fprintf(stderr, "error: --algs: %s\n",
                    nalgs == WSP_SPARSE_ALG_COUNT ? "too many" : wsp_last_error());
          bad = 1;
        }
      }
      if (nalgs == 0) bad = 1;
    } else {
      if (rank == 0) fprintf(stderr, "error: unknown option %s (see --help)\n", a);
      return 2;
    }
    if (bad) return 2;
  }
  for (int i = 0; i < nsizes; i++)
    if (sizes[i] > ((size_t)1 << 30)) {
      if (rank == 0) fprintf(stderr, "error: --sizes: at most 1G per message\n");
      return 2;
    }

  wsp_comm_t *comm = NULL;
  int rc;
  FILE *jf = wsp_bench_json_open(json, rank);
  const char *mpiv = wsp_bench_mpi_version();

  size_t maxsize = 0;
  for (int i = 0; i < nsizes; i++)
    if (sizes[i] > maxsize) maxsize = sizes[i];
  char *payload = malloc(maxsize ? maxsize : 1);
  int *dests = malloc((size_t)size * sizeof *dests);
  size_t *bytes = malloc((size_t)size * sizeof *bytes);
  wsp_send_t *sends[NPAT];
  size_t nsend[NPAT];
  double *times = malloc((size_t)reps * nalgs * sizeof *times);
  if (!payload || !dests || !bytes || !times) {
    fprintf(stderr, "error: out of memory\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  memset(payload, 0xab, maxsize ? maxsize : 1);
  for (int k = 0; k < NPAT; k++) {
    sends[k] = malloc((size_t)size * sizeof(wsp_send_t));
    if (!sends[k]) MPI_Abort(MPI_COMM_WORLD, 1);
  }

  if (rank == 0 && !quiet) {
    printf("# wsp-bench sparse: p=%d, %ld iters x %ld reps (median), %s\n", size,
           iters, reps, mpiv);
    printf("# time per round in microseconds (slowest rank); ratio = time / "
           "alltoallv time\n");
    printf("%-9s %4s %7s", "density", "k", "size");
    for (int a = 0; a < nalgs; a++)
      printf(" %12s", wsp_sparse_alg_info(algs[a])->name);
    for (int a = 0; a < nalgs; a++)
      printf(" %9s", wsp_sparse_alg_info(algs[a])->name);
    printf("  auto-chose\n");
  }

  int status = 0;
  for (int di = 0; di < ndens; di++) {
    double d = wsp_density_resolve(dens[di], size);
    for (int si = 0; si < nsizes; si++) {
      wsp_pattern_t pt = {.seed = (uint64_t)seed, .p = size, .density = d,
                          .min_bytes = sizes[si], .max_bytes = sizes[si]};
      for (int k = 0; k < NPAT; k++) {
        pt.round = (uint64_t)k;
        int n = wsp_pattern_sends(&pt, rank, dests, bytes);
        for (int j = 0; j < n; j++)
          sends[k][j] = (wsp_send_t){.peer = dests[j], .data = payload,
                                     .bytes = bytes[j]};
        nsend[k] = (size_t)n;
      }
      /* A fresh communicator per row: auto then meets one steady pattern,
       * as in a job, instead of the previous row's. */
      if ((rc = wsp_comm_create(MPI_COMM_WORLD, NULL, &comm)) != WSP_OK) {
        fprintf(stderr, "error: wsp_comm_create: %s\n", wsp_last_error());
        MPI_Abort(MPI_COMM_WORLD, 1);
      }
      wsp_sparse_alg_t chose = WSP_SPARSE_AUTO;
      for (int a = 0; a < nalgs; a++)
        for (long it = 0; it < warmup; it++) {
          wsp_recvset_t out;
          int k = (int)(it % NPAT);
          if ((rc = wsp_sparse_exchange_alg(comm, algs[a], sends[k], nsend[k],
                                            &out)) != WSP_OK) {
            fprintf(stderr, "error: rank %d: %s\n", rank, wsp_last_error());
            MPI_Abort(MPI_COMM_WORLD, 1);
          }
          wsp_recvset_free(&out);
        }
      uint64_t order_state = (uint64_t)seed * 7919u + (uint64_t)(di * 131 + si);
      for (long r = 0; r < reps; r++) {
        /* A fresh random order per repetition (the same on every rank): with
         * a fixed rotation one algorithm always ran right after another
         * (auto after alltoallv in 3 of 4 repetitions) and carried whatever
         * that one left behind (busy-polling stragglers under MPICH). */
        int order[WSP_SPARSE_ALG_COUNT];
        wsp_random_order(order, nalgs, &order_state);
        for (int o = 0; o < nalgs; o++) {
          int a = order[o];
          MPI_Barrier(MPI_COMM_WORLD);
          double t0 = MPI_Wtime();
          for (long it = 0; it < iters; it++) {
            wsp_recvset_t out;
            int k = (int)(it % NPAT);
            if ((rc = wsp_sparse_exchange_alg(comm, algs[a], sends[k],
                                              nsend[k], &out)) != WSP_OK) {
              fprintf(stderr, "error: rank %d: %s\n", rank, wsp_last_error());
              MPI_Abort(MPI_COMM_WORLD, 1);
            }
            if (algs[a] == WSP_SPARSE_AUTO) chose = out.alg;
            wsp_recvset_free(&out);
          }
          double t = (MPI_Wtime() - t0) / (double)iters, tmax;
          MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
          times[r * nalgs + a] = tmax;
        }
      }
      wsp_comm_free(&comm);
      if (rank != 0) continue;
      double med[WSP_SPARSE_ALG_COUNT], mn[WSP_SPARSE_ALG_COUNT], ref = 0;
      double *col = malloc((size_t)reps * sizeof *col);
      for (int a = 0; a < nalgs; a++) {
        for (long r = 0; r < reps; r++) col[r] = times[r * nalgs + a];
        qsort(col, (size_t)reps, sizeof *col, cmp_double);
        med[a] = reps % 2 ? col[reps / 2]
                          : 0.5 * (col[reps / 2 - 1] + col[reps / 2]);
        mn[a] = col[0];
        if (algs[a] == WSP_SPARSE_ALLTOALLV) ref = med[a];
      }
      free(col);
      char sz[32];
      wsp_fmt_size(sizes[si], sz, sizeof sz);
      if (!quiet) {
        printf("%-9.4f %4d %7s", d, wsp_pattern_k(&pt), sz);
        for (int a = 0; a < nalgs; a++) printf(" %12.1f", med[a] * 1e6);
        for (int a = 0; a < nalgs; a++)
          printf(" %9.3f", ref > 0 ? med[a] / ref : NAN);
        printf("  %s\n", wsp_sparse_alg_info(chose)->name);
        fflush(stdout);
      }
      for (int a = 0; a < nalgs && jf; a++)
        fprintf(jf,
                "{\"bench\":\"sparse\",\"label\":\"%s\",\"mpi\":\"%s\","
                "\"p\":%d,\"density\":%.6f,\"k\":%d,\"bytes\":%zu,"
                "\"alg\":\"%s\",\"chosen\":\"%s\",\"iters\":%ld,\"reps\":%ld,"
                "\"t_round_us\":%.3f,\"t_round_us_min\":%.3f,"
                "\"ratio_to_alltoallv\":%.4f}\n",
                label, mpiv, size, d, wsp_pattern_k(&pt), sizes[si],
                wsp_sparse_alg_info(algs[a])->name,
                wsp_sparse_alg_info(algs[a] == WSP_SPARSE_AUTO ? chose : algs[a])->name,
                iters, reps, med[a] * 1e6, mn[a] * 1e6,
                ref > 0 ? med[a] / ref : -1.0);
    }
  }
  if (jf) fclose(jf);
  for (int k = 0; k < NPAT; k++) free(sends[k]);
  free(payload);
  free(dests);
  free(bytes);
  free(times);
  return status;
}
