/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Time limits (cfg.timeout, WSP_TIMEOUT; docs/faults.md).
 *
 * MPI gives a rank no way to learn that a peer died or stopped: a receive
 * from it, or a collective it should join, waits forever. wirespeed waits
 * by polling (src/core/backoff.c), so every wait can instead give up after
 * cfg.timeout seconds without progress: the back-off reports the idle
 * stretch as expired, and the wait calls wsp__timeout here.
 *
 * What a timeout does:
 * - It names the ranks the wait was waiting for. MPI cannot say to whom a
 *   pending request talks, so the one place that posts messages
 *   (src/core/p2p.c) notes each request's peer in a small thread-local
 *   table; a request that has fallen out of the table (more than
 *   WSP__NOTES requests posted since) is reported as "an unknown rank".
 * - It lets go of the pending requests, so that the caller's clean-up
 *   (wsp__abandon, which otherwise waits for sends to complete) returns
 *   at once:
 *   receives are cancelled and freed, sends are freed (MPI completes or
 *   drops them in the background), and requests of MPI's non-blocking
 *   collectives, which MPI forbids freeing or cancelling, are dropped (as
 *   are requests no longer in the table). Until
 *   MPI_Finalize, MPI may still read the buffers of those sends, and write
 *   into a receive buffer whose cancel came too late; docs/faults.md tells
 *   users to keep a timed-out call's buffers, or to abort.
 * - It marks the communicator's owner (the communicator the user holds)
 *   unusable: its traffic is out of step between ranks now (some finished
 *   the call, some did not), so any later call on it could match the wrong
 *   messages. Every later call fails at once in wsp__usable.
 *
 * A lane of the collectives' transport that fails (src/p2p/xport.c) ends
 * every wait the same way, on every rank, at its next idle pass
 * (backoff.c): what a wait waited for may never come. The functions below
 * then report that failure, WSP_ERR_CONN naming the pair, rather than a
 * timeout, so that every rank's call returns the same error.
 */
#include "wsp_internal.h"

#include <stdio.h>
#include <string.h>

/* The operation the calling thread is in (its public name), for messages. */
static _Thread_local const char *wsp__op_name;

/* "a lane between ranks 1 and 2 failed (why)", for messages. */
static void wsp__lane_text(const wsp_comm_t *o, char *buf, size_t len) {
  snprintf(buf, len, "a lane of the collectives' transport between ranks %d and %d failed (%s)",
           o->lane_fault.a, o->lane_fault.b, o->lane_fault.why);
}

int wsp__usable(const wsp_comm_t *comm, const char *fn) {
  wsp__op_name = fn;
  const wsp_comm_t *o = comm->owner ? comm->owner : comm;
  if (o->lane_fault.failed) {
    char text[320];
    wsp__lane_text(o, text, sizeof text);
    return wsp__fail(comm, WSP_ERR_CONN,
                     "%s: the communicator is unusable: %s in an earlier call; free it, or end "
                     "the job",
                     fn, text);
  }
  if (!o->broken && !comm->broken) return WSP_OK;
  return wsp__fail(comm, WSP_ERR_TIMEOUT,
                   "%s: the communicator is unusable: an earlier call on it timed out "
                   "(WSP_TIMEOUT); free it, or end the job",
                   fn);
}

/* A direct-mapped table of the last requests posted on this thread. */
enum { WSP__NOTES = 1024 };
typedef struct {
  MPI_Request req;
  int peer; /* a rank, WSP__PEER_ALL, or -1 (empty) */
  int is_recv;
} wsp__note_t;
static _Thread_local wsp__note_t wsp__notes[WSP__NOTES];
static _Thread_local int wsp__notes_ready;

static size_t wsp__note_slot(MPI_Request req) {
  uint64_t h = wsp__fnv(WSP__FNV_INIT, &req, sizeof req);
  return (size_t)(h % WSP__NOTES);
}

void wsp__req_note(MPI_Request req, int peer, int is_recv) {
  if (!wsp__notes_ready) {
    for (int i = 0; i < WSP__NOTES; i++) wsp__notes[i].peer = -1;
    wsp__notes_ready = 1;
  }
  wsp__note_t *e = &wsp__notes[wsp__note_slot(req)];
  e->req = req;
  e->peer = peer;
  e->is_recv = is_recv;
}

static const wsp__note_t *wsp__note_find(MPI_Request req) {
  if (!wsp__notes_ready) return NULL;
  const wsp__note_t *e = &wsp__notes[wsp__note_slot(req)];
  return e->peer != -1 && memcmp(&e->req, &req, sizeof req) == 0 ? e : NULL;
}

/* Appends "3, 5, 9" (each rank once, in the order met) or the words for
 * "anyone" to buf; at most `max` ranks, then "...". */
