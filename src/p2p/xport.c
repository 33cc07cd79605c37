/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The transport under the collectives: every transfer of a collective
 * algorithm is posted through core's point-to-point (src/core/p2p.c), which
 * asks this file whether it takes the pair's lanes; the algorithms and
 * their schedules do not change.
 *
 * Which transfers. Only those whose receives name the source and give the
 * sent size, which the lanes need (their tags, wsp__tag_exact): the
 * collectives', and the sparse exchange's large messages, whose size it
 * first announces through MPI, where its receivers probe
 * (src/exchange/sparse.c). Of those, a transfer to another node of at least
 * cfg.p2p_min bytes goes to the striped engine of a duplicate
 * communicator of its own (comm->lanes; the user's striped messages keep
 * theirs, and no tag can collide); everything smaller, to oneself or to a
 * rank on the same node goes through MPI as before. The engine then
 * chooses per pair, the same on both ends, between the lanes and MPI (its
 * probe, or the lanes forced by WSP_P2P_LANES: docs/p2p.md). Both ends of
 * a transfer decide from what both know, the size, the pair and the
 * setting all ranks agreed on, so no message is spent on deciding.
 *
 * How a transfer on the lanes looks to the algorithm: an MPI generalized
 * request (MPI_Grequest_start), which the algorithm tests and waits for
 * with the rest of its step. MPI does not progress such a request; every
 * polling loop of the library does, through its back-off (src/core/
 * backoff.c): an idle pass is a pass of the engine, and its sleep is spent
 * in poll(2) on the lanes. When the engine finishes the transfer it
 * completes the request. A transfer the engine sends through MPI (the pair
 * found no gain) hands its MPI request to the caller at once when the pair
 * is decided, else once the pair's set-up decides it (tested here).
 *
 * Types. The lanes carry bytes. A contiguous type is sent as it lies; any
 * other is packed into a buffer of the transfer's (MPI_Pack) and unpacked
 * at the receiver, which relies on MPI's packed form of a homogeneous
 * machine being the elements' bytes in order, as in Open MPI and MPICH.
 *
 * No MPI call is made inside MPI's callbacks: a cancelled transfer (a
 * failed step's clean-up, wsp__abandon) is failed by the next pass of the
 * engine, which then completes its request.
 *
 * Failures. A lane that breaks under a transfer fails the pair on both of
 * its ends, but the other ranks would go on waiting for what the pair's
 * ranks will no longer send them, until their time limit or forever. So a
 * rank whose transfer fails on the lanes records it on the communicator
 * (wsp_comm_t.lane_fault) and tells every other rank, once, with a small
 * MPI message on the lanes' communicator; every rank keeps one receive of
 * such a notice posted and tests it in each pass of its waits. A notice,
 * or a failure of one's own, ends every wait of the communicator at its
 * next idle pass (src/core/backoff.c), and the call returns WSP_ERR_CONN
 * naming the pair on every rank that was still in it; later calls fail at
 * once the same way (src/core/timeout.c). A rank that had finished the
 * call keeps its result, which is complete. The notice is the pair (two
 * ints), sent eagerly and let go (MPI_Request_free).
 */
#include "xport.h"

#include "striped_internal.h"
#include "../core/measure.h"

#include "tags.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct wsp__xfer {
  wsp__sreq_t *r;
  MPI_Request greq;
  int is_recv, peer, tag;
  size_t bytes;
  /* A type that is not contiguous: the packed bytes, and the caller's
   * elements they are packed from or unpacked into. */
  void *pack, *ubuf;
  size_t count;
  MPI_Datatype type;
  int status;
  int cancel; /* MPI asked to cancel: the next pass fails it */
} wsp__xfer_t;

/* Whether count elements of type lie as count * size contiguous bytes. */
static int wsp__contiguous(MPI_Datatype type) {
  MPI_Aint lb = 0, ext = 0, tlb = 0, text = 0;
  int size = 0;
  if (MPI_Type_size(type, &size) != MPI_SUCCESS ||
      MPI_Type_get_extent(type, &lb, &ext) != MPI_SUCCESS ||
      MPI_Type_get_true_extent(type, &tlb, &text) != MPI_SUCCESS)
    return 0;
  return lb == 0 && tlb == 0 && ext == size && text == size;
}

