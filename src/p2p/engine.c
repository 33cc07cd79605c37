/*
 * The striped engine's progress loop (the protocol is described in
 * striped_internal.h).
 *
 * One pass polls every lane of every pair, the listeners and the
 * connections not yet proven (handshake.c), then reads what arrived,
 * writes what can go, and advances the set-ups. Reads always drain: a lane
 * is never left unread because its frames have nowhere to go (payload for
 * nobody is read into scratch), so two ranks that both write can never
 * block each other. Writes of DATA and probe frames stop after one frame
 * per lane and pass: the next chunk goes to the lane only when poll
 * reports it writable again, that is when TCP_NOTSENT_LOWAT says its
 * backlog has drained.
 *
 * What a lane may carry is checked frame by frame (on_header): its type
 * against the lane (control frames on lane 0, data on lanes 1..k) and the
 * pair's state (the probe's frames only while probing, and each only on
 * the side and in the phase it belongs to), every id against what this end
 * issued, every length against its bound. A frame that fails fails the
 * pair: the peer is a rank of the job, proven in the handshake, so a bad
 * frame is a bug or a corrupted lane, never something to skip.
 *
 * Sealed lanes (WSP_P2P_ENCRYPT=1) carry each frame as two AES-GCM records
 * (secure.c): the header and its tag, then the payload and its tag. The
 * payload is opened in place as it arrives, in the user's buffer, and
 * counts only when its tag is right.
 *
 * The probe. Set-up in auto mode (cfg.p2p_lanes = 0) measures the pair
 * once: the higher rank asks the lower one to stream over one lane, then
 * over all lanes opened, and times what arrives, leaving out the first
 * third of each phase (TCP's slow start). The ratio of the two rates tells
 * whether several connections beat one (a per-flow cap, a window over a
 * long round trip) and how many lanes to use; the round trip of the first
 * request sets the smallest message worth striping.
 */
#define _DEFAULT_SOURCE 1
#include "striped_internal.h"

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

/* linux/sockios.h: unsent bytes in a TCP socket's send queue; and all
 * bytes not yet acknowledged by the peer (TIOCOUTQ). */
#define WSP__SIOCOUTQNSD 0x894B
#define WSP__SIOCOUTQ 0x5411

double wsp__now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---- queues ---- */

static void q_push(wsp__sreq_t **head, wsp__sreq_t **tail, wsp__sreq_t *r) {
  r->next = NULL;
  if (*tail)
    (*tail)->next = r;
  else
    *head = r;
  *tail = r;
}

static void q_remove(wsp__sreq_t **head, wsp__sreq_t **tail, wsp__sreq_t *r) {
  wsp__sreq_t *prev = NULL;
  for (wsp__sreq_t *x = *head; x; prev = x, x = x->next)
    if (x == r) {
      if (prev)
        prev->next = x->next;
      else
        *head = x->next;
      if (*tail == x) *tail = prev;
      x->next = NULL;
      return;
    }
}

int wsp__pair_ctl(wsp__pair_t *pr, const wsp__frame_t *f) {
  if (pr->nctl == pr->ctl_cap) {
    size_t cap = pr->ctl_cap ? 2 * pr->ctl_cap : 16;
    wsp__frame_t *n = realloc(pr->ctl, cap * sizeof *n);
    if (n == NULL) return WSP_ERR_NOMEM;
    pr->ctl = n;
    pr->ctl_cap = cap;
  }
  pr->ctl[pr->nctl++] = *f;
  return WSP_OK;
}

void wsp__req_finish(wsp__stripe_t *st, wsp__sreq_t *r, int status, const char *why) {
  if (r->done) return;
  r->done = 1;
  r->status = status;
  if (status != WSP_OK && why) snprintf(r->why, sizeof r->why, "%s", why);
  if (st) st->live--;
}

/* ---- failure ---- */

const char *wsp__peer_status_name(uint32_t negated) {
  /* Named only when it is one of ours: negating any other value could
   * overflow. */
  return negated >= 1 && negated <= WSP__STATUS_MAX ? wsp_err_name(-(int)negated)
                                                    : "an unknown status";
}

static void fail_queue(wsp__stripe_t *st, wsp__sreq_t **head, wsp__sreq_t **tail, int status,
                       const char *why) {
  while (*head) {
    wsp__sreq_t *r = *head;
    *head = r->next;
    r->next = NULL;
    wsp__req_finish(st, r, status, why);
  }
  *tail = NULL;
}

void wsp__pair_drop_setup(wsp__pair_t *pr) {
  if (pr->xreq[1] != MPI_REQUEST_NULL) {
    MPI_Cancel(&pr->xreq[1]);
    MPI_Wait(&pr->xreq[1], MPI_STATUS_IGNORE);
  }
  if (pr->xreq[0] != MPI_REQUEST_NULL) MPI_Request_free(&pr->xreq[0]);
  if (pr->vreq != MPI_REQUEST_NULL) {
    if (!pr->lower) {
      MPI_Cancel(&pr->vreq);
      MPI_Wait(&pr->vreq, MPI_STATUS_IGNORE);
    } else {
      MPI_Request_free(&pr->vreq);
    }
  }
}

void wsp__pair_fail(wsp__stripe_t *st, wsp__pair_t *pr, int status, const char *fmt, ...) {
  if (pr->state == WSP__PAIR_FAILED) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(pr->why, sizeof pr->why, fmt, ap);
  va_end(ap);
  int told = status == WSP_ERR_REMOTE; /* the peer failed it: no need to answer */
  pr->state = WSP__PAIR_FAILED;
  pr->error = status;
  /* Tell the peer on the first lane that is up and takes a whole frame at
   * once; those that do not will see the connections close. */
  for (int i = 0; i < pr->nlanes; i++) {
    wsp__lane_t *l = &pr->lane[i];
    if (l->fd < 0) continue;
    if (!told && l->hs == WSP__HS_UP && !l->obusy) {
      wsp__frame_t f = {.type = WSP__F_ERR, .aux = (uint32_t)(-status)};
      if (wsp__lane_set(l, &f, NULL, 0) == 0 &&
          send(l->fd, l->ohdr, l->ohdr_len, MSG_NOSIGNAL | MSG_DONTWAIT) == (ssize_t)l->ohdr_len)
        told = 1;
    }
    wsp__lane_release(l, 0);
    l->fl_n = 0;
    l->oreq = NULL;
    l->ireq = NULL;
    l->ipay = NULL;
    l->obusy = 0;
  }
  wsp__pair_drop_setup(pr);
  if (pr->priv) {
    wsp__sec_keyfree(pr->priv);
    pr->priv = NULL;
  }
  fail_queue(st, &pr->undecided, &pr->undecided_tail, status, pr->why);
  fail_queue(st, &pr->sends, &pr->sends_tail, status, pr->why);
  fail_queue(st, &pr->active, &pr->active_tail, status, pr->why);
  fail_queue(st, &pr->recvs, &pr->recvs_tail, status, pr->why);
  pr->nrecvs = 0;
  wsp__log(st->comm, WSP_LOG_WARN, "striped: pair with rank %d failed: %s", pr->peer,
           pr->why);
  if (!pr->lower) wsp__hs_idle(st, pr->peer);
}

