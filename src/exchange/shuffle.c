/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The all-pairs shuffle engine: requests to any rank, batched per
 * destination, answered by the destination's request handler, the answers
 * handed to the requester's response handler; bounded memory, flow control,
 * adaptive pacing, and a collective close that detects termination.
 *
 * The engine's files. Each rank is requester and responder at once, and
 * every call into the engine that must wait, or that asks for progress,
 * runs passes:
 *   shuffle.c           the public API (open, post, reply, progress, stats,
 *                       close with its termination, free);
 *   shuffle_pass.c      a pass and its steps' order, the waits with their
 *                       back-off, the optional progress thread and its lock,
 *                       and the receiving of messages;
 *   shuffle_request.c   the requester: batching, sealing, sending under the
 *                       flow control and the pacing, handing responses to
 *                       on_response;
 *   shuffle_serve.c     the responder: receiving request batches, serving
 *                       them with on_request, sending the response chunks;
 *   shuffle_pace.c      the pacing controller; shuffle_config.c the
 *                       configuration and the memory shares;
 *   shuffle_internal.h  the wire format, the memory shares, the engine's
 *                       state and what the files share.
 *
 * Memory. cfg.mem_limit is split into shares that cannot add up to more
 * than it (shuffle_internal.h); the requester and the responder each say
 * how they keep to theirs. A post outside handlers waits, running passes,
 * while the backlog is full.
 *
 * Handlers. on_request may only reply (a request handler that posted would
 * make serving depend on the room for new requests, and the termination
 * argument below on its posts). on_response may post follow-up requests;
 * such a post never waits (a handler cannot wait for the responses whose
 * handling it is part of), so it may push the backlog past its share:
 * stats.peak_backlog shows by how much. A pass never calls a handler from
 * inside another handler.
 *
 * Termination (wsp_shuffle_close). A closing rank stops accepting posts
 * from outside handlers, seals everything and runs passes until all of its
 * own requests are answered and handled: nothing of its own is queued, in
 * flight, or being received. Only then does it start a non-blocking sum
 * (src/core/sum.c) of (failures, requests posted), and it
 * keeps running passes, serving others, until the sum completes. Claim:
 * when the sum completes on any rank, every request of every rank has been
 * answered and handled, and no shuffle message is in flight. Proof: the sum
 * completes only after every rank has contributed, that is entered it. A
 * rank enters only when all its requests are answered and handled. After
 * entering, a rank posts no more requests: posts then could only come from
 * response handlers, which only run on responses, and it has no request
 * left to be answered. So at the moment the last rank enters, no rank has
 * an unanswered request; every request message was received (it was
 * answered) and every response message was received (it was handled). The
 * sums of posted and (then final) served requests must agree, which close
 * checks with a second sum.
 * A rank whose handler failed still serves and enters with its failure
 * counted, so every rank learns it and nobody hangs.
 *
 * The shuffle's traffic runs on its own duplicate of the wsp_comm_t's
 * private communicator, so its tags (src/core/tags.h) meet nothing else.
 */
#include "shuffle_internal.h"
#include "../core/tags.h"
#include "../p2p/xport.h"

#include <stdio.h>
#include <stdlib.h>

/* ---- open ---- */

/* wsp_shuffle_open's local checks: the arguments, the configuration (cfg,
 * or the defaults and WSP_SHUFFLE_* when cfg is NULL) into *c, the testing
 * aid WSP_SHUFFLE_FAULT_NOMEM into *fault_n, the memory shares into *lim,
 * and the thread level a progress thread needs. */
