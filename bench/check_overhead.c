/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What WSP_CHECK costs (docs/results/coll.md): one job makes two wirespeed
 * communicators over MPI_COMM_WORLD with the same cost model (calibrated
 * once, then given to both, so that both choose the same algorithm), one
 * with cfg.check = 0 and one with cfg.check = 1, and calls an 8-byte
 * wsp_allreduce (or --bytes) on each in alternating blocks. It prints the
 * median over blocks of the slowest rank's time per call on each, and the
 * median of the paired differences: the check's cost, measured inside one
 * job.
 *   check_overhead [--bytes B] [--iters N] [--blocks K] [--json FILE] [--label L]
 */
#include <wirespeed.h>

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../tools/common/patient.h"
#include "stats.h"


/* One block of iters calls on w; the slowest rank's time per call, or a
 * negative value when a call failed. */
static double block(wsp_comm_t *w, double *x, double *y, size_t n, int iters) {
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  int bad = 0;
  for (int i = 0; i < iters; i++)
    bad |= wsp_allreduce(w, x, y, n, MPI_DOUBLE, MPI_SUM) != WSP_OK;
  double t = (MPI_Wtime() - t0) / iters, tmax;
  int anybad;
  /* Ranks done first wait without taking the cores of the others. */
  if (wsp_patient_max(&t, &tmax, 1, MPI_COMM_WORLD) != MPI_SUCCESS) MPI_Abort(MPI_COMM_WORLD, 1);
  MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return anybad ? -1 : tmax;
}

static void usage(void) {
  fprintf(stderr,
          "usage: check_overhead [--bytes B] [--iters N] [--blocks K] [--json FILE] "
          "[--label L]\n");
  MPI_Abort(MPI_COMM_WORLD, 2);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int iters = 2000, blocks = 21, rank, p;
  long bytes = 8;
  const char *json = NULL, *label = "";
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--bytes") && i + 1 < argc) bytes = atol(argv[++i]);
    else if (!strcmp(argv[i], "--iters") && i + 1 < argc) iters = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--blocks") && i + 1 < argc) blocks = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--json") && i + 1 < argc) json = argv[++i];
    else if (!strcmp(argv[i], "--label") && i + 1 < argc) label = argv[++i];
    else usage();
  }
  if (iters < 1 || blocks < 1 || bytes < 8 || bytes % 8) {
    fprintf(stderr, "check_overhead: --iters and --blocks must be at least 1, --bytes a "
                    "multiple of 8 (doubles)\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  wsp_config_t cfg;
  wsp_comm_t *w[2] = {NULL, NULL}, *cal = NULL;
  wsp_model_t m;
  if (wsp_config_init(&cfg) || wsp_config_from_env(&cfg) ||
      wsp_comm_create(MPI_COMM_WORLD, &cfg, &cal) || wsp_comm_model(cal, &m)) {
    fprintf(stderr, "check_overhead: %s\n", wsp_last_error());
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  wsp_comm_free(&cal);
  cfg.model_alpha = m.alpha, cfg.model_beta = m.beta, cfg.model_gamma = m.gamma;
  cfg.model_beta_x = m.beta_x, cfg.model_gap = m.gap;
  for (int k = 0; k < 2; k++) {
    cfg.check = k;
    if (wsp_comm_create(MPI_COMM_WORLD, &cfg, &w[k])) {
      fprintf(stderr, "check_overhead: %s\n", wsp_last_error());
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
  }
  size_t n = (size_t)bytes / 8;
  double *x = calloc(n, sizeof *x), *y = calloc(n, sizeof *y);
  double *t[2] = {malloc((size_t)blocks * sizeof(double)), malloc((size_t)blocks * sizeof(double))};
  if (!x || !y || !t[0] || !t[1]) MPI_Abort(MPI_COMM_WORLD, 2);
  block(w[0], x, y, n, iters); /* warm-up, both */
  block(w[1], x, y, n, iters);
  for (int b = 0; b < blocks; b++) {
    /* Alternate which goes first: drift hits both alike. */
    int first = b % 2;
    t[first][b] = block(w[first], x, y, n, iters);
    t[1 - first][b] = block(w[1 - first], x, y, n, iters);
    if (t[0][b] < 0 || t[1][b] < 0) {
      if (rank == 0) fprintf(stderr, "check_overhead: a call failed: %s\n", wsp_last_error());
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
  }
  if (rank == 0) {
    int alg = -1;
    const char *name = "?";
    if (wsp_coll_select(w[0], WSP_COLL_ALLREDUCE, (size_t)bytes, 1, &alg) == WSP_OK) {
      const wsp_alg_info_t *info = wsp_coll_alg_info(WSP_COLL_ALLREDUCE, alg);
      if (info) name = info->name;
    }
    double *d = malloc((size_t)blocks * sizeof *d);
    for (int b = 0; b < blocks; b++) d[b] = t[1][b] - t[0][b];
    double dm = wsp_bench_median(d, blocks), m0 = wsp_bench_median(t[0], blocks);
    double m1 = wsp_bench_median(t[1], blocks);
    printf("# check_overhead: p = %d, allreduce of %ld bytes (%s), %d blocks of %d calls, "
           "median per call\n",
           p, bytes, name, blocks, iters);
    printf("%12s %12s %12s %8s\n", "check=0 us", "check=1 us", "diff us", "ratio");
    printf("%12.2f %12.2f %12.2f %8.3f\n", m0 * 1e6, m1 * 1e6, dm * 1e6, m1 / m0);
    if (json) {
      FILE *f = fopen(json, "a");
      if (f == NULL) {
        fprintf(stderr, "check_overhead: cannot open %s\n", json);
      } else {
        fprintf(f,
                "{\"bench\":\"check_overhead\",\"label\":\"%s\",\"p\":%d,\"bytes\":%ld,"
                "\"alg\":\"%s\",\"iters\":%d,\"blocks\":%d,\"off_us\":%.3f,\"on_us\":%.3f,"
                "\"diff_us\":%.3f}\n",
                label, p, bytes, name, iters, blocks, m0 * 1e6, m1 * 1e6, dm * 1e6);
        fclose(f);
      }
    }
    free(d);
  }
  free(x), free(y), free(t[0]), free(t[1]);
  wsp_comm_free(&w[0]);
  wsp_comm_free(&w[1]);
  MPI_Finalize();
  return 0;
}
