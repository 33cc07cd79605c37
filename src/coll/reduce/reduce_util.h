/* SPDX-License-Identifier: BSD-3-Clause */
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

/* sn elements of sbuf to dst while rn arrive into rbuf from src (either
 * may be 0: that message is skipped). */
static inline int wsp__red_exchange_with(wsp_comm_t *comm, const wsp__coll_args_t *a,
                                         const void *sbuf, size_t sn, int dst, void *rbuf,
                                         size_t rn, int src) {
  /* Send first, then receive: see wsp__sendrecv_typed (src/core/p2p.h). */
  MPI_Request r[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL}; /* receive, send */
  int rc = WSP_OK;
  if (sn && (rc = wsp__isend_typed(comm, sbuf, sn, a->dtype, dst, a->tag, &r[1]))) return rc;
  if (rn && (rc = wsp__irecv_typed(comm, rbuf, rn, a->dtype, src, a->tag, &r[0])))
    return wsp__abandon(comm, rc, 1, &r[0], 1, &r[1]);
  return wsp__waitall(comm, 2, r, (sn > rn ? sn : rn) * a->type_size);
}
/* Exchange with one peer. */
static inline int wsp__red_exchange(wsp_comm_t *comm, const wsp__coll_args_t *a, const void *sbuf,
                                    size_t sn, void *rbuf, size_t rn, int peer) {
  return wsp__red_exchange_with(comm, a, sbuf, sn, peer, rbuf, rn, peer);
}

/* Rabenseifner's reduce-scatter by recursive halving over q = 2^k new
 * ranks (src/coll/reduce/reduce_halving.c): on return new rank nr's block
 * of the q-way split is fully reduced in *acc. *acc and *rb (count
 * elements each) may swap; fold_root is the root the fold kept (-1 for
 * allreduce). bounds: the q parts' element boundaries (q + 1 entries;
 * NULL: nearly equal parts); nr ends with part wsp__bitrev(nr, lg q). */
int wsp__red_halving(wsp_comm_t *comm, const wsp__coll_args_t *a, int nr, int q, int fold_root,
                     const size_t *bounds, void **acc, void **rb);

/* Elements per segment: a->tune.seg bytes rounded down to whole elements,
 * at least one; 0 (no segment chosen) means the whole vector. */
static inline size_t wsp__red_segn(const wsp__coll_args_t *a) {
  if (a->tune.seg == 0 || a->type_size == 0) return a->count ? a->count : 1;
  size_t n = a->tune.seg / a->type_size;
  return n ? n : 1;
}

/* One rank's part in a pipelined reduce along a path of ranks (the
 * chain's, or the map's in reduce_aware.c), in segments of segn elements:
 * receives partial results from prev (-1: the path starts here), combines
 * its own vector into them ("own op incoming") and sends them to next (-1:
 * the path ends here, at the root). final_from: the rank the root receives
 * the finished result from when it is not the end of the path (the
 * non-commutative chain), else -1. */
int wsp__reduce_path(wsp_comm_t *comm, const wsp__coll_args_t *a, int prev, int next,
                     int final_from, size_t segn);

/* Bytes of one element in a shape (for aligning segments). */
static inline size_t wsp__red_elem_bytes(const wsp__coll_shape_t *s) {
  return s->count ? (s->bytes / s->count ? s->bytes / s->count : 1) : 1;
}

#endif
