/*
 * alltoall: the algorithm table. Row order is the order wsp-info and wsp-bench
 * list them in; "native" is always row 0.
 */
#include "alltoall.h"

enum {
  WSP__ALLTOALL_NATIVE = 0,
  WSP__ALLTOALL_PAIRWISE,
  WSP__ALLTOALL_BRUCK,
  WSP__ALLTOALL_LINEAR,
  WSP__ALLTOALL_COUNT
};

static const wsp__coll_alg_t wsp__alltoall_algs[WSP__ALLTOALL_COUNT] = {
    [WSP__ALLTOALL_NATIVE] = {.info = {.name = "native",
                                   .desc = "the MPI library's MPI_Alltoall",
                                   .cost = "unknown (the MPI library's choice)"},
                          .run = wsp__coll_native},
    [WSP__ALLTOALL_PAIRWISE] = {.info = {.name = "pairwise",
                                         .desc = "p-1 steps, one exchange per "
                                                 "step (rank XOR i for "
                                                 "power-of-two p, else r+i / r-i)",
                                         .cost = "(p-1).(alpha + n.beta_x)"},
                                .cost = wsp__alltoall_pairwise_cost,
                                .run = wsp__alltoall_pairwise},
    [WSP__ALLTOALL_BRUCK] = {.info = {.name = "bruck",
                                      .desc = "Bruck's algorithm: ceil(lg p) "
                                              "steps of about p/2 packed "
                                              "blocks, local rotations; any p",
                                      .cost = "ceil(lg p).(alpha + (p/2).n.beta_x)"},
                             .cost = wsp__alltoall_bruck_cost,
                             .run = wsp__alltoall_bruck},
    [WSP__ALLTOALL_LINEAR] = {.info = {.name = "linear",
                                       .desc = "direct exchange with every "
                                               "peer in rotated order, at most "
                                               "8 peers in flight",
                                       .cost = "(p-1).n.beta + ceil((p-1)/8).alpha"},
                              .cost = wsp__alltoall_linear_cost,
                              .run = wsp__alltoall_linear},
};

const wsp__coll_table_t wsp__alltoall_table = {
    .coll = WSP_COLL_ALLTOALL, .name = "alltoall", .count = WSP__ALLTOALL_COUNT,
    .algs = wsp__alltoall_algs};
