/* SPDX-License-Identifier: BSD-3-Clause */
/* What the multi-site collectives share (sites.h). */
#include "sites.h"

#include "../core/tags.h"
#include "../patterns/ring.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

double wsp__wan_cost(const wsp_model_t *m, double bytes, int conns, int fan, int lanes) {
  if (bytes <= 0) return m->alpha_wan;
  double per = bytes / conns;
  double t = fmax((double)fan * per * m->beta, per * m->beta_wan / lanes);
  return (lanes > 1 ? 2 : 1) * m->alpha_wan + fmax(t, bytes * m->beta_wan_link);
}

/* A step in which at most c ranks of one site send `bytes` to another
 * site (sites.h, wsp__xstep_cost). */
static double wsp__step_cost(const wsp_model_t *m, const wsp__coll_shape_t *s, int c, double bytes,
                             int exchange) {
  const wsp_model_t *in = s->inside;
  if (in == NULL || s->sites == NULL) return m->alpha + bytes * (exchange ? m->beta_x : m->beta);
  double b = exchange ? in->beta_x : in->beta;
  if (c == 0) return in->alpha + bytes * b;
  return fmax(in->alpha, in->alpha_wan) +
         bytes * fmax(fmax(b, in->beta_wan), c * in->beta_wan_link);
}

double wsp__xstep_cost(const wsp_model_t *m, const wsp__coll_shape_t *s, int k, double bytes,
                       int exchange) {
  const wsp__sites_t *st = s->sites;
  int c = st == NULL ? 0 : k < 0 ? st->cross_fold : k < 31 ? st->cross[k] : 0;
  return wsp__step_cost(m, s, c, bytes, exchange);
}

double wsp__shift_step_cost(const wsp_model_t *m, const wsp__coll_shape_t *s, int k, double bytes) {
  const wsp__sites_t *st = s->sites;
  int c = st == NULL || k < 0 || k >= 31 ? 0 : st->shift[k];
  return wsp__step_cost(m, s, c, bytes, 1);
}

double wsp__agree_cost(const wsp_model_t *m, const wsp__coll_shape_t *s) {
  double t = 0;
  for (int i = 0, levels = wsp__ceil_log2(s->p); i < levels; i++)
    t += s->sites && (s->sites->tree_cross >> i & 1u) ? fmax(m->alpha, m->alpha_wan) : m->alpha;
  return 2 * t;
}

int wsp__wan_lanes(const wsp__coll_shape_t *s, double bytes) {
  return s->wan_lanes > 1 && s->dense && bytes >= (double)s->lane_min ? s->wan_lanes : 1;
}

double wsp__sites_best_conns(const wsp_model_t *m, const wsp__coll_shape_t *s, int n,
                             wsp__sites_cost_fn *cost, wsp__coll_tune_t *t) {
  wsp__coll_tune_t best_t = {.conns = n};
  double best = INFINITY;
  for (int c = s->wan_forced ? n : 1; c <= n; c++) {
    wsp__coll_tune_t x = {.conns = c};
    double y = cost(m, s, c, &x);
    if (y < best) best = y, best_t = x;
  }
  if (t) *t = best_t;
  return best;
}

int wsp__sites_run_conns(const wsp_comm_t *comm, const wsp__coll_args_t *a) {
  int n = wsp__sites_conns(comm);
  return a->tune.conns > 0 && a->tune.conns < n ? a->tune.conns : n;
}

wsp__coll_shape_t wsp__site_shape(const wsp__coll_shape_t *s) {
  wsp__coll_shape_t x = *s;
  x.p = s->sites ? s->sites->max_size : s->p;
  x.sites = NULL;
  x.inside = NULL;
  x.wan_n = 0;
  x.wan_forced = 0;
  x.wan_lanes = 0;
  x.nodes = x.p;
  x.max_node_ranks = 1;
  x.node_blocks = 1;
  x.aware = NULL;
  return x;
}

/* Element range [start, start + len) of buf as an address. */
static void *wsp__at(const wsp__site_view_t *w, void *buf, size_t start) {
  return (char *)buf + (ptrdiff_t)start * w->extent;
}

