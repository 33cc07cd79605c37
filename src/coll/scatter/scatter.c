/*
 * scatter: the algorithm table. Row order is the order wsp-info and wsp-bench
 * list them in; "native" is always row 0.
 */
#include "scatter.h"

enum {
  WSP__SCATTER_NATIVE = 0,
  WSP__SCATTER_COUNT
};

static const wsp__coll_alg_t wsp__scatter_algs[WSP__SCATTER_COUNT] = {
    [WSP__SCATTER_NATIVE] = {.info = {.name = "native",
                                   .desc = "the MPI library's MPI_Scatter",
                                   .cost = "unknown (the MPI library's choice)"},
                          .run = wsp__coll_native},
};

const wsp__coll_table_t wsp__scatter_table = {
    .coll = WSP_COLL_SCATTER, .name = "scatter", .count = WSP__SCATTER_COUNT,
    .algs = wsp__scatter_algs};