/* ---- MPI's callbacks: no MPI calls ---- */

static int wsp__xfer_query(void *extra, MPI_Status *status) {
  wsp__xfer_t *x = extra;
  MPI_Status_set_elements_x(status, MPI_BYTE, (MPI_Count)x->bytes);
  MPI_Status_set_cancelled(status, 0);
  status->MPI_SOURCE = x->peer;
  status->MPI_TAG = x->tag;
  /* A failure is not MPI's to report: it would raise the error handler of
   * MPI_COMM_WORLD, the program's (fatal by default), as generalized
   * requests belong to no communicator. The transfer's failure is recorded
   * on the communicator before the request completes (wsp__lane_fault),
   * and core's waits look there when their requests are done. */
  status->MPI_ERROR = MPI_SUCCESS;
  return MPI_SUCCESS;
}

static int wsp__xfer_free(void *extra) {
  wsp__xfer_t *x = extra;
  if (x->r) {
    /* Quietly: a failed call's clean-up frees its requests, and the error
     * the call reports is the one it recorded first. The engine may still
     * hold a request that is not done (MPI may free before completion). */
    x->r->on_done = NULL;
    x->r->xfer = NULL;
    if (x->r->done)
      (void)wsp__striped_reap(&x->r, NULL);
    else
      x->r->orphan = 1;
  }
  free(x->pack);
  free(x);
  return MPI_SUCCESS;
}

static int wsp__xfer_cancel(void *extra, int complete) {
  wsp__xfer_t *x = extra;
  if (!complete) x->cancel = 1;
  return MPI_SUCCESS;
}

/* Packs x's elements into x->pack, or unpacks them from it. */
static int wsp__xfer_pack(const wsp_comm_t *c, wsp__xfer_t *x, int unpack) {
  int n = 0, owned = 0, pos = 0, rc;
  MPI_Datatype t;
  if ((rc = wsp__count_type(c, x->count, x->type, &n, &t, &owned)) != WSP_OK) return rc;
  int mrc = unpack ? MPI_Unpack(x->pack, (int)x->bytes, &pos, x->ubuf, n, t, c->mpi)
                   : MPI_Pack(x->ubuf, n, t, x->pack, (int)x->bytes, &pos, c->mpi);
  if (owned) MPI_Type_free(&t);
  return mrc == MPI_SUCCESS ? WSP_OK
                            : wsp__mpi_fail(c, mrc, unpack ? "MPI_Unpack" : "MPI_Pack", WSP__WHERE);
}

/* ---- failures: one rank's lane, every rank's error ---- */

static void wsp__lane_noticed(wsp__stripe_t *st, int from);

/* How long a rank whose own transfer failed waits for another rank's
 * notice before it reports its own (wsp__lane_fault), in seconds. */
#define WSP__NOTICE_GRACE 0.25

/* Whether another rank's notice has arrived (then recorded). */
static int wsp__lane_notice_test(wsp__stripe_t *st) {
  int got = 0;
  MPI_Status s;
  if (st->notice == MPI_REQUEST_NULL || MPI_Test(&st->notice, &got, &s) != MPI_SUCCESS || !got)
    return 0;
  wsp__lane_noticed(st, s.MPI_SOURCE);
  return 1;
}

/* A transfer of this rank to or from peer failed on the lanes: recorded on
 * the owner, and every other rank told, once (not while the communicator
 * is being freed, which fails what is still in flight itself). */
