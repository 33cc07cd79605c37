/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The PMPI shim's cost where it does nothing (docs/results/shim.md): the
 * same job calls MPI_Allreduce of 8 bytes and an 8-byte MPI_Send/MPI_Recv
 * ping-pong through their MPI_ names (the shim's wrappers, when it is
 * loaded) and through the MPI library's own PMPI_ entry points, in
 * alternating blocks, and prints the median time per call of each and
 * their difference. The shim defines PMPI_Allreduce too (for profilers
 * beside it, docs/shim.md), so a PMPI_Allreduce the program calls passes
 * its caller check: the reference takes the MPI library's definition,
 * found through the library that defines MPI_Comm_rank (which the shim
 * does not wrap). Run it under the shim with WSP_SHIM=off (or auto: 8 bytes
 * stay with the MPI) and without it, on 2 ranks or more.
 *   shim_overhead [--iters N] [--blocks K] [--json FILE] [--label L]
 */
#define _GNU_SOURCE 1
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"


typedef int (*allreduce_fn)(const void *, void *, int, MPI_Datatype, MPI_Op, MPI_Comm);
static allreduce_fn mpi_own_allreduce = PMPI_Allreduce;

/* The MPI library's own PMPI_Allreduce, or the linked one (which is the
 * MPI's when no shim is loaded) when it cannot be found. */
static void find_mpi_own(void) {
  Dl_info info;
  if (!dladdr((void *)&MPI_Comm_rank, &info) || info.dli_fname == NULL) return;
  void *lib = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
  void *sym = lib ? dlsym(lib, "PMPI_Allreduce") : NULL;
  if (sym) mpi_own_allreduce = (allreduce_fn)sym;
}

/* One block of iters calls; the slowest rank's time per call. */
static double block(int kind, int pmpi, int iters) {
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  double x = 1, y = 0;
  PMPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  for (int i = 0; i < iters; i++) {
    if (kind == 0) {
      if (pmpi)
        mpi_own_allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
      else
        MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    } else if (rank < 2) {
      int peer = 1 - rank;
      if (rank == 0) {
        if (pmpi) {
          PMPI_Send(&x, 1, MPI_DOUBLE, peer, 0, MPI_COMM_WORLD);
          PMPI_Recv(&y, 1, MPI_DOUBLE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
          MPI_Send(&x, 1, MPI_DOUBLE, peer, 0, MPI_COMM_WORLD);
          MPI_Recv(&y, 1, MPI_DOUBLE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
      } else {
        if (pmpi) {
          PMPI_Recv(&y, 1, MPI_DOUBLE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
          PMPI_Send(&x, 1, MPI_DOUBLE, peer, 0, MPI_COMM_WORLD);
        } else {
          MPI_Recv(&y, 1, MPI_DOUBLE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
          MPI_Send(&x, 1, MPI_DOUBLE, peer, 0, MPI_COMM_WORLD);
        }
      }
    }
  }
  double t = (MPI_Wtime() - t0) / iters, tmax;
  PMPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return tmax;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  find_mpi_own();
  int iters = 2000, blocks = 21, rank, p;
  const char *json = NULL, *label = "";
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--iters") && i + 1 < argc) iters = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--blocks") && i + 1 < argc) blocks = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--json") && i + 1 < argc) json = argv[++i];
    else if (!strcmp(argv[i], "--label") && i + 1 < argc) label = argv[++i];
    else {
      fprintf(stderr, "usage: shim_overhead [--iters N] [--blocks K] [--json FILE] [--label L]\n");
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
  }
  if (iters < 1 || blocks < 1) {
    fprintf(stderr, "shim_overhead: --iters and --blocks must be at least 1\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  if (p < 2) {
    if (rank == 0) fprintf(stderr, "shim_overhead: run it on 2 ranks or more\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const char *names[2] = {"allreduce_8B", "sendrecv_8B"};
  double *t[2][2];
  for (int k = 0; k < 2; k++)
    for (int m = 0; m < 2; m++) t[k][m] = malloc((size_t)blocks * sizeof(double));
  for (int k = 0; k < 2; k++) {
    block(k, 0, iters); /* warm-up, both paths */
    block(k, 1, iters);
    for (int b = 0; b < blocks; b++) {
      /* Alternate which path goes first: drift hits both alike. */
      int first = b % 2;
      t[k][first][b] = block(k, first, iters);
      t[k][1 - first][b] = block(k, 1 - first, iters);
    }
  }
  if (rank == 0) {
    const char *shim = getenv("WSP_SHIM");
    printf("# shim_overhead: p = %d, %d blocks of %d calls, median per call; WSP_SHIM=%s\n", p,
           blocks, iters, shim ? shim : "(unset)");
    printf("%-14s %12s %12s %12s\n", "call", "MPI_ ns", "PMPI_ ns", "diff ns");
    FILE *f = json ? fopen(json, "a") : NULL;
    if (json && f == NULL) fprintf(stderr, "shim_overhead: cannot open %s\n", json);
    for (int k = 0; k < 2; k++) {
      /* The difference per block (paired), then its median. */
      double *d = malloc((size_t)blocks * sizeof *d);
      for (int b = 0; b < blocks; b++) d[b] = t[k][0][b] - t[k][1][b];
      double dm = wsp_bench_median(d, blocks), mm = wsp_bench_median(t[k][0], blocks);
      double pm = wsp_bench_median(t[k][1], blocks);
      printf("%-14s %12.1f %12.1f %12.1f\n", names[k], mm * 1e9, pm * 1e9, dm * 1e9);
      if (f)
        fprintf(f,
                "{\"bench\":\"shim_overhead\",\"label\":\"%s\",\"p\":%d,\"call\":\"%s\","
                "\"shim\":\"%s\",\"iters\":%d,\"blocks\":%d,\"mpi_ns\":%.2f,\"pmpi_ns\":%.2f,"
                "\"diff_ns\":%.2f}\n",
                label, p, names[k], shim ? shim : "", iters, blocks, mm * 1e9, pm * 1e9,
                dm * 1e9);
      free(d);
    }
    if (f) fclose(f);
  }
  MPI_Finalize();
  return 0;
}
