/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Multi-site pipelined broadcast: up to n chains at once, one per
 * connection between two sites (docs/sites.md). Not in the source: its
 * modified van de Geijn ("sites") keeps a rank of the root's site sending
 * about twice the message (its blocks, then the ring), and runs its stages
 * one after the other; chains overlap everything, and every rank's link
 * carries the message about once each way.
 *
 * How it works. The message is cut into c blocks; block k travels along
 * chain k in segments, each rank forwarding segment i of a chain while the
 * next ones arrive (as the flat chain does). Chain k starts at the root,
 * visits the other ranks of the root's site, then every other site in
 * turn, each site's ranks in an order rotated by k
 * (src/patterns/sites_sched.h, wsp__ss_chain_index): the c chains cross
 * from one site to the next between c different pairs of ranks (c is kept
 * below the smallest site for that), so c connections share the link at
 * once, and a link whose single connections are capped (long round trips,
 * per-flow shaping) is still filled. Each rank receives every block once
 * and forwards it once, except at the end of a chain.
 *
 * Every rank forwards whichever chain's next segment has arrived, and
 * when none has, waits for the first of them to arrive: receives are
 * posted ahead in a window per chain and sends are non-blocking, so a
 * rank never stops forwarding one chain while it waits for another. Each
 * chain has its own tag (WSP__TAG_SITES_CHAIN + k), since two chains may
 * join the same pair.
 *
 * Cost of c chains: (S-1).alpha_wan + (p - 2 + s).(alpha + (M/(c.s)).c.b),
 * s segments per chain, b = max(beta_x, beta_wan/c, beta_wan_link): the
 * slowest of a rank's link (c chains share it), one connection across
 * (M/c each), and the link between two sites (all M). The chains run are
 * the c up to n (and below the smallest site) that costs least, or n
 * itself when the user set it (WSP_WAN_CONNECTIONS).
 *
 * Preconditions: two sites or more. Any root, any site sizes. Fallback:
 * chain.
 */
#include "bcast.h"

#include "../sites.h"

#include <math.h>
#include <stdlib.h>

#define WSP__SITES_CHAIN_SEG_MIN ((size_t)16 << 10)
#define WSP__SITES_CHAIN_SEG_MAX ((size_t)32 << 10)

/* Chains: the connections, but below the smallest site, so that the root's
 * site sends each chain across from a rank of its own (wsp__ss_chain_index;
 * a site of one or two ranks gets one chain). */
static int wsp__sites_chain_count(int n, int min_site) {
  int c = n < min_site - 1 ? n : min_site - 1;
  return c < 1 ? 1 : c > WSP__SITES_CHAIN_MAX ? WSP__SITES_CHAIN_MAX : c;
}

/* The per-byte cost of the chains' steady state (above). */
static double wsp__sites_chain_b(const wsp_model_t *m, int n) {
  double b = fmax(m->beta_x, m->beta_wan / n);
  return fmax(b, m->beta_wan_link);
}

/* The cost of c chains, and their segment size into tune->seg. */
static double wsp__sites_chain_cost_c(const wsp_model_t *m, const wsp__coll_shape_t *s, int c,
                                      wsp__coll_tune_t *tune) {
  int S = s->sites->count;
  double b = wsp__sites_chain_b(m, c);
  size_t blk = s->bytes / (size_t)c + 1;
  size_t seg = wsp__pipeline_seg(m, blk, s->p - 1, b * c, 1);
  /* Segments stay eager (the eager limit when a map gave it, else
   * WSP__SITES_CHAIN_SEG_MAX) but not tiny: c chains share every rank's
   * polling, and each segment costs it a round of it. Both ends measured
   * on netlab (docs/results/sites.md, "Segments of the chains"). */
  size_t hi = m->eager ? m->eager : WSP__SITES_CHAIN_SEG_MAX;
  if (seg < WSP__SITES_CHAIN_SEG_MIN) seg = WSP__SITES_CHAIN_SEG_MIN;
  if (seg > hi) seg = hi;
  tune->seg = seg;
  double segs = (double)(blk ? wsp__bcast_nseg(blk, seg) : 1);
  return (S - 1) * m->alpha_wan + (s->p - 2 + segs) * (m->alpha + (double)s->bytes / segs * b);
}