static void wsp__lane_fault(wsp__stripe_t *st, int peer, const char *why) {
  wsp_comm_t *w = st->comm, *o = w->owner ? w->owner : w;
  if (st->closing || o->lane_fault.failed) return;
  /* A pair often fails here because its peer broke it on a notice that
   * may still be on its way to this rank (seen under MPICH on loopback):
   * the notice is waited for a little, so that every rank names the lane
   * that failed first. A lane that failed first here is reported that
   * much later; a failure path can afford it. */
  for (const double t0 = wsp__now();; wsp__sleep_seconds(1e-3)) {
    if (wsp__lane_notice_test(st)) return;
    if (wsp__now() - t0 > WSP__NOTICE_GRACE) break;
  }
  o->lane_fault.failed = 1;
  o->lane_fault.a = w->rank < peer ? w->rank : peer;
  o->lane_fault.b = w->rank < peer ? peer : w->rank;
  snprintf(o->lane_fault.why, sizeof o->lane_fault.why, "%s",
           why && *why ? why : "no reason given");
  wsp__log(w, WSP_LOG_WARN, "transport: %s; telling every rank", o->lane_fault.why);
  st->notice_out[0] = o->lane_fault.a;
  st->notice_out[1] = o->lane_fault.b;
  for (int q = 0; q < w->size; q++) {
    MPI_Request req = MPI_REQUEST_NULL;
    if (q != w->rank &&
        MPI_Isend(st->notice_out, 2, MPI_INT, q, WSP__TAG_LANE_FAULT, w->mpi, &req) == MPI_SUCCESS)
      MPI_Request_free(&req);
  }
}

void wsp__xport_refuse(wsp_comm_t *comm, int peer, const char *why) {
  if (comm->lanes && comm->lanes->stripe) wsp__lane_fault(comm->lanes->stripe, peer, why);
}

/* Another rank's notice arrived: recorded, and every transfer of this
 * rank on the lanes fails with it. */
static void wsp__lane_noticed(wsp__stripe_t *st, int from) {
  wsp_comm_t *w = st->comm, *o = w->owner ? w->owner : w;
  if (o->lane_fault.failed) return; /* the notice went to every rank: nothing to pass on */
  int a = st->notice_in[0], b = st->notice_in[1];
  if (a < 0 || b < 0 || a >= w->size || b >= w->size) a = b = from;
  o->lane_fault.failed = 1;
  o->lane_fault.a = a;
  o->lane_fault.b = b;
  snprintf(o->lane_fault.why, sizeof o->lane_fault.why, "as rank %d told", from);
  char why[200];
  snprintf(why, sizeof why, "a lane between ranks %d and %d failed, as rank %d told", a, b, from);
  wsp__stripe_break(st, WSP_ERR_CONN, why);
}

/* The engine finished x's transfer (from one of its passes, or from the
 * communicator's free): unpack, then complete the request. */
static void wsp__xfer_done(wsp__sreq_t *r) {
  wsp__xfer_t *x = r->xfer;
  x->status = r->status;
  if (x->status == WSP_OK && x->is_recv && x->pack)
    x->status = r->st ? wsp__xfer_pack(r->st->comm, x, 1) : WSP_ERR_CONN;
  if (x->status != WSP_OK && !x->cancel && r->st)
    wsp__lane_fault(r->st, x->peer, r->status != WSP_OK ? r->why : wsp_last_error());
  MPI_Grequest_complete(x->greq);
}

/* ---- posting ---- */

int wsp__xport_takes(const wsp_comm_t *comm, int peer, size_t bytes) {
  const wsp_comm_t *lanes = comm->lanes;
  return comm->xport && lanes && lanes->stripe && peer >= 0 && peer < comm->size &&
         comm->topo.node_of && /* oneself is on one's own node too */
         comm->topo.node_of[peer] != comm->topo.node_of[comm->rank] &&
         bytes >= wsp__p2p_min(&lanes->cfg);
}

