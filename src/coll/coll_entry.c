/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The public collective calls: argument checks, in-place resolution, and
 * the byte view of data-movement buffers.
 *
 * Every check here happens before anything is sent. Checks that depend on
 * arguments every rank shares (count, type size, root, op) fail on every
 * rank alike. Like MPI, a program that passes different counts or roots on
 * different ranks is erroneous; wirespeed spends a message per call to
 * detect that only when asked (cfg.check, WSP_CHECK=1: check.c).
 *
 * Data movement (bcast, gather, scatter, allgather, alltoall) runs on bytes:
 * a buffer whose type is dense (size == extent, no holes, lower bound 0) is
 * used as it is; any other type is packed into a temporary buffer with
 * MPI_Pack and unpacked after the collective. Both ends of a message agree
 * on its length because MPI requires equal type signatures.
 */
#include "coll_internal.h"

#include <limits.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>

/* ---- types ---- */
typedef struct wsp__tinfo {
  size_t size;
  MPI_Aint lb, extent, true_lb, true_extent;
  int dense;
} wsp__tinfo_t;

/* A type whose bytes are its elements in order: predefined, or duplicates
 * and contiguous runs of such a type (checked through the type's envelope).
 * Size == extent is not enough: an indexed type may store its elements out
 * of order in a gap-free span, and MPI moves data in element order. */
static int wsp__type_in_order(MPI_Datatype t, int depth) {
  int ni, na, nt, comb;
  if (depth > 16 || MPI_Type_get_envelope(t, &ni, &na, &nt, &comb) != MPI_SUCCESS)
    return 0;
  if (comb == MPI_COMBINER_NAMED) return 1;
  if ((comb != MPI_COMBINER_DUP && comb != MPI_COMBINER_CONTIGUOUS) || nt != 1 ||
      ni > 1 || na > 0)
    return 0;
  int ints[1];
  MPI_Aint addrs[1];
  MPI_Datatype inner;
  if (MPI_Type_get_contents(t, ni, na, nt, ints, addrs, &inner) != MPI_SUCCESS)
    return 0;
  int ok = wsp__type_in_order(inner, depth + 1);
  int ic, ia, it, icomb;
  if (MPI_Type_get_envelope(inner, &ic, &ia, &it, &icomb) == MPI_SUCCESS &&
      icomb != MPI_COMBINER_NAMED)
    MPI_Type_free(&inner);
  return ok;
}

static int wsp__type_info(wsp_comm_t *comm, const char *fn, const char *arg,
                          MPI_Datatype t, wsp__tinfo_t *ti) {
  if (t == MPI_DATATYPE_NULL)
    return wsp__fail(comm, WSP_ERR_ARG, "%s: %s is MPI_DATATYPE_NULL", fn, arg);
  int size = 0;
  if (MPI_Type_size(t, &size) != MPI_SUCCESS || size < 0 ||
      MPI_Type_get_extent(t, &ti->lb, &ti->extent) != MPI_SUCCESS ||
      MPI_Type_get_true_extent(t, &ti->true_lb, &ti->true_extent) !=
          MPI_SUCCESS)
    return wsp__fail(comm, WSP_ERR_ARG, "%s: %s is not a valid datatype", fn,
                     arg);
  ti->size = (size_t)size;
  /* Any other type is packed (data movement) or left to the MPI library
   * (reductions with a non-positive extent): no rank ever refuses a type on
   * its own, which would leave the other ranks' messages behind. */
  ti->dense = (MPI_Aint)ti->size == ti->extent && ti->lb == 0 &&
              ti->true_lb == 0 && ti->true_extent == ti->extent &&
              wsp__type_in_order(t, 0);
  return WSP_OK;
}

/* count * size must fit a size_t and an MPI_Aint. */
static int wsp__bytes_of(wsp_comm_t *comm, const char *fn, const char *arg,
                         size_t count, const wsp__tinfo_t *ti, int p,
                         size_t *bytes) {
  size_t lim = (size_t)PTRDIFF_MAX / (size_t)p;
  size_t ext = ti->extent > 0 ? (size_t)ti->extent
                              : ti->extent < 0 ? (size_t)(-ti->extent) : 1;
  if (count > lim / (ti->size ? ti->size : 1) || count > lim / ext)
    return wsp__fail(comm, WSP_ERR_ARG,
                     "%s: %s = %zu is too large (the buffer would exceed the "
                     "address space)",
                     fn, arg, count);
  *bytes = count * ti->size;
  return WSP_OK;
}

static int wsp__check_comm(wsp_comm_t *comm, const char *fn) {
  if (comm == NULL) return wsp__fail(NULL, WSP_ERR_ARG, "%s: comm is NULL", fn);
  return wsp__usable(comm, fn);
}

static int wsp__check_root(wsp_comm_t *comm, const char *fn, int root) {
  if (root < 0 || root >= comm->size)
    return wsp__fail(comm, WSP_ERR_ARG, "%s: root = %d is out of range [0, %d)",
                     fn, root, comm->size);
  return WSP_OK;
}

/* NULL is a buffer when the type carries absolute addresses (MPI_BOTTOM,
 * which is NULL in Open MPI and MPICH, with a type built from
 * MPI_Get_address): the MPI's own rule refuses it only where the data
 * would start at address 0, a type of nonzero size whose true lower bound
 * is 0 (every predefined type). A legal call is then never refused on one
 * rank alone, where the root alone passes MPI_BOTTOM. */
static int wsp__check_buf(wsp_comm_t *comm, const char *fn, const char *arg,
                          const void *buf, size_t count, const wsp__tinfo_t *ti) {
  if (buf == NULL && count > 0 && ti->size > 0 && ti->true_lb == 0)
    return wsp__fail(comm, WSP_ERR_ARG,
                     "%s: %s is NULL with a count of %zu of a type that starts at its "
                     "buffer (a NULL buffer takes a type of absolute addresses)",
                     fn, arg, count);
  return WSP_OK;
}

/* ---- byte views of typed buffers ---- */
typedef struct wsp__view {
  char *ptr;   /* bytes the algorithm uses */
  void *mem;   /* temporary to free (NULL: ptr is the user's buffer) */
  size_t bytes;
} wsp__view_t;

/* MPI_Pack / MPI_Unpack of count elements in pieces whose byte length fits
 * an int; checks that the packed form is exactly count*size bytes (it is in
 * every homogeneous MPI; anything else is reported, not guessed). */
