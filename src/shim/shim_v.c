/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The shim's vector forms: MPI_Alltoallv, MPI_Allgatherv and
 * MPI_Reduce_scatter (and their _c twins) into wirespeed's calls, whose
 * counts and displacements are size_t (shim.h says how and why).
 */
#include "shim.h"

#include <stdint.h>
#include <stdlib.h>

/* Element i of an int or a 64-bit array. */
static long long wsp__shim_at(const void *v, int wide, int i) {
  return wide ? (long long)((const int64_t *)v)[i] : (long long)((const int *)v)[i];
}

static int wsp__shim_size(MPI_Comm comm) {
  int p = 0;
  return PMPI_Comm_size(comm, &p) == MPI_SUCCESS ? p : 0;
}

size_t wsp__shim_vbytes(MPI_Comm comm, const void *counts, int wide, MPI_Datatype type) {
  int p = wsp__shim_size(comm);
  size_t sum = 0;
  if (counts == NULL || p <= 0) return 0;
  for (int i = 0; i < p; i++) {
    long long c = wsp__shim_at(counts, wide, i);
    if (c > 0) sum += (size_t)c;
  }
  return wsp__shim_bytes((MPI_Count)sum, type) / (size_t)p;
}

/* p counts into out; WSP_ERR_ARG for a negative one (NULL arrays are
 * passed on as NULL, which wirespeed refuses naming them). */
static int wsp__shim_counts(int p, const void *v, int wide, size_t *out) {
  if (v == NULL) return WSP_ERR_ARG;
  for (int i = 0; i < p; i++) {
    long long c = wsp__shim_at(v, wide, i);
    if (c < 0) return WSP_ERR_ARG;
    out[i] = (size_t)c;
  }
  return WSP_OK;
}

/* p displacements into out, less the smallest when it is negative, and
 * *buf moved down to it (in units of the type's extent). */
static int wsp__shim_displs(int p, const void *v, int wide, MPI_Datatype type, size_t *out,
                            void **buf) {
  if (v == NULL) return WSP_ERR_ARG;
  long long lo = 0;
  for (int i = 0; i < p; i++)
    if (wsp__shim_at(v, wide, i) < lo) lo = wsp__shim_at(v, wide, i);
  MPI_Aint lb = 0, ext = 0;
  if (lo < 0) {
    if (PMPI_Type_get_extent(type, &lb, &ext) != MPI_SUCCESS || ext <= 0) return WSP_ERR_ARG;
    *buf = (char *)*buf + lo * (long long)ext;
  }
  for (int i = 0; i < p; i++) out[i] = (size_t)(wsp__shim_at(v, wide, i) - lo);
  return WSP_OK;
}

int wsp__shim_alltoallv(wsp_comm_t *w, const void *sendbuf, const void *sendcounts,
                        const void *sdispls, MPI_Datatype sendtype, void *recvbuf,
                        const void *recvcounts, const void *rdispls, MPI_Datatype recvtype,
                        int wide) {
  int p = 0, rc = WSP_OK, in_place = sendbuf == MPI_IN_PLACE;
  wsp_comm_size(w, &p);
  size_t *a = malloc(4 * (size_t)p * sizeof *a);
  if (a == NULL) return WSP_ERR_NOMEM;
  void *sb = (void *)sendbuf, *rb = recvbuf;
  if (!in_place && ((rc = wsp__shim_counts(p, sendcounts, wide, a)) ||
                    (rc = wsp__shim_displs(p, sdispls, wide, sendtype, a + p, &sb))))
    goto out;
  if ((rc = wsp__shim_counts(p, recvcounts, wide, a + 2 * p)) ||
      (rc = wsp__shim_displs(p, rdispls, wide, recvtype, a + 3 * p, &rb)))
    goto out;
  rc = wsp_alltoallv(w, sb, in_place ? NULL : a, in_place ? NULL : a + p, sendtype, rb, a + 2 * p,
                     a + 3 * p, recvtype);
out:
  free(a);
  return rc;
}

int wsp__shim_allgatherv(wsp_comm_t *w, const void *sendbuf, MPI_Count sendcount,
                         MPI_Datatype sendtype, void *recvbuf, const void *recvcounts,
                         const void *displs, MPI_Datatype recvtype, int wide) {
  int p = 0, rc;
  wsp_comm_size(w, &p);
  size_t *a = malloc(2 * (size_t)p * sizeof *a);
  if (a == NULL) return WSP_ERR_NOMEM;
  void *rb = recvbuf;
  if (sendcount < 0)
    rc = WSP_ERR_ARG;
  else if ((rc = wsp__shim_counts(p, recvcounts, wide, a)) == WSP_OK &&
           (rc = wsp__shim_displs(p, displs, wide, recvtype, a + p, &rb)) == WSP_OK)
    rc = wsp_allgatherv(w, sendbuf, (size_t)sendcount, sendtype, rb, a, a + p, recvtype);
  free(a);
  return rc;
}

int wsp__shim_reduce_scatter(wsp_comm_t *w, const void *sendbuf, void *recvbuf,
                             const void *recvcounts, MPI_Datatype type, MPI_Op op, int wide) {
  int p = 0, rc;
  wsp_comm_size(w, &p);
  size_t *a = malloc((size_t)p * sizeof *a);
  if (a == NULL) return WSP_ERR_NOMEM;
  if ((rc = wsp__shim_counts(p, recvcounts, wide, a)) == WSP_OK)
    rc = wsp_reduce_scatter(w, sendbuf, recvbuf, a, type, op);
  free(a);
  return rc;
}
