/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Striped point-to-point: the public calls (include/wirespeed.h), the
 * choice between lanes and MPI, and the pair's set-up over MPI.
 *
 * Which path a message takes. Both ends decide from what both know: the
 * message's size (a striped send and its receive give the same size) and
 * the pair's figures, which the pair's set-up gives both ends alike. So a
 * message to oneself, any message under SimGrid (no sockets there), and a
 * message shorter than cfg.p2p_min go through MPI at once; a longer one
 * sets the pair up at its first use and then goes over the lanes when it
 * is at least the pair's threshold, else through MPI. While a pair is
 * being set up, every request to that peer waits in posting order, so that
 * the MPI path sees the sends and receives in the order the user posted
 * them, as MPI's matching rules need.
 *
 * The set-up is all or nothing. The two ranks exchange over MPI what the
 * lanes need (keys, addresses, ports, what each rank cannot do); the
 * lower rank brings the lanes up (handshake.c) and sends its verdict over
 * MPI. Until the verdict both wait; then both use the lanes, or both send
 * every message of the pair through MPI (the fallback, with one warning).
 * A rank that cannot use lanes at all (no address, no randomness, its
 * lanes failed earlier) says so in the exchange, and the pair falls back
 * the same way on both ends.
 *
 * The MPI path runs on a duplicate of the private communicator with the
 * user's tag, so any tag MPI allows is free for the user.
 */
#include "striped_internal.h"

#include "tags.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* ---- the communicator's state ---- */

int wsp__stripe_create(wsp_comm_t *comm) {
  wsp__stripe_t *st = calloc(1, sizeof *st);
  int failed = st == NULL;
  if (st) {
    st->comm = comm;
    st->p2p = MPI_COMM_NULL;
    st->notice = MPI_REQUEST_NULL;
    st->pair = calloc((size_t)comm->size, sizeof *st->pair);
    if (comm->cfg.p2p_interfaces && (st->ifaces = strdup(comm->cfg.p2p_interfaces)) == NULL)
      failed = 1;
    failed |= st->pair == NULL;
  }
  int rc = wsp__agree_alloc(comm, failed, "wsp_comm_create: striped point-to-point");
  if (rc == WSP_OK) {
    int mrc = MPI_Comm_dup(comm->mpi, &st->p2p);
    if (mrc != MPI_SUCCESS) rc = wsp__mpi_fail(comm, mrc, "MPI_Comm_dup", WSP__WHERE);
  }
  if (rc != WSP_OK) {
    if (st) {
      free(st->pair);
      free(st->ifaces);
      free(st);
    }
    return rc;
  }
  MPI_Comm_set_errhandler(st->p2p, MPI_ERRORS_RETURN);
  comm->cfg.p2p_interfaces = st->ifaces; /* the copy outlives the caller's string */
  size_t v = 0;
  if (wsp__env_size("WSP_P2P_FAULT_RESET", 0, SIZE_MAX, &v) == WSP_OK) st->fault_reset_after = v;
  v = 0;
  if (wsp__env_size("WSP_P2P_FAULT_POLL", 0, SIZE_MAX, &v) == WSP_OK) st->fault_poll = v;
  v = 0;
  if (wsp__env_count("WSP_P2P_FAULT_SETUP_MS", 0, 600000, &v) == WSP_OK)
    st->fault_setup_delay = 1e-3 * (double)v;
  /* A bad value is refused with the configuration from the environment; a
   * configuration given in full still meets it here. */
  if (wsp__env_probe_figures(st->probe_as) < 0)
    wsp__log(comm, WSP_LOG_WARN, "%s; the probe's own figures are used", wsp_last_error());
  const char *eg = getenv("WSP_P2P_ENDGAME");
  st->endgame_always = eg && strcmp(eg, "always") == 0;
  /* Unsent backlog at which a lane counts as free (lane.c). */
  st->lowat = comm->cfg.p2p_chunk ? comm->cfg.p2p_chunk : 64 * 1024;
  comm->stripe = st;
  return WSP_OK;
}

static void wsp__pair_free(wsp__pair_t *pr) {
  for (int i = 0; i < pr->nlanes; i++) wsp__lane_release(&pr->lane[i], 0);
  wsp__pair_drop_setup(pr);
  if (pr->priv) wsp__sec_keyfree(pr->priv);
  wsp__sec_cleanse(&pr->keys, sizeof pr->keys);
  free(pr->cts);
  free(pr->ctl);
  free(pr);
}

static void wsp__req_link(wsp__stripe_t *st, wsp__sreq_t *r) {
  r->all_prev = NULL;
  r->all_next = st->reqs;
  if (st->reqs) st->reqs->all_prev = r;
  st->reqs = r;
}

static void wsp__req_unlink(wsp__stripe_t *st, wsp__sreq_t *r) {
  if (r->all_prev)
    r->all_prev->all_next = r->all_next;
  else if (st->reqs == r)
    st->reqs = r->all_next;
  if (r->all_next) r->all_next->all_prev = r->all_prev;
  r->all_prev = r->all_next = NULL;
}

/* How long a wait for a socket's room may last: the time limit when one is
 * set (WSP_TIMEOUT), else `plain` seconds. */
static double wsp__room_seconds(const wsp__stripe_t *st, double plain) {
  double t = st->comm->cfg.timeout;
  return t > 0 && t < plain ? t : plain;
}

/* A set-up message sent as the communicator goes away: from a copy that
 * stays until MPI has taken it (a small message goes at once; one that
 * has not gone after the wait for room is left to MPI, with its copy). */