static int wsp__pack(wsp_comm_t *comm, const void *buf, size_t count,
                     MPI_Datatype t, const wsp__tinfo_t *ti, char *out,
                     int unpack) {
  if (ti->size == 0 || count == 0) return WSP_OK;
  size_t per = (size_t)INT_MAX / ti->size;
  if (per == 0)
    return wsp__fail(comm, WSP_ERR_UNSUPPORTED, "datatype larger than INT_MAX");
  for (size_t off = 0; off < count; off += per) {
    size_t n = count - off < per ? count - off : per;
    char *ubuf = (char *)buf + (ptrdiff_t)off * ti->extent;
    char *pbuf = out + off * ti->size;
    int pos = 0, len = (int)(n * ti->size), ucount = (int)n;
    MPI_Datatype ut = t, shifted = MPI_DATATYPE_NULL;
    int mrc = MPI_SUCCESS;
    if (ubuf == NULL) {
      /* MPI_BOTTOM (wsp__check_buf): MPICH's MPI_Pack and MPI_Unpack refuse
       * a NULL buffer whatever the type. The same bytes are the n elements
       * moved down by the type's true lower bound, at that address. */
      MPI_Aint disp = -ti->true_lb;
      mrc = MPI_Type_create_struct(1, &ucount, &disp, &t, &shifted);
      if (mrc == MPI_SUCCESS) mrc = MPI_Type_commit(&shifted);
      ubuf = (char *)(intptr_t)ti->true_lb;
      ut = shifted;
      ucount = 1;
    }
    if (mrc == MPI_SUCCESS)
      mrc = unpack ? MPI_Unpack(pbuf, len, &pos, ubuf, ucount, ut, comm->mpi)
                   : MPI_Pack(ubuf, ucount, ut, pbuf, len, &pos, comm->mpi);
    if (shifted != MPI_DATATYPE_NULL) MPI_Type_free(&shifted);
    if (mrc != MPI_SUCCESS)
      return wsp__mpi_fail(comm, mrc, unpack ? "MPI_Unpack" : "MPI_Pack",
                           WSP__WHERE);
    if (pos != len)
      return wsp__fail(comm, WSP_ERR_UNSUPPORTED,
                       "MPI_%s used %d bytes for %d bytes of data; packed "
                       "data with headers is not supported",
                       unpack ? "Unpack" : "Pack", pos, len);
  }
  return WSP_OK;
}

/* A view of count elements at buf. `in`: the data is input (packed now
 * when the type is not dense). */
static int wsp__view(wsp_comm_t *comm, const void *buf, size_t count,
                     MPI_Datatype t, const wsp__tinfo_t *ti, int in,
                     wsp__view_t *v) {
  v->bytes = count * ti->size;
  v->mem = NULL;
  if (ti->dense || v->bytes == 0) {
    v->ptr = (char *)buf;
    return WSP_OK;
  }
  v->mem = malloc(v->bytes);
  if (v->mem == NULL)
    return wsp__fail(comm, WSP_ERR_NOMEM, "out of memory for %zu bytes",
                     v->bytes);
  v->ptr = v->mem;
  if (in) {
    int rc = wsp__pack(comm, buf, count, t, ti, v->ptr, 0);
    if (rc) {
      free(v->mem);
      v->mem = NULL;
      return rc;
    }
  }
  return WSP_OK;
}

/* Ends a view: unpacks output into the user's buffer, frees the temp. */
static int wsp__view_end(wsp_comm_t *comm, wsp__view_t *v, void *buf,
                         size_t count, MPI_Datatype t, const wsp__tinfo_t *ti,
                         int out, int rc) {
  if (v->mem) {
    if (rc == WSP_OK && out) rc = wsp__pack(comm, buf, count, t, ti, v->ptr, 1);
    free(v->mem);
    v->mem = NULL;
  }
  return rc;
}

/* ---- bcast ---- */
int wsp_bcast(wsp_comm_t *comm, void *buf, size_t count, MPI_Datatype type,
              int root) {
  static const char fn[] = "wsp_bcast";
  int rc;
  wsp__tinfo_t ti;
  size_t bytes = 0;
  if ((rc = wsp__check_comm(comm, fn))) return rc;
  if (comm->cfg.check) {
    wsp__check_args_t c = {.coll = WSP_COLL_BCAST, .root = root, .op = MPI_OP_NULL,
                           .count = count, .type = type};
    if ((rc = wsp__coll_check(comm, fn, &c))) return rc;
  }
  if ((rc = wsp__check_root(comm, fn, root)) ||
      (rc = wsp__type_info(comm, fn, "type", type, &ti)) ||
      (rc = wsp__bytes_of(comm, fn, "count", count, &ti, 1, &bytes)) ||
      (rc = wsp__check_buf(comm, fn, "buf", buf, count, &ti)))
    return rc;
  if (buf == MPI_IN_PLACE)
    return wsp__fail(comm, WSP_ERR_ARG, "%s: buf is MPI_IN_PLACE", fn);
  if (comm->size == 1 || bytes == 0) return WSP_OK;
  wsp__view_t v;
  if ((rc = wsp__view(comm, buf, count, type, &ti, comm->rank == root, &v)))
    return rc;
  wsp__coll_args_t a = {.coll = WSP_COLL_BCAST, .recvbuf = v.ptr,
                        .sendbuf = v.ptr, .block = bytes, .root = root,
                        .count = bytes, .dtype = MPI_BYTE, .type_size = 1,
                        .extent = 1, .true_extent = 1, .op = MPI_OP_NULL,
                        .commutative = 1};
  wsp__coll_shape_t s = {.p = comm->size, .bytes = bytes, .count = bytes,
                         .commutative = 1, .dense = 1, .root = root};
  rc = wsp__coll_run(comm, &a, &s);
  return wsp__view_end(comm, &v, buf, count, type, &ti, comm->rank != root, rc);
}

/* ---- reduce and allreduce ---- */
static int wsp__op_info(wsp_comm_t *comm, const char *fn, MPI_Op op,
                        int *commute) {
  if (op == MPI_OP_NULL)
    return wsp__fail(comm, WSP_ERR_ARG, "%s: op is MPI_OP_NULL", fn);
  int c = 0;
  if (MPI_Op_commutative(op, &c) != MPI_SUCCESS)
    return wsp__fail(comm, WSP_ERR_ARG, "%s: op is not a valid MPI_Op", fn);
  *commute = c != 0;
  return WSP_OK;
}

