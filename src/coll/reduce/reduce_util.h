/*
 * Small helpers shared by the reduce and allreduce algorithms: blocking
 * typed messages of a's dtype, skipping empty ones (both sides compute the
 * same lengths, so both skip), cancelling what is in flight after an
 * error, and the segment length of pipelined algorithms in elements.
 */
#ifndef WSP_COLL_REDUCE_UTIL_H
#define WSP_COLL_REDUCE_UTIL_H

#include "../coll_internal.h"

static inline int wsp__red_send(wsp_comm_t *comm, const wsp__coll_args_t *a,
                                const void *buf, size_t n, int peer) {
  if (n == 0) return WSP_OK;
  MPI_Request r = MPI_REQUEST_NULL;
  int rc = wsp__isend_typed(comm, buf, n, a->dtype, peer, a->tag, &r);
  return rc ? rc : wsp__coll_waitall(comm, 1, &r, n * a->type_size);
}

static inline int wsp__red_recv(wsp_comm_t *comm, const wsp__coll_args_t *a,
                                void *buf, size_t n, int peer) {
  if (n == 0) return WSP_OK;
  MPI_Request r = MPI_REQUEST_NULL;
  int rc = wsp__irecv_typed(comm, buf, n, a->dtype, peer, a->tag, &r);
  return rc ? rc : wsp__coll_waitall(comm, 1, &r, n * a->type_size);
}

/* Completes n requests after an error: cancels and waits the ones still
 * active, so that none is left behind. Returns rc unchanged. */
static inline int wsp__red_abandon(int rc, int n, MPI_Request *reqs) {
  for (int i = 0; i < n; i++)
    if (reqs[i] != MPI_REQUEST_NULL) {
      MPI_Cancel(&reqs[i]);
      MPI_Wait(&reqs[i], MPI_STATUS_IGNORE);
    }
  return rc;
}

/* Exchange with one peer: sn elements of sbuf out, rn into rbuf (either
 * may be 0). */
static inline int wsp__red_exchange(wsp_comm_t *comm, const wsp__coll_args_t *a,
                                    const void *sbuf, size_t sn, void *rbuf,
                                    size_t rn, int peer) {
  /* Send first, then receive: see the note on exchanges in coll_internal.h. */
  MPI_Request r[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  int rc = WSP_OK;
  if (sn && (rc = wsp__isend_typed(comm, sbuf, sn, a->dtype, peer, a->tag, &r[1])))
    return rc;
  if (rn && (rc = wsp__irecv_typed(comm, rbuf, rn, a->dtype, peer, a->tag, &r[0])))
    return wsp__red_abandon(rc, 2, r);
  return wsp__coll_waitall(comm, 2, r, (sn > rn ? sn : rn) * a->type_size);
}

/* Rabenseifner's reduce-scatter by recursive halving over q = 2^k new
 * ranks (src/coll/reduce/reduce_halving.c): on return new rank nr's block
 * of the q-way split is fully reduced in *acc. *acc and *rb (count
 * elements each) may swap; fold_root is the root the fold kept (-1 for
 * allreduce). */
int wsp__red_halving(wsp_comm_t *comm, const wsp__coll_args_t *a, int nr,
                     int q, int fold_root, void **acc, void **rb);

/* Elements per segment: a->tune.seg bytes rounded down to whole elements,
 * at least one; 0 (no segment chosen) means the whole vector. */
static inline size_t wsp__red_segn(const wsp__coll_args_t *a) {
  if (a->tune.seg == 0 || a->type_size == 0) return a->count ? a->count : 1;
  size_t n = a->tune.seg / a->type_size;
  return n ? n : 1;
}

/* Bytes of one element in a shape (for aligning segments). */
static inline size_t wsp__red_elem_bytes(const wsp__coll_shape_t *s) {
  return s->count ? (s->bytes / s->count ? s->bytes / s->count : 1) : 1;
}

#endif
