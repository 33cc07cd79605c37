/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Recursive-doubling allreduce, any p.
 *
 * With q the largest power of two <= p and r = p - q: ranks 2i and 2i+1
 * (i < r) pair up, the even one sends its vector to the odd one, which
 * combines them (even's first) and takes part as new rank i; ranks >= 2r
 * are new rank rank - r. The q new ranks then run lg q steps: in step k,
 * new rank nr exchanges its whole partial with nr ^ 2^k and both combine,
 * the lower rank's partial first. Finally each odd rank below 2r sends the
 * result back to its even partner. (The schedule is src/patterns/rdouble.h.)
 *
 * Rank order holds: a new rank covers a contiguous run of ranks, and
 * before step k the partials of nr and nr ^ 2^k cover adjacent runs, so
 * "lower op upper" is the rank-order combination; non-commutative ops are
 * exact.
 *
 * Latency-optimal for short vectors; every step moves and reduces the
 * whole vector.
 *
 * Preconditions: none (any p, any count, any op).
 */
#include "../coll_internal.h"
#include "../sites.h"

#include "../../patterns/rdouble.h"
#include "../../patterns/reduce_sched.h"
#include "../reduce/reduce_util.h"

#include <stdlib.h>

WSP__COST(allreduce, recursive_doubling,
          "(lg q + 2.[p != q]).drain(n) + lg q.(alpha + n.beta_x) + 2.[p != q].(alpha + n.beta) + "
          "(lg q + [p != q]).n.gamma, q = 2^floor(lg p); with sites, each step by whether it "
          "crosses") {
  int q = wsp__rsched_pow2_floor(s->p), lg = wsp__rsched_log2(q);
  int odd = s->p != q;
  double n = (double)s->bytes;
  /* Exchange steps at beta_x, the fold and unfold at beta. */
  double c = (lg + 2 * odd) * wsp__drain(m, n) + (lg + odd) * n * m->gamma;
  for (int k = 0; k < lg; k++) c += wsp__xstep_cost(m, s, k, n, 1);
  if (odd) c += 2 * wsp__xstep_cost(m, s, -1, n, 0);
  return c;
}

int wsp__allreduce_recursive_doubling(wsp_comm_t *comm,
                                      const wsp__coll_args_t *a) {
  int p = comm->size, me = comm->rank, rc = WSP_OK;
  size_t count = a->count;
  void *mem = NULL, *acc = a->recvbuf, *x;
  void *rb = wsp__tmp_typed(comm, a, count, &mem);
  if (rb == NULL) return WSP_ERR_NOMEM;
  if ((rc = wsp__copy_typed(comm, a, a->sendbuf, acc, count))) goto out;
  int n = wsp__rd_nsteps(p, me);
  for (int i = 0; i < n && rc == WSP_OK; i++) {
    wsp__rd_step_t s = wsp__rd_step(p, me, i);
    switch (s.action) {
    case WSP__RD_SEND:
      rc = wsp__red_send(comm, a, acc, count, s.peer);
      break;
    case WSP__RD_RECV: /* from the even partner below */
      if ((rc = wsp__red_recv(comm, a, rb, count, s.peer))) break;
      rc = wsp__reduce_local(comm, rb, acc, count, a->dtype, a->op);
      break;
    case WSP__RD_EXCHANGE:
      if ((rc = wsp__red_exchange(comm, a, acc, count, rb, count, s.peer))) break;
      if (s.peer < me) {
        rc = wsp__reduce_local(comm, rb, acc, count, a->dtype, a->op);
      } else {
        rc = wsp__reduce_local(comm, acc, rb, count, a->dtype, a->op);
        x = acc, acc = rb, rb = x;
      }
      break;
    case WSP__RD_RECV_RESULT:
      rc = wsp__red_recv(comm, a, acc, count, s.peer);
      break;
    default:
      break;
    }
  }
  if (rc == WSP_OK) rc = wsp__copy_typed(comm, a, acc, a->recvbuf, count);
out:
  free(mem);
  return rc;
}