void wsp__stripe_break(wsp__stripe_t *st, int status, const char *why) {
  st->broken = 1;
  for (int p = 0; p < st->comm->size; p++) {
    wsp__pair_t *pr = st->pair[p];
    if (pr && pr->state != WSP__PAIR_FAILED && !pr->fallback)
      wsp__pair_fail(st, pr, status, "%s", why);
  }
  wsp__hs_idle(st, -1);
}

/* Closes every lane of the pair; `reset` as wsp__lane_close. */
static void close_lanes(wsp__pair_t *pr, int reset) {
  for (int i = 0; i < pr->nlanes; i++) wsp__lane_release(&pr->lane[i], reset);
}

/* The peer freed its communicator: requests still waiting on the pair
 * fail; with none, the pair just ends, quietly. */
static void pair_closed(wsp__stripe_t *st, wsp__pair_t *pr) {
  if (pr->undecided || pr->sends || pr->active || pr->recvs) {
    wsp__pair_fail(st, pr, WSP_ERR_CONN, "rank %d freed its communicator", pr->peer);
    return;
  }
  snprintf(pr->why, sizeof pr->why, "rank %d freed its communicator", pr->peer);
  pr->error = WSP_ERR_CONN;
  pr->state = WSP__PAIR_FAILED;
  close_lanes(pr, 0);
}

/* ---- matching ---- */

/* Matches sends, in posting order, with the earliest CTS of their tag among
 * those whose predecessors have all arrived (CTS frames travel on several
 * lanes and may arrive out of order). */
static void match(wsp__stripe_t *st, wsp__pair_t *pr) {
  if (pr->state != WSP__PAIR_READY) return;
  for (wsp__sreq_t *s = pr->sends, *next; s; s = next) {
    next = s->next;
    size_t best = pr->ncts;
    for (size_t i = 0; i < pr->ncts; i++)
      if (pr->cts[i].seq < pr->cts_next && pr->cts[i].tag == s->tag &&
          (best == pr->ncts || pr->cts[i].seq < pr->cts[best].seq))
        best = i;
    if (best == pr->ncts) continue;
    struct wsp__cts c = pr->cts[best];
    pr->cts[best] = pr->cts[--pr->ncts];
    if (c.size != s->size) {
      wsp__pair_fail(st, pr, WSP_ERR_ARG,
                     "a striped send of %zu bytes to rank %d met a receive of %llu "
                     "bytes (tag %d); striped sizes must match exactly",
                     s->size, pr->peer, (unsigned long long)c.size, s->tag);
      return;
    }
    q_remove(&pr->sends, &pr->sends_tail, s);
    s->matched = 1;
    s->rid = c.rid;
    s->next_off = 0;
    q_push(&pr->active, &pr->active_tail, s);
  }
}

/* CTS arrived with sequence numbers in any order; cts_next is the first
 * one not yet seen. */
static void cts_seen(wsp__pair_t *pr) {
  for (;;) {
    int found = 0;
    for (size_t i = 0; i < pr->ncts && !found; i++) found = pr->cts[i].seq == pr->cts_next;
    /* Matched CTS are gone from the list; a sequence number below
     * cts_next never comes back, so only the next one is looked for. */
    if (!found) return;
    pr->cts_next++;
  }
}

void wsp__lanes_start(wsp__stripe_t *st, wsp__sreq_t *r) {
  wsp__pair_t *pr = r->pair;
  r->path = WSP__PATH_LANES;
  if (r->is_send) {
    size_t c = st->comm->cfg.p2p_chunk;
    if (c == 0) {
      /* Sixteen chunks per lane, so that the free lanes can even out a
       * slow one and the last chunks end close together; where the probe
       * measured the lanes, no more than one lane carries in 20 ms (the
       * longest a lane can lag behind the others at the end). No smaller
       * than 64 KiB (a frame per syscall) nor larger than 1 MiB. */
      c = r->size / (16 * (size_t)pr->k);
      double per_lane = pr->ratek > 0 ? 0.02 * pr->ratek / pr->k : 0;
      if (per_lane > 0 && (double)c > per_lane) c = (size_t)per_lane;
      c = c < 65536 ? 65536 : c > 1048576 ? 1048576 : c;
    }
    /* A sealed lane seals a whole frame into a buffer of its own. */
    if (pr->mine.encrypt && c > WSP__SEALED_CHUNK_MAX) c = WSP__SEALED_CHUNK_MAX;
    r->chunk = c;
    q_push(&pr->sends, &pr->sends_tail, r);
    match(st, pr);
  } else {
    if (pr->nrecvs >= WSP__CTS_MAX) {
      char why[160];
      snprintf(why, sizeof why,
               "more than %d striped receives from rank %d are in flight on the lanes",
               WSP__CTS_MAX, pr->peer);
      wsp__req_finish(st, r, WSP_ERR_UNSUPPORTED, why);
      return;
    }
    r->rid = pr->next_rid++;
    r->got = 0;
    q_push(&pr->recvs, &pr->recvs_tail, r);
    pr->nrecvs++;
    wsp__frame_t f = {.type = WSP__F_CTS, .aux = (uint32_t)r->tag, .id = r->rid,
                      .off = r->size, .len = pr->cts_seq++};
    if (wsp__pair_ctl(pr, &f) != WSP_OK)
      wsp__pair_fail(st, pr, WSP_ERR_NOMEM, "out of memory queueing a CTS");
  }
}

/* ---- the probe ---- */

