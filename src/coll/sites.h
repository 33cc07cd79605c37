/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the multi-site collectives share (bcast and allreduce "sites",
 * bcast "far_first", allreduce "two_tier"; docs/sites.md). The sites
 * themselves are src/core/sites.c's, the lanes between them
 * src/p2p/wan.c's; the layout of blocks, groups and pieces is
 * src/patterns/sites_sched.h's.
 *
 * The view a call takes: for each site its q ranks in rank order
 * (comm->sites), n connections between every two sites (wsp__sites_conns,
 * the same on every rank), and at the root's site of a bcast local indices
 * rotated so that the root is index 0. Messages are typed: `type` with
 * `extent` per element (MPI_BYTE and 1 for bcast, whose buffer is bytes).
 */
#ifndef WSP_COLL_SITES_H
#define WSP_COLL_SITES_H

#include "coll_internal.h"
#include "../patterns/sites_sched.h"

/* The rank of local (virtual) index v on site s, with local indices
 * rotated by `rot` (the root's index at the root's site, else 0). */
static inline int wsp__site_rank(const wsp__sites_t *st, int s, int v, int rot) {
  int q = st->start[s + 1] - st->start[s];
  return st->rank[st->start[s] + (v + rot) % q];
}
static inline int wsp__site_size(const wsp__sites_t *st, int s) {
  return st->start[s + 1] - st->start[s];
}

/* One site's part of a call: this rank's site, its size, the rotation and
 * this rank's virtual index there, and the layout's n. */
typedef struct wsp__site_view {
  const wsp__sites_t *st;
  int site, q, rot, v, n;
  MPI_Datatype type;
  MPI_Aint extent;
  size_t count;
  int tag;
} wsp__site_view_t;

/* Ring allgather of the site's pieces of buf (every rank holds its own
 * piece): q - 1 steps; transfers to virtual index `skip` (>= 0: a rank
 * that holds everything already, the root of a bcast) are left out. */
int wsp__site_allgather(wsp_comm_t *comm, const wsp__site_view_t *w, void *buf, int skip);
/* Ring reduce-scatter of buf over the site: afterwards this rank's piece
 * of buf holds the site's sum of it. tmp holds the largest piece. */
int wsp__site_reduce_scatter(wsp_comm_t *comm, const wsp__site_view_t *w, void *buf, void *tmp,
                             MPI_Op op);
/* Between the gateway of this rank's group and its other members: with
 * `to_gateway` each member sends its piece of buf to the gateway (a
 * gather), else the gateway sends each member its piece (a scatter). */
int wsp__site_group(wsp_comm_t *comm, const wsp__site_view_t *w, void *buf, int to_gateway);

/* Combines S blocks of `count` elements, slot[t] from site t (slot t at
 * slots + t.stride), in site order, slot[0] op (slot[1] op (... slot[S-1])),
 * into slot[S-1]: the same operations on every site, so every site gets
 * the same bits. */
int wsp__sites_combine(wsp_comm_t *comm, char *slots, size_t stride, int S, size_t count,
                       MPI_Datatype type, MPI_Op op);

/* The time of moving `bytes` between two sites over `conns` connections
 * of `lanes` lanes each at once, where each sending rank sends to `fan`
 * sites: latency, then the slowest of the senders' NICs, one connection
 * (lanes times faster), and the link; with lanes, one more latency for the
 * pair's check that everything arrived (wsp__wan_finish). */
double wsp__wan_cost(const wsp_model_t *m, double bytes, int conns, int fan, int lanes);
/* One step of a flat exchange schedule folded to a power of two (rabenseifner,
 * recursive doubling, halving): with k >= 0 the step where folded ranks nr
 * and nr ^ 2^k swap `bytes` (exchange: at beta_x, else beta), with k < 0
 * one way of the fold. Without s->inside, m's latency and bytes. With it,
 * a step that stays inside every site costs what it costs there; one
 * where some pair crosses waits for the crossing: the latency between
 * sites, then the slowest of a NIC, one connection, and the link shared
 * by the most ranks that leave one site in that step
 * (wsp__sites_t.cross). */
double wsp__xstep_cost(const wsp_model_t *m, const wsp__coll_shape_t *s, int k, double bytes,
                       int exchange);
