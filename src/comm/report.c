/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The report (WSP_REPORT, cfg.report; docs/report.md): what a communicator
 * ran, per operation and algorithm, gathered over the ranks when it is
 * freed. Each call only adds to its row (wsp__report_add, on the path of
 * the collectives and the sparse exchange); nothing travels until
 * wsp_comm_free, which reduces every row once and lets rank 0 print the
 * table or write the JSON file. It sits with the communicator's assembly,
 * above the collectives and the sparse exchange whose names it prints.
 */
#include "wsp_internal.h"

#include <jansson.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The rows as the reduction sees them: the collectives' tables, then the
 * sparse exchange's. */
enum { WSP__REPORT_ROWS = (WSP_COLL_COUNT + 1) * WSP__REPORT_ALGS, WSP__REPORT_FIELDS = 6 };
_Static_assert(offsetof(wsp__report_t, sparse) ==
                   offsetof(wsp__report_t, coll) + sizeof(((wsp__report_t *)0)->coll),
               "the report's tables must be one array of rows");
_Static_assert(sizeof(wsp__report_row_t) == WSP__REPORT_FIELDS * sizeof(double),
               "a report row is WSP__REPORT_FIELDS doubles");

wsp__report_t *wsp__report_new(const char *dest) {
  wsp__report_t *r = calloc(1, sizeof *r);
  if (r != NULL) r->dest = malloc(strlen(dest) + 1);
  if (r == NULL || r->dest == NULL) {
    free(r);
    (void)wsp__fail(NULL, WSP_ERR_NOMEM, "wsp_comm_create: out of memory for the report");
    return NULL;
  }
  strcpy(r->dest, dest);
  r->created = MPI_Wtime();
  return r;
}

/* The reduction of rows (one element: WSP__REPORT_FIELDS doubles): the
 * most calls and, negated, the fewest; the sum of the bytes, as the sparse
 * exchange's differ between ranks; the slowest rank's seconds. */
static void wsp__report_op(void *in, void *inout, int *len, MPI_Datatype *type) {
  (void)type;
  const wsp__report_row_t *a = in;
  wsp__report_row_t *b = inout;
  for (int i = 0; i < *len; i++) {
    b[i].calls = a[i].calls > b[i].calls ? a[i].calls : b[i].calls;
    b[i].fewest = a[i].fewest > b[i].fewest ? a[i].fewest : b[i].fewest;
    b[i].bytes += a[i].bytes;
    b[i].seconds = a[i].seconds > b[i].seconds ? a[i].seconds : b[i].seconds;
    b[i].predicted = a[i].predicted > b[i].predicted ? a[i].predicted : b[i].predicted;
    b[i].unpredicted = a[i].unpredicted > b[i].unpredicted ? a[i].unpredicted : b[i].unpredicted;
  }
}

/* One row as the report shows it. */
typedef struct wsp__report_line {
  const char *op, *alg;
  double calls, bytes, seconds, busbw, predicted; /* predicted < 0: unknown */
  int differ;                                     /* the ranks counted different numbers of calls */
} wsp__report_line_t;

/* Bus bandwidth (bytes/s), as NCCL's tests define it, so that the figure
 * compares with a link's rate whatever the collective: the data a call
 * moves (the whole message, or p blocks for the block collectives) over
 * its time, times 2(p-1)/p for allreduce, (p-1)/p for the block
 * collectives and 1 for bcast and reduce. The sparse exchange's bytes are
 * every rank's sends, so its figure is the mean rate at which a rank
 * sent. */
static double wsp__report_busbw(int coll, int p, double bytes, double seconds) {
  if (!(seconds > 0)) return 0;
  double f = 1, data = bytes;
  switch (coll) {
  case WSP_COLL_BCAST:
  case WSP_COLL_REDUCE:
    break;
  case WSP_COLL_ALLREDUCE:
    f = 2.0 * (p - 1) / p;
    break;
  case WSP_COLL_COUNT:
    data = bytes / p;
    break; /* the sparse exchange */
  default:
    data = bytes * p, f = (double)(p - 1) / p;
    break;
  }
  return data * f / seconds;
}

static void wsp__report_print(const wsp_comm_t *comm, const wsp__report_line_t *l, int n,
                              double life) {
  fprintf(stderr,
          "wirespeed report (rank 0 of %d; %.3f s from wsp_comm_create to wsp_comm_free):\n",
          comm->size, life);
  fprintf(stderr, "  %-10s %-20s %8s %14s %12s %12s %12s\n", "operation", "algorithm", "calls",
          "bytes", "seconds", "busbw GB/s", "predicted s");
  for (int i = 0; i < n; i++) {
    char pred[32];
    if (l[i].predicted >= 0)
      snprintf(pred, sizeof pred, "%.6f", l[i].predicted);
    else
      snprintf(pred, sizeof pred, "-");
    fprintf(stderr, "  %-10s %-20s %8.0f %14.0f %12.6f %12.3f %12s%s\n", l[i].op, l[i].alg,
            l[i].calls, l[i].bytes, l[i].seconds, l[i].busbw * 1e-9, pred,
            l[i].differ ? "  (ranks counted different calls)" : "");
  }
  if (n == 0) fprintf(stderr, "  (no collective or sparse exchange moved data)\n");
}

