/*
 * reduce: the algorithm table. Row order is the order wsp-info and wsp-bench
 * list them in; "native" is always row 0.
 */
#include "reduce.h"

enum {
  WSP__REDUCE_NATIVE = 0,
  WSP__REDUCE_BINOMIAL,
  WSP__REDUCE_CHAIN,
  WSP__REDUCE_RABENSEIFNER,
  WSP__REDUCE_COUNT
};

static const wsp__coll_alg_t wsp__reduce_algs[WSP__REDUCE_COUNT] = {
    [WSP__REDUCE_NATIVE] = {.info = {.name = "native",
                                   .desc = "the MPI library's MPI_Reduce",
                                   .cost = "unknown (the MPI library's choice)"},
                          .run = wsp__coll_native},
    [WSP__REDUCE_BINOMIAL] =
        {.info = {.name = "binomial",
                  .desc = "binomial tree toward the root; each rank combines "
                          "its children's whole vectors, in rank order for "
                          "any root",
                  .cost = "ceil(lg p).(alpha + n.beta + n.gamma)"},
         .cost = wsp__reduce_binomial_cost,
         .run = wsp__reduce_binomial},
    [WSP__REDUCE_CHAIN] =
        {.info = {.name = "chain",
                  .desc = "pipelined chain of segments ending at the root (at "
                          "rank 0, then one hop to the root, for "
                          "non-commutative ops)",
                  .cost = "(p - 1 + s - 1).(alpha + (n/s).b + "
                          "(n/s).gamma), s = ceil(n / seg), b = beta_x (beta "
                          "for p = 2)"},
         .cost = wsp__reduce_chain_cost,
         .run = wsp__reduce_chain},
    [WSP__REDUCE_RABENSEIFNER] =
        {.info = {.name = "rabenseifner",
                  .desc = "reduce-scatter by recursive halving, then binomial "
                          "gather to the root (any p: the first 2(p - q) ranks "
                          "fold in pairs)",
                  .cost = "2.lg q.alpha + ((q-1)/q).n.(beta + beta_x) + "
                          "((q-1)/q).n.gamma + [p != q].(alpha + n.beta + "
                          "n.gamma), q = 2^floor(lg p)"},
         .cost = wsp__reduce_rabenseifner_cost,
         .run = wsp__reduce_rabenseifner},
};

const wsp__coll_table_t wsp__reduce_table = {
    .coll = WSP_COLL_REDUCE, .name = "reduce", .count = WSP__REDUCE_COUNT,
    .algs = wsp__reduce_algs};