/* From the probe's figures, the lanes to use and the smallest message to
 * stripe (SIZE_MAX: none; everything goes through MPI). Several lanes are
 * used only where they carried at least 1.3x one lane's rate. Then as many
 * lanes as it takes, with a margin of half again for connections that
 * share a bottleneck by chance (a hash of ports picks the queue of a
 * per-flow cap), up to the lanes opened. A striped message pays about one
 * round trip more than MPI's (the CTS) and gains the difference in
 * rate: it pays from rtt / (1/rate1 - 1/ratek), never below `min`. */
void wsp__stripe_choose(double rate1, double ratek, double rtt, int nlanes, size_t min,
                        int *k, size_t *threshold) {
  if (!(rate1 > 0) || !(ratek >= 1.3 * rate1) || nlanes < 2) {
    *k = 1;
    *threshold = SIZE_MAX;
    return;
  }
  double want = ceil(1.5 * ratek / rate1);
  *k = want > nlanes ? nlanes : (int)want;
  double s = rtt / (1.0 / rate1 - 1.0 / ratek);
  *threshold = s > (double)min ? (size_t)s : min;
}

static void probe_phase(wsp__stripe_t *st, wsp__pair_t *pr, int phase) {
  pr->probe.phase = phase;
  pr->probe.lanes = phase == 1 ? 1 : pr->nlanes - 1;
  pr->probe.ends = 0;
  pr->probe.t_first = 0;
  pr->probe.in_window = 0;
  pr->probe.bytes_win = 0;
  pr->probe.stopped = 0;
  pr->probe.streaming = 1; /* measuring, on this side */
  pr->probe.t_go = wsp__now();
  for (int i = 0; i < pr->nlanes; i++) pr->lane[i].pend_seen = 0;
  wsp__frame_t f = {.type = WSP__F_PGO, .id = (uint64_t)phase, .aux = (uint32_t)pr->probe.lanes};
  if (wsp__pair_ctl(pr, &f) != WSP_OK)
    wsp__pair_fail(st, pr, WSP_ERR_NOMEM, "out of memory starting the probe");
}

static void probe_bytes(wsp__stripe_t *st, wsp__pair_t *pr, size_t n) {
  if (!pr->probe.streaming) return;
  double t = wsp__now(), T = 1e-3 * st->comm->cfg.p2p_probe_ms;
  if (pr->probe.t_first == 0) {
    pr->probe.t_first = t;
    if (pr->probe.phase == 1) pr->rtt = t - pr->probe.t_go;
    return;
  }
  if (!pr->probe.in_window) {
    if (t >= pr->probe.t_first + T / 3) {
      pr->probe.in_window = 1;
      pr->probe.t_win = t;
    }
    return;
  }
  pr->probe.bytes_win += (double)n;
  if (t >= pr->probe.t_first + T) {
    double rate = pr->probe.bytes_win / (t - pr->probe.t_win);
    if (pr->probe.phase == 1)
      pr->rate1 = rate;
    else
      pr->ratek = rate;
    pr->probe.streaming = 0;
    pr->probe.stopped = 1;
    wsp__frame_t f = {.type = WSP__F_PSTOP, .id = (uint64_t)pr->probe.phase};
    if (wsp__pair_ctl(pr, &f) != WSP_OK)
      wsp__pair_fail(st, pr, WSP_ERR_NOMEM, "out of memory in the probe");
  }
}

static void probe_end(wsp__stripe_t *st, wsp__pair_t *pr) {
  if (++pr->probe.ends < pr->probe.lanes) return;
  if (pr->probe.phase == 1) {
    probe_phase(st, pr, 2);
    return;
  }
  if (st->probe_as[0] > 0) { /* a test's figures (WSP_P2P_PROBE_FIGURES) */
    pr->rate1 = st->probe_as[0];
    pr->ratek = st->probe_as[1];
    pr->rtt = st->probe_as[2];
  }
  wsp__stripe_choose(pr->rate1, pr->ratek, pr->rtt, pr->nlanes - 1, st->comm->cfg.p2p_min, &pr->k,
         &pr->threshold);
  uint64_t b1, bk;
  memcpy(&b1, &pr->rate1, sizeof b1);
  memcpy(&bk, &pr->ratek, sizeof bk);
  wsp__frame_t f = {.type = WSP__F_RESULT, .aux = (uint32_t)pr->k,
                    .id = (uint64_t)pr->threshold, .off = b1, .len = bk};
  if (wsp__pair_ctl(pr, &f) != WSP_OK) {
    wsp__pair_fail(st, pr, WSP_ERR_NOMEM, "out of memory in the probe");
    return;
  }
  wsp__log(st->comm, WSP_LOG_INFO,
           "striped: rank %d: one lane %.3g MB/s, %d lanes %.3g MB/s, rtt %.3g ms: "
           "%d lanes from %zu bytes",
           pr->peer, pr->rate1 / 1e6, pr->nlanes - 1, pr->ratek / 1e6, pr->rtt * 1e3, pr->k,
           pr->threshold);
  wsp__pair_ready(st, pr);
}

void wsp__pair_connected(wsp__stripe_t *st, wsp__pair_t *pr) {
  if (st->comm->cfg.p2p_lanes > 0) {
    pr->k = (int)st->comm->cfg.p2p_lanes;
    pr->threshold = st->comm->cfg.p2p_min;
    wsp__pair_ready(st, pr);
    return;
  }
  pr->state = WSP__PAIR_PROBE;
  if (!pr->lower) probe_phase(st, pr, 1);
}

/* ---- frames in ---- */

static wsp__sreq_t *find_rid(wsp__sreq_t *q, uint64_t rid) {
  for (; q; q = q->next)
    if (q->rid == rid) return q;
  return NULL;
}

/* Send s completed: its buffer is the user's again. Lanes forget its
 * chunks, and one still writing a copy of it finishes the frame with
 * zeros (the receiver drops copies of a completed receive). */
