/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The α-β-γ cost model: the helpers every algorithm's cost function shares
 * (src/model/cost.c) and the calibration that measures the model's
 * parameters when a communicator is created (src/model/calibrate.c).
 *
 * A message of n bytes between two ranks costs alpha + n.beta; reducing n
 * bytes locally costs n.gamma (Hockney's model with a computation term, as
 * in Thakur, Rabenseifner and Gropp 2005). wsp_model_t (wirespeed.h) holds
 * the parameters, with beta_x, gap and the node figures beside them. Each
 * algorithm's cost function predicts from them (src/coll/registry.h says
 * where those functions live); selection (src/coll/select.c) picks the
 * cheapest.
 *
 * Which per-byte cost an algorithm uses: beta_x wherever a rank sends and
 * receives at the same time in its steady state (exchanges, rings, Bruck
 * steps, the middle of a pipelined chain, alltoall's windows), beta where a
 * rank only sends or only receives at a time (trees, linear gather and
 * scatter). On a host's link, sending to one rank while receiving from
 * another loads the link exactly as an exchange with one partner does (data
 * one way, the other flow's acknowledgements with it), so pricing rings at
 * beta and exchanges at beta_x would favour rings by the difference, and
 * did (docs/results/coll.md, "The cost model's history").
 *
 * Nothing here knows the collectives: this layer sits below src/coll.
 */
#ifndef WSP_MODEL_H
#define WSP_MODEL_H

#include "wirespeed.h"

#include <stddef.h>

/* What a transfer of `bytes` that the next step waits for costs beyond
 * alpha and its bytes: m->lanes_drain when it takes the lanes (at least
 * m->lanes_min bytes), else 0 (wirespeed.h, wsp_model_t.lanes_drain). */
double wsp__drain(const wsp_model_t *m, double bytes);
/* The drain at the end of a pipeline of segments of seg bytes over len
 * bytes, which waits once for the lanes' queue: keyed on its longest
 * transfer, min(seg, len), not on the average segment, which a short last
 * segment pulls under the lanes' threshold while every other segment takes
 * the lanes. */
double wsp__drain_pipeline(const wsp_model_t *m, size_t len, size_t seg);
/* The drains of `steps` steps of n/2, n/4, ... bytes (recursive halving,
 * a binomial scatter; doubling and a binomial gather in reverse):
 * sum over i = 1..steps of wsp__drain(m, n / 2^i). */
double wsp__drain_halving(const wsp_model_t *m, double n, int steps);
/* ceil(log2 p) for p >= 1. */
int wsp__ceil_log2(int p);
/* ceil(log_k p) for p >= 1, k >= 2. */
int wsp__ceil_logk(int p, int k);
/* The smallest eager limit (m->eager) that segments are kept within. */
#define WSP__SEG_EAGER_MIN ((size_t)4096)
/* The segment size minimising a pipeline of `stages` stages over n bytes
 * with per-segment cost alpha + seg.per_byte: sqrt(n.alpha / ((stages-1)
 * per_byte)), at most m->eager when that is known and at least
 * WSP__SEG_EAGER_MIN, rounded down to a multiple of `align` and clamped to
 * [align, n]. */
size_t wsp__pipeline_seg(const wsp_model_t *m, size_t n, int stages,
                         double per_byte, size_t align);
/* Per-byte cost of a pipelined chain of p ranks: beta_x when some rank is
 * in the middle, receiving and forwarding at once (p > 2), else beta. */
double wsp__chain_beta(const wsp_model_t *m, int p);
/* Cost of a root exchanging a block of `bytes` with each of the other p-1
 * ranks, all messages in flight at once (linear gather and scatter): the
 * latencies overlap, so alpha + (p-2).gap + (p-1).bytes.beta; 0 at p = 1. */
double wsp__fan_cost(const wsp_model_t *m, int p, size_t bytes);

/* Collective over comm: measures every parameter of the model (short
 * ping-pongs, streams and a local reduction; the slowest rank's figures
 * count). */
int wsp__model_calibrate(wsp_comm_t *comm, wsp_model_t *out);

/* Collective over comm: the eager limit between nodes into m->eager and
 * m->eager_from, from cfg.eager_limit: given, none, or measured between
 * two nodes (auto; m's alpha and beta size the watch, so it runs after
 * the calibration). Also kept as the communicator's own (eager_own). */
int wsp__model_eager(wsp_comm_t *comm, wsp_model_t *m);

#endif
