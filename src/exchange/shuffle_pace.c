/*
 * Pacing of the all-pairs shuffle: how much may be in the network at once.
 *
 * What congests. Requests are small; each is answered by a response that
 * may be many times larger (the "fold"). Responses to a rank converge on
 * that rank's downlink from all its peers at once: the classic incast. If
 * requesters keep asking, responders keep answering, the shallow switch
 * buffer in front of the requester overflows, TCP flows lose whole windows
 * and wait for retransmission timeouts, and goodput collapses (the
 * G-thinker note, docs/shuffle.md). A requester, though, controls exactly
 * how much response data can head its way: what it has asked for and not
 * yet received. So the controller runs at the requester and limits the
 * volume in flight: the cost of a batch is its request bytes plus its
 * expected response bytes, and the sum over unanswered batches to network
 * peers (peers on the same node are not paced) stays below a window.
 *
 * Adaptive mode: a delay-based window in the spirit of TCP Vegas. Each
 * answered batch gives a round-trip time rtt (request sent -> last response
 * byte received), its actual cost c, and the volume W that was in flight
 * when it was sent (itself included). The time per byte rtt/c is smallest
 * when nothing is queued ahead of a batch; its minimum over all network
 * peers, b, estimates the unloaded path, so base = b.c is the unloaded round
 * trip of this batch (latency plus its own transfer time). One minimum for
 * all peers, not one per peer: on netlab with 16 hosts, per-peer minima of
 * peers first answered while the window was already large started (and
 * stayed) inflated, read as "no queue", and the window ran away to 78
 * batches. On a cluster every path has the same unloaded time per byte; on
 * heterogeneous paths the global minimum errs on the safe side (a slower
 * pair reads as queued, the window stays smaller). Vegas' estimate of the
 * bytes queued on the path is then
 *     q = W (1 - base / rtt)
 * (W/base is the rate the window would give on an empty path, W/rtt the
 * rate it got; their difference times base is what sat in queues). It is
 * exact in both regimes that matter: with the downlink as the only
 * bottleneck and no latency, rtt = base.W/c and q = W - c (the rest of the
 * window is queued ahead of the batch); on a long path, q stays 0 until W
 * exceeds the bandwidth-delay product and then equals the excess. Once per
 * round (a window's worth of answered cost) the controller takes the
 * round's least disturbed sample (smallest q) and, in units u of one
 * batch's cost:
 *   - if even that sample's rtt is more than SEVERE times what this rank's
 *     own window can explain (base.(1 + W/c)), other ranks' traffic is
 *     piling up ahead of ours: halve the window (multiplicative decrease,
 *     which makes competing requesters converge to fair shares, as AIMD);
 *   - q < ALPHA.u: the path has room. Grow: double the window in slow start
 *     (the first rounds), else add STEP.u;
 *   - q > BETA.u (in slow start: q > ALPHA.u): too much is queued. The
 *     same sample says the path holds W - q without a queue, so the window
 *     goes to W - q + TARGET.u at once, but by at least STEP.u and at most
 *     half the window per round (a round trip of lag must not make it
 *     overshoot downwards); this ends slow start;
 *   - otherwise hold.
 * The fixed point keeps ALPHA..BETA batches queued beyond the bandwidth-
 * delay product: on a short path about two batches in flight, which keeps
 * the downlink busy while the next request travels, and bounds the burst
 * that can converge on a rank's downlink to a couple of batches whatever
 * the number of peers. The window never drops below one unit (one batch is
 * always allowed in flight anyway) nor rises above cfg.window.
 * b is never aged: on a static network it only gets more accurate; if the
 * paths became slower, q would read high and the window shrink, which is
 * safe. Like Vegas, the controller is only as fair as the base estimates:
 * a requester that never saw a path empty (it started behind others'
 * batches) overestimates b, reads less queue and keeps a larger window.
 * The simulation in tests/unit/test_shuffle_pace.c shows the size of it
 * (four requesters behind one bottleneck: the slowest gets about 0.57 of a
 * fair share, the total stays at the link rate).
 *
 * Fixed mode reproduces the hand-tuned approach of G-thinker (a sleep per
 * batch, proportional to p, that holds the send rate near a chosen value)
 * as a token bucket: cost flows out at cfg.rate bytes/s, with a burst of one
 * batch; the window is cfg.window.
 *
 * Everything here is arithmetic on numbers the engine passes in; the unit
 * test (tests/unit/test_shuffle_pace.c) runs it against a simulated link.
 */
#include "shuffle_internal.h"

