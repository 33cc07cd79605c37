/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Linear gather.
 *
 * Every rank other than the root sends its block straight to the root. The
 * root posts all p-1 receives at once, each directly into its place in
 * recvbuf (so nothing arrives unexpected and nothing is copied twice),
 * copies its own block (nothing to do in place) and waits. The root's link
 * carries all (p-1) blocks and the root handles one message per peer, but
 * no rank forwards anything, so it is the choice for large blocks or when
 * the network, not the root's message rate, is the limit.
 *
 * Preconditions: none (any p, any block size).
 *
 * With all p-1 receives in flight at once the latencies overlap: the first
 * message costs a latency, each further one only the root's per-message
 * gap (LogGP's g, calibrated; wsp_model_t.gap), and the root's link
 * carries every block. Charging a full latency per peer, as this model
 * once did, priced linear gather at p = 256 in SimGrid many times above
 * what it took and made auto pick binomial where linear was faster
 * (docs/results/coll.md, "The cost model's history").
 */
#include "../coll_internal.h"

#include <stdlib.h>

WSP__COST(gather, linear,
          "alpha + (p-2).gap + (p-1).n.beta") {
  return wsp__fan_cost(m, s->p, s->bytes);
}

int wsp__gather_linear(wsp_comm_t *comm, const wsp__coll_args_t *a) {
  int p = comm->size, me = comm->rank, root = a->root, rc = WSP_OK;
  size_t n = a->block;
  if (me != root) return wsp__send_bytes(comm, a->sendbuf, n, root, a->tag);
  char *out = a->recvbuf;
  MPI_Request *req = malloc((size_t)p * sizeof *req);
  if (req == NULL)
    return wsp__fail(comm, WSP_ERR_NOMEM, "gather linear: out of memory");
  int nreq = 0;
  for (int i = 1; i < p && rc == WSP_OK; i++) {
    int src = (root + i) % p;
    rc = wsp__irecv_typed(comm, out + (size_t)src * n, n, MPI_BYTE, src, a->tag,
                          &req[nreq]);
    if (rc == WSP_OK) nreq++;
  }
  if (rc != WSP_OK) {
    wsp__abandon(comm, rc, nreq, req, 0, NULL);
  } else {
    wsp__copy_bytes(out + (size_t)root * n, a->sendbuf, n);
    rc = wsp__waitall(comm, nreq, req, 0);
  }
  free(req);
  return rc;
}
