/*
 * Broadcast: the algorithm table. Row order is the order wsp-info and
 * wsp-bench list them in; "native" is always row 0.
 */
#include "bcast.h"

enum {
  WSP__BCAST_NATIVE = 0,
  WSP__BCAST_BINOMIAL,
  WSP__BCAST_KNOMIAL,
  WSP__BCAST_CHAIN,
  WSP__BCAST_SPLIT_BINARY,
  WSP__BCAST_SCATTER_RING,
  WSP__BCAST_SCATTER_RDB,
  WSP__BCAST_COUNT
};

static const wsp__coll_alg_t wsp__bcast_algs[WSP__BCAST_COUNT] = {
    [WSP__BCAST_NATIVE] = {.info = {.name = "native",
                                    .desc = "the MPI library's MPI_Bcast",
                                    .cost = "unknown (the MPI library's choice)"},
                           .run = wsp__coll_native},
    [WSP__BCAST_BINOMIAL] = {.info = {.name = "binomial",
                                      .desc = "binomial tree from the root; "
                                              "each rank forwards the whole "
                                              "message to its children",
                                      .cost = "ceil(lg p).(alpha + n.beta)"},
                             .cost = wsp__bcast_binomial_cost,
                             .run = wsp__bcast_binomial},
    [WSP__BCAST_KNOMIAL] = {.info = {.name = "knomial",
                                     .desc = "k-nomial tree with k=4 from "
                                             "the root; each rank sends the "
                                             "whole message to the k-1 "
                                             "children of a level at once",
                                     .cost = "ceil(log_4 p).(alpha + 3.n.beta)"},
                            .cost = wsp__bcast_knomial_cost,
                            .run = wsp__bcast_knomial},
    [WSP__BCAST_CHAIN] = {.info = {.name = "chain",
                                   .desc = "pipelined chain root -> root+1 "
                                           "-> ...; segments of seg bytes "
                                           "are forwarded while the next "
                                           "ones arrive",
                                   .cost = "(p - 1 + s - 1).(alpha + "
                                           "(n/s).b), s = ceil(n/seg), b = "
                                           "beta_x (beta for p = 2)"},
                          .cost = wsp__bcast_chain_cost,
                          .run = wsp__bcast_chain},
    [WSP__BCAST_SPLIT_BINARY] =
        {.info = {.name = "split_binary",
                  .desc = "two binary trees under the root, one per half "
                          "of the message, pipelined in segments; then "
                          "each rank swaps halves with its partner in the "
                          "other tree",
                  .cost = "(2s + 2(D-1)).(alpha + (h/s).b) + alpha + "
                          "(n/2).beta_x, h = ceil(n/2), s = ceil(h/seg), D = "
                          "floor(lg ceil((p-1)/2)) + 1, b = beta_x (beta "
                          "for D = 1); p = 2: s.(alpha + (h/s).beta) + "
                          "alpha + (n/2).beta"},
         .cost = wsp__bcast_split_binary_cost,
         .run = wsp__bcast_split_binary},
    [WSP__BCAST_SCATTER_RING] =
        {.info = {.name = "scatter_ring",
                  .desc = "van de Geijn: binomial scatter of p blocks from "
                          "the root, then ring allgather",
                  .cost = "ceil(lg p).alpha + ((p-1)/p).n.beta + "
                          "(p-1).alpha + ((p-1)/p).n.beta_x"},
         .cost = wsp__bcast_scatter_ring_cost,
         .run = wsp__bcast_scatter_ring},
    [WSP__BCAST_SCATTER_RDB] =
        {.info = {.name = "scatter_rdb",
                  .desc = "binomial scatter of p blocks from the root, then "
                          "recursive-doubling allgather (any p: fix-up "
                          "steps where p cuts a group short)",
                  .cost = "2.ceil(lg p).alpha + ((p-1)/p).n.(beta + beta_x) + sum "
                          "over clipped rounds i of f_i.(alpha + "
                          "(m'_i/p).n.beta)"},
         .cost = wsp__bcast_scatter_rdb_cost,
         .run = wsp__bcast_scatter_rdb},
};

const wsp__coll_table_t wsp__bcast_table = {
    .coll = WSP_COLL_BCAST, .name = "bcast", .count = WSP__BCAST_COUNT,
    .algs = wsp__bcast_algs};
