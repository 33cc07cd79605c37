/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Dynamic sparse data exchange: the algorithm table and the dispatcher.
 *
 * Every rank passes the messages it sends; the exchange returns to each
 * rank the messages addressed to it. Rounds may be called back to back with
 * any mix of algorithms. Each round uses the tag of its round number's
 * parity. One bit is enough because no algorithm lets a rank finish round r
 * before every rank has entered round r: NBX ends a round with a
 * non-blocking sum that needs every rank's contribution, PEX starts it
 * with a reduce-scatter, alltoallv with an all-to-all. So while a slow rank
 * is still in round r, a fast rank is at most in round r + 1, whose
 * messages carry the other tag and are never mistaken for round r's.
 *
 * Argument errors are found before any communication. A rank with a bad
 * argument still takes part in the round without sending anything and
 * tells the others through the round's own collective step, so that every
 * rank returns an error (WSP_ERR_ARG there, WSP_ERR_REMOTE elsewhere) and
 * nobody waits forever or keeps half a round.
 */
#include "sparse_internal.h"

#include "../p2p/xport.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Messages beyond 64 TiB are taken to be a negative size cast to size_t. */
#define WSP__MAX_MESSAGE ((size_t)1 << 46)

typedef struct wsp__sparse_alg_row {
  wsp_alg_info_t info;
  wsp__sparse_fn fn;
} wsp__sparse_alg_row_t;

