/*
 * alltoall: the algorithm table. Row order is the order wsp-info and wsp-bench
 * list them in; "native" is always row 0.
 */
#include "alltoall.h"

enum {
  WSP__ALLTOALL_NATIVE = 0,
  WSP__ALLTOALL_COUNT
};

static const wsp__coll_alg_t wsp__alltoall_algs[WSP__ALLTOALL_COUNT] = {
    [WSP__ALLTOALL_NATIVE] = {.info = {.name = "native",
                                   .desc = "the MPI library's MPI_Alltoall",
                                   .cost = "unknown (the MPI library's choice)"},
                          .run = wsp__coll_native},
};

const wsp__coll_table_t wsp__alltoall_table = {
    .coll = WSP_COLL_ALLTOALL, .name = "alltoall", .count = WSP__ALLTOALL_COUNT,
    .algs = wsp__alltoall_algs};
