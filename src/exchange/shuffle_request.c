/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The shuffle's requester: posted requests are batched per destination,
 * batches are sealed and sent under the flow control and the pacing, and
 * the responses that come back are handed, with their requests, to
 * on_response.
 *
 * Batching. A batch to one destination is sealed once its requests plus
 * their expected responses (the mean response per request seen so far; at
 * first, a whole batch, so the first batches carry one request each) would
 * pass cfg.batch_bytes, or its requests would pass the per-peer share
 * peer_req, or its oldest request is cfg.batch_delay old. So a 1 KiB request
 * with a 100 KiB response travels alone, as in G-thinker, while small
 * requests with small answers travel by the thousand. A post outside
 * handlers waits, running passes (shuffle.c), while the backlog's memory
 * share or its volume limit (what the pacing rate lets out in
 * WSP__BACKLOG_S: enough that pacing never runs dry, little enough that
 * requests do not queue for seconds) is reached.
 *
 * Flow control (the shares are defined in shuffle_internal.h). A requester
 * keeps at most peer_req = intake/(p-1) request bytes and cfg.peer_window
 * bytes of cost unanswered per peer, and at most the inflight share and
 * cfg.window in total, and lets batches to network peers out at the pacing
 * rate (shuffle_pace.c); peers on this node are not paced. Sealed batches
 * leave in the order they were sealed, skipping a peer whose window is
 * full (and its later batches, to keep the order per peer). A batch
 * carries its requester's pacing rate, so that responders can compare
 * theirs with their peers' (wsp__update_peer_ref).
 *
 * Responses. Response chunks are received only while they fit the resp_in
 * share (one is always allowed); they are handed over as soon as they are
 * complete, so that share always drains. A chunk answers the oldest batch
 * in flight to its peer, its entries in the order of the batch's requests;
 * the batch's last chunk takes it out of the windows, and its round trip
 * is the pacing controller's measurement.
 *
 * Requests to this rank itself take the same path without MPI: the sealed
 * batch is served from the requester's own buffer and its chunks are
 * handed over directly (shuffle_serve.c).
 */
#include "shuffle_internal.h"
#include "../core/measure.h"
#include "../core/tags.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

/* The backlog's volume limit: this many seconds at the pacing rate, or
 * this many batches. */
#define WSP__BACKLOG_S 0.25
#define WSP__BACKLOG_BATCHES 4.0

/* ---- batching ---- */

static double wsp__est_resp(const wsp_shuffle_t *sh) {
  return sh->resp_per_req >= 0 ? sh->resp_per_req : (double)sh->cfg.batch_bytes;
}

static void wsp__list_push(wsp__obatch_t **head, wsp__obatch_t **tail,
                           wsp__obatch_t *b) {
  b->next = NULL;
  if (*tail)
    (*tail)->next = b;
  else
    *head = b;
  *tail = b;
}

static wsp__obatch_t *wsp__list_pop(wsp__obatch_t **head, wsp__obatch_t **tail) {
  wsp__obatch_t *b = *head;
  if (b) {
    *head = b->next;
    if (*head == NULL) *tail = NULL;
    b->next = NULL;
  }
  return b;
}

/* Moves the open batch of `dest` to the ready queue. */
static void wsp__seal(wsp_shuffle_t *sh, int dest) {
  wsp__peer_t *pe = &sh->peers[dest];
  wsp__obatch_t *b = pe->open;
  if (b == NULL) return;
  pe->open = NULL;
  sh->n_open--;
  if (b->cap > b->len) { /* give back the doubling slack */
    unsigned char *nb = realloc(b->buf, b->len);
    if (nb) {
      sh->m_backlog -= b->cap - b->len;
      b->buf = nb;
      b->cap = b->len;
    }
  }
  b->seq = pe->next_seq++;
  wsp__put_hdr(b->buf, b->seq, b->count, 0);
  b->dest = dest;
  wsp__list_push(&sh->ready_head, &sh->ready_tail, b);
  sh->n_ready++;
}

