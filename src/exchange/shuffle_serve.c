/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The shuffle's responder: request batches are received, served (each
 * request handed to on_request, its reply appended to a response chunk)
 * round robin over their sources, and the response chunks sent back.
 *
 * Receiving. Request batches are always received: a responder never holds
 * more than the intake share of them, because every requester keeps at
 * most peer_req = intake/(p-1) request bytes unanswered per peer
 * (shuffle_request.c). The per-peer window does the job of credits, and
 * that is why receiving everything that arrives does not flood it. A batch
 * to this rank itself is not received: it is queued with the requester's
 * buffer borrowed.
 *
 * Serving, and the room it needs. Replies are collected in one response
 * chunk, which is sent once it holds the limits' `chunk` bytes and at the
 * end of each batch (its last chunk carries WSP__CHUNK_LAST). The chunk
 * and the chunks being sent are the resp_out share. The next request is
 * served only while at most half of that share is used, and one reply
 * (at most max_response) can at most fill the other half. So a slow
 * requester, whose chunks do not drain, stops its responders from
 * answering it, and a slow responder keeps its requesters' windows to it
 * full, which throttles them. What serving a request needs (room in the
 * chunk for at least an empty response, a slot for the chunk's send) is
 * reserved before its handler runs, so that nothing after the handler can
 * fail for lack of memory: a handler is never called twice for one
 * request. When the reservation fails, serving stops there and resumes on
 * a later pass. Chunks to this rank itself are handed to the requester's
 * side (wsp__shuffle_dispatch) instead of sent.
 *
 * Sending, in pieces. A chunk larger than the piece size goes as an
 * announcement and pieces (shuffle_internal.h, WSP__ANN_BYTES), each an
 * MPI message of at most the piece size, so that every one is sent eagerly
 * whatever the MPI's rendezvous threshold; all of them are sent from the
 * chunk's one buffer, which counts its sends in flight and is freed with
 * the last. The slots for a chunk's sends are reserved with its room.
 *
 * Over the lanes. Where the shuffle has lanes of its own (shuffle.c,
 * wsp__shuffle_lanes) and the transport takes the chunk (another node, at
 * least the lanes' threshold: wsp__xport_takes), the announcement still
 * goes through MPI, where the requester probes, but the bytes follow as one
 * transfer on an exact tag, which the transport carries over the pair's
 * lanes; the requester, which decides alike from the announced length,
 * asks for exactly those bytes from this rank (shuffle_pass.c).
 */
#include "shuffle_internal.h"
#include "../core/tags.h"
#include "../p2p/xport.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

/* Step 2: receive request batches. Always: the windows bound them. */
int wsp__shuffle_pass_requests(wsp_shuffle_t *sh, int *progress) {
  const wsp__inbox_t box = {
      .tag = WSP__TAG_SHUFFLE_REQ,
      .elem = sizeof(wsp__ibatch_t),
      .queue = offsetof(wsp__peer_t, in),
      .queued = &sh->n_in,
      .held = &sh->m_intake,
      .limit = SIZE_MAX,
  };
  return wsp__shuffle_receive(sh, &box, progress);
}

/* Step 3: response chunks whose send completed are freed. One
 * MPI_Testsome for all of them: each MPI_Test that finds its request
 * unfinished drives the MPI's progress engine (a poll of its sockets), and
 * with a dozen chunks out, separate tests cost a dozen polls per pass. */
int wsp__shuffle_pass_sends(wsp_shuffle_t *sh, int *progress) {
  if (sh->n_osend == 0) return WSP_OK;
  /* No allocation here: completing sends is what gives memory back, so
   * idx grows with osend (wsp__osend_room). */
  int out = 0;
  int mrc = MPI_Testsome((int)sh->n_osend, sh->osend, &out, sh->idx,
                         MPI_STATUSES_IGNORE);
  if (mrc != MPI_SUCCESS)
    return wsp__shuffle_fatal(sh, wsp__mpi_fail(&sh->c, mrc, "MPI_Testsome", WSP__WHERE));
  if (out == MPI_UNDEFINED || out == 0) return WSP_OK;
  for (int i = 0; i < out; i++) {
    size_t j = (size_t)sh->idx[i];
    wsp__shuffle_chunk_sent(sh, sh->obuf[j], sh->ocap[j]);
    sh->obuf[j] = NULL;
  }
  size_t k = 0; /* completed requests are MPI_REQUEST_NULL now */
  for (size_t i = 0; i < sh->n_osend; i++)
    if (sh->obuf[i] != NULL) {
      sh->osend[k] = sh->osend[i];
      sh->obuf[k] = sh->obuf[i];
      sh->ocap[k] = sh->ocap[i];
      k++;
    }
  sh->n_osend = k;
  *progress = 1;
  return WSP_OK;
}

/* ---- the response chunk ---- */

/* Makes room for `need` bytes in the chunk being built. `pass`: called by
 * a pass (its allocation may be made to fail, WSP_SHUFFLE_FAULT_NOMEM), not
 * by wsp_shuffle_reply. */
static int wsp__chunk_room(wsp_shuffle_t *sh, size_t need, int pass) {
  if (need <= sh->chunk_cap) return WSP_OK;
  size_t cap = wsp__grow_cap(sh->chunk_cap, need, sh->lim.resp_out / 2);
  unsigned char *nb =
      pass ? wsp__shuffle_realloc(sh, sh->chunk, cap) : realloc(sh->chunk, cap);
  if (nb == NULL) return WSP_ERR_NOMEM;
  sh->m_resp_out += cap - sh->chunk_cap;
  sh->chunk = nb;
  sh->chunk_cap = cap;
  wsp__shuffle_note_peaks(sh);
  return WSP_OK;
}

/* Appends one response entry to the chunk, whose room was made. */
static void wsp__chunk_put(wsp_shuffle_t *sh, const void *data, size_t bytes) {
  wsp__put64(sh->chunk + sh->chunk_len, (uint64_t)bytes);
  if (bytes) memcpy(sh->chunk + sh->chunk_len + WSP__ENTRY_BYTES, data, bytes);
  sh->chunk_len += WSP__ENTRY_BYTES + bytes;
  sh->chunk_count++;
}

int wsp__shuffle_reply_put(wsp_shuffle_t *sh, const void *data, size_t bytes) {
  if (wsp__chunk_room(sh, sh->chunk_len + WSP__ENTRY_BYTES + bytes, 0) != WSP_OK)
    return WSP_ERR_NOMEM;
  wsp__chunk_put(sh, data, bytes);
  return WSP_OK;
}

void wsp__shuffle_chunk_sent(wsp_shuffle_t *sh, unsigned char *buf, size_t cap) {
  uint64_t refs = wsp__get64(buf) - 1;
  wsp__put64(buf, refs);
  if (refs > 0) return;
  free(buf);
  sh->m_resp_out -= cap;
}

/* Makes sure the sends of one chunk (its announcement and pieces) have
 * slots in osend/obuf/ocap/idx. */
static int wsp__osend_room(wsp_shuffle_t *sh) {
  if (sh->n_osend + sh->osend_per_chunk <= sh->cap_osend) return WSP_OK;
  size_t n = sh->cap_osend ? 2 * sh->cap_osend : 16;
  if (n < sh->n_osend + sh->osend_per_chunk) n = sh->n_osend + sh->osend_per_chunk;
  /* Each array that grew is kept; cap_osend is what all four hold. */
  MPI_Request *r = wsp__shuffle_realloc(sh, sh->osend, n * sizeof *r);
  if (r) sh->osend = r;
  unsigned char **b = r ? wsp__shuffle_realloc(sh, sh->obuf, n * sizeof *b) : NULL;
  if (b) sh->obuf = b;
  size_t *c = b ? wsp__shuffle_realloc(sh, sh->ocap, n * sizeof *c) : NULL;
  if (c) sh->ocap = c;
  int *x = c ? wsp__shuffle_realloc(sh, sh->idx, n * sizeof *x) : NULL;
  if (x == NULL) return WSP_ERR_NOMEM;
  sh->idx = x;
  sh->cap_osend = n;
  return WSP_OK;
}

/* Reserves what serving one more request (extra = WSP__ENTRY_BYTES, room
 * for at least an empty response) or sending the chunk (extra = 0) needs:
 * room in the chunk and a slot for its send; then starts the chunk (its
 * header) if none is being built. Reserved before the request handler
 * runs, so that nothing after it can fail for lack of memory (the handler
 * cannot be called twice); a failure leaves everything as it was, and
 * serving resumes there on a later pass. */
static int wsp__serve_room(wsp_shuffle_t *sh, int dest, size_t extra) {
  size_t len = sh->chunk_len ? sh->chunk_len : WSP__CHUNK_PREFIX + WSP__HDR_BYTES;
  if (wsp__chunk_room(sh, len + extra, 1) != WSP_OK ||
      (dest != sh->rank && wsp__osend_room(sh) != WSP_OK)) /* self: no send */
    return WSP_ERR_NOMEM;
  sh->chunk_len = len;
  return WSP_OK;
}

/* Sends (or, to self, hands over) the chunk being built; its memory and
 * send slot were reserved by wsp__serve_room. */
static int wsp__send_chunk(wsp_shuffle_t *sh, int dest, uint64_t seq, int last) {
  int rc = WSP_OK;
  if (sh->chunk_len == 0 ||
      (dest != sh->rank && sh->n_osend + sh->osend_per_chunk > sh->cap_osend))
    return wsp__shuffle_broken(sh, "response chunk sent without its reservation");
  unsigned char *buf = sh->chunk, *chunk = buf + WSP__CHUNK_PREFIX;
  size_t len = sh->chunk_len - WSP__CHUNK_PREFIX, cap = sh->chunk_cap;
  wsp__put_hdr(chunk, seq, sh->chunk_count, last ? WSP__CHUNK_LAST : 0);
  sh->chunk = NULL;
  sh->chunk_len = sh->chunk_cap = 0;
  sh->chunk_count = 0;
  if (dest == sh->rank) {
    rc = wsp__shuffle_dispatch(sh, dest, chunk, len, MPI_Wtime());
    free(buf);
    sh->m_resp_out -= cap;
    return rc;
  }
  /* One message, or the announcement and the pieces (one piece over the
   * lanes); the buffer counts them (set first: a send may complete before
   * the next is posted). */
  const int lanes = len > sh->piece && wsp__xport_takes(&sh->c, dest, len);
  const size_t piece = lanes ? len : sh->piece;
  const int tag = lanes ? WSP__TAG_SHUFFLE_LANES : WSP__TAG_SHUFFLE_RESP;
  size_t pieces = len <= sh->piece ? 1 : 1 + (len + piece - 1) / piece;
  size_t posted = 0;
  wsp__put64(buf, pieces);
  if (pieces > 1) {
    wsp__put64(buf + 8, seq);
    wsp__put64(buf + 16, (uint64_t)len);
    rc = wsp__isend_bytes(&sh->c, buf + 8, WSP__ANN_BYTES, dest, WSP__TAG_SHUFFLE_RESP, 0,
                          &sh->osend[sh->n_osend]);
    if (rc == WSP_OK) {
      sh->obuf[sh->n_osend] = buf;
      sh->ocap[sh->n_osend++] = cap;
      posted++;
    }
  }
  for (size_t off = 0, k = pieces > 1; rc == WSP_OK && k < pieces; k++) {
    size_t n = len - off < piece ? len - off : piece;
    rc = wsp__isend_bytes(&sh->c, chunk + off, n, dest, tag, 0, &sh->osend[sh->n_osend]);
    if (rc == WSP_OK) {
      sh->obuf[sh->n_osend] = buf;
      sh->ocap[sh->n_osend++] = cap;
      posted++;
      off += n;
    }
  }
  if (rc != WSP_OK) { /* the sends posted keep the buffer */
    wsp__put64(buf, posted);
    if (posted == 0) {
      free(buf);
      sh->m_resp_out -= cap;
    }
    return wsp__shuffle_fatal(sh, rc);
  }
  sh->st.chunks_sent++;
  sh->st.chunks_in_pieces += pieces > 1 && !lanes;
  sh->st.chunks_on_lanes += lanes;
  return WSP_OK;
}

/* ---- serving ---- */

/* Reads the header of a batch that just arrived from the peer `pe`: its
 * seq (which must be the next), its count, and the requester's rate. */
static int wsp__parse_batch(wsp_shuffle_t *sh, wsp__peer_t *pe,
                            wsp__ibatch_t *ib, double now) {
  ib->parsed = 1;
  if (ib->m.len < WSP__HDR_BYTES) return wsp__shuffle_broken(sh, "short request batch");
  ib->seq = wsp__get64(ib->m.buf);
  ib->count = wsp__get32(ib->m.buf + 8);
  ib->cursor = WSP__HDR_BYTES;
  float rate;
  memcpy(&rate, ib->m.buf + 12, sizeof rate);
  if (rate > 0 && isfinite(rate)) {
    pe->rate_seen = rate;
    pe->rate_seen_t = now;
  }
  if (ib->seq != pe->expect_seq)
    return wsp__shuffle_broken(sh, "request batches out of order");
  pe->expect_seq++;
  return WSP_OK;
}

/* Batched handlers: puts the response to the next request of batch ib
 * from rank q into the chunk (its room reserved), first calling
 * on_requests on it and the requests after it when the last run is used
 * up. A handler failure, or a response it set wrongly, fails the shuffle
 * and answers the run with empty responses, as a request handler that
 * fails and does not reply. */
static int wsp__serve_batched(wsp_shuffle_t *sh, int q, wsp__ibatch_t *ib) {
  if (sh->run_next == sh->run_n) {
    const unsigned char *buf = ib->m.buf;
    size_t len = ib->m.len, cur = ib->cursor, n = 0;
    for (; n < WSP__RUN_MAX && n < (size_t)(ib->count - ib->done); n++) {
      if (cur + WSP__ENTRY_BYTES > len) return wsp__shuffle_broken(sh, "malformed request batch");
      uint64_t ql = wsp__get64(buf + cur);
      if (ql > len - cur - WSP__ENTRY_BYTES)
        return wsp__shuffle_broken(sh, "malformed request batch");
      sh->run[n] = (wsp_shuffle_item_t){
          .req = ql ? buf + cur + WSP__ENTRY_BYTES : NULL, .req_bytes = (size_t)ql};
      cur += WSP__ENTRY_BYTES + (size_t)ql;
    }
    sh->in_handler = WSP__IN_REQUEST;
    int hrc = sh->hb.on_requests(sh->user, q, n, sh->run);
    sh->in_handler = WSP__IN_NONE;
    sh->run_n = n;
    sh->run_next = 0;
    sh->run_ib = ib;
    int bad = hrc != 0;
    if (bad) wsp__shuffle_handler_failed(sh, "requests", hrc, q);
    for (size_t i = 0; i < n && !bad; i++) {
      const wsp_shuffle_item_t *it = &sh->run[i];
      if ((it->resp == NULL && it->resp_bytes > 0) || it->resp_bytes > sh->lim.max_response) {
        wsp__fail(&sh->c, WSP_ERR_HANDLER,
                  "wsp_shuffle: on_requests set items[%zu] to %zu bytes at %p (requests "
                  "from rank %d; a response is at most %zu bytes, and NULL only when empty)",
                  i, it->resp_bytes, it->resp, q, sh->lim.max_response);
        wsp__shuffle_failed(sh, WSP_ERR_HANDLER);
        bad = 1;
      }
    }
    if (bad)
      for (size_t i = 0; i < n; i++) sh->run[i].resp = NULL, sh->run[i].resp_bytes = 0;
  } else if (sh->run_ib != ib) {
    return wsp__shuffle_broken(sh, "a run of batched requests outlived its batch");
  }
  const wsp_shuffle_item_t *it = &sh->run[sh->run_next++];
  if (wsp__shuffle_reply_put(sh, it->resp, it->resp_bytes) == WSP_OK) {
    sh->st.response_bytes_sent += it->resp_bytes;
    return WSP_OK;
  }
  /* As wsp_shuffle_reply: the shuffle fails, the request gets the empty
   * response whose room was reserved. */
  wsp__shuffle_failed(sh, wsp__fail(&sh->c, WSP_ERR_NOMEM,
                                    "wsp_shuffle: no memory for a %zu-byte response",
                                    it->resp_bytes));
  wsp__chunk_put(sh, NULL, 0);
  return WSP_OK;
}

/* Serves the next request of batch ib from rank q, if the response share
 * has room and the reservation succeeds (*served = 1; else 0 and nothing
 * changed): on_request, its reply or an empty response, and the chunk
 * sent if it is large enough and the batch has more requests. */
static int wsp__serve_one(wsp_shuffle_t *sh, int q, wsp__ibatch_t *ib,
                          int *served) {
  *served = 0;
  if (sh->m_resp_out > sh->lim.resp_out / 2) return WSP_OK;
  const unsigned char *buf = ib->m.buf;
  size_t len = ib->m.len;
  if (ib->cursor + WSP__ENTRY_BYTES > len)
    return wsp__shuffle_broken(sh, "malformed request batch");
  uint64_t ql = wsp__get64(buf + ib->cursor);
  if (ql > len - ib->cursor - WSP__ENTRY_BYTES)
    return wsp__shuffle_broken(sh, "malformed request batch");
  const unsigned char *req = buf + ib->cursor + WSP__ENTRY_BYTES;
  if (wsp__serve_room(sh, q, WSP__ENTRY_BYTES) != WSP_OK) {
    wsp__shuffle_nomem_wait(sh);
    return WSP_OK;
  }
  if (sh->batched) {
    int rc = wsp__serve_batched(sh, q, ib);
    if (rc != WSP_OK) return rc;
  } else {
    wsp_shuffle_reply_t *reply = &sh->replies[++sh->reply_call % WSP__REPLY_SLOTS];
    reply->call = sh->reply_call;
    sh->reply_active = 1;
    sh->reply_replied = 0;
    sh->in_handler = WSP__IN_REQUEST;
    int hrc = sh->h.on_request(sh->user, q, ql ? req : NULL, (size_t)ql, reply);
    sh->in_handler = WSP__IN_NONE;
    sh->reply_active = 0;
    if (hrc != 0) wsp__shuffle_handler_failed(sh, "request", hrc, q);
    if (!sh->reply_replied) { /* an empty response, its room reserved */
      if (sh->chunk_len + WSP__ENTRY_BYTES > sh->chunk_cap)
        return wsp__shuffle_broken(sh, "no room reserved for an empty response");
      wsp__chunk_put(sh, NULL, 0);
    }
  }
  sh->st.requests_served++;
  ib->cursor += WSP__ENTRY_BYTES + (size_t)ql;
  ib->done++;
  *served = 1;
  if (sh->chunk_len - WSP__CHUNK_PREFIX >= sh->lim.chunk && ib->done < ib->count)
    return wsp__send_chunk(sh, q, ib->seq, 0);
  return WSP_OK;
}

/* Step 4: serve received request batches, round robin over sources, while
 * the response buffers have room. */
int wsp__shuffle_pass_serve(wsp_shuffle_t *sh, double now, int *progress) {
  if (sh->n_in == 0) return WSP_OK;
  int rc = WSP_OK;
  for (int k = 0; k < sh->p; k++) {
    int q = (sh->rr_serve + k) % sh->p;
    wsp__peer_t *pe = &sh->peers[q];
    wsp__ibatch_t *ib;
    /* The request queue holds batches (their message first); completion
     * was tested in step 0. */
    while ((ib = (wsp__ibatch_t *)pe->in.head) != NULL && ib->m.received) {
      if (!ib->parsed && (rc = wsp__parse_batch(sh, pe, ib, now)) != WSP_OK)
        return rc;
      while (ib->done < ib->count) {
        int served;
        if ((rc = wsp__serve_one(sh, q, ib, &served)) != WSP_OK) return rc;
        if (!served) {
          sh->rr_serve = q; /* resume here */
          return WSP_OK;
        }
        *progress = 1;
      }
      /* The batch is answered: release it before the last chunk goes out
       * (for self, handing that chunk over frees the borrowed buffer). An
       * empty batch has no chunk yet: reserve one first. */
      if (wsp__serve_room(sh, q, 0) != WSP_OK) {
        wsp__shuffle_nomem_wait(sh);
        sh->rr_serve = q;
        return WSP_OK;
      }
      uint64_t seq = ib->seq;
      wsp__imsgq_pop(&pe->in);
      sh->n_in--;
      if (!ib->m.borrowed) {
        sh->m_intake -= ib->m.len;
        free(ib->m.buf);
      }
      free(ib);
      if ((rc = wsp__send_chunk(sh, q, seq, 1)) != WSP_OK) return rc;
    }
  }
  sh->rr_serve = (sh->rr_serve + 1) % sh->p;
  return rc;
}
