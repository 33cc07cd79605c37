/*
 * wsp-bench: wirespeed's benchmarks. Each subcommand prints a table for
 * people and, with --json FILE, writes one JSON object per measurement.
 * Times are taken side by side in one run so that their ratios hold on a
 * noisy machine.
 */
#include <stdio.h>
#include <string.h>

#include "bench.h"

static void usage(FILE *f) {
  fprintf(f,
          "usage: wsp-bench SUBCOMMAND [options]\n"
          "       mpirun -np N wsp-bench sparse|coll|shuffle [--help]\n\n"
          "subcommands:\n"
          "  sparse   dynamic sparse data exchange: nbx, pex, alltoallv, auto\n"
          "           across densities and message sizes\n"
          "  coll     collectives: every algorithm of each collective, auto\n"
          "           and the plain MPI collective, across message sizes\n"
          "           (time, algbw, busbw as in nccl-tests)\n"
          "  shuffle  all-pairs request/response goodput: synchronous rounds\n"
          "           (s1), unpaced servers (s2), G-thinker's paced batches\n"
          "           (s3) and wsp_shuffle (adaptive, fixed)\n\n"
          "Run 'wsp-bench SUBCOMMAND --help' for its options.\n");
}

FILE *wsp_bench_json_open(const char *path, int rank) {
  if (path == NULL || rank != 0) return NULL;
  FILE *f = fopen(path, "a");
  if (f == NULL) perror(path);
  return f;
}

const char *wsp_bench_mpi_version(void) {
  static char v[MPI_MAX_LIBRARY_VERSION_STRING + 1];
  int len = 0;
  if (MPI_Get_library_version(v, &len) != MPI_SUCCESS) len = 0;
  v[len] = '\0';
  char *nl = strchr(v, '\n');
  if (nl) *nl = '\0';
  /* Keep it JSON-safe. */
  for (char *c = v; *c; c++)
    if (*c == '"' || *c == '\\' || (unsigned char)*c < 0x20) *c = ' ';
  return v;
}

int main(int argc, char **argv) {
  if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
    usage(argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  int coll = strcmp(argv[1], "coll") == 0;
  int shuffle = strcmp(argv[1], "shuffle") == 0;
  if (!coll && !shuffle && strcmp(argv[1], "sparse") != 0) {
    fprintf(stderr, "error: unknown subcommand \"%s\"\n", argv[1]);
    usage(stderr);
    return 2;
  }
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  wsp_bench_post_t post = {0};
  int rc = coll      ? wsp_bench_coll(argc - 1, argv + 1, rank, size, &post)
           : shuffle ? wsp_bench_shuffle(argc - 1, argv + 1, rank, size, &post)
                     : wsp_bench_sparse(argc - 1, argv + 1, rank, size);
  /* A marker for launchers: everything is written, only MPI_Finalize is
   * left (lab/netlab run --done-line uses it against MPIs that hang
   * there). */
  if (rank == 0) {
    printf("# wsp-bench %s: finished (exit %d), entering MPI_Finalize\n", argv[1], rc);
    fflush(stdout);
  }
  MPI_Finalize();
  if (rank == 0 && post.plot_png) {
    int prc = wsp_bench_post_run(&post);
    if (rc == 0) rc = prc;
  }
  return rc;
}
