/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The registry of collective algorithms. Everything wirespeed knows about
 * an algorithm comes from its row below: the enum value, the prototypes,
 * the table row (src/coll/registry.c) with its name, description,
 * preconditions and fallback, and through the table what selection,
 * WSP_<COLL>_ALGORITHM, rules files, wsp-info and docs/coll.md see.
 *
 * A row is
 *
 *   X(__VA_ARGS__, ID, name, preconditions, fallback, description)
 *
 *   ID             the enum value WSP__<COLL>_<ID>, the table index;
 *   name           what users write; the algorithm's file is
 *                  src/coll/<coll>/<coll>_<name>.c and defines
 *                  wsp__<coll>_<name> (run) and its cost with WSP__COST;
 *   preconditions  WSP__PRE_* flags (coll_internal.h), checked centrally;
 *   fallback       the ID to run instead when they do not hold (NATIVE,
 *                  the MPI library's own collective, ends every chain);
 *   description    one sentence.
 *
 * Row 0 of every table, NATIVE, is not in the lists: it is the same for
 * every collective (wsp__coll_native, cost unknown). The list of the
 * collectives, WSP__COLLS, gives each its MPI call and must follow the
 * order of wsp_coll_t (registry.c checks the count).
 *
 * Adding an algorithm: one row here and one file. tests/unit/test_registry.c
 * checks every table; tests/mpi/test_coll.c runs every row at many rank
 * counts against the MPI library's result and checks that a forced row
 * ran wherever its conditions hold (by its own list of conditions, which a
 * row with preconditions joins), and mpi.coll_coverage fails unless every
 * row ran in one of those tests.
 */
#ifndef WSP_COLL_REGISTRY_H
#define WSP_COLL_REGISTRY_H

/* X(ID, name, the MPI library's call) */
#define WSP__COLLS(X)                                                                              \
  X(BCAST, bcast, "MPI_Bcast")                                                                     \
  X(REDUCE, reduce, "MPI_Reduce")                                                                  \
  X(ALLREDUCE, allreduce, "MPI_Allreduce")                                                         \
  X(GATHER, gather, "MPI_Gather")                                                                  \
  X(SCATTER, scatter, "MPI_Scatter")                                                               \
  X(ALLGATHER, allgather, "MPI_Allgather")                                                         \
  X(ALLTOALL, alltoall, "MPI_Alltoall")                                                            \
  X(ALLTOALLV, alltoallv, "MPI_Alltoallv")                                                         \
  X(ALLGATHERV, allgatherv, "MPI_Allgatherv")                                                      \
  X(REDUCE_SCATTER, reduce_scatter, "MPI_Reduce_scatter")

/* The algorithms of each collective, in the order wsp-info and wsp-bench
 * list them. */
/* clang-format off */
#define WSP__BCAST_ALGS(X, ...)                                                \
  X(__VA_ARGS__, BINOMIAL, binomial, 0, NATIVE,                                \
    "binomial tree from the root; each rank forwards the whole "               \
    "message to its children")                                                \
  X(__VA_ARGS__, KNOMIAL, knomial, 0, NATIVE,                                  \
    "k-nomial tree with k=4 from the root; each rank sends the whole "         \
    "message to the k-1 children of a level at once")                          \
  X(__VA_ARGS__, CHAIN, chain, 0, NATIVE,                                      \
    "pipelined chain root -> root+1 -> ...; segments of seg bytes are "        \
    "forwarded while the next ones arrive")                                    \
  X(__VA_ARGS__, SPLIT_BINARY, split_binary, 0, NATIVE,                        \
    "two binary trees under the root, one per half of the message, "           \
    "pipelined in segments; then each rank swaps halves with its "             \
    "partner in the other tree")                                               \
  X(__VA_ARGS__, TWO_TREE, two_tree, 0, NATIVE,                                \
    "two binary trees under the root, one per half of the message, "           \
    "pipelined in segments; no rank forwards in both, so none sends "          \
    "more than the message, and the depth is about lg p")                      \
  X(__VA_ARGS__, SCATTER_RING, scatter_ring, 0, NATIVE,                        \
    "van de Geijn: binomial scatter of p blocks from the root, then "          \
    "ring allgather")                                                          \
  X(__VA_ARGS__, SCATTER_RDB, scatter_rdb, 0, NATIVE,                          \
    "binomial scatter of p blocks from the root, then "                        \
    "recursive-doubling allgather (any p: fix-up steps where p cuts a "        \
    "group short)")                                                           \
  X(__VA_ARGS__, AWARE, aware, WSP__PRE_NETMAP, BINOMIAL,                      \
    "tree built from the network map for the shortest predicted time; "       \
    "each rank sends the whole message to its children one after "           \
    "another, or for long messages a path through the map in segments")       \
  X(__VA_ARGS__, SITES, sites, WSP__PRE_SITES, SCATTER_RING,                   \
    "multi-site van de Geijn: the root's blocks to its site's n gateways, "   \
    "n transfers at once to every other site's gateways, pieces to the "      \
    "groups, ring allgather inside each site")                                \
  X(__VA_ARGS__, SITES_CHAIN, sites_chain, WSP__PRE_SITES, CHAIN,              \
    "n pipelined chains through every rank, one per connection between two "  \
    "sites, each carrying a block of the message in segments")               \
  X(__VA_ARGS__, FAR_FIRST, far_first, WSP__PRE_SITES, BINOMIAL,               \
    "the root sends the whole message to one rank of every other site, "      \
    "then each site broadcasts it (the model's choice for a site)")

#define WSP__REDUCE_ALGS(X, ...)                                               \
  X(__VA_ARGS__, BINOMIAL, binomial, 0, NATIVE,                                \
    "binomial tree toward the root; each rank combines its children's "        \
    "whole vectors, in rank order for any root")                               \
  X(__VA_ARGS__, CHAIN, chain, 0, NATIVE,                                      \
    "pipelined chain of segments ending at the root (at rank 0, then "         \
    "one hop to the root, for non-commutative ops)")                           \
  X(__VA_ARGS__, RABENSEIFNER, rabenseifner, 0, NATIVE,                        \
    "reduce-scatter by recursive halving, then binomial gather to the "        \
    "root (any p: the first 2(p - q) ranks fold in pairs)")                   \
  X(__VA_ARGS__, AWARE, aware, WSP__PRE_NETMAP | WSP__PRE_COMMUTATIVE,         \
    BINOMIAL,                                                                  \
    "tree built from the network map for the shortest predicted time; "       \
    "each rank combines its children's whole vectors as they arrive, or "     \
    "for long vectors a path through the map in segments")

#define WSP__ALLREDUCE_ALGS(X, ...)                                            \
  X(__VA_ARGS__, RECURSIVE_DOUBLING, recursive_doubling, 0, NATIVE,            \
    "whole-vector exchanges with partners 1, 2, 4, ... apart (any p: "         \
    "the first 2(p - q) ranks fold in pairs)")                                 \
  X(__VA_ARGS__, RING, ring, WSP__PRE_COMMUTATIVE, RECURSIVE_DOUBLING,         \
    "segmented ring: reduce-scatter then allgather around the ring, "          \
    "segments pipelined")                                                      \
  X(__VA_ARGS__, RABENSEIFNER, rabenseifner, 0, NATIVE,                        \
    "reduce-scatter by recursive halving, allgather by recursive "             \
    "doubling (any p: the first 2(p - q) ranks fold in pairs)")                \
  X(__VA_ARGS__, HIER, hier,                                                   \
    WSP__PRE_SHARED_NODES | WSP__PRE_NODE_ORDER | WSP__PRE_DENSE, RABENSEIFNER, \
    "node-aware: reduce inside each node (shared memory), allreduce "          \
    "among one leader per node, bcast inside each node; each step "            \
    "picks its own algorithm")                                                 \
  X(__VA_ARGS__, SITES, sites, WSP__PRE_SITES | WSP__PRE_COMMUTATIVE, TWO_TIER, \
    "multi-site Rabenseifner: ring reduce-scatter in each site, pieces to "   \
    "n gateways, n exchanges at once between sites, pieces back, ring "       \
    "allgather in each site")                                                 \
  X(__VA_ARGS__, TWO_TIER, two_tier,                                           \
    WSP__PRE_SITES | WSP__PRE_COMMUTATIVE | WSP__PRE_DENSE, RABENSEIFNER,      \
    "reduce in each site, the sites' sums exchanged between one rank per "    \
    "site, bcast in each site (the model's choice for each site step)")

#define WSP__GATHER_ALGS(X, ...)                                               \
  X(__VA_ARGS__, LINEAR, linear, 0, NATIVE,                                    \
    "every rank sends its block to the root, which receives them all "         \
    "directly into place")                                                     \
  X(__VA_ARGS__, BINOMIAL, binomial, 0, NATIVE,                                \
    "binomial tree towards the root; each rank forwards its subtree's "        \
    "blocks in one message")                                                  \
  X(__VA_ARGS__, AWARE, aware, WSP__PRE_NETMAP, BINOMIAL,                      \
    "tree built from the network map for the shortest predicted time; "       \
    "each rank forwards its subtree's blocks in one message")

#define WSP__SCATTER_ALGS(X, ...)                                              \
  X(__VA_ARGS__, LINEAR, linear, 0, NATIVE,                                    \
    "the root sends every rank its block directly")                            \
  X(__VA_ARGS__, BINOMIAL, binomial, 0, NATIVE,                                \
    "binomial tree from the root; each rank receives its subtree's "           \
    "blocks in one message and passes them on")                               \
  X(__VA_ARGS__, AWARE, aware, WSP__PRE_NETMAP, BINOMIAL,                      \
    "tree built from the network map for the shortest predicted time; "       \
    "each rank receives its subtree's blocks in one message and passes "      \
    "them on")

#define WSP__ALLGATHER_ALGS(X, ...)                                            \
  X(__VA_ARGS__, RING, ring, 0, NATIVE,                                        \
    "p-1 steps around the ring; each rank forwards the block it "              \
    "received last")                                                           \
  X(__VA_ARGS__, RECURSIVE_DOUBLING, recursive_doubling, WSP__PRE_POW2, BRUCK, \
    "lg p exchanges with rank XOR 2^k, the held range doubling each "          \
    "step (power-of-two p)")                                                   \
  X(__VA_ARGS__, BRUCK, bruck, 0, NATIVE,                                      \
    "Bruck's algorithm: ceil(lg p) steps at distance 2^k, then a "             \
    "local rotation; any p")

#define WSP__ALLTOALL_ALGS(X, ...)                                             \
  X(__VA_ARGS__, PAIRWISE, pairwise, 0, NATIVE,                                \
    "p-1 steps, one exchange per step (rank XOR i for power-of-two p, "        \
    "else r+i / r-i)")                                                         \
  X(__VA_ARGS__, BRUCK, bruck, 0, NATIVE,                                      \
    "Bruck's algorithm: ceil(lg p) steps of about p/2 packed blocks, "         \
    "local rotations; any p")                                                  \
  X(__VA_ARGS__, LINEAR, linear, 0, NATIVE,                                    \
    "direct exchange with every peer in rotated order, at most 8 "             \
    "peers in flight")

/* Every alltoallv algorithm posts all of its receives before it waits for
 * anything and differs only in how it paces its own sends, so ranks may
 * choose differently (each sees only its own counts) and still never
 * wait on each other in a cycle. Empty blocks are never sent. */
#define WSP__ALLTOALLV_ALGS(X, ...)                                                                \
  X(__VA_ARGS__, PAIRWISE, pairwise, 0, NATIVE,                                                    \
    "one send at a time in the pairwise order (rank XOR i for power-of-two "                       \
    "p, else r+i), each finished before the next")                                                 \
  X(__VA_ARGS__, LINEAR, linear, 0, NATIVE,                                                        \
    "sends in rotated order r+1, r+2, ..., at most 8 in flight")                                   \
  X(__VA_ARGS__, SPARSE, sparse, 0, NATIVE,                                                        \
    "every non-empty send at once; for rows where most counts are zero")

#define WSP__ALLGATHERV_ALGS(X, ...)                                                               \
  X(__VA_ARGS__, RING, ring, 0, NATIVE,                                                            \
    "every block travels the ring in segments, forwarded as they arrive, "                         \
    "so a large block pipelines instead of holding up p-1 steps")                                  \
  X(__VA_ARGS__, BRUCK, bruck, 0, NATIVE,                                                          \
    "Bruck's algorithm: ceil(lg p) steps at distance 2^k, held blocks "                            \
    "packed in rank order; any p")

#define WSP__REDUCE_SCATTER_ALGS(X, ...)                                                           \
  X(__VA_ARGS__, RING, ring, WSP__PRE_COMMUTATIVE, HALVING,                                        \
    "p-1 steps around the ring; each rank adds its part to the partial "                           \
    "block it receives and passes it on, ending at the block's owner")                             \
  X(__VA_ARGS__, HALVING, halving, 0, NATIVE,                                                      \
    "recursive halving at block boundaries (any p: the first 2(p - q) "                            \
    "ranks fold in pairs), in rank order for any op")                                              \
  X(__VA_ARGS__, PAIRWISE, pairwise, WSP__PRE_COMMUTATIVE, HALVING,                                \
    "p-1 steps; at step i each rank sends its part of block r+i to its "                           \
    "owner and adds the part of r-i for its own block")

/* clang-format on */

/* ---- what the lists give ---- */

/* The enum of each collective's algorithms: WSP__BCAST_NATIVE (0),
 * WSP__BCAST_BINOMIAL, ..., WSP__BCAST_COUNT. */
#define WSP__ALG_ENUM(C, c, ID, name, pre, fb, desc) WSP__##C##_##ID,
#define WSP__COLL_ENUM(C, c, mpi)                                              \
  enum { WSP__##C##_NATIVE = 0, WSP__##C##_ALGS(WSP__ALG_ENUM, C, c)          \
         WSP__##C##_COUNT };
WSP__COLLS(WSP__COLL_ENUM)
#undef WSP__COLL_ENUM

/* Each algorithm's run function, cost function and cost formula. */
#define WSP__ALG_PROTO(C, c, ID, name, pre, fb, desc)                          \
  int wsp__##c##_##name(wsp_comm_t *comm, const wsp__coll_args_t *a);          \
  double wsp__##c##_##name##_cost(const wsp_model_t *m,                        \
                                  const wsp__coll_shape_t *s,                  \
                                  wsp__coll_tune_t *t);                        \
  extern const char wsp__##c##_##name##_formula[];
#define WSP__COLL_PROTO(C, c, mpi) WSP__##C##_ALGS(WSP__ALG_PROTO, C, c)
WSP__COLLS(WSP__COLL_PROTO)
#undef WSP__COLL_PROTO

/* Defines the cost function of algorithm `name` of collective `coll` and
 * its formula as text, written once, right above the code that computes
 * it: the text is what the table, wsp-info and docs/coll.md show. In the
 * formulas, n is the whole message for bcast, reduce and allreduce and one
 * rank's block for the others; seg is the segment size of pipelined
 * algorithms. For the vector forms N is the sum of the blocks and c the
 * largest (allgatherv, reduce_scatter: every rank's block, which every
 * rank knows); for alltoallv N is the larger of what this rank sends and
 * receives and k the peers it sends to (what it alone knows). The function's parameters are m (the model), s (the call's
 * shape) and t (tuning it may choose, such as the segment size; may be
 * NULL). Usage:
 *
 *   WSP__COST(bcast, binomial, "ceil(lg p).(alpha + n.beta)") {
 *     return wsp__ceil_log2(s->p) * (m->alpha + (double)s->bytes * m->beta);
 *   }
 */
#define WSP__COST(coll, name, formula)                                         \
  const char wsp__##coll##_##name##_formula[] = formula;                       \
  double wsp__##coll##_##name##_cost(const wsp_model_t *m,                     \
                                     const wsp__coll_shape_t *s,               \
                                     wsp__coll_tune_t *t)

#endif