static int wsp__xport_post(const wsp_comm_t *comm, int is_recv, void *buf, size_t count,
                           MPI_Datatype type, int peer, int tag, MPI_Request *req) {
  wsp_comm_t *lanes = comm->lanes;
  int size = 0;
  if (MPI_Type_size(type, &size) != MPI_SUCCESS || size <= 0) return WSP__XPORT_MPI;
  size_t bytes = count * (size_t)size;
  if (!wsp__xport_takes(comm, peer, bytes)) return WSP__XPORT_MPI;
  const char *what = "a collective's transfer";
  const int packed = !wsp__contiguous(type);
  /* MPI_Pack counts bytes in an int. Both ends may not agree on packing
   * (a send and its receive may use different types), so a transfer they
   * cannot both carry fails rather than go to MPI on one end only. */
  if (packed && bytes > INT_MAX)
    return wsp__fail(comm, WSP_ERR_UNSUPPORTED,
                     "%s: %zu bytes of a non-contiguous type over the lanes (at most %d; "
                     "WSP_TRANSPORT=mpi sends them through MPI)",
                     what, bytes, INT_MAX);
  wsp__xfer_t *x = calloc(1, sizeof *x);
  if (x == NULL || (packed && (x->pack = malloc(bytes)) == NULL)) {
    free(x);
    return wsp__fail(comm, WSP_ERR_NOMEM, "%s: out of memory (%zu bytes)", what, bytes);
  }
  x->is_recv = is_recv, x->peer = peer, x->tag = tag, x->bytes = bytes;
  x->ubuf = buf, x->count = count, x->type = type;
  x->greq = MPI_REQUEST_NULL;
  wsp__sreq_t *r = NULL;
  int rc = packed && !is_recv ? wsp__xfer_pack(comm, x, 0) : WSP_OK;
  if (rc == WSP_OK)
    rc = wsp__striped_post(lanes, !is_recv, packed ? x->pack : buf, bytes, peer, tag, &r, what);
  if (rc == WSP_OK && r->done) rc = wsp__striped_reap(&r, what);
  if (rc != WSP_OK) {
    /* Refused at once: the pair failed before (a transfer that failed
     * with it has told the others already). */
    if (rc == WSP_ERR_CONN) wsp__lane_fault(lanes->stripe, peer, wsp_last_error());
    free(x->pack);
    free(x);
    return wsp__lane_failure(comm, rc);
  }
  if (r->path == WSP__PATH_MPI && !packed) {
    /* Through MPI, decided already: the caller gets MPI's own request. */
    *req = r->mreq;
    r->mreq = MPI_REQUEST_NULL;
    wsp__req_finish(r->st, r, WSP_OK, NULL);
    (void)wsp__striped_reap(&r, what);
    free(x);
    return WSP_OK;
  }
  int mrc = MPI_Grequest_start(wsp__xfer_query, wsp__xfer_free, wsp__xfer_cancel, x, &x->greq);
  if (mrc != MPI_SUCCESS) {
    /* The engine has it: it can only be failed. */
    if (r->pair)
      wsp__pair_fail(r->st, r->pair, WSP_ERR_INTERNAL, "MPI_Grequest_start failed");
    else if (r->path == WSP__PATH_MPI)
      wsp__let_go(&r->mreq, !r->is_send);
    wsp__req_finish(r->st, r, WSP_ERR_INTERNAL, "MPI_Grequest_start failed");
    (void)wsp__striped_reap(&r, what);
    free(x->pack);
    free(x);
    return wsp__mpi_fail(comm, mrc, "MPI_Grequest_start", WSP__WHERE);
  }
  wsp__log(comm, WSP_LOG_TRACE, "transport: %s %zu bytes %s rank %d, tag %d: %s",
           is_recv ? "receiving" : "sending", bytes, is_recv ? "from" : "to", peer, tag,
           r->path == WSP__PATH_LANES ? "lanes"
           : r->path == WSP__PATH_MPI ? "MPI"
                                      : "the pair's set-up decides");
  x->r = r;
  r->xfer = x;
  r->on_done = wsp__xfer_done;
  *req = x->greq;
  return WSP_OK;
}

/* ---- progress ---- */

/* Bytes through every lane of st so far, both ways. */
static uint64_t wsp__stripe_bytes(const wsp__stripe_t *st) {
  uint64_t n = 0;
  for (int p = 0; p < st->comm->size; p++)
    for (int i = 0; st->pair[p] && i < st->pair[p]->nlanes; i++)
      n += st->pair[p]->lane[i].bytes_in + st->pair[p]->lane[i].bytes_out;
  return n;
}

