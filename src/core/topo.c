/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Node topology: which ranks of a communicator share a node.
 *
 * Ranks on one node talk through shared memory, ranks on different nodes
 * through the network; collectives that know the difference send less over
 * the network (allreduce "hier": reduce inside each node, allreduce among
 * one leader per node, broadcast inside each node). How the nodes are found
 * is cfg.node_split (WSP_NODES):
 *   host       ranks whose MPI_Get_processor_name is the same (under
 *              netlab each namespace has its own host name);
 *   block:K    ranks [iK, iK + K) form node i;
 *   cyclic:N   rank r is on node r mod N.
 * The last two let tests build several nodes on one machine, and let users
 * correct a grouping that is not the network's. Not MPI_Comm_split_type
 * (MPI_COMM_TYPE_SHARED): Open MPI 4.1 in netlab's namespaces (one kernel,
 * one /dev/shm, several host names) gave ranks different views and the
 * split deadlocked. Host names are hashed (FNV-1a, 64 bits) and
 * allgathered; two hosts whose names collide would merely be treated as
 * one node, the same way on every rank.
 *
 * Every rank learns the whole map (an MPI_Allgather of each rank's node
 * leader, the node's lowest rank), so the numbers in wsp_topology_t are the
 * same on every rank and can steer algorithm selection, which all ranks
 * must make alike. Nodes are numbered in the order of their lowest ranks.
 * The map is kept (topo.node_of): it is the library's one answer to "do
 * these two ranks share a node", for the collectives, the shuffle (which
 * does not pace peers on its own node) and tools (wsp_comm_node).
 *
 * Sub-communicators (only when there are at least two nodes and some node
 * holds two ranks or more): `local`, this node's ranks in rank order, and
 * `leaders`, each node's lowest rank, in node order. Each is a wsp_comm_t
 * built here without its own calibration: it gets the parent's
 * configuration (no forced algorithms, no rules file: those speak of the
 * parent's p) and its part of the parent's model (wsp__topo_set_models).
 * Being communicators of their own, their traffic never meets the
 * parent's.
 */
#include "wsp_internal.h"

#include <stdlib.h>
#include <string.h>

wsp_comm_t *wsp__comm_wrap(const wsp_comm_t *parent, MPI_Comm mpi) {
  wsp_comm_t *w = calloc(1, sizeof *w);
  if (w == NULL) return NULL;
  w->mpi = mpi;
  w->cfg = parent->cfg;
  w->owner = parent->owner ? parent->owner : (wsp_comm_t *)parent;
  if (MPI_Comm_size(mpi, &w->size) != MPI_SUCCESS ||
      (w->topo.node_of = calloc((size_t)w->size, sizeof *w->topo.node_of)) == NULL) {
    free(w);
    return NULL;
  }
  w->cfg.rules_file = w->cfg.netmap_file = NULL;
  for (int k = 0; k < WSP_COLL_COUNT; k++)
    w->cfg.coll_alg[k] = w->coll_alg[k] = WSP_ALG_AUTO;
  if (MPI_Comm_rank(mpi, &w->rank) != MPI_SUCCESS) {
    free(w->topo.node_of);
    free(w);
    return NULL;
  }
  w->model = parent->model;
  return w;
}

void wsp__comm_unwrap(wsp_comm_t **w) {
  if (*w == NULL) return;
  if ((*w)->mpi != MPI_COMM_NULL) MPI_Comm_free(&(*w)->mpi);
  free((*w)->topo.node_of);
  free(*w);
  *w = NULL;
}

/* lead[r] = the lowest rank whose key equals key[r] (ranks with equal keys
 * share a node). Sorting (key, rank) pairs keeps it O(p log p). */
typedef struct {
  uint64_t key;
  int rank;
} wsp__keyrank_t;

static int wsp__cmp_keyrank(const void *a, const void *b) {
  const wsp__keyrank_t *x = a, *y = b;
  if (x->key != y->key) return x->key < y->key ? -1 : 1;
  return (x->rank > y->rank) - (x->rank < y->rank);
}

static void wsp__leaders_by_key(const uint64_t *key, int p, int *lead,
                                wsp__keyrank_t *kr) {
  for (int r = 0; r < p; r++) kr[r] = (wsp__keyrank_t){key[r], r};
  qsort(kr, (size_t)p, sizeof *kr, wsp__cmp_keyrank);
  for (int i = 0, first = 0; i < p; i++) {
    if (i > 0 && kr[i].key != kr[i - 1].key) first = kr[i].rank;
    if (i == 0) first = kr[0].rank;
    lead[kr[i].rank] = first;
  }
}

#define WSP__TOPO_WHAT "wsp_comm_create: node topology"

int wsp__topo_create(wsp_comm_t *comm) {
  int rc = WSP_OK, p = comm->size, me = comm->rank;
  wsp_topology_t *t = &comm->topo.pub;
  MPI_Comm local = MPI_COMM_NULL, leaders = MPI_COMM_NULL;
  int *lead = malloc((size_t)p * sizeof *lead), failed = 0;
  comm->topo.node_of = malloc((size_t)p * sizeof *comm->topo.node_of);
  /* Nobody goes on alone after a local allocation failure. */
  rc = wsp__agree_alloc(comm, lead == NULL || comm->topo.node_of == NULL,
                        WSP__TOPO_WHAT);
  if (rc != WSP_OK) goto out;
  /* Every rank's leader (its node's lowest rank), the same map on all. */
  if (comm->cfg.node_split == WSP_NODES_HOST) {
    char name[MPI_MAX_PROCESSOR_NAME + 1] = "";
    int len = 0;
    WSP__MPI_GOTO(comm, MPI_Get_processor_name(name, &len), rc, out);
    uint64_t h = wsp__fnv(WSP__FNV_INIT, name, (size_t)len), *all = NULL;
    all = malloc((size_t)p * (sizeof *all + sizeof(wsp__keyrank_t)));
    rc = wsp__agree_alloc(comm, all == NULL, WSP__TOPO_WHAT);
    if (rc != WSP_OK) {
      free(all);
      goto out;
    }
    WSP__MPI_COLL_GOTO(comm, rc, gathered, Allgather, &h, 1, MPI_UINT64_T, all, 1,
                       MPI_UINT64_T, comm->mpi);
  gathered:
    if (rc != WSP_OK) {
      free(all);
      goto out;
    }
    wsp__leaders_by_key(all, p, lead, (wsp__keyrank_t *)(all + p));
    free(all);
  } else {
    int n = comm->cfg.node_split_n;
    for (int r = 0; r < p; r++)
      lead[r] = comm->cfg.node_split == WSP_NODES_BLOCK ? r / n * n : r % n;
  }
  int mylead = lead[me], lrank = 0, lsize = 1;
  WSP__MPI_GOTO(comm, MPI_Comm_split(comm->mpi, mylead, me, &local), rc, out);
  WSP__MPI_GOTO(comm, MPI_Comm_rank(local, &lrank), rc, out);
  WSP__MPI_GOTO(comm, MPI_Comm_size(local, &lsize), rc, out);
  /* A rank is the first of its node when it is its own leader; nodes are
   * numbered in that order. Blocks: each rank's leader is its
   * predecessor's, or itself. */
  memset(t, 0, sizeof *t);
  t->blocks = 1;
  int *count = calloc((size_t)p, sizeof *count);
  if (count == NULL) {
    /* Too late to stop alone: the others are about to split; carry on
     * without sub-communicators (every rank must then agree: see below). */
    failed = 1;
  }
  for (int r = 0; r < p; r++) {
    /* lead[r] <= r, so the leader's node is numbered already. */
    if (lead[r] == r) {
      if (r == mylead) t->node = t->nodes;
      comm->topo.node_of[r] = t->nodes++;
    } else {
      comm->topo.node_of[r] = comm->topo.node_of[lead[r]];
    }
    if (r > 0 && lead[r] != lead[r - 1] && lead[r] != r) t->blocks = 0;
    if (count && ++count[lead[r]] > t->max_node_ranks) t->max_node_ranks = count[lead[r]];
  }
  free(count);
  t->node_ranks = lsize;
  rc = wsp__agree_alloc(comm, failed, WSP__TOPO_WHAT);
  if (rc != WSP_OK) goto out;
  if (t->nodes < 2 || t->max_node_ranks < 2) goto out; /* nothing to split */
  WSP__MPI_GOTO(comm, MPI_Comm_split(comm->mpi, lrank == 0 ? 0 : MPI_UNDEFINED, me, &leaders),
                rc, out);
  comm->topo.local = wsp__comm_wrap(comm, local);
  if (comm->topo.local) local = MPI_COMM_NULL;
  if (leaders != MPI_COMM_NULL) {
    comm->topo.leaders = wsp__comm_wrap(comm, leaders);
    if (comm->topo.leaders) leaders = MPI_COMM_NULL;
  }
  failed = comm->topo.local == NULL || (lrank == 0 && comm->topo.leaders == NULL);
  rc = wsp__agree_alloc(comm, failed, "wsp_comm_create: node sub-communicators");
  if (rc != WSP_OK) goto out;
  /* The sub-communicators see themselves as one node (local) or as nodes
   * of one rank each (leaders): the node-aware algorithms never nest. */
  comm->topo.local->topo.pub = (wsp_topology_t){
      .nodes = 1, .node = 0, .node_ranks = lsize, .max_node_ranks = lsize, .blocks = 1};
  if (comm->topo.leaders) {
    comm->topo.leaders->topo.pub = (wsp_topology_t){
        .nodes = t->nodes, .node = t->node, .node_ranks = 1, .max_node_ranks = 1,
        .blocks = 1};
    for (int n = 0; n < t->nodes; n++) comm->topo.leaders->topo.node_of[n] = n;
  }
out:
  if (rc != WSP_OK) {
    wsp__comm_unwrap(&comm->topo.local);
    wsp__comm_unwrap(&comm->topo.leaders);
  }
  if (local != MPI_COMM_NULL) MPI_Comm_free(&local);
  if (leaders != MPI_COMM_NULL) MPI_Comm_free(&leaders);
  free(lead);
  wsp__log(comm, WSP_LOG_DEBUG, "topology: %d nodes, this rank on node %d of %d ranks, "
           "at most %d per node, %s", t->nodes, t->node, t->node_ranks,
           t->max_node_ranks, t->blocks ? "in blocks" : "not in blocks");
  return rc;
}

wsp_model_t wsp__model_node(const wsp_model_t *m) {
  wsp_model_t n = *m;
  n.alpha = m->alpha_node;
  n.beta = n.beta_x = m->beta_node;
  n.eager = m->eager_node;
  /* A message's overhead cannot exceed its whole latency. */
  n.gap = m->gap < n.alpha ? m->gap : n.alpha;
  n.lanes_min = 0;
  n.lanes_drain = 0;
  return n;
}

void wsp__topo_set_models(wsp_comm_t *comm) {
  if (comm->topo.local) comm->topo.local->model = wsp__model_node(&comm->model);
  if (comm->topo.leaders) comm->topo.leaders->model = comm->model;
}

int wsp__topo_free(wsp_comm_t *comm) {
  wsp__comm_unwrap(&comm->topo.local);
  wsp__comm_unwrap(&comm->topo.leaders);
  free(comm->topo.node_of);
  comm->topo.node_of = NULL;
  return WSP_OK;
}

int wsp__comm_dup(const wsp_comm_t *comm, MPI_Comm *out) {
  *out = MPI_COMM_NULL;
#ifndef WSP_SIMGRID
  if (comm->cfg.timeout > 0) {
    MPI_Request r = MPI_REQUEST_NULL;
    int mrc = MPI_Comm_idup(comm->mpi, out, &r);
    if (mrc != MPI_SUCCESS) {
      *out = MPI_COMM_NULL;
      return wsp__mpi_fail(comm, mrc, "MPI_Comm_idup", WSP__WHERE);
    }
    int rc = wsp__coll_wait(comm, &r);
    /* After a timeout MPI may still fill in *out: it is dropped with the
     * request, as MPI forbids freeing either before the call completes. */
    if (rc != WSP_OK) *out = MPI_COMM_NULL;
    return rc;
  }
#endif
  int mrc = MPI_Comm_dup(comm->mpi, out);
  return mrc != MPI_SUCCESS ? wsp__mpi_fail(comm, mrc, "MPI_Comm_dup", WSP__WHERE) : WSP_OK;
}