static int wsp__open_check(wsp_comm_t *comm, const char *fn,
                           const wsp_shuffle_config_t *cfg,
                           const wsp_shuffle_handlers_t *h,
                           const wsp_shuffle_batch_handlers_t *hb, int batched,
                           wsp_shuffle_t **out, wsp_shuffle_config_t *c,
                           size_t *fault_n, wsp__shuffle_limits_t *lim) {
  int rc;
  if (out == NULL)
    rc = wsp__fail(comm, WSP_ERR_ARG, "%s: out is NULL", fn);
  else if (batched ? hb == NULL : h == NULL)
    rc = wsp__fail(comm, WSP_ERR_ARG, "%s: handlers is NULL", fn);
  else if (h && h->on_request == NULL)
    rc = wsp__fail(comm, WSP_ERR_ARG, "%s: handlers->on_request is NULL", fn);
  else if (h && h->on_response == NULL)
    rc = wsp__fail(comm, WSP_ERR_ARG, "%s: handlers->on_response is NULL", fn);
  else if (hb && hb->on_requests == NULL)
    rc = wsp__fail(comm, WSP_ERR_ARG, "%s: handlers->on_requests is NULL", fn);
  else if (hb && hb->on_responses == NULL)
    rc = wsp__fail(comm, WSP_ERR_ARG, "%s: handlers->on_responses is NULL", fn);
  else if (cfg)
    rc = wsp__shuffle_config_check(cfg);
  else
    rc = wsp_shuffle_config_from_env(c);
  if (rc == WSP_OK && cfg) *c = *cfg;
  /* Testing aid, local to this rank and not part of the configuration
   * (docs/env.md): an allocation inside a pass fails with probability 1/N. */
  if (rc == WSP_OK) rc = wsp__shuffle_fault_nomem(comm, fault_n);
  if (rc == WSP_OK) rc = wsp__shuffle_limits(c->mem_limit, comm->size, c->batch_bytes, lim);
  if (rc == WSP_OK && c->progress_thread) {
#ifdef WSP_SIMGRID
    rc = wsp__fail(comm, WSP_ERR_UNSUPPORTED, "%s: no progress thread under SimGrid",
                   fn);
#else
    int level = MPI_THREAD_SINGLE;
    if (MPI_Query_thread(&level) != MPI_SUCCESS || level != MPI_THREAD_MULTIPLE)
      rc = wsp__fail(comm, WSP_ERR_UNSUPPORTED,
                     "%s: cfg->progress_thread needs MPI_THREAD_MULTIPLE "
                     "(initialize MPI with MPI_Init_thread)",
                     fn);
#endif
  }
  return rc;
}

/* Frees the handle itself (its buffers are released at close). The
 * termination sums are kept when MPI may still write into one. */
static void wsp__free_handle(wsp_shuffle_t *sh) {
  if (sh == NULL) return;
  free(sh->peers);
  free(sh->rate_buf);
  free(sh->run);
  if (!sh->close_sums_pending) free(sh->close_sums);
  free(sh);
}

/* A zeroed handle with room for p peers; NULL when memory or the pacing
 * controller's configuration fails. */
static wsp_shuffle_t *wsp__new_handle(int p, const wsp_shuffle_config_t *c, int batched) {
  wsp_shuffle_t *sh = calloc(1, sizeof *sh);
  if (sh == NULL) return NULL;
  sh->peers = calloc((size_t)p, sizeof *sh->peers);
  sh->rate_buf = calloc((size_t)p, sizeof *sh->rate_buf);
  sh->close_sums = calloc(2, sizeof *sh->close_sums);
  if (batched) sh->run = calloc(WSP__RUN_MAX, sizeof *sh->run);
  if (sh->peers == NULL || sh->rate_buf == NULL || sh->close_sums == NULL ||
      (batched && sh->run == NULL) ||
      wsp__pace_init(&sh->pace, c->mode, c->rate, (double)c->batch_bytes,
                     (double)c->window, MPI_Wtime()) != WSP_OK) {
    wsp__free_handle(sh);
    return NULL;
  }
  return sh;
}

/* Whether the shuffle's responses take lanes of its own. Where one TCP
 * flow gets only part of the link, the communicator's transport carries
 * its transfers over several (src/p2p/xport.c); but the shuffle talks to
 * every other rank at once, so a host already runs one MPI flow per pair
 * of its ranks and another node's, and enough of them fill its NIC without
 * lanes, which would then only add their round trip and their CPU. So,
 * collective over comm (the verdict of auto is taken here if it was not
 * yet, when a chunk can reach the lanes' threshold): lanes when they are
 * forced (WSP_TRANSPORT=lanes), and under auto when the host with the
 * fewest such flows would get less than WSP__SHUFFLE_LANES_SHARE of the
 * rate of the lanes from its flows at the rate of one (the verdict's
 * figures, the same on every rank); below that share the lanes' cost is
 * not paid back. */