static int wsp__report_write(const wsp_comm_t *comm, const char *path, const wsp__report_line_t *l,
                             int n, double life) {
  json_t *doc =
      json_pack("{s:s, s:i, s:f}", "wirespeed", wsp_version(), "p", comm->size, "seconds", life);
  json_t *ops = json_array();
  if (doc == NULL || ops == NULL || json_object_set_new(doc, "operations", ops) != 0) {
    json_decref(doc);
    return wsp__fail(comm, WSP_ERR_NOMEM, "wsp_comm_free: out of memory for the report");
  }
  for (int i = 0; i < n; i++) {
    json_t *o = json_pack(
        "{s:s, s:s, s:I, s:I, s:f, s:f, s:o, s:b}", "operation", l[i].op, "algorithm", l[i].alg,
        "calls", (json_int_t)l[i].calls, "bytes", (json_int_t)l[i].bytes, "seconds", l[i].seconds,
        "busbw", l[i].busbw, "predicted_seconds",
        l[i].predicted >= 0 ? json_real(l[i].predicted) : json_null(), "ranks_differ", l[i].differ);
    if (o == NULL || json_array_append_new(ops, o) != 0) {
      json_decref(doc);
      return wsp__fail(comm, WSP_ERR_NOMEM, "wsp_comm_free: out of memory for the report");
    }
  }
  int rc = json_dump_file(doc, path, JSON_INDENT(1) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(9));
  json_decref(doc);
  if (rc != 0)
    return wsp__fail(comm, WSP_ERR_CONFIG, "WSP_REPORT=\"%s\": the report could not be written",
                     path);
  return WSP_OK;
}

int wsp__report_finish(wsp_comm_t *comm) {
  wsp__report_t *r = comm->report;
  if (r == NULL) return WSP_OK;
  comm->report = NULL;
  int rc = WSP_OK;
  MPI_Datatype row = MPI_DATATYPE_NULL;
  MPI_Op op = MPI_OP_NULL;
  /* After a timeout the other ranks may be gone: nothing is gathered. */
  if (comm->owner->broken) goto out;
  /* The two tables are one array of rows (checked above). */
  wsp__report_row_t *rows = &r->coll[0][0];
  for (int i = 0; i < WSP__REPORT_ROWS; i++) rows[i].fewest = -rows[i].calls;
  WSP__MPI_GOTO(comm, MPI_Type_contiguous(WSP__REPORT_FIELDS, MPI_DOUBLE, &row), rc, out);
  WSP__MPI_GOTO(comm, MPI_Type_commit(&row), rc, out);
  WSP__MPI_GOTO(comm, MPI_Op_create(wsp__report_op, 1, &op), rc, out);
  /* The ranks' totals must all arrive: an allreduce waited for under the
   * time limit, as every wait of the library. */
  if ((rc = wsp__allreduce_wait(comm, rows, WSP__REPORT_ROWS, row, op)) != WSP_OK) goto out;
  if (comm->rank == 0) {
    double life = MPI_Wtime() - r->created;
    wsp__report_line_t lines[WSP__REPORT_ROWS];
    int n = 0;
    for (int i = 0; i < WSP__REPORT_ROWS; i++) {
      const wsp__report_row_t *w = &rows[i];
      if (w->calls == 0) continue;
      int coll = i / WSP__REPORT_ALGS, alg = i % WSP__REPORT_ALGS;
      wsp__report_line_t *l = &lines[n++];
      if (coll < WSP_COLL_COUNT) {
        const wsp_alg_info_t *in = wsp_coll_alg_info((wsp_coll_t)coll, alg);
        l->op = wsp_coll_name((wsp_coll_t)coll);
        l->alg = in ? in->name : "?";
        l->bytes = w->bytes / comm->size; /* the same on every rank */
      } else {
        const wsp_alg_info_t *in = wsp_sparse_alg_info((wsp_sparse_alg_t)alg);
        l->op = "sparse";
        l->alg = in ? in->name : "?";
        l->bytes = w->bytes;
      }
      l->calls = w->calls;
      l->differ = -w->fewest != w->calls;
      l->seconds = w->seconds;
      l->busbw = wsp__report_busbw(coll, comm->size, l->bytes, w->seconds);
      l->predicted = coll < WSP_COLL_COUNT && w->unpredicted == 0 ? w->predicted : -1;
    }
    if (strcmp(r->dest, "1") == 0)
      wsp__report_print(comm, lines, n, life);
    else
      rc = wsp__report_write(comm, r->dest, lines, n, life);
  }
out:
  if (op != MPI_OP_NULL) MPI_Op_free(&op);
  if (row != MPI_DATATYPE_NULL) MPI_Type_free(&row);
  free(r->dest);
  free(r);
  return rc;
}