static void wsp__last_word(wsp__stripe_t *st, int peer, const void *msg, size_t n) {
  void *copy = malloc(n);
  MPI_Request q = MPI_REQUEST_NULL;
  if (copy == NULL) return;
  memcpy(copy, msg, n);
  if (MPI_Isend(copy, (int)n, MPI_BYTE, peer, WSP__TAG_STRIPE_SETUP, st->comm->mpi, &q) !=
      MPI_SUCCESS) {
    free(copy);
    return;
  }
  int done = 0;
  const double end = wsp__now() + wsp__room_seconds(st, 2.0);
  while (MPI_Test(&q, &done, MPI_STATUS_IGNORE) == MPI_SUCCESS && !done && wsp__now() < end) {
    struct timespec ts = {0, 1000000};
    nanosleep(&ts, NULL);
  }
  if (done) {
    free(copy);
  } else if (q != MPI_REQUEST_NULL) {
    (void)MPI_Request_free(&q); /* `copy` stays MPI's */
  }
}

int wsp__stripe_free(wsp_comm_t *comm) {
  wsp__stripe_t *st = comm->stripe;
  if (st == NULL) return WSP_OK;
  int rc = WSP_OK;
  st->closing = 1; /* what fails from here on is the free's doing */
  /* Only the user's own requests are the user's to wait for: the library's
   * communicators with lanes (the transport's, the sites') may hold those a
   * failed call let go of. */
  if (st->live > 0 && (comm->owner == NULL || comm->owner == comm))
    rc = wsp__fail(comm, WSP_ERR_ARG,
                   "wsp_comm_free: %d striped requests are still in flight; they fail "
                   "with WSP_ERR_CONN (wait for them before freeing)",
                   st->live);
  /* Every request the user still holds lets go of the communicator: one
   * in flight fails (its MPI request is cancelled or let go, its lanes are
   * closed below), and a later test or wait only returns its status. */
  for (wsp__sreq_t *r = st->reqs, *next; r; r = next) {
    next = r->all_next;
    if (!r->done && r->path == WSP__PATH_MPI && r->mreq != MPI_REQUEST_NULL) {
      wsp__let_go(&r->mreq, !r->is_send);
    }
    /* Detached first: finishing it may complete a transport's request
     * whose free reaps it (xport.c), and then r is gone. */
    const int orphan = r->orphan;
    r->st = NULL;
    r->pair = NULL;
    r->next = NULL;
    r->all_prev = r->all_next = NULL;
    wsp__req_finish(st, r, WSP_ERR_CONN, "the communicator was freed while it was in flight");
    if (orphan) (void)wsp__striped_reap(&r, NULL); /* detached: only freed */
  }
  st->reqs = NULL;
  /* A peer waiting for this rank's part of a set-up learns that it will
   * not come: the higher rank's answer, or the lower rank's verdict, says
   * so (its requests then fail with WSP_ERR_CONN rather than wait). */
  for (int p = 0; p < comm->size; p++) {
    wsp__pair_t *pr = st->pair[p];
    if (pr == NULL) continue;
    if (!pr->lower && pr->state == WSP__PAIR_XCHG && pr->xreq[0] == MPI_REQUEST_NULL) {
      pr->mine.freed = 1;
      pr->mine.status = (uint32_t)(-WSP_ERR_CONN);
      wsp__last_word(st, pr->peer, &pr->mine, sizeof pr->mine);
    } else if (pr->lower && (pr->state == WSP__PAIR_XCHG || pr->state == WSP__PAIR_CONNECT) &&
               pr->vreq == MPI_REQUEST_NULL) {
      pr->verdict[0] = (uint32_t)(-WSP_ERR_CONN);
      pr->verdict[1] = 1;
      wsp__last_word(st, pr->peer, pr->verdict, sizeof pr->verdict);
    }
  }
  for (int p = 0; p < comm->size; p++) {
    wsp__pair_t *pr = st->pair[p];
    if (pr == NULL) continue;
    pr->undecided = pr->undecided_tail = pr->sends = pr->sends_tail = NULL;
    pr->active = pr->active_tail = pr->recvs = pr->recvs_tail = NULL;
    for (int i = 0; i < pr->nlanes; i++) {
      wsp__lane_t *l = &pr->lane[i];
      if (l->oreq) l->ozero = 1; /* the rest of a frame being written: zeros */
      l->oreq = NULL;
      l->ireq = NULL;
      l->ipay = NULL;
      l->fl_n = 0;
    }
  }
  /* An orderly end, so that the peer reads every frame (the last DONE)
   * before it sees the end; none on a communicator a timeout made
   * unusable (nobody is waited for there). */
  const wsp_comm_t *o = comm->owner ? comm->owner : comm;
  if (!o->broken && !comm->broken) wsp__stripe_close(st, wsp__room_seconds(st, 2.0));
  for (int p = 0; p < comm->size; p++)
    if (st->pair[p]) wsp__pair_free(st->pair[p]);
  for (size_t g = 0; g < st->ngreet; g++) wsp__lane_close(st->greet[g].fd, 1);
  for (int i = 0; i < st->nlst; i++) wsp__lane_close(st->lst[i].fd, 0);
  if (st->notice != MPI_REQUEST_NULL) { /* a receive: cancelled, then complete */
    MPI_Cancel(&st->notice);
    MPI_Wait(&st->notice, MPI_STATUS_IGNORE);
  }
  if (st->p2p != MPI_COMM_NULL) MPI_Comm_free(&st->p2p);
  free(st->greet);
  free(st->pair);
  free(st->ifaces);
  free(st->scratch);
  free((void *)st->zeros);
  free(st->pfd);
  free(st->pfd_owner);
  free(st);
  comm->stripe = NULL;
  return rc;
}