static void send_forget(wsp__pair_t *pr, wsp__sreq_t *s) {
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
 * may. The frame's own fields are checked where it is taken (on_header). */
static const char *frame_refused(const wsp__stripe_t *st, const wsp__pair_t *pr, int li,
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
    return s == WSP__PAIR_READY && data ? NULL : "data off the data lanes, or before they were ready";
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
static int on_header(wsp__stripe_t *st, wsp__pair_t *pr, wsp__lane_t *l) {
  wsp__frame_t *f = &l->in;
  const int li = (int)(l - pr->lane);
  const char *no = frame_refused(st, pr, li, f);
  if (no == NULL && !wsp__frame_has_payload(f->type) && f->type != WSP__F_CTS &&
      f->type != WSP__F_RESULT && f->len != 0)
    no = "a length on a frame without payload";
  if (no) {
    wsp__pair_fail(st, pr, WSP_ERR_CONN, "rank %d sent %s (frame type %u on lane %d)", pr->peer,
                   no, (unsigned)f->type, li);
    return -1;
  }
  switch ((wsp__ftype_t)f->type) {
  case WSP__F_CTS: {
    /* Sequence numbers are dense from 0; one may arrive early (CTS frames
     * of the same lane arrive in order, so only a bounded window ahead). */
    int dup = 0;
    for (size_t i = 0; i < pr->ncts && !dup; i++) dup = pr->cts[i].seq == f->len;
    if (f->len < pr->cts_next || f->len - pr->cts_next >= WSP__CTS_MAX || dup ||
        f->aux > (uint32_t)INT_MAX || pr->ncts >= WSP__CTS_MAX) {
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
    pr->cts[pr->ncts++] = (struct wsp__cts){.rid = f->id, .size = f->off, .seq = f->len,
                                            .tag = (int)f->aux};
    cts_seen(pr);
    match(st, pr);
    return pr->state == WSP__PAIR_FAILED ? -1 : 0;
  }
  case WSP__F_DATA: {
    if (f->aux == 0 || f->aux > WSP__CHUNK_MAX || f->len > f->aux) {
      wsp__pair_fail(st, pr, WSP_ERR_CONN, "rank %d sent data with a chunk size of %u",
                     pr->peer, (unsigned)f->aux);
      return -1;
    }
    wsp__sreq_t *r = find_rid(pr->recvs, f->id);
    if (r == NULL && f->id < pr->next_rid) {
      /* A late copy for a receive that is complete: dropped. */
      l->ireq = NULL;
      l->ipay = NULL;
      l->ipay_left = (size_t)f->len;
      l->ireading = 1;
      return 0;
    }
    if (r && r->have == NULL) {
      r->chunk = f->aux;
      if ((r->have = calloc((r->size + r->chunk - 1) / r->chunk + 1, 1)) == NULL) {
        wsp__pair_fail(st, pr, WSP_ERR_NOMEM, "out of memory receiving from rank %d",
                       pr->peer);
        return -1;
      }
    }
    if (r == NULL || f->aux != r->chunk || f->off % r->chunk != 0 || f->off >= r->size ||
        f->len != (r->size - f->off < r->chunk ? r->size - f->off : r->chunk)) {
      wsp__pair_fail(st, pr, WSP_ERR_CONN,
                     "rank %d sent data for an unknown receive or out of its bounds",
                     pr->peer);
      return -1;
    }
    l->ireq = r;
    l->ipay = (unsigned char *)r->buf + f->off;
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
    wsp__sreq_t *s = find_rid(pr->active, f->id);
    if (s == NULL || !s->matched || s->next_off < s->size) {
      wsp__pair_fail(st, pr, WSP_ERR_CONN,
                     "rank %d confirmed a striped send that is not in flight", pr->peer);
      return -1;
    }
    q_remove(&pr->active, &pr->active_tail, s);
    send_forget(pr, s);
    wsp__req_finish(st, s, WSP_OK, NULL);
    return 0;
  }
  case WSP__F_PGO:
    if (f->id != (uint64_t)pr->probe.phase + 1 || f->id > 2 || f->aux < 1 ||
        f->aux > (uint32_t)(pr->nlanes - 1)) {
      wsp__pair_fail(st, pr, WSP_ERR_CONN, "rank %d started probe phase %llu on %u lanes",
                     pr->peer, (unsigned long long)f->id, (unsigned)f->aux);
      return -1;
    }
    pr->probe.phase = (int)f->id;
    pr->probe.lanes = (int)f->aux;
    pr->probe.streaming = 1;
    pr->probe.stopped = 0;
    return 0;
  case WSP__F_PSTOP:
    if (f->id != (uint64_t)pr->probe.phase) {
      wsp__pair_fail(st, pr, WSP_ERR_CONN, "rank %d stopped probe phase %llu in phase %d",
                     pr->peer, (unsigned long long)f->id, pr->probe.phase);
      return -1;
    }
    pr->probe.streaming = 0;
    pr->probe.stopped = 1;
    for (int i = 1; i <= pr->probe.lanes; i++) pr->lane[i].pend_pending = 1;
    return 0;
  case WSP__F_PEND:
    if (f->id != (uint64_t)pr->probe.phase) {
      wsp__pair_fail(st, pr, WSP_ERR_CONN, "rank %d ended probe phase %llu in phase %d",
                     pr->peer, (unsigned long long)f->id, pr->probe.phase);
      return -1;
    }
    l->pend_seen = 1;
    probe_end(st, pr);
    return pr->state == WSP__PAIR_FAILED ? -1 : 0;
  case WSP__F_RESULT: {
    double r1, rk;
    memcpy(&r1, &f->off, sizeof r1);
    memcpy(&rk, &f->len, sizeof rk);
    if (f->aux < 1 || f->aux > (uint32_t)(pr->nlanes - 1) || f->id == 0 || !isfinite(r1) ||
        !isfinite(rk) || r1 < 0 || rk < 0) {
      wsp__pair_fail(st, pr, WSP_ERR_CONN, "rank %d sent a probe result out of bounds",
                     pr->peer);
      return -1;
    }
    pr->k = (int)f->aux;
    pr->threshold = f->id > (uint64_t)SIZE_MAX ? SIZE_MAX : (size_t)f->id;
    pr->rate1 = r1;
    pr->ratek = rk;
    pr->probe.phase = 3; /* done: no probe frame is taken any more */
    wsp__pair_ready(st, pr);
    return 0;
  }
  case WSP__F_BYE:
    l->bye_seen = 1;
    for (int i = 0; i < pr->nlanes; i++)
      if (!pr->lane[i].bye_seen) return 0;
    /* Every lane said goodbye, after every frame the peer had for us. */
    pair_closed(st, pr);
    return -1;
  case WSP__F_ERR:
    wsp__pair_fail(st, pr, WSP_ERR_REMOTE, "rank %d failed the striped transfer (%s)",
                   pr->peer, wsp__peer_status_name(f->aux));
    return -1;
  default: /* frame_refused took every other type */
    wsp__pair_fail(st, pr, WSP_ERR_INTERNAL, "frame type %u was let through", (unsigned)f->type);
    return -1;
  }
}

static void on_payload_done(wsp__stripe_t *st, wsp__pair_t *pr, wsp__lane_t *l) {
  l->ireading = 0;
  l->itag_reading = 0;
  l->ihdr_got = 0;
  if (l->in.type == WSP__F_PDATA) {
    probe_bytes(st, pr, (size_t)l->in.len);
    return;
  }
  wsp__sreq_t *r = l->ireq;
  l->ireq = NULL;
  if (r == NULL) return; /* a copy of a completed receive */
  size_t idx = (size_t)(l->in.off / r->chunk);
  if (r->have[idx]) return; /* the other copy came first */
  r->have[idx] = 1;
  r->got += (size_t)l->in.len;
  if (r->got < r->size) return;
  q_remove(&pr->recvs, &pr->recvs_tail, r);
  pr->nrecvs--;
  /* Copies still arriving must not write into the buffer, which is the
   * user's again. */
  for (int i = 0; i < pr->nlanes; i++)
    if (pr->lane[i].ireq == r) {
      pr->lane[i].ireq = NULL;
      pr->lane[i].ipay = NULL;
    }
  wsp__frame_t f = {.type = WSP__F_DONE, .id = r->rid};
  if (wsp__pair_ctl(pr, &f) != WSP_OK) {
    wsp__pair_fail(st, pr, WSP_ERR_NOMEM, "out of memory confirming a receive");
    return;
  }
  wsp__req_finish(st, r, WSP_OK, NULL);
}

/* A header (sealed: header and tag) is in: opened, decoded, taken. */
static int header_in(wsp__stripe_t *st, wsp__pair_t *pr, wsp__lane_t *l, int li) {
  if (l->sealed &&
      (wsp__open_begin(&l->rx) != 0 || wsp__open_update(&l->rx, l->ihdr, WSP__FRAME_HDR) != 0 ||
       wsp__open_finish(&l->rx, l->ihdr + WSP__FRAME_HDR) != 0)) {
    wsp__pair_fail(st, pr, WSP_ERR_CONN, "lane %d to rank %d: a frame failed its integrity check",
                   li, pr->peer);
    return -1;
  }
  if (wsp__frame_decode(l->ihdr, &l->in) != 0) {
    wsp__pair_fail(st, pr, WSP_ERR_CONN,
                   "lane %d to rank %d carried something that is not a frame", li, pr->peer);
    return -1;
  }
  if (on_header(st, pr, l) != 0) return -1;
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
static void payload_in(wsp__stripe_t *st, wsp__pair_t *pr, wsp__lane_t *l) {
  if (l->sealed && !l->itag_reading) {
    l->itag_reading = 1;
    l->itag_got = 0;
    return;
  }
  on_payload_done(st, pr, l);
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
        payload_in(st, pr, l);
        continue;
      }
      n = recv(l->fd, dst, want, 0);
    }
    if (n == 0) {
      if (l->bye_seen) { /* the end after a BYE: the other lanes may have more */
        wsp__lane_release(l, 0);
        return;
      }
      wsp__pair_fail(st, pr, WSP_ERR_CONN,
                     "lane %d to rank %d was closed by the peer", li, pr->peer);
      return;
    }
    if (n < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK) return;
      if (errno == EINTR) continue;
      wsp__pair_fail(st, pr, WSP_ERR_CONN, "lane %d to rank %d: %s", li, pr->peer,
                     strerror(errno));
      return;
    }
    budget = (size_t)n > budget ? 0 : budget - (size_t)n;
    l->bytes_in += (uint64_t)n;
    if (!l->ireading) {
      l->ihdr_got += (size_t)n;
      if (l->ihdr_got < hdr) continue;
      if (header_in(st, pr, l, li) != 0) return;
      if (l->ireading && l->ipay_left == 0) payload_in(st, pr, l);
    } else if (l->itag_reading) {
      l->itag_got += (size_t)n;
      if (l->itag_got < WSP__TAG) continue;
      if (wsp__open_finish(&l->rx, l->itag) != 0) {
        wsp__pair_fail(st, pr, WSP_ERR_CONN,
                       "lane %d to rank %d: a frame failed its integrity check", li, pr->peer);
        return;
      }
      on_payload_done(st, pr, l);
    } else {
      if (l->sealed && wsp__open_update(&l->rx, dst, (size_t)n) != 0) {
        wsp__pair_fail(st, pr, WSP_ERR_INTERNAL, "lane %d: the cipher failed", li);
        return;
      }
      if (l->ipay) l->ipay += n;
      l->ipay_left -= (size_t)n;
      if (l->ipay_left == 0) payload_in(st, pr, l);
    }
  }
}

