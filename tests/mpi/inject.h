/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Faults injected under the library, and requests it leaves behind, for
 * the tests of its failure paths. The test program defines MPI_Isend and
 * the calls that complete or free requests (MPI's profiling interface):
 * the static library's calls reach these definitions, which pass them on
 * to the PMPI_ ones. Nothing changes until a test arms them:
 *
 * - inject.fail_tag / fail_in: the fail_in-th MPI_Isend from now with that
 *   tag (MPI_ANY_TAG: any tag) fails with MPI_ERR_OTHER and posts nothing.
 *   With fail_when_pending set, only sends made while a tracked request is
 *   still active count: a failure while a transfer is in flight.
 * - inject.track_tag: every request MPI_Isend makes with that tag is
 *   tracked until a test, wait or free releases it; inject_active() says
 *   how many are still active. A request the library lost hold of stays
 *   active here forever.
 *
 * Include it in one file of a program, after mpi.h.
 */
#ifndef WSP_TEST_INJECT_H
#define WSP_TEST_INJECT_H

#include <mpi.h>
#include <stdlib.h>
#include <string.h>

enum { INJECT_TRACK_MAX = 256 };

static struct {
  int fail_tag;
  long fail_in;
  int fail_when_pending;
  int fired; /* failures injected so far */
  int track_tag; /* -2: none (MPI_ANY_TAG is -1) */
  int ntracked;
  MPI_Request tracked[INJECT_TRACK_MAX];
} inject = {.track_tag = -2};

static inline int inject_active(void) { return inject.ntracked; }

static inline int inject_is_tracked(MPI_Request r) {
  for (int i = 0; i < inject.ntracked; i++)
    if (memcmp(&inject.tracked[i], &r, sizeof r) == 0) return i;
  return -1;
}

/* Requests that were tracked before a call (before[0..n)) and whose slot
 * the call set to MPI_REQUEST_NULL were completed or freed by it. */
static inline void inject_release(int n, const MPI_Request *before, const MPI_Request *after) {
  for (int i = 0; i < n; i++) {
    if (after[i] != MPI_REQUEST_NULL) continue;
    int k = inject_is_tracked(before[i]);
    if (k >= 0) inject.tracked[k] = inject.tracked[--inject.ntracked];
  }
}

/* Copies reqs[0..n) when something is tracked; NULL otherwise (or when
 * out of memory, then nothing is released: the test fails, it does not
 * pass by mistake). */
static inline MPI_Request *inject_copy(int n, const MPI_Request *reqs) {
  if (inject.ntracked == 0 || n <= 0) return NULL;
  MPI_Request *c = malloc((size_t)n * sizeof *c);
  if (c) memcpy(c, reqs, (size_t)n * sizeof *c);
  return c;
}

static inline int inject_done(int rc, int n, MPI_Request *copy, const MPI_Request *reqs) {
  if (copy) inject_release(n, copy, reqs);
  free(copy);
  return rc;
}

int MPI_Isend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
              MPI_Request *req) {
  if (inject.fail_in > 0 && (inject.fail_tag == MPI_ANY_TAG || inject.fail_tag == tag) &&
      (!inject.fail_when_pending || inject.ntracked > 0) && --inject.fail_in == 0) {
    inject.fired++;
    return MPI_ERR_OTHER;
  }
  int rc = PMPI_Isend(buf, count, type, dest, tag, comm, req);
  if (rc == MPI_SUCCESS && tag == inject.track_tag && inject.ntracked < INJECT_TRACK_MAX)
    inject.tracked[inject.ntracked++] = *req;
  return rc;
}

int MPI_Test(MPI_Request *req, int *flag, MPI_Status *st) {
  MPI_Request *c = inject_copy(1, req);
  return inject_done(PMPI_Test(req, flag, st), 1, c, req);
}

int MPI_Testall(int n, MPI_Request reqs[], int *flag, MPI_Status sts[]) {
  MPI_Request *c = inject_copy(n, reqs);
  return inject_done(PMPI_Testall(n, reqs, flag, sts), n, c, reqs);
}

int MPI_Testany(int n, MPI_Request reqs[], int *idx, int *flag, MPI_Status *st) {
  MPI_Request *c = inject_copy(n, reqs);
  return inject_done(PMPI_Testany(n, reqs, idx, flag, st), n, c, reqs);
}

int MPI_Testsome(int n, MPI_Request reqs[], int *out, int idx[], MPI_Status sts[]) {
  MPI_Request *c = inject_copy(n, reqs);
  return inject_done(PMPI_Testsome(n, reqs, out, idx, sts), n, c, reqs);
}

int MPI_Wait(MPI_Request *req, MPI_Status *st) {
  MPI_Request *c = inject_copy(1, req);
  return inject_done(PMPI_Wait(req, st), 1, c, req);
}

int MPI_Waitall(int n, MPI_Request reqs[], MPI_Status sts[]) {
  MPI_Request *c = inject_copy(n, reqs);
  return inject_done(PMPI_Waitall(n, reqs, sts), n, c, reqs);
}

int MPI_Waitany(int n, MPI_Request reqs[], int *idx, MPI_Status *st) {
  MPI_Request *c = inject_copy(n, reqs);
  return inject_done(PMPI_Waitany(n, reqs, idx, st), n, c, reqs);
}

int MPI_Request_free(MPI_Request *req) {
  MPI_Request *c = inject_copy(1, req);
  return inject_done(PMPI_Request_free(req), 1, c, req);
}

#endif
