/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Recursive-doubling allgather (power-of-two p).
 *
 * Rank r copies its own block into place. At step k = 0 .. lg p - 1 it
 * exchanges with r XOR 2^k (src/patterns/rdgather.h): it holds the 2^k
 * contiguous blocks of the ranks sharing its bits from k up, sends them in
 * one message and receives the partner's adjacent 2^k blocks straight into
 * place, so the held range doubles each step. lg p latencies and p-1 blocks
 * per rank: optimal in both terms, but only for powers of two; for other
 * p the table falls back to Bruck, which has ceil(lg p) latencies and
 * sends to one rank while it receives from another. Only ever priced at a
 * power of two (the precondition is checked before any cost).
 *
 * Preconditions: p a power of two (fallback: bruck).
 */
#include "../coll_internal.h"
#include "../sites.h"

#include "../../patterns/rdgather.h"

#include <math.h>

WSP__COST(allgather, recursive_doubling,
          "lg p.alpha + (p-1).n.beta_x; with sites, each step by whether it crosses") {
  /* Step k swaps 2^k blocks with rank XOR 2^k: the exchange schedules'
   * pairs at a power of two (no fold), priced step by step between sites
   * (wsp__xstep_cost). */
  double c = 0;
  for (int k = 0, lg = wsp__ceil_log2(s->p); k < lg; k++)
    c += wsp__xstep_cost(m, s, k, ldexp((double)s->bytes, k), 1);
  return c;
}

int wsp__allgather_recursive_doubling(wsp_comm_t *comm, const wsp__coll_args_t *a) {
  int p = comm->size, r = comm->rank, rc = WSP_OK;
  size_t n = a->block;
  char *out = a->recvbuf;
  wsp__copy_bytes(out + (size_t)r * n, a->sendbuf, n);
  int steps = wsp__rdg_nsteps(p);
  for (int k = 0; k < steps && rc == WSP_OK; k++) {
    wsp__rdg_step_t s = wsp__rdg_step(r, p, k);
    size_t len = (size_t)s.nblocks * n;
    rc = wsp__sendrecv_bytes(comm, out + (size_t)s.send_lo * n, len, s.peer,
                             out + (size_t)s.recv_lo * n, len, s.peer, a->tag);
  }
  return rc;
}