/* ---- frames out ---- */

static size_t outq(int fd);

int wsp__lane_set(wsp__lane_t *l, const wsp__frame_t *f, const void *pay, size_t len) {
  l->oreq = NULL;
  l->ozero = 0;
  wsp__frame_encode(f, l->ohdr);
  l->ohdr_done = 0;
  l->opay = pay;
  l->opay_len = len;
  l->opay_done = 0;
  if (l->sealed) {
    /* Header and payload sealed now, the payload into the lane's buffer
     * (so the user's buffer is not read again once this returns). */
    if (wsp__seal(&l->tx, l->ohdr, l->ohdr, WSP__FRAME_HDR, l->ohdr + WSP__FRAME_HDR) != 0)
      return -1;
    if (len > 0) {
      if (len + WSP__TAG > l->obuf_cap) {
        unsigned char *b = realloc(l->obuf, len + WSP__TAG);
        if (b == NULL) return -1;
        l->obuf = b;
        l->obuf_cap = len + WSP__TAG;
      }
      if (wsp__seal(&l->tx, pay, l->obuf, len, l->obuf + len) != 0) return -1;
      l->opay = l->obuf;
      l->opay_len = len + WSP__TAG;
    }
  }
  l->obusy = 1;
  return 0;
}

/* A DATA frame of chunk [off, off + n) of send s on lane l, remembered
 * until TCP has it acknowledged. */
static int data_frame(wsp__lane_t *l, wsp__sreq_t *s, size_t off, size_t n, int dup) {
  wsp__frame_t f = {.type = WSP__F_DATA, .id = s->rid, .off = off, .len = n,
                    .aux = (uint32_t)s->chunk};
  if (wsp__lane_set(l, &f, (const unsigned char *)s->buf + off, n) != 0) return -1;
  if (!l->sealed) l->oreq = s;
  if (l->fl_n == WSP__INFLIGHT) { /* forget the oldest: it will not be re-sent */
    l->fl_head = (l->fl_head + 1) % WSP__INFLIGHT;
    l->fl_n--;
  }
  l->fl[(l->fl_head + l->fl_n++) % WSP__INFLIGHT] = (struct wsp__inflight){
      .req = s, .end = l->bytes_out + l->ohdr_len + l->opay_len, .off = off, .len = n, .dup = dup};
  return 0;
}

