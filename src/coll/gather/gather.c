/*
 * gather: the algorithm table. Row order is the order wsp-info and wsp-bench
 * list them in; "native" is always row 0.
 */
#include "gather.h"

enum {
  WSP__GATHER_NATIVE = 0,
  WSP__GATHER_LINEAR,
  WSP__GATHER_BINOMIAL,
  WSP__GATHER_COUNT
};

static const wsp__coll_alg_t wsp__gather_algs[WSP__GATHER_COUNT] = {
    [WSP__GATHER_NATIVE] = {.info = {.name = "native",
                                   .desc = "the MPI library's MPI_Gather",
                                   .cost = "unknown (the MPI library's choice)"},
                          .run = wsp__coll_native},
    [WSP__GATHER_LINEAR] = {.info = {.name = "linear",
                                     .desc = "every rank sends its block to the "
                                             "root, which receives them all "
                                             "directly into place",
                                     .cost = "alpha + (p-2).gap + (p-1).n.beta"},
                            .cost = wsp__gather_linear_cost,
                            .run = wsp__gather_linear},
    [WSP__GATHER_BINOMIAL] = {.info = {.name = "binomial",
                                       .desc = "binomial tree towards the root; "
                                               "each rank forwards its "
                                               "subtree's blocks in one message",
                                       .cost = "ceil(lg p).alpha + (p-1).n.beta"},
                              .cost = wsp__gather_binomial_cost,
                              .run = wsp__gather_binomial},
};

const wsp__coll_table_t wsp__gather_table = {
    .coll = WSP_COLL_GATHER, .name = "gather", .count = WSP__GATHER_COUNT,
    .algs = wsp__gather_algs};