/* One ring step: sends piece sb of buf to the next rank (unless !send)
 * while receiving piece rb from the previous one (unless !recv) into
 * buf's piece, or into tmp when tmp is not NULL, and waits for both.
 * Empty pieces are not sent. */
static int wsp__site_ring_step(wsp_comm_t *comm, const wsp__site_view_t *w, void *buf, int sb,
                               int send, int rb, int recv, void *tmp) {
  int q = w->q, v = w->v, rc;
  int next = wsp__site_rank(w->st, w->site, wsp__ring_next(v, q), w->rot);
  int prev = wsp__site_rank(w->st, w->site, wsp__ring_prev(v, q), w->rot);
  MPI_Request req[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  size_t ss, sl, rs, rl;
  wsp__ss_piece(w->count, q, w->n, sb, &ss, &sl);
  wsp__ss_piece(w->count, q, w->n, rb, &rs, &rl);
  void *dst = tmp ? tmp : wsp__at(w, buf, rs);
  /* The send first (p2p.h, wsp__sendrecv_typed, says why). */
  if (sl && send &&
      (rc = wsp__isend_typed(comm, wsp__at(w, buf, ss), sl, w->type, next, w->tag, &req[0])))
    return rc;
  if (rl && recv && (rc = wsp__irecv_typed(comm, dst, rl, w->type, prev, w->tag, &req[1])))
    return wsp__abandon(comm, rc, 0, NULL, 1, &req[0]);
  /* The two go opposite ways at once: the step lasts the longer one, and
   * a wait that expected their sum slept up to twice as long between
   * polls, noticing each step of the rings late. */
  return wsp__waitall(comm, 2, req, (sl > rl ? sl : rl) * (size_t)w->extent);
}

int wsp__site_allgather(wsp_comm_t *comm, const wsp__site_view_t *w, void *buf, int skip) {
  int q = w->q, v = w->v, rc;
  for (int i = 0; i < q - 1; i++)
    if ((rc = wsp__site_ring_step(comm, w, buf, wsp__ring_send_block(v, q, i),
                                  wsp__ring_next(v, q) != skip, wsp__ring_recv_block(v, q, i),
                                  v != skip, NULL)))
      return rc;
  return WSP_OK;
}

int wsp__site_reduce_scatter(wsp_comm_t *comm, const wsp__site_view_t *w, void *buf, void *tmp,
                             MPI_Op op) {
  int q = w->q, v = w->v, rc;
  for (int i = 0; i < q - 1; i++) {
    int rb = wsp__ss_rs_recv(v, q, i);
    if ((rc = wsp__site_ring_step(comm, w, buf, wsp__ss_rs_send(v, q, i), 1, rb, 1, tmp)))
      return rc;
    /* The sum so far arrived in tmp; this rank's own values join it.
     * Commutative ops only (the algorithms' precondition). */
    size_t rs, rl;
    wsp__ss_piece(w->count, q, w->n, rb, &rs, &rl);
    if ((rc = wsp__reduce_local(comm, tmp, wsp__at(w, buf, rs), rl, w->type, op))) return rc;
  }
  return WSP_OK;
}

int wsp__site_group(wsp_comm_t *comm, const wsp__site_view_t *w, void *buf, int to_gateway) {
  int q = w->q, n = w->n, g = wsp__ss_group(q, n, w->v), rc = WSP_OK;
  int gw = wsp__ss_gateway(q, n, g), gs = wsp__ss_group_size(q, n, g);
  size_t s, l;
  if (w->v != gw) {
    wsp__ss_piece(w->count, q, n, w->v, &s, &l);
    if (l == 0) return WSP_OK;
    int peer = wsp__site_rank(w->st, w->site, gw, w->rot);
    return to_gateway ? wsp__send_typed(comm, wsp__at(w, buf, s), l, w->type, peer, w->tag)
                      : wsp__recv_typed(comm, wsp__at(w, buf, s), l, w->type, peer, w->tag);
  }
  if (gs < 2) return WSP_OK;
  MPI_Request *req = malloc((size_t)(gs - 1) * sizeof *req);
  if (req == NULL)
    return wsp__fail(comm, WSP_ERR_NOMEM, "sites: out of memory for %d requests", gs - 1);
  int posted = 0;
  size_t bytes = 0;
  for (int k = 1; k < gs && rc == WSP_OK; k++) {
    wsp__ss_piece(w->count, q, n, gw + k, &s, &l);
    req[posted] = MPI_REQUEST_NULL;
    if (l == 0) continue;
    int peer = wsp__site_rank(w->st, w->site, gw + k, w->rot);
    rc = to_gateway
             ? wsp__irecv_typed(comm, wsp__at(w, buf, s), l, w->type, peer, w->tag, &req[posted])
             : wsp__isend_typed(comm, wsp__at(w, buf, s), l, w->type, peer, w->tag, &req[posted]);
    if (rc == WSP_OK) posted++, bytes += l * (size_t)w->extent;
  }
  if (rc != WSP_OK)
    rc = to_gateway ? wsp__abandon(comm, rc, posted, req, 0, NULL)
                    : wsp__abandon(comm, rc, 0, NULL, posted, req);
  else
    rc = wsp__waitall(comm, posted, req, bytes);
  free(req);
  return rc;
}

int wsp__sites_combine(wsp_comm_t *comm, char *slots, size_t stride, int S, size_t count,
                       MPI_Datatype type, MPI_Op op) {
  /* acc = slot[S-1]; acc = slot[t] op acc for t = S-2 .. 0. */
  char *acc = slots + (size_t)(S - 1) * stride;
  for (int t = S - 2; t >= 0; t--) {
    int rc = wsp__reduce_local(comm, slots + (size_t)t * stride, acc, count, type, op);
    if (rc) return rc;
  }
  return WSP_OK;
}

/* ---- the crossings ---- */

int wsp__wan_alloc(wsp__wan_move_t *mv, int nx) {
  size_t n = nx > 0 ? (size_t)nx : 1;
  memset(mv, 0, sizeof *mv);
  mv->mem = calloc(1, n * (sizeof *mv->x + 2 * sizeof *mv->mreq + sizeof *mv->sreq +
                           2 * sizeof *mv->flag));
  if (mv->mem == NULL) return 1;
  mv->x = mv->mem;
  mv->mreq = (MPI_Request *)(mv->x + n);
  mv->sreq = (wsp_striped_request_t **)(mv->mreq + 2 * n);
  mv->flag = (int *)(mv->sreq + n);
  mv->lanes = mv->flag + n;
  return 0;
}

void wsp__wan_release(wsp__wan_move_t *mv) {
  free(mv->mem);
  memset(mv, 0, sizeof *mv);
}

/* Posts crossing i as an MPI message on comm. */
static int wsp__wan_post_mpi(wsp_comm_t *comm, wsp__wan_move_t *mv, int i) {
  const wsp__wan_xfer_t *x = &mv->x[i];
  MPI_Request *r = &mv->mreq[i];
  return x->send ? wsp__isend_typed(comm, x->buf, x->count, x->type, x->peer, mv->tag, r)
                 : wsp__irecv_typed(comm, x->buf, x->count, x->type, x->peer, mv->tag, r);
}

/* After an error: the MPI crossings among the first n abandoned
 * (wsp__abandon), the striped ones waited for. */
static int wsp__wan_drop(const wsp_comm_t *comm, wsp__wan_move_t *mv, int n, int rc) {
  for (int i = 0; i < n; i++)
    if (mv->x[i].send)
      (void)wsp__abandon(comm, rc, 0, NULL, 1, &mv->mreq[i]);
    else
      (void)wsp__abandon(comm, rc, 1, &mv->mreq[i], 0, NULL);
  (void)wsp_striped_waitall(n, mv->sreq);
  return rc;
}

/* Whether crossing i goes over lanes: the call has them and the pair has
 * not given them up (both ends of a pair decide alike, wsp__wan_finish). */
static int wsp__wan_on_lanes(wsp_comm_t *comm, const wsp__wan_move_t *mv, int i) {
  return mv->wan && !comm->sites.wan_off[mv->x[i].peer];
}

int wsp__wan_start(wsp_comm_t *comm, wsp__wan_move_t *mv) {
  int rc = WSP_OK;
  for (int i = 0; i < mv->nx; i++) {
    mv->mreq[i] = mv->mreq[mv->nx + i] = MPI_REQUEST_NULL;
    mv->sreq[i] = NULL;
  }
  for (int i = 0; i < mv->nx && rc == WSP_OK; i++) {
    wsp__wan_xfer_t *x = &mv->x[i];
    if (!(mv->lanes[i] = wsp__wan_on_lanes(comm, mv, i))) {
      rc = wsp__wan_post_mpi(comm, mv, i);
      continue;
    }
    int size = 0;
    MPI_Type_size(x->type, &size);
    size_t bytes = x->count * (size_t)size;
    /* A post that fails leaves sreq NULL, which the check after the wait
     * reports to the peer. */
    if (x->send)
      (void)wsp_striped_isend(mv->wan, x->buf, bytes, x->peer, mv->tag, &mv->sreq[i]);
    else
      (void)wsp_striped_irecv(mv->wan, x->buf, bytes, x->peer, mv->tag, &mv->sreq[i]);
  }
  return rc != WSP_OK ? wsp__wan_drop(comm, mv, mv->nx, rc) : WSP_OK;
}

int wsp__wan_finish(wsp_comm_t *comm, wsp__wan_move_t *mv, size_t bytes) {
  int nx = mv->nx, rc, failed = 0, nc = 0, again = 0;
  for (int i = 0; i < nx; i++) failed |= mv->lanes[i] && mv->sreq[i] == NULL;
  failed |= wsp_striped_waitall(nx, mv->sreq) != WSP_OK;
  if ((rc = wsp__waitall(comm, nx, mv->mreq, bytes))) return rc;
  /* Each pair on lanes tells the other what it saw: one check per peer. */
  for (int i = 0; i < nx; i++) {
    int first = mv->lanes[i];
    for (int j = 0; j < i && first; j++) first = mv->x[j].peer != mv->x[i].peer;
    mv->flag[i] = 0;
    if (!first) continue;
    if ((rc = wsp__isend_typed(comm, &failed, 1, MPI_INT, mv->x[i].peer, WSP__TAG_SITES_LANES,
                               &mv->mreq[nc++])) ||
        (rc = wsp__irecv_typed(comm, &mv->flag[i], 1, MPI_INT, mv->x[i].peer,
                               WSP__TAG_SITES_LANES, &mv->mreq[nc++])))
      return wsp__abandon(comm, rc, 0, NULL, nc, mv->mreq);
  }
  if ((rc = wsp__waitall(comm, nc, mv->mreq, 0))) return rc;
  /* Where either end of a pair saw a failure, both move the pair's
   * crossings again through MPI, and give its lanes up for good. */
  for (int i = 0; i < nx; i++) {
    int bad = mv->lanes[i] && failed;
    for (int j = 0; j <= i && mv->lanes[i] && !bad; j++)
      bad = mv->x[j].peer == mv->x[i].peer && mv->flag[j];
    mv->mreq[i] = MPI_REQUEST_NULL;
    if (!bad) continue;
    if (!comm->sites.wan_off[mv->x[i].peer])
      wsp__log(comm, WSP_LOG_WARN,
               "sites: a crossing over lanes with rank %d failed; the pair moves it again, "
               "and its later crossings, through MPI",
               mv->x[i].peer);
    comm->sites.wan_off[mv->x[i].peer] = 1;
    again++;
    if ((rc = wsp__wan_post_mpi(comm, mv, i))) return wsp__wan_drop(comm, mv, i, rc);
  }
  if (nc)
    wsp__log(comm, WSP_LOG_TRACE, "sites: %d crossings over lanes, %d again through MPI", nx,
             again);
  return again ? wsp__waitall(comm, nx, mv->mreq, bytes) : WSP_OK;
}
