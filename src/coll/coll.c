/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Running a collective: the algorithm that selection (select.c) chose, with
 * the tuning its cost function picked, on this collective's tag; and the
 * native algorithm, row 0 of every table: the MPI library's own collective
 * on the private communicator.
 */
#include "coll_internal.h"

#include "../p2p/xport.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

int wsp__coll_run(wsp_comm_t *comm, wsp__coll_args_t *a,
                  const wsp__coll_shape_t *in) {
  const wsp__coll_table_t *t = wsp__coll_table(a->coll);
  wsp__coll_shape_t sh = *in, *shape = &sh;
  /* auto's transport is decided at the first call that could use lanes
   * (the size is the same on every rank). Not by an alltoallv, whose size
   * is each rank's own: some ranks would start the collective decision
   * and others not. It takes the lanes once another call decided. */
  if (comm->lanes && comm->xport == NULL && a->coll != WSP_COLL_ALLTOALLV &&
      in->bytes >= wsp__p2p_min(&comm->lanes->cfg)) {
    int rc = wsp__xport_decide(comm);
    if (rc != WSP_OK) return rc;
  }
  wsp__coll_shape_topo(comm, shape);
  int fell = 0;
  int alg = wsp__coll_choose(comm, t, shape, &fell);
  const wsp__coll_alg_t *r = &t->algs[alg];
  comm->coll_ran[a->coll].calls++;
  comm->coll_ran[a->coll].alg = alg;
  if (fell && comm->rank == 0)
    wsp__log(comm, WSP_LOG_INFO,
             "%s: the requested algorithm's preconditions do not hold; "
             "running %s",
             t->name, r->info.name);
  memset(&a->tune, 0, sizeof a->tune);
  double predicted = r->cost ? wsp__coll_alg_cost(r, &comm->model, shape, &a->tune) : -1.0;
  if (comm->cfg.coll_segment) a->tune.seg = comm->cfg.coll_segment;
  a->tag = WSP__COLL_TAG(a->coll);
  wsp__log(comm, WSP_LOG_TRACE, "%s: %s, %zu bytes, seg %zu, conns %d, lanes %d", t->name,
           r->info.name, shape->bytes, a->tune.seg, a->tune.conns, a->tune.lanes);
  /* The report (docs/report.md) costs this one branch when it is off. */
  if (comm->report == NULL) return r->run(comm, a);
  double t0 = MPI_Wtime();
  int rc = r->run(comm, a);
  if (rc == WSP_OK && alg < WSP__REPORT_ALGS)
    wsp__report_add(&comm->report->coll[a->coll][alg], shape->bytes, MPI_Wtime() - t0, predicted);
  return rc;
}

/* ---- native: the MPI library's own collective, on the private comm ----
 * The arguments are already in the algorithms' form (bytes for data
 * movement), which MPI takes as they are; sizes beyond int go through
 * wsp__bytes_type / a chunked loop. */

/* The vector forms: MPI's counts and displacements are ints (bytes here,
 * elements for reduce_scatter). Past INT_MAX the MPI library's call cannot
 * be made; the other algorithms can. For allgatherv and reduce_scatter
 * every rank sees the same counts and refuses alike; alltoallv's refusal
 * is this rank's (its own counts), which only a forced native reaches. */
