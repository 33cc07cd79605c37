/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Pacing of the all-pairs shuffle: how fast batches may enter the network.
 *
 * What congests. Requests are small; each is answered by a response that
 * may be many times larger (the "fold"). Responses to a rank converge on
 * its downlink from its peers, and each responder's uplink is shared by all
 * who ask it. If requesters keep asking, responders keep answering, queues
 * build in socket buffers and in the shallow switch buffers, TCP flows lose
 * packets in bursts, and goodput collapses (the G-thinker note,
 * docs/shuffle.md). A requester controls exactly how much response data
 * heads its way: what it asks for. So the controller runs at the requester
 * and paces its requests: a batch costs its request bytes plus its expected
 * response bytes, and costs leave through a token bucket at a rate (burst:
 * one batch), with cfg.window as a cap on the volume in flight. Peers on
 * the same node are not paced (shuffle_request.c).
 *
 * Fixed mode: the rate is cfg.rate. This is the hand-tuned approach of
 * G-thinker (a sleep after each batch, proportional to p, chosen so that the
 * send rate stays near a value found safe on that cluster), done smoothly.
 *
 * Adaptive mode: slow start, then the rate steers the standing queue to a
 * target. Time is cut into intervals (at least WSP__PACE_MIN_ACKS answers,
 * WSP__PACE_MIN_IV seconds and WSP__PACE_MIN_IV_RTTS unloaded round
 * trips; on netlab shorter intervals of 4 answers made D swing several
 * times over from one interval to the next and the controller decrease on
 * noise: docs/results/shuffle.md, "How the controller got here"). For
 * each interval the controller knows the delivered rate (answered cost
 * over the interval), smoothed over intervals into D, and the interval's
 * smallest round-trip time per byte s_k; b, the smallest ever, is the
 * unloaded path. The standing queue is
 *     q_k = (s_k - b) . c . D
 * bytes (c: a batch's cost): the delay even the least delayed batch of the
 * interval met, times the rate at which the path drains, smoothed over
 * intervals into q (the newest weighs 1/WSP__PACE_Q_GAIN). Subtracting b,
 * rather than counting bytes in flight, keeps a long path's bytes in
 * flight (Little's law) from reading as a queue. Then, once paced:
 *   - the rate is D plus what fills the queue up to T = WSP__PACE_TARGET
 *     batches within WSP__PACE_TAU intervals, or D less what drains it to T:
 *         rate = D + (T - q) / (WSP__PACE_TAU x interval),
 *     and below T at least D x (1 + WSP__PACE_AI x (T - q) / T), so that a
 *     fast path, where T batches are little next to D, still climbs by up
 *     to 5% per interval; a step up is at most WSP__PACE_STEP of the
 *     larger of rate and D, a step down at most to WSP__PACE_MD_DEEP x D.
 *     The queue integrates the difference between the rate and what the
 *     path carries, so the rate settles where q = T and rate = D: at the
 *     path's share, with T batches standing;
 *   - a guard: q over WSP__PACE_OVER x T (capacity fell, or T is far too
 *     high for the path): a decrease to WSP__PACE_MD x min(rate, D), less
 *     what drains the excess over the floor (below) within
 *     WSP__PACE_DRAIN_IV intervals, but to no less than WSP__PACE_MD_DEEP x
 *     D unless the rate was already lower; then a hold (no change) for
 *     WSP__PACE_HOLD_MAX interval(s) while the queue drains;
 *   - the rate never exceeds WSP__PACE_CAP times the largest recent D (a
 *     requester with little to send does not bank a huge rate, like TCP's
 *     window validation), nor falls below one batch per WSP__PACE_FLOOR_S;
 *   - no answer at all for WSP__PACE_STALL_RTTS unloaded round trips, 4
 *     smoothed ones and WSP__PACE_STALL_MIN s while batches are in flight:
 *     a stall (timeouts, a dead link): halve.
 *
 * Why a target queue. In a stable queue goodput equals the offered rate, so
 * a controller whose rate averages 0.95 of the path's share delivers 0.95
 * of it, however full the queues are. And all-pairs traffic needs a queue
 * standing: responders serve many requesters and requesters hear from many
 * responders, so with little queued, random collisions leave some links
 * idle while others are busy. A rule that decreases when q rises instead
 * (AIMD on its trend) decreases on noise, since q swings from one interval
 * to the next by about as much as any threshold that catches a real rise,
 * and its rate averages below what the path carries; steering to a target
 * comes close to a fixed rate of B, the most the lab carries
 * (docs/results/shuffle.md, "Steering to a target queue", has the rules
 * tried and their figures). The price is the queue: with T = 30 a requester keeps
 * many batches of expected responses in flight, a batch's round trip on a
 * slow link grows to seconds, and the engine's own peak memory per rank
 * grows to what a fixed rate of B also reaches (most of the queue stands in
 * the responders' socket buffers). Like TCP Vegas' alpha, T is per
 * requester: k requesters behind one bottleneck hold k x T (the unit test's
 * four requesters, tests/unit/test_shuffle_pace.c).
 *
 * Slow start. The rate needs a first value, and a rate without a window
 * would flood a path whose capacity it overestimates before any answer
 * could tell (four requesters starting at one batch per 10 ms behind one
 * 25 Mbit/s link flooded the unit test's simulated link). So it starts
 * like TCP: a window of one batch, grown by each answer's cost (doubling
 * per round trip) while it is used, unpaced.
 * It ends once the standing queue passes WSP__PACE_SS_LEVEL batches, and
 * the rate then comes from the steering rule above, with D the last
 * interval's rate if higher (all ranks start at once, and the smoothed rate
 * still carries the start-up): D plus what fills the rest of the queue, at
 * most WSP__PACE_STEP over D. There is no decrease and no hold: a queue
 * under the target is no reason to slow down. Why this level: ending slow
 * start at the first rise of the queue fires on noise (q swings by about
 * such a rise from one interval to the next), at different moments on
 * different ranks, each leaving at whatever rate its last interval
 * delivered; the fill that follows grows every rate in proportion, so the
 * ranks that left low stay low for seconds. A level of 8 batches is well above that noise, and
 * all requesters see the shared queue grow through it at about the same
 * time. Not higher: at 15 batches (half the target) the last doublings of
 * every window, unpaced, put bursts of several MB per rank in flight under
 * SimGrid, whose links share their capacity among all messages at once, so
 * that the responses of a burst finished together and whole seconds passed
 * with nothing delivered, and goodput fell well below that of 8 batches
 * (docs/results/shuffle.md, "Leaving slow start"). After slow start the
 * volume in flight is still capped, loosely, at WSP__PACE_WIN_GAIN times
 * rate x srtt (at least WSP__PACE_WIN_MIN batches): a safety net for a rate
 * that is wrong, not the control (the rate is).
 *
 * Fairness. The queueing signal is shared by all requesters of an all-pairs
 * exchange, and nothing in it says which requester has more than its share:
 * a change that scales every rate by a factor keeps the ratios between
 * requesters' rates where they happen to be (multiplicative increase with
 * multiplicative decrease does not converge, Chiu and Jain 1989), and
 * requesters whose unloaded path b was measured differently read the same
 * queue differently. Left alone, one host's rate can sit well below the
 * median host's for many seconds, and its goodput with it. So request batches carry their requester's rate (wire
 * format, shuffle_internal.h), each rank hands the controller the median of
 * the rates its peers reported in the last WSP__PACE_PEER_AGE seconds
 * (wsp__pace_peers), and after steering the rate moves half the gap to
 * WSP__PACE_FAIR x that median from below, or to the median /
 * WSP__PACE_FAIR from above (docs/results/shuffle.md, "Fairness between
 * requesters"). A
 * requester only reports while pacing holds it back (it was refused a batch
 * within WSP__PACE_LIMITED_S): one that asks less than its rate allows,
 * having little to send, says nothing about the network's share, and its
 * low rate must not hold back those that have more. The guard's decreases
 * are left as they are: they answer the queue, which comes first. The
 * median also ends slow start: a requester still in it once others are
 * paced (it started late, or is the last to leave) leaves it when its
 * window's rate reaches their median, at that rate. Without this, a
 * requester that started while others held a queue standing took that queue
 * for its unloaded path and grew its window far past the target before it
 * saw a queue at all, then kept more than a fair share for tens of seconds;
 * with the median it leaves slow start near the target and the shares even
 * out (the unit test's latecomer, tests/unit/test_shuffle_pace.c, checks
 * both).
 *
 * Everything here is arithmetic on numbers the engine passes in; the unit
 * test (tests/unit/test_shuffle_pace.c) runs it against a simulated link.
 */
#include "shuffle_internal.h"

#include <math.h>
#include <stdlib.h>

int wsp__pace_init(wsp__pace_t *p, wsp_shuffle_mode_t mode, double rate,
                   double batch, double window_max, double now) {
  p->mode = mode;
  p->batch = batch;
  p->window_max = window_max;
  p->rate = mode == WSP_SHUFFLE_FIXED ? rate : batch / WSP__PACE_START_S;
  p->cwnd = batch;
  p->good = 0;
  p->dsmooth = 0;
  p->rate_lo_seen = p->rate_hi_seen = p->rate;
  p->slow_start = mode == WSP_SHUFFLE_ADAPTIVE;
  p->avg_cost = 0;
  p->srtt = 0;
  p->base = 0;
  p->iv_start = now;
  p->iv_acked = 0;
  p->iv_smin = 0;
  p->iv_acks = 0;
  p->prev_q = 0;
  p->have_prev_q = 0;
  p->floor = 0;
  p->have_floor = 0;
  p->hold = 0;
  p->ndelivered = 0;
  p->tokens = batch;
  p->t_last = now;
  p->peer_ref = 0;
  p->n_increase = p->n_decrease = p->n_stall = p->n_intervals = 0;
  p->n_toward_median = p->n_joined = p->n_exited = 0;
  return WSP_OK;
}

double wsp__pace_unit(const wsp__pace_t *p) {
  return p->avg_cost > p->batch ? p->avg_cost : p->batch;
}

double wsp__pace_rate(const wsp__pace_t *p) {
  /* In slow start the window rules; the rate it achieves is what shows. */
  if (p->mode == WSP_SHUFFLE_ADAPTIVE && p->slow_start && p->srtt > 0)
    return p->cwnd / p->srtt;
  return p->rate;
}

double wsp__pace_window(const wsp__pace_t *p) { return p->window_max; }

double wsp__pace_report(const wsp__pace_t *p) {
  return p->mode == WSP_SHUFFLE_ADAPTIVE && !p->slow_start ? p->rate : 0;
}

/* The unloaded round trip of one batch (0 before any answer). */
static double wsp__pace_base_rtt(const wsp__pace_t *p) {
  return p->base * wsp__pace_unit(p);
}

/* The paced phase's safety cap on the volume in flight. */
static double wsp__pace_cap(const wsp__pace_t *p) {
  double rtt = p->srtt > wsp__pace_base_rtt(p) ? p->srtt : wsp__pace_base_rtt(p);
  double cap = WSP__PACE_WIN_GAIN * p->rate * rtt;
  double lo = WSP__PACE_WIN_MIN * wsp__pace_unit(p);
  return cap > lo ? cap : lo;
}

static void wsp__pace_new_interval(wsp__pace_t *p, double now) {
  p->iv_start = now;
  p->iv_acked = 0;
  p->iv_smin = 0;
  p->iv_acks = 0;
}

/* The steering rule (see the top of this file): the delivered rate d plus
 * what fills the standing queue q up to the target within WSP__PACE_TAU
 * intervals of t seconds (or less what drains it), at least
 * WSP__PACE_AI x how far below the target as a fraction of d, at most
 * WSP__PACE_STEP over `from`, at least WSP__PACE_MD_DEEP x d; then half
 * the way into [WSP__PACE_FAIR, 1 / WSP__PACE_FAIR] x the peers' median. */
static double wsp__pace_steer(wsp__pace_t *p, double d, double q, double target,
                              double t, double from) {
  double r = d + (target - q) / (WSP__PACE_TAU * t);
  if (q < target && r < d * (1 + WSP__PACE_AI * (target - q) / target))
    r = d * (1 + WSP__PACE_AI * (target - q) / target);
  double top = (1 + WSP__PACE_STEP) * from;
  if (r > top) r = top;
  if (r < WSP__PACE_MD_DEEP * d) r = WSP__PACE_MD_DEEP * d;
  double lo = WSP__PACE_FAIR * p->peer_ref, hi = p->peer_ref / WSP__PACE_FAIR;
  if (p->peer_ref > 0 && r < lo) {
    r += 0.5 * (lo - r); /* well below the others: catch up */
    p->n_toward_median++;
  } else if (p->peer_ref > 0 && r > hi) {
    r -= 0.5 * (r - hi); /* well above them: give way */
    p->n_toward_median++;
  }
  return r;
}

/* The end of an adaptive interval. */
static void wsp__pace_decide(wsp__pace_t *p, double now, int stalled) {
  double t = now - p->iv_start, u = wsp__pace_unit(p);
  if (!(t > 0)) return;
  p->n_intervals++;
  if (stalled) {
    if (p->slow_start) {
      p->cwnd *= 0.5;
      if (p->cwnd < u) p->cwnd = u;
    } else {
      p->rate *= 0.5;
    }
    p->have_prev_q = 0;
    p->have_floor = 0;
    p->hold = 1;
    p->n_stall++;
  } else {
    double d1 = p->iv_acked / t;
    p->dsmooth = p->dsmooth > 0 ? p->dsmooth + (d1 - p->dsmooth) / WSP__PACE_D_GAIN : d1;
    /* Leaving slow start, the smoothed rate still carries the start-up
     * (all ranks starting at once): the last interval is the better guide. */
    double d = p->slow_start && d1 > p->dsmooth ? d1 : p->dsmooth;
    double c = p->avg_cost > 0 ? p->avg_cost : u;
    double q = (p->iv_smin - p->base) * c * d;
    if (q < 0) q = 0;
    if (p->have_prev_q) q = p->prev_q + (q - p->prev_q) / WSP__PACE_Q_GAIN;
    if (!p->have_floor || q < p->floor) p->floor = q;
    p->have_floor = 1;
    double target = WSP__PACE_TARGET * u;
    if (p->slow_start) {
      if (q > WSP__PACE_SS_LEVEL * u) {
        /* A queue stands: from here the rate steers, starting at what
         * this interval delivered. */
        p->rate = wsp__pace_steer(p, d, q, target, t, d);
        p->good = d;
        p->slow_start = 0;
        p->have_floor = 0;
        p->n_exited++;
      }
    } else if (q > WSP__PACE_OVER * target) {
      /* The guard (capacity fell, or the target is far too high for this
       * path): below what was delivered, and by enough to drain the excess
       * over the floor within WSP__PACE_DRAIN_IV intervals, but to no less
       * than WSP__PACE_MD_DEEP x D. The floor never lifts the rate: when
       * the rate was already below it (after a stall, or giving way to the
       * peers' median while D lags), the decrease is WSP__PACE_MD x rate. */
      double r = WSP__PACE_MD * (d < p->rate ? d : p->rate);
      double lo = WSP__PACE_MD_DEEP * d;
      if (lo > r) lo = r;
      r -= (q - p->floor) / (WSP__PACE_DRAIN_IV * t);
      p->rate = r > lo ? r : lo;
      p->good = d;
      p->hold = 1;
      p->have_floor = 0; /* a new epoch: its floor is where it drains to */
      p->n_decrease++;
    } else if (p->hold) {
      /* Still draining? Then keep holding, for a while. */
      if (!(p->have_prev_q && q < p->prev_q - WSP__PACE_DRAIN * u) ||
          ++p->hold > WSP__PACE_HOLD_MAX)
        p->hold = 0;
    } else {
      double r = wsp__pace_steer(p, d, q, target, t, p->rate > d ? p->rate : d);
      if (r > p->rate) p->n_increase++;
      p->rate = r;
    }
    p->prev_q = q;
    p->have_prev_q = 1;
    if (p->ndelivered < WSP__PACE_HISTORY) {
      p->delivered[p->ndelivered++] = d1;
    } else {
      for (int i = 1; i < WSP__PACE_HISTORY; i++)
        p->delivered[i - 1] = p->delivered[i];
      p->delivered[WSP__PACE_HISTORY - 1] = d1;
    }
  }
  double dmax = 0;
  for (int i = 0; i < p->ndelivered; i++)
    if (p->delivered[i] > dmax) dmax = p->delivered[i];
  double cap = WSP__PACE_CAP * dmax;
  if (!p->slow_start && dmax > 0 && p->rate > cap) p->rate = cap;
  if (p->rate < u / WSP__PACE_FLOOR_S) p->rate = u / WSP__PACE_FLOOR_S;
  if (p->rate < p->rate_lo_seen) p->rate_lo_seen = p->rate;
  if (p->rate > p->rate_hi_seen) p->rate_hi_seen = p->rate;
  wsp__pace_new_interval(p, now);
}

void wsp__pace_peers(wsp__pace_t *p, double median) {
  p->peer_ref = median > 0 && isfinite(median) ? median : 0;
}


int wsp__pace_may_send(wsp__pace_t *p, double inflight, double now) {
  if (p->mode == WSP_SHUFFLE_ADAPTIVE) {
    double stall = WSP__PACE_STALL_RTTS * wsp__pace_base_rtt(p);
    if (stall < 4 * p->srtt) stall = 4 * p->srtt;
    if (stall < WSP__PACE_STALL_MIN) stall = WSP__PACE_STALL_MIN;
    if (now - p->iv_start >= stall) {
      if (p->iv_acks > 0)
        wsp__pace_decide(p, now, 0);
      else if (inflight > 0)
        wsp__pace_decide(p, now, 1);
      else /* idle: nothing was asked, nothing to judge */
        wsp__pace_new_interval(p, now);
    }
  }
  double burst = wsp__pace_unit(p);
  if (now > p->t_last) {
    p->tokens += p->rate * (now - p->t_last);
    if (p->tokens > burst) p->tokens = burst;
  }
  p->t_last = now;
  if (inflight >= p->window_max) return 0;
  if (p->mode == WSP_SHUFFLE_FIXED) return p->tokens > 0;
  if (p->slow_start) return inflight < p->cwnd;
  return inflight < wsp__pace_cap(p) && p->tokens > 0;
}

void wsp__pace_sent(wsp__pace_t *p, double cost) {
  if (p->mode == WSP_SHUFFLE_FIXED || !p->slow_start) p->tokens -= cost;
}

void wsp__pace_ack(wsp__pace_t *p, double rtt, double cost, double inflight,
                   double now) {
  if (!(rtt > 0) || !(cost > 0)) return;
  p->avg_cost = p->avg_cost > 0
                    ? p->avg_cost + (cost - p->avg_cost) / WSP__PACE_GAIN
                    : cost;
  p->srtt = p->srtt > 0 ? p->srtt + (rtt - p->srtt) / WSP__PACE_GAIN : rtt;
  if (p->mode == WSP_SHUFFLE_FIXED) return;
  double s = rtt / cost;
  if (p->base == 0 || s < p->base) p->base = s;
  /* Slow start: the window grows by what was answered while it is used
   * (at least half full, as TCP validates its window). */
  if (p->slow_start && inflight + cost >= 0.5 * p->cwnd) {
    p->cwnd += cost;
    if (p->cwnd > p->window_max) p->cwnd = p->window_max;
  }
  /* Others are paced already (this rank started late, or is the last to
   * leave slow start): their median rate is the share to start from. */
  if (p->slow_start && p->peer_ref > 0 && p->cwnd / p->srtt >= p->peer_ref) {
    p->slow_start = 0;
    p->rate = p->good = p->peer_ref;
    p->have_floor = 0;
    p->n_joined++;
  }
  if (p->iv_acks == 0 || s < p->iv_smin) p->iv_smin = s;
  p->iv_acks++;
  p->iv_acked += cost;
  double min_t = WSP__PACE_MIN_IV_RTTS * wsp__pace_base_rtt(p);
  if (min_t < WSP__PACE_MIN_IV) min_t = WSP__PACE_MIN_IV;
  if (p->iv_acks >= WSP__PACE_MIN_ACKS && now - p->iv_start >= min_t)
    wsp__pace_decide(p, now, 0);
}