static const wsp__sparse_alg_row_t wsp__sparse_algs[WSP_SPARSE_ALG_COUNT] = {
#define WSP__SPARSE_ROW(id, nm, desc_, cost_)                                  \
  [WSP_SPARSE_##id] = {.info = {.name = #nm, .desc = desc_, .cost = cost_},    \
                       .fn = wsp__sparse_##nm},
    WSP_SPARSE_ALG_MAP(WSP__SPARSE_ROW)
#undef WSP__SPARSE_ROW
};

/* auto is no row of the table (it runs the rows), but it has a name and a
 * description like them, for wsp-info and the docs. */
static const wsp_alg_info_t wsp__sparse_auto_info = {
    .name = "auto",
    .desc = "measures nbx, pex and alltoallv on the job's own rounds and runs "
            "the fastest, measuring again from time to time and when the "
            "pattern changes",
    .cost = "that of the fastest, plus rare exploring rounds"};

const wsp_alg_info_t *wsp_sparse_alg_info(wsp_sparse_alg_t alg) {
  if (alg == WSP_SPARSE_AUTO) return &wsp__sparse_auto_info;
  if ((int)alg < 0 || alg >= WSP_SPARSE_ALG_COUNT) return NULL;
  return &wsp__sparse_algs[alg].info;
}

int wsp_sparse_alg_from_name(const char *name, wsp_sparse_alg_t *alg) {
  if (alg == NULL)
    return wsp__fail(NULL, WSP_ERR_ARG, "wsp_sparse_alg_from_name: alg is NULL");
  if (name != NULL && strcmp(name, wsp__sparse_auto_info.name) == 0) {
    *alg = WSP_SPARSE_AUTO;
    return WSP_OK;
  }
  char valid[128] = "auto";
  size_t used = strlen(valid);
  for (int i = 0; i < WSP_SPARSE_ALG_COUNT; i++) {
    if (name != NULL && strcmp(name, wsp__sparse_algs[i].info.name) == 0) {
      *alg = (wsp_sparse_alg_t)i;
      return WSP_OK;
    }
    int n = snprintf(valid + used, sizeof valid - used, ", %s", wsp__sparse_algs[i].info.name);
    if (n > 0 && (size_t)n < sizeof valid - used) used += (size_t)n;
  }
  return wsp__fail(NULL, WSP_ERR_ARG, "unknown sparse algorithm \"%s\"; valid names: %s",
                   name ? name : "(null)", valid);
}

int wsp__sparse_run(wsp__sparse_round_t *r, wsp_sparse_alg_t alg) {
  r->alg = alg;
  if (alg == WSP_SPARSE_AUTO) return wsp__sparse_auto(r); /* runs a row */
  return wsp__sparse_algs[alg].fn(r);
}

/* ---- memory ---- */

/* Countdown to the allocation a test makes fail (0: none), and how many
 * failed that way; per thread, as a wsp_comm_t is used by one at a time. */
static _Thread_local unsigned long wsp__alloc_countdown, wsp__alloc_failed;

static int wsp__alloc_fails(void) {
  if (wsp__alloc_countdown == 0 || --wsp__alloc_countdown > 0) return 0;
  wsp__alloc_failed++;
  return 1;
}

void *wsp__malloc(size_t n) { return wsp__alloc_fails() ? NULL : malloc(n ? n : 1); }
void *wsp__calloc(size_t n, size_t size) {
  return wsp__alloc_fails() ? NULL : calloc(n ? n : 1, size ? size : 1);
}
void *wsp__realloc(void *p, size_t n) { return wsp__alloc_fails() ? NULL : realloc(p, n ? n : 1); }

unsigned long wsp__fail_alloc_in(unsigned long n) {
  wsp__alloc_countdown = n;
  return wsp__alloc_failed;
}

struct wsp__sparse_comm *wsp__sparse_comm_new(int p, uint64_t interval) {
  struct wsp__sparse_comm *s = calloc(1, sizeof *s);
  size_t n = p > 0 ? (size_t)p : 1;
  if (s == NULL) return NULL;
  s->p = p;
  s->u64 = malloc(6 * n * sizeof *s->u64);
  s->cnt = malloc(4 * n * sizeof *s->cnt);
  s->to = malloc(n * sizeof *s->to);
  s->reqs = malloc(2 * n * sizeof *s->reqs);
  s->announced = malloc(n * sizeof *s->announced);
  if (!s->u64 || !s->cnt || !s->to || !s->reqs || !s->announced) {
    wsp__sparse_comm_free(s);
    return NULL;
  }
  wsp__sparse_auto_init(&s->chooser, interval);
  return s;
}

void wsp__sparse_comm_free(struct wsp__sparse_comm *s) {
  if (s == NULL) return;
  free(s->u64);
  free(s->cnt);
  free(s->to);
  free(s->reqs);
  free(s->announced);
  free(s);
}

/* ---- result storage ---- */

/* Grows *arr (of elements of `size` bytes, capacity *cap) to hold at least
 * `need`; WSP_ERR_NOMEM leaves it as it was. */
static int wsp__grow(void **arr, size_t *cap, size_t need, size_t size) {
  if (need <= *cap) return WSP_OK;
  size_t c = *cap ? *cap : 16;
  while (c < need) c *= 2;
  void *n = wsp__realloc(*arr, c * size);
  if (n == NULL) return WSP_ERR_NOMEM;
  *arr = n;
  *cap = c;
  return WSP_OK;
}

int wsp__sparse_reserve(wsp__sparse_round_t *r, size_t nmsgs, size_t nblocks) {
  if (wsp__grow((void **)&r->msgs, &r->cap, r->count + nmsgs, sizeof *r->msgs) ||
      wsp__grow((void **)&r->blocks, &r->capblocks, r->nblocks + nblocks, sizeof *r->blocks))
    return WSP_ERR_NOMEM;
  return WSP_OK;
}

int wsp__sparse_own(wsp__sparse_round_t *r, void *block) {
  if (wsp__grow((void **)&r->blocks, &r->capblocks, r->nblocks + 1, sizeof *r->blocks))
    return WSP_ERR_NOMEM;
  r->blocks[r->nblocks++] = block;
  return WSP_OK;
}

int wsp__sparse_append(wsp__sparse_round_t *r, int source, size_t bytes,
                       void *data) {
  if (wsp__grow((void **)&r->msgs, &r->cap, r->count + 1, sizeof *r->msgs))
    return WSP_ERR_NOMEM;
  r->msgs[r->count].source = source;
  r->msgs[r->count].bytes = bytes;
  r->msgs[r->count].data = data;
  r->count++;
  return WSP_OK;
}

int wsp__sparse_take(wsp__sparse_round_t *r, int source, size_t bytes,
                     void **data) {
  *data = NULL;
  void *buf = NULL;
  if (bytes > 0 && (buf = wsp__malloc(bytes)) == NULL) goto nomem;
  if (buf && wsp__sparse_own(r, buf) != WSP_OK) {
    free(buf);
    goto nomem;
  }
  if (wsp__sparse_append(r, source, bytes, buf) != WSP_OK) goto nomem;
  *data = buf;
  return WSP_OK;
nomem:
  r->poisoned = 1;
  return wsp__fail(r->comm, WSP_ERR_NOMEM,
                   "sparse exchange: no memory for a %zu-byte message from "
                   "rank %d",
                   bytes, source);
}

/* ---- messages over the lanes ----
 * A message that the transport would carry over the pair's lanes
 * (wsp__xport_takes: lanes on, another node, at least cfg.p2p_min bytes)
 * cannot be found by a probe, which sees only MPI. So its size goes first
 * through MPI, on the round's announce tag, where the receivers probe (and
 * with MPI_Issend where the algorithm must know it was matched); its bytes
 * follow on the lanes tag, which the receiver, once it has the size, asks
 * for from that rank as the collectives do (src/core/p2p.c hands both ends
 * to the transport, which decides alike on both). A sender is done with a
 * message once its announcement was matched and its bytes sent, and the
 * receiver has posted the receive of the bytes by then, so nbx's rule (all
 * of a rank's sends done: all of them received) still holds. The
 * announcement costs one small MPI message per large one. */

static int wsp__announce_tag(const wsp__sparse_round_t *r) {
  return r->parity ? WSP__TAG_SPARSE_ANNOUNCE_ODD : WSP__TAG_SPARSE_ANNOUNCE_EVEN;
}

static int wsp__lanes_tag(const wsp__sparse_round_t *r) {
  return r->parity ? WSP__TAG_SPARSE_LANES_ODD : WSP__TAG_SPARSE_LANES_EVEN;
}

int wsp__sparse_post_sends(wsp__sparse_round_t *r, int tag, int synchronous,
                           MPI_Request *reqs, size_t *nreq) {
  wsp_comm_t *c = r->comm;
  uint64_t *announced = c->sparse->announced; /* one per peer: sent until the round ends */
  *nreq = 0;
  for (size_t i = 0; i < r->nsends; i++) {
    const wsp_send_t *s = &r->sends[i];
    if (s->peer == c->rank) continue;
    int rc;
    if (wsp__xport_takes(c, s->peer, s->bytes)) {
      announced[s->peer] = s->bytes;
      rc = wsp__isend_bytes(c, &announced[s->peer], sizeof *announced, s->peer,
                            wsp__announce_tag(r), synchronous, &reqs[*nreq]);
      if (rc != WSP_OK) return rc;
      (*nreq)++;
      rc = wsp__isend_bytes(c, s->data, s->bytes, s->peer, wsp__lanes_tag(r), 0, &reqs[*nreq]);
    } else {
      rc = wsp__isend_bytes(c, s->data, s->bytes, s->peer, tag, synchronous, &reqs[*nreq]);
    }
    if (rc != WSP_OK) return rc;
    (*nreq)++;
  }
  return WSP_OK;
}

int wsp__sparse_probe(wsp__sparse_round_t *r, int tag, int *flag, MPI_Status *st) {
  wsp_comm_t *c = r->comm;
  int rc = WSP_OK;
  WSP__MPI_GOTO(c, MPI_Iprobe(MPI_ANY_SOURCE, tag, c->mpi, flag, st), rc, out);
  if (!*flag && c->xport)
    WSP__MPI_GOTO(c, MPI_Iprobe(MPI_ANY_SOURCE, wsp__announce_tag(r), c->mpi, flag, st), rc, out);
out:
  return rc;
}

/* The announcement st describes: its size read, and the receive of the
 * bytes it announces posted. Without memory for them the round is
 * poisoned and the pair failed as a broken lane would be (the bytes cannot
 * be dropped as MPI drops a truncated message), so that the sender does
 * not wait for a receive that never comes. */
static int wsp__recv_announced(wsp__sparse_round_t *r, MPI_Status *st) {
  wsp_comm_t *c = r->comm;
  const int from = st->MPI_SOURCE;
  size_t n = 0;
  uint64_t bytes = 0;
  int rc = wsp__status_bytes(c, st, &n);
  if (rc != WSP_OK) return rc;
  if (n != sizeof bytes)
    return wsp__fail(c, WSP_ERR_INTERNAL,
                     "sparse exchange: rank %d's announcement has %zu bytes, not %zu", from, n,
                     sizeof bytes);
  WSP__MPI_GOTO(c, MPI_Recv(&bytes, 1, MPI_UINT64_T, from, st->MPI_TAG, c->mpi, MPI_STATUS_IGNORE),
                rc, out);
  if (bytes > WSP__MAX_MESSAGE || !wsp__xport_takes(c, from, (size_t)bytes)) {
    /* The ranks disagree on the transport: the sender must not wait. */
    wsp__xport_refuse(c, from, "a message announced for the lanes that its receiver refused");
    return wsp__fail(c, WSP_ERR_INTERNAL,
                     "sparse exchange: rank %d announced %llu bytes, which do not go over the "
                     "lanes",
                     from, (unsigned long long)bytes);
  }
  void *buf = NULL;
  if (wsp__grow((void **)&r->rreqs, &r->caprreqs, r->nrreqs + 1, sizeof *r->rreqs) ||
      wsp__sparse_take(r, from, (size_t)bytes, &buf) != WSP_OK) {
    r->poisoned = 1;
    wsp__fail(c, WSP_ERR_NOMEM, "sparse exchange: out of memory");
    wsp__xport_refuse(c, from, "a message over the lanes found no memory at its receiver");
    return WSP_OK;
  }
  rc = wsp__irecv_bytes(c, buf, (size_t)bytes, from, wsp__lanes_tag(r), &r->rreqs[r->nrreqs]);
  if (rc == WSP_OK) r->nrreqs++;
out:
  return rc;
}

int wsp__recv_probed(wsp__sparse_round_t *r, MPI_Status *st) {
  wsp_comm_t *c = r->comm;
  if (st->MPI_TAG == wsp__announce_tag(r)) return wsp__recv_announced(r, st);
  size_t bytes;
  int rc = wsp__status_bytes(c, st, &bytes);
  if (rc != WSP_OK) return rc;
  /* Room for the request first, then for the data; without either the
   * message is still consumed (a truncated receive) so that its sender
   * completes, and the round is poisoned. */
  void *buf = NULL;
  if (wsp__grow((void **)&r->rreqs, &r->caprreqs, r->nrreqs + 1, sizeof *r->rreqs) ||
      wsp__sparse_take(r, st->MPI_SOURCE, bytes, &buf) != WSP_OK) {
    r->poisoned = 1;
    wsp__fail(c, WSP_ERR_NOMEM, "sparse exchange: out of memory");
    MPI_Recv(NULL, 0, MPI_BYTE, st->MPI_SOURCE, st->MPI_TAG, c->mpi,
             MPI_STATUS_IGNORE); /* MPI_ERR_TRUNCATE expected */
    return WSP_OK;
  }
  rc = wsp__irecv_bytes(c, buf, bytes, st->MPI_SOURCE, st->MPI_TAG,
                        &r->rreqs[r->nrreqs]);
  if (rc == WSP_OK) r->nrreqs++;
  return rc;
}

int wsp__recv_wait(wsp__sparse_round_t *r) {
  if (r->nrreqs == 0) return WSP_OK;
  /* The messages were probed, so they are arriving: a short wait, but one
   * that a time limit must be able to end (a sender that died mid-way). */
  int rc = wsp__waitall(r->comm, (int)r->nrreqs, r->rreqs, 0);
  r->nrreqs = 0;
  return rc;
}

static void wsp__sparse_round_release(wsp__sparse_round_t *r) {
  for (size_t i = 0; i < r->nblocks; i++) free(r->blocks[i]);
  free(r->blocks);
  free(r->msgs);
  free(r->rreqs);
  r->rreqs = NULL;
  r->blocks = NULL;
  r->msgs = NULL;
  r->nblocks = r->count = 0;
}

typedef struct wsp__sparse_storage {
  void **blocks;
  size_t nblocks;
} wsp__sparse_storage_t;

int wsp_recvset_free(wsp_recvset_t *set) {
  if (set == NULL) return WSP_OK;
  wsp__sparse_storage_t *st = set->wsp__storage;
  if (st) {
    for (size_t i = 0; i < st->nblocks; i++) free(st->blocks[i]);
    free(st->blocks);
    free(st);
  }
  free(set->msgs);
  memset(set, 0, sizeof *set);
  return WSP_OK;
}

static int wsp__by_source(const void *a, const void *b) {
  int x = ((const wsp_recv_t *)a)->source, y = ((const wsp_recv_t *)b)->source;
  return (x > y) - (x < y);
}

/* ---- argument checks (local, before any communication) ---- */

static int wsp__sparse_check(wsp__sparse_round_t *r, const wsp_send_t *sends,
                             size_t nsends, const wsp_recvset_t *out,
                             const wsp_send_t **self) {
  wsp_comm_t *c = r->comm;
  const char *fn = "wsp_sparse_exchange";
  *self = NULL;
  if (out == NULL) return wsp__fail(c, WSP_ERR_ARG, "%s: out is NULL", fn);
  if (nsends > 0 && sends == NULL)
    return wsp__fail(c, WSP_ERR_ARG, "%s: sends is NULL but nsends = %zu", fn,
                     nsends);
  if (nsends > (size_t)c->size)
    return wsp__fail(c, WSP_ERR_ARG,
                     "%s: nsends = %zu exceeds the communicator size %d (at "
                     "most one message per destination)",
                     fn, nsends, c->size);
  unsigned char *seen = wsp__calloc((size_t)c->size / 8 + 1, 1);
  if (seen == NULL) return wsp__fail(c, WSP_ERR_NOMEM, "%s: out of memory", fn);
  int rc = WSP_OK;
  for (size_t i = 0; i < nsends; i++) {
    const wsp_send_t *s = &sends[i];
    if (s->peer < 0 || s->peer >= c->size) {
      rc = wsp__fail(c, WSP_ERR_ARG,
                     "%s: sends[%zu].peer = %d is out of range [0, %d)", fn, i,
                     s->peer, c->size);
      break;
    }
    if (s->bytes > WSP__MAX_MESSAGE) {
      rc = wsp__fail(c, WSP_ERR_ARG,
                     "%s: sends[%zu].bytes = %zu is absurd (negative size "
                     "cast to size_t?); the limit is %zu",
                     fn, i, s->bytes, WSP__MAX_MESSAGE);
      break;
    }
    if (s->data == NULL && s->bytes > 0) {
      rc = wsp__fail(c, WSP_ERR_ARG,
                     "%s: sends[%zu].data is NULL but bytes = %zu", fn, i,
                     s->bytes);
      break;
    }
    unsigned bit = 1u << (s->peer % 8);
    if (seen[s->peer / 8] & bit) {
      rc = wsp__fail(c, WSP_ERR_ARG,
                     "%s: sends[%zu].peer = %d appears twice (at most one "
                     "message per destination)",
                     fn, i, s->peer);
      break;
    }
    seen[s->peer / 8] |= (unsigned char)bit;
    if (s->peer == c->rank) {
      *self = s;
    } else {
      r->local.sends++;
      r->local.bytes += s->bytes;
    }
  }
  free(seen);
  return rc;
}

int wsp_sparse_exchange(wsp_comm_t *comm, const wsp_send_t *sends,
                        size_t nsends, wsp_recvset_t *out) {
  if (comm == NULL)
    return wsp__fail(NULL, WSP_ERR_ARG, "wsp_sparse_exchange: comm is NULL");
  return wsp_sparse_exchange_alg(comm, comm->cfg.sparse_alg, sends, nsends, out);
}

int wsp_sparse_exchange_alg(wsp_comm_t *comm, wsp_sparse_alg_t alg,
                            const wsp_send_t *sends, size_t nsends,
                            wsp_recvset_t *out) {
  /* These two cannot be reported to the other ranks (no communicator, or
   * no agreement on the protocol); every rank is expected to pass the same
   * comm and alg, so every rank fails here alike. */
  if (comm == NULL)
    return wsp__fail(NULL, WSP_ERR_ARG, "wsp_sparse_exchange: comm is NULL");
  if ((int)alg < WSP_SPARSE_AUTO || alg >= WSP_SPARSE_ALG_COUNT)
    return wsp__fail(comm, WSP_ERR_ARG,
                     "wsp_sparse_exchange: alg = %d is not a wsp_sparse_alg_t",
                     (int)alg);

  wsp__sparse_round_t r;
  memset(&r, 0, sizeof r);
  r.comm = comm;
  const wsp_send_t *self = NULL;
  int local_rc = wsp__usable(comm, "wsp_sparse_exchange");
  if (local_rc != WSP_OK) return local_rc;
  local_rc = wsp__sparse_check(&r, sends, nsends, out, &self);
  if (local_rc != WSP_OK) {
    r.poisoned = 1;
    r.sends = NULL;
    r.nsends = 0;
    memset(&r.local, 0, sizeof r.local);
  } else {
    r.sends = sends;
    r.nsends = nsends;
  }
  if (out) memset(out, 0, sizeof *out);

  /* auto's transport is decided before the round after one whose
   * messages averaged cfg.p2p_min bytes or more (the sums every rank has
   * alike after nbx's, alltoallv's and auto's rounds): the sizes of this
   * round are known only locally. Until then, and after a verdict for
   * MPI, every message goes through MPI. */
  if (comm->lanes && comm->xport == NULL && comm->sparse->lanes_due) {
    comm->sparse->lanes_due = 0;
    int drc = wsp__xport_decide(comm);
    if (drc != WSP_OK) return drc;
  }
  double t0 = MPI_Wtime();
  r.parity = (int)(comm->sparse_round & 1u);
  comm->sparse_round++;
  wsp__log(comm, WSP_LOG_TRACE, "sparse round %llu: %s, %zu sends",
           (unsigned long long)(comm->sparse_round - 1), wsp_sparse_alg_info(alg)->name, r.nsends);
  int rc = wsp__sparse_run(&r, alg);
  if (r.have_global && r.global.sends > 0 && comm->lanes &&
      r.global.bytes / r.global.sends >= wsp__p2p_min(&comm->lanes->cfg))
    comm->sparse->lanes_due = 1;
  /* A message of this rank's that failed on the lanes (its receiver has
   * failed, and every rank was told). */
  if (rc == WSP_OK) rc = wsp__lane_failure(comm, WSP_OK);
  if (rc != WSP_OK) goto fail; /* an MPI failure: already recorded */
  if (local_rc != WSP_OK) {
    rc = local_rc;
    goto fail;
  }
  if (r.poisoned) { /* failed while receiving (memory) */
    rc = WSP_ERR_NOMEM;
    goto fail;
  }
  if (r.remote_failed) {
    rc = wsp__fail(comm, WSP_ERR_REMOTE,
                   "wsp_sparse_exchange: another rank failed this round (see "
                   "its error message); nothing was delivered");
    goto fail;
  }
  if (self) {
    void *d = NULL;
    if ((rc = wsp__sparse_take(&r, comm->rank, self->bytes, &d)) != WSP_OK)
      goto fail; /* other ranks are done already: only this one fails */
    if (self->bytes) memcpy(d, self->data, self->bytes);
  }
  if (r.count > 1) qsort(r.msgs, r.count, sizeof *r.msgs, wsp__by_source);

  wsp__sparse_storage_t *st = wsp__malloc(sizeof *st);
  if (st == NULL) {
    rc = wsp__fail(comm, WSP_ERR_NOMEM, "wsp_sparse_exchange: out of memory");
    goto fail;
  }
  st->blocks = r.blocks;
  st->nblocks = r.nblocks;
  free(r.rreqs);
  out->count = r.count;
  out->msgs = r.msgs;
  out->alg = r.alg;
  out->wsp__storage = st;
  if (alg == WSP_SPARSE_AUTO) comm->sparse->chooser.last_ns = (uint64_t)((MPI_Wtime() - t0) * 1e9);
  /* The report (docs/report.md): the row that ran, this rank's bytes sent
   * to others (summed over the ranks at wsp_comm_free). */
  if (comm->report && (int)r.alg >= 0 && (int)r.alg < WSP__REPORT_ALGS)
    wsp__report_add(&comm->report->sparse[r.alg], (size_t)r.local.bytes, MPI_Wtime() - t0, -1);
  return WSP_OK;

fail:
  /* A failed round still took its time: auto reports it like any other. */
  if (alg == WSP_SPARSE_AUTO) comm->sparse->chooser.last_ns = (uint64_t)((MPI_Wtime() - t0) * 1e9);
  wsp__sparse_round_release(&r);
  return rc;
}