static int wsp__reduction(wsp_comm_t *comm, const char *fn, wsp_coll_t coll,
                          const void *sendbuf, void *recvbuf, size_t count,
                          MPI_Datatype type, MPI_Op op, int root) {
  int rc, commute = 0;
  wsp__tinfo_t ti;
  size_t bytes = 0;
  int is_root = coll == WSP_COLL_ALLREDUCE || comm->rank == root;
  if (comm->cfg.check) {
    wsp__check_args_t c = {.coll = coll, .root = coll == WSP_COLL_ALLREDUCE ? -1 : root,
                           .op = op, .count = count, .type = type};
    if ((rc = wsp__coll_check(comm, fn, &c))) return rc;
  }
  if ((rc = wsp__type_info(comm, fn, "type", type, &ti)) ||
      (rc = wsp__bytes_of(comm, fn, "count", count, &ti, 1, &bytes)) ||
      (rc = wsp__op_info(comm, fn, op, &commute)) ||
      (rc = wsp__check_buf(comm, fn, "sendbuf", sendbuf, count, &ti)))
    return rc;
  if (is_root && (rc = wsp__check_buf(comm, fn, "recvbuf", recvbuf, count, &ti)))
    return rc;
  if (recvbuf == MPI_IN_PLACE)
    return wsp__fail(comm, WSP_ERR_ARG, "%s: recvbuf is MPI_IN_PLACE", fn);
  if (sendbuf == MPI_IN_PLACE && !is_root)
    return wsp__fail(comm, WSP_ERR_ARG,
                     "%s: sendbuf is MPI_IN_PLACE on rank %d, which is not "
                     "the root",
                     fn, comm->rank);
  if (count == 0) return WSP_OK;
  if (ti.size > 0 && ti.extent <= 0) {
    /* The algorithms address elements at positive strides. A reduction's
     * type is the same on every rank (MPI requires it), so every rank
     * takes this path: the MPI library's own collective, user's buffers. */
    if (count > INT_MAX)
      return wsp__fail(comm, WSP_ERR_UNSUPPORTED,
                       "%s: more than INT_MAX elements of a type with extent %ld",
                       fn, (long)ti.extent);
    if (coll == WSP_COLL_ALLREDUCE)
      WSP__MPI_COLL_GOTO(comm, rc, out, Allreduce, sendbuf, recvbuf, (int)count, type, op,
                         comm->mpi);
    else
      WSP__MPI_COLL_GOTO(comm, rc, out, Reduce, sendbuf, recvbuf, (int)count, type, op, root,
                         comm->mpi);
    return WSP_OK;
  out:
    return rc;
  }
  if (sendbuf == MPI_IN_PLACE) sendbuf = recvbuf;
  wsp__coll_args_t a = {.coll = coll, .sendbuf = sendbuf,
                        .recvbuf = is_root ? recvbuf : NULL, .count = count,
                        .dtype = type, .op = op, .commutative = commute,
                        .type_size = ti.size, .extent = ti.extent,
                        .true_lb = ti.true_lb, .true_extent = ti.true_extent,
                        .block = bytes, .root = root};
  if (comm->size == 1)
    return is_root ? wsp__copy_typed(comm, &a, sendbuf, recvbuf, count)
                   : WSP_OK;
  /* Dense for the node-aware algorithms, which copy a result as bytes: no
   * holes (element order does not matter for a byte copy). */
  int dense = (MPI_Aint)ti.size == ti.extent && ti.true_lb == 0 &&
              ti.true_extent == ti.extent;
  wsp__coll_shape_t s = {.p = comm->size, .bytes = bytes, .count = count,
                         .commutative = commute, .dense = dense, .root = root};
  return wsp__coll_run(comm, &a, &s);
}

/* With cfg.check the root is checked by wsp__coll_check, on every rank
 * together: a rank refusing its root alone would leave the others waiting
 * in the check. */
int wsp_reduce(wsp_comm_t *comm, const void *sendbuf, void *recvbuf,
               size_t count, MPI_Datatype type, MPI_Op op, int root) {
  int rc;
  if ((rc = wsp__check_comm(comm, "wsp_reduce")) ||
      (!comm->cfg.check && (rc = wsp__check_root(comm, "wsp_reduce", root))))
    return rc;
  return wsp__reduction(comm, "wsp_reduce", WSP_COLL_REDUCE, sendbuf, recvbuf,
                        count, type, op, root);
}

int wsp_allreduce(wsp_comm_t *comm, const void *sendbuf, void *recvbuf,
                  size_t count, MPI_Datatype type, MPI_Op op) {
  int rc;
  if ((rc = wsp__check_comm(comm, "wsp_allreduce"))) return rc;
  return wsp__reduction(comm, "wsp_allreduce", WSP_COLL_ALLREDUCE, sendbuf,
                        recvbuf, count, type, op, 0);
}

/* ---- gather, scatter, allgather, alltoall: one function handles the four;
 * which side holds p blocks and which arguments are significant on this
 * rank follow from the collective and the root. ---- */
typedef struct wsp__mv {
  const char *fn;
  wsp_coll_t coll;
} wsp__mv_t;

