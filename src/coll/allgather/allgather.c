/*
 * allgather: the algorithm table. Row order is the order wsp-info and wsp-bench
 * list them in; "native" is always row 0.
 */
#include "allgather.h"

enum {
  WSP__ALLGATHER_NATIVE = 0,
  WSP__ALLGATHER_RING,
  WSP__ALLGATHER_RECURSIVE_DOUBLING,
  WSP__ALLGATHER_BRUCK,
  WSP__ALLGATHER_COUNT
};

static const wsp__coll_alg_t wsp__allgather_algs[WSP__ALLGATHER_COUNT] = {
    [WSP__ALLGATHER_NATIVE] = {.info = {.name = "native",
                                   .desc = "the MPI library's MPI_Allgather",
                                   .cost = "unknown (the MPI library's choice)"},
                          .run = wsp__coll_native},
    [WSP__ALLGATHER_RING] = {.info = {.name = "ring",
                                      .desc = "p-1 steps around the ring; each "
                                              "rank forwards the block it "
                                              "received last",
                                      .cost = "(p-1).alpha + (p-1).n.beta_x"},
                             .cost = wsp__allgather_ring_cost,
                             .run = wsp__allgather_ring},
    [WSP__ALLGATHER_RECURSIVE_DOUBLING] = {
        .info = {.name = "recursive_doubling",
                 .desc = "lg p exchanges with rank XOR 2^k, the held range "
                         "doubling each step (power-of-two p)",
                 .cost = "lg p.alpha + (p-1).n.beta_x"},
        .pre = WSP__PRE_POW2,
        .fallback = "bruck",
        .cost = wsp__allgather_recursive_doubling_cost,
        .run = wsp__allgather_recursive_doubling},
    [WSP__ALLGATHER_BRUCK] = {.info = {.name = "bruck",
                                       .desc = "Bruck's algorithm: ceil(lg p) "
                                               "steps at distance 2^k, then a "
                                               "local rotation; any p",
                                       .cost = "ceil(lg p).alpha + (p-1).n.beta_x"},
                              .cost = wsp__allgather_bruck_cost,
                              .run = wsp__allgather_bruck},
};

const wsp__coll_table_t wsp__allgather_table = {
    .coll = WSP_COLL_ALLGATHER, .name = "allgather", .count = WSP__ALLGATHER_COUNT,
    .algs = wsp__allgather_algs};
