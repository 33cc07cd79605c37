/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Bruck's alltoall (Bruck et al. 1997), any p.
 *
 * recvbuf serves as the local array. First a local rotation: local block j
 * is the block r sends to rank (r + j) mod p (two contiguous copies from
 * sendbuf). At step k = 0 .. ceil(lg p) - 1 rank r packs the local blocks
 * whose index has bit k set into a temporary, sends them to rank r + 2^k,
 * receives the same indices from rank r - 2^k into a second temporary and
 * unpacks them over the ones it sent (src/patterns/bruck.h). A block at
 * index j travels j ranks forward in total, so at the end local j came
 * from rank r - j; reversing local [0, r] and [r+1, p) in place puts it at
 * index (r - j) mod p, where MPI wants it.
 *
 * ceil(lg p) latencies instead of p-1, paid for with about p/2 blocks per
 * step (lg p / 2 times the data of pairwise): the choice for small blocks.
 * Temporary memory: 2 floor(p/2) blocks. Local copies (first rotation
 * p.n, packing and unpacking at most p.n per step, final reversal about
 * 1.5 p.n) come to about (2.5 + ceil(lg p)).p.n bytes of memcpy and are left
 * out of the formula.
 *
 * Preconditions: none (any p, any block size).
 *
 * Each step a rank sends and receives at once: beta_x.
 */
#include "../coll_internal.h"

#include <stdlib.h>

#include "../../patterns/bruck.h"

WSP__COST(alltoall, bruck,
          "ceil(lg p).(alpha + (p/2).n.beta_x)") {
  return wsp__ceil_log2(s->p) *
         (m->alpha + (double)s->p / 2.0 * (double)s->bytes * m->beta_x);
}

int wsp__alltoall_bruck(wsp_comm_t *comm, const wsp__coll_args_t *a) {
  int p = comm->size, r = comm->rank, rc = WSP_OK;
  size_t n = a->block;
  const char *in = a->sendbuf;
  char *out = a->recvbuf;
  /* local j = send block (r + j) mod p (sendbuf and recvbuf never overlap) */
  memcpy(out, in + (size_t)r * n, (size_t)(p - r) * n);
  memcpy(out + (size_t)(p - r) * n, in, (size_t)r * n);
  size_t most = (size_t)wsp__bruck_a2a_max_blocks(p) * n;
  char *pk = malloc(most ? 2 * most : 1);
  if (pk == NULL) return wsp__fail(comm, WSP_ERR_NOMEM, "alltoall bruck: out of memory");
  int steps = wsp__bruck_nsteps(p);
  for (int k = 0; k < steps && rc == WSP_OK; k++) {
    size_t len = (size_t)wsp__bruck_a2a_blocks(p, k, NULL) * n;
    wsp__bruck_a2a_pack(out, p, k, n, pk);
    rc = wsp__sendrecv_bytes(comm, pk, len, wsp__bruck_a2a_send_peer(r, p, k),
                             pk + most, len, wsp__bruck_a2a_recv_peer(r, p, k), a->tag);
    if (rc == WSP_OK) wsp__bruck_a2a_unpack(out, p, k, n, pk + most);
  }
  free(pk);
  if (rc == WSP_OK) wsp__bruck_a2a_finish(out, r, p, n);
  return rc;
}