static int wsp__movement(wsp_comm_t *comm, const wsp__mv_t *m,
                         const void *sendbuf, size_t scount, MPI_Datatype stype,
                         void *recvbuf, size_t rcount, MPI_Datatype rtype,
                         int root) {
  const char *fn = m->fn;
  int rc, p = comm->size, me = comm->rank;
  int is_root = me == root;
  wsp_coll_t c = m->coll;
  /* Which side holds p blocks, and which arguments are significant here. */
  int send_p = c == WSP_COLL_SCATTER || c == WSP_COLL_ALLTOALL;
  int recv_p = c == WSP_COLL_GATHER || c == WSP_COLL_ALLGATHER ||
               c == WSP_COLL_ALLTOALL;
  int send_sig = c != WSP_COLL_SCATTER || is_root;
  int recv_sig = c != WSP_COLL_GATHER || is_root;
  int in_place_send = sendbuf == MPI_IN_PLACE;
  int in_place_recv = recvbuf == MPI_IN_PLACE;
  wsp__tinfo_t sti = {0}, rti = {0};
  size_t sbytes = 0, rbytes = 0;

  if (comm->cfg.check) {
    /* One block as this rank sees it: the side significant here, the
     * receive side where the send side is in place or not significant. */
    int use_recv = c == WSP_COLL_SCATTER ? !(is_root && in_place_recv)
                                         : in_place_send || !send_sig;
    wsp__check_args_t k = {.coll = c, .op = MPI_OP_NULL,
                           .root = c == WSP_COLL_GATHER || c == WSP_COLL_SCATTER ? root : -1,
                           .count = use_recv ? rcount : scount,
                           .type = use_recv ? rtype : stype};
    if ((rc = wsp__coll_check(comm, fn, &k))) return rc;
  }

  /* MPI_IN_PLACE where MPI allows it: gather/allgather/alltoall sendbuf
   * (gather: root only), scatter recvbuf (root only). */
  if (in_place_recv && !(c == WSP_COLL_SCATTER && is_root))
    return wsp__fail(comm, WSP_ERR_ARG, "%s: recvbuf is MPI_IN_PLACE%s", fn,
                     c == WSP_COLL_SCATTER ? " on a rank other than the root"
                                           : "");
  if (in_place_send && (c == WSP_COLL_SCATTER || (c == WSP_COLL_GATHER && !is_root)))
    return wsp__fail(comm, WSP_ERR_ARG, "%s: sendbuf is MPI_IN_PLACE%s", fn,
                     c == WSP_COLL_GATHER ? " on a rank other than the root"
                                          : "");
  if (send_sig && !in_place_send) {
    if ((rc = wsp__type_info(comm, fn, "sendtype", stype, &sti)) ||
        (rc = wsp__bytes_of(comm, fn, "sendcount", scount, &sti, send_p ? p : 1,
                            &sbytes)) ||
        (rc = wsp__check_buf(comm, fn, "sendbuf", sendbuf, scount, &sti)))
      return rc;
  }
  if (recv_sig && !in_place_recv) {
    if ((rc = wsp__type_info(comm, fn, "recvtype", rtype, &rti)) ||
        (rc = wsp__bytes_of(comm, fn, "recvcount", rcount, &rti, recv_p ? p : 1,
                            &rbytes)) ||
        (rc = wsp__check_buf(comm, fn, "recvbuf", recvbuf, rcount, &rti)))
      return rc;
  }
  /* The block size every rank agrees on (MPI requires equal signatures). */
  size_t block;
  if (c == WSP_COLL_GATHER) block = in_place_send ? rbytes : sbytes;
  else if (c == WSP_COLL_SCATTER) block = in_place_recv ? sbytes : rbytes;
  else block = in_place_send ? rbytes : sbytes;
  if (!in_place_send && !in_place_recv && send_sig && recv_sig &&
      sbytes != rbytes)
    return wsp__fail(comm, WSP_ERR_ARG,
                     "%s: sendcount x size(sendtype) = %zu bytes but "
                     "recvcount x size(recvtype) = %zu bytes",
                     fn, sbytes, rbytes);
  if (block == 0) return WSP_OK;

  /* Views: the p-block side covers p*count elements. */
  size_t scnt = send_p ? scount * (size_t)p : scount;
  size_t rcnt = recv_p ? rcount * (size_t)p : rcount;
  wsp__view_t sv = {0}, rv = {0};
  int have_sv = 0, have_rv = 0;
  void *inplace_copy = NULL;
  if (recv_sig && !in_place_recv) {
    /* alltoall in place reads recvbuf as input too. */
    int in = c == WSP_COLL_ALLTOALL && in_place_send;
    /* allgather/gather in place: the own block is input inside recvbuf. */
    if (in_place_send && c != WSP_COLL_ALLTOALL) in = 1;
    if ((rc = wsp__view(comm, recvbuf, rcnt, rtype, &rti, in, &rv))) goto out;
    have_rv = 1;
  }
  if (send_sig && !in_place_send) {
    if ((rc = wsp__view(comm, sendbuf, scnt, stype, &sti, 1, &sv))) goto out;
    have_sv = 1;
  }
  wsp__coll_args_t a = {.coll = c, .block = block, .root = root,
                        .dtype = MPI_BYTE, .type_size = 1, .extent = 1,
                        .true_extent = 1, .op = MPI_OP_NULL, .commutative = 1};
  a.recvbuf = have_rv ? rv.ptr : NULL;
  a.sendbuf = have_sv ? sv.ptr : NULL;
  if (in_place_send) {
    if (c == WSP_COLL_ALLTOALL) {
      /* The algorithms never overlap input and output: copy the input. */
      inplace_copy = malloc(block * (size_t)p);
      if (inplace_copy == NULL) {
        rc = wsp__fail(comm, WSP_ERR_NOMEM, "%s: out of memory", fn);
        goto out;
      }
      memcpy(inplace_copy, rv.ptr, block * (size_t)p);
      a.sendbuf = inplace_copy;
    } else {
      a.sendbuf = rv.ptr + (size_t)(c == WSP_COLL_GATHER ? root : me) * block;
    }
  }
  if (in_place_recv) /* scatter at the root */
    a.recvbuf = sv.ptr + (size_t)root * block;
  if (p == 1) {
    /* One rank: the own block moves from input to output. */
    wsp__copy_bytes(a.recvbuf, a.sendbuf, block);
    rc = WSP_OK;
  } else {
    wsp__coll_shape_t s = {.p = p, .bytes = block, .count = block,
                           .commutative = 1, .dense = 1, .root = root};
    rc = wsp__coll_run(comm, &a, &s);
  }
out:
  free(inplace_copy);
  if (have_sv) rc = wsp__view_end(comm, &sv, (void *)sendbuf, scnt, stype, &sti, 0, rc);
  if (have_rv) rc = wsp__view_end(comm, &rv, recvbuf, rcnt, rtype, &rti, 1, rc);
  return rc;
}

int wsp_gather(wsp_comm_t *comm, const void *sendbuf, size_t sendcount,
               MPI_Datatype sendtype, void *recvbuf, size_t recvcount,
               MPI_Datatype recvtype, int root) {
  static const wsp__mv_t m = {"wsp_gather", WSP_COLL_GATHER};
  int rc;
  if ((rc = wsp__check_comm(comm, m.fn)) ||
      (!comm->cfg.check && (rc = wsp__check_root(comm, m.fn, root))))
    return rc;
  return wsp__movement(comm, &m, sendbuf, sendcount, sendtype, recvbuf,
                       recvcount, recvtype, root);
}