int wsp__pace_init(wsp__pace_t *p, wsp_shuffle_mode_t mode, double rate,
                   double batch, double window_max, double now) {
  p->mode = mode;
  p->batch = batch;
  p->window_max = window_max;
  p->rate = rate;
  /* One batch: when all ranks start at once, every queued batch inflates
   * the first round trips and with them the base estimates (see above). */
  p->cwnd = batch < window_max ? batch : window_max;
  p->cwnd_lo_seen = p->cwnd_hi_seen = p->cwnd;
  p->slow_start = 1;
  p->avg_cost = 0;
  p->srtt = 0;
  p->round_target = p->cwnd;
  p->round_acked = 0;
  p->round_qmin = 0;
  p->round_samples = 0;
  p->tokens = batch;
  p->t_last = now;
  p->base_min = 0;
  p->n_increase = p->n_decrease = p->n_halve = 0;
  return WSP_OK;
}

double wsp__pace_unit(const wsp__pace_t *p) {
  return p->avg_cost > p->batch ? p->avg_cost : p->batch;
}

double wsp__pace_window(const wsp__pace_t *p) {
  return p->mode == WSP_SHUFFLE_FIXED ? p->window_max : p->cwnd;
}

int wsp__pace_may_send(wsp__pace_t *p, double inflight, double now) {
  if (p->mode == WSP_SHUFFLE_FIXED) {
    double burst = wsp__pace_unit(p);
    if (now > p->t_last) {
      p->tokens += p->rate * (now - p->t_last);
      if (p->tokens > burst) p->tokens = burst;
    }
    p->t_last = now;
    return inflight < p->window_max && p->tokens > 0;
  }
  return inflight < p->cwnd;
}

void wsp__pace_sent(wsp__pace_t *p, double cost) {
  if (p->mode == WSP_SHUFFLE_FIXED) p->tokens -= cost;
}

static void wsp__pace_clamp(wsp__pace_t *p) {
  double lo = wsp__pace_unit(p);
  double hi = p->window_max > lo ? p->window_max : lo;
  if (p->cwnd < lo) p->cwnd = lo;
  if (p->cwnd > hi) p->cwnd = hi;
  if (p->cwnd < p->cwnd_lo_seen) p->cwnd_lo_seen = p->cwnd;
  if (p->cwnd > p->cwnd_hi_seen) p->cwnd_hi_seen = p->cwnd;
}

/* The end of a round: one decision from the round's best sample. */
static void wsp__pace_decide(wsp__pace_t *p) {
  double u = wsp__pace_unit(p), q = p->round_qmin;
  /* The window the path holds without a queue, by the same sample, plus
   * the queue the controller aims at. */
  double want = p->round_w - q + WSP__PACE_TARGET * u;
  if (p->round_xmin > WSP__PACE_SEVERE) {
    p->cwnd *= 0.5;
    p->slow_start = 0;
    p->n_halve++;
  } else if (q > (p->slow_start ? WSP__PACE_ALPHA : WSP__PACE_BETA) * u) {
    /* Too much queued (in slow start: any queue at all, since the window
     * doubled past the path). Go straight to the window this sample
     * implies, but at least one step and at most half of it at a time. */
    double next = p->cwnd - WSP__PACE_STEP * u;
    if (want < next) next = want;
    if (next < 0.5 * p->cwnd) next = 0.5 * p->cwnd;
    p->cwnd = next;
    p->slow_start = 0;
    p->n_decrease++;
  } else if (q < WSP__PACE_ALPHA * u) {
    p->cwnd = p->slow_start ? 2.0 * p->cwnd : p->cwnd + WSP__PACE_STEP * u;
    p->n_increase++;
  } else {
    p->slow_start = 0;
  }
  wsp__pace_clamp(p);
  p->round_target = p->cwnd;
  p->round_acked = 0;
  p->round_samples = 0;
}

void wsp__pace_ack(wsp__pace_t *p, double rtt, double cost, double inflight) {
  if (!(rtt > 0) || !(cost > 0)) return;
  p->avg_cost = p->avg_cost > 0
                    ? p->avg_cost + (cost - p->avg_cost) / WSP__PACE_GAIN
                    : cost;
  p->srtt = p->srtt > 0 ? p->srtt + (rtt - p->srtt) / WSP__PACE_GAIN : rtt;
  if (p->mode == WSP_SHUFFLE_FIXED) return;
  double per_byte = rtt / cost;
  if (p->base_min == 0 || per_byte < p->base_min) p->base_min = per_byte;
  double base = p->base_min * cost;
  double w = inflight > cost ? inflight : cost;
  double q = w * (1.0 - base / rtt);
  double x = rtt / (base * (1.0 + w / cost));
  if (p->round_samples == 0 || q < p->round_qmin) {
    p->round_qmin = q;
    p->round_w = w;
  }
  if (p->round_samples == 0 || x < p->round_xmin) p->round_xmin = x;
  p->round_samples++;
  p->round_acked += cost;
  if (p->round_acked >= p->round_target) wsp__pace_decide(p);
}