#define WSP__SHUFFLE_LANES_SHARE 0.8
static int wsp__shuffle_lanes(wsp_comm_t *comm, const wsp__shuffle_limits_t *lim, int *use) {
  *use = 0;
  if (comm->lanes == NULL || lim->resp_out / 2 < wsp__p2p_min(&comm->lanes->cfg)) return WSP_OK;
  int rc = wsp__xport_decide(comm);
  if (rc != WSP_OK || comm->xport == NULL) return rc;
  if (comm->lanes_rate_one <= 0 || comm->lanes_rate_k <= 0) {
    *use = 1; /* forced */
    return WSP_OK;
  }
  const int p = comm->size, nodes = comm->topo.pub.nodes;
  int *count = calloc((size_t)nodes, sizeof *count);
  if ((rc = wsp__agree_alloc(comm, count == NULL, "wsp_shuffle_open")) != WSP_OK) {
    free(count);
    return rc;
  }
  for (int q = 0; q < p; q++) count[comm->topo.node_of[q]]++;
  double flows = (double)p * p;
  for (int n = 0; n < nodes; n++)
    if ((double)count[n] * (p - count[n]) < flows) flows = (double)count[n] * (p - count[n]);
  free(count);
  *use = flows * comm->lanes_rate_one < WSP__SHUFFLE_LANES_SHARE * comm->lanes_rate_k;
  wsp__log(comm, WSP_LOG_INFO,
           "wsp_shuffle_open: %g flows per host at %.3g MB/s each against %.3g MB/s over the "
           "lanes: responses go %s",
           flows, comm->lanes_rate_one / 1e6, comm->lanes_rate_k / 1e6,
           *use ? "over lanes of the shuffle's own" : "through MPI");
  return WSP_OK;
}

/* Both opens: handlers per request and response (h), or batched (hb). */
static int wsp__open(wsp_comm_t *comm, const char *fn, const wsp_shuffle_config_t *cfg,
                     const wsp_shuffle_handlers_t *h,
                     const wsp_shuffle_batch_handlers_t *hb, int batched, void *user,
                     wsp_shuffle_t **out) {
  if (comm == NULL) return wsp__fail(NULL, WSP_ERR_ARG, "%s: comm is NULL", fn);
  if (wsp__usable(comm, fn) != WSP_OK) return WSP_ERR_TIMEOUT;
  if (out) *out = NULL;

  /* Local checks first; a failing rank still takes part in the collective
   * steps below so that every rank returns, then reports. */
  char local_msg[512] = "";
  wsp_shuffle_config_t c;
  wsp_shuffle_config_init(&c);
  size_t fault_n = 0;
  wsp__shuffle_limits_t lim;
  int local_rc = wsp__open_check(comm, fn, cfg, h, hb, batched, out, &c, &fault_n, &lim);
  wsp_shuffle_t *sh = NULL;
  if (local_rc == WSP_OK && (sh = wsp__new_handle(comm->size, &c, batched)) == NULL)
    local_rc = wsp__fail(comm, WSP_ERR_NOMEM, "%s: out of memory", fn);
  if (local_rc != WSP_OK) snprintf(local_msg, sizeof local_msg, "%s", wsp_last_error());

  /* Collective: the agreement on configuration and local failures, then
   * the shuffle's own communicator (a duplicate, made only once every rank
   * is known to be here, and under the time limit). */
  wsp__agree_t ag = {
      .what = fn,
      .status = local_rc,
      .status_msg = local_msg,
      .fp = wsp__shuffle_config_fingerprint(&c),
      .compare = 1,
      .differ_status = WSP_ERR_CONFIG,
      .differ = "the shuffle configuration differs between ranks (WSP_SHUFFLE_* variables "
                "or wsp_shuffle_config_t); every rank must use the same",
  };
  MPI_Comm dup = MPI_COMM_NULL;
  int rc = wsp__agree(comm, &ag);
  if (rc != WSP_OK) goto fail;
  if ((rc = wsp__comm_dup(comm, &dup)) != WSP_OK) goto fail;
  WSP__MPI_GOTO(comm, MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN), rc, fail);
  /* Who shares this node (the communicator's node map, src/core/topo.c):
   * ranks there talk through shared memory, not the network, and are not
   * paced. */
  for (int q = 0; q < comm->size; q++)
    sh->peers[q].local = comm->topo.node_of[q] == comm->topo.node_of[comm->rank];
  sh->c = *comm;
  sh->c.mpi = dup;
  /* The report counts the calls on the communicator the user called. */
  sh->c.report = NULL;
  /* The copy must not reach the communicator's lanes (src/p2p/xport.c),
   * whose engine its waits would otherwise drive, from the progress thread
   * too, while the caller runs a collective on the same engine: where its
   * responses take lanes, they are lanes of its own, moved in its passes
   * under its lock (shuffle_pass.c). */
  int lanes = 0;
  if ((rc = wsp__shuffle_lanes(comm, &lim, &lanes)) != WSP_OK ||
      (rc = wsp__xport_inherit(&sh->c, lanes ? comm : NULL, "wsp_shuffle_open: the lanes")) !=
          WSP_OK)
    goto fail;
  sh->cfg = c;
  sh->lim = lim;
  /* The piece size: configured, else the eager limit between nodes,
   * else a size both MPIs send eagerly by default (shuffle_internal.h). A
   * chunk holds at most resp_out/2 (shuffle_config.c), so its sends are at
   * most its pieces plus the announcement. */
  sh->piece = c.piece_bytes ? c.piece_bytes
              : comm->model.eager >= WSP__PIECE_MIN ? comm->model.eager
                                                    : WSP__PIECE_DEFAULT;
  sh->osend_per_chunk = 2 + (lim.resp_out / 2 + WSP__CHUNK_PREFIX) / sh->piece;
  sh->fault_n = fault_n;
  sh->fault_rng = 0x9E3779B97F4A7C15ULL ^ (uint64_t)(comm->rank + 1);
  if (batched)
    sh->hb = *hb;
  else
    sh->h = *h;
  sh->batched = batched;
  sh->user = user;
  sh->state = WSP__ST_OPEN;
  sh->p = comm->size;
  sh->rank = comm->rank;
  sh->resp_per_req = -1;
  for (int i = 0; i < WSP__REPLY_SLOTS; i++) sh->replies[i].sh = sh;
  sh->t_open = MPI_Wtime();
  sh->paced_at = -1e300; /* never held back yet */
  sh->peers[sh->rank].local = 1;
  /* Too late to fail alone if the thread does not start (the others have
   * an open shuffle): run without it, which is correct, only less lively. */
  if (c.progress_thread && !wsp__shuffle_thread_start(sh))
    wsp__log(&sh->c, WSP_LOG_WARN,
             "wsp_shuffle_open: could not start the progress thread; "
             "progress is driven by the caller's calls only");
  wsp__log(&sh->c, WSP_LOG_DEBUG,
           "wsp_shuffle_open: p %d, mem_limit %zu (backlog %zu, inflight %zu, "
           "intake %zu, resp_out %zu, resp_in %zu), peer_req %zu, max request "
           "%zu, max response %zu, chunk %zu, piece %zu, mode %s",
           sh->p, lim.mem, lim.backlog, lim.inflight, lim.intake, lim.resp_out,
           lim.resp_in, lim.peer_req, lim.max_request, lim.max_response,
           lim.chunk, sh->piece, c.mode == WSP_SHUFFLE_FIXED ? "fixed" : "adaptive");
  *out = sh;
  return WSP_OK;