static int wsp__coll_native_v(wsp_comm_t *comm, const wsp__coll_args_t *a) {
  int p = comm->size, me = comm->rank, rc = WSP_OK;
  int *iv = malloc(4 * (size_t)p * sizeof *iv);
  if (iv == NULL) return wsp__fail(comm, WSP_ERR_NOMEM, "native: out of memory");
  const size_t *src[4] = {a->scounts, a->sdispls, a->rcounts, a->rdispls};
  /* alltoallv all four; allgatherv the receive side; reduce_scatter the
   * counts. */
  int first = a->coll == WSP_COLL_ALLTOALLV ? 0 : 2;
  int last = a->coll == WSP_COLL_REDUCE_SCATTER ? 2 : 3;
  for (int k = first; k <= last && rc == WSP_OK; k++)
    for (int i = 0; i < p; i++) {
      const size_t *v = src[k];
      if (v[i] > INT_MAX) {
        rc = wsp__fail(comm, WSP_ERR_UNSUPPORTED,
                       "native %s: a count or displacement of %zu %s is past MPI's int; "
                       "choose another algorithm (WSP_%s_ALGORITHM)",
                       wsp_coll_name(a->coll), v[i],
                       a->coll == WSP_COLL_REDUCE_SCATTER ? "elements" : "bytes",
                       a->coll == WSP_COLL_ALLTOALLV    ? "ALLTOALLV"
                       : a->coll == WSP_COLL_ALLGATHERV ? "ALLGATHERV"
                                                        : "REDUCE_SCATTER");
        break;
      }
      iv[k * p + i] = (int)v[i];
    }
  if (rc != WSP_OK) goto out;
  int *sc = iv, *sd = iv + p, *rcn = iv + 2 * p, *rd = iv + 3 * p;
  MPI_Comm c = comm->mpi;
  switch (a->coll) {
  case WSP_COLL_ALLTOALLV: {
    /* The entry's buffers never overlap, but one with nothing to send may
     * be recvbuf itself, and Open MPI's non-blocking alltoallv (4.1.4)
     * takes sendbuf == recvbuf for MPI_IN_PLACE: that rank then ran
     * another schedule than the others and the next call hung. */
    static const char none;
    const void *s = a->sendbuf == a->recvbuf ? (const void *)&none : a->sendbuf;
    WSP__MPI_COLL_GOTO(comm, rc, out, Alltoallv, s, sc, sd, MPI_BYTE, a->recvbuf, rcn, rd, MPI_BYTE,
                       c);
    break;
  }
  case WSP_COLL_ALLGATHERV: {
    const void *s = a->sendbuf;
    if (s == (const char *)a->recvbuf + a->rdispls[me]) s = MPI_IN_PLACE;
    WSP__MPI_COLL_GOTO(comm, rc, out, Allgatherv, s, rcn[me], MPI_BYTE, a->recvbuf, rcn, rd,
                       MPI_BYTE, c);
    break;
  }
  default: /* reduce_scatter; the entry never passes MPI_IN_PLACE */
    if (a->block_form)
      WSP__MPI_COLL_GOTO(comm, rc, out, Reduce_scatter_block, a->sendbuf, a->recvbuf, rcn[0],
                         a->dtype, a->op, c);
    else
      WSP__MPI_COLL_GOTO(comm, rc, out, Reduce_scatter, a->sendbuf, a->recvbuf, rcn, a->dtype,
                         a->op, c);
    break;
  }
out:
  free(iv);
  return rc;
}

