/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Node-aware allreduce: reduce inside each node, allreduce among the nodes'
 * leaders, broadcast inside each node.
 *
 * How it works. The communicator's topology (src/core/topo.c) gives each
 * rank its node's communicator (`local`, ranks in rank order) and, on each
 * node's lowest rank, the leaders' communicator (one rank per node, in node
 * order). Three steps, each an ordinary wirespeed collective on a
 * sub-communicator, so each picks its own algorithm from the model:
 *   1. reduce to local rank 0 over shared memory (model: alpha_node,
 *      beta_node);
 *   2. allreduce, in place, among the leaders over the network (the flat
 *      algorithms with p = number of nodes);
 *   3. broadcast from local rank 0 over shared memory.
 * What crosses the network is the allreduce of H = number of nodes
 * participants instead of p: with a segmented ring, each node's NIC carries
 * 2(H-1)/H of the vector instead of the flat ring's 2(p-1)/p (with 4 ranks
 * on each of 4 nodes: 1.5 instead of 1.875 vectors, 1.25x less), and a
 * latency-bound allreduce takes lg H network steps instead of lg p.
 *
 * Order. With nodes that are blocks of consecutive ranks, step 1 combines
 * a node's ranks in rank order, and step 2 combines the nodes in node
 * order, which is rank order: non-commutative ops give MPI's result. With
 * nodes that interleave, only commutative ops are allowed
 * (WSP__PRE_NODE_ORDER). Step 3 copies the result as bytes, so the
 * datatype must have no holes (WSP__PRE_DENSE).
 *
 * Preconditions: two nodes or more, one with two ranks or more; a
 * commutative op or nodes in blocks; a datatype without holes. Fallback:
 * rabenseifner.
 */
#include "../coll_internal.h"

#include <math.h>

/* The sub-communicators' shapes, the same on every rank (the largest node
 * stands for all). */
static void wsp__hier_shapes(const wsp__coll_shape_t *s, wsp__coll_shape_t *node,
                             wsp__coll_shape_t *net) {
  *node = *s;
  node->p = s->max_node_ranks;
  node->nodes = 1;
  node->max_node_ranks = s->max_node_ranks;
  node->node_blocks = 1;
  *net = *s;
  net->p = s->nodes;
  net->max_node_ranks = 1;
  net->node_blocks = 1;
  node->sites = net->sites = NULL; /* the steps run on sub-communicators */
  node->inside = net->inside = NULL;
  node->wan_n = net->wan_n = 0;
}

WSP__COST(allreduce, hier,
          "R_node(m) + A_net(H) + B_node(m): the cheapest reduce and bcast "
          "at p = m (most ranks on a node) under alpha_node, beta_node, and "
          "the cheapest flat allreduce at p = H (nodes)") {
  wsp__coll_shape_t node, net;
  wsp__hier_shapes(s, &node, &net);
  /* The node steps priced as the node communicator will choose them. */
  wsp_model_t mn = wsp__model_node(m);
  double r, a, b;
  wsp__coll_cheapest(wsp__coll_table(WSP_COLL_REDUCE), &mn, &node, &r);
  wsp__coll_cheapest(wsp__coll_table(WSP_COLL_ALLREDUCE), m, &net, &a);
  /* The node broadcast moves the result's bytes. */
  node.count = node.bytes;
  node.commutative = 1;
  wsp__coll_cheapest(wsp__coll_table(WSP_COLL_BCAST), &mn, &node, &b);
  return r + a + b;
}

int wsp__allreduce_hier(wsp_comm_t *comm, const wsp__coll_args_t *a) {
  wsp_comm_t *local = comm->topo.local, *leaders = comm->topo.leaders;
  if (local == NULL)
    return wsp__fail(comm, WSP_ERR_INTERNAL, "allreduce/hier: no node communicator");
  int rc;
  wsp__coll_shape_t s = {.bytes = a->block, .count = a->count,
                         .commutative = a->commutative, .dense = 1};
  /* 1. Reduce to the node's first rank. */
  wsp__coll_args_t r = *a;
  r.coll = WSP_COLL_REDUCE;
  r.root = 0;
  r.recvbuf = local->rank == 0 ? a->recvbuf : NULL;
  s.p = local->size;
  if (local->size > 1 && (rc = wsp__coll_run(local, &r, &s))) return rc;
  if (local->size == 1 && (rc = wsp__copy_typed(comm, a, a->sendbuf, a->recvbuf, a->count)))
    return rc;
  /* 2. Allreduce among the leaders, in place. */
  if (leaders) {
    wsp__coll_args_t x = *a;
    x.sendbuf = x.recvbuf;
    s.p = leaders->size;
    if ((rc = wsp__coll_run(leaders, &x, &s))) return rc;
  }
  /* 3. Broadcast the result inside the node, as bytes. */
  if (local->size == 1) return WSP_OK;
  wsp__coll_args_t b = {.coll = WSP_COLL_BCAST, .recvbuf = a->recvbuf,
                        .count = a->block, .dtype = MPI_BYTE, .op = MPI_OP_NULL,
                        .commutative = 1, .type_size = 1, .extent = 1,
                        .true_lb = 0, .true_extent = 1, .block = a->block, .root = 0};
  s.p = local->size;
  s.count = a->block;
  s.commutative = 1;
  return wsp__coll_run(local, &b, &s);
}