/* The endgame. Every chunk is handed out and lane li is free. If another
 * lane still holds a chunk it will take much longer to deliver than li
 * would (its unacknowledged bytes over its delivery rate, against li's
 * queue plus the chunk over li's rate, with a margin), li sends a copy:
 * the chunk that lane would deliver last, once. The receiver keeps
 * whichever copy arrives first. Lanes of equal speed finish together and
 * copy nothing; a lane slowed to a fraction stops holding the tail. */
static int endgame(const wsp__stripe_t *st, wsp__pair_t *pr, int li) {
  wsp__lane_t *L = &pr->lane[li];
  int always = st->endgame_always;
  if (!(L->rate > 0) && !always) return 0;
  double best = 0;
  struct wsp__inflight *be = NULL;
  for (int m = 1; m <= pr->k; m++) {
    wsp__lane_t *M = &pr->lane[m];
    if (m == li || M->fd < 0 || M->fl_n == 0 || (!(M->rate > 0) && !always)) continue;
    struct wsp__inflight *e = NULL;
    for (int j = M->fl_n - 1; j >= 0 && e == NULL; j--) {
      struct wsp__inflight *x = &M->fl[(M->fl_head + j) % WSP__INFLIGHT];
      if (!x->dup) e = x;
    }
    if (e == NULL) continue;
    if (always) { /* testing aid: copy whatever can be copied */
      be = e;
      break;
    }
    double tm = (double)outq(M->fd) / M->rate;
    double tl = (double)(outq(L->fd) + e->len) / L->rate;
    if (tm > 1.5 * tl + 0.005 && tm > best) best = tm, be = e;
  }
  if (be == NULL) return 0;
  be->dup = 1;
  return data_frame(L, be->req, be->off, be->len, 1) == 0 ? 1 : -1;
}

/* The next frame for lane li, or 0 if there is none: 1 for a control
 * frame, 2 for a bulk one, -1 when it could not be made (sealing failed).
 * Control frames go on lane 0 only, data on lanes 1..k (the probe's
 * choice), the probe's stream on the lanes it names. */
static int next_frame(wsp__stripe_t *st, wsp__pair_t *pr, int li, int ctl_only) {
  wsp__lane_t *l = &pr->lane[li];
  if (l->bye_sent) return 0; /* nothing follows a BYE */
  if (l->pend_pending) {
    l->pend_pending = 0;
    wsp__frame_t f = {.type = WSP__F_PEND, .id = (uint64_t)pr->probe.phase};
    return wsp__lane_set(l, &f, NULL, 0) == 0 ? 1 : -1;
  }
  if (pr->nctl && li == 0) {
    wsp__frame_t f = pr->ctl[0];
    memmove(pr->ctl, pr->ctl + 1, (pr->nctl - 1) * sizeof *pr->ctl);
    pr->nctl--;
    return wsp__lane_set(l, &f, NULL, 0) == 0 ? 1 : -1;
  }
  if (l->bye_pending) {
    l->bye_pending = 0;
    l->bye_sent = 1;
    wsp__frame_t f = {.type = WSP__F_BYE};
    return wsp__lane_set(l, &f, NULL, 0) == 0 ? 1 : -1;
  }
  if (ctl_only) return 0;
  if (pr->state == WSP__PAIR_READY && li >= 1 && li <= pr->k) {
    /* Testing aid: every chunk is copied, at once rather than at the end. */
    if (st->endgame_always) {
      int e = endgame(st, pr, li);
      if (e != 0) return e < 0 ? -1 : 2;
    }
    for (wsp__sreq_t *s = pr->active; s; s = s->next)
      if (s->next_off < s->size) {
        size_t n = s->size - s->next_off;
        if (n > s->chunk) n = s->chunk;
        if (data_frame(l, s, s->next_off, n, 0) != 0) return -1;
        s->next_off += n;
        return 2;
      }
    int e = endgame(st, pr, li);
    if (e != 0) return e < 0 ? -1 : 2;
  }
  if (pr->lower && pr->probe.streaming && li >= 1 && li <= pr->probe.lanes) {
    wsp__frame_t f = {.type = WSP__F_PDATA, .len = WSP__PROBE_FRAME};
    return wsp__lane_set(l, &f, st->zeros, WSP__PROBE_FRAME) == 0 ? 2 : -1;
  }
  return 0;
}

static int lane_has_work(const wsp__pair_t *pr, int li) {
  const wsp__lane_t *l = &pr->lane[li];
  if (l->obusy || l->pend_pending || l->bye_pending || (pr->nctl && li == 0)) return 1;
  if (li == 0) return 0;
  if (pr->state == WSP__PAIR_READY && li <= pr->k)
    for (const wsp__sreq_t *s = pr->active; s; s = s->next)
      if (s->next_off < s->size) return 1;
  return pr->lower && pr->probe.streaming && li <= pr->probe.lanes;
}

/* Bytes the kernel holds for this socket that have not been acknowledged
 * (SIOCOUTQ), and that have not been sent yet (SIOCOUTQNSD; as much as the
 * low-water mark when it cannot tell). */
static size_t outq(int fd) {
  int n = 0;
  return ioctl(fd, WSP__SIOCOUTQ, &n) == 0 && n >= 0 ? (size_t)n : 0;
}

static size_t unsent(int fd) {
  int n = 0;
  return ioctl(fd, WSP__SIOCOUTQNSD, &n) == 0 && n >= 0 ? (size_t)n : SIZE_MAX;
}

static uint64_t pair_bytes_out(const wsp__pair_t *pr) {
  uint64_t n = 0;
  for (int i = 0; i < pr->nlanes; i++) n += pr->lane[i].bytes_out;
  return n;
}

/* Writes frames on lane li until the socket is full or, after a bulk
 * frame, until poll reports it writable again; `ctl_only` starts no bulk
 * frame (the lane was not reported writable). */