/* The chains run are the count up to n (and below the smallest site)
 * whose cost is least, or n when the user set it: each chain more
 * shortens the crossings where one connection is slow, and lengthens
 * every segment's time, which a long chain pays p - 2 times while its
 * pipeline fills (docs/results/sites.md, "SimGrid: two sites of 64"). */
WSP__COST(bcast, sites_chain,
          "min over c = 1..n of (S-1).alpha_wan + (p - 2 + s).(alpha + (M/(c.s)).c.b), "
          "s = ceil(M/(c.seg)), b = max(beta_x, beta_wan/c, beta_wan_link), c chains (c = n "
          "when WSP_WAN_CONNECTIONS sets n), n connections, S sites; + A (allreduce sites)") {
  if (s->sites == NULL) return INFINITY;
  return wsp__agree_cost(m, s) +
         wsp__sites_best_conns(m, s, wsp__sites_chain_count(s->wan_n, s->sites->min_size),
                               wsp__sites_chain_cost_c, t);
}

/* This rank's neighbours in every chain: prev[c] and next[c] (-1: none). */
static void wsp__sites_chain_links(const wsp__sites_t *st, int root, int n, int me, int *prev,
                                   int *next) {
  int S = st->count, rs = st->site_of[root];
  for (int c = 0; c < n; c++) {
    prev[c] = next[c] = -1;
    int last = -1; /* the rank before the current one along chain c */
    for (int k = 0; k < S; k++) {
      int t = (rs + k) % S, q = wsp__site_size(st, t);
      int rot = t == rs ? st->index[root] : 0;
      for (int j = 0; j < q; j++) {
        int v = wsp__ss_chain_index(q, c, j, t == rs);
        int r = wsp__site_rank(st, t, v, rot);
        if (r == me) prev[c] = last;
        if (last == me) next[c] = r;
        last = r;
      }
    }
  }
}

/* Segment i of chain c has arrived (or this rank is the root): posts the
 * receive of segment i + ahead into its slot and forwards segment i once
 * the slot's previous send is done. */
static int wsp__sites_chain_step(wsp_comm_t *comm, const wsp__coll_args_t *a, int c, size_t i,
                                 size_t bs, size_t bl, size_t seg, size_t ahead, int prev,
                                 int next, MPI_Request *rreq, MPI_Request *sreq) {
  char *buf = a->recvbuf;
  size_t ns = wsp__bcast_nseg(bl, seg), j = i + ahead;
  int tag = WSP__TAG_SITES_CHAIN + c, rc;
  if (prev >= 0 && j < ns &&
      (rc = wsp__irecv_typed(comm, buf + bs + j * seg, wsp__bcast_seg_len(bl, seg, j), MPI_BYTE,
                             prev, tag, rreq)))
    return rc;
  if (next < 0) return WSP_OK;
  if ((rc = wsp__waitall(comm, 1, sreq, seg))) return rc;
  return wsp__isend_typed(comm, buf + bs + i * seg, wsp__bcast_seg_len(bl, seg, i), MPI_BYTE,
                          next, tag, sreq);
}

