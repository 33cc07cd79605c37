/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Frames in: reading a lane and acting on what it carries.
 *
 * What a lane may carry is checked frame by frame (wsp__on_header): its
 * type against the lane (control frames on lane 0, data on lanes 1..k) and
 * the pair's state (the probe's frames only while probing, and each only
 * on the side and in the phase it belongs to), every id against what this
 * end issued, every length against its bound. A frame that fails fails the
 * pair: the peer is a rank of the job, proven in the handshake, so a bad
 * frame is a bug or a corrupted lane, never something to skip.
 *
 * Sealed lanes (WSP_P2P_ENCRYPT=1) carry each frame as two AES-GCM records
 * (secure.c): the header and its tag, then the payload and its tag. The
 * payload is opened in place as it arrives, in the user's buffer, and
 * counts only when its tag is right.
 */
#define _DEFAULT_SOURCE 1
#include "striped_internal.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

static wsp__sreq_t *wsp__find_rid(wsp__sreq_t *q, uint64_t rid) {
  for (; q; q = q->next)
    if (q->rid == rid) return q;
  return NULL;
}

/* Send s completed: its buffer is the user's again. Lanes forget its
 * chunks, and one still writing a copy of it finishes the frame with
 * zeros (the receiver drops copies of a completed receive). */
static void wsp__send_forget(wsp__pair_t *pr, wsp__sreq_t *s) {
  for (int i = 0; i < pr->nlanes; i++) {
    wsp__lane_t *l = &pr->lane[i];
    if (l->oreq == s) l->ozero = 1;
    int n = 0;
    for (int j = 0; j < l->fl_n; j++) {
      struct wsp__inflight x = l->fl[(l->fl_head + j) % WSP__INFLIGHT];
      if (x.req != s) l->fl[(l->fl_head + n++) % WSP__INFLIGHT] = x;
    }
    l->fl_n = n;
  }
}

/* Why frame f may not arrive on lane li of the pair now, or NULL when it
 * may. The frame's own fields are checked where it is taken (wsp__on_header). */
static const char *wsp__frame_refused(const wsp__stripe_t *st, const wsp__pair_t *pr, int li,
                                      const wsp__frame_t *f) {
  const int ctl = li == 0, data = li >= 1 && li <= pr->k;
  const wsp__pair_state_t s = pr->state;
  const int probing = s == WSP__PAIR_PROBE && pr->probe.phase >= 1;
  switch ((wsp__ftype_t)f->type) {
  case WSP__F_HELLO:
  case WSP__F_CHAL:
  case WSP__F_PROOF:
  case WSP__F_ACK:
    return "a handshake frame on a lane that is up";
  case WSP__F_CTS:
    /* The higher rank may get CTS frames before the verdict reaches it
     * over MPI when the lanes are forced (no probe). */
    if (!ctl) return "a CTS off the control lane";
    if (s == WSP__PAIR_READY ||
        (s == WSP__PAIR_CONNECT && !pr->lower && st->comm->cfg.p2p_lanes > 0))
      return NULL;
    return "a CTS before the lanes were ready";
  case WSP__F_DATA:
    return s == WSP__PAIR_READY && data ? NULL
                                        : "data off the data lanes, or before they were ready";
  case WSP__F_DONE:
    return s == WSP__PAIR_READY && ctl ? NULL : "a confirmation off the control lane";
  case WSP__F_PGO:
    return ctl && s == WSP__PAIR_PROBE && pr->lower && !pr->probe.streaming ? NULL
                                                                            : "a probe start here";
  case WSP__F_PSTOP:
    return ctl && probing && pr->lower && pr->probe.streaming ? NULL : "a probe stop here";
  case WSP__F_PEND:
  case WSP__F_PDATA:
    /* The measurer (higher rank) reads the streamer's lanes of this
     * phase until each has ended. */
    if (!probing || pr->lower || li < 1 || li > pr->probe.lanes || pr->lane[li].pend_seen)
      return "probe data here";
    if (f->type == WSP__F_PEND && !pr->probe.stopped) return "a probe end before its stop";
    return NULL;
  case WSP__F_RESULT:
    return ctl && probing && pr->lower && pr->probe.phase == 2 && !pr->probe.streaming &&
                   pr->probe.stopped
               ? NULL
               : "a probe result here";
  case WSP__F_ERR:
  case WSP__F_BYE:
    return NULL;
  default:
    return "a frame of an unknown type";
  }
}

