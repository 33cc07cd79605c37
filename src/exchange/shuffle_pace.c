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
 * the same node are not paced (shuffle.c).
 *
 * Fixed mode: the rate is cfg.rate. This is the hand-tuned approach of
 * G-thinker (a sleep after each batch, proportional to p, chosen so that the
 * send rate stays near a value found safe on that cluster), done smoothly.
 *
 * Adaptive mode: AIMD on the rate, driven by the trend of the standing
 * queue. Time is cut into intervals (at least WSP__PACE_MIN_ACKS answers,
 * WSP__PACE_MIN_IV seconds and WSP__PACE_MIN_IV_RTTS unloaded round
 * trips; on netlab shorter intervals of 4 answers made D swing between 1
 * and 7 MB/s and the controller decrease on noise). For each interval the
 * controller knows the delivered rate (answered cost over the interval),
 * smoothed over intervals into D, and the interval's smallest round-trip
 * time per byte s_k; b, the smallest ever, is the unloaded path. The
 * standing queue is
 *     q_k = (s_k - b) . c . D
 * bytes (c: a batch's cost): the delay even the least delayed batch of the
 * interval met, times the rate at which the path drains, smoothed over
 * intervals into q (the newest weighs 1/WSP__PACE_Q_GAIN). The smallest of
 * a few round trips is a noisy sample: on netlab (16 hosts x 25 Mbit/s) it
 * swung between 1 and 4 batches from one interval to the next, and against
 * a floor that is the lowest sample since the last decrease the raw value
 * triggered a decrease every 3-4 s whatever the rate, a sawtooth between
 * 0.65 and 1.0 of B that delivered 0.75 of B where a fixed 0.8 B delivered
 * 0.80. Then:
 *   - q exceeds its floor (the smallest q since the last decrease: the
 *     level the queue drained to) by more than WSP__PACE_GROW batches:
 *     requests arrive faster than they are served somewhere on the path.
 *     (Compared with the previous interval instead, a slowly rising rate
 *     let the queue creep up by a batch per interval, unnoticed.) Also when
 *     q exceeds WSP__PACE_LEVEL batches whatever its floor: a guard on the
 *     level (on netlab q stayed within 0-3.5 batches; after a simulated
 *     drop of capacity, the floor alone let 29 batches stand);
 *     Rate = WSP__PACE_MD x min(rate, D), lowered further so that the
 *     excess over the floor drains within WSP__PACE_DRAIN_IV intervals (at
 *     most to WSP__PACE_MD_MIN x D, or to WSP__PACE_MD_DEEP x D when the
 *     level guard fired): a multiplicative decrease that also removes the
 *     queue; D is remembered as the last good rate. (The decrease was
 *     0.85 D, down to 0.8 D with the drain, whatever the queue. On netlab a
 *     rise of the minimum 2 batches over 8 answers already gave a drain
 *     term of about 0.06 D, so every decrease went to 0.8 D, and adaptive
 *     settled near 0.84 of B where a fixed rate at B carried 0.90 once the
 *     responses went eagerly; with 0.95 D, no less than 0.85 D, it gave
 *     0.854-0.855 against 0.839-0.842 side by side, and the unit test's
 *     long path 0.95 instead of 0.92 of its link. Deep decreases are kept
 *     for a queue over the level: without them, 0.93 D / 0.9 D let 30
 *     batches stand after the unit test's capacity drop.) Then hold
 *     (no increase) for WSP__PACE_HOLD_MAX interval(s) while the queue
 *     drains (fewer if q stops falling by more than half a batch per
 *     interval; with the limit at 1 that cannot happen): increasing before
 *     it has drained would let the standing queue ratchet upwards from
 *     cycle to cycle. The decrease was
 *     once allowed down to D/2 and the hold to 4 intervals; per-rank rates
 *     on netlab (16 x 1) showed that the dips of single hosts' goodput
 *     (0.3-0.5 of B for 3-6 s, which set the worst 5-s window) were exactly
 *     such decreases: at a low rate an interval (8 answers) lasts long, and
 *     4 of them held the rate at 0.4-0.5 of B for seconds while the queue
 *     had long drained. Side by side on one lab (30-s runs, two each)
 *     adaptive went from 0.773 to 0.790 of B and its worst 5-s window
 *     from 0.69 to 0.81 of its mean with the limits at 0.8 D and 1;
 *   - otherwise, below the last good rate, close half the gap to it per
 *     interval (as CUBIC returns quickly to its last window), and above it
 *     probe: add WSP__PACE_AI of the rate per interval. (A probe that grew
 *     by a further WSP__PACE_AI in each interval without a rise, up to +25%,
 *     climbed faster from a low start but overshot to 1.5-2 B on netlab
 *     before the queue it built was seen, a round trip and an interval
 *     later; the burst and the deeper decrease that followed cost more
 *     than the faster climb gained.)
 *   - the rate never exceeds WSP__PACE_CAP times the largest recent D (a
 *     requester with little to send does not bank a huge rate, like TCP's
 *     window validation), nor falls below one batch per WSP__PACE_FLOOR_S;
 *   - no answer at all for WSP__PACE_STALL_RTTS unloaded round trips, 4
 *     smoothed ones and WSP__PACE_STALL_MIN s while batches are in flight:
 *     a stall (timeouts, a dead link): halve.
 * The rate needs a first value, and a rate without a window would flood a
 * path whose capacity it overestimates before any answer could tell (four
 * requesters starting at one batch per 10 ms behind one 25 Mbit/s link
 * queued 120 batches each in the simulation). So it starts like TCP: slow
 * start is a window of one batch, grown by each answer's cost (doubling per
 * round trip) while it is used, unpaced; the first growth of the standing
 * queue ends it with a decrease as above (WSP__PACE_MD x D less the drain
 * term, at least WSP__PACE_MD_MIN x D). After that the volume in
 * flight is still capped, loosely, at WSP__PACE_WIN_GAIN times rate x srtt
 * (at least WSP__PACE_WIN_MIN batches): a safety net for a rate that is
 * wrong, not the control (the rate is).
 *
 * Why the trend and not the level (as TCP Vegas does; that was the first
 * version). In an all-pairs exchange much of what a requester has in
 * flight waits behind other requesters' batches at the responders: that
 * sharing is what keeps every uplink busy (with few batches in flight per
 * requester, random collisions leave some responders idle and others
 * overloaded), so its level says little about congestion; and a level
 * compared with a base that each requester estimates differently made
 * requesters unequal. On netlab (16 hosts x 25 Mbit/s) Vegas held about
 * five batches in flight and 0.69-0.74 of B, while pacing at the right
 * fixed rate gave 0.82. The trend is what tells "above the share the
 * network gives me" (the queue keeps growing) from "at or below it" (it
 * does not), whatever its level; and because responders serve requesters
 * round robin, D is a requester's fair share once the path is full, so the
 * decrease to a fraction of D makes competing requesters converge to equal
 * rates. Subtracting b from s_k, rather than counting bytes in flight,
 * keeps slow start on a long path from reading the bytes in flight that
 * its growing rate needs (Little's law) as a queue.
 *
 * Fairness. Every decrease scales a rate by a factor and every probe by a
 * fraction, and the queueing signal is shared by all requesters of an
 * all-pairs exchange, so ratios between requesters' rates stay where they
 * happen to be: multiplicative increase with multiplicative decrease does
 * not converge to equal shares (Chiu and Jain 1989). On netlab (16 x 1,
 * 25 Mbit/s, 60 s) one host's rate sat at 0.55-0.7 of B for 15 s while the
 * median host's was near 0.9, and its goodput with it: the worst 5-s
 * windows of the whole run. So request batches carry their requester's
 * rate (wire format, shuffle_internal.h), each rank hands the controller
 * the median of the rates its peers reported in the last
 * WSP__PACE_PEER_AGE seconds (wsp__pace_peers), and where the controller
 * would increase it first closes half the gap to WSP__PACE_FAIR x that
 * median from below, or to the median / WSP__PACE_FAIR from above. A
 * requester only reports while pacing holds it back (it was refused a
 * batch within WSP__PACE_LIMITED_S): one that asks less than its rate
 * allows, having little to send, says nothing about the network's share,
 * and its low rate must not hold back those that have more. Decreases are
 * left as they are: they answer the queue, which comes first. The median
 * also ends slow start: a requester still in it once others are paced
 * (it started late, or is the last to leave) leaves it when its window's
 * rate reaches their median, at that rate. Without this, a requester that
 * started while others held a queue standing took that queue for its
 * unloaded path and grew its window to some 170 batches before it saw a
 * queue at all (the unit test's latecomer: 2.1 : 0.5 of a fair share for
 * tens of seconds; with the median, 10 batches and 0.91 : 0.99).
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
  p->n_toward_median = p->n_joined = 0;
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
    if (q - p->floor > WSP__PACE_GROW * u || q > WSP__PACE_LEVEL * u) {
      /* Below what was delivered, and by enough to drain the excess over
       * the floor within WSP__PACE_DRAIN_IV intervals (down to
       * WSP__PACE_MD_MIN x D at most, or WSP__PACE_MD_DEEP x D with a
       * queue over the level). The floor never lifts the rate: when the
       * rate was already below it (after a stall, or giving way to the
       * peers' median while D lags), the decrease is WSP__PACE_MD x rate. */
      double r = WSP__PACE_MD * (p->slow_start || d < p->rate ? d : p->rate);
      double lo = (q > WSP__PACE_LEVEL * u ? WSP__PACE_MD_DEEP : WSP__PACE_MD_MIN) * d;
      if (lo > r) lo = r;
      r -= (q - p->floor) / (WSP__PACE_DRAIN_IV * t);
      p->rate = r > lo ? r : lo;
      p->good = d;
      p->slow_start = 0;
      p->hold = 1;
      p->have_floor = 0; /* a new epoch: its floor is where it drains to */
      p->n_decrease++;
    } else if (p->hold) {
      /* Still draining? Then keep holding, for a while. */
      if (!(p->have_prev_q && q < p->prev_q - WSP__PACE_DRAIN * u) ||
          ++p->hold > WSP__PACE_HOLD_MAX)
        p->hold = 0;
    } else if (!p->slow_start) {
      double up = p->rate * WSP__PACE_AI;
      if (p->rate < p->good && up < 0.5 * (p->good - p->rate))
        up = 0.5 * (p->good - p->rate);
      double lo = WSP__PACE_FAIR * p->peer_ref, hi = p->peer_ref / WSP__PACE_FAIR;
      if (p->peer_ref > 0 && p->rate < lo && up < 0.5 * (lo - p->rate)) {
        up = 0.5 * (lo - p->rate); /* well below the others: catch up */
        p->n_toward_median++;
      } else if (p->peer_ref > 0 && p->rate > hi) {
        up = -0.5 * (p->rate - hi); /* well above them: give way */
        p->n_toward_median++;
      }
      p->rate += up;
      p->n_increase++;
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

static int wsp__cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

double wsp__pace_median(double *v, int n) {
  if (n <= 0) return 0;
  qsort(v, (size_t)n, sizeof *v, wsp__cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
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