int wsp_scatter(wsp_comm_t *comm, const void *sendbuf, size_t sendcount,
                MPI_Datatype sendtype, void *recvbuf, size_t recvcount,
                MPI_Datatype recvtype, int root) {
  static const wsp__mv_t m = {"wsp_scatter", WSP_COLL_SCATTER};
  int rc;
  if ((rc = wsp__check_comm(comm, m.fn)) ||
      (!comm->cfg.check && (rc = wsp__check_root(comm, m.fn, root))))
    return rc;
  return wsp__movement(comm, &m, sendbuf, sendcount, sendtype, recvbuf,
                       recvcount, recvtype, root);
}

int wsp_allgather(wsp_comm_t *comm, const void *sendbuf, size_t sendcount,
                  MPI_Datatype sendtype, void *recvbuf, size_t recvcount,
                  MPI_Datatype recvtype) {
  static const wsp__mv_t m = {"wsp_allgather", WSP_COLL_ALLGATHER};
  int rc;
  if ((rc = wsp__check_comm(comm, m.fn))) return rc;
  return wsp__movement(comm, &m, sendbuf, sendcount, sendtype, recvbuf,
                       recvcount, recvtype, 0);
}

int wsp_alltoall(wsp_comm_t *comm, const void *sendbuf, size_t sendcount,
                 MPI_Datatype sendtype, void *recvbuf, size_t recvcount,
                 MPI_Datatype recvtype) {
  static const wsp__mv_t m = {"wsp_alltoall", WSP_COLL_ALLTOALL};
  int rc;
  if ((rc = wsp__check_comm(comm, m.fn))) return rc;
  return wsp__movement(comm, &m, sendbuf, sendcount, sendtype, recvbuf,
                       recvcount, recvtype, 0);
}

/* ---- the vector forms: alltoallv, allgatherv, reduce_scatter ----
 * Each rank checks its own arguments first: here, unlike above, what one
 * rank passes (its counts, its layout) is not what the others pass, so one
 * rank may refuse alone. With cfg.check the refusal is then agreed (every
 * rank returns an error naming the rank that refused); without it, as in
 * MPI, the others go on and end at the time limit. */

/* A byte view of p blocks of a typed buffer: block i is counts[i] elements
 * at displs[i] extents. A dense type is used where it is; any other is
 * packed, the blocks one after another. cnt and dsp are the blocks' bytes
 * and byte offsets in ptr. */
typedef struct wsp__vview {
  char *ptr;
  void *mem;
  size_t *cnt, *dsp;
} wsp__vview_t;

static int wsp__vview(wsp_comm_t *comm, const void *buf, const size_t *counts, const size_t *displs,
                      MPI_Datatype t, const wsp__tinfo_t *ti, int in, wsp__vview_t *v) {
  int p = comm->size;
  v->mem = NULL;
  v->cnt = malloc(2 * (size_t)p * sizeof *v->cnt);
  if (v->cnt == NULL) return wsp__fail(comm, WSP_ERR_NOMEM, "out of memory for %d counts", p);
  v->dsp = v->cnt + p;
  size_t total = 0;
  for (int i = 0; i < p; i++) {
    v->cnt[i] = counts[i] * ti->size;
    v->dsp[i] = ti->dense ? displs[i] * ti->size : total;
    total += v->cnt[i];
  }
  v->ptr = (char *)buf;
  if (ti->dense || total == 0) return WSP_OK;
  v->ptr = v->mem = malloc(total);
  if (v->mem == NULL) {
    free(v->cnt);
    v->cnt = NULL;
    return wsp__fail(comm, WSP_ERR_NOMEM, "out of memory for %zu bytes", total);
  }
  for (int i = 0; i < p && in; i++) {
    int rc = wsp__pack(comm, (const char *)buf + (ptrdiff_t)displs[i] * ti->extent, counts[i], t,
                       ti, v->ptr + v->dsp[i], 0);
    if (rc) {
      free(v->mem), free(v->cnt);
      v->mem = NULL, v->cnt = NULL;
      return rc;
    }
  }
  return WSP_OK;
}

static int wsp__vview_end(wsp_comm_t *comm, wsp__vview_t *v, void *buf, const size_t *counts,
                          const size_t *displs, MPI_Datatype t, const wsp__tinfo_t *ti, int out,
                          int rc) {
  if (v->mem) {
    for (int i = 0; i < comm->size && rc == WSP_OK && out; i++)
      rc = wsp__pack(comm, (char *)buf + (ptrdiff_t)displs[i] * ti->extent, counts[i], t, ti,
                     v->ptr + v->dsp[i], 1);
    free(v->mem);
  }
  free(v->cnt);
  v->mem = NULL, v->cnt = NULL;
  return rc;
}

/* The p blocks of a vector layout: each count's bytes fit (as in
 * wsp__bytes_of), each block ends inside the address space, and no two
 * non-empty blocks share a byte of memory (MPI calls an overlapping
 * receive layout erroneous; wirespeed refuses it rather than write one
 * block over another). *elems is the sum of the counts. */
typedef struct {
  size_t lo, hi;
  int i;
} wsp__span_t;
static int wsp__span_cmp(const void *a, const void *b) {
  const wsp__span_t *x = a, *y = b;
  return x->lo < y->lo ? -1 : x->lo > y->lo ? 1 : x->i - y->i;
}