int wsp__bcast_sites_chain(wsp_comm_t *comm, const wsp__coll_args_t *a) {
  const wsp__sites_t *st = &comm->sites;
  const wsp_model_t *m = &comm->model;
  int n = wsp__sites_chain_count(wsp__sites_conns(comm), st->min_size), rc = WSP_OK;
  if (a->tune.conns > 0 && a->tune.conns < n) n = a->tune.conns;
  size_t seg = a->tune.seg ? a->tune.seg : WSP__BCAST_DEFAULT_SEG;
  size_t amax = 1;
  int *link = malloc(2 * (size_t)n * sizeof *link);
  size_t *ahead = malloc((size_t)n * sizeof *ahead);
  if (link != NULL && ahead != NULL) {
    wsp__sites_chain_links(st, a->root, n, comm->rank, link, link + n);
    /* A segment takes n.b on a link, the chains sharing it (the cost
     * above); a hop from another site has the long latency to cover, with
     * the segments as fast as the link alone carries them, for a chain may
     * have it to itself for a while. Chain c's slots are
     * c.amax + i % ahead[c]. */
    double b = wsp__sites_chain_b(m, n), seg_time = (double)seg * n * b;
    for (int c = 0; c < n; c++) {
      int far = link[c] >= 0 && st->site_of[link[c]] != st->site_of[comm->rank];
      ahead[c] = far ? wsp__bcast_ahead_far(seg, m->alpha_wan, (double)seg * b)
                     : wsp__bcast_ahead(seg, m->alpha, seg_time);
      if (ahead[c] > amax) amax = ahead[c];
    }
  }
  size_t nreq = (size_t)n * amax;
  MPI_Request *req = malloc(2 * nreq * sizeof *req);
  if ((rc = wsp__agree_alloc(comm, link == NULL || ahead == NULL || req == NULL,
                             "bcast/sites_chain"))) {
    free(link);
    free(ahead);
    free(req);
    return rc;
  }
  int *prev = link, *next = link + n;
  MPI_Request *rreq = req, *sreq = req + nreq;
  for (size_t k = 0; k < 2 * nreq; k++) req[k] = MPI_REQUEST_NULL;
  char *buf = a->recvbuf;
  for (int c = 0; c < n; c++) {
    size_t bs, bl;
    wsp__ss_block(a->block, n, c, &bs, &bl);
    size_t ns = wsp__bcast_nseg(bl, seg);
    for (size_t i = 0; i < ns && i < ahead[c] && prev[c] >= 0; i++)
      if ((rc = wsp__irecv_typed(comm, buf + bs + i * seg, wsp__bcast_seg_len(bl, seg, i),
                                 MPI_BYTE, prev[c], WSP__TAG_SITES_CHAIN + c,
                                 &rreq[(size_t)c * amax + i])))
        goto fail;
  }
  /* Forward whichever chain's next segment has arrived; when none has,
   * wait for the first of them to arrive. */
  size_t *at = calloc((size_t)n, sizeof *at);
  if (at == NULL) {
    rc = wsp__fail(comm, WSP_ERR_NOMEM, "bcast/sites_chain: out of memory");
    goto fail;
  }
  for (size_t left = 0;; left = 0) {
    /* The slots of the chains whose next segment has not arrived. */
    MPI_Request w[WSP__SITES_CHAIN_MAX];
    size_t ws[WSP__SITES_CHAIN_MAX];
    int progressed = 0, k = 0;
    for (int c = 0; c < n && rc == WSP_OK; c++) {
      size_t bs, bl;
      wsp__ss_block(a->block, n, c, &bs, &bl);
      size_t ns = wsp__bcast_nseg(bl, seg), i = at[c];
      if (i >= ns) continue;
      left++;
      size_t slot = (size_t)c * amax + i % ahead[c];
      if (prev[c] >= 0) {
        /* A receive completed by the wait below is null already (SMPI's
         * MPI_Test does not report a null request as complete). */
        int flag = rreq[slot] == MPI_REQUEST_NULL;
        if (!flag) MPI_Test(&rreq[slot], &flag, MPI_STATUS_IGNORE);
        if (!flag) {
          ws[k++] = slot;
          continue;
        }
      }
      rc = wsp__sites_chain_step(comm, a, c, i, bs, bl, seg, ahead[c], prev[c], next[c],
                                 &rreq[slot], &sreq[slot]);
      at[c]++;
      progressed = 1;
    }
    if (rc || left == 0) break;
    if (!progressed && k > 0) {
      /* None has arrived: wait for whichever arrives first. Waiting for
       * one chain (the earliest segment) left the others' segments
       * unforwarded meanwhile, and more chains made the broadcast slower
       * (docs/results/sites.md, "Forwarding whichever chain moves"). */
      int idx;
      for (int j = 0; j < k; j++) w[j] = rreq[ws[j]];
      rc = wsp__waitany(comm, k, w, seg, &idx);
      for (int j = 0; j < k; j++) rreq[ws[j]] = w[j];
      if (rc) break;
    }
  }
  free(at);
  if (rc) goto fail;
  rc = wsp__waitall(comm, (int)nreq, sreq, 0);
  free(link);
  free(ahead);
  free(req);
  return rc;
fail:
  rc = wsp__abandon(comm, rc, (int)nreq, rreq, (int)nreq, sreq);
  free(link);
  free(ahead);
  free(req);
  return rc;
}
