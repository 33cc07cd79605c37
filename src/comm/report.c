/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The report (WSP_REPORT, cfg.report; docs/report.md): what a communicator
 * ran, per operation and algorithm, gathered over the ranks when it is
 * freed. Each call only adds to its row (wsp__report_add, on the path of
 * the collectives, the sparse exchange and the user's striped sends);
 * nothing travels until wsp_comm_free, which reduces every row once and
 * lets rank 0 print the table or write the JSON file. Under the shim the
 * rows go to the job's report instead (the end of this file). It sits
 * with the communicator's assembly, above the parts whose names it prints.
 */
#include "report.h"

#include "wsp_internal.h"

#include <jansson.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The rows as the reduction sees them: the collectives' tables, then the
 * sparse exchange's, then the striped messages'. */
enum {
  WSP__REPORT_SPARSE = WSP_COLL_COUNT, /* the table after the collectives' */
  WSP__REPORT_STRIPED,
  WSP__REPORT_ROWS = (WSP__REPORT_STRIPED + 1) * WSP__REPORT_ALGS,
  WSP__REPORT_FIELDS = 8
};
_Static_assert(offsetof(wsp__report_t, sparse) ==
                       offsetof(wsp__report_t, coll) + sizeof(((wsp__report_t *)0)->coll) &&
                   offsetof(wsp__report_t, striped) ==
                       offsetof(wsp__report_t, sparse) + sizeof(((wsp__report_t *)0)->sparse),
               "the report's tables must be one array of rows");
_Static_assert(sizeof(wsp__report_row_t) == WSP__REPORT_FIELDS * sizeof(double),
               "a report row is WSP__REPORT_FIELDS doubles");

int wsp__report_attach(wsp_comm_t *comm) {
  comm->report = wsp__report_new("1");
  return comm->report ? 0 : -1;
}

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
 * exchange's and the striped messages' differ between ranks; the slowest
 * rank's seconds, and the sum of every rank's. */
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
    b[i].sent += a[i].sent;
    b[i].busy += a[i].busy;
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

/* Row i's operation and algorithm names. */
static void wsp__report_names(int i, const char **op, const char **alg) {
  int table = i / WSP__REPORT_ALGS, a = i % WSP__REPORT_ALGS;
  const wsp_alg_info_t *in = NULL;
  if (table < WSP__REPORT_SPARSE) {
    in = wsp_coll_alg_info((wsp_coll_t)table, a);
    *op = wsp_coll_name((wsp_coll_t)table);
  } else if (table == WSP__REPORT_SPARSE) {
    in = wsp_sparse_alg_info((wsp_sparse_alg_t)a);
    *op = "sparse";
  } else {
    *op = "striped";
    *alg = a == WSP__REPORT_STRIPED_LANES ? "lanes" : "mpi";
    return;
  }
  *alg = in ? in->name : "?";
}

/* What the table and the JSON say above the rows. */
typedef struct wsp__report_head {
  int p;
  double life;       /* seconds the report covers */
  const char *scope; /* e.g. "from wsp_comm_create to wsp_comm_free" */
} wsp__report_head_t;

static void wsp__report_print(const wsp__report_head_t *h, const wsp__report_line_t *l, int n) {
  fprintf(stderr, "wirespeed report (rank 0 of %d; %.3f s %s):\n", h->p, h->life, h->scope);
  fprintf(stderr, "  %-14s %-20s %8s %14s %12s %12s %12s\n", "operation", "algorithm", "calls",
          "bytes", "seconds", "busbw GB/s", "predicted s");
  for (int i = 0; i < n; i++) {
    char pred[32];
    if (l[i].predicted >= 0)
      snprintf(pred, sizeof pred, "%.6f", l[i].predicted);
    else
      snprintf(pred, sizeof pred, "-");
    /* Calls are whole but for a job's row that holds parts of calls. */
    const double whole = floor(l[i].calls + 0.5);
    const int part = fabs(l[i].calls - whole) > 1e-6;
    fprintf(stderr, "  %-14s %-20s %8.*f %14.0f %12.6f %12.3f %12s%s\n", l[i].op, l[i].alg,
            part ? 2 : 0, part ? l[i].calls : whole, l[i].bytes, l[i].seconds, l[i].busbw * 1e-9,
            pred, l[i].differ ? "  (ranks counted different calls)" : "");
  }
  if (n == 0) fprintf(stderr, "  (no collective, sparse exchange or striped message moved data)\n");
}

/* The JSON document of the rows (its "operations"), or NULL. */
static json_t *wsp__report_json(const wsp__report_head_t *h, const wsp__report_line_t *l, int n) {
  json_t *doc =
      json_pack("{s:s, s:i, s:f}", "wirespeed", wsp_version(), "p", h->p, "seconds", h->life);
  json_t *ops = json_array();
  if (doc == NULL || ops == NULL || json_object_set_new(doc, "operations", ops) != 0) {
    json_decref(doc);
    return NULL;
  }
  for (int i = 0; i < n; i++) {
    json_t *o = json_pack(
        "{s:s, s:s, s:I, s:I, s:f, s:f, s:o, s:b}", "operation", l[i].op, "algorithm", l[i].alg,
        "calls", (json_int_t)(l[i].calls + 0.5), "bytes", (json_int_t)(l[i].bytes + 0.5), "seconds",
        l[i].seconds, "busbw", l[i].busbw, "predicted_seconds",
        l[i].predicted >= 0 ? json_real(l[i].predicted) : json_null(), "ranks_differ", l[i].differ);
    if (o == NULL || json_array_append_new(ops, o) != 0) {
      json_decref(doc);
      return NULL;
    }
  }
  return doc;
}

/* Writes doc to path (and lets go of it): 0, or -1. */
static int wsp__report_dump(json_t *doc, const char *path) {
  int rc = json_dump_file(doc, path, JSON_INDENT(1) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(9));
  json_decref(doc);
  return rc == 0 ? 0 : -1;
}

int wsp__report_finish(wsp_comm_t *comm) {
  wsp__report_t *r = comm->report;
  if (r == NULL) return WSP_OK;
  comm->report = NULL;
  comm->cfg.report = NULL; /* it pointed at r->dest */
  int rc = WSP_OK;
  MPI_Datatype row = MPI_DATATYPE_NULL;
  MPI_Op op = MPI_OP_NULL;
  /* After a timeout the other ranks may be gone: nothing is gathered. */
  if (comm->owner->broken) goto out;
  /* The three tables are one array of rows (checked above). */
  wsp__report_row_t *rows = &r->coll[0][0];
  for (int i = 0; i < WSP__REPORT_ROWS; i++) rows[i].fewest = -rows[i].calls;
  WSP__MPI_GOTO(comm, MPI_Type_contiguous(WSP__REPORT_FIELDS, MPI_DOUBLE, &row), rc, out);
  WSP__MPI_GOTO(comm, MPI_Type_commit(&row), rc, out);
  WSP__MPI_GOTO(comm, MPI_Op_create(wsp__report_op, 1, &op), rc, out);
  /* The ranks' totals must all arrive: an allreduce waited for under the
   * time limit, as every wait of the library. */
  if ((rc = wsp__allreduce_wait(comm, rows, WSP__REPORT_ROWS, row, op)) != WSP_OK) goto out;
  if (comm->rank == 0) {
    const wsp__report_head_t h = {.p = comm->size,
                                  .life = MPI_Wtime() - r->created,
                                  .scope = "from wsp_comm_create to wsp_comm_free"};
    wsp__report_line_t lines[WSP__REPORT_ROWS];
    int n = 0;
    for (int i = 0; i < WSP__REPORT_ROWS; i++) {
      const wsp__report_row_t *w = &rows[i];
      if (w->calls == 0) continue;
      const int table = i / WSP__REPORT_ALGS;
      wsp__report_line_t *l = &lines[n++];
      wsp__report_names(i, &l->op, &l->alg);
      l->calls = w->calls;
      l->seconds = w->seconds;
      l->predicted = -1;
      if (table < WSP__REPORT_SPARSE) {
        l->bytes = w->bytes / comm->size; /* the same on every rank */
        l->busbw = wsp__report_busbw(table, comm->size, l->bytes, w->seconds);
        if (w->unpredicted == 0) l->predicted = w->predicted;
        l->differ = -w->fewest != w->calls;
      } else if (table == WSP__REPORT_SPARSE) {
        l->bytes = w->bytes;
        l->busbw = wsp__report_busbw(WSP_COLL_COUNT, comm->size, l->bytes, w->seconds);
        l->differ = -w->fewest != w->calls;
      } else {
        /* Only the senders count, and each its own: the rate of the
         * average message, over the time every rank spent in them. */
        l->calls = w->sent;
        l->bytes = w->bytes;
        l->busbw = w->busy > 0 ? w->bytes / w->busy : 0;
        l->differ = 0;
      }
    }
    if (strcmp(r->dest, "1") == 0) {
      wsp__report_print(&h, lines, n);
    } else {
      json_t *doc = wsp__report_json(&h, lines, n);
      if (doc == NULL)
        rc = wsp__fail(comm, WSP_ERR_NOMEM, "wsp_comm_free: out of memory for the report");
      else if (wsp__report_dump(doc, r->dest) != 0)
        rc = wsp__fail(comm, WSP_ERR_CONFIG, "WSP_REPORT=\"%s\": the report could not be written",
                       r->dest);
    }
  }
out:
  if (op != MPI_OP_NULL) MPI_Op_free(&op);
  if (row != MPI_DATATYPE_NULL) MPI_Type_free(&row);
  free(r->dest);
  free(r);
  return rc;
}

/* ---- the job's report (the shim's, src/shim/shim.c) ----
 *
 * The shim makes communicators of its own, one per MPI communicator the
 * program calls, and frees them at MPI_Finalize, where it prints one report
 * for the whole job. Gathering each communicator's rows when it is freed
 * would make every free a collective of its own, in an order no rank can
 * know the others keep; instead each rank folds its communicators' rows
 * into one table, and the shim reduces that table once over
 * MPI_COMM_WORLD (every rank is in MPI_Finalize). The fold makes the
 * figures add up across communicators: a collective's calls, bytes,
 * seconds and prediction count 1/q of the call on each of its q ranks, so
 * that the sum over the job counts each call once, its seconds the mean of
 * its ranks' and its bus bytes (busbw times seconds) at its own q. */
enum {
  WSP__JOB_CALLS,
  WSP__JOB_BYTES,
  WSP__JOB_SECONDS,
  WSP__JOB_BUS,
  WSP__JOB_PREDICTED,
  WSP__JOB_UNPREDICTED,
  WSP__JOB_FIELDS
};

size_t wsp__report_job_size(void) { return (size_t)WSP__REPORT_ROWS * WSP__JOB_FIELDS; }

int wsp__report_fold(wsp_comm_t *comm, double *job) {
  wsp__report_t *r = comm->report;
  if (r == NULL) return 0;
  comm->report = NULL; /* wsp_comm_free then gathers nothing */
  comm->cfg.report = NULL;
  const double q = comm->size;
  const wsp__report_row_t *rows = &r->coll[0][0];
  for (int i = 0; i < WSP__REPORT_ROWS; i++) {
    const wsp__report_row_t *w = &rows[i];
    double *j = job + (size_t)i * WSP__JOB_FIELDS;
    if (w->calls == 0) continue;
    const int table = i / WSP__REPORT_ALGS;
    if (table == WSP__REPORT_STRIPED) { /* a rank's own messages: counted whole */
      j[WSP__JOB_CALLS] += w->calls;
      j[WSP__JOB_BYTES] += w->bytes;
      j[WSP__JOB_SECONDS] += w->busy;
      j[WSP__JOB_BUS] += w->bytes;
      j[WSP__JOB_UNPREDICTED] += w->calls;
      continue;
    }
    j[WSP__JOB_CALLS] += w->calls / q;
    j[WSP__JOB_SECONDS] += w->seconds / q;
    j[WSP__JOB_PREDICTED] += w->predicted / q;
    j[WSP__JOB_UNPREDICTED] += w->unpredicted;
    if (table == WSP__REPORT_SPARSE) { /* every rank's sends, summed */
      j[WSP__JOB_BYTES] += w->bytes;
      j[WSP__JOB_BUS] += w->bytes / q;
      j[WSP__JOB_UNPREDICTED] += w->calls;
    } else {
      j[WSP__JOB_BYTES] += w->bytes / q;
      j[WSP__JOB_BUS] += wsp__report_busbw(table, comm->size, w->bytes, 1.0) / q;
    }
  }
  free(r->dest);
  free(r);
  return 1;
}

int wsp__report_job_emit(const double *job, int p, double life, const char *dest,
                         void (*more_text)(void *arg), json_t *(*more_json)(void *arg), void *arg) {
  const wsp__report_head_t h = {
      .p = p, .life = life, .scope = "of the communicators the shim set up, to MPI_Finalize"};
  wsp__report_line_t lines[WSP__REPORT_ROWS];
  int n = 0;
  for (int i = 0; i < WSP__REPORT_ROWS; i++) {
    const double *j = job + (size_t)i * WSP__JOB_FIELDS;
    if (!(j[WSP__JOB_CALLS] > 1e-9)) continue;
    wsp__report_line_t *l = &lines[n++];
    wsp__report_names(i, &l->op, &l->alg);
    l->calls = j[WSP__JOB_CALLS];
    l->bytes = j[WSP__JOB_BYTES];
    l->seconds = j[WSP__JOB_SECONDS];
    l->busbw = l->seconds > 0 ? j[WSP__JOB_BUS] / l->seconds : 0;
    l->predicted = j[WSP__JOB_UNPREDICTED] == 0 ? j[WSP__JOB_PREDICTED] : -1;
    /* The q shares of a call add up to 1, unless its ranks ran different
     * algorithms (alltoallv's, each from its own counts): the row then
     * holds a part of a call. */
    l->differ = fabs(l->calls - floor(l->calls + 0.5)) > 1e-6;
  }
  if (strcmp(dest, "1") == 0) {
    wsp__report_print(&h, lines, n);
    if (more_text) more_text(arg);
    return 0;
  }
  json_t *doc = wsp__report_json(&h, lines, n);
  json_t *more = doc && more_json ? more_json(arg) : NULL;
  if (doc == NULL || (more_json && (more == NULL || json_object_set_new(doc, "shim", more) != 0))) {
    json_decref(doc);
    return -1;
  }
  return wsp__report_dump(doc, dest);
}