fail:
  if (dup != MPI_COMM_NULL) MPI_Comm_free(&dup);
  wsp__free_handle(sh);
  return rc;
}

int wsp_shuffle_open(wsp_comm_t *comm, const wsp_shuffle_config_t *cfg,
                     const wsp_shuffle_handlers_t *handlers, void *user,
                     wsp_shuffle_t **out) {
  return wsp__open(comm, "wsp_shuffle_open", cfg, handlers, NULL, 0, user, out);
}

int wsp_shuffle_open_batched(wsp_comm_t *comm, const wsp_shuffle_config_t *cfg,
                             const wsp_shuffle_batch_handlers_t *handlers, void *user,
                             wsp_shuffle_t **out) {
  return wsp__open(comm, "wsp_shuffle_open_batched", cfg, NULL, handlers, 1, user, out);
}

/* ---- post, reply, progress, stats ---- */

/* wsp_shuffle_post's checks, in order; the lock is held. */
static int wsp__post_check(wsp_shuffle_t *sh, int dest, const void *data,
                           size_t bytes) {
  const char *fn = "wsp_shuffle_post";
  if (sh->state == WSP__ST_CLOSED)
    return wsp__fail(&sh->c, WSP_ERR_ARG, "%s: the shuffle is closed", fn);
  if (sh->in_handler == WSP__IN_REQUEST)
    return wsp__fail(&sh->c, WSP_ERR_ARG,
                     "%s: called from a request handler (request handlers may "
                     "only reply; post follow-ups from the response handler)",
                     fn);
  if (sh->state == WSP__ST_CLOSING && sh->in_handler != WSP__IN_RESPONSE)
    return wsp__fail(&sh->c, WSP_ERR_ARG,
                     "%s: the shuffle is closing (only response handlers may "
                     "still post)",
                     fn);
  if (dest < 0 || dest >= sh->p)
    return wsp__fail(&sh->c, WSP_ERR_ARG, "%s: dest = %d is out of range [0, %d)",
                     fn, dest, sh->p);
  if (data == NULL && bytes > 0)
    return wsp__fail(&sh->c, WSP_ERR_ARG, "%s: data is NULL but bytes = %zu", fn,
                     bytes);
  if (bytes > sh->lim.max_request)
    return wsp__fail(&sh->c, WSP_ERR_ARG,
                     "%s: bytes = %zu exceeds the largest request, %zu bytes (a "
                     "peer's share of mem_limit = %zu at p = %d; raise "
                     "WSP_SHUFFLE_MEMORY for larger requests)",
                     fn, bytes, sh->lim.max_request, sh->lim.mem, sh->p);
  if (sh->fatal) return wsp__shuffle_refail(sh);
  return WSP_OK;
}

