/*
 * Broadcast: the algorithm table. Row order is the order wsp-info and
 * wsp-bench list them in; "native" is always row 0.
 */
#include "bcast.h"

enum {
  WSP__BCAST_NATIVE = 0,
  WSP__BCAST_BINOMIAL,
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
};

const wsp__coll_table_t wsp__bcast_table = {
    .coll = WSP_COLL_BCAST, .name = "bcast", .count = WSP__BCAST_COUNT,
    .algs = wsp__bcast_algs};
