/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the subcommands of wsp-bench share: the options every one has, the
 * one JSON writer (every record starts with the same fields), and the step
 * rank 0 runs after MPI_Finalize (the plot). Option tables and statistics
 * come from tools/common (opts.h, stats.h).
 */
#ifndef WSP_BENCH_H
#define WSP_BENCH_H

#include <jansson.h>
#include <stdio.h>

#include "opts.h"
#include "wirespeed.h"

/* What a subcommand leaves for rank 0 to do after MPI_Finalize (running
 * Python while the other ranks wait in MPI_Finalize would leave them
 * spinning on the cores the plot needs). */
typedef struct wsp_bench_post {
  const char *plot_png; /* NULL: nothing to do */
  char json_tmp[4096];  /* this run's JSON lines; removed afterwards */
  char title[256];
} wsp_bench_post_t;

/* Each subcommand is called after MPI_Init with its own argv (argv[0] is
 * its name) and returns a process exit code: 0, 1 when a result was
 * wrong, 2 for bad options. */
typedef int (*wsp_bench_fn)(int argc, char **argv, int rank, int size,
                            wsp_bench_post_t *post);
int wsp_bench_sparse(int argc, char **argv, int rank, int size,
                     wsp_bench_post_t *post);
int wsp_bench_coll(int argc, char **argv, int rank, int size,
                   wsp_bench_post_t *post);
int wsp_bench_shuffle(int argc, char **argv, int rank, int size,
                      wsp_bench_post_t *post);
int wsp_bench_p2p(int argc, char **argv, int rank, int size, wsp_bench_post_t *post);

/* ---- the options every subcommand has ---- */
typedef struct wsp_bench_io {
  const char *json, *label, *plot; /* NULL: none; label "" */
  int quiet;
} wsp_bench_io_t;

/* Their table rows; the help texts say what each subcommand writes. --json
 * FILE appends JSON lines to FILE ("-": standard output), --quiet prints no
 * table (errors and warnings still go to stderr, and the end-of-run marker
 * launchers wait for is still printed): docs/tools.md. */
#define WSP_BENCH_OPT_JSON(io, text)                                                               \
  {                                                                                                \
    "--json", WSP_OPT_STRING, &(io).json, "FILE", text " (-: standard output)", NULL, 0, 0, NULL,  \
        NULL                                                                                       \
  }
#define WSP_BENCH_OPT_LABEL(io)                                              \
  {"--label", WSP_OPT_STRING, &(io).label, "TEXT",                         \
   "free text stored in the JSON (e.g. testbed)", NULL, 0, 0, NULL, NULL}
#define WSP_BENCH_OPT_PLOT(io, text) \
  {"--plot", WSP_OPT_STRING, &(io).plot, "PNG", text, NULL, 0, 0, NULL, NULL}
#define WSP_BENCH_OPT_QUIET(io)                                                                    \
  {                                                                                                \
    "--quiet", WSP_OPT_FLAG, &(io).quiet, NULL,                                                    \
        "print no tables (errors and warnings still go to stderr)", NULL, 0, 0, NULL, NULL         \
  }
#define WSP_BENCH_OPT_END {NULL, 0, NULL, NULL, NULL, NULL, 0, 0, NULL, NULL}

/* Parses a subcommand's options, with --help and errors printed by rank 0
 * only. Returns -1 to go on, else the exit code (0 after --help, 2). */
int wsp_bench_parse(const wsp_opt_cmd_t *cmd, int argc, char **argv, int rank);

/* Prints "error: rank R: WHAT[: DETAIL]" and aborts the job: for failures
 * of MPI or the library in the middle of a run, where no rank can go on. */
_Noreturn void wsp_bench_die(int rank, const char *what, const char *detail);

/* Waits for req without holding a core (main.c says why); dies naming
 * `what` if MPI reports an error. */
void wsp_bench_wait(MPI_Request *req, int rank, const char *what);
/* A barrier of MPI_COMM_WORLD. patient: this rank waits with
 * wsp_bench_wait; otherwise it leaves as soon as MPI's own wait would (a
 * rank about to start a clock). Under SimGrid, MPI_Barrier. */
void wsp_bench_barrier(int rank, int patient, const char *what);
/* out[0..n) = the largest of in[0..n) over all ranks, on every rank,
 * waited for without spinning (wsp_patient_max, patient.h): the timed
 * calls' times. */
void wsp_bench_max(const double *in, double *out, int n, int rank, const char *what);

/* ---- JSON lines ---- */
typedef struct wsp_bench_out {
  FILE *file[2];      /* rank 0: --json FILE (appended to), the plot's copy */
  const char *bench;  /* the subcommand */
  const char *label;
  const char *mpi;
  int p;
} wsp_bench_out_t;

/* Collective. Rank 0 opens --json FILE for appending and, with --plot, a
 * private file that keeps this run's lines for the plot (and sets `post`
 * up, titled "wsp-bench BENCH, p = P<title_extra>, LABEL"). Returns 0, or 2
 * on every rank (message naming the option) when a file cannot be opened. */
int wsp_bench_out_open(wsp_bench_out_t *out, const char *bench,
                       const wsp_bench_io_t *io, int rank, int p,
                       const char *title_extra, wsp_bench_post_t *post);
/* 1 when records go anywhere (so that building them can be skipped). */
int wsp_bench_out_wanted(const wsp_bench_out_t *out);
/* A new record holding the fields every line starts with: bench, label,
 * mpi, p, wirespeed (the library's version). */
json_t *wsp_bench_record(const wsp_bench_out_t *out);
/* Writes the record as one line to every open file and releases it. */
void wsp_bench_emit(wsp_bench_out_t *out, json_t *rec);
void wsp_bench_out_close(wsp_bench_out_t *out);
json_t *wsp_bench_json_doubles(const double *v, size_t n);

/* The first line of MPI_Get_library_version. */
const char *wsp_bench_mpi_version(void);

/* ---- after MPI_Finalize ---- */
/* Runs what `post` holds (the plot through python/wsp_report) and removes
 * its private JSON file; returns an exit code (0 when there was nothing). */
int wsp_bench_post_run(wsp_bench_post_t *post);

#endif
