/*
 * Striped point-to-point: the public calls (include/wirespeed.h), the
 * choice between lanes and MPI, and the pair set-up.
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
 * The MPI path runs on a duplicate of the private communicator with the
 * user's tag, so any tag MPI allows is free for the user.
 */
#include "striped_internal.h"

#include "tags.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum { WSP__STRIPE_VERSION = 1 };

/* ---- the communicator's state ---- */

int wsp__stripe_create(wsp_comm_t *comm) {
  wsp__stripe_t *st = calloc(1, sizeof *st);
  int failed = st == NULL;
  if (st) {
    st->comm = comm;
    st->listen_fd = -1;
    st->p2p = MPI_COMM_NULL;
    st->pair = calloc((size_t)comm->size, sizeof *st->pair);
    if (comm->cfg.p2p_interfaces && (st->ifaces = strdup(comm->cfg.p2p_interfaces)) == NULL)
      failed = 1;
    failed |= st->pair == NULL;
  }
  int rc = wsp__agree_alloc(comm, comm->mpi, failed, "wsp_comm_create: striped point-to-point");
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
  size_t after = 0;
  if (wsp__env_size("WSP_P2P_FAULT_RESET", 0, SIZE_MAX, &after) == WSP_OK)
    st->fault_reset_after = after;
  const char *eg = getenv("WSP_P2P_ENDGAME");
  st->endgame_always = eg && strcmp(eg, "always") == 0;
  /* Unsent backlog at which a lane counts as free (lane.c). */
  st->lowat = comm->cfg.p2p_chunk ? comm->cfg.p2p_chunk : 64 * 1024;
  comm->stripe = st;
  return WSP_OK;
}

static void pair_free(wsp__pair_t *pr) {
  for (int i = 0; i < pr->nlanes; i++) wsp__lane_close(pr->lane[i].fd, 0);
  if (pr->xreq[1] != MPI_REQUEST_NULL) {
    MPI_Cancel(&pr->xreq[1]);
    MPI_Wait(&pr->xreq[1], MPI_STATUS_IGNORE);
  }
  if (pr->xreq[0] != MPI_REQUEST_NULL) MPI_Request_free(&pr->xreq[0]);
  free(pr->cts);
  free(pr->ctl);
  free(pr);
}

int wsp__stripe_free(wsp_comm_t *comm) {
  wsp__stripe_t *st = comm->stripe;
  if (st == NULL) return WSP_OK;
  int rc = WSP_OK;
  if (st->live > 0)
    rc = wsp__fail(comm, WSP_ERR_ARG,
                   "wsp_comm_free: %d striped requests are still in flight; wait "
                   "for them first (they are abandoned)",
                   st->live);
  /* An orderly end first: the peer may still be reading the last DONE. */
  for (int p = 0; p < comm->size; p++)
    if (st->pair[p]) wsp__pair_close(st, st->pair[p], 2.0);
  for (int p = 0; p < comm->size; p++)
    if (st->pair[p]) pair_free(st->pair[p]);
  for (size_t g = 0; g < st->ngreet; g++) wsp__lane_close(st->greet[g].fd, 1);
  if (st->listen_fd >= 0) close(st->listen_fd);
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

static uint64_t random64(int rank) {
  uint64_t v = 0;
  int fd = open("/dev/urandom", O_RDONLY);
  if (fd < 0 || read(fd, &v, sizeof v) != (ssize_t)sizeof v) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    v = ((uint64_t)ts.tv_nsec << 32) ^ (uint64_t)ts.tv_sec ^ ((uint64_t)getpid() << 16) ^
        (uint64_t)rank;
  }
  if (fd >= 0) close(fd);
  return v | 1; /* never 0 */
}

