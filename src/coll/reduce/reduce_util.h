/*
 * Small helpers shared by the reduce and allreduce algorithms: blocking
 * messages of a's dtype and tag that skip empty ones (both sides compute the
 * same lengths, so both skip), and the segment length of pipelined
 * algorithms in elements.
 */
#ifndef WSP_COLL_REDUCE_UTIL_H
#define WSP_COLL_REDUCE_UTIL_H

#include "../coll_internal.h"

static inline int wsp__red_send(wsp_comm_t *comm, const wsp__coll_args_t *a,
                                const void *buf, size_t n, int peer) {
  return n ? wsp__send_typed(comm, buf, n, a->dtype, peer, a->tag) : WSP_OK;
}

static inline int wsp__red_recv(wsp_comm_t *comm, const wsp__coll_args_t *a,
                                void *buf, size_t n, int peer) {
  return n ? wsp__recv_typed(comm, buf, n, a->dtype, peer, a->tag) : WSP_OK;
}

/* Exchange with one peer: sn elements of sbuf out, rn into rbuf (either
 * may be 0). */
static inline int wsp__red_exchange(wsp_comm_t *comm, const wsp__coll_args_t *a,
                                    const void *sbuf, size_t sn, void *rbuf,
                                    size_t rn, int peer) {
  /* Send first, then receive: see wsp__sendrecv_typed (src/core/p2p.h). */
  MPI_Request r[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL}; /* receive, send */
  int rc = WSP_OK;
  if (sn && (rc = wsp__isend_typed(comm, sbuf, sn, a->dtype, peer, a->tag, &r[1])))
    return rc;
  if (rn && (rc = wsp__irecv_typed(comm, rbuf, rn, a->dtype, peer, a->tag, &r[0])))
    return wsp__abandon(rc, 1, &r[0], 1, &r[1]);
  return wsp__waitall(comm, 2, r, (sn > rn ? sn : rn) * a->type_size);
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