static void lane_write(wsp__stripe_t *st, wsp__pair_t *pr, int li, int ctl_only) {
  wsp__lane_t *l = &pr->lane[li];
  for (;;) {
    int kind = 1;
    if (!l->obusy && (kind = next_frame(st, pr, li, ctl_only)) <= 0) {
      if (kind < 0)
        wsp__pair_fail(st, pr, WSP_ERR_NOMEM, "lane %d to rank %d: a frame could not be sealed",
                       li, pr->peer);
      return;
    }
    if (kind == 2 && st->fault_reset_after && pair_bytes_out(pr) >= st->fault_reset_after) {
      st->fault_reset_after = 0;
      wsp__lane_release(l, 1);
      wsp__pair_fail(st, pr, WSP_ERR_CONN, "lane %d to rank %d was reset (injected fault)", li,
                     pr->peer);
      return;
    }
    struct iovec iov[2];
    int n = 0;
    if (l->ohdr_done < l->ohdr_len)
      iov[n++] = (struct iovec){l->ohdr + l->ohdr_done, l->ohdr_len - l->ohdr_done};
    if (l->opay_done < l->opay_len) {
      size_t left = l->opay_len - l->opay_done;
      if (l->ozero)
        iov[n++] = (struct iovec){(void *)st->zeros, left < WSP__PROBE_FRAME ? left : WSP__PROBE_FRAME};
      else
        iov[n++] = (struct iovec){(void *)(l->opay + l->opay_done), left};
    }
    struct msghdr mh;
    memset(&mh, 0, sizeof mh);
    mh.msg_iov = iov;
    mh.msg_iovlen = (size_t)n;
    ssize_t w = n ? sendmsg(l->fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT) : 0;
    if (w < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK) return;
      if (errno == EINTR) continue;
      wsp__pair_fail(st, pr, WSP_ERR_CONN, "lane %d to rank %d: %s", li, pr->peer,
                     strerror(errno));
      return;
    }
    l->bytes_out += (uint64_t)w;
    size_t h = l->ohdr_len - l->ohdr_done;
    if ((size_t)w < h) {
      l->ohdr_done += (size_t)w;
      return;
    }
    l->ohdr_done = l->ohdr_len;
    l->opay_done += (size_t)w - h;
    if (l->opay_done < l->opay_len) {
      if (l->ozero && (size_t)w - h > 0) continue; /* more zeros */
      return; /* the socket is full */
    }
    l->obusy = 0;
    l->oreq = NULL;
    l->ozero = 0;
    /* After a bulk frame, the next only while the lane's unsent backlog is
     * under the low-water mark: a fast lane (or loopback, which moves
     * data at once) takes several per pass, a slow one waits for poll. */
    if (kind == 2 && unsent(l->fd) >= st->lowat) return;
  }
}

void wsp__stripe_flush(wsp__stripe_t *st, double seconds) {
  double end = wsp__now() + seconds;
  for (int p = 0; p < st->comm->size; p++) {
    wsp__pair_t *pr = st->pair[p];
    if (pr == NULL) continue;
    for (;;) {
      wsp__lane_t *l = &pr->lane[0];
      if (pr->state == WSP__PAIR_FAILED || l->fd < 0 || l->hs != WSP__HS_UP) break;
      if (pr->nctl == 0 && !l->obusy) break;
      lane_write(st, pr, 0, 1);
      if (pr->state == WSP__PAIR_FAILED || l->fd < 0 || (pr->nctl == 0 && !l->obusy)) break;
      double left = end - wsp__now();
      if (left <= 0) break;
      struct pollfd pfd = {.fd = l->fd, .events = POLLOUT};
      (void)poll(&pfd, 1, (int)(left * 1e3) + 1);
    }
  }
}

void wsp__stripe_close(wsp__stripe_t *st, double seconds) {
  double end = wsp__now() + seconds;
  int any = 0;
  for (int p = 0; p < st->comm->size; p++) {
    wsp__pair_t *pr = st->pair[p];
    if (pr == NULL || pr->state == WSP__PAIR_FAILED) continue;
    for (int i = 0; i < pr->nlanes; i++)
      if (pr->lane[i].fd >= 0 && pr->lane[i].hs == WSP__HS_UP) {
        pr->lane[i].bye_pending = 1;
        any = 1;
      }
  }
  /* Every pair at once, under one deadline. */
  size_t cap = 0;
  for (int p = 0; any && p < st->comm->size; p++)
    if (st->pair[p]) cap += (size_t)st->pair[p]->nlanes;
  struct pollfd *pfd = cap ? calloc(cap, sizeof *pfd) : NULL;
  while (any && pfd) {
    nfds_t n = 0;
    for (int p = 0; p < st->comm->size; p++) {
      wsp__pair_t *pr = st->pair[p];
      if (pr == NULL || pr->state == WSP__PAIR_FAILED) continue;
      for (int i = 0; i < pr->nlanes; i++) {
        wsp__lane_t *l = &pr->lane[i];
        if (l->fd < 0 || l->hs != WSP__HS_UP || l->bye_sent) continue;
        lane_write(st, pr, i, 1);
        if (pr->state == WSP__PAIR_FAILED) break;
        if (l->fd >= 0 && !l->bye_sent) pfd[n++] = (struct pollfd){.fd = l->fd, .events = POLLOUT};
      }
    }
    double left = end - wsp__now();
    if (n == 0 || left <= 0) break;
    (void)poll(pfd, n, (int)(left * 1e3) + 1);
  }
  free(pfd);
  for (int p = 0; p < st->comm->size; p++) {
    wsp__pair_t *pr = st->pair[p];
    if (pr == NULL) continue;
    for (int i = 0; i < pr->nlanes; i++) wsp__lane_shutdown(pr->lane[i].fd);
  }
}

/* What TCP has acknowledged on lane l: chunks delivered are forgotten,
 * and the delivery rate is sampled every 20 ms while bytes are in flight
 * (smoothed; an idle lane keeps its last rate). */
static void lane_account(wsp__lane_t *l, double now, int always) {
  if (l->fd < 0 || l->hs != WSP__HS_UP) return;
  size_t q = outq(l->fd);
  uint64_t acked = l->bytes_out - (q < l->bytes_out ? q : l->bytes_out);
  while (l->fl_n && l->fl[l->fl_head].end <= acked && !always) {
    l->fl_head = (l->fl_head + 1) % WSP__INFLIGHT;
    l->fl_n--;
  }
  if (l->rate_t == 0 || (q == 0 && acked == l->rate_acked)) {
    l->rate_t = now;
    l->rate_acked = acked;
    return;
  }
  double dt = now - l->rate_t;
  if (dt < 0.02) return;
  double inst = (double)(acked - l->rate_acked) / dt;
  l->rate = l->rate > 0 ? 0.7 * l->rate + 0.3 * inst : inst;
  l->rate_t = now;
  l->rate_acked = acked;
}

