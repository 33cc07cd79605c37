/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The striped engine's progress loop (the protocol is described in
 * striped_internal.h). The engine is four files:
 *   engine.c       the pass (this file);
 *   engine_pair.c  a pair's queues, failure, matching and probe;
 *   engine_in.c    frames in: what a lane may carry, checked frame by frame;
 *   engine_out.c   frames out: what goes next on a lane, the endgame, and
 *                  the flush and close of the communicator's free.
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
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1 /* ppoll */
#endif
#include "striped_internal.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int wsp__stripe_progress(wsp__stripe_t *st, long timeout_us) {
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
  /* The set-ups advance first: that may open lanes and listeners, which
   * the poll set must then have room for (sized before, an advance that
   * opened the lanes wrote past its end). */
  int mpi_pending = 0;
  for (int p = 0; p < comm->size; p++) {
    wsp__pair_t *pr = st->pair[p];
    if (pr == NULL || pr->state == WSP__PAIR_FAILED) continue;
    wsp__pair_advance(st, pr);
    if (pr->state == WSP__PAIR_XCHG || pr->vreq != MPI_REQUEST_NULL) mpi_pending = 1;
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
  for (int p = 0; p < comm->size; p++) {
    wsp__pair_t *pr = st->pair[p];
    if (pr == NULL || pr->state == WSP__PAIR_FAILED) continue;
    for (int i = 0; i < pr->nlanes; i++) {
      wsp__lane_t *l = &pr->lane[i];
      if (l->fd < 0) continue;
      short ev = l->hs == WSP__HS_CONNECTING ? POLLOUT
                 : l->hs != WSP__HS_UP
                     ? POLLIN
                     : (short)(POLLIN | (wsp__lane_has_work(pr, i) ? POLLOUT : 0));
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
  if (mpi_pending && timeout_us > 1000) timeout_us = 1000;
  /* ppoll, not poll: the back-off's sleeps are microseconds (backoff.c),
   * and poll's milliseconds turned every one of them into a pass that did
   * not wait at all, so a rank waiting on lanes spun on its core. */
  struct timespec ts = {timeout_us / 1000000, (timeout_us % 1000000) * 1000};
  int n = ppoll(pfd, nf, &ts, NULL);
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
      wsp__lane_write(st, pr, li, 0);
  }
  wsp__hs_expire(st, now);
  for (int i = st->nlst; i-- > 0;)
    if (i < st->nlst && accept_ready[i]) wsp__hs_accept(st, st->lst[i].fd);
  for (int p = 0; p < comm->size; p++) {
    wsp__pair_t *pr = st->pair[p];
    if (pr && pr->state == WSP__PAIR_READY && pr->active)
      for (int i = 1; i <= pr->k; i++) wsp__lane_account(&pr->lane[i], now, st->endgame_always);
  }
  /* Frames queued during this pass (a DONE, a CTS) go out now on lanes
   * that are idle, rather than after the next poll. */
  for (int p = 0; p < comm->size; p++) {
    wsp__pair_t *pr = st->pair[p];
    if (pr == NULL || pr->state == WSP__PAIR_FAILED) continue;
    wsp__pair_advance(st, pr);
    if (pr->nctl == 0 || pr->state == WSP__PAIR_FAILED) continue;
    if (pr->lane[0].fd >= 0 && pr->lane[0].hs == WSP__HS_UP && !pr->lane[0].obusy)
      wsp__lane_write(st, pr, 0, 1);
  }
  return WSP_OK;
}
