/*
 * allgather: the algorithm table. Row order is the order wsp-info and wsp-bench
 * list them in; "native" is always row 0.
 */
#include "allgather.h"

enum {
  WSP__ALLGATHER_NATIVE = 0,
  WSP__ALLGATHER_COUNT
};

static const wsp__coll_alg_t wsp__allgather_algs[WSP__ALLGATHER_COUNT] = {
    [WSP__ALLGATHER_NATIVE] = {.info = {.name = "native",
                                   .desc = "the MPI library's MPI_Allgather",
                                   .cost = "unknown (the MPI library's choice)"},
                          .run = wsp__coll_native},
};

const wsp__coll_table_t wsp__allgather_table = {
    .coll = WSP_COLL_ALLGATHER, .name = "allgather", .count = WSP__ALLGATHER_COUNT,
    .algs = wsp__allgather_algs};
