/*
 * Helpers shared by the collective algorithms: waiting without spinning,
 * typed messages of any count, local reduction and copies, temporary
 * buffers for derived datatypes.
 */
#include "coll_internal.h"

#include <limits.h>
#include <stdlib.h>

int wsp__coll_waitall(wsp_comm_t *comm, int n, MPI_Request *reqs,
                      size_t bytes) {
  if (n <= 0) return WSP_OK;
  wsp__backoff_t b;
  /* 0 bytes means small or unknown (a tree's sends, a wait on an upstream
   * rank): an ordinary wait. Otherwise the model's time for the transfer,
   * which sets both the sleep cap and, when short, how long to poll. */
  if (bytes == 0)
    wsp__backoff_init(&b, comm);
  else
    wsp__backoff_init_bulk(&b, comm, comm->model.alpha + (double)bytes * comm->model.beta);
  for (;;) {
    int done = 0;
    int mrc = MPI_Testall(n, reqs, &done, MPI_STATUSES_IGNORE);
    if (mrc != MPI_SUCCESS)
      return wsp__mpi_fail(comm, mrc, "MPI_Testall", WSP__WHERE);
    if (done) return WSP_OK;
    wsp__backoff_idle(&b);
  }
}

int wsp__isend_typed(wsp_comm_t *comm, const void *buf, size_t count,
                     MPI_Datatype type, int peer, int tag, MPI_Request *req) {
  int n, owned, rc;
  MPI_Datatype ty;
  if ((rc = wsp__count_type(comm, count, type, &n, &ty, &owned))) return rc;
  int mrc = MPI_Isend(buf, n, ty, peer, tag, comm->mpi, req);
  if (owned) MPI_Type_free(&ty); /* freed by MPI once the send completes */
  if (mrc != MPI_SUCCESS) return wsp__mpi_fail(comm, mrc, "MPI_Isend", WSP__WHERE);
  return WSP_OK;
}

int wsp__irecv_typed(wsp_comm_t *comm, void *buf, size_t count,
                     MPI_Datatype type, int peer, int tag, MPI_Request *req) {
  int n, owned, rc;
  MPI_Datatype ty;
  if ((rc = wsp__count_type(comm, count, type, &n, &ty, &owned))) return rc;
  int mrc = MPI_Irecv(buf, n, ty, peer, tag, comm->mpi, req);
  if (owned) MPI_Type_free(&ty);
  if (mrc != MPI_SUCCESS) return wsp__mpi_fail(comm, mrc, "MPI_Irecv", WSP__WHERE);
  return WSP_OK;
}

int wsp__send_bytes(wsp_comm_t *comm, const void *buf, size_t bytes, int peer,
                    int tag) {
  MPI_Request r = MPI_REQUEST_NULL;
  int rc = wsp__isend_typed(comm, buf, bytes, MPI_BYTE, peer, tag, &r);
  return rc ? rc : wsp__coll_waitall(comm, 1, &r, bytes);
}

int wsp__recv_bytes(wsp_comm_t *comm, void *buf, size_t bytes, int peer,
                    int tag) {
  MPI_Request r = MPI_REQUEST_NULL;
  int rc = wsp__irecv_typed(comm, buf, bytes, MPI_BYTE, peer, tag, &r);
  return rc ? rc : wsp__coll_waitall(comm, 1, &r, bytes);
}

int wsp__sendrecv_typed(wsp_comm_t *comm, const void *sbuf, size_t scount,
                        int dst, void *rbuf, size_t rcount, int src,
                        MPI_Datatype type, int tag) {
  /* Send first, then receive: see the note on exchanges in coll_internal.h. */
  MPI_Request r[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  int rc = wsp__isend_typed(comm, sbuf, scount, type, dst, tag, &r[1]);
  if (rc == WSP_OK)
    rc = wsp__irecv_typed(comm, rbuf, rcount, type, src, tag, &r[0]);
  if (rc != WSP_OK) {
    /* Never leave a posted send behind: cancel it and complete it. */
    if (r[1] != MPI_REQUEST_NULL) {
      MPI_Cancel(&r[1]);
      MPI_Wait(&r[1], MPI_STATUS_IGNORE);
    }
    return rc;
  }
  int tsize = 0;
  if (MPI_Type_size(type, &tsize) != MPI_SUCCESS || tsize < 0) tsize = 0;
  return wsp__coll_waitall(comm, 2, r,
                           (scount > rcount ? scount : rcount) * (size_t)tsize);
}

int wsp__sendrecv_bytes(wsp_comm_t *comm, const void *sbuf, size_t sbytes,
                        int dst, void *rbuf, size_t rbytes, int src, int tag) {
  return wsp__sendrecv_typed(comm, sbuf, sbytes, dst, rbuf, rbytes, src,
                             MPI_BYTE, tag);
}

int wsp__reduce_local(wsp_comm_t *comm, const void *in, void *inout,
                      size_t count, MPI_Datatype type, MPI_Op op) {
  if (count == 0) return WSP_OK;
  MPI_Aint lb, ext;
  int mrc = MPI_Type_get_extent(type, &lb, &ext);
  if (mrc != MPI_SUCCESS)
    return wsp__mpi_fail(comm, mrc, "MPI_Type_get_extent", WSP__WHERE);
  size_t step = (size_t)INT_MAX;
  for (size_t off = 0; off < count; off += step) {
    size_t n = count - off < step ? count - off : step;
    mrc = MPI_Reduce_local((const char *)in + (ptrdiff_t)off * ext,
                           (char *)inout + (ptrdiff_t)off * ext, (int)n, type,
                           op);
    if (mrc != MPI_SUCCESS)
      return wsp__mpi_fail(comm, mrc, "MPI_Reduce_local", WSP__WHERE);
  }
  return WSP_OK;
}

void *wsp__tmp_typed(wsp_comm_t *comm, const wsp__coll_args_t *a, size_t count,
                     void **mem) {
  /* count elements span true_extent + (count - 1) * extent bytes starting
   * at the true lower bound. */
  size_t span = count == 0 ? 1
                           : (size_t)a->true_extent +
                                 (count - 1) * (size_t)a->extent;
  *mem = malloc(span ? span : 1);
  if (*mem == NULL) {
    wsp__fail(comm, WSP_ERR_NOMEM, "%s: out of memory for %zu bytes",
              wsp_coll_name(a->coll), span);
    return NULL;
  }
  return (char *)*mem - a->true_lb;
}

int wsp__copy_typed(wsp_comm_t *comm, const wsp__coll_args_t *a,
                    const void *src, void *dst, size_t count) {
  if (src == dst || count == 0) return WSP_OK;
  if ((MPI_Aint)a->type_size == a->extent && a->true_lb == 0 &&
      a->true_extent == a->extent) {
    memcpy(dst, src, count * a->type_size);
    return WSP_OK;
  }
  /* A derived type with holes: let MPI copy it, rank to itself. */
  return wsp__sendrecv_typed(comm, src, count, comm->rank, dst, count,
                             comm->rank, a->dtype, a->tag);
}