/* ---- the pass ---- */

int wsp__stripe_progress(wsp__stripe_t *st, int timeout_ms) {
  wsp_comm_t *comm = st->comm;
  if (st->fault_poll) {
    uint64_t in = 0;
    for (int p = 0; p < comm->size; p++)
      for (int i = 0; st->pair[p] && i < st->pair[p]->nlanes; i++) in += st->pair[p]->lane[i].bytes_in;
    if (in >= st->fault_poll) {
      st->fault_poll = 0;
      wsp__stripe_break(st, WSP_ERR_INTERNAL, "poll failed (injected fault, WSP_P2P_FAULT_POLL)");
      return WSP_ERR_INTERNAL;
    }
  }
  size_t cap = (size_t)st->nlst + st->ngreet;
  for (int p = 0; p < comm->size; p++)
    if (st->pair[p]) cap += (size_t)st->pair[p]->nlanes;
  if (cap > st->pfd_cap) {
    struct pollfd *n = realloc(st->pfd, cap * sizeof *n);
    if (n) st->pfd = n;
    int *o = realloc(st->pfd_owner, cap * 2 * sizeof *o);
    if (o) st->pfd_owner = o;
    if (!n || !o) {
      wsp__stripe_break(st, WSP_ERR_NOMEM, "out of memory polling the lanes");
      return WSP_ERR_NOMEM;
    }
    st->pfd_cap = cap;
  }
  struct pollfd *pfd = st->pfd;
  int *own = st->pfd_owner; /* (peer, lane) of each entry; peer -1 listener, -2 greeting */
  nfds_t nf = 0;
  int mpi_pending = 0;
  for (int p = 0; p < comm->size; p++) {
    wsp__pair_t *pr = st->pair[p];
    if (pr == NULL || pr->state == WSP__PAIR_FAILED) continue;
    wsp__pair_advance(st, pr);
    if (pr->state == WSP__PAIR_XCHG || pr->vreq != MPI_REQUEST_NULL) mpi_pending = 1;
    if (pr->state == WSP__PAIR_FAILED) continue;
    for (int i = 0; i < pr->nlanes; i++) {
      wsp__lane_t *l = &pr->lane[i];
      if (l->fd < 0) continue;
      short ev = l->hs == WSP__HS_CONNECTING ? POLLOUT
                 : l->hs != WSP__HS_UP       ? POLLIN
                                             : (short)(POLLIN | (lane_has_work(pr, i) ? POLLOUT : 0));
      pfd[nf] = (struct pollfd){.fd = l->fd, .events = ev};
      own[2 * nf] = p, own[2 * nf + 1] = i;
      nf++;
    }
  }
  for (int i = 0; i < st->nlst; i++) {
    pfd[nf] = (struct pollfd){.fd = st->lst[i].fd, .events = POLLIN};
    own[2 * nf] = -1, own[2 * nf + 1] = i;
    nf++;
  }
  for (size_t g = 0; g < st->ngreet; g++) {
    pfd[nf] = (struct pollfd){.fd = st->greet[g].fd, .events = POLLIN};
    own[2 * nf] = -2, own[2 * nf + 1] = (int)g;
    nf++;
  }
  /* A set-up message in flight is an MPI request: do not sleep on the
   * sockets while it may have finished. */
  if (mpi_pending && timeout_ms > 1) timeout_ms = 1;
  int n = poll(pfd, nf, timeout_ms);
  if (n < 0) {
    if (errno == EINTR) return WSP_OK;
    char why[120];
    snprintf(why, sizeof why, "poll failed: %s", strerror(errno));
    wsp__stripe_break(st, WSP_ERR_INTERNAL, why);
    return WSP_ERR_INTERNAL;
  }
  int accept_ready[WSP__ADDRS_MAX] = {0};
  double now = wsp__now();
  /* Greetings first and from the end, so that removing one keeps the
   * indices of the others; an entry whose socket changed during the pass
   * (a lane reconnected, a pair failed) is skipped. */
  for (nfds_t i = nf; i-- > 0;) {
    if (!pfd[i].revents) continue;
    int p = own[2 * i], li = own[2 * i + 1];
    if (p == -2) {
      if ((size_t)li < st->ngreet && st->greet[li].fd == pfd[i].fd) wsp__hs_greet_event(st, (size_t)li);
      continue;
    }
    if (p == -1) {
      accept_ready[li] = 1;
      continue;
    }
    wsp__pair_t *pr = st->pair[p];
    if (pr->state == WSP__PAIR_FAILED || pr->lane[li].fd != pfd[i].fd) continue;
    if (pr->lane[li].hs != WSP__HS_UP) {
      wsp__hs_lane_event(st, pr, li);
      continue;
    }
    if (pfd[i].revents & (POLLIN | POLLERR | POLLHUP)) wsp__lane_read(st, pr, li);
    if (pr->state != WSP__PAIR_FAILED && pr->lane[li].fd == pfd[i].fd &&
        (pfd[i].revents & POLLOUT))
      lane_write(st, pr, li, 0);
  }
  wsp__hs_expire(st, now);
  for (int i = st->nlst; i-- > 0;)
    if (i < st->nlst && accept_ready[i]) wsp__hs_accept(st, st->lst[i].fd);
  for (int p = 0; p < comm->size; p++) {
    wsp__pair_t *pr = st->pair[p];
    if (pr && pr->state == WSP__PAIR_READY && pr->active)
      for (int i = 1; i <= pr->k; i++) lane_account(&pr->lane[i], now, st->endgame_always);
  }
  /* Frames queued during this pass (a DONE, a CTS) go out now on lanes
   * that are idle, rather than after the next poll. */
  for (int p = 0; p < comm->size; p++) {
    wsp__pair_t *pr = st->pair[p];
    if (pr == NULL || pr->state == WSP__PAIR_FAILED) continue;
    wsp__pair_advance(st, pr);
    if (pr->nctl == 0 || pr->state == WSP__PAIR_FAILED) continue;
    if (pr->lane[0].fd >= 0 && pr->lane[0].hs == WSP__HS_UP && !pr->lane[0].obusy)
      lane_write(st, pr, 0, 1);
  }
  return WSP_OK;
}