static int pair_get(wsp__stripe_t *st, int peer, wsp__pair_t **out) {
  wsp__pair_t *pr = st->pair[peer];
  if (pr == NULL) {
    if ((pr = calloc(1, sizeof *pr)) == NULL) return WSP_ERR_NOMEM;
    pr->peer = peer;
    pr->lower = st->comm->rank < peer;
    pr->xreq[0] = pr->xreq[1] = MPI_REQUEST_NULL;
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

/* Starts the set-up: this rank's listener and addresses (once), then the
 * exchange of addresses with the peer over MPI. */
static int pair_setup(wsp__stripe_t *st, wsp__pair_t *pr, const char *fn) {
  wsp_comm_t *comm = st->comm;
  if (st->listen_fd < 0) {
    if (wsp__lane_listen(st) != 0)
      return wsp__fail(comm, WSP_ERR_UNSUPPORTED, "%s: cannot listen on a TCP port: %s", fn,
                       strerror(errno));
    if (wsp__lane_addrs(st) != 0 || st->naddr == 0)
      return wsp__fail(comm, WSP_ERR_CONFIG,
                       "%s: this rank has no IPv4 address to offer for lanes%s%s%s", fn,
                       st->ifaces ? " on the interfaces WSP_P2P_IF names (" : "",
                       st->ifaces ? st->ifaces : "", st->ifaces ? ")" : "");
    st->nonce = random64(comm->rank);
    if ((st->scratch = malloc(WSP__SCRATCH)) == NULL ||
        (st->zeros = calloc(1, WSP__PROBE_FRAME)) == NULL)
      return wsp__fail(comm, WSP_ERR_NOMEM, "%s: out of memory", fn);
  }
  memset(&pr->mine, 0, sizeof pr->mine);
  pr->mine.version = WSP__STRIPE_VERSION;
  pr->mine.port = st->port;
  pr->mine.naddr = (uint32_t)st->naddr;
  pr->mine.lanes = (uint32_t)pr->nlanes;
  pr->mine.nonce = st->nonce;
  memcpy(pr->mine.addr, st->addr, sizeof st->addr);
  int rc = WSP_OK;
  WSP__MPI_GOTO(comm,
                MPI_Irecv(&pr->theirs, (int)sizeof pr->theirs, MPI_BYTE, pr->peer,
                          WSP__TAG_STRIPE_SETUP, comm->mpi, &pr->xreq[1]),
                rc, out);
  WSP__MPI_GOTO(comm,
                MPI_Isend(&pr->mine, (int)sizeof pr->mine, MPI_BYTE, pr->peer,
                          WSP__TAG_STRIPE_SETUP, comm->mpi, &pr->xreq[0]),
                rc, out);
  pr->state = WSP__PAIR_XCHG;
out:
  return rc;
}

/* ---- the MPI path ---- */

static int mpi_post(wsp__stripe_t *st, wsp__sreq_t *r) {
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
    if (r->size >= pr->threshold && r->size >= st->comm->cfg.p2p_min) {
      wsp__lanes_start(st, r);
    } else {
      int rc = mpi_post(st, r);
      if (rc != WSP_OK) wsp__req_finish(st, r, rc);
    }
  }
}

/* ---- posting ---- */

static int post(wsp_comm_t *comm, int is_send, void *buf, size_t bytes, int peer, int tag,
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
  wsp__sreq_t *r = calloc(1, sizeof *r);
  if (r == NULL) return wsp__fail(comm, WSP_ERR_NOMEM, "%s: out of memory", fn);
  r->st = st;
  r->is_send = is_send;
  r->peer = peer;
  r->tag = tag;
  r->buf = buf;
  r->size = bytes;
  r->mreq = MPI_REQUEST_NULL;
  int rc = WSP_OK;
  wsp__pair_t *pr = st->pair[peer];
  int lanes_possible = peer != comm->rank;
#ifdef WSP_SIMGRID
  lanes_possible = 0;
#endif
  if (!lanes_possible || (bytes < comm->cfg.p2p_min && (pr == NULL || pr->undecided == NULL))) {
    rc = mpi_post(st, r);
  } else if ((rc = pair_get(st, peer, &pr)) != WSP_OK) {
    rc = wsp__fail(comm, rc, "%s: out of memory", fn);
  } else if (pr->state == WSP__PAIR_FAILED) {
    rc = wsp__fail(comm, pr->error, "%s: the lanes to rank %d failed earlier: %s", fn, peer,
                   pr->why);
  } else if (pr->state == WSP__PAIR_READY && pr->undecided == NULL) {
    r->pair = pr;
    if (bytes >= pr->threshold)
      wsp__lanes_start(st, r);
    else
      rc = mpi_post(st, r);
  } else {
    r->pair = pr;
    if (pr->state == WSP__PAIR_NONE) rc = pair_setup(st, pr, fn);
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
    free(r);
    return rc;
  }
  st->live++;
  *out = r;
  return WSP_OK;
}

int wsp_isend_striped(wsp_comm_t *comm, const void *buf, size_t bytes, int dest, int tag,
                      wsp_striped_request_t **req) {
  return post(comm, 1, (void *)buf, bytes, dest, tag, req, "wsp_isend_striped");
}

int wsp_irecv_striped(wsp_comm_t *comm, void *buf, size_t bytes, int source, int tag,
                      wsp_striped_request_t **req) {
  return post(comm, 0, buf, bytes, source, tag, req, "wsp_irecv_striped");
}

/* ---- completion ---- */

static void test_mpi(wsp__sreq_t *r) {
  if (r->done || r->path != WSP__PATH_MPI) return;
  int flag = 0;
  int mrc = MPI_Test(&r->mreq, &flag, MPI_STATUS_IGNORE);
  if (mrc != MPI_SUCCESS)
    wsp__req_finish(r->st, r, wsp__mpi_fail(r->st->comm, mrc, "MPI_Test", WSP__WHERE));
  else if (flag)
    wsp__req_finish(r->st, r, WSP_OK);
}

/* Frees a finished request; its status, with the message recorded for it. */
static int reap(wsp_striped_request_t **req, const char *fn) {
  wsp__sreq_t *r = *req;
  int rc = r->status;
  if (rc != WSP_OK && r->path != WSP__PATH_MPI && r->pair)
    rc = wsp__fail(r->st->comm, rc, "%s: striped %s rank %d: %s", fn,
                   r->is_send ? "send to" : "receive from", r->peer, r->pair->why);
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
  test_mpi(r);
  if (!r->done) {
    int rc = wsp__stripe_progress(r->st, 0);
    if (rc != WSP_OK) return wsp__fail(r->st->comm, rc, "wsp_striped_test: poll failed");
    test_mpi(r);
  }
  if (!r->done) return WSP_OK;
  *done = 1;
  wsp__stripe_flush(r->st, 10.0);
  return reap(req, "wsp_striped_test");
}

/* How far the pending requests among reqs have come: bytes handed to lanes
 * or received, and requests done. A wait whose mark stays put makes no
 * progress (the time limit, cfg.timeout). */
static uint64_t progress_mark(int n, wsp_striped_request_t **reqs) {
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
static int striped_timeout(int n, wsp_striped_request_t **reqs) {
  enum { SHOW = 16 };
  int peers[SHOW], np = 0;
  const wsp_comm_t *comm = NULL;
  for (int i = 0; i < n; i++) {
    wsp__sreq_t *r = reqs[i];
    if (r == NULL || r->done) continue;
    comm = r->st->comm;
    if (np < SHOW) peers[np++] = r->peer;
    if (r->path == WSP__PATH_MPI) {
      if (!r->is_send) (void)MPI_Cancel(&r->mreq);
      (void)MPI_Request_free(&r->mreq);
      wsp__req_finish(r->st, r, WSP_ERR_TIMEOUT);
    } else if (r->pair) {
      wsp__pair_fail(r->st, r->pair, WSP_ERR_TIMEOUT, "no progress for %g s (WSP_TIMEOUT)",
                     comm->cfg.timeout);
    }
    wsp__req_finish(r->st, r, WSP_ERR_TIMEOUT);
  }
  return comm ? wsp__timeout_peers(comm, peers, np, "striped transfers") : WSP_ERR_TIMEOUT;
}

int wsp_striped_waitall(int n, wsp_striped_request_t **reqs) {
  if (n < 0) return wsp__fail(NULL, WSP_ERR_ARG, "wsp_striped_waitall: n = %d < 0", n);
  if (n > 0 && reqs == NULL)
    return wsp__fail(NULL, WSP_ERR_ARG, "wsp_striped_waitall: reqs is NULL with n = %d", n);
  wsp__stripe_t *one = NULL;
  int several = 0;
  for (int i = 0; i < n; i++)
    if (reqs[i]) {
      if (one && reqs[i]->st != one) several = 1;
      one = reqs[i]->st;
    }
  wsp__backoff_t b;
  if (one) wsp__backoff_init(&b, one->comm);
  const double limit = one ? one->comm->cfg.timeout : 0;
  uint64_t mark = progress_mark(n, reqs);
  double since = limit > 0 ? wsp__backoff_now() : 0;
  int timed_out = WSP_OK;
  char timeout_msg[512] = "";
  for (;;) {
    int pending = 0, mpi = 0;
    for (int i = 0; i < n; i++) {
      wsp__sreq_t *r = reqs[i];
      if (r == NULL || r->done) continue;
      test_mpi(r);
      if (r->done) continue;
      pending++;
      mpi += r->path == WSP__PATH_MPI;
    }
    if (!pending) break;
    if (limit > 0) {
      uint64_t m = progress_mark(n, reqs);
      double now = wsp__backoff_now();
      if (m != mark) {
        mark = m, since = now;
      } else if (now - since > limit) {
        timed_out = striped_timeout(n, reqs);
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
        wsp__req_finish(r->st, r,
                        mrc == MPI_SUCCESS ? WSP_OK
                                           : wsp__mpi_fail(r->st->comm, mrc, "MPI_Wait", WSP__WHERE));
      }
      break;
    }
    /* Only sockets to wait for: sleep in poll until one is ready. With
     * MPI requests among them, poll without waiting and back off. */
    int timeout = mpi || several ? 0 : 100;
    int progressed = 0;
    for (int i = 0; i < n; i++) {
      wsp__sreq_t *r = reqs[i];
      if (r == NULL || r->done || (several && i > 0 && reqs[i - 1] && reqs[i - 1]->st == r->st))
        continue;
      int rc = wsp__stripe_progress(r->st, timeout);
      if (rc != WSP_OK) {
        for (int j = 0; j < n; j++)
          if (reqs[j] && !reqs[j]->done) wsp__req_finish(reqs[j]->st, reqs[j], rc);
        break;
      }
      progressed = 1;
      if (!several) break;
    }
    if (timeout == 0 && progressed) wsp__backoff_idle(&b);
  }
  for (int i = 0; i < n && timed_out == WSP_OK; i++)
    if (reqs[i] && (i == 0 || !reqs[i - 1] || reqs[i - 1]->st != reqs[i]->st))
      wsp__stripe_flush(reqs[i]->st, 10.0);
  int rc = WSP_OK;
  for (int i = 0; i < n; i++)
    if (reqs[i]) {
      int r = reap(&reqs[i], "wsp_striped_wait");
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

int wsp_send_striped(wsp_comm_t *comm, const void *buf, size_t bytes, int dest, int tag) {
  wsp_striped_request_t *r = NULL;
  int rc = post(comm, 1, (void *)buf, bytes, dest, tag, &r, "wsp_send_striped");
  return rc != WSP_OK ? rc : wsp_striped_wait(&r);
}

int wsp_recv_striped(wsp_comm_t *comm, void *buf, size_t bytes, int source, int tag) {
  wsp_striped_request_t *r = NULL;
  int rc = post(comm, 0, buf, bytes, source, tag, &r, "wsp_recv_striped");
  return rc != WSP_OK ? rc : wsp_striped_wait(&r);
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
  info->lanes_open = pr->nlanes - 1;
  info->threshold = pr->threshold;
  info->rate_one = pr->rate1;
  info->rate_lanes = pr->ratek;
  info->rtt = pr->rtt;
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