/* The volume (cost) the backlog may hold before a post waits: what the
 * pacing rate lets out in WSP__BACKLOG_S (at most the window), or a few
 * batches: enough that pacing never runs dry, little enough that requests
 * do not queue for long before they are sent. */
static double wsp__backlog_cost_limit(const wsp_shuffle_t *sh) {
  double u = wsp__pace_unit(&sh->pace);
  double a = wsp__pace_rate(&sh->pace) * WSP__BACKLOG_S;
  if (a > wsp__pace_window(&sh->pace)) a = wsp__pace_window(&sh->pace);
  double b = WSP__BACKLOG_BATCHES * u;
  return a > b ? a : b;
}

/* Would a request of `bytes` and `cost` to `dest` fit the backlog now? */
static int wsp__fits(const wsp_shuffle_t *sh, int dest, size_t bytes,
                     double cost) {
  const wsp__peer_t *pe = &sh->peers[dest];
  const wsp__obatch_t *b = pe->open;
  size_t need = (b ? b->len : WSP__HDR_BYTES) + WSP__ENTRY_BYTES + bytes;
  size_t cap = b ? b->cap : 0;
  size_t delta = wsp__grow_cap(cap, need, sh->lim.peer_req) - cap;
  if (sh->m_backlog > 0 && sh->m_backlog + delta > sh->lim.backlog) return 0;
  if (sh->backlog_cost > 0 &&
      sh->backlog_cost + cost > wsp__backlog_cost_limit(sh))
    return 0;
  return 1;
}

int wsp__shuffle_batch_room(wsp_shuffle_t *sh, int dest, size_t bytes,
                            double *cost) {
  wsp__peer_t *pe = &sh->peers[dest];
  *cost = (double)(WSP__ENTRY_BYTES + bytes) + wsp__est_resp(sh);
  /* A batch that this request would overfill goes first. */
  if (pe->open && (pe->open->len + WSP__ENTRY_BYTES + bytes > sh->lim.peer_req ||
                   pe->open->cost + *cost > (double)sh->cfg.batch_bytes))
    wsp__seal(sh, dest);
  return wsp__fits(sh, dest, bytes, *cost);
}

int wsp__shuffle_batch_add(wsp_shuffle_t *sh, int dest, const void *data,
                           size_t bytes, double cost) {
  wsp__peer_t *pe = &sh->peers[dest];
  wsp__obatch_t *b = pe->open;
  if (b == NULL) {
    b = wsp__shuffle_calloc(sh, sizeof *b);
    if (b == NULL) return WSP_ERR_NOMEM;
    b->len = WSP__HDR_BYTES;
    b->t_open = MPI_Wtime();
  }
  size_t need = b->len + WSP__ENTRY_BYTES + bytes;
  if (need > b->cap) {
    size_t cap = wsp__grow_cap(b->cap, need, sh->lim.peer_req);
    unsigned char *nb = wsp__shuffle_realloc(sh, b->buf, cap);
    if (nb == NULL) {
      if (b != pe->open) free(b);
      return WSP_ERR_NOMEM;
    }
    sh->m_backlog += cap - b->cap;
    b->buf = nb;
    b->cap = cap;
  }
  if (b != pe->open) {
    pe->open = b;
    sh->n_open++;
  }
  wsp__put64(b->buf + b->len, (uint64_t)bytes);
  if (bytes) memcpy(b->buf + b->len + WSP__ENTRY_BYTES, data, bytes);
  b->len = need;
  b->count++;
  b->cost += cost;
  sh->backlog_cost += cost;
  sh->st.requests_posted++;
  sh->st.request_bytes += bytes;
  wsp__shuffle_note_peaks(sh);
  if (b->cost >= (double)sh->cfg.batch_bytes) wsp__seal(sh, dest); /* full */
  return WSP_OK;
}

/* ---- responses ---- */

/* Hands the controller the median of the rates the other ranks reported
 * in their request batches during the last WSP__PACE_PEER_AGE seconds
 * (shuffle_pace.c, "Fairness"), at most every WSP__PACE_PEER_EVERY s. */