/* The same for a step of Bruck's schedules, where every rank sends `bytes`
 * to rank r - 2^k mod p and receives from r + 2^k at once
 * (wsp__sites_t.shift). */
double wsp__shift_step_cost(const wsp_model_t *m, const wsp__coll_shape_t *s, int k, double bytes);
/* An agreement over the communicator (wsp__agree_alloc, which the
 * multi-site algorithms make before any traffic): a reduction and a
 * broadcast along a binomial tree, one latency per level each way, the
 * latency between sites where a level crosses (wsp__sites_t.tree_cross). */
double wsp__agree_cost(const wsp_model_t *m, const wsp__coll_shape_t *s);
/* The cost of a multi-site algorithm run over c connections (or chains)
 * between two sites, with the tuning that goes with c (its lanes, its
 * segment) into tune. */
typedef double wsp__sites_cost_fn(const wsp_model_t *m, const wsp__coll_shape_t *s, int c,
                                  wsp__coll_tune_t *tune);
/* The least cost over c = 1..n (only n when the user set the connections,
 * s->wan_forced), ties going to the fewer; its tuning, with conns = c,
 * into t (when not NULL). A count that does not divide a site leaves
 * groups of unequal size, whose largest piece every ring step waits for:
 * fewer connections can then be faster (docs/sites.md, "How many
 * connections"). */
double wsp__sites_best_conns(const wsp_model_t *m, const wsp__coll_shape_t *s, int n,
                             wsp__sites_cost_fn *cost, wsp__coll_tune_t *t);
/* The connections a run of the call uses: the cost's choice, else n. */
int wsp__sites_run_conns(const wsp_comm_t *comm, const wsp__coll_args_t *a);
/* Lanes per connection a crossing of `bytes` per connection uses in call
 * shape s: s->wan_lanes, or 1 when the messages are too short for lanes
 * (cfg.p2p_min) or the datatype has holes (lanes carry bytes). */
int wsp__wan_lanes(const wsp__coll_shape_t *s, double bytes);

/* One gateway's crossings in a multi-site call: each a send to, or a
 * receive from, a gateway of another site, of `count` elements of `type`. */
typedef struct wsp__wan_xfer {
  void *buf;
  size_t count;
  MPI_Datatype type;
  int peer, send;
} wsp__wan_xfer_t;

/* The crossings in flight. Over the lanes of `wan` (wsp__sites_wan) when
 * it is not NULL and the type is dense, else as MPI messages on comm. */
typedef struct wsp__wan_move {
  wsp_comm_t *wan;
  int nx, tag;
  wsp__wan_xfer_t *x;
  MPI_Request *mreq;            /* 2.nx: the messages, or the checks */
  wsp_striped_request_t **sreq; /* nx: over lanes */
  int *flag;                    /* nx: what each peer saw */
  int *lanes;                   /* nx: whether crossing i went over lanes */
  void *mem;
} wsp__wan_move_t;

/* Allocates room for nx crossings; nonzero on failure (to agree on with
 * wsp__agree_alloc before any traffic). wsp__wan_release frees it. */
int wsp__wan_alloc(wsp__wan_move_t *mv, int nx);
void wsp__wan_release(wsp__wan_move_t *mv);
/* Posts mv->nx crossings mv->x. */
int wsp__wan_start(wsp_comm_t *comm, wsp__wan_move_t *mv);
/* Waits for them. Over lanes, the two ends of each pair then tell each
 * other whether all their crossings arrived, and where either end saw a
 * failure (a lane that broke, docs/p2p.md "Failures"), both move the
 * pair's crossings again as MPI messages: both ends take the same path,
 * and a lane that breaks costs time, not data. `bytes`: what the
 * crossings carry, for the wait's back-off. */
int wsp__wan_finish(wsp_comm_t *comm, wsp__wan_move_t *mv, size_t bytes);
/* The largest piece of M bytes on a site of q ranks in n groups (the
 * smallest group's share of its block): a ring's step lasts as long as
 * its largest piece. */
static inline double wsp__site_piece_max(double M, int q, int n) {
  int small = n > 0 ? q / n : 0;
  return small > 0 ? M / n / small : M;
}

/* The shape of one site's sub-collective (p = the largest site, no sites,
 * nodes of one rank each). */
wsp__coll_shape_t wsp__site_shape(const wsp__coll_shape_t *s);

#endif