static int wsp__xport_drive(wsp_comm_t *lanes, double seconds) {
  wsp__stripe_t *st = lanes->stripe;
  if (st) (void)wsp__lane_notice_test(st);
  if (st == NULL || st->live == 0) return -1;
  /* Cancelled transfers fail (their pair with them, as a lane that breaks:
   * the peer learns it), and transfers the pair's set-up sent through MPI
   * are tested: the engine's pass does neither. */
  for (wsp__sreq_t *r = st->reqs, *next; r; r = next) {
    next = r->all_next;
    if (r->orphan && r->done) {
      (void)wsp__striped_reap(&r, NULL);
      continue;
    }
    wsp__xfer_t *x = r->on_done == wsp__xfer_done ? r->xfer : NULL;
    if (x == NULL || r->done) continue;
    if (x->cancel) {
      if (r->path == WSP__PATH_MPI) {
        wsp__let_go(&r->mreq, !r->is_send);
        wsp__req_finish(st, r, WSP_ERR_CONN, "cancelled after a failure elsewhere in the call");
      } else if (r->pair) {
        wsp__pair_fail(st, r->pair, WSP_ERR_CONN,
                       "a transfer was cancelled after a failure elsewhere in the call");
      }
    } else if (r->path == WSP__PATH_MPI) {
      wsp__striped_test_mpi(r);
    }
  }
  uint64_t before = wsp__stripe_bytes(st);
  long us = (long)(seconds * 1e6);
  (void)wsp__stripe_progress(st, us > 0 ? us : 0);
  return wsp__stripe_bytes(st) != before;
}

static const wsp__xport_ops_t wsp__xport_ops = {
    .post = wsp__xport_post,
    .drive = wsp__xport_drive,
};

/* Transfers take the lanes from now on; the receive of a notice is posted
 * (without it, a failure elsewhere ends this rank's waits only at the time
 * limit). */
static void wsp__xport_on(wsp_comm_t *comm) {
  wsp_comm_t *w = comm->lanes;
  comm->xport = &wsp__xport_ops;
  wsp__stripe_t *st = w->stripe;
  if (MPI_Irecv(st->notice_in, 2, MPI_INT, MPI_ANY_SOURCE, WSP__TAG_LANE_FAULT, w->mpi,
                &st->notice) != MPI_SUCCESS) {
    st->notice = MPI_REQUEST_NULL;
    wsp__log(comm, WSP_LOG_WARN,
             "transport: the receive of failure notices could not be posted; a lane that fails "
             "elsewhere ends this rank's calls only at WSP_TIMEOUT");
  }
}

/* ---- auto: whether lanes pay, measured at first use ---- */

size_t wsp__xport_threshold(size_t p2p_min, unsigned k, size_t probed) {
  size_t t = p2p_min;
  if (t == 0) {
    t = WSP_P2P_MIN_DEFAULT;
    if (k > 0 && k < t / WSP__STRIPE_CHUNK_MIN) t = k * WSP__STRIPE_CHUNK_MIN;
  }
  return probed > t ? probed : t;
}

/* The median over the pairs where lanes pay of the seconds per byte of
 * all lanes: inv_k is this rank's pair's (on the pair's lower rank; 0 on
 * every other rank), and *median gets the median of those above 0, the
 * same on every rank (left alone when there are none). all holds 2 x p
 * doubles. Not the slowest pair's: a probe is one short stretch per pair,
 * all pairs at once, and on identical pairs its readings spread enough that
 * the slowest priced every transfer well below what the collectives then
 * ran at (docs/results/p2p.md, "BBR on the lanes, and the model's rate of
 * the lanes"). The model has one rate for every pair of nodes: the typical
 * pair's. A network whose pairs truly differ is the network map's to
 * describe, pair by pair. */
static int wsp__xport_median_inv(wsp_comm_t *comm, double inv_k, double *all, double *median) {
  const int p = comm->size;
  int rc = WSP_OK;
  WSP__MPI_COLL_GOTO(comm, rc, out, Allgather, &inv_k, 1, MPI_DOUBLE, all, 1, MPI_DOUBLE,
                     comm->mpi);
  int n = 0;
  for (int r = 0; r < p; r++)
    if (all[r] > 0) all[n++] = all[r];
  if (n > 0) *median = wsp__measure_median(all, n, all + p);
out:
  return rc;
}

