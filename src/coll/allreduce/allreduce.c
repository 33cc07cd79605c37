/*
 * allreduce: the algorithm table. Row order is the order wsp-info and wsp-bench
 * list them in; "native" is always row 0.
 */
#include "allreduce.h"

enum {
  WSP__ALLREDUCE_NATIVE = 0,
  WSP__ALLREDUCE_RECURSIVE_DOUBLING,
  WSP__ALLREDUCE_RING,
  WSP__ALLREDUCE_RABENSEIFNER,
  WSP__ALLREDUCE_HIER,
  WSP__ALLREDUCE_COUNT
};

static const wsp__coll_alg_t wsp__allreduce_algs[WSP__ALLREDUCE_COUNT] = {
    [WSP__ALLREDUCE_NATIVE] = {.info = {.name = "native",
                                   .desc = "the MPI library's MPI_Allreduce",
                                   .cost = "unknown (the MPI library's choice)"},
                          .run = wsp__coll_native},
    [WSP__ALLREDUCE_RECURSIVE_DOUBLING] =
        {.info = {.name = "recursive_doubling",
                  .desc = "whole-vector exchanges with partners 1, 2, 4, ... "
                          "apart (any p: the first 2(p - q) ranks fold in "
                          "pairs)",
                  .cost = "lg q.(alpha + n.beta_x) + 2.[p != q].(alpha + n.beta) + (lg q + "
                          "[p != q]).n.gamma, q = 2^floor(lg p)"},
         .cost = wsp__allreduce_recursive_doubling_cost,
         .run = wsp__allreduce_recursive_doubling},
    [WSP__ALLREDUCE_RING] =
        {.info = {.name = "ring",
                  .desc = "segmented ring: reduce-scatter then allgather "
                          "around the ring, segments pipelined",
                  .cost = "2.(p-1).k.alpha + ((p-1)/p).n.(beta_x + "
                          "max(beta_x, gamma)) + (p-1).(n/(p.k)).min(beta_x, "
                          "gamma), k = ceil(n / (p.seg))"},
         .pre = WSP__PRE_COMMUTATIVE,
         .fallback = "recursive_doubling",
         .cost = wsp__allreduce_ring_cost,
         .run = wsp__allreduce_ring},
    [WSP__ALLREDUCE_RABENSEIFNER] =
        {.info = {.name = "rabenseifner",
                  .desc = "reduce-scatter by recursive halving, allgather by "
                          "recursive doubling (any p: the first 2(p - q) ranks "
                          "fold in pairs)",
                  .cost = "2.lg q.alpha + 2.((q-1)/q).n.beta_x + "
                          "((q-1)/q).n.gamma + [p != q].(2.alpha + 2.n.beta + "
                          "n.gamma), q = 2^floor(lg p)"},
         .cost = wsp__allreduce_rabenseifner_cost,
         .run = wsp__allreduce_rabenseifner},
    [WSP__ALLREDUCE_HIER] =
        {.info = {.name = "hier",
                  .desc = "node-aware: reduce inside each node (shared "
                          "memory), allreduce among one leader per node, "
                          "bcast inside each node; each step picks its own "
                          "algorithm",
                  .cost = "R_node(m) + A_net(H) + B_node(m): the cheapest "
                          "reduce and bcast at p = m (most ranks on a node) "
                          "under alpha_node, beta_node, and the cheapest "
                          "flat allreduce at p = H (nodes)"},
         .pre = WSP__PRE_SHARED_NODES | WSP__PRE_NODE_ORDER | WSP__PRE_DENSE,
         .fallback = "rabenseifner",
         .cost = wsp__allreduce_hier_cost,
         .run = wsp__allreduce_hier},
};

const wsp__coll_table_t wsp__allreduce_table = {
    .coll = WSP_COLL_ALLREDUCE, .name = "allreduce", .count = WSP__ALLREDUCE_COUNT,
    .algs = wsp__allreduce_algs};