int wsp_shuffle_post(wsp_shuffle_t *sh, int dest, const void *data,
                     size_t bytes) {
  const char *fn = "wsp_shuffle_post";
  if (sh == NULL) return wsp__fail(NULL, WSP_ERR_ARG, "%s: sh is NULL", fn);
  wsp__shuffle_lock(sh);
  int rc = wsp__usable(&sh->c, fn);
  if (rc == WSP_OK) rc = wsp__post_check(sh, dest, data, bytes);
  if (rc != WSP_OK) {
    wsp__shuffle_unlock(sh);
    return rc;
  }
  /* A follow-up from a response handler never waits. */
  const int from_handler = sh->in_handler == WSP__IN_RESPONSE;
  double cost = 0, t0 = 0;
  wsp__backoff_t bo;
  wsp__shuffle_backoff_init(sh, &bo);
  /* Back-pressure: a post waits while the backlog is full, and also while
   * memory for the request cannot be had (passes free memory as answers
   * come in). A follow-up from a response handler cannot wait (the answers
   * it would wait for are being handled): it goes past a full backlog, and
   * without memory it is refused with WSP_ERR_AGAIN, to be posted again
   * later. A post without memory while the shuffle holds none (nothing of
   * this rank's queued or in flight, nothing being received, served or
   * sent) fails with WSP_ERR_NOMEM instead of waiting: no pass could give
   * any back, only the program can, so the wait would never end, and it
   * waits for no other rank, so no time limit applies to it either. */
  for (int waited = 0;; waited = 1) {
    /* Passes may have sealed the open batch or (handlers) added to it. */
    int fits = wsp__shuffle_batch_room(sh, dest, bytes, &cost);
    if ((from_handler || fits) && wsp__shuffle_batch_add(sh, dest, data, bytes, cost) == WSP_OK)
      break;
    if (from_handler) {
      wsp__shuffle_nomem_wait(sh);
      rc = wsp__fail(&sh->c, WSP_ERR_AGAIN,
                     "%s: no memory for the request now; a response handler cannot wait "
                     "for it: post it again after the handler returns",
                     fn);
      break;
    }
    if (fits) {
      wsp__shuffle_nomem_wait(sh);
      if (sh->m_backlog + sh->m_inflight + sh->m_intake + sh->m_resp_out + sh->m_resp_in == 0) {
        rc = wsp__fail(&sh->c, WSP_ERR_NOMEM,
                       "%s: no memory for a request of %zu bytes, and the shuffle holds "
                       "none it could give back (nothing of this rank's is queued or in "
                       "flight, nothing is being served): free memory and post it again",
                       fn, bytes);
        break;
      }
    }
    if (!waited) {
      sh->st.post_waits++;
      t0 = MPI_Wtime();
    }
    if ((rc = wsp__shuffle_wait_step(sh, &bo, fits)) != WSP_OK) {
      wsp__shuffle_unlock(sh);
      return sh->fatal ? wsp__shuffle_refail(sh) : rc;
    }
  }
  if (t0 > 0) sh->st.post_wait_seconds += MPI_Wtime() - t0;
  wsp__shuffle_unlock(sh);
  return rc;
}