/* ---- pairs ---- */

static int wsp__pair_get(wsp__stripe_t *st, int peer, wsp__pair_t **out) {
  wsp__pair_t *pr = st->pair[peer];
  if (pr == NULL) {
    if ((pr = calloc(1, sizeof *pr)) == NULL) return WSP_ERR_NOMEM;
    pr->peer = peer;
    pr->lower = st->comm->rank < peer;
    pr->xreq[0] = pr->xreq[1] = pr->vreq = MPI_REQUEST_NULL;
    for (int i = 0; i <= WSP__LANES_MAX; i++) pr->lane[i].fd = -1;
    const wsp_config_t *c = &st->comm->cfg;
    pr->nlanes = 1 + (int)(c->p2p_lanes ? c->p2p_lanes : c->p2p_max_lanes);
    pr->k = 1;
    pr->threshold = SIZE_MAX;
    st->pair[peer] = pr;
  }
  *out = pr;
  return WSP_OK;
}

void wsp__pair_fallback(wsp__stripe_t *st, wsp__pair_t *pr, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(pr->why, sizeof pr->why, fmt, ap);
  va_end(ap);
  for (int i = 0; i < pr->nlanes; i++) wsp__lane_release(&pr->lane[i], 1);
  if (pr->priv) {
    wsp__sec_keyfree(pr->priv);
    pr->priv = NULL;
  }
  wsp__sec_cleanse(&pr->keys, sizeof pr->keys);
  pr->nconn = 0;
  pr->fallback = 1;
  pr->k = 1;
  pr->threshold = SIZE_MAX;
  wsp__log(st->comm, WSP_LOG_WARN,
           "striped: the lanes to rank %d could not be set up (%s); striped messages to it go "
           "through MPI",
           pr->peer, pr->why);
  wsp__pair_ready(st, pr);
  if (!pr->lower) wsp__hs_idle(st, pr->peer);
}

/* Why this rank cannot set up lanes (a status, with the reason in `why`),
 * found before anything is sent: the peer learns it in the exchange. */
static int wsp__setup_blocked(wsp__stripe_t *st, wsp__pair_t *pr, char *why, size_t n) {
  if (st->broken) {
    snprintf(why, n, "this rank's lanes failed earlier");
    return WSP_ERR_CONN;
  }
  if (st->scratch == NULL || st->zeros == NULL) {
    snprintf(why, n, "out of memory");
    return WSP_ERR_NOMEM;
  }
  if (pr->priv == NULL) {
    snprintf(why, n, "no X25519 key could be made (OpenSSL, or no randomness)");
    return WSP_ERR_UNSUPPORTED;
  }
  if (st->naddr == 0) {
    snprintf(why, n, "no IPv4 address to offer%s%s%s",
             st->ifaces ? " on the interfaces WSP_P2P_IF names (" : "",
             st->ifaces ? st->ifaces : "", st->ifaces ? ")" : "");
    return WSP_ERR_CONFIG;
  }
  return WSP_OK;
}

/* Starts the set-up: this rank's key pair, addresses and host (found once),
 * and the exchange over MPI. The lower rank sends first; the higher one
 * answers when it knows the peer (wsp__pair_advance), so that it listens
 * only on addresses that peer can use. Whatever this rank cannot do goes
 * into the exchange (status) rather than failing here, so that the peer is
 * never left waiting. */
static int wsp__pair_setup(wsp__stripe_t *st, wsp__pair_t *pr) {
  wsp_comm_t *comm = st->comm;
  if (!st->addrs_known) {
    if (wsp__lane_addrs(st) != 0) st->naddr = 0;
    st->addrs_known = 1;
    wsp__lane_host_id(st->host);
    if (st->scratch == NULL) st->scratch = malloc(WSP__SCRATCH);
    if (st->zeros == NULL) st->zeros = calloc(1, WSP__PROBE_FRAME);
  }
  memset(&pr->mine, 0, sizeof pr->mine);
  pr->mine.version = WSP__STRIPE_VERSION;
  pr->mine.lanes = (uint32_t)pr->nlanes;
  pr->mine.encrypt = comm->cfg.p2p_encrypt ? 1 : 0;
  memcpy(pr->mine.host, st->host, sizeof st->host);
  pr->priv = wsp__sec_keypair(pr->mine.pub);
  char why[160];
  int status = wsp__setup_blocked(st, pr, why, sizeof why);
  pr->mine.status = (uint32_t)(-status);
  if (status != WSP_OK) wsp__log(comm, WSP_LOG_INFO, "striped: no lanes here: %s", why);
  int rc = WSP_OK;
  WSP__MPI_GOTO(comm,
                MPI_Irecv(&pr->theirs, (int)sizeof pr->theirs, MPI_BYTE, pr->peer,
                          WSP__TAG_STRIPE_SETUP, comm->mpi, &pr->xreq[1]),
                rc, out);
  if (pr->lower) {
    pr->mine.naddr = (uint32_t)st->naddr;
    memcpy(pr->mine.addr, st->addr, sizeof st->addr);
    memcpy(pr->mine.local, st->addr_local, sizeof st->addr_local);
    WSP__MPI_GOTO(comm,
                  MPI_Isend(&pr->mine, (int)sizeof pr->mine, MPI_BYTE, pr->peer,
                            WSP__TAG_STRIPE_SETUP, comm->mpi, &pr->xreq[0]),
                  rc, out);
  }
  pr->state = WSP__PAIR_XCHG;
out:
  return rc;
}

