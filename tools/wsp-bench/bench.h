#ifndef WSP_BENCH_H
#define WSP_BENCH_H

#include <stdio.h>

#include "wirespeed.h"

/* What a subcommand leaves for rank 0 to do after MPI_Finalize (running
 * Python while the other ranks wait in MPI_Finalize would leave them
 * spinning on the cores the plot needs). */
typedef struct wsp_bench_post {
  const char *plot_png; /* NULL: nothing to do */
  char json_tmp[4096];  /* this run's JSON lines; removed afterwards */
  char title[256];
} wsp_bench_post_t;

/* Each subcommand parses its own options (argv[0] is the subcommand) and
 * returns a process exit code; it is called after MPI_Init. */
int wsp_bench_sparse(int argc, char **argv, int rank, int size);
int wsp_bench_coll(int argc, char **argv, int rank, int size,
                   wsp_bench_post_t *post);
int wsp_bench_shuffle(int argc, char **argv, int rank, int size,
                      wsp_bench_post_t *post);
/* Runs what `post` holds; returns an exit code (0 when there was nothing). */
int wsp_bench_post_run(wsp_bench_post_t *post);

/* Rank 0's JSON output: NULL when --json was not given. */
FILE *wsp_bench_json_open(const char *path, int rank);
const char *wsp_bench_mpi_version(void);

#endif