static void wsp__update_peer_ref(wsp_shuffle_t *sh, double now) {
  if (sh->pace.mode != WSP_SHUFFLE_ADAPTIVE ||
      now - sh->peer_ref_t < WSP__PACE_PEER_EVERY)
    return;
  sh->peer_ref_t = now;
  int n = 0;
  for (int q = 0; q < sh->p; q++) {
    const wsp__peer_t *pe = &sh->peers[q];
    if (q != sh->rank && pe->rate_seen > 0 &&
        now - pe->rate_seen_t <= WSP__PACE_PEER_AGE)
      sh->rate_buf[n++] = pe->rate_seen;
  }
  wsp__pace_peers(&sh->pace, wsp__measure_median(sh->rate_buf, n, sh->rate_buf));
}

/* The controller's state after an interval ended (WSP_LOG_TRACE). */
static void wsp__trace_pace(const wsp_shuffle_t *sh, double now) {
  const wsp__pace_t *pc = &sh->pace;
  wsp__log(&sh->c, WSP_LOG_TRACE,
           "shuffle pace: t %.4f interval %llu: rate %.0f B/s, queue %.0f "
           "B over a floor of %.0f B, delivered %.0f B/s (smoothed %.0f), "
           "srtt %.4f s, in flight %.0f B, peers' median %.0f B/s, %llu up "
           "(%llu towards the median), %llu down, %llu stalls, slow start left %llu "
           "on the queue and %llu at the median%s",
           now - sh->t_open, (unsigned long long)pc->n_intervals,
           wsp__pace_rate(pc), pc->prev_q, pc->floor,
           pc->ndelivered > 0 ? pc->delivered[pc->ndelivered - 1] : 0.0,
           pc->dsmooth, pc->srtt, sh->net_cost, pc->peer_ref,
           (unsigned long long)pc->n_increase,
           (unsigned long long)pc->n_toward_median,
           (unsigned long long)pc->n_decrease,
           (unsigned long long)pc->n_stall,
           (unsigned long long)pc->n_exited,
           (unsigned long long)pc->n_joined,
           pc->slow_start ? " (slow start)" : "");
}

/* The oldest batch in flight to `src` is answered: it leaves the windows,
 * its round trip goes to the pacing controller (network peers only), its
 * responses to the estimate of the response per request. */
static int wsp__answered(wsp_shuffle_t *sh, int src, double now) {
  wsp__peer_t *pe = &sh->peers[src];
  wsp__obatch_t *b = pe->fly_head;
  if (b->answered != b->count)
    return wsp__shuffle_broken(sh, "a batch's last chunk left requests unanswered");
  if (src != sh->rank) {
    int mrc = MPI_Wait(&b->req, MPI_STATUS_IGNORE); /* matched: done or nearly */
    if (mrc != MPI_SUCCESS)
      return wsp__shuffle_fatal(sh, wsp__mpi_fail(&sh->c, mrc, "MPI_Wait", WSP__WHERE));
  }
  wsp__list_pop(&pe->fly_head, &pe->fly_tail);
  sh->n_fly--;
  pe->fly_req -= b->len;
  pe->fly_cost -= b->cost;
  if (pe->fly_head == NULL) pe->fly_cost = 0; /* no rounding residue */
  sh->inflight_req -= b->len;
  sh->m_inflight -= b->cap;
  double actual = (double)b->len + (double)b->resp_bytes;
  if (src != sh->rank && !pe->local) {
    sh->net_cost -= b->cost;
    if (sh->net_cost < 0 || sh->n_fly == 0) sh->net_cost = 0; /* rounding */
    uint64_t iv = sh->pace.n_intervals;
    wsp__update_peer_ref(sh, now);
    wsp__pace_ack(&sh->pace, now - b->t_sent, actual, sh->net_cost, now);
    if (sh->pace.n_intervals != iv && sh->c.cfg.log_level >= WSP_LOG_TRACE)
      wsp__trace_pace(sh, now);
  }
  double per = (double)b->resp_bytes / (double)b->count;
  sh->resp_per_req = sh->resp_per_req < 0
                         ? per
                         : sh->resp_per_req + (per - sh->resp_per_req) / WSP__PACE_GAIN;
  free(b->buf);
  free(b);
  return WSP_OK;
}

