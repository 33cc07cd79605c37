/*
 * Messages of any size. MPI describes a message as (int count, datatype),
 * so a message of more than INT_MAX elements cannot be type × count. Here
 * such a message becomes one element of a derived type: q chunks of `limit`
 * elements followed by a remainder of r elements. Sender and receiver may
 * build their types independently: MPI only requires equal type
 * signatures, and both are "count × type".
 *
 * The limit is cfg.big_message (INT_MAX by default); tests lower it to walk
 * this path with small buffers.
 */
#include "wsp_internal.h"

#include <limits.h>

int wsp__count_type(const wsp_comm_t *comm, size_t count, MPI_Datatype base,
                    int *n, MPI_Datatype *type, int *owned) {
  size_t limit = comm->cfg.big_message;
  *owned = 0;
  if (count <= limit) {
    *n = (int)count;
    *type = base;
    return WSP_OK;
  }
  size_t q = count / limit, r = count % limit;
  if (q > INT_MAX)
    return wsp__fail(comm, WSP_ERR_ARG,
                     "a message of %zu elements is too large to describe to MPI",
                     count);
  int rc = WSP_OK;
  MPI_Aint lb, ext;
  MPI_Datatype chunk = MPI_DATATYPE_NULL, body = MPI_DATATYPE_NULL,
               result = MPI_DATATYPE_NULL;
  WSP__MPI_GOTO(comm, MPI_Type_get_extent(base, &lb, &ext), rc, out);
  WSP__MPI_GOTO(comm, MPI_Type_contiguous((int)limit, base, &chunk), rc, out);
  WSP__MPI_GOTO(comm, MPI_Type_contiguous((int)q, chunk, &body), rc, out);
  if (r == 0) {
    result = body;
    body = MPI_DATATYPE_NULL;
  } else {
    int lens[2] = {1, (int)r};
    MPI_Aint disp[2] = {0, (MPI_Aint)(q * limit) * ext};
    MPI_Datatype types[2] = {body, base};
    WSP__MPI_GOTO(comm, MPI_Type_create_struct(2, lens, disp, types, &result),
                  rc, out);
  }
  WSP__MPI_GOTO(comm, MPI_Type_commit(&result), rc, out);
  *n = 1;
  *type = result;
  *owned = 1;
  result = MPI_DATATYPE_NULL;
out:
  if (chunk != MPI_DATATYPE_NULL) MPI_Type_free(&chunk);
  if (body != MPI_DATATYPE_NULL) MPI_Type_free(&body);
  if (result != MPI_DATATYPE_NULL) MPI_Type_free(&result);
  return rc;
}

int wsp__bytes_type(const wsp_comm_t *comm, size_t bytes, int *count,
                    MPI_Datatype *type, int *owned) {
  return wsp__count_type(comm, bytes, MPI_BYTE, count, type, owned);
}

int wsp__status_bytes(const wsp_comm_t *comm, MPI_Status *st, size_t *bytes) {
  int rc = WSP_OK, n = 0;
  WSP__MPI_GOTO(comm, MPI_Get_count(st, MPI_BYTE, &n), rc, out);
  if (n != MPI_UNDEFINED) {
    *bytes = (size_t)n;
    return WSP_OK;
  }
#ifdef WSP_SIMGRID
  /* SMPI has no MPI_Get_elements_x; simulated messages stay under 2 GiB. */
  return wsp__fail(comm, WSP_ERR_UNSUPPORTED,
                   "a message over INT_MAX bytes under SimGrid");
#else
  MPI_Count big = 0;
  WSP__MPI_GOTO(comm, MPI_Get_elements_x(st, MPI_BYTE, &big), rc, out);
  if (big < 0 || big == MPI_UNDEFINED)
    return wsp__fail(comm, WSP_ERR_INTERNAL,
                     "MPI_Get_elements_x returned %lld bytes", (long long)big);
  *bytes = (size_t)big;
#endif
out:
  return rc;
}

int wsp__isend_bytes(const wsp_comm_t *comm, const void *buf, size_t bytes,
                     int peer, int tag, int synchronous, MPI_Request *req) {
  int count, owned, rc;
  MPI_Datatype type;
  if ((rc = wsp__bytes_type(comm, bytes, &count, &type, &owned)) != WSP_OK)
    return rc;
  int mrc = synchronous
                ? MPI_Issend(buf, count, type, peer, tag, comm->mpi, req)
                : MPI_Isend(buf, count, type, peer, tag, comm->mpi, req);
  if (owned) MPI_Type_free(&type); /* MPI frees it once the send completes */
  if (mrc != MPI_SUCCESS)
    return wsp__mpi_fail(comm, mrc, synchronous ? "MPI_Issend" : "MPI_Isend",
                         WSP__WHERE);
  return WSP_OK;
}

int wsp__irecv_bytes(const wsp_comm_t *comm, void *buf, size_t bytes, int peer,
                     int tag, MPI_Request *req) {
  int count, owned, rc;
  MPI_Datatype type;
  if ((rc = wsp__bytes_type(comm, bytes, &count, &type, &owned)) != WSP_OK)
    return rc;
  int mrc = MPI_Irecv(buf, count, type, peer, tag, comm->mpi, req);
  if (owned) MPI_Type_free(&type);
  if (mrc != MPI_SUCCESS) return wsp__mpi_fail(comm, mrc, "MPI_Irecv", WSP__WHERE);
  return WSP_OK;
}