/* A header has arrived on lane l; returns -1 when the pair failed. */
static int wsp__on_header(wsp__stripe_t *st, wsp__pair_t *pr, wsp__lane_t *l) {
  wsp__frame_t *f = &l->in;
  const int li = (int)(l - pr->lane);
  const char *no = wsp__frame_refused(st, pr, li, f);
  if (no == NULL && !wsp__frame_has_payload(f->type) && f->type != WSP__F_CTS &&
      f->type != WSP__F_RESULT && f->type != WSP__F_PEND && f->len != 0)
    no = "a length on a frame without payload";
  if (no) {
    wsp__pair_fail(st, pr, WSP_ERR_CONN, "rank %d sent %s (frame type %u on lane %d)", pr->peer, no,
                   (unsigned)f->type, li);
    return -1;
  }
  switch ((wsp__ftype_t)f->type) {
  case WSP__F_CTS: {
    /* Sequence numbers are dense from 0; one may arrive early (CTS frames
     * of the same lane arrive in order, so only a bounded window ahead). */
    const wsp__cts_fields_t c = wsp__cts_of(f);
    int dup = 0;
    for (size_t i = 0; i < pr->ncts && !dup; i++) dup = pr->cts[i].seq == c.seq;
    if (c.seq < pr->cts_next || c.seq - pr->cts_next >= WSP__CTS_MAX || dup ||
        c.tag > (uint32_t)INT_MAX || pr->ncts >= WSP__CTS_MAX) {
      wsp__pair_fail(st, pr, WSP_ERR_CONN,
                     "rank %d sent a CTS out of sequence or beyond %d in flight", pr->peer,
                     WSP__CTS_MAX);
      return -1;
    }
    if (pr->ncts == pr->cts_cap) {
      size_t cap = pr->cts_cap ? 2 * pr->cts_cap : 16;
      struct wsp__cts *n = realloc(pr->cts, cap * sizeof *n);
      if (n == NULL) {
        wsp__pair_fail(st, pr, WSP_ERR_NOMEM, "out of memory receiving a CTS");
        return -1;
      }
      pr->cts = n;
      pr->cts_cap = cap;
    }
    pr->cts[pr->ncts++] =
        (struct wsp__cts){.rid = c.rid, .size = c.size, .seq = c.seq, .tag = (int)c.tag};
    wsp__pair_cts_seen(pr);
    wsp__pair_match(st, pr);
    return pr->state == WSP__PAIR_FAILED ? -1 : 0;
  }
  case WSP__F_DATA: {
    const uint64_t rid = wsp__frame_rid(f), off = wsp__data_off(f);
    const uint32_t chunk = wsp__data_chunk(f);
    if (chunk == 0 || chunk > WSP__CHUNK_MAX || f->len > chunk) {
      wsp__pair_fail(st, pr, WSP_ERR_CONN, "rank %d sent data with a chunk size of %u", pr->peer,
                     (unsigned)chunk);
      return -1;
    }
    wsp__sreq_t *r = wsp__find_rid(pr->recvs, rid);
    if (r == NULL && rid < pr->next_rid) {
      /* A late copy for a receive that is complete: dropped. */
      l->ireq = NULL;
      l->ipay = NULL;
      l->ipay_left = (size_t)f->len;
      l->ireading = 1;
      return 0;
    }
    if (r && r->have == NULL) {
      r->chunk = chunk;
      if ((r->have = calloc((r->size + r->chunk - 1) / r->chunk + 1, 1)) == NULL) {
        wsp__pair_fail(st, pr, WSP_ERR_NOMEM, "out of memory receiving from rank %d", pr->peer);
        return -1;
      }
    }
    if (r == NULL || chunk != r->chunk || off % r->chunk != 0 || off >= r->size ||
        f->len != (r->size - off < r->chunk ? r->size - off : r->chunk)) {
      wsp__pair_fail(st, pr, WSP_ERR_CONN,
                     "rank %d sent data for an unknown receive or out of its bounds", pr->peer);
      return -1;
    }
    l->ireq = r;
    l->ipay = (unsigned char *)r->buf + off;
    l->ipay_left = (size_t)f->len;
    l->ireading = 1;
    return 0;
  }
  case WSP__F_PDATA:
    if (f->len != WSP__PROBE_FRAME) {
      wsp__pair_fail(st, pr, WSP_ERR_CONN, "rank %d sent a probe frame of %llu bytes", pr->peer,
                     (unsigned long long)f->len);
      return -1;
    }
    l->ireq = NULL;
    l->ipay = NULL;
    l->ipay_left = (size_t)f->len;
    l->ireading = 1;
    return 0;
  case WSP__F_DONE: {
    wsp__sreq_t *s = wsp__find_rid(pr->active, wsp__frame_rid(f));
    if (s == NULL || !s->matched || s->next_off < s->size) {
      wsp__pair_fail(st, pr, WSP_ERR_CONN, "rank %d confirmed a striped send that is not in flight",
                     pr->peer);
      return -1;
    }
    wsp__q_remove(&pr->active, &pr->active_tail, s);
    wsp__send_forget(pr, s);
    wsp__req_finish(st, s, WSP_OK, NULL);
    return 0;
  }
  case WSP__F_PGO: {
    const uint64_t phase = wsp__probe_phase_of(f);
    const uint32_t lanes = wsp__pgo_lanes(f);
    if (phase != (uint64_t)pr->probe.phase + 1 || phase > 2 || lanes < 1 ||
        lanes > (uint32_t)(pr->nlanes - 1)) {
      wsp__pair_fail(st, pr, WSP_ERR_CONN, "rank %d started probe phase %llu on %u lanes", pr->peer,
                     (unsigned long long)phase, (unsigned)lanes);
      return -1;
    }
    pr->probe.phase = (int)phase;
    pr->probe.lanes = (int)lanes;
    for (uint32_t i = 1; i <= lanes; i++) { /* the loss watch starts afresh */
      pr->lane[i].watched = 0;
      pr->lane[i].losses = 0;
    }
    pr->probe.streaming = 1;
    pr->probe.stopped = 0;
    return 0;
  }
  case WSP__F_PSTOP:
    if (wsp__probe_phase_of(f) != (uint64_t)pr->probe.phase) {
      wsp__pair_fail(st, pr, WSP_ERR_CONN, "rank %d stopped probe phase %llu in phase %d", pr->peer,
                     (unsigned long long)wsp__probe_phase_of(f), pr->probe.phase);
      return -1;
    }
    pr->probe.streaming = 0;
    pr->probe.stopped = 1;
    for (int i = 1; i <= pr->probe.lanes; i++) pr->lane[i].pend_pending = 1;
    return 0;
  case WSP__F_PEND: {
    const wsp__pend_fields_t pf = wsp__pend_of(f);
    if (wsp__probe_phase_of(f) != (uint64_t)pr->probe.phase) {
      wsp__pair_fail(st, pr, WSP_ERR_CONN, "rank %d ended probe phase %llu in phase %d", pr->peer,
                     (unsigned long long)wsp__probe_phase_of(f), pr->probe.phase);
      return -1;
    }
    if (pf.rtt_us > WSP__PROBE_RTT_MAX_US || pf.losses > pf.segs || pf.slow_start > 1) {
      wsp__pair_fail(st, pr, WSP_ERR_CONN, "rank %d ended its probe with TCP figures out of bounds",
                     pr->peer);
      return -1;
    }
    l->pend_seen = 1;
    const int ph = pr->probe.phase - 1;
    pr->probe.segs[ph] += pf.segs;
    pr->probe.losses[ph] += pf.losses;
    pr->probe.slow[ph] += (int)pf.slow_start;
    wsp__probe_rtt_seen(pr, pf.rtt_us);
    wsp__probe_end(st, pr);
    return pr->state == WSP__PAIR_FAILED ? -1 : 0;
  }
  case WSP__F_RESULT: {
    const wsp__result_fields_t res = wsp__result_of(f);
    const double r1 = res.rate1, rk = res.ratek;
    if (res.lanes < 1 || res.lanes > (uint32_t)(pr->nlanes - 1) || res.threshold == 0 ||
        !isfinite(r1) || !isfinite(rk) || r1 < 0 || rk < 0) {
      wsp__pair_fail(st, pr, WSP_ERR_CONN, "rank %d sent a probe result out of bounds", pr->peer);
      return -1;
    }
    pr->k = (int)res.lanes;
    pr->threshold = res.threshold > (uint64_t)SIZE_MAX ? SIZE_MAX : (size_t)res.threshold;
    pr->rate1 = r1;
    pr->ratek = rk;
    /* The round trip of the PEND frames this side sent: the measurer's. */
    if (pr->probe.rtt_us > 0) pr->rtt = pr->probe.rtt_us * 1e-6;
    pr->probe.phase = 3; /* done: no probe frame is taken any more */
    wsp__pair_ready(st, pr);
    return 0;
  }
  case WSP__F_BYE:
    l->bye_seen = 1;
    for (int i = 0; i < pr->nlanes; i++)
      if (!pr->lane[i].bye_seen) return 0;
    /* Every lane said goodbye, after every frame the peer had for us. */
    wsp__pair_closed(st, pr);
    return -1;
  case WSP__F_ERR:
    wsp__pair_fail(st, pr, WSP_ERR_REMOTE, "rank %d failed the striped transfer (%s)", pr->peer,
                   wsp__peer_status_name(wsp__err_negated(f)));
    return -1;
  default: /* wsp__frame_refused took every other type */
    wsp__pair_fail(st, pr, WSP_ERR_INTERNAL, "frame type %u was let through", (unsigned)f->type);
    return -1;
  }
}

