/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Bruck's allgather (Bruck et al. 1997), any p.
 *
 * recvbuf is used as a local array in which block j belongs to rank
 * (r + j) mod p; rank r starts by putting its own block at j = 0. At step
 * k = 0 .. ceil(lg p) - 1, with d = 2^k and c = min(d, p - d), it sends
 * local blocks [0, c) to rank r - d and receives local blocks [d, d + c)
 * from rank r + d (src/patterns/bruck.h), so the contiguous range it holds
 * doubles until it is all p blocks. A final in-place rotation right by r
 * blocks (three block reversals) puts block i at index i.
 *
 * ceil(lg p) latencies and p-1 blocks per rank for any p; the rotation
 * moves each byte of recvbuf a constant number of times locally (not in
 * the formula).
 *
 * Preconditions: none (any p, any block size).
 *
 * Each step a rank sends and receives at once: beta_x (src/model/model.h).
 */
#include "../coll_internal.h"
#include "../sites.h"

#include "../../patterns/bruck.h"

WSP__COST(allgather, bruck,
          "ceil(lg p).alpha + (p-1).n.beta_x; with sites, each step by whether it crosses") {
  /* Step k sends min(2^k, p - 2^k) blocks to rank r - 2^k: priced step by
   * step between sites (wsp__shift_step_cost), where the step across half
   * of two equal sites puts every rank on the link with half the data. */
  double c = 0;
  for (int k = 0, lg = wsp__ceil_log2(s->p); k < lg; k++) {
    int d = 1 << k, blocks = d < s->p - d ? d : s->p - d;
    c += wsp__shift_step_cost(m, s, k, (double)blocks * (double)s->bytes);
  }
  return c;
}

int wsp__allgather_bruck(wsp_comm_t *comm, const wsp__coll_args_t *a) {
  int p = comm->size, r = comm->rank, rc = WSP_OK;
  size_t n = a->block;
  char *out = a->recvbuf;
  /* In place the own block sits at r: the move to 0 does not overlap
   * (r > 0) or is no move at all (r = 0). */
  wsp__copy_bytes(out, a->sendbuf, n);
  int steps = wsp__bruck_nsteps(p);
  for (int k = 0; k < steps && rc == WSP_OK; k++) {
    wsp__bruck_ag_step_t s = wsp__bruck_ag_step(r, p, k);
    size_t len = (size_t)s.count * n;
    rc = wsp__sendrecv_bytes(comm, out, len, s.send_peer,
                             out + (size_t)s.recv_lo * n, len, s.recv_peer, a->tag);
  }
  if (rc == WSP_OK) wsp__blocks_rotate_right(out, p, r, n);
  return rc;
}
