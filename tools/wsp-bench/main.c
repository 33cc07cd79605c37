/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * wsp-bench: wirespeed's benchmarks. Each subcommand prints a table for
 * people and, with --json FILE, writes one JSON object per measurement.
 * Times are taken side by side in one run so that their ratios hold on a
 * noisy machine.
 */
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "patient.h"

static const struct subcommand {
  const char *name;
  wsp_bench_fn run;
  const char *summary;
} subcommands[] = {
    {"sparse", wsp_bench_sparse,
     "dynamic sparse data exchange: nbx, pex, alltoallv, auto\n"
     "           across densities and message sizes"},
    {"coll", wsp_bench_coll,
     "collectives: every algorithm of each collective, auto\n"
     "           and the plain MPI collective, across message sizes\n"
     "           (time, algbw, busbw as in nccl-tests)"},
    {"shuffle", wsp_bench_shuffle,
     "all-pairs request/response goodput: synchronous rounds\n"
     "           (s1), unpaced servers (s2), G-thinker's paced batches\n"
     "           (s3) and wsp_shuffle (adaptive, fixed)"},
    {"p2p", wsp_bench_p2p,
     "one large message between two ranks: MPI_Send, wsp_striped_send\n"
     "           with k lanes and auto, iperf3 -P k on the same path"},
};
#define NSUB (sizeof subcommands / sizeof subcommands[0])

static void usage(FILE *f) {
  fprintf(f, "usage: wsp-bench SUBCOMMAND [options] | --version\n"
             "       mpirun -np N wsp-bench sparse|coll|shuffle|p2p [--help]\n\n"
             "subcommands:\n");
  for (size_t i = 0; i < NSUB; i++)
    fprintf(f, "  %-8s %s\n", subcommands[i].name, subcommands[i].summary);
  fprintf(f, "\nRun 'wsp-bench SUBCOMMAND --help' for its options.\n");
}

/* Set when a subcommand's options asked for its help (wsp_bench_parse). */
static int help_shown;

int wsp_bench_parse(const wsp_opt_cmd_t *cmd, int argc, char **argv, int rank) {
  int rc = wsp_opts_parse(cmd, argc, argv, rank == 0 ? stdout : NULL,
                          rank == 0 ? stderr : NULL);
  help_shown = rc == WSP_OPTS_HELP;
  return rc == WSP_OPTS_OK ? -1 : rc == WSP_OPTS_HELP ? 0 : 2;
}

_Noreturn void wsp_bench_die(int rank, const char *what, const char *detail) {
  fprintf(stderr, "error: rank %d: %s%s%s\n", rank, what, detail ? ": " : "",
          detail ? detail : "");
  MPI_Abort(MPI_COMM_WORLD, 1);
  exit(1); /* MPI_Abort does not return; this tells the compiler so */
}

/* The harness's waits whose end is not timed do not spin (patient.h says
 * why). A rank about to start its clock leaves a barrier through MPI's own
 * wait instead (wsp_bench_barrier, not patient), so that it does not start
 * late. */
void wsp_bench_wait(MPI_Request *req, int rank, const char *what) {
  if (wsp_patient_wait(req) != MPI_SUCCESS) wsp_bench_die(rank, what, "MPI_Test");
}

void wsp_bench_max(const double *in, double *out, int n, int rank, const char *what) {
  if (wsp_patient_max(in, out, n, MPI_COMM_WORLD) != MPI_SUCCESS)
    wsp_bench_die(rank, what, "MPI_Iallreduce");
}

void wsp_bench_barrier(int rank, int patient, const char *what) {
#ifdef WSP_SIMGRID
  (void)patient;
  if (MPI_Barrier(MPI_COMM_WORLD) != MPI_SUCCESS) wsp_bench_die(rank, what, "MPI_Barrier");
#else
  MPI_Request req;
  if (MPI_Ibarrier(MPI_COMM_WORLD, &req) != MPI_SUCCESS) wsp_bench_die(rank, what, "MPI_Ibarrier");
  if (!patient) {
    if (MPI_Wait(&req, MPI_STATUS_IGNORE) != MPI_SUCCESS) wsp_bench_die(rank, what, "MPI_Wait");
    return;
  }
  wsp_bench_wait(&req, rank, what);
#endif
}

int main(int argc, char **argv) {
  if (wsp_opts_version("wsp-bench", argc, argv, stdout)) return 0;
  if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
    usage(argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  const struct subcommand *sub = NULL;
  for (size_t i = 0; i < NSUB; i++)
    if (strcmp(argv[1], subcommands[i].name) == 0) sub = &subcommands[i];
  if (sub == NULL) {
    if (argv[1][0] == '-')
      fprintf(stderr, "error: unknown option %.*s (the first argument is the subcommand)\n",
              (int)strcspn(argv[1], "="), argv[1]);
    else
      fprintf(stderr, "error: unknown subcommand \"%s\"\n", argv[1]);
    usage(stderr);
    return 2;
  }
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  wsp_bench_post_t post = {0};
  int rc = sub->run(argc - 1, argv + 1, rank, size, &post);
  /* A marker for launchers: everything is written, only MPI_Finalize is
   * left (scripts/netlab run --done-line uses it against MPIs that hang
   * there), also under --quiet. Not after a subcommand's --help, whose
   * text is all it prints, nor after a bad option (exit 2), whose error
   * is (docs/tools.md). */
  if (rank == 0 && !help_shown && rc != 2) {
    printf("# wsp-bench %s: finished (exit %d), entering MPI_Finalize\n", sub->name, rc);
    fflush(stdout);
  }
  MPI_Finalize();
  if (rank == 0 && post.plot_png) {
    int prc = wsp_bench_post_run(&post);
    if (rc == 0) rc = prc;
  }
  return rc;
}
