/*
 * allreduce: the algorithm table. Row order is the order wsp-info and wsp-bench
 * list them in; "native" is always row 0.
 */
#include "allreduce.h"

enum {
  WSP__ALLREDUCE_NATIVE = 0,
  WSP__ALLREDUCE_COUNT
};

static const wsp__coll_alg_t wsp__allreduce_algs[WSP__ALLREDUCE_COUNT] = {
    [WSP__ALLREDUCE_NATIVE] = {.info = {.name = "native",
                                   .desc = "the MPI library's MPI_Allreduce",
                                   .cost = "unknown (the MPI library's choice)"},
                          .run = wsp__coll_native},
};

const wsp__coll_table_t wsp__allreduce_table = {
    .coll = WSP_COLL_ALLREDUCE, .name = "allreduce", .count = WSP__ALLREDUCE_COUNT,
    .algs = wsp__allreduce_algs};