int wsp__shuffle_dispatch(wsp_shuffle_t *sh, int src, const unsigned char *buf,
                          size_t len, double now) {
  wsp__peer_t *pe = &sh->peers[src];
  if (len < WSP__HDR_BYTES) return wsp__shuffle_broken(sh, "short response chunk");
  uint64_t seq = wsp__get64(buf);
  uint32_t count = wsp__get32(buf + 8), flags = wsp__get32(buf + 12);
  wsp__obatch_t *b = pe->fly_head;
  if (b == NULL || b->seq != seq)
    return wsp__shuffle_broken(sh, "a response chunk does not answer the oldest "
                                   "batch in flight to its peer");
  /* A chunk is built to end with its last entry, so entries that do not
   * fill it exactly mean its bytes are not the ones sent: it fails the
   * shuffle before any of it reaches a handler. */
  size_t end = WSP__HDR_BYTES; /* <= len throughout, until a failure sets SIZE_MAX */
  for (uint32_t i = 0; i < count && end != SIZE_MAX; i++) {
    if (len - end < WSP__ENTRY_BYTES) {
      end = SIZE_MAX;
      break;
    }
    uint64_t rl = wsp__get64(buf + end);
    end = rl > len - end - WSP__ENTRY_BYTES ? SIZE_MAX : end + WSP__ENTRY_BYTES + (size_t)rl;
  }
  if (end != len)
    return wsp__shuffle_broken(sh, "a response chunk whose entries do not fill it (its bytes "
                                   "are not the ones sent)");
  /* The entries, paired with their requests, in groups: one entry per
   * on_response call, up to WSP__RUN_MAX per on_responses call. */
  size_t off = WSP__HDR_BYTES, group = sh->batched ? WSP__RUN_MAX : 1;
  wsp_shuffle_item_t it[WSP__RUN_MAX];
  for (uint32_t i = 0; i < count;) {
    size_t n = 0, bytes = 0;
    for (; n < group && i < count; n++, i++) {
      /* The chunk's own bounds were checked above; these are the batch's. */
      if (b->answered >= b->count || b->cursor + WSP__ENTRY_BYTES > b->len)
        return wsp__shuffle_broken(sh, "malformed response chunk");
      uint64_t rl = wsp__get64(buf + off);
      uint64_t ql = wsp__get64(b->buf + b->cursor);
      off += WSP__ENTRY_BYTES;
      if (ql > b->len - b->cursor - WSP__ENTRY_BYTES)
        return wsp__shuffle_broken(sh, "malformed response chunk");
      const unsigned char *q = b->buf + b->cursor + WSP__ENTRY_BYTES;
      it[n] = (wsp_shuffle_item_t){.req = ql ? q : NULL, .req_bytes = (size_t)ql,
                                   .resp = rl ? buf + off : NULL, .resp_bytes = (size_t)rl};
      b->resp_bytes += (size_t)rl;
      b->cursor += WSP__ENTRY_BYTES + (size_t)ql;
      b->answered++;
      off += (size_t)rl;
      bytes += (size_t)rl;
    }
    sh->in_handler = WSP__IN_RESPONSE;
    int hrc = sh->batched ? sh->hb.on_responses(sh->user, src, n, it)
                          : sh->h.on_response(sh->user, src, it[0].req, it[0].req_bytes,
                                              it[0].resp, it[0].resp_bytes);
    sh->in_handler = WSP__IN_NONE;
    if (hrc != 0) wsp__shuffle_handler_failed(sh, sh->batched ? "responses" : "response", hrc,
                                              src);
    sh->st.responses_handled += n;
    sh->st.response_bytes_received += bytes;
  }
  return flags & WSP__CHUNK_LAST ? wsp__answered(sh, src, now) : WSP_OK;
}

/* Whether the response chunk at the head of a peer's queue is all here: a
 * whole chunk once received; an assembly once every piece is posted (it
 * is not being assembled any more) and every piece that follows it, up to
 * its length, is received. */