/* What the peer sent is of this build and this configuration: 0, or the
 * reason in `why`. */
static int wsp__info_mismatch(const wsp__pair_t *pr, char *why, size_t n) {
  const wsp__pair_info_t *t = &pr->theirs;
  if (t->version != WSP__STRIPE_VERSION)
    snprintf(why, n, "rank %d speaks lanes protocol %u, this rank %u", pr->peer, t->version,
             WSP__STRIPE_VERSION);
  else if (t->lanes != pr->mine.lanes || t->encrypt != pr->mine.encrypt)
    snprintf(why, n, "rank %d opens %u lanes%s, this rank %u%s (WSP_P2P_LANES, "
             "WSP_P2P_MAX_LANES and WSP_P2P_ENCRYPT must agree)",
             pr->peer, t->lanes, t->encrypt ? " sealed" : "", pr->mine.lanes,
             pr->mine.encrypt ? " sealed" : "");
  else if (t->naddr > WSP__ADDRS_MAX || t->status > WSP__STATUS_MAX)
    snprintf(why, n, "rank %d sent a malformed set-up", pr->peer);
  else
    return 0;
  return -1;
}

/* The higher rank has the lower one's part: it chooses what to offer,
 * listens, derives the keys and answers. */
static void wsp__answer(wsp__stripe_t *st, wsp__pair_t *pr) {
  wsp__pair_info_t *t = &pr->theirs;
  char why[160] = "";
  int status = (int)-(int64_t)pr->mine.status;
  int mismatch = wsp__info_mismatch(pr, why, sizeof why) != 0;
  if (!mismatch) {
    pr->same_host = memcmp(t->host, st->host, sizeof st->host) == 0;
    pr->nsrc = wsp__lane_usable(t->addr, t->local, (int)t->naddr, pr->same_host, st->addr,
                                st->naddr, pr->src, NULL);
    pr->mine.naddr = (uint32_t)wsp__lane_usable(st->addr, st->addr_local, st->naddr,
                                                pr->same_host, t->addr, (int)t->naddr,
                                                pr->mine.addr, pr->mine.local);
  }
  if (!mismatch && status == WSP_OK && t->status == 0) {
    if (pr->mine.naddr == 0 || pr->nsrc == 0) {
      status = WSP_ERR_CONFIG;
      snprintf(why, sizeof why, "no address of %s reaches the other's host",
               pr->mine.naddr == 0 ? "this rank" : "the lower rank");
    } else if (wsp__sec_derive(pr->priv, t->pub, st->comm->rank, pr->peer, pr->mine.pub,
                               &pr->keys) != 0) {
      status = WSP_ERR_UNSUPPORTED;
      snprintf(why, sizeof why, "the key agreement failed (the peer's key is not usable)");
    } else if (wsp__hs_listen(st, pr) != 0) {
      status = WSP_ERR_CONN;
      snprintf(why, sizeof why, "this rank cannot listen on any of its addresses");
    }
  }
  if (pr->priv) {
    wsp__sec_keyfree(pr->priv);
    pr->priv = NULL;
  }
  if (status != WSP_OK) {
    pr->mine.status = (uint32_t)(-status);
    pr->mine.naddr = 0;
  }
  int mrc = MPI_Isend(&pr->mine, (int)sizeof pr->mine, MPI_BYTE, pr->peer, WSP__TAG_STRIPE_SETUP,
                      st->comm->mpi, &pr->xreq[0]);
  if (mrc != MPI_SUCCESS) {
    wsp__pair_fail(st, pr, WSP_ERR_MPI, "the set-up's answer to rank %d could not be sent",
                   pr->peer);
    return;
  }
  if (mismatch) {
    wsp__pair_fail(st, pr, WSP_ERR_CONFIG, "%s", why);
    return;
  }
  if (status != WSP_OK || t->status != 0) {
    wsp__pair_fallback(st, pr, "%s",
                       status != WSP_OK ? why : "the lower rank cannot use lanes (see its log)");
    return;
  }
  pr->state = WSP__PAIR_CONNECT;
  mrc = MPI_Irecv(pr->verdict, 2, MPI_UINT32_T, pr->peer, WSP__TAG_STRIPE_SETUP, st->comm->mpi,
                  &pr->vreq);
  if (mrc != MPI_SUCCESS)
    wsp__pair_fail(st, pr, WSP_ERR_MPI, "the set-up's verdict from rank %d could not be posted",
                   pr->peer);
}

/* The lower rank has the higher one's answer: it connects, or both fall
 * back (the higher rank said why), or the configurations differ. */
static void wsp__heard(wsp__stripe_t *st, wsp__pair_t *pr) {
  wsp__pair_info_t *t = &pr->theirs;
  char why[160] = "";
  if (wsp__info_mismatch(pr, why, sizeof why) != 0) {
    wsp__pair_fail(st, pr, WSP_ERR_CONFIG, "%s", why);
    return;
  }
  if (t->freed) {
    wsp__pair_fail(st, pr, WSP_ERR_CONN, "rank %d freed its communicator during the set-up",
                   pr->peer);
    return;
  }
  if (t->status != 0 || pr->mine.status != 0) {
    /* The higher rank fell back already; no verdict is sent. */
    wsp__pair_fallback(st, pr, "%s",
                       t->status != 0 ? "the higher rank cannot use lanes (see its log)"
                                      : "this rank cannot use lanes");
    return;
  }
  pr->same_host = memcmp(t->host, st->host, sizeof st->host) == 0;
  int drc = wsp__sec_derive(pr->priv, t->pub, st->comm->rank, pr->peer, pr->mine.pub, &pr->keys);
  wsp__sec_keyfree(pr->priv);
  pr->priv = NULL;
  pr->state = WSP__PAIR_CONNECT;
  for (uint32_t i = 0; drc == 0 && i < t->naddr; i++)
    if (t->port[i] == 0) drc = -1;
  if (drc != 0 || t->naddr == 0) { /* the higher rank waits for a verdict: a failure */
    wsp__hs_failed(st, pr, WSP_ERR_UNSUPPORTED,
                   "the key agreement failed, or rank %d offered no port", pr->peer);
    return;
  }
  if (st->fault_setup_delay > 0)
    pr->connect_at = wsp__now() + st->fault_setup_delay;
  else
    wsp__hs_connect(st, pr);
}