static int wsp__reply(wsp_shuffle_t *sh, wsp_shuffle_reply_t *reply,
                      const void *data, size_t bytes) {
  const char *fn = "wsp_shuffle_reply";
  if (sh->batched)
    return wsp__fail(&sh->c, WSP_ERR_ARG,
                     "%s: the shuffle has batched handlers (on_requests answers "
                     "through items[i].resp)",
                     fn);
  if (!sh->reply_active)
    return wsp__fail(&sh->c, WSP_ERR_ARG,
                     "%s: not inside a request handler (the reply context is "
                     "only valid during the on_request call)",
                     fn);
  if (reply->call != sh->reply_call)
    return wsp__fail(&sh->c, WSP_ERR_ARG,
                     "%s: this reply context belongs to an earlier request "
                     "(it is only valid during the on_request call it was "
                     "given to)",
                     fn);
  if (sh->reply_replied)
    return wsp__fail(&sh->c, WSP_ERR_ARG,
                     "%s: this request was already answered (at most one "
                     "reply per request)",
                     fn);
  if (data == NULL && bytes > 0)
    return wsp__fail(&sh->c, WSP_ERR_ARG, "%s: data is NULL but bytes = %zu",
                     fn, bytes);
  if (bytes > sh->lim.max_response)
    return wsp__fail(&sh->c, WSP_ERR_ARG,
                     "%s: bytes = %zu exceeds the largest response, %zu bytes "
                     "(an eighth of mem_limit = %zu, over 4; raise "
                     "WSP_SHUFFLE_MEMORY for larger responses)",
                     fn, bytes, sh->lim.max_response, sh->lim.mem);
  if (wsp__shuffle_reply_put(sh, data, bytes) != WSP_OK) {
    int rc = wsp__fail(&sh->c, WSP_ERR_NOMEM,
                       "%s: no memory for a %zu-byte response", fn, bytes);
    wsp__shuffle_failed(sh, rc);
    return rc;
  }
  sh->reply_replied = 1;
  sh->st.response_bytes_sent += bytes;
  return WSP_OK;
}

/* Under the shuffle's lock: with a progress thread, a handle used from
 * another thread then waits for the pass and finds no handler running,
 * instead of writing the response chunk beside the handler. */
int wsp_shuffle_reply(wsp_shuffle_reply_t *reply, const void *data,
                      size_t bytes) {
  if (reply == NULL)
    return wsp__fail(NULL, WSP_ERR_ARG, "wsp_shuffle_reply: reply is NULL");
  wsp_shuffle_t *sh = reply->sh;
  wsp__shuffle_lock(sh);
  int rc = wsp__reply(sh, reply, data, bytes);
  wsp__shuffle_unlock(sh);
  return rc;
}

int wsp_shuffle_progress(wsp_shuffle_t *sh) {
  if (sh == NULL)
    return wsp__fail(NULL, WSP_ERR_ARG, "wsp_shuffle_progress: sh is NULL");
  wsp__shuffle_lock(sh);
  int rc = WSP_OK, progress;
  if (wsp__usable(&sh->c, "wsp_shuffle_progress") != WSP_OK && !sh->fatal)
    rc = WSP_ERR_TIMEOUT;
  else if (sh->state == WSP__ST_CLOSED)
    rc = wsp__fail(&sh->c, WSP_ERR_ARG, "wsp_shuffle_progress: the shuffle is closed");
  else if (sh->in_handler)
    rc = wsp__fail(&sh->c, WSP_ERR_ARG,
                   "wsp_shuffle_progress: called from a handler");
  else if (sh->fatal)
    rc = wsp__shuffle_refail(sh);
  else if ((rc = wsp__shuffle_pass(sh, &progress)) != WSP_OK)
    rc = wsp__shuffle_refail(sh);
  wsp__shuffle_unlock(sh);
  return rc;
}

static void wsp__fill_stats(const wsp_shuffle_t *sh, wsp_shuffle_stats_t *s) {
  *s = sh->st;
  s->mem_limit = sh->lim.mem;
  s->mem_current = sh->m_backlog + sh->m_inflight + sh->m_intake +
                   sh->m_resp_out + sh->m_resp_in;
  s->mem_peak = sh->pk_total;
  s->peak_backlog = sh->pk_backlog;
  s->peak_inflight = sh->pk_inflight;
  s->peak_intake = sh->pk_intake;
  s->peak_resp_out = sh->pk_resp_out;
  s->peak_resp_in = sh->pk_resp_in;
  s->max_request = sh->lim.max_request;
  s->piece_bytes = sh->piece;
  s->max_response = sh->lim.max_response;
  s->rate = wsp__pace_rate(&sh->pace);
  s->rate_min = sh->pace.rate_lo_seen;
  s->rate_max = sh->pace.rate_hi_seen;
  s->rtt_min_per_byte = sh->pace.base;
  s->srtt = sh->pace.srtt;
  s->inflight = sh->net_cost;
}

