/* SPDX-License-Identifier: BSD-3-Clause */
#include "rdouble.h"

static int wsp__pow2_floor(int p) {
  int q = 1;
  while (q * 2 <= p) q *= 2;
  return q;
}

static int wsp__lg(int q) {
  int l = 0;
  while ((1 << l) < q) l++;
  return l;
}

/* New number of a participating rank, or -1 for a rank that sits out. */
static int wsp__rd_newrank(int rank, int r) {
  if (rank < 2 * r) return rank % 2 ? rank / 2 : -1;
  return rank - r;
}

static int wsp__rd_oldrank(int newrank, int r) {
  return newrank < r ? 2 * newrank + 1 : newrank + r;
}

int wsp__rd_nsteps(int p, int rank) {
  if (p <= 1) return 0;
  int q = wsp__pow2_floor(p), r = p - q;
  if (rank < 2 * r && rank % 2 == 0) return 2; /* send, then receive result */
  return wsp__lg(q) + (rank < 2 * r ? 2 : 0);
}

wsp__rd_step_t wsp__rd_step(int p, int rank, int step) {
  wsp__rd_step_t none = {WSP__RD_DONE, -1};
  if (p <= 1 || step < 0 || step >= wsp__rd_nsteps(p, rank)) return none;
  int q = wsp__pow2_floor(p), r = p - q, lg = wsp__lg(q);
  if (rank < 2 * r && rank % 2 == 0) {
    wsp__rd_step_t s = {step == 0 ? WSP__RD_SEND : WSP__RD_RECV_RESULT, rank + 1};
    return s;
  }
  int extra = rank < 2 * r; /* an odd rank that also serves rank - 1 */
  if (extra && step == 0) {
    wsp__rd_step_t s = {WSP__RD_RECV, rank - 1};
    return s;
  }
  int k = step - extra;
  if (k < lg) {
    int nr = wsp__rd_newrank(rank, r);
    wsp__rd_step_t s = {WSP__RD_EXCHANGE, wsp__rd_oldrank(nr ^ (1 << k), r)};
    return s;
  }
  wsp__rd_step_t s = {WSP__RD_SEND, rank - 1}; /* the result, back */
  return s;
}
