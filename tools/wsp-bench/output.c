/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The one JSON writer of wsp-bench: every record is built with jansson,
 * starts with the same fields, and goes as one line to the --json file and,
 * with --plot, to the private file the plot reads after the run.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"

const char *wsp_bench_mpi_version(void) {
  static char v[MPI_MAX_LIBRARY_VERSION_STRING + 1];
  int len = 0;
  if (MPI_Get_library_version(v, &len) != MPI_SUCCESS) len = 0;
  v[len] = '\0';
  /* The first line names the library and its version; the rest (Open MPI
   * lists its build) would not fit a table's header. */
  char *nl = strchr(v, '\n');
  if (nl) *nl = '\0';
  return v;
}

/* Rank 0: the private copy of this run's lines for the plot. */
static int open_plot_copy(wsp_bench_out_t *out, const wsp_bench_io_t *io,
                          const char *title_extra, wsp_bench_post_t *post) {
  const char *tmp = getenv("TMPDIR");
  snprintf(post->json_tmp, sizeof post->json_tmp, "%s/wsp-bench-json-XXXXXX",
           tmp && *tmp ? tmp : "/tmp");
  int fd = mkstemp(post->json_tmp);
  if (fd < 0 || (out->file[1] = fdopen(fd, "w")) == NULL) {
    fprintf(stderr, "error: --plot: cannot create %s: %s\n", post->json_tmp,
            strerror(errno));
    if (fd >= 0) {
      close(fd);
      remove(post->json_tmp);
    }
    return -1;
  }
  post->plot_png = io->plot;
  snprintf(post->title, sizeof post->title, "wsp-bench %s, p = %d%s%s%s",
           out->bench, out->p, title_extra ? title_extra : "",
           *out->label ? ", " : "", out->label);
  return 0;
}

int wsp_bench_out_open(wsp_bench_out_t *out, const char *bench,
                       const wsp_bench_io_t *io, int rank, int p,
                       const char *title_extra, wsp_bench_post_t *post) {
  *out = (wsp_bench_out_t){.bench = bench, .label = io->label ? io->label : "",
                           .mpi = wsp_bench_mpi_version(), .p = p};
  int ok = 1;
  if (rank == 0 && io->json && strcmp(io->json, "-") == 0) {
    out->file[0] = stdout; /* --json -: the lines on standard output */
  } else if (rank == 0 && io->json) {
    out->file[0] = fopen(io->json, "a");
    if (out->file[0] == NULL) {
      fprintf(stderr, "error: --json: cannot open %s: %s\n", io->json, strerror(errno));
      ok = 0;
    }
  }
  if (rank == 0 && ok && io->plot && open_plot_copy(out, io, title_extra, post) != 0)
    ok = 0;
  /* Every rank learns the outcome, so that all return 2 together instead
   * of the others waiting in the first collective of the run. */
  MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (ok) return 0;
  wsp_bench_out_close(out);
  if (post->plot_png) remove(post->json_tmp);
  post->plot_png = NULL;
  return 2;
}

int wsp_bench_out_wanted(const wsp_bench_out_t *out) {
  return out->file[0] != NULL || out->file[1] != NULL;
}

json_t *wsp_bench_record(const wsp_bench_out_t *out) {
  json_t *j = json_object();
  json_object_set_new(j, "bench", json_string(out->bench));
  json_object_set_new(j, "label", json_string(out->label));
  json_object_set_new(j, "mpi", json_string(out->mpi));
  json_object_set_new(j, "p", json_integer(out->p));
  json_object_set_new(j, "wirespeed", json_string(wsp_version()));
  return j;
}

void wsp_bench_emit(wsp_bench_out_t *out, json_t *rec) {
  /* Eight significant digits: more than any timing here can resolve. */
  char *s = json_dumps(rec, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(8));
  for (int i = 0; i < 2 && s; i++)
    if (out->file[i]) {
      fprintf(out->file[i], "%s\n", s);
      fflush(out->file[i]);
    }
  free(s);
  json_decref(rec);
}

void wsp_bench_out_close(wsp_bench_out_t *out) {
  for (int i = 0; i < 2; i++)
    if (out->file[i]) {
      if (out->file[i] != stdout) fclose(out->file[i]);
      out->file[i] = NULL;
    }
}

json_t *wsp_bench_json_doubles(const double *v, size_t n) {
  json_t *a = json_array();
  for (size_t i = 0; i < n; i++) json_array_append_new(a, json_real(v[i]));
  return a;
}