int wsp_shuffle_stats(const wsp_shuffle_t *sh, wsp_shuffle_stats_t *stats) {
  if (sh == NULL) return wsp__fail(NULL, WSP_ERR_ARG, "wsp_shuffle_stats: sh is NULL");
  if (stats == NULL)
    return wsp__fail(&sh->c, WSP_ERR_ARG, "wsp_shuffle_stats: stats is NULL");
  wsp_shuffle_t *m = (wsp_shuffle_t *)sh; /* the lock only */
  wsp__shuffle_lock(m);
  wsp__fill_stats(sh, stats);
  wsp__shuffle_unlock(m);
  return WSP_OK;
}

/* ---- close and free ---- */

/* Frees every buffer; only called when no MPI request is pending. */
static void wsp__release(wsp_shuffle_t *sh) {
  for (int q = 0; q < sh->p; q++) {
    wsp__peer_t *pe = &sh->peers[q];
    wsp__obatch_t *lists[2] = {pe->open, pe->fly_head};
    for (int l = 0; l < 2; l++)
      for (wsp__obatch_t *b = lists[l], *n; b; b = n) {
        n = b->next;
        free(b->buf);
        free(b);
      }
    wsp__imsgq_t *queues[2] = {&pe->in, &pe->rin};
    for (int l = 0; l < 2; l++)
      for (wsp__imsg_t *m = queues[l]->head, *n; m; m = n) {
        n = m->next;
        if (!m->borrowed) free(m->buf);
        free(m);
      }
    memset(pe, 0, sizeof *pe);
  }
  for (wsp__obatch_t *b = sh->ready_head, *n; b; b = n) {
    n = b->next;
    free(b->buf);
    free(b);
  }
  sh->ready_head = sh->ready_tail = NULL;
  for (size_t i = 0; i < sh->n_osend; i++) wsp__shuffle_chunk_sent(sh, sh->obuf[i], sh->ocap[i]);
  free(sh->osend);
  free(sh->obuf);
  free(sh->ocap);
  free(sh->idx);
  sh->idx = NULL;
  free(sh->tr_req);
  free(sh->tr_flag);
  free(sh->tr_idx);
  sh->tr_req = NULL;
  sh->tr_flag = NULL;
  sh->tr_idx = NULL;
  sh->cap_tr = 0;
  free(sh->chunk);
  sh->osend = NULL;
  sh->obuf = NULL;
  sh->ocap = NULL;
  sh->chunk = NULL;
  sh->n_osend = sh->cap_osend = 0;
  sh->m_backlog = sh->m_inflight = sh->m_intake = sh->m_resp_out =
      sh->m_resp_in = 0;
}

/* Close's termination (see the top of the file), with the lock held: this
 * rank's own requests answered, the termination sum, the response sends
 * completed, the progress thread stopped, then the check sum and its
 * checks. *failed_ranks: the ranks whose handlers failed. */
static int wsp__terminate(wsp_shuffle_t *sh, uint64_t *failed_ranks) {
  int rc = WSP_OK;
  wsp__backoff_t bo;
  wsp__shuffle_backoff_init(sh, &bo);

  /* 1. Everything of this rank's own answered and handled. */
  while (rc == WSP_OK && !sh->fatal &&
         (sh->n_open || sh->n_ready || sh->n_fly || sh->n_rin))
    rc = wsp__shuffle_wait_step(sh, &bo, 0);

  /* 2. The termination sum, serving others until it completes. What a rank
   * has posted is final when it enters; what it has served is not (it keeps
   * serving), nor whether one of its handlers failed, so both are summed
   * once more afterwards. */
  wsp__sum_t *sum = &sh->close_sums[0], *check = &sh->close_sums[1];
  int sum_pending = 0;
  if (rc == WSP_OK && !sh->fatal) {
    uint64_t mine = sh->st.requests_posted;
    sum_pending = 1; /* until it completes (a failed start may have posted) */
    rc = wsp__sum_start(sum, &sh->c, WSP__TAG_SHUFFLE_DONE, &mine, 1);
    int done = 0;
    while (rc == WSP_OK && !sh->fatal) {
      if ((rc = wsp__sum_test(sum, &done)) != WSP_OK) break;
      if (done) {
        sum_pending = 0;
        break;
      }
      rc = wsp__shuffle_wait_step(sh, &bo, 0);
    }
  }
  /* 3. Response sends complete (their requesters have all they need). */
  while (rc == WSP_OK && !sh->fatal && sh->n_osend)
    rc = wsp__shuffle_wait_step(sh, &bo, 0);
  if (rc == WSP_OK && sh->fatal) rc = sh->fatal;
  wsp__shuffle_thread_stop(sh);
  /* 4. Nothing is in flight any more: the served requests and the handler
   * failures, summed. */
  if (rc == WSP_OK) {
    uint64_t mine[2] = {sh->failed != 0, sh->st.requests_served};
    sum_pending = 1;
    rc = wsp__sum_start(check, &sh->c, WSP__TAG_SHUFFLE_CHECK, mine, 2);
    if (rc == WSP_OK && (rc = wsp__sum_wait(check)) == WSP_OK) sum_pending = 0;
  }
  sh->close_sums_pending = sum_pending;
  if (rc != WSP_OK) return rc;

  *failed_ranks = check->val[0];
  if (sh->n_in || sh->chunk_len)
    return wsp__shuffle_broken(sh, "requests left unserved after termination");
  sh->st.global_requests_posted = sum->val[0];
  sh->st.global_requests_served = check->val[1];
  if (sum->val[0] != check->val[1])
    return wsp__shuffle_broken(sh, "the ranks posted and served different "
                                   "numbers of requests");
  return WSP_OK;
}

