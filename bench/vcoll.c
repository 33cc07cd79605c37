/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The vector collectives as real programs call them: a plain MPI program
 * (it knows nothing of wirespeed; run it under the shim, wsp-run, to have
 * wirespeed take its calls) that times
 *   a2a-uniform   MPI_Alltoallv, 1 MiB to every rank;
 *   a2a-fft       MPI_Alltoallv transposing a 3-D FFT's pencils: an N^3
 *                 grid of complex doubles (N = 202, so blocks are uneven)
 *                 on a Pr x Pc grid of ranks (MPI_Dims_create); x-pencils
 *                 become y-pencils within each group of ranks that share
 *                 a z range, the groups at once (heFFTe's reshape; the
 *                 groups' communicators are made once, at the first call);
 *   a2a-skewed    MPI_Alltoallv where 10% of the pairs carry 90% of the
 *                 bytes (4 MiB each), 20% carry the rest and 70% nothing,
 *                 the pairs drawn from a fixed seed: a graph exchange;
 *   agv-uneven    MPI_Allgatherv of blocks of ((r mod 4) + 1)^2 x 128 KiB;
 *   rsb-16M       MPI_Reduce_scatter_block of 16 MiB of doubles (MPI_SUM).
 * Each is run once to warm up, then --reps times between barriers; a rep
 * takes the slowest rank's time. Every result is checked against values
 * computed here (a sample of elements of every block). Prints one line per
 * case and, with --json FILE, appends one JSON line each.
 *   vcoll [--reps R] [--only CASE,...] [--json FILE] [--label L]
 */
#define _POSIX_C_SOURCE 200809L /* nanosleep (patient.h) */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../tools/common/patient.h"

static int rank, size, failures;

static double val(int from, int to, long i) { return (double)((from * 31 + to * 7 + i) % 1013); }

static void *xmalloc(size_t n) {
  void *p = malloc(n ? n : 1);
  if (p == NULL) {
    fprintf(stderr, "vcoll: out of memory for %zu bytes\n", n);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  return p;
}

/* A sample of block elements: the first, the last and a few between. */
#define FOR_SAMPLE(i, n) for (long i = 0; i < (long)(n); i = i < 8 ? i + 1 : (i * 2 < (long)(n) - 1 ? i * 2 : (i == (long)(n) - 1 ? (long)(n) : (long)(n) - 1)))

static void check(const char *what, double got, double want) {
  if (got != want && failures++ < 10)
    fprintf(stderr, "rank %d: %s: got %g, want %g\n", rank, what, got, want);
}

/* An alltoallv of doubles on comm: counts[i][j] elements from rank i to
 * rank j of comm (p x p, row major), blocks in rank order. Fills, runs
 * and checks; returns the seconds of this rank's call. */
static double alltoallv(MPI_Comm comm, const long *counts, int check_it) {
  int p, r;
  MPI_Comm_size(comm, &p);
  MPI_Comm_rank(comm, &r);
  int *v = xmalloc(4 * (size_t)p * sizeof *v), *sc = v, *sd = v + p, *rc = v + 2 * p,
      *rd = v + 3 * p;
  long at = 0, at2 = 0;
  for (int j = 0; j < p; j++) {
    sc[j] = (int)counts[(long)r * p + j], sd[j] = (int)at, at += sc[j];
    rc[j] = (int)counts[(long)j * p + r], rd[j] = (int)at2, at2 += rc[j];
  }
  double *s = xmalloc((size_t)at * sizeof *s), *d = xmalloc((size_t)at2 * sizeof *d);
  for (int j = 0; j < p; j++)
    for (long i = 0; i < sc[j]; i++) s[sd[j] + i] = val(r, j, i);
  double t0 = MPI_Wtime();
  MPI_Alltoallv(s, sc, sd, MPI_DOUBLE, d, rc, rd, MPI_DOUBLE, comm);
  double t = MPI_Wtime() - t0;
  for (int j = 0; j < p && check_it; j++) FOR_SAMPLE(i, rc[j]) check("alltoallv", d[rd[j] + i], val(j, r, i));
  free(s), free(d), free(v);
  return t;
}

/* The pieces of n split into k nearly equal parts. */
static long part(long n, int k, int i) { return n / k + (i < n % k); }

static double run_case(const char *name, int check_it) {
  int p = size;
  if (!strcmp(name, "a2a-uniform") || !strcmp(name, "a2a-skewed")) {
    long *c = xmalloc((size_t)p * p * sizeof *c);
    const long mib = 1 << 17; /* doubles */
    if (name[4] == 'u') {
      for (long k = 0; k < (long)p * p; k++) c[k] = mib;
    } else {
      /* Off-diagonal pairs in a seeded order: the first tenth heavy, the
       * next fifth light (together a ninth of the heavy bytes). */
      int n = p * (p - 1), nh = n / 10 ? n / 10 : 1, nl = n / 5 ? n / 5 : 1;
      long *pairs = xmalloc((size_t)n * sizeof *pairs);
      for (int i = 0, k = 0; i < p; i++)
        for (int j = 0; j < p; j++)
          if (i != j) pairs[k++] = (long)i * p + j;
      uint64_t x = 42;
      for (int k = n - 1; k > 0; k--) { /* Fisher-Yates */
        x = x * 6364136223846793005u + 1442695040888963407u;
        int m = (int)((x >> 33) % (uint64_t)(k + 1));
        long t = pairs[k];
        pairs[k] = pairs[m], pairs[m] = t;
      }
      memset(c, 0, (size_t)p * p * sizeof *c);
      long heavy = 4 * mib, light = heavy * nh / (9L * nl);
      for (int k = 0; k < nh + nl && k < n; k++) c[pairs[k]] = k < nh ? heavy : light;
      free(pairs);
    }
    double t = alltoallv(MPI_COMM_WORLD, c, check_it);
    free(c);
    return t;
  }
  if (!strcmp(name, "a2a-fft")) {
    int dims[2] = {0, 0};
    MPI_Dims_create(p, 2, dims);
    int pr = dims[0], pc = dims[1], row = rank / pc, col = rank % pc;
    const long n = 202;
    /* The ranks that share this z range, one per y range: made once, as
     * an FFT library makes its groups at plan time (a communicator's
     * first call under the shim pays wirespeed's set-up). */
    static MPI_Comm g = MPI_COMM_NULL;
    if (g == MPI_COMM_NULL) MPI_Comm_split(MPI_COMM_WORLD, col, row, &g);
    long *c = xmalloc((size_t)pr * pr * sizeof *c);
    for (int i = 0; i < pr; i++) /* from group rank i (y range i) to j (x range j) */
      for (int j = 0; j < pr; j++) c[(long)i * pr + j] = 2 * part(n, pr, j) * part(n, pr, i) * part(n, pc, col);
    double t = alltoallv(g, c, check_it);
    free(c);
    return t;
  }
  if (!strcmp(name, "agv-uneven")) {
    int *rc = xmalloc(2 * (size_t)p * sizeof *rc), *rd = rc + p;
    long at = 0;
    for (int j = 0; j < p; j++) {
      long k = j % 4 + 1;
      rc[j] = (int)(k * k * (1 << 14)), rd[j] = (int)at, at += rc[j];
    }
    double *s = xmalloc((size_t)rc[rank] * sizeof *s), *d = xmalloc((size_t)at * sizeof *d);
    for (long i = 0; i < rc[rank]; i++) s[i] = val(rank, 0, i);
    double t0 = MPI_Wtime();
    MPI_Allgatherv(s, rc[rank], MPI_DOUBLE, d, rc, rd, MPI_DOUBLE, MPI_COMM_WORLD);
    double t = MPI_Wtime() - t0;
    for (int j = 0; j < p && check_it; j++) FOR_SAMPLE(i, rc[j]) check("allgatherv", d[rd[j] + i], val(j, 0, i));
    free(s), free(d), free(rc);
    return t;
  }
  if (!strcmp(name, "rsb-16M")) {
    long per = (16L << 20) / 8 / p;
    double *s = xmalloc((size_t)per * p * sizeof *s), *d = xmalloc((size_t)per * sizeof *d);
    for (long i = 0; i < per * p; i++) s[i] = val(rank, 1, i);
    double t0 = MPI_Wtime();
    MPI_Reduce_scatter_block(s, d, (int)per, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    double t = MPI_Wtime() - t0;
    if (check_it)
      FOR_SAMPLE(i, per) {
        double want = 0;
        for (int k = 0; k < p; k++) want += val(k, 1, rank * per + i);
        check("reduce_scatter_block", d[i], want);
      }
    free(s), free(d);
    return t;
  }
  return -1;
}

/* The bytes a rank moves in a case, for the table (what it sends, on
 * average over the ranks; allgatherv and reduce-scatter: the whole). */
static const char *const cases[] = {"a2a-uniform", "a2a-fft", "a2a-skewed", "agv-uneven",
                                    "rsb-16M"};

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int reps = 5;
  const char *only = NULL, *json = NULL, *label = "";
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--reps") && i + 1 < argc && atoi(argv[i + 1]) > 0) reps = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--only") && i + 1 < argc) only = argv[++i];
    else if (!strcmp(argv[i], "--json") && i + 1 < argc) json = argv[++i];
    else if (!strcmp(argv[i], "--label") && i + 1 < argc) label = argv[++i];
    else {
      if (rank == 0)
        fprintf(stderr, "usage: vcoll [--reps R] [--only CASE,...] [--json FILE] [--label L]\n"
                        "cases: a2a-uniform a2a-fft a2a-skewed agv-uneven rsb-16M\n");
      MPI_Finalize();
      return 2;
    }
  }
  if (rank == 0) printf("# vcoll: p %d, %d reps\n# %-12s %12s %12s %12s\n", size, reps, "case", "median_s", "min_s", "max_s");
  double *t = xmalloc((size_t)reps * sizeof *t);
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    if (only && !strstr(only, cases[c])) continue;
    run_case(cases[c], 1); /* warm-up, checked */
    for (int k = 0; k < reps; k++) {
      MPI_Barrier(MPI_COMM_WORLD);
      double mine = run_case(cases[c], 0), slowest = 0;
      /* Ranks done first wait without taking the cores of the others. */
      if (wsp_patient_max(&mine, &slowest, 1, MPI_COMM_WORLD) != MPI_SUCCESS)
        MPI_Abort(MPI_COMM_WORLD, 1);
      t[k] = slowest;
    }
    qsort(t, (size_t)reps, sizeof *t, cmp);
    if (rank == 0) {
      printf("  %-12s %12.6f %12.6f %12.6f\n", cases[c], t[reps / 2], t[0], t[reps - 1]);
      FILE *f = json ? fopen(json, "a") : NULL;
      if (f) {
        fprintf(f, "{\"bench\": \"vcoll\", \"label\": \"%s\", \"p\": %d, \"case\": \"%s\", "
                   "\"median_s\": %.6f, \"min_s\": %.6f, \"max_s\": %.6f, \"reps\": %d}\n",
                label, size, cases[c], t[reps / 2], t[0], t[reps - 1], reps);
        fclose(f);
      }
    }
    fflush(stdout);
  }
  int all = 0;
  MPI_Reduce(&failures, &all, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0) printf("# vcoll: finished, %d failures\n", all);
  free(t);
  MPI_Finalize();
  return all ? 1 : 0;
}