void wsp__pair_advance(wsp__stripe_t *st, wsp__pair_t *pr) {
  if (pr->lower && pr->vreq != MPI_REQUEST_NULL) { /* the verdict's send */
    int done = 0;
    (void)MPI_Test(&pr->vreq, &done, MPI_STATUS_IGNORE);
  }
  if (pr->state == WSP__PAIR_XCHG) {
    int done = 0, mrc;
    if (pr->lower)
      mrc = MPI_Testall(2, pr->xreq, &done, MPI_STATUSES_IGNORE);
    else
      mrc = MPI_Test(&pr->xreq[1], &done, MPI_STATUS_IGNORE);
    if (mrc != MPI_SUCCESS) {
      wsp__pair_fail(st, pr, WSP_ERR_MPI, "the set-up's exchange with rank %d failed", pr->peer);
      return;
    }
    if (!done) return;
    if (pr->lower)
      wsp__heard(st, pr);
    else
      wsp__answer(st, pr);
    return;
  }
  if (pr->state != WSP__PAIR_CONNECT) return;
  if (!pr->lower && pr->xreq[0] != MPI_REQUEST_NULL) { /* the answer's send */
    int done = 0;
    (void)MPI_Test(&pr->xreq[0], &done, MPI_STATUS_IGNORE);
  }
  if (pr->lower) {
    if (pr->connect_at > 0 && wsp__now() >= pr->connect_at) wsp__hs_connect(st, pr);
    if (pr->connect_at == 0 && pr->state == WSP__PAIR_CONNECT &&
        wsp__now() > pr->connect_deadline)
      wsp__hs_failed(st, pr, WSP_ERR_CONN, "%d of %d lanes to rank %d were up after %.0f s",
                     pr->nconn, pr->nlanes, pr->peer, WSP__CONNECT_SECONDS);
    return;
  }
  int done = 0;
  if (MPI_Test(&pr->vreq, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
    wsp__pair_fail(st, pr, WSP_ERR_MPI, "the set-up's verdict from rank %d was lost", pr->peer);
    return;
  }
  if (!done) return;
  if (pr->verdict[1] == 1) {
    wsp__pair_fail(st, pr, WSP_ERR_CONN, "rank %d freed its communicator during the set-up",
                   pr->peer);
    return;
  }
  if (pr->verdict[0] != 0) {
    wsp__pair_fallback(st, pr, "rank %d could not bring the lanes up (%s; see its log)", pr->peer,
                       wsp__peer_status_name(pr->verdict[0]));
    return;
  }
  if (pr->nconn != pr->nlanes) {
    wsp__pair_fail(st, pr, WSP_ERR_CONN, "rank %d counts %d lanes up, this rank %d", pr->peer,
                   pr->nlanes, pr->nconn);
    return;
  }
  wsp__sec_cleanse(pr->keys.auth, sizeof pr->keys.auth); /* no more proofs */
  wsp__pair_connected(st, pr);
  wsp__hs_idle(st, pr->peer);
}

/* ---- the MPI path ---- */

static int wsp__mpi_post(wsp__stripe_t *st, wsp__sreq_t *r) {
  int n = 0, owned = 0, rc;
  MPI_Datatype t;
  r->path = WSP__PATH_MPI;
  if ((rc = wsp__bytes_type(st->comm, r->size, &n, &t, &owned)) != WSP_OK) return rc;
  int mrc = r->is_send ? MPI_Isend(r->buf, n, t, r->peer, r->tag, st->p2p, &r->mreq)
                       : MPI_Irecv(r->buf, n, t, r->peer, r->tag, st->p2p, &r->mreq);
  if (owned) MPI_Type_free(&t);
  if (mrc != MPI_SUCCESS)
    return wsp__mpi_fail(st->comm, mrc, r->is_send ? "MPI_Isend" : "MPI_Irecv", WSP__WHERE);
  return WSP_OK;
}

void wsp__pair_ready(wsp__stripe_t *st, wsp__pair_t *pr) {
  pr->state = WSP__PAIR_READY;
  while (pr->undecided && pr->state == WSP__PAIR_READY) {
    wsp__sreq_t *r = pr->undecided;
    pr->undecided = r->next;
    if (pr->undecided == NULL) pr->undecided_tail = NULL;
    r->next = NULL;
    if (r->size >= pr->threshold && r->size >= wsp__p2p_min(&st->comm->cfg)) {
      wsp__lanes_start(st, r);
    } else {
      int rc = wsp__mpi_post(st, r);
      if (rc != WSP_OK) wsp__req_finish(st, r, rc, wsp_last_error());
    }
  }
}

/* ---- posting ---- */

int wsp__striped_post(wsp_comm_t *comm, int is_send, void *buf, size_t bytes, int peer, int tag,
                      wsp_striped_request_t **out, const char *fn) {
  if (out) *out = NULL;
  if (comm == NULL) return wsp__fail(NULL, WSP_ERR_ARG, "%s: comm is NULL", fn);
  if (wsp__usable(comm, fn) != WSP_OK) return WSP_ERR_TIMEOUT;
  if (out == NULL) return wsp__fail(comm, WSP_ERR_ARG, "%s: req is NULL", fn);
  if (buf == NULL && bytes > 0)
    return wsp__fail(comm, WSP_ERR_ARG, "%s: buf is NULL with bytes = %zu", fn, bytes);
  if (peer < 0 || peer >= comm->size)
    return wsp__fail(comm, WSP_ERR_ARG, "%s: %s = %d is out of range [0, %d)", fn,
                     is_send ? "dest" : "source", peer, comm->size);
  wsp__stripe_t *st = comm->stripe;
  if (st == NULL)
    return wsp__fail(comm, WSP_ERR_UNSUPPORTED,
                     "%s: comm has no striped point-to-point (not made by wsp_comm_create)",
                     fn);
  int *ub = NULL, flag = 0;
  MPI_Comm_get_attr(st->p2p, MPI_TAG_UB, &ub, &flag);
  int tag_ub = flag && ub ? *ub : 32767;
  if (tag < 0 || tag > tag_ub)
    return wsp__fail(comm, WSP_ERR_ARG, "%s: tag = %d is out of range [0, %d]", fn, tag,
                     tag_ub);
  wsp__pair_t *pr = st->pair[peer];
  int lanes_possible = peer != comm->rank;
#ifdef WSP_SIMGRID
  lanes_possible = 0;
#endif
  const int via_mpi = !lanes_possible ||
                      (bytes < wsp__p2p_min(&comm->cfg) && (pr == NULL || pr->undecided == NULL));
  if (!via_mpi) {
    if (wsp__pair_get(st, peer, &pr) != WSP_OK)
      return wsp__fail(comm, WSP_ERR_NOMEM, "%s: out of memory", fn);
    if (pr->state == WSP__PAIR_FAILED)
      return wsp__fail(comm, pr->error, "%s: the lanes to rank %d failed earlier: %s", fn, peer,
                       pr->why);
  }
  wsp__sreq_t *r = calloc(1, sizeof *r);
  if (r == NULL) return wsp__fail(comm, WSP_ERR_NOMEM, "%s: out of memory", fn);
  r->st = st;
  r->is_send = is_send;
  r->peer = peer;
  r->tag = tag;
  r->buf = buf;
  r->size = bytes;
  r->mreq = MPI_REQUEST_NULL;
  /* Only the user's own sends: the transport's and the sites' engines
   * live on communicators of the library's, which have no report. */
  if (is_send && comm->report) {
    r->counted = 1;
    r->t0 = MPI_Wtime();
  }
  wsp__req_link(st, r);
  st->live++;
  int rc = WSP_OK;
  if (via_mpi) {
    rc = wsp__mpi_post(st, r);
  } else if (pr->state == WSP__PAIR_READY && pr->undecided == NULL) {
    r->pair = pr;
    if (bytes >= pr->threshold)
      wsp__lanes_start(st, r); /* a refusal completes the request with its reason */
    else
      rc = wsp__mpi_post(st, r);
  } else {
    r->pair = pr;
    if (pr->state == WSP__PAIR_NONE) rc = wsp__pair_setup(st, pr);
    if (rc == WSP_OK) {
      r->next = NULL;
      if (pr->undecided_tail)
        pr->undecided_tail->next = r;
      else
        pr->undecided = r;
      pr->undecided_tail = r;
    }
  }
  if (rc != WSP_OK) {
    wsp__req_unlink(st, r);
    st->live--;
    free(r);
    return rc;
  }
  *out = r;
  return WSP_OK;
}

int wsp_striped_isend(wsp_comm_t *comm, const void *buf, size_t bytes, int dest, int tag,
                      wsp_striped_request_t **req) {
  return wsp__striped_post(comm, 1, (void *)buf, bytes, dest, tag, req, "wsp_striped_isend");
}

int wsp_striped_irecv(wsp_comm_t *comm, void *buf, size_t bytes, int source, int tag,
                      wsp_striped_request_t **req) {
  return wsp__striped_post(comm, 0, buf, bytes, source, tag, req, "wsp_striped_irecv");
}

/* ---- completion ---- */

void wsp__striped_test_mpi(wsp__sreq_t *r) {
  if (r->done || r->path != WSP__PATH_MPI) return;
  int flag = 0;
  int mrc = MPI_Test(&r->mreq, &flag, MPI_STATUS_IGNORE);
  if (mrc != MPI_SUCCESS) {
    int rc = wsp__mpi_fail(r->st->comm, mrc, "MPI_Test", WSP__WHERE);
    wsp__req_finish(r->st, r, rc, wsp_last_error());
  } else if (flag) {
    wsp__req_finish(r->st, r, WSP_OK, NULL);
  }
}

/* Frees a finished request; its status, with the message recorded for it. */
int wsp__striped_reap(wsp_striped_request_t **req, const char *fn) {
  wsp__sreq_t *r = *req;
  int rc = r->status;
  if (rc != WSP_OK && fn) /* fn NULL: quietly (the last error stays) */
    rc = wsp__fail(r->st ? r->st->comm : NULL, rc, "%s: striped %s rank %d: %s", fn,
                   r->is_send ? "send to" : "receive from", r->peer,
                   r->why[0] ? r->why : wsp_strerror(rc));
  if (r->st) wsp__req_unlink(r->st, r);
  free(r->have);
  free(r);
  *req = NULL;
  return rc;
}

int wsp_striped_test(wsp_striped_request_t **req, int *done) {
  if (done) *done = 0;
  if (req == NULL || done == NULL)
    return wsp__fail(NULL, WSP_ERR_ARG, "wsp_striped_test: %s is NULL",
                     req == NULL ? "req" : "done");
  if (*req == NULL) {
    *done = 1;
    return WSP_OK;
  }
  wsp__sreq_t *r = *req;
  wsp__striped_test_mpi(r);
  /* A failed pass has failed every lanes request (wsp__stripe_break);
   * MPI ones go on. */
  if (!r->done) (void)wsp__stripe_progress(r->st, 0);
  wsp__striped_test_mpi(r);
  if (!r->done) return WSP_OK;
  *done = 1;
  if (r->st) wsp__stripe_flush(r->st, wsp__room_seconds(r->st, 10.0));
  return wsp__striped_reap(req, "wsp_striped_test");
}

/* How far the pending requests among reqs have come: bytes handed to lanes
 * or received, and requests done. A wait whose mark stays put makes no
 * progress (the time limit, cfg.timeout). */
static uint64_t wsp__progress_mark(int n, wsp_striped_request_t **reqs) {
  uint64_t m = 0;
  for (int i = 0; i < n; i++)
    if (reqs[i]) m += reqs[i]->next_off + reqs[i]->got + (uint64_t)reqs[i]->matched +
                      (uint64_t)reqs[i]->done;
  return m;
}

/* The wait made no progress for cfg.timeout: every pending request fails
 * with WSP_ERR_TIMEOUT (a lanes pair is failed, which tells the peer and
 * closes its lanes; an MPI request is let go), and the communicator is
 * marked unusable with a message naming the peers. */
static int wsp__striped_timeout(int n, wsp_striped_request_t **reqs) {
  enum { SHOW = 16 };
  int peers[SHOW], np = 0;
  const wsp_comm_t *comm = NULL;
  char why[160];
  for (int i = 0; i < n; i++) {
    wsp__sreq_t *r = reqs[i];
    if (r == NULL || r->done) continue;
    comm = r->st->comm;
    snprintf(why, sizeof why, "no progress for %g s (WSP_TIMEOUT)", comm->cfg.timeout);
    if (np < SHOW) peers[np++] = r->peer;
    if (r->path == WSP__PATH_MPI) {
      wsp__let_go(&r->mreq, !r->is_send);
    } else if (r->pair) {
      wsp__pair_fail(r->st, r->pair, WSP_ERR_TIMEOUT, "%s", why);
    }
    wsp__req_finish(r->st, r, WSP_ERR_TIMEOUT, why);
  }
  return comm ? wsp__timeout_peers(comm, peers, np, "striped transfers") : WSP_ERR_TIMEOUT;
}

int wsp_striped_waitall(int n, wsp_striped_request_t **reqs) {
  if (n < 0) return wsp__fail(NULL, WSP_ERR_ARG, "wsp_striped_waitall: n = %d < 0", n);
  if (n > 0 && reqs == NULL)
    return wsp__fail(NULL, WSP_ERR_ARG, "wsp_striped_waitall: reqs is NULL with n = %d", n);
  /* Requests of a freed communicator (st NULL) are done already. */
  wsp__stripe_t *one = NULL;
  int several = 0;
  for (int i = 0; i < n; i++)
    if (reqs[i] && reqs[i]->st) {
      if (one && reqs[i]->st != one) several = 1;
      one = reqs[i]->st;
    }
  wsp__backoff_t b;
  if (one) wsp__backoff_init(&b, one->comm);
  const double limit = one ? one->comm->cfg.timeout : 0;
  uint64_t mark = wsp__progress_mark(n, reqs);
  double since = limit > 0 ? wsp__now() : 0;
  int timed_out = WSP_OK;
  char timeout_msg[512] = "";
  for (;;) {
    int pending = 0, mpi = 0;
    for (int i = 0; i < n; i++) {
      wsp__sreq_t *r = reqs[i];
      if (r == NULL || r->done) continue;
      wsp__striped_test_mpi(r);
      if (r->done) continue;
      pending++;
      mpi += r->path == WSP__PATH_MPI;
    }
    if (!pending) break;
    if (limit > 0) {
      uint64_t m = wsp__progress_mark(n, reqs);
      double now = wsp__now();
      if (m != mark) {
        mark = m, since = now;
      } else if (now - since > limit) {
        timed_out = wsp__striped_timeout(n, reqs);
        snprintf(timeout_msg, sizeof timeout_msg, "%s", wsp_last_error());
        break;
      }
    }
    if (!several && mpi == pending && one->live == pending && !(limit > 0)) {
      /* Only messages that went through MPI, and nothing else of this
       * communicator in flight, and no time limit: wait as MPI_Send and
       * MPI_Recv would. The
       * polling below wakes up late by up to one back-off sleep, which a
       * message of a few milliseconds notices (auto on a cluster, where it
       * leaves every message to MPI: docs/results/p2p.md). */
      for (int i = 0; i < n; i++) {
        wsp__sreq_t *r = reqs[i];
        if (r == NULL || r->done) continue;
        int mrc = MPI_Wait(&r->mreq, MPI_STATUS_IGNORE);
        if (mrc == MPI_SUCCESS) {
          wsp__req_finish(r->st, r, WSP_OK, NULL);
        } else {
          int rc = wsp__mpi_fail(r->st->comm, mrc, "MPI_Wait", WSP__WHERE);
          wsp__req_finish(r->st, r, rc, wsp_last_error());
        }
      }
      break;
    }
    /* Only sockets to wait for: sleep in poll until one is ready. With
     * MPI requests among them, poll without waiting and back off. A pass
     * that fails has failed every request on lanes (wsp__stripe_break),
     * which leaves MPI ones to wait for. */
    long timeout = mpi || several ? 0 : 100000; /* us */
    int progressed = 0;
    for (int i = 0; i < n; i++) {
      wsp__sreq_t *r = reqs[i];
      if (r == NULL || r->done || (several && i > 0 && reqs[i - 1] && reqs[i - 1]->st == r->st))
        continue;
      if (wsp__stripe_progress(r->st, timeout) != WSP_OK) timeout = 0;
      progressed = 1;
      if (!several) break;
    }
    if (timeout == 0 && progressed) wsp__backoff_idle(&b);
  }
  for (int i = 0; i < n && timed_out == WSP_OK; i++)
    if (reqs[i] && reqs[i]->st && (i == 0 || !reqs[i - 1] || reqs[i - 1]->st != reqs[i]->st))
      wsp__stripe_flush(reqs[i]->st, wsp__room_seconds(reqs[i]->st, 10.0));
  int rc = WSP_OK;
  for (int i = 0; i < n; i++)
    if (reqs[i]) {
      int r = wsp__striped_reap(&reqs[i], "wsp_striped_wait");
      if (rc == WSP_OK) rc = r;
    }
  /* The timeout's message (reaping recorded the requests' own). */
  if (timed_out != WSP_OK) rc = wsp__fail_quiet(timed_out, "%s", timeout_msg);
  return rc;
}

int wsp_striped_wait(wsp_striped_request_t **req) {
  if (req == NULL) return wsp__fail(NULL, WSP_ERR_ARG, "wsp_striped_wait: req is NULL");
  return wsp_striped_waitall(1, req);
}

int wsp_striped_send(wsp_comm_t *comm, const void *buf, size_t bytes, int dest, int tag) {
  wsp_striped_request_t *r = NULL;
  int rc = wsp__striped_post(comm, 1, (void *)buf, bytes, dest, tag, &r, "wsp_striped_send");
  return rc != WSP_OK ? rc : wsp_striped_wait(&r);
}

int wsp_striped_recv(wsp_comm_t *comm, void *buf, size_t bytes, int source, int tag) {
  wsp_striped_request_t *r = NULL;
  int rc = wsp__striped_post(comm, 0, buf, bytes, source, tag, &r, "wsp_striped_recv");
  return rc != WSP_OK ? rc : wsp_striped_wait(&r);
}

double wsp__stripe_queue(const wsp_comm_t *comm, int peer) {
  const wsp__pair_t *pr =
      comm->stripe && peer >= 0 && peer < comm->size ? comm->stripe->pair[peer] : NULL;
  double sum = 0;
  int n = 0;
  for (int li = 1; pr && !pr->fallback && li < pr->nlanes; li++) {
    wsp__tcpstat_t ts;
    if (pr->lane[li].fd < 0 || wsp__tcpstat(pr->lane[li].fd, &ts) != 0 || ts.srtt_us == 0) continue;
    sum += ts.srtt_us > ts.min_rtt_us ? 1e-6 * (ts.srtt_us - ts.min_rtt_us) : 0;
    n++;
  }
  return n ? sum / n : 0;
}

int wsp_striped_info(const wsp_comm_t *comm, int peer, wsp_striped_info_t *info) {
  if (comm == NULL) return wsp__fail(NULL, WSP_ERR_ARG, "wsp_striped_info: comm is NULL");
  if (info == NULL) return wsp__fail(comm, WSP_ERR_ARG, "wsp_striped_info: info is NULL");
  if (peer < 0 || peer >= comm->size)
    return wsp__fail(comm, WSP_ERR_ARG, "wsp_striped_info: peer = %d is out of range [0, %d)",
                     peer, comm->size);
  memset(info, 0, sizeof *info);
  info->lanes = 1;
  info->threshold = SIZE_MAX;
  const wsp__stripe_t *st = comm->stripe;
  const wsp__pair_t *pr = st ? st->pair[peer] : NULL;
  if (pr == NULL) return WSP_OK;
  info->state = pr->state == WSP__PAIR_READY    ? WSP_STRIPED_READY
                : pr->state == WSP__PAIR_FAILED ? WSP_STRIPED_FAILED
                : pr->state == WSP__PAIR_NONE   ? WSP_STRIPED_NONE
                                                : WSP_STRIPED_SETUP;
  info->lanes = pr->k;
  info->lanes_open = pr->fallback ? 0 : pr->nlanes - 1;
  info->threshold = pr->threshold;
  info->rate_one = pr->rate1;
  info->rate_lanes = pr->ratek;
  info->rtt = pr->rtt;
  info->loss = pr->loss;
  info->slow_start = pr->ramping;
  struct sockaddr_in a;
  socklen_t al = sizeof a;
  if (pr->lane[0].fd >= 0 && getpeername(pr->lane[0].fd, (struct sockaddr *)&a, &al) == 0)
    inet_ntop(AF_INET, &a.sin_addr, info->peer_address, sizeof info->peer_address);
  for (int i = 0; i < pr->nlanes && i < 65; i++) {
    al = sizeof a;
    if (pr->lane[i].fd >= 0 && getsockname(pr->lane[i].fd, (struct sockaddr *)&a, &al) == 0)
      info->local_port[i] = ntohs(a.sin_port);
  }
  for (int i = 0; i < pr->nlanes; i++) {
    info->bytes_sent += pr->lane[i].bytes_out;
    info->bytes_received += pr->lane[i].bytes_in;
  }
  return WSP_OK;
}
