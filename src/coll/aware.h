/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The trees a communicator builds from its network map (wsp_comm_set_netmap),
 * for the `aware` algorithms of bcast, reduce, gather and scatter.
 *
 * Attaching a map turns its per-node figures into the rank-by-rank latency
 * and time-per-byte matrices that src/patterns/aware_tree.h takes, and
 * allocates everything the trees will need, once: a collective must not run
 * out of memory half-way, when its partners are already waiting. A tree is
 * built for a (collective, root, protocol, size rounded up to a power of
 * two) the first time a call needs it, by the selection's cost function or
 * by the algorithm, and kept in a small cache: the same sizes come back in
 * most programs, and building costs up to milliseconds
 * (docs/results/aware_trees.md). Every rank builds the same
 * tree from the same map (aware_tree.h says why), so no tree is ever sent.
 *
 * Segments. For bcast and reduce the builder's tree, which sends the
 * message whole along every edge, is set against a pipelined path through
 * the map (wsp__aware_path) for segments of WSP__AWARE_SEG_MIN to
 * WSP__AWARE_SEG_MAX bytes, each eager or rendezvous by the eager limit,
 * and the one predicted to be faster is kept: for long messages that is
 * the path, which runs as the chain does (wsp__bcast_path,
 * wsp__reduce_path) in the map's order. Auto prices a path as the chain's
 * model cost times the ratio of the path's time to the chain's order's
 * on the map (the same rule as for trees, against the algorithm whose code
 * it runs).
 *
 * Protocol. A tree is built for eager messages when the bytes an edge
 * carries (the message, or one rank's block for gather and scatter) are at
 * most the map's eager limit between nodes, and for rendezvous above it;
 * where the map has no eager limit, at most WSP__AWARE_EAGER_DEFAULT bytes
 * count as eager.
 *
 * What auto compares. The map's figures and the model's (calibrated once,
 * for the whole communicator) are different measurements, so the aware
 * tree's time on the map is not set against the other algorithms' model
 * costs directly. Instead its cost is the binomial algorithm's model cost
 * times the ratio of the two trees' times on the map: the map says how much
 * better than binomial the tree is, the model what binomial costs. On a
 * uniform network the ratio is 1 and the two tie, and auto keeps binomial
 * (the earlier row); ratios above 1 - WSP__AWARE_MARGIN count as 1, so that
 * the noise of a measured map on a uniform network does not swap trees.
 *
 * A refreshed map. Attaching a map again (of the same job shape: a
 * refreshed one) replaces a rank pair's figures only where its latency or
 * time per byte moved by more than WSP__AWARE_DRIFT, and when none moved
 * (nor the eager limit) the trees built so far are kept. A refresh measures
 * each pair with a few round trips and one short stream, and its noise
 * would otherwise move every figure a little and drop every tree after
 * every refresh; a link that changed for real (a rate halved, a congested
 * uplink) moves by more.
 * When a figure moved, every tree is built again on its next use: a tree
 * is the outcome of comparisons among all pairs, and one changed pair can
 * change any of them. Which figures are kept depends only on the figures
 * attached before and the new map, both the same on every rank, so every
 * rank still builds the same tree for the same call.
 */
#ifndef WSP_COLL_AWARE_H
#define WSP_COLL_AWARE_H

#include "coll_internal.h"
#include "select.h"
#include "../patterns/aware_tree.h"

enum {
  WSP__AWARE_CACHE = 16,    /* trees kept per communicator */
  WSP__AWARE_MAX_P = 1024   /* the most ranks trees are built for: the
                               matrices take 16.p^2 bytes */
};
#define WSP__AWARE_EAGER_DEFAULT ((size_t)64 * 1024)
#define WSP__AWARE_MARGIN 0.05
/* The segments a pipelined path is tried with: powers of two from MIN to
 * MAX, at least two per message. */
#define WSP__AWARE_SEG_MIN ((size_t)4 << 10)
#define WSP__AWARE_SEG_MAX ((size_t)1 << 20)
#define WSP__AWARE_DRIFT 0.2

/* One tree and what the algorithms need to walk it. */
typedef struct wsp__aware_entry {
  int valid;
  wsp_coll_t coll;
  int root;
  size_t bytes; /* the bytes per edge it was built for (wsp__aware_get) */
  int proto;    /* wsp__aware_proto_t */
  /* Predicted seconds on the map: this tree, and the algorithm auto
   * scales (above): binomial for a tree, the chain's order for a path. */
  double time, ref;
  size_t seg;   /* 0: the tree runs whole; else it is a path that runs in
                   segments of seg bytes (wsp__aware_path) */
  wsp__aware_tree_t tree;
  /* Subtree sizes, and the ranks in depth-first order (a rank, then its
   * children's subtrees in its child order), with each rank's position in
   * it: v's subtree is order[pos[v] .. pos[v] + size[v]). Gather and scatter
   * keep their blocks in this order. */
  int *size, *order, *pos;
} wsp__aware_entry_t;

struct wsp__aware {
  int p;
  uint64_t shape;       /* the attached map's (wsp__netmap_shape) */
  double *alpha, *beta; /* p x p, aware_tree.h's layout */
  size_t eager;         /* bytes up to which edges are eager */
  void *work;           /* wsp__aware_work_size(p) */
  wsp__aware_tree_t scratch; /* the binomial tree, for the ratio */
  wsp__aware_entry_t entry[WSP__AWARE_CACHE];
  int next;             /* the entry to replace next */
  int *ints;            /* the one allocation behind every int array */
};

/* The tree for coll (bcast, reduce, gather or scatter) from root with
 * `bytes` bytes per edge (the message, or one block), from the cache or
 * built now. Never fails for a communicator with a map: everything was
 * allocated when it was attached, and the arguments were checked. */
const wsp__aware_entry_t *wsp__aware_get(struct wsp__aware *aw, wsp_coll_t coll,
                                         int root, size_t bytes);
/* The cost auto compares (see above): the model cost of the binomial
 * algorithm for shape s (binomial_cost) for a tree, of the chain
 * (chain_cost, which the caller computes with the same model and shape)
 * for a path, times the map's ratio. */
double wsp__aware_cost(const wsp__coll_shape_t *s, wsp_coll_t coll, double binomial_cost,
                       double chain_cost);

#endif
