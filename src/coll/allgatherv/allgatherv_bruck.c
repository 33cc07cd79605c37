/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Bruck's allgather (src/patterns/bruck.h) for blocks of any size.
 *
 * A temporary buffer holds the blocks in the order of the ranks starting
 * at this one: local block j is rank (r + j) mod p's, packed one after
 * another, so the first j local blocks are always one contiguous run. At
 * step k, with d = 2^k and c = min(d, p - d), rank r sends local blocks
 * [0, c) to r - d and receives local blocks [d, d + c) from r + d, whose
 * own first c blocks they are; each is one message, whatever the counts.
 * After ceil(lg p) steps every block is copied to its displacement in
 * recvbuf.
 *
 * Logarithmic in latency; with very uneven counts the largest block is
 * sent once per step (a ring moves it once in all, in pieces): the model
 * prices each step by the most bytes any rank sends in it.
 *
 * Preconditions: none (any p, any counts).
 *
 * Sending while receiving: beta_x; plus the final copy of N bytes, not in
 * the formula.
 */
#include "../coll_internal.h"

#include "../../patterns/bruck.h"
#include "../reduce/reduce_util.h"

#include <stdlib.h>

WSP__COST(allgatherv, bruck,
          "sum over the ceil(lg p) steps of (alpha + B_k.beta_x), B_k = the most bytes "
          "any rank sends in step k") {
  int p = s->p;
  double cost = 0;
  for (int k = 0; k < wsp__bruck_nsteps(p); k++) {
    int c = wsp__bruck_ag_step(0, p, k).count;
    /* The largest sum of c consecutive blocks (cyclically), by a window
     * sliding over the ranks. */
    size_t sum = 0, most;
    for (int i = 0; i < c; i++) sum += wsp__shape_block(s, i);
    most = sum;
    for (int r = 1; r < p; r++) {
      sum = sum - wsp__shape_block(s, r - 1) + wsp__shape_block(s, (r + c - 1) % p);
      if (sum > most) most = sum;
    }
    cost += m->alpha + (double)most * m->beta_x;
  }
  return cost;
}

int wsp__allgatherv_bruck(wsp_comm_t *comm, const wsp__coll_args_t *a) {
  int p = comm->size, r = comm->rank, rc = WSP_OK;
  const size_t *cnt = a->rcounts, *d = a->rdispls;
  size_t *loff = malloc(((size_t)p + 1) * sizeof *loff);
  if (loff == NULL) return wsp__fail(comm, WSP_ERR_NOMEM, "allgatherv/bruck: out of memory");
  loff[0] = 0;
  for (int j = 0; j < p; j++) loff[j + 1] = loff[j] + cnt[(r + j) % p];
  size_t total = loff[p];
  char *tmp = malloc(total ? total : 1), *out = a->recvbuf;
  if (tmp == NULL) {
    free(loff);
    return wsp__fail(comm, WSP_ERR_NOMEM, "allgatherv/bruck: out of memory for %zu bytes", total);
  }
  memcpy(tmp, a->sendbuf, cnt[r]);
  int steps = wsp__bruck_nsteps(p);
  for (int k = 0; k < steps && rc == WSP_OK; k++) {
    wsp__bruck_ag_step_t st = wsp__bruck_ag_step(r, p, k);
    /* Empty runs are skipped by both ends alike (the counts are shared). */
    rc = wsp__red_exchange_with(comm, a, tmp, loff[st.count], st.send_peer, tmp + loff[st.recv_lo],
                                loff[st.recv_lo + st.count] - loff[st.recv_lo], st.recv_peer);
  }
  if (rc == WSP_OK) {
    wsp__copy_bytes(out + d[r], a->sendbuf, cnt[r]);
    for (int j = 1; j < p; j++) {
      int b = (r + j) % p;
      if (cnt[b]) memcpy(out + d[b], tmp + loff[j], cnt[b]);
    }
  }
  free(tmp);
  free(loff);
  return rc;
}