static int wsp__chunk_complete(const wsp__peer_t *pe, const wsp__imsg_t *ch) {
  if (ch->kind == WSP__MSG_WHOLE) return ch->received;
  if (ch->kind != WSP__MSG_ASSEMBLY || pe->assembling == ch) return 0;
  size_t got = 0;
  for (const wsp__imsg_t *x = ch->next; x && got < ch->len; x = x->next) {
    if (x->kind != WSP__MSG_PIECE || !x->received) return 0;
    got += x->len;
  }
  return got == ch->len;
}

/* Step 1: receive response chunks (whole, or announced and in pieces)
 * while they fit the resp_in share, and hand over the complete ones, in
 * order per peer. */
int wsp__shuffle_pass_responses(wsp_shuffle_t *sh, double now, int *progress) {
  const wsp__inbox_t box = {
      .tag = WSP__TAG_SHUFFLE_RESP,
      .elem = sizeof(wsp__imsg_t),
      .queue = offsetof(wsp__peer_t, rin),
      .queued = &sh->n_rin,
      .held = &sh->m_resp_in,
      .limit = sh->lim.resp_in,
      .pieces = 1,
  };
  int rc = wsp__shuffle_receive(sh, &box, progress);
  if (rc != WSP_OK || sh->n_rin == 0) return rc;
  for (int q = 0; q < sh->p; q++) {
    wsp__peer_t *pe = &sh->peers[q];
    wsp__imsg_t *ch;
    /* Completion was tested in step 0. */
    while ((ch = pe->rin.head) != NULL && wsp__chunk_complete(pe, ch)) {
      if (ch->kind == WSP__MSG_ASSEMBLY && wsp__get64(ch->buf) != ch->seq)
        return wsp__shuffle_broken(sh, "a response chunk differs from its announcement");
      if ((rc = wsp__shuffle_dispatch(sh, q, ch->buf, ch->len, now)) != WSP_OK)
        return rc;
      wsp__imsgq_pop(&pe->rin);
      sh->n_rin--;
      sh->m_resp_in -= ch->len;
      /* An assembly's pieces follow it, their buffers its own. */
      for (size_t got = 0; ch->kind == WSP__MSG_ASSEMBLY && got < ch->len;) {
        wsp__imsg_t *piece = wsp__imsgq_pop(&pe->rin);
        sh->n_rin--;
        got += piece->len;
        free(piece);
      }
      free(ch->buf);
      free(ch);
      *progress = 1;
    }
  }
  return WSP_OK;
}

/* ---- sending ---- */

/* Step 5: seal batches that waited long enough (all of them when closing;
 * self batches at once, as waiting gains nothing there). */
void wsp__shuffle_pass_seal(wsp_shuffle_t *sh, double now) {
  if (sh->n_open == 0) return;
  for (int q = 0; q < sh->p; q++) {
    wsp__obatch_t *b = sh->peers[q].open;
    if (b && (q == sh->rank || sh->state != WSP__ST_OPEN ||
              now - b->t_open >= sh->cfg.batch_delay))
      wsp__seal(sh, q);
  }
}

/* Starts batch b on its way: sent with the requester's rate in its header,
 * or, to this rank itself, queued to be served from its own buffer as the
 * received batch `self_ib`. On an MPI failure b stays where it is. */
static int wsp__launch(wsp_shuffle_t *sh, wsp__obatch_t *b,
                       wsp__ibatch_t *self_ib, double now) {
  int q = b->dest;
  b->t_sent = now;
  if (q != sh->rank) {
    float rate = now - sh->paced_at <= WSP__PACE_LIMITED_S
                     ? (float)wsp__pace_report(&sh->pace)
                     : 0.0f;
    memcpy(b->buf + 12, &rate, sizeof rate);
    int rc = wsp__isend_bytes(&sh->c, b->buf, b->len, q, WSP__TAG_SHUFFLE_REQ, 0,
                              &b->req);
    return rc == WSP_OK ? rc : wsp__shuffle_fatal(sh, rc);
  }
  wsp__peer_t *pe = &sh->peers[q];
  wsp__ibatch_t *ib = self_ib;
  ib->m.buf = b->buf;
  ib->m.len = b->len;
  ib->m.borrowed = 1;
  ib->m.received = 1;
  ib->parsed = 1;
  ib->seq = b->seq;
  ib->count = b->count;
  ib->cursor = WSP__HDR_BYTES;
  pe->expect_seq++;
  wsp__imsgq_push(&pe->in, &ib->m);
  sh->n_in++;
  return WSP_OK;
}

