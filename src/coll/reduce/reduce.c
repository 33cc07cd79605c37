/*
 * reduce: the algorithm table. Row order is the order wsp-info and wsp-bench
 * list them in; "native" is always row 0.
 */
#include "reduce.h"

enum {
  WSP__REDUCE_NATIVE = 0,
  WSP__REDUCE_COUNT
};

static const wsp__coll_alg_t wsp__reduce_algs[WSP__REDUCE_COUNT] = {
    [WSP__REDUCE_NATIVE] = {.info = {.name = "native",
                                   .desc = "the MPI library's MPI_Reduce",
                                   .cost = "unknown (the MPI library's choice)"},
                          .run = wsp__coll_native},
};

const wsp__coll_table_t wsp__reduce_table = {
    .coll = WSP_COLL_REDUCE, .name = "reduce", .count = WSP__REDUCE_COUNT,
    .algs = wsp__reduce_algs};