static void wsp__peers_text(char *buf, size_t len, const int *peers, int npeers) {
  size_t used = strlen(buf);
  if (npeers < 0) {
    snprintf(buf + used, len - used, "any rank");
    return;
  }
  int shown = 0;
  for (int i = 0; i < npeers && used + 16 < len; i++) {
    int dup = 0;
    for (int j = 0; j < i && !dup; j++) dup = peers[j] == peers[i];
    if (dup) continue;
    if (shown == 8) {
      snprintf(buf + used, len - used, ", ...");
      return;
    }
    if (peers[i] == WSP__PEER_ALL)
      used += (size_t)snprintf(buf + used, len - used, "%severy rank (an MPI collective)",
                               shown ? ", " : "");
    else if (peers[i] < 0)
      used += (size_t)snprintf(buf + used, len - used, "%san unknown rank", shown ? ", " : "");
    else
      used += (size_t)snprintf(buf + used, len - used, "%s%d", shown ? ", " : "", peers[i]);
    shown++;
  }
}

static void wsp__mark_broken(const wsp_comm_t *comm) {
  wsp_comm_t *o = comm->owner ? comm->owner : (wsp_comm_t *)comm;
  o->broken = 1;
  ((wsp_comm_t *)comm)->broken = 1; /* callers' communicators are never const objects */
}

int wsp__lane_failure(const wsp_comm_t *comm, int rc) {
  const wsp_comm_t *o = comm->owner ? comm->owner : comm;
  if (!o->lane_fault.failed) return rc;
  wsp__mark_broken(comm);
  char text[320];
  wsp__lane_text(o, text, sizeof text);
  return wsp__fail(comm, WSP_ERR_CONN,
                   "%s: %s; the call's transfers were let go and the communicator is unusable "
                   "from now on",
                   wsp__op_name ? wsp__op_name : "wirespeed", text);
}

static int wsp__timeout_fail(const wsp_comm_t *comm, const char *peers, const char *what) {
  int rc = wsp__lane_failure(comm, WSP_OK);
  if (rc != WSP_OK) return rc;
  wsp__mark_broken(comm);
  return wsp__fail(comm, WSP_ERR_TIMEOUT,
                   "%s: no progress for %g s (WSP_TIMEOUT) waiting for %s (%s); the "
                   "communicator is unusable from now on",
                   wsp__op_name ? wsp__op_name : "wirespeed", comm->cfg.timeout, peers, what);
}

int wsp__timeout(const wsp_comm_t *comm, int n, MPI_Request *reqs, const char *what) {
  enum { SHOW = 16 };
  int peers[SHOW], np = 0;
  for (int i = 0; i < n; i++) {
    if (reqs[i] == MPI_REQUEST_NULL) continue;
    const wsp__note_t *e = wsp__note_find(reqs[i]);
    if (np < SHOW) peers[np++] = e ? e->peer : -1;
    if (e == NULL || e->peer == WSP__PEER_ALL) {
      /* A collective's (or perhaps one: not in the table), which MPI
       * forbids freeing or cancelling: dropped. */
      reqs[i] = MPI_REQUEST_NULL;
      continue;
    }
    wsp__let_go(&reqs[i], e->is_recv);
  }
  char text[256] = "rank(s) ";
  if (np == 0) snprintf(text, sizeof text, "nothing pending");
  else wsp__peers_text(text, sizeof text, peers, np);
  return wsp__timeout_fail(comm, text, what);
}

int wsp__timeout_abandon(const wsp_comm_t *comm, int rc, int nrecv, MPI_Request *recvs,
                         int nsend, MPI_Request *sends) {
  enum { SHOW = 16 };
  int peers[SHOW], np = 0;
  for (int k = 0; k < 2; k++) {
    int n = k ? nsend : nrecv;
    MPI_Request *reqs = k ? sends : recvs;
    for (int i = 0; i < n; i++) {
      if (reqs[i] == MPI_REQUEST_NULL) continue;
      const wsp__note_t *e = wsp__note_find(reqs[i]);
      if (np < SHOW) peers[np++] = e ? e->peer : -1;
      wsp__let_go(&reqs[i], 0); /* the receives were cancelled */
    }
  }
  if (wsp__lane_failure(comm, WSP_OK) != WSP_OK) return WSP_ERR_CONN;
  wsp__mark_broken(comm);
  char text[256] = "rank(s) ";
  wsp__peers_text(text, sizeof text, peers, np);
  /* The first failure stays the call's status and leads the message. */
  return wsp__fail(comm, rc,
                   "%s; then its transfers made no progress for %g s (WSP_TIMEOUT) waiting "
                   "for %s and were let go: the communicator is unusable from now on",
                   wsp_last_error(), comm->cfg.timeout, text);
}

int wsp__timeout_peers(const wsp_comm_t *comm, const int *peers, int npeers,
                       const char *what) {
  char text[256] = "";
  if (npeers >= 0) snprintf(text, sizeof text, "rank(s) ");
  wsp__peers_text(text, sizeof text, peers, npeers);
  return wsp__timeout_fail(comm, text, what);
}