static int wsp__check_layout(wsp_comm_t *comm, const char *fn, const char *cname, const char *dname,
                             const size_t *counts, const size_t *displs, const wsp__tinfo_t *ti,
                             int check_overlap, size_t *elems) {
  int p = comm->size;
  if (counts == NULL) return wsp__fail(comm, WSP_ERR_ARG, "%s: %s is NULL", fn, cname);
  if (displs == NULL) return wsp__fail(comm, WSP_ERR_ARG, "%s: %s is NULL", fn, dname);
  size_t ext = ti->extent > 0 ? (size_t)ti->extent : 1, sum = 0, bytes = 0;
  /* Blocks are spans only for a type whose elements lie inside their
   * extent: the elements of one whose true extent reaches past it (a
   * matrix column resized to one element) interleave with the next
   * block's without sharing a byte, which MPI allows. */
  if (ti->extent <= 0 || ti->true_lb < 0 || ti->true_lb + ti->true_extent > ti->extent)
    check_overlap = 0;
  wsp__span_t *sp = check_overlap ? malloc((size_t)p * sizeof *sp) : NULL;
  int n = 0, rc = WSP_OK;
  if (check_overlap && sp == NULL)
    return wsp__fail(comm, WSP_ERR_NOMEM, "%s: out of memory for %d blocks", fn, p);
  for (int i = 0; i < p && rc == WSP_OK; i++) {
    if ((rc = wsp__bytes_of(comm, fn, cname, counts[i], ti, 1, &bytes))) break;
    if (counts[i] > 0 && (displs[i] > (size_t)PTRDIFF_MAX / ext ||
                          counts[i] > ((size_t)PTRDIFF_MAX - displs[i] * ext) / ext)) {
      rc = wsp__fail(comm, WSP_ERR_ARG,
                     "%s: %s[%d] = %zu with %s[%d] = %zu ends past the address space", fn, dname, i,
                     displs[i], cname, i, counts[i]);
      break;
    }
    if (sum + counts[i] < sum || sum + counts[i] > (size_t)PTRDIFF_MAX / ext) {
      rc = wsp__fail(comm, WSP_ERR_ARG, "%s: the sum of %s is too large", fn, cname);
      break;
    }
    sum += counts[i];
    if (check_overlap && counts[i] > 0 && ti->size > 0) {
      /* The bytes of block i: from its first element's true lower bound
       * to its last element's true upper bound. */
      size_t lo = displs[i] * ext + (size_t)ti->true_lb;
      sp[n++] = (wsp__span_t){lo, lo + (counts[i] - 1) * ext + (size_t)ti->true_extent, i};
    }
  }
  if (rc == WSP_OK && check_overlap) {
    qsort(sp, (size_t)n, sizeof *sp, wsp__span_cmp);
    for (int k = 1; k < n; k++)
      if (sp[k].lo < sp[k - 1].hi) {
        rc = wsp__fail(comm, WSP_ERR_ARG,
                       "%s: the receive blocks of ranks %d and %d overlap (%s[%d] = %zu, "
                       "%s[%d] = %zu)",
                       fn, sp[k - 1].i, sp[k].i, dname, sp[k - 1].i, displs[sp[k - 1].i], dname,
                       sp[k].i, displs[sp[k].i]);
        break;
      }
  }
  free(sp);
  if (rc == WSP_OK) *elems = sum;
  return rc;
}

/* The receive side of alltoallv and allgatherv: a buffer, not in place;
 * a valid type; a layout of p blocks that fits and does not overlap. */
static int wsp__check_vrecv(wsp_comm_t *comm, const char *fn, const void *recvbuf,
                            const size_t *counts, const char *dname, const size_t *displs,
                            MPI_Datatype type, wsp__tinfo_t *ti, size_t *elems) {
  int rc;
  if (recvbuf == MPI_IN_PLACE)
    return wsp__fail(comm, WSP_ERR_ARG, "%s: recvbuf is MPI_IN_PLACE", fn);
  if ((rc = wsp__type_info(comm, fn, "recvtype", type, ti)) ||
      (rc = wsp__check_layout(comm, fn, "recvcounts", dname, counts, displs, ti, 1, elems)))
    return rc;
  return wsp__check_buf(comm, fn, "recvbuf", recvbuf, *elems, ti);
}

/* With cfg.check, every rank learns whether one refused (see above);
 * returns this rank's own refusal first. */
static int wsp__v_agree(wsp_comm_t *comm, const char *fn, wsp_coll_t coll, size_t count,
                        MPI_Datatype type, MPI_Op op, int rc) {
  if (!comm->cfg.check) return rc;
  char why[512] = "";
  if (rc != WSP_OK) snprintf(why, sizeof why, "%s", wsp_last_error());
  wsp__check_args_t c = {
      .coll = coll, .root = -1, .op = op, .count = count, .type = type, .refused = rc != WSP_OK};
  int crc = wsp__coll_check(comm, fn, &c);
  /* The refusing rank keeps its own reason, which the check's message
   * about it would have replaced. */
  return rc != WSP_OK ? wsp__fail(comm, rc, "%s", why) : crc;
}