/* Batch b, launched and unlinked from the ready queue, moves from the
 * backlog to the flight of its peer. */
static void wsp__fly(wsp_shuffle_t *sh, wsp__obatch_t *b, int net) {
  wsp__peer_t *pe = &sh->peers[b->dest];
  b->cursor = WSP__HDR_BYTES;
  wsp__list_push(&pe->fly_head, &pe->fly_tail, b);
  sh->n_fly++;
  sh->m_backlog -= b->cap;
  sh->m_inflight += b->cap;
  sh->backlog_cost -= b->cost;
  if (sh->n_open == 0 && sh->n_ready == 0) sh->backlog_cost = 0;
  sh->inflight_req += b->len;
  pe->fly_req += b->len;
  pe->fly_cost += b->cost;
  if (net) {
    sh->net_cost += b->cost;
    wsp__pace_sent(&sh->pace, b->cost);
  }
  sh->st.batches_sent++;
  wsp__shuffle_note_peaks(sh);
}

/* Step 6: send sealed batches in the order they were sealed (so, for the
 * usual application, the order of posting), within the per-peer and total
 * bounds and the pacing controller's permission. A batch whose peer's
 * window is full is skipped, and so is every later batch of that peer
 * (order per peer is kept); batches to other peers still go. Why the
 * posting order and not a round robin over peer indices: applications
 * that post to peers in a staggered order (rank + 1, rank + 2, ...) spread
 * the load evenly over responders; a rotating index scrambled that, and on
 * netlab the collisions left some responders idle and others queued
 * (docs/results/shuffle.md, "How the controller got here"). */
int wsp__shuffle_pass_send(wsp_shuffle_t *sh, double now, int *progress) {
  if (sh->ready_head == NULL) return WSP_OK;
  sh->stamp++;
  int paced_out = 0; /* the controller said no: network peers wait */
  wsp__obatch_t *prev = NULL, *b = sh->ready_head;
  while (b) {
    int q = b->dest;
    wsp__peer_t *pe = &sh->peers[q];
    int net = q != sh->rank && !pe->local;
    int skip = pe->stamp == sh->stamp || (net && paced_out);
    if (!skip && ((pe->fly_req > 0 && pe->fly_req + b->len > sh->lim.peer_req) ||
                  (pe->fly_cost > 0 && pe->fly_cost >= (double)sh->cfg.peer_window)))
      skip = 1;
    if (!skip && sh->m_inflight > 0 && sh->m_inflight + b->cap > sh->lim.inflight)
      return WSP_OK; /* the inflight share: nothing else may go either */
    if (!skip && net && !wsp__pace_may_send(&sh->pace, sh->net_cost, now)) {
      skip = paced_out = 1;
      sh->paced_at = now;
    }
    wsp__ibatch_t *self_ib = NULL;
    if (!skip && q == sh->rank &&
        (self_ib = wsp__shuffle_calloc(sh, sizeof *self_ib)) == NULL) {
      wsp__shuffle_nomem_wait(sh); /* b stays queued, and so do later self batches */
      skip = 1;
    }
    if (skip) {
      pe->stamp = sh->stamp; /* later batches of this peer wait too */
      prev = b;
      b = b->next;
      continue;
    }
    wsp__obatch_t *next = b->next;
    int rc = wsp__launch(sh, b, self_ib, now);
    if (rc != WSP_OK) return rc; /* b stays queued */
    /* Unlink from the ready queue. */
    if (prev)
      prev->next = next;
    else
      sh->ready_head = next;
    if (sh->ready_tail == b) sh->ready_tail = prev;
    sh->n_ready--;
    wsp__fly(sh, b, net);
    *progress = 1;
    b = next;
  }
  return WSP_OK;
}