/* The nodes pair up in order of their lowest ranks (the first with the
 * second, the third with the fourth, ...), and each pair's lowest ranks
 * set up their lanes with one striped message each way, which runs the
 * engine's probe: one lane, then all it opens (docs/p2p.md). Every node is
 * in at most one pair, so no two probes share a NIC, and all run at once:
 * the cost is one set-up and one probe whatever the number of nodes.
 * Then every rank learns how many pairs found lanes faster than one flow;
 * where most did, every transfer between nodes of at least the largest
 * threshold they found takes that many lanes (no further probe), and
 * otherwise the lanes' communicator goes and everything stays on MPI. The
 * verdict is the same on every rank. */
int wsp__xport_decide(wsp_comm_t *comm) {
  wsp_comm_t *w = comm->lanes;
  if (w == NULL || comm->xport) return WSP_OK;
  const int p = comm->size, me = comm->rank, nodes = comm->topo.pub.nodes;
  const int *node = comm->topo.node_of; /* numbered in order of their lowest ranks */
  int partner = -1, rc = WSP_OK;
  const double t0 = wsp__now();
  /* The lowest rank of each node measures, with that of the node paired
   * with its own (0 with 1, 2 with 3, ...). */
  int lowest = 1;
  for (int q = 0; q < me && lowest; q++) lowest = node[q] != node[me];
  int other = node[me] ^ 1;
  for (int r = 0; lowest && other < nodes && r < p && partner < 0; r++)
    if (node[r] == other) partner = r;
  /* Sums: pairs measured, those where lanes pay, ranks without memory
   * for the median's figures. Maxima: lanes, the threshold, the seconds
   * per byte of all lanes, the round trip, the rate of one flow and the
   * lanes' standing queue. inv_k: this pair's seconds per byte of all
   * lanes, on its lower rank (0 elsewhere): the model takes the median
   * pair's (below), or the slowest's where some rank lacks the memory to
   * gather them (every rank then knows it from the sums). */
  double sum[3] = {0, 0, 0}, max[6] = {0, 0, 0, 0, 0, 0}, inv_k = 0;
  const int from_map = comm->map_flows.pairs > 0;
  if (from_map) {
    /* The attached map measured every pair (the same map, so the same
     * figures, on every rank): nothing to measure or to share. */
    sum[0] = comm->map_flows.pairs, sum[1] = comm->map_flows.pay;
    max[0] = comm->map_flows.lanes, max[1] = comm->map_flows.threshold;
    max[2] = comm->map_flows.rate_k > 0 ? 1 / comm->map_flows.rate_k : 0;
    max[3] = comm->map_flows.rtt;
    max[4] = comm->map_flows.rate_one;
    partner = -1;
  }
  if (partner >= 0) {
    size_t n = wsp__p2p_min(&w->cfg);
    unsigned char *out = calloc(2, n);
    wsp_striped_request_t *req[2] = {NULL, NULL};
    if (out == NULL) {
      rc = wsp__fail(comm, WSP_ERR_NOMEM, "transport: out of memory");
    } else if ((rc = wsp_striped_isend(w, out, n, partner, 0, &req[0])) == WSP_OK &&
               (rc = wsp_striped_irecv(w, out + n, n, partner, 0, &req[1])) == WSP_OK) {
      rc = wsp_striped_waitall(2, req);
    } else {
      (void)wsp_striped_waitall(2, req);
    }
    free(out);
    wsp_striped_info_t info;
    if (rc == WSP_OK && wsp_striped_info(w, partner, &info) == WSP_OK && info.rate_one > 0) {
      /* Both ends know the pair's figures; the lower one counts it. */
      sum[0] = me < partner;
      const int pay = wsp__lanes_pay(&info);
      if (pay) {
        sum[1] = me < partner;
        max[0] = info.lanes;
        max[1] = (double)info.threshold;
        max[2] = 1 / info.rate_lanes;
        if (me < partner) inv_k = max[2];
        max[3] = info.rtt;
        max[4] = info.rate_one;
        /* On the end that streamed the probe's k lanes; the other end
         * reads about 0 (it only sent acknowledgements). */
        max[5] = wsp__stripe_queue(w, partner);
      }
      wsp__log(comm, WSP_LOG_INFO, "transport: rank %d: one flow %.3g MB/s, %d flows %.3g MB/s: %s",
               partner, info.rate_one / 1e6, info.lanes_open, info.rate_lanes / 1e6,
               pay ? "lanes pay" : "one flow is as fast");
    }
    /* A failed measurement counts as no gain; only a timeout fails the
     * call (below, when the others wait for this rank). */
    if (rc == WSP_ERR_TIMEOUT) return rc;
    rc = WSP_OK;
  }
  if (!from_map) {
    double *all = malloc(2 * (size_t)p * sizeof *all);
    sum[2] = all == NULL;
    if ((rc = wsp__allreduce_wait(comm, sum, 3, MPI_DOUBLE, MPI_SUM)) == WSP_OK &&
        (rc = wsp__allreduce_wait(comm, max, 6, MPI_DOUBLE, MPI_MAX)) == WSP_OK && sum[2] == 0)
      rc = wsp__xport_median_inv(comm, inv_k, all, &max[2]);
    free(all);
    if (rc != WSP_OK) return rc;
  }
  if (sum[0] > 0 && 2 * sum[1] > sum[0]) {
    /* A lane count the user fixed (WSP_P2P_LANES) holds; the probe
     * measured with as many as it chose. */
    w->cfg.p2p_lanes = comm->cfg.p2p_lanes ? comm->cfg.p2p_lanes : (unsigned)max[0];
    w->cfg.p2p_min = wsp__xport_threshold(comm->cfg.p2p_min, w->cfg.p2p_lanes, (size_t)max[1]);
    wsp__xport_on(comm);
    comm->lanes_rate_one = max[4];
    comm->lanes_rate_k = max[2] > 0 ? 1 / max[2] : 0;
    /* Selection sees the lanes: between nodes, the median pair's rate of
     * all lanes and one more round trip per message (the receiver's
     * clear-to-send), from the threshold up (wsp_model_t.lanes_min). */
    wsp_model_t *m = &comm->model;
    if (max[2] > 0 && max[2] < m->beta) {
      m->beta_x *= max[2] / m->beta;
      m->beta = max[2];
    }
    m->alpha += max[3];
    m->lanes_min = w->cfg.p2p_min;
    m->lanes_drain = max[5];
    wsp__log(comm, WSP_LOG_INFO,
             "transport: lanes pay between %g of %g pairs of nodes %s: transfers of %zu "
             "bytes or more between nodes take %u lanes, whose queue drains in %.3g s "
             "(decided in %.2f s)",
             sum[1], sum[0], from_map ? "in the map" : "measured", w->cfg.p2p_min, w->cfg.p2p_lanes,
             m->lanes_drain, wsp__now() - t0);
  } else {
    wsp__log(comm, WSP_LOG_INFO,
             "transport: lanes pay between %g of %g pairs of nodes %s: every transfer "
             "stays on MPI (decided in %.2f s)",
             sum[1], sum[0], from_map ? "in the map" : "measured", wsp__now() - t0);
    (void)wsp__xport_free(comm);
  }
  return WSP_OK;
}