int wsp_alltoallv(wsp_comm_t *comm, const void *sendbuf, const size_t sendcounts[],
                  const size_t sdispls[], MPI_Datatype sendtype, void *recvbuf,
                  const size_t recvcounts[], const size_t rdispls[], MPI_Datatype recvtype) {
  static const char fn[] = "wsp_alltoallv";
  int rc, p, me, in_place = sendbuf == MPI_IN_PLACE;
  wsp__tinfo_t sti = {0}, rti = {0};
  size_t selems = 0, relems = 0;
  if ((rc = wsp__check_comm(comm, fn))) return rc;
  p = comm->size, me = comm->rank;
  rc = wsp__check_vrecv(comm, fn, recvbuf, recvcounts, "rdispls", rdispls, recvtype, &rti, &relems);
  if (rc == WSP_OK && !in_place) {
    if ((rc = wsp__type_info(comm, fn, "sendtype", sendtype, &sti)) == WSP_OK &&
        (rc = wsp__check_layout(comm, fn, "sendcounts", "sdispls", sendcounts, sdispls, &sti, 0,
                                &selems)) == WSP_OK)
      rc = wsp__check_buf(comm, fn, "sendbuf", sendbuf, selems, &sti);
    if (rc == WSP_OK && sendcounts[me] * sti.size != recvcounts[me] * rti.size)
      rc = wsp__fail(comm, WSP_ERR_ARG,
                     "%s: the block to self is %zu bytes sent but %zu bytes received "
                     "(sendcounts[%d] x size(sendtype), recvcounts[%d] x size(recvtype))",
                     fn, sendcounts[me] * sti.size, recvcounts[me] * rti.size, me, me);
  }
  /* Nothing every rank shares to compare but the call itself. */
  if ((rc = wsp__v_agree(comm, fn, WSP_COLL_ALLTOALLV, 0, MPI_BYTE, MPI_OP_NULL, rc))) return rc;
  if (in_place) { /* the receive layout is the send layout */
    sendcounts = recvcounts, sdispls = rdispls, sendtype = recvtype, sti = rti;
    selems = relems;
  }
  wsp__vview_t sv = {0}, rv = {0};
  /* In place, the input is read from a packed copy of recvbuf: the
   * algorithms never overlap input and output. */
  if ((rc = wsp__vview(comm, recvbuf, recvcounts, rdispls, recvtype, &rti, 0, &rv))) return rc;
  wsp__tinfo_t copy_ti = sti;
  if (in_place) copy_ti.dense = 0; /* force a packed copy */
  if ((rc = wsp__vview(comm, in_place ? (const void *)recvbuf : sendbuf, sendcounts, sdispls,
                       sendtype, &copy_ti, 1, &sv))) {
    wsp__vview_end(comm, &rv, recvbuf, recvcounts, rdispls, recvtype, &rti, 0, rc);
    return rc;
  }
  size_t out = 0, in = 0;
  int peers = 0;
  for (int i = 0; i < p; i++)
    if (i != me) out += sv.cnt[i], in += rv.cnt[i], peers += sv.cnt[i] > 0;
  wsp__coll_args_t a = {.coll = WSP_COLL_ALLTOALLV,
                        .sendbuf = sv.ptr,
                        .recvbuf = rv.ptr,
                        .dtype = MPI_BYTE,
                        .type_size = 1,
                        .extent = 1,
                        .true_extent = 1,
                        .op = MPI_OP_NULL,
                        .commutative = 1,
                        .scounts = sv.cnt,
                        .sdispls = sv.dsp,
                        .rcounts = rv.cnt,
                        .rdispls = rv.dsp};
  if (p == 1) {
    wsp__copy_bytes(rv.ptr + rv.dsp[0], sv.ptr + sv.dsp[0], rv.cnt[0]);
  } else {
    wsp__coll_shape_t s = {.p = p,
                           .bytes = (out > in ? out : in) / (size_t)(p - 1),
                           .count = out > in ? out : in,
                           .commutative = 1,
                           .dense = 1,
                           .total = out > in ? out : in,
                           .peers = peers};
    rc = wsp__coll_run(comm, &a, &s);
  }
  rc = wsp__vview_end(comm, &sv, (void *)sendbuf, sendcounts, sdispls, sendtype, &copy_ti, 0, rc);
  return wsp__vview_end(comm, &rv, recvbuf, recvcounts, rdispls, recvtype, &rti, 1, rc);
}

int wsp_allgatherv(wsp_comm_t *comm, const void *sendbuf, size_t sendcount, MPI_Datatype sendtype,
                   void *recvbuf, const size_t recvcounts[], const size_t displs[],
                   MPI_Datatype recvtype) {
  static const char fn[] = "wsp_allgatherv";
  int rc, p, me, in_place = sendbuf == MPI_IN_PLACE;
  wsp__tinfo_t sti = {0}, rti = {0};
  size_t relems = 0, sbytes = 0;
  if ((rc = wsp__check_comm(comm, fn))) return rc;
  p = comm->size, me = comm->rank;
  rc = wsp__check_vrecv(comm, fn, recvbuf, recvcounts, "displs", displs, recvtype, &rti, &relems);
  if (rc == WSP_OK && !in_place) {
    if ((rc = wsp__type_info(comm, fn, "sendtype", sendtype, &sti)) == WSP_OK &&
        (rc = wsp__bytes_of(comm, fn, "sendcount", sendcount, &sti, 1, &sbytes)) == WSP_OK)
      rc = wsp__check_buf(comm, fn, "sendbuf", sendbuf, sendcount, &sti);
    if (rc == WSP_OK && sbytes != recvcounts[me] * rti.size)
      rc = wsp__fail(comm, WSP_ERR_ARG,
                     "%s: sendcount x size(sendtype) = %zu bytes but recvcounts[%d] x "
                     "size(recvtype) = %zu bytes",
                     fn, sbytes, me, recvcounts[me] * rti.size);
  }
  if ((rc = wsp__v_agree(comm, fn, WSP_COLL_ALLGATHERV, rc ? 0 : relems, rc ? MPI_BYTE : recvtype,
                         MPI_OP_NULL, rc)))
    return rc;
  wsp__vview_t rv = {0};
  wsp__view_t sv = {0};
  int have_sv = 0;
  /* In place, the own block is input inside recvbuf. */
  if ((rc = wsp__vview(comm, recvbuf, recvcounts, displs, recvtype, &rti, in_place, &rv)))
    return rc;
  size_t total = 0;
  for (int i = 0; i < p; i++) total += rv.cnt[i];
  const char *own = rv.ptr + rv.dsp[me];
  if (!in_place) {
    if ((rc = wsp__view(comm, sendbuf, sendcount, sendtype, &sti, 1, &sv))) goto out;
    have_sv = 1;
    own = sv.ptr;
  }
  if (total == 0) goto out;
  wsp__coll_args_t a = {.coll = WSP_COLL_ALLGATHERV,
                        .sendbuf = own,
                        .recvbuf = rv.ptr,
                        .dtype = MPI_BYTE,
                        .type_size = 1,
                        .extent = 1,
                        .true_extent = 1,
                        .op = MPI_OP_NULL,
                        .commutative = 1,
                        .rcounts = rv.cnt,
                        .rdispls = rv.dsp};
  if (p == 1) {
    wsp__copy_bytes(rv.ptr + rv.dsp[0], own, rv.cnt[0]);
  } else {
    wsp__coll_shape_t s = {.p = p,
                           .bytes = total / (size_t)p,
                           .count = total,
                           .commutative = 1,
                           .dense = 1,
                           .blocks = rv.cnt,
                           .total = total};
    rc = wsp__coll_run(comm, &a, &s);
  }
out:
  if (have_sv) rc = wsp__view_end(comm, &sv, (void *)sendbuf, sendcount, sendtype, &sti, 0, rc);
  return wsp__vview_end(comm, &rv, recvbuf, recvcounts, displs, recvtype, &rti, 1, rc);
}

