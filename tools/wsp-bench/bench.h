#ifndef WSP_BENCH_H
#define WSP_BENCH_H

#include <stdio.h>

#include "wirespeed.h"

/* Each subcommand parses its own options (argv[0] is the subcommand) and
 * returns a process exit code; it is called after MPI_Init. */
int wsp_bench_sparse(int argc, char **argv, int rank, int size);

/* Rank 0's JSON output: NULL when --json was not given. */
FILE *wsp_bench_json_open(const char *path, int rank);
const char *wsp_bench_mpi_version(void);

#endif
