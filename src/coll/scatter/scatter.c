/*
 * scatter: the algorithm table. Row order is the order wsp-info and wsp-bench
 * list them in; "native" is always row 0.
 */
#include "scatter.h"

enum {
  WSP__SCATTER_NATIVE = 0,
  WSP__SCATTER_LINEAR,
  WSP__SCATTER_BINOMIAL,
  WSP__SCATTER_COUNT
};

static const wsp__coll_alg_t wsp__scatter_algs[WSP__SCATTER_COUNT] = {
    [WSP__SCATTER_NATIVE] = {.info = {.name = "native",
                                   .desc = "the MPI library's MPI_Scatter",
                                   .cost = "unknown (the MPI library's choice)"},
                          .run = wsp__coll_native},
    [WSP__SCATTER_LINEAR] = {.info = {.name = "linear",
                                      .desc = "the root sends every rank its "
                                              "block directly",
                                      .cost = "alpha + (p-2).gap + (p-1).n.beta"},
                             .cost = wsp__scatter_linear_cost,
                             .run = wsp__scatter_linear},
    [WSP__SCATTER_BINOMIAL] = {.info = {.name = "binomial",
                                        .desc = "binomial tree from the root; "
                                                "each rank receives its "
                                                "subtree's blocks in one "
                                                "message and passes them on",
                                        .cost = "ceil(lg p).alpha + (p-1).n.beta"},
                               .cost = wsp__scatter_binomial_cost,
                               .run = wsp__scatter_binomial},
};

const wsp__coll_table_t wsp__scatter_table = {
    .coll = WSP_COLL_SCATTER, .name = "scatter", .count = WSP__SCATTER_COUNT,
    .algs = wsp__scatter_algs};