/* Both reduce_scatter calls; counts has p entries (block: all equal). */
static int wsp__reduce_scatter(wsp_comm_t *comm, const char *fn, const void *sendbuf, void *recvbuf,
                               const size_t *counts, int block_form, MPI_Datatype type, MPI_Op op) {
  int rc, commute = 0, p = comm->size, me = comm->rank;
  wsp__tinfo_t ti;
  size_t total = 0, bytes = 0;
  rc = recvbuf == MPI_IN_PLACE ? wsp__fail(comm, WSP_ERR_ARG, "%s: recvbuf is MPI_IN_PLACE", fn)
                               : WSP_OK;
  if (rc == WSP_OK) rc = wsp__type_info(comm, fn, "type", type, &ti);
  if (rc == WSP_OK) rc = wsp__op_info(comm, fn, op, &commute);
  for (int i = 0; i < p && rc == WSP_OK; i++) {
    if ((rc = wsp__bytes_of(comm, fn, block_form ? "recvcount" : "recvcounts", counts[i], &ti, 1,
                            &bytes)))
      break;
    if (total + counts[i] < total) {
      rc = wsp__fail(comm, WSP_ERR_ARG, "%s: the sum of recvcounts is too large", fn);
      break;
    }
    total += counts[i];
  }
  if (rc == WSP_OK) rc = wsp__bytes_of(comm, fn, "the sum of recvcounts", total, &ti, 1, &bytes);
  if (rc == WSP_OK && sendbuf != MPI_IN_PLACE)
    rc = wsp__check_buf(comm, fn, "sendbuf", sendbuf, total, &ti);
  if (rc == WSP_OK)
    rc = wsp__check_buf(comm, fn, "recvbuf", recvbuf, sendbuf == MPI_IN_PLACE ? total : counts[me],
                        &ti);
  if ((rc = wsp__v_agree(comm, fn, WSP_COLL_REDUCE_SCATTER, rc ? 0 : total, rc ? MPI_BYTE : type,
                         rc ? MPI_OP_NULL : op, rc)))
    return rc;
  if (total == 0) return WSP_OK;
  int in_place = sendbuf == MPI_IN_PLACE;
  if (ti.size > 0 && ti.extent <= 0) {
    /* As for the other reductions (wsp__reduction): the MPI library's own,
     * on every rank alike. */
    int *ic = malloc((size_t)p * sizeof *ic);
    rc = wsp__agree_alloc(comm, ic == NULL, fn);
    for (int i = 0; i < p && rc == WSP_OK; i++) {
      if (counts[i] > INT_MAX)
        rc = wsp__fail(comm, WSP_ERR_UNSUPPORTED,
                       "%s: more than INT_MAX elements of a type with extent %ld", fn,
                       (long)ti.extent);
      else
        ic[i] = (int)counts[i];
    }
    if (rc == WSP_OK)
      WSP__MPI_COLL_GOTO(comm, rc, native_out, Reduce_scatter, sendbuf, recvbuf, ic, type, op,
                         comm->mpi);
  native_out:
    free(ic);
    return rc;
  }
  size_t *off = malloc(2 * (size_t)p * sizeof *off);
  void *mem = NULL;
  if (off == NULL) return wsp__fail(comm, WSP_ERR_NOMEM, "%s: out of memory", fn);
  size_t *blk = off + p;
  for (int i = 0; i < p; i++) {
    off[i] = i ? off[i - 1] + counts[i - 1] : 0;
    blk[i] = counts[i] * ti.size;
  }
  wsp__coll_args_t a = {.coll = WSP_COLL_REDUCE_SCATTER,
                        .sendbuf = sendbuf,
                        .recvbuf = recvbuf,
                        .count = total,
                        .dtype = type,
                        .op = op,
                        .commutative = commute,
                        .type_size = ti.size,
                        .extent = ti.extent,
                        .true_lb = ti.true_lb,
                        .true_extent = ti.true_extent,
                        .block = counts[me] * ti.size,
                        .rcounts = counts,
                        .rdispls = off,
                        .block_form = block_form};
  if (in_place) {
    /* The input is recvbuf, whose start is also the output: a copy. */
    void *tmp = wsp__tmp_typed(comm, &a, total, &mem);
    if (tmp == NULL || (rc = wsp__copy_typed(comm, &a, recvbuf, tmp, total))) {
      rc = tmp ? rc : WSP_ERR_NOMEM;
      goto out;
    }
    a.sendbuf = tmp;
  }
  if (p == 1) {
    rc = wsp__copy_typed(comm, &a, a.sendbuf, recvbuf, total);
  } else {
    int dense = (MPI_Aint)ti.size == ti.extent && ti.true_lb == 0 && ti.true_extent == ti.extent;
    wsp__coll_shape_t s = {.p = p,
                           .bytes = bytes / (size_t)p,
                           .count = total,
                           .commutative = commute,
                           .dense = dense,
                           .blocks = blk,
                           .total = bytes};
    rc = wsp__coll_run(comm, &a, &s);
  }
out:
  free(mem);
  free(off);
  return rc;
}

int wsp_reduce_scatter(wsp_comm_t *comm, const void *sendbuf, void *recvbuf,
                       const size_t recvcounts[], MPI_Datatype type, MPI_Op op) {
  static const char fn[] = "wsp_reduce_scatter";
  int rc;
  if ((rc = wsp__check_comm(comm, fn))) return rc;
  if (recvcounts == NULL)
    return wsp__v_agree(comm, fn, WSP_COLL_REDUCE_SCATTER, 0, MPI_BYTE, MPI_OP_NULL,
                        wsp__fail(comm, WSP_ERR_ARG, "%s: recvcounts is NULL", fn));
  return wsp__reduce_scatter(comm, fn, sendbuf, recvbuf, recvcounts, 0, type, op);
}

int wsp_reduce_scatter_block(wsp_comm_t *comm, const void *sendbuf, void *recvbuf, size_t recvcount,
                             MPI_Datatype type, MPI_Op op) {
  static const char fn[] = "wsp_reduce_scatter_block";
  int rc;
  if ((rc = wsp__check_comm(comm, fn))) return rc;
  /* Out of memory here is this rank's alone, as for the buffers of every
   * collective (wsp__view). */
  size_t *counts = malloc((size_t)comm->size * sizeof *counts);
  if (counts == NULL) return wsp__fail(comm, WSP_ERR_NOMEM, "%s: out of memory", fn);
  for (int i = 0; i < comm->size; i++) counts[i] = recvcount;
  rc = wsp__reduce_scatter(comm, fn, sendbuf, recvbuf, counts, 1, type, op);
  free(counts);
  return rc;
}
