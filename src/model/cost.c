/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The cost helpers that algorithms' cost functions share (declared, with
 * what each computes, in model.h).
 */
#include "model.h"

#include <math.h>

double wsp__drain(const wsp_model_t *m, double bytes) {
  return m->lanes_min && bytes >= (double)m->lanes_min ? m->lanes_drain : 0;
}

double wsp__drain_pipeline(const wsp_model_t *m, size_t len, size_t seg) {
  return wsp__drain(m, (double)(seg < len ? seg : len));
}

double wsp__drain_halving(const wsp_model_t *m, double n, int steps) {
  double d = 0;
  for (int i = 1; i <= steps; i++) d += wsp__drain(m, ldexp(n, -i));
  return d;
}

int wsp__ceil_log2(int p) {
  int l = 0;
  while ((1L << l) < p) l++;
  return l;
}

int wsp__ceil_logk(int p, int k) {
  int l = 0;
  long v = 1;
  while (v < p) v *= k, l++;
  return l;
}

double wsp__chain_beta(const wsp_model_t *m, int p) {
  return p > 2 ? m->beta_x : m->beta;
}

double wsp__fan_cost(const wsp_model_t *m, int p, size_t bytes) {
  if (p < 2) return 0;
  return m->alpha + (p - 2) * m->gap + (double)(p - 1) * (double)bytes * m->beta;
}

size_t wsp__pipeline_seg(const wsp_model_t *m, size_t n, int stages,
                         double per_byte, size_t align) {
  if (align == 0) align = 1;
  if (n <= align) return align;
  double seg = stages > 1 && per_byte > 0
                   ? sqrt((double)n * m->alpha / ((double)(stages - 1) * per_byte))
                   : (double)n;
  if (!(seg >= (double)align)) seg = (double)align;
  if (seg > (double)n) seg = (double)n;
  /* Within the MPI's eager limit, when it is known and not so small that
   * the per-segment overhead would dominate: above it every segment waits
   * for the receiver's rendezvous answer, which queues behind the segments
   * that receiver is forwarding, and the formula above knows nothing of
   * it. Under MPICH with UCX's defaults this held the chain broadcast well
   * below the link rate, and an optimum that drifted across Open MPI's
   * limit with the calibration's noise made the same broadcast bimodal
   * (docs/results/netmap.md, "The eager limit, used"). */
  if (m->eager >= WSP__SEG_EAGER_MIN && seg > (double)m->eager) seg = (double)m->eager;
  /* Over the lanes, at or above their threshold: a smaller segment would go
   * through MPI at one flow's rate, which the model no longer prices. */
  if (m->lanes_min && seg < (double)m->lanes_min) seg = (double)m->lanes_min;
  if (seg > (double)n) seg = (double)n;
  size_t s = (size_t)seg / align * align;
  return s ? s : align;
}