/* ---- the lanes' communicator ---- */

int wsp__lanes_comm(wsp_comm_t *comm, unsigned lanes, int failed, const char *what,
                    wsp_comm_t **out) {
  *out = NULL;
  MPI_Comm mc = MPI_COMM_NULL;
  int drc = wsp__comm_dup(comm, &mc);
  if (drc == WSP_ERR_TIMEOUT) return drc;
  wsp_comm_t *w = drc == WSP_OK ? wsp__comm_wrap(comm, mc) : NULL;
  if (w == NULL && mc != MPI_COMM_NULL) MPI_Comm_free(&mc);
  /* Every rank has its duplicate wrapped, or none goes on: the striped
   * engine's set-up below is collective over it. */
  wsp__agree_t ag = {
      .what = what,
      .status = drc != WSP_OK         ? drc
                : w == NULL || failed ? wsp__fail(comm, WSP_ERR_NOMEM, "%s: out of memory", what)
                                      : WSP_OK,
  };
  int rc = wsp__agree(comm, &ag);
  if (rc == WSP_OK) {
    w->cfg.p2p_lanes = lanes;
    /* Its own agreement covers its memory, obeys the limit and gates its
     * MPI_Comm_dup. */
    rc = wsp__stripe_create(w);
  }
  if (rc != WSP_OK) {
    wsp__comm_unwrap(&w);
    return rc;
  }
  *out = w;
  return WSP_OK;
}

