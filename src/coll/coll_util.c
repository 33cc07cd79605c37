/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Helpers shared by the collective algorithms: local reduction and copies,
 * temporary buffers for derived datatypes. Messages go through
 * src/core/p2p.h.
 */
#include "coll_internal.h"

#include <limits.h>
#include <stdlib.h>

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