static void wsp__on_payload_done(wsp__stripe_t *st, wsp__pair_t *pr, wsp__lane_t *l) {
  l->ireading = 0;
  l->itag_reading = 0;
  l->ihdr_got = 0;
  if (l->in.type == WSP__F_PDATA) return; /* counted as read (wsp__lane_read) */
  wsp__sreq_t *r = l->ireq;
  l->ireq = NULL;
  if (r == NULL) return; /* a copy of a completed receive */
  size_t idx = (size_t)(wsp__data_off(&l->in) / r->chunk);
  if (r->have[idx]) return; /* the other copy came first */
  r->have[idx] = 1;
  r->got += (size_t)l->in.len;
  if (r->got < r->size) return;
  wsp__q_remove(&pr->recvs, &pr->recvs_tail, r);
  pr->nrecvs--;
  /* Copies still arriving must not write into the buffer, which is the
   * user's again. */
  for (int i = 0; i < pr->nlanes; i++)
    if (pr->lane[i].ireq == r) {
      pr->lane[i].ireq = NULL;
      pr->lane[i].ipay = NULL;
    }
  wsp__frame_t f = wsp__frame_done(r->rid);
  if (wsp__pair_ctl(pr, &f) != WSP_OK) {
    wsp__pair_fail(st, pr, WSP_ERR_NOMEM, "out of memory confirming a receive");
    return;
  }
  wsp__req_finish(st, r, WSP_OK, NULL);
}