int wsp__coll_native(wsp_comm_t *comm, const wsp__coll_args_t *a) {
  int rc = WSP_OK, owned = 0, b;
  MPI_Datatype ty = MPI_DATATYPE_NULL;
  MPI_Comm c = comm->mpi;
  switch (a->coll) {
  case WSP_COLL_BCAST: {
    if ((rc = wsp__bytes_type(comm, a->block, &b, &ty, &owned))) return rc;
    WSP__MPI_COLL_GOTO(comm, rc, out, Bcast, a->recvbuf, b, ty, a->root, c);
    goto out;
  }
  case WSP_COLL_REDUCE:
  case WSP_COLL_ALLREDUCE: {
    /* Reductions are element-wise, so a long vector is reduced in pieces
     * of at most big_message elements. */
    size_t step = comm->cfg.big_message;
    for (size_t off = 0; off < a->count || off == 0; off += step) {
      size_t n = a->count - off < step ? a->count - off : step;
      const void *s = a->sendbuf == a->recvbuf ? MPI_IN_PLACE
                                               : wsp__elem(a, a->sendbuf, off);
      void *r = a->recvbuf ? wsp__elem(a, a->recvbuf, off) : NULL;
      if (a->coll == WSP_COLL_ALLREDUCE) {
        WSP__MPI_COLL_GOTO(comm, rc, out, Allreduce, s, r, (int)n, a->dtype, a->op, c);
      } else if (s == MPI_IN_PLACE && a->root != 0) {
        /* MPICH 4.0.2 (ch4:ucx) crashes in MPI_Reduce with MPI_IN_PLACE at
         * a root other than 0 from about 600 ints on (reproduced with a
         * plain MPI program); give it a copy of the input instead. */
        /* Without memory for the copy the root still takes part (the
         * others are already in MPI_Reduce), in place. */
        void *mem = NULL, *tmp = wsp__tmp_typed(comm, a, n, &mem);
        if (tmp && wsp__copy_typed(comm, a, r, tmp, n) != WSP_OK) {
          free(mem);
          tmp = NULL, mem = NULL;
        }
        const void *in = tmp ? tmp : MPI_IN_PLACE;
        WSP__MPI_COLL_GOTO(comm, rc, reduced, Reduce, in, r, (int)n, a->dtype, a->op, a->root,
                           c);
      reduced:
        free(mem);
        if (rc != WSP_OK) return rc;
      } else {
        /* MPI_IN_PLACE only exists at the root of MPI_Reduce. */
        if (comm->rank != a->root && s == MPI_IN_PLACE) s = r;
        WSP__MPI_COLL_GOTO(comm, rc, out, Reduce, s, r, (int)n, a->dtype, a->op, a->root, c);
      }
      if (a->count == 0) break;
    }
    return WSP_OK;
  }
  case WSP_COLL_ALLTOALLV:
  case WSP_COLL_ALLGATHERV:
  case WSP_COLL_REDUCE_SCATTER:
    return wsp__coll_native_v(comm, a);
  default:
    break;
  }
  /* Data movement with per-rank blocks: one block is one element of a
   * type of `block` bytes (a chunked derived type past the int limit, whose
   * extent is still `block`), so MPI's counts stay small whatever the size. */
  if ((rc = wsp__bytes_type(comm, a->block, &b, &ty, &owned))) return rc;
  int me = comm->rank;
  switch (a->coll) {
  case WSP_COLL_GATHER: {
    const void *s = a->sendbuf;
    if (me == a->root && s == (const char *)a->recvbuf + (size_t)me * a->block)
      s = MPI_IN_PLACE;
    WSP__MPI_COLL_GOTO(comm, rc, out, Gather, s, b, ty, a->recvbuf, b, ty, a->root, c);
    break;
  }
  case WSP_COLL_SCATTER: {
    void *r = a->recvbuf;
    if (me == a->root && r == (const char *)a->sendbuf + (size_t)me * a->block)
      r = MPI_IN_PLACE;
    WSP__MPI_COLL_GOTO(comm, rc, out, Scatter, a->sendbuf, b, ty, r, b, ty, a->root, c);
    break;
  }
  case WSP_COLL_ALLGATHER: {
    const void *s = a->sendbuf;
    if (s == (const char *)a->recvbuf + (size_t)me * a->block) s = MPI_IN_PLACE;
    WSP__MPI_COLL_GOTO(comm, rc, out, Allgather, s, b, ty, a->recvbuf, b, ty, c);
    break;
  }
  case WSP_COLL_ALLTOALL:
    WSP__MPI_COLL_GOTO(comm, rc, out, Alltoall, a->sendbuf, b, ty, a->recvbuf, b, ty, c);
    break;
  default:
    rc = wsp__fail(comm, WSP_ERR_INTERNAL, "native: bad collective %d", (int)a->coll);
    break;
  }
out:
  if (owned) MPI_Type_free(&ty);
  return rc;
}
