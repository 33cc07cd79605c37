/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The agreement: before a step that all ranks must take together (making a
 * communicator, opening a shuffle, probing or loading a network map, the
 * lanes between sites, a sparse round's exchange), every rank brings what it
 * knows (its own failure, if any; a fingerprint of what must be equal
 * everywhere) and every rank leaves with the same verdict. Nobody goes on
 * alone into traffic its partners will not join, and nobody waits forever
 * for a partner that stopped.
 *
 * How it works. The ranks form a binomial tree rooted at rank 0
 * (src/patterns/tree.h). Each rank waits for a report from each of its
 * children, merges them into its own, and sends the result to its parent;
 * the root's merge is the verdict, which goes back down the same tree. A
 * report holds:
 *
 *   fp, ~fp      the maxima of the fingerprint and of its complement: they
 *                are fp and ~fp only if every rank brought the same fp;
 *   failed       the lowest rank that failed locally, and its status;
 *   missing      the lowest rank that did not answer in time, and how many
 *                did not.
 *
 * Under a time limit T (cfg.timeout) the waits end by deadlines counted from
 * the moment a rank entered: a rank waits for a child of subtree height h
 * until T + (h + 1) s, where s = min(T / 16, 0.5 s) is one level's slack, so
 * that a child which itself waited out a stopped descendant still reports
 * in time and the report names the rank that stopped, not the one that
 * waited for it. A child that misses its deadline is reported missing; the
 * wait goes on up. A rank at depth d waits for the verdict until
 * T + (H + 2 + d) s (H: the tree's height); one that misses it takes its
 * parent as missing and passes that verdict on to its children, so a
 * stopped root is named too. Ranks that entered more than s apart may name
 * a rank on the path to the one that stopped instead of that rank.
 *
 * The verdict, the same on every rank that answered, in this order:
 *   1. a rank did not answer: WSP_ERR_TIMEOUT naming it, and the
 *      communicator is unusable from then on (as after any timeout);
 *   2. this rank failed: its own status, its own message;
 *   3. another rank failed: WSP_ERR_REMOTE naming the lowest such rank and
 *      its status;
 *   4. the fingerprints differ: the caller's status and message.
 * Without a time limit the waits have no deadline. The cost is that of a
 * reduction and a broadcast of 48 bytes: 2 ceil(lg p) latencies.
 */
#include "wsp_internal.h"

#include "tags.h"
#include "../patterns/tree.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One report, as it travels (six 64-bit words). */
enum { WSP__AGREE_FP, WSP__AGREE_NFP, WSP__AGREE_FAILED, WSP__AGREE_STATUS,
       WSP__AGREE_MISSING, WSP__AGREE_NMISSING, WSP__AGREE_WORDS };

/* The most children a rank of a binomial tree over an int's ranks has. */
enum { WSP__AGREE_CHILDREN_MAX = 32 };

static void wsp__agree_merge(uint64_t *a, const uint64_t *b) {
  if (b[WSP__AGREE_FP] > a[WSP__AGREE_FP]) a[WSP__AGREE_FP] = b[WSP__AGREE_FP];
  if (b[WSP__AGREE_NFP] > a[WSP__AGREE_NFP]) a[WSP__AGREE_NFP] = b[WSP__AGREE_NFP];
  if (b[WSP__AGREE_FAILED] < a[WSP__AGREE_FAILED]) {
    a[WSP__AGREE_FAILED] = b[WSP__AGREE_FAILED];
    a[WSP__AGREE_STATUS] = b[WSP__AGREE_STATUS];
  }
  if (b[WSP__AGREE_MISSING] < a[WSP__AGREE_MISSING])
    a[WSP__AGREE_MISSING] = b[WSP__AGREE_MISSING];
  a[WSP__AGREE_NMISSING] += b[WSP__AGREE_NMISSING];
}

/* Height of the binomial subtree of r over p ranks: ceil(lg(its size)). */
static int wsp__agree_height(int r, int p) {
  int n = wsp__binomial_subtree(r, p), h = 0;
  while ((1 << h) < n) h++;
  return h;
}

/* Waits for req until the absolute time `deadline` (0: none). 1 when it
 * completed; 0 when the deadline passed (the request is still pending) or
 * the wait failed (*rc says which). */
static int wsp__agree_wait(const wsp_comm_t *comm, MPI_Request *req, double deadline,
                           int *rc) {
  if (deadline <= 0) {
    *rc = wsp__waitall(comm, 1, req, 0);
    return *rc == WSP_OK;
  }
  wsp__backoff_t b;
  wsp__backoff_init(&b, comm);
  b.timeout = 0; /* the deadline below rules, not the idle stretch */
  for (;;) {
    int done = 0, mrc = MPI_Test(req, &done, MPI_STATUS_IGNORE);
    if (mrc != MPI_SUCCESS) {
      *rc = wsp__mpi_fail(comm, mrc, "MPI_Test", WSP__WHERE);
      return 0;
    }
    if (done) return 1;
    if (wsp__now() >= deadline) return 0;
    (void)wsp__backoff_idle(&b);
  }
}

/* The testing aid WSP_FAULT_AGREE=RANK:WHAT (docs/env.md): rank RANK stops
 * itself (SIGSTOP) on entering each agreement whose name begins with WHAT,
 * so that a test can show every other rank naming it (tests/mpi/test_fault.c).
 * A value of another form is ignored with a warning. */
static void wsp__agree_fault(const wsp_comm_t *comm, const char *what) {
#ifdef WSP_SIMGRID
  (void)comm, (void)what;
#else
  const char *s = getenv("WSP_FAULT_AGREE");
  if (s == NULL || *s == '\0') return;
  char *end = NULL;
  long r = strtol(s, &end, 10);
  if (end == s || *end != ':' || end[1] == '\0') {
    wsp__log(comm, WSP_LOG_WARN, "WSP_FAULT_AGREE=\"%s\": expected RANK:WHAT; ignored", s);
    return;
  }
  if (r == comm->rank && strncmp(what, end + 1, strlen(end + 1)) == 0) {
    fflush(stdout);
    fflush(stderr);
    raise(SIGSTOP);
  }
#endif
}

int wsp__agree(const wsp_comm_t *comm, const wsp__agree_t *a) {
  const int p = comm->size, me = comm->rank;
  wsp__agree_fault(comm, a->what);
  double T = comm->cfg.timeout;
#ifdef WSP_SIMGRID
  T = 0; /* the simulated build ignores the limit (its waits are replayed) */
#endif
  const double slack = T / 16 < 0.5 ? T / 16 : 0.5;
  const double t0 = wsp__now();
  uint64_t v[WSP__AGREE_WORDS] = {
      [WSP__AGREE_FP] = a->fp,
      [WSP__AGREE_NFP] = ~a->fp,
      [WSP__AGREE_FAILED] = a->status != WSP_OK ? (uint64_t)me : (uint64_t)p,
      [WSP__AGREE_STATUS] = (uint64_t)(int64_t)a->status,
      [WSP__AGREE_MISSING] = (uint64_t)p,
      [WSP__AGREE_NMISSING] = 0,
  };
  int children[WSP__AGREE_CHILDREN_MAX];
  int nchild = wsp__binomial_children(me, p, children, WSP__AGREE_CHILDREN_MAX);
  int parent = wsp__binomial_parent(me, p);
  int height = wsp__agree_height(0, p), depth = 0;
  for (int r = me; r > 0; r &= r - 1) depth++;
  int rc = WSP_OK;
  MPI_Request req = MPI_REQUEST_NULL;
  uint64_t in[WSP__AGREE_WORDS];

  /* Up: each child's report, by its deadline. */
  for (int i = 0; i < nchild && rc == WSP_OK; i++) {
    int c = children[i];
    if ((rc = wsp__irecv_bytes(comm, in, sizeof in, c, WSP__TAG_AGREE, &req)) != WSP_OK) break;
    double deadline = T > 0 ? t0 + T + (wsp__agree_height(c, p) + 1) * slack : 0;
    if (wsp__agree_wait(comm, &req, deadline, &rc)) {
      wsp__agree_merge(v, in);
      continue;
    }
    wsp__let_go(&req, 1); /* missed its deadline, or the wait failed */
    if (rc == WSP_OK) {
      uint64_t gone[WSP__AGREE_WORDS] = {0, 0, (uint64_t)p, 0, (uint64_t)c, 1};
      wsp__agree_merge(v, gone);
    }
  }
  if (rc == WSP_OK && parent >= 0)
    rc = wsp__send_bytes(comm, v, sizeof v, parent, WSP__TAG_AGREE);

  /* Down: the verdict from the parent, passed on to the children. */
  if (rc == WSP_OK && parent >= 0) {
    if ((rc = wsp__irecv_bytes(comm, in, sizeof in, parent, WSP__TAG_AGREE, &req)) == WSP_OK) {
      double deadline = T > 0 ? t0 + T + (height + 2 + depth) * slack : 0;
      if (wsp__agree_wait(comm, &req, deadline, &rc)) {
        memcpy(v, in, sizeof v);
      } else {
        wsp__let_go(&req, 1);
        if (rc == WSP_OK) {
          v[WSP__AGREE_MISSING] = (uint64_t)parent;
          v[WSP__AGREE_NMISSING] = 1;
        }
      }
    }
  }
  /* The children get the verdict even when this rank is about to fail
   * with an MPI error of its own: they would otherwise wait it out. The
   * sends are waited for (a message this small completes locally in the
   * MPIs we know, even to a stopped child); one still pending after the
   * limit is let go, from storage that outlives the call. */
  static _Thread_local uint64_t out[WSP__AGREE_WORDS];
  if (rc != WSP_OK) {
    /* This rank fails: the children must not take the verdict for a pass. */
    uint64_t mine[WSP__AGREE_WORDS] = {0, 0, (uint64_t)me, (uint64_t)(int64_t)rc, (uint64_t)p, 0};
    wsp__agree_merge(v, mine);
  }
  memcpy(out, v, sizeof out);
  MPI_Request sends[WSP__AGREE_CHILDREN_MAX];
  for (int i = 0; i < nchild; i++)
    if (wsp__isend_bytes(comm, out, sizeof out, children[i], WSP__TAG_AGREE, 0, &sends[i]) !=
        WSP_OK)
      sends[i] = MPI_REQUEST_NULL;
  double send_deadline = T > 0 ? wsp__now() + T : 0;
  for (int i = 0; i < nchild; i++) {
    int src = WSP_OK;
    if (sends[i] != MPI_REQUEST_NULL && !wsp__agree_wait(comm, &sends[i], send_deadline, &src))
      wsp__let_go(&sends[i], 0);
  }
  if (rc != WSP_OK) return rc;

  /* The verdict, the same on every rank that answered. */
  if (v[WSP__AGREE_NMISSING] > 0) {
    int who = (int)v[WSP__AGREE_MISSING];
    char what[256];
    snprintf(what, sizeof what, "%s: the agreement of every rank%s", a->what,
             v[WSP__AGREE_NMISSING] > 1 ? "; more ranks did not answer" : "");
    return wsp__timeout_peers(comm, &who, 1, what);
  }
  if (a->status != WSP_OK) {
    if (a->status_msg) return wsp__fail(comm, a->status, "%s", a->status_msg);
    return a->status;
  }
  if (v[WSP__AGREE_FAILED] < (uint64_t)p) {
    int st = (int)(int64_t)v[WSP__AGREE_STATUS];
    return wsp__fail(comm, WSP_ERR_REMOTE, "%s: rank %d failed (%s)", a->what,
                     (int)v[WSP__AGREE_FAILED], wsp_err_name(st));
  }
  if (a->compare && (v[WSP__AGREE_FP] != a->fp || v[WSP__AGREE_NFP] != ~a->fp))
    return wsp__fail(comm, a->differ_status, "%s: %s", a->what, a->differ);
  return WSP_OK;
}

int wsp__agree_alloc(const wsp_comm_t *comm, int failed, const char *what) {
  int status = WSP_OK;
  if (failed) status = wsp__fail(comm, WSP_ERR_NOMEM, "%s: out of memory", what);
  wsp__agree_t a = {.what = what, .status = status};
  return wsp__agree(comm, &a);
}