int wsp_shuffle_close(wsp_shuffle_t *sh, wsp_shuffle_stats_t *stats) {
  const char *fn = "wsp_shuffle_close";
  if (sh == NULL) return wsp__fail(NULL, WSP_ERR_ARG, "%s: sh is NULL", fn);
  wsp__shuffle_lock(sh);
  if (sh->in_handler) {
    wsp__shuffle_unlock(sh);
    return wsp__fail(&sh->c, WSP_ERR_ARG, "%s: called from a handler", fn);
  }
  if (sh->state != WSP__ST_OPEN) {
    wsp__shuffle_unlock(sh);
    return wsp__fail(&sh->c, WSP_ERR_ARG, "%s: the shuffle is %s", fn,
                     sh->state == WSP__ST_CLOSED ? "already closed"
                                                 : "being closed by another thread");
  }
  sh->state = WSP__ST_CLOSING;
  uint64_t failed_ranks = 0;
  /* A communicator a timeout made unusable: nothing to wait for. The
   * progress thread is stopped and joined all the same (wsp__terminate
   * does it otherwise), which also lets go of the lock taken above: it
   * runs passes on this handle until told to stop, and the handle's
   * communicator and memory are released below and by wsp_shuffle_free.
   * (Returning without it, as close once did, kept the lock and left the
   * thread to wake up in freed memory.) */
  int rc = wsp__usable(&sh->c, fn);
  if (rc == WSP_OK)
    rc = wsp__terminate(sh, &failed_ranks);
  else
    wsp__shuffle_thread_stop(sh);
  wsp_shuffle_stats_t s;
  wsp__fill_stats(sh, &s); /* before release: mem_current as it ended */
  if (rc == WSP_OK) wsp__release(sh); /* else MPI may still own buffers */
  /* The lanes go first: their communicator is a duplicate of this one. */
  int lrc = wsp__xport_free(&sh->c);
  if (lrc != WSP_OK && rc == WSP_OK) rc = lrc;
  if (sh->c.mpi != MPI_COMM_NULL) {
    int mrc = MPI_Comm_free(&sh->c.mpi);
    if (mrc != MPI_SUCCESS && rc == WSP_OK)
      rc = wsp__mpi_fail(&sh->c, mrc, "MPI_Comm_free", WSP__WHERE);
    sh->c.mpi = MPI_COMM_NULL;
  }
  sh->state = WSP__ST_CLOSED;
  if (stats) *stats = s;
  if (rc != WSP_OK) return sh->fatal ? wsp__shuffle_refail(sh) : rc;
  if (sh->failed)
    return wsp__fail(&sh->c, sh->failed, "%s", sh->failed_msg);
  if (failed_ranks)
    return wsp__fail(&sh->c, WSP_ERR_REMOTE,
                     "%s: a handler failed on %llu other rank(s); every "
                     "request was still answered",
                     fn, (unsigned long long)failed_ranks);
  return WSP_OK;
}

int wsp_shuffle_free(wsp_shuffle_t **sh) {
  if (sh == NULL) return wsp__fail(NULL, WSP_ERR_ARG, "wsp_shuffle_free: sh is NULL");
  wsp_shuffle_t *s = *sh;
  if (s == NULL) return WSP_OK;
  if (s->state != WSP__ST_CLOSED)
    return wsp__fail(&s->c, WSP_ERR_ARG,
                     "wsp_shuffle_free: the shuffle is open; close it first "
                     "(wsp_shuffle_close is collective)");
  wsp__free_handle(s);
  *sh = NULL;
  return WSP_OK;
}