int wsp__xport_create(wsp_comm_t *comm) {
  comm->lanes = NULL;
  comm->xport = NULL;
#ifdef WSP_SIMGRID
  return WSP_OK; /* no sockets in a simulation */
#else
  if (comm->cfg.transport == WSP_TRANSPORT_MPI || comm->size < 2 || comm->topo.pub.nodes < 2)
    return WSP_OK;
  const char *what = "wsp_comm_create: the collectives' lanes";
  /* Under auto the pairs' probe measures first (wsp__xport_decide), which
   * a fixed lane count would skip. */
  const unsigned k = comm->cfg.transport == WSP_TRANSPORT_LANES ? comm->cfg.p2p_lanes : 0;
  int rc = wsp__lanes_comm(comm, k, 0, what, &comm->lanes);
  if (rc == WSP_ERR_TIMEOUT) return rc;
  if (rc != WSP_OK) {
    wsp__log(comm, WSP_LOG_WARN, "%s could not be set up (%s); every transfer goes through MPI",
             what, wsp_last_error());
    return WSP_OK;
  }
  /* auto decides at the first collective that could use them. Forced,
   * they carry every transfer between nodes from their threshold up, and
   * the model learns that threshold (the calibration that follows keeps
   * it): a pipelined algorithm whose segments fell below it would send
   * them through MPI at one flow's rate. The lanes' rate is not known
   * without their probe, so the model keeps MPI's. */
  if (comm->cfg.transport == WSP_TRANSPORT_LANES) {
    wsp__xport_on(comm);
    comm->model.lanes_min = wsp__p2p_min(&comm->lanes->cfg);
  } else if (comm->cfg.p2p_min == 0) {
    /* Automatic: the probe reports from which size lanes pay, down to the
     * shortest transfer cut over two lanes, and the verdict sets the
     * transport's threshold from it (wsp__xport_threshold). A threshold
     * the user chose stays the probe's floor, as for any pair. */
    comm->lanes->stripe->probe_floor = 2 * WSP__STRIPE_CHUNK_MIN;
  }
  return WSP_OK;
#endif
}

int wsp__lanes_comm_free(wsp_comm_t **w) {
  int rc = *w ? wsp__stripe_free(*w) : WSP_OK;
  wsp__comm_unwrap(w);
  return rc;
}

int wsp__xport_inherit(wsp_comm_t *c, const wsp_comm_t *from, const char *what) {
  c->lanes = NULL;
  c->xport = NULL;
  c->lanes_rate_one = c->lanes_rate_k = 0;
  memset(&c->lane_fault, 0, sizeof c->lane_fault);
  if (from == NULL || from->xport == NULL) return WSP_OK;
  int rc = wsp__lanes_comm(c, from->lanes->cfg.p2p_lanes, 0, what, &c->lanes);
  if (rc == WSP_ERR_TIMEOUT) return rc;
  if (rc != WSP_OK) {
    wsp__log(c, WSP_LOG_WARN, "%s could not be set up (%s); its transfers go through MPI", what,
             wsp_last_error());
    return WSP_OK;
  }
  c->lanes->cfg.p2p_min = from->lanes->cfg.p2p_min;
  wsp__xport_on(c);
  return WSP_OK;
}

int wsp__xport_free(wsp_comm_t *comm) {
  comm->xport = NULL;
  return wsp__lanes_comm_free(&comm->lanes);
}

int wsp__lanes_pay(const wsp_striped_info_t *info) {
  return info->threshold != SIZE_MAX && info->lanes > 1;
}