/* A header (sealed: header and tag) is in: opened, decoded, taken. */
static int wsp__header_in(wsp__stripe_t *st, wsp__pair_t *pr, wsp__lane_t *l, int li) {
  if (l->sealed &&
      (wsp__open_begin(&l->rx) != 0 || wsp__open_update(&l->rx, l->ihdr, WSP__FRAME_HDR) != 0 ||
       wsp__open_finish(&l->rx, l->ihdr + WSP__FRAME_HDR) != 0)) {
    wsp__pair_fail(st, pr, WSP_ERR_CONN, "lane %d to rank %d: a frame failed its integrity check",
                   li, pr->peer);
    return -1;
  }
  if (wsp__frame_decode(l->ihdr, &l->in) != 0) {
    wsp__pair_fail(st, pr, WSP_ERR_CONN, "lane %d to rank %d carried something that is not a frame",
                   li, pr->peer);
    return -1;
  }
  if (wsp__on_header(st, pr, l) != 0) return -1;
  if (!l->ireading) {
    l->ihdr_got = 0;
    return 0;
  }
  if (l->sealed && wsp__open_begin(&l->rx) != 0) {
    wsp__pair_fail(st, pr, WSP_ERR_INTERNAL, "lane %d: the cipher failed", li);
    return -1;
  }
  return 0;
}

