/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The reduce-scatter by recursive halving that Rabenseifner's reduce and
 * allreduce share (after the fold to q = 2^floor(lg p) ranks).
 *
 * In step k = 0, 1, ..., lg q - 1, new ranks nr and nr ^ 2^k hold the same
 * window of the q blocks; each keeps one half (the lower if its bit k is
 * 0), sends the other half to the partner, and combines the partner's copy
 * of the kept half into its own. Lowest bit first, every partial covers a
 * contiguous run of ranks and the partner's run is adjacent, so combining
 * "lower run first" keeps rank order and non-commutative ops are exact.
 * When the lower run is the partner's, the combination lands in the
 * receive buffer and the two buffers swap roles: only the kept window
 * matters from then on.
 */
#include "reduce_util.h"

#include "../../patterns/reduce_sched.h"

int wsp__red_halving(wsp_comm_t *comm, const wsp__coll_args_t *a, int nr, int q, int fold_root,
                     const size_t *bounds, void **acc, void **rb) {
  int lg = wsp__rsched_log2(q), rc = WSP_OK;
  for (int k = 0; k < lg; k++) {
    int pnr = nr ^ (1 << k), peer = wsp__fold_oldrank(pnr, comm->size, fold_root);
    size_t ks, kl, ss, sl;
    if (bounds) {
      wsp__halving_window_in(nr, k + 1, q, bounds, &ks, &kl);
      wsp__halving_window_in(pnr, k + 1, q, bounds, &ss, &sl);
    } else {
      wsp__halving_window(nr, k + 1, q, a->count, &ks, &kl);
      wsp__halving_window(pnr, k + 1, q, a->count, &ss, &sl);
    }
    if ((rc = wsp__red_exchange(comm, a, wsp__elem(a, *acc, ss), sl,
                                wsp__elem(a, *rb, ks), kl, peer)))
      return rc;
    if (kl == 0) continue;
    if (pnr < nr) {
      rc = wsp__reduce_local(comm, wsp__elem(a, *rb, ks), wsp__elem(a, *acc, ks),
                             kl, a->dtype, a->op);
    } else {
      rc = wsp__reduce_local(comm, wsp__elem(a, *acc, ks), wsp__elem(a, *rb, ks),
                             kl, a->dtype, a->op);
      void *x = *acc;
      *acc = *rb;
      *rb = x;
    }
    if (rc) return rc;
  }
  return WSP_OK;
}
