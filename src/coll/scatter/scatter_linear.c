/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Linear scatter.
 *
 * The root sends every other rank its block straight from sendbuf (all
 * p-1 sends started at once, to root+1, root+2, ... in that order) and
 * copies its own block (nothing to do in place); every other rank receives
 * its block directly into recvbuf. The mirror image of linear gather: one
 * message per peer at the root, nothing forwarded.
 *
 * Preconditions: none (any p, any block size).
 *
 * With all p-1 sends in flight at once the latencies overlap: the first
 * message costs a latency, each further one only the root's per-message
 * gap (LogGP's g, calibrated; wsp_model_t.gap), and the root's link
 * carries every block. Charging a full latency per peer, as this model
 * once did, overpriced linear gather, the mirror image, many times over at
 * p = 256 (gather_linear.c; docs/results/coll.md, "The cost model's
 * history").
 */
#include "../coll_internal.h"

#include <stdlib.h>

WSP__COST(scatter, linear,
          "alpha + (p-2).gap + (p-1).n.beta") {
  return wsp__fan_cost(m, s->p, s->bytes);
}

int wsp__scatter_linear(wsp_comm_t *comm, const wsp__coll_args_t *a) {
  int p = comm->size, me = comm->rank, root = a->root, rc = WSP_OK;
  size_t n = a->block;
  if (me != root) return wsp__recv_bytes(comm, a->recvbuf, n, root, a->tag);
  const char *in = a->sendbuf;
  MPI_Request *req = malloc((size_t)p * sizeof *req);
  if (req == NULL)
    return wsp__fail(comm, WSP_ERR_NOMEM, "scatter linear: out of memory");
  int nreq = 0;
  for (int i = 1; i < p && rc == WSP_OK; i++) {
    int dst = (root + i) % p;
    rc = wsp__isend_typed(comm, in + (size_t)dst * n, n, MPI_BYTE, dst, a->tag,
                          &req[nreq]);
    if (rc == WSP_OK) nreq++;
  }
  if (rc == WSP_OK) wsp__copy_bytes(a->recvbuf, in + (size_t)root * n, n);
  /* On an error the sends already started still complete. */
  int wrc = wsp__waitall(comm, nreq, req, 0);
  free(req);
  return rc ? rc : wrc;
}