/* The payload is in: a sealed one goes on to its tag. */
static void wsp__payload_in(wsp__stripe_t *st, wsp__pair_t *pr, wsp__lane_t *l) {
  if (l->sealed && !l->itag_reading) {
    l->itag_reading = 1;
    l->itag_got = 0;
    return;
  }
  wsp__on_payload_done(st, pr, l);
}

void wsp__lane_read(wsp__stripe_t *st, wsp__pair_t *pr, int li) {
  wsp__lane_t *l = &pr->lane[li];
  const size_t hdr = l->sealed ? WSP__FRAME_HDR + WSP__TAG : WSP__FRAME_HDR;
  size_t budget = 8u << 20;
  while (budget > 0 && pr->state != WSP__PAIR_FAILED && l->fd >= 0) {
    ssize_t n;
    unsigned char *dst = NULL;
    if (!l->ireading) {
      n = recv(l->fd, l->ihdr + l->ihdr_got, hdr - l->ihdr_got, 0);
    } else if (l->itag_reading) {
      n = recv(l->fd, l->itag + l->itag_got, WSP__TAG - l->itag_got, 0);
    } else {
      size_t want = l->ipay_left;
      dst = l->ipay;
      if (dst == NULL) {
        dst = st->scratch;
        if (want > WSP__SCRATCH) want = WSP__SCRATCH;
      }
      if (want == 0) {
        wsp__payload_in(st, pr, l);
        continue;
      }
      n = recv(l->fd, dst, want, 0);
    }
    if (n == 0) {
      if (l->bye_seen) { /* the end after a BYE: the other lanes may have more */
        wsp__lane_release(l, 0);
        return;
      }
      wsp__pair_fail(st, pr, WSP_ERR_CONN, "lane %d to rank %d was closed by the peer", li,
                     pr->peer);
      return;
    }
    if (n < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK) return;
      if (errno == EINTR) continue;
      wsp__pair_fail(st, pr, WSP_ERR_CONN, "lane %d to rank %d: %s", li, pr->peer, strerror(errno));
      return;
    }
    budget = (size_t)n > budget ? 0 : budget - (size_t)n;
    l->bytes_in += (uint64_t)n;
    if (!l->ireading) {
      l->ihdr_got += (size_t)n;
      if (l->ihdr_got < hdr) continue;
      if (wsp__header_in(st, pr, l, li) != 0) return;
      if (l->ireading && l->ipay_left == 0) wsp__payload_in(st, pr, l);
    } else if (l->itag_reading) {
      l->itag_got += (size_t)n;
      if (l->itag_got < WSP__TAG) continue;
      if (wsp__open_finish(&l->rx, l->itag) != 0) {
        wsp__pair_fail(st, pr, WSP_ERR_CONN,
                       "lane %d to rank %d: a frame failed its integrity check", li, pr->peer);
        return;
      }
      wsp__on_payload_done(st, pr, l);
    } else {
      if (l->sealed && wsp__open_update(&l->rx, dst, (size_t)n) != 0) {
        wsp__pair_fail(st, pr, WSP_ERR_INTERNAL, "lane %d: the cipher failed", li);
        return;
      }
      if (l->ipay) l->ipay += n;
      l->ipay_left -= (size_t)n;
      /* The probe's bytes count as they come, not a frame (64 KiB) at a
       * time: its slices are a few frames long (wsp__probe_rate). */
      if (l->in.type == WSP__F_PDATA) wsp__probe_bytes(st, pr, (size_t)n);
      if (l->ipay_left == 0) wsp__payload_in(st, pr, l);
    }
  }
}
