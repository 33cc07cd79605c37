/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Trees built from a measured map of pairs: the pure construction (no MPI).
 *
 * The map. For p ranks, alpha[i*p + j] is the latency (seconds) and
 * beta[i*p + j] the time per byte (seconds) of a message from rank i to
 * rank j; the matrices need not be symmetric. A message of b bytes from i
 * to j costs
 *   eager       c(i, j, b) = alpha_ij + b.beta_ij
 *   rendezvous  c(i, j, b) = (alpha_ij + alpha_ji) + alpha_ij + b.beta_ij
 * (rendezvous first pays the handshake's round trip, the sender's request
 * and the receiver's answer, then sends the data as eager does). The best
 * tree differs between the two: the handshake adds a round trip to every
 * edge, and one that depends on the way back, so a pair with a cheap way
 * there and a slow way back is worth less under rendezvous, and the
 * latency terms weigh more against the bandwidth terms.
 *
 * Broadcast (and scatter). A rank can send once it holds the message; the
 * root holds it at time 0. A rank sends to its children one after another,
 * in the order of its child list: a send occupies the sender for its whole
 * cost c, the next one starts when it has ended, and the child holds the
 * message (and can forward it) when its send ends. So a rank v holding the
 * message at t sends to its k-th child c_k during [t + S_k, t + S_k +
 * c(v, c_k)), S_k being the sum of the costs of its earlier sends. The
 * predicted time of a tree is when the last rank holds the message. These
 * serialised sends are what make the binomial tree the best one under
 * uniform costs (every holder sends to a new rank in every round, so the
 * number of holders doubles each round: ceil(lg p) rounds), and they are
 * what one network link per rank imposes on large messages. The model
 * ignores that a real eager send can return before its data has arrived:
 * it is pessimistic for eager sends of small messages to many children.
 *
 * Reduce (and gather) run the tree upwards. Every rank starts at time 0
 * and sends to its parent once it has received from all its children. A
 * parent receives from its children one after another, through its one
 * link, in the order of its child list: receive k starts when its child is
 * ready to send and receive k - 1 has ended, and costs c(child, parent).
 * The predicted time is when the root has received everything. Running
 * such a schedule backwards in time gives a broadcast schedule on the same
 * tree with the transposed costs c'(i, j) = c(j, i) and each child list
 * reversed, and the other way round, so the two problems are one: an
 * upward tree is built as the broadcast tree of the transposed map, whose
 * child lists are then reversed into receive order, and its time is that
 * broadcast's. (The evaluator computes it upwards, directly; the unit test
 * checks that the two agree.) The cost of the reduction operator is not
 * modelled, and these trees combine partial results in no particular rank
 * order: only commutative operators can use them.
 *
 * Gather and scatter (WSP__AWARE_BLOCKS): the edge into c carries the
 * blocks of every rank in c's subtree, n bytes each: c(v, c, n.size(c)),
 * a rendezvous cost when that is more than the eager limit pb->eager.
 * Otherwise the model is the broadcast's (scatter) or the reduce's
 * (gather).
 *
 * Constructions (all in the broadcast view, over the transposed map for
 * upward trees).
 * 1. Earliest completion first (wsp__aware_greedy). The root holds the
 *    message; every rank's next free time is when it received it (0 for
 *    the root). Repeatedly take, among all pairs (s holding the message, r
 *    not holding it), the one whose send would end first, free(s) +
 *    c(s, r); add the edge s -> r at the end of s's child list; r holds
 *    the message then, and that is also when both s and r are next free.
 *    Ties go to the earliest end, then the lowest sender, then the
 *    cheapest edge and the lowest receiver. With blocks the greedy cannot
 *    know the subtree sizes it is building and prices every edge at one
 *    block. Under uniform costs it takes ceil(lg p) rounds, the binomial
 *    tree's time; otherwise nothing bounds it: it takes the cheapest edges
 *    first and may spend the root's first send on a rank that leads
 *    nowhere (on the unit test's random maps, trees up to twice as slow as
 *    the best: docs/results/aware_trees.md).
 * 2. Child order. For a fixed parent of every rank, v's subtree ends at
 *    max_k (S_k + c(v, c_k) + T(c_k)), T(c) being how long c's subtree
 *    takes once c has the message: one machine with delivery times, for
 *    which Jackson's rule (largest T first) is optimal. Computing T bottom
 *    up and sorting each child list so gives the best orders of a given
 *    tree exactly.
 * 3. Improvement on the critical path (part of wsp__aware_heuristic, for p
 *    up to WSP__AWARE_IMPROVE_MAX_P). Only a change that delays the last
 *    rank less can help, so the candidates are the ranks on the path from
 *    the root to the last rank and the siblings sent to before them. Each
 *    is tried under every other parent, with its subtree (a move) and
 *    alone, its children going to its old parent (a splice), child orders
 *    by 2; the change that shortens the time most is made, and this
 *    repeats (at most p rounds) while one helps.
 * 4. Exact search (wsp__aware_exact, for p up to WSP__AWARE_EXACT_MAX_P):
 *    with f(v, S) the shortest time in which v, holding the message, can
 *    reach the set S: f(v, {}) = 0 and f(v, S) = min over v's first child
 *    c in S and the set A in S - {c} that c's subtree covers of
 *    c(v, c) + max(f(c, A), f(v, S - {c} - A)) (with blocks that first
 *    send carries |A| + 1 of them), over all subsets: the best tree over
 *    all trees and all child orders, in O(p^2 3^p).
 * wsp__aware_heuristic is 1, 2 and 3. wsp__aware_build takes the exact
 * tree up to WSP__AWARE_EXACT_MAX_P ranks and the heuristic's beyond, then
 * returns the best of that, the binomial tree and the binomial tree with
 * its children re-sorted by 2, all judged by wsp__aware_time, so its time
 * is never above the binomial tree's. (Why an exact search at all: the
 * issue's target is a tree within 10% of the best one for p <= 8, and no
 * polynomial construction tried here reached it on the unit test's maps:
 * not 1 + 2 + 3, nor local searches with larger neighbourhoods, look-ahead
 * or annealing; while the exact search takes milliseconds up to p = 10.
 * docs/results/aware_trees.md has the figures and what was tried.)
 *
 * The same inputs give the same tree on every rank: everything is decided
 * by comparisons of doubles computed in a fixed order, ties go to the
 * lowest rank, and nothing depends on memory contents or addresses (with
 * the same build of the library: a compiler that contracts a.b + c into
 * one fused operation on one rank and not on another could round
 * differently).
 *
 * Cost (p ranks). The greedy sorts each rank's row of edge costs once,
 * O(p^2 log p), then adds p - 1 edges, each found by one pass over the
 * senders with a pointer per sender to its cheapest receiver that lacks
 * the message: O(p^2) in all. Child orders and evaluation are O(p log p).
 * A round of step 3 evaluates up to 2p trees per candidate, O(p log p)
 * each, and there are at most p rounds; it runs only up to
 * WSP__AWARE_IMPROVE_MAX_P ranks. The exact search runs only up to
 * WSP__AWARE_EXACT_MAX_P ranks. So wsp__aware_build is O(p^2 log p) for
 * p > WSP__AWARE_IMPROVE_MAX_P and bounded by a constant below
 * (docs/results/aware_trees.md: milliseconds up to p = 64, about 0.1 s at
 * p = 1024, where sorting the rows is most of it).
 *
 * Memory: nothing allocates. The caller passes a work area of
 * wsp__aware_work_size(p) bytes (about 4.p^2 bytes, one row order per
 * rank, plus up to 130 kB for the exact search), aligned for a
 * double (any malloc result is), which a collective can allocate once with
 * its communicator, and the output arrays.
 *
 * Trees use absolute ranks (not relative to the root, unlike tree.h), in
 * CSR form: parent[v] (-1 for the root); v's children are
 * children[child_start[v] .. child_start[v + 1]) in the order v sends to
 * them (downwards) or receives from them (upwards); child_start[0] = 0 and
 * child_start[p] = p - 1.
 *
 * Every function returns 0, or -1 (the value of WSP_ERR_ARG) for a bad
 * argument: a NULL pointer, p < 1, a root out of range, an unknown enum
 * value, a cost that is negative, infinite or NaN (comparisons with a NaN
 * would make the construction meaningless), or n times p - 1 blocks
 * overflowing a size_t.
 */
#ifndef WSP_PATTERNS_AWARE_TREE_H
#define WSP_PATTERNS_AWARE_TREE_H

#include <stddef.h>

typedef enum wsp__aware_proto {
  WSP__AWARE_EAGER = 0, /* c = alpha_ij + b.beta_ij */
  WSP__AWARE_RNDV = 1   /* c = (alpha_ij + alpha_ji) + alpha_ij + b.beta_ij */
} wsp__aware_proto_t;

typedef enum wsp__aware_dir {
  WSP__AWARE_DOWN = 0, /* parents send to children: bcast, scatter */
  WSP__AWARE_UP = 1    /* children send to parents: reduce, gather */
} wsp__aware_dir_t;

typedef enum wsp__aware_load {
  WSP__AWARE_WHOLE = 0, /* every edge carries n bytes: bcast, reduce */
  WSP__AWARE_BLOCKS = 1 /* an edge carries n bytes per rank of the child's
                           subtree: scatter, gather */
} wsp__aware_load_t;

/* Where wsp__aware_build's tree came from. */
typedef enum wsp__aware_source {
  WSP__AWARE_FROM_EXACT = 0,           /* the exact search */
  WSP__AWARE_FROM_HEURISTIC = 1,       /* greedy, child orders, improvement */
  WSP__AWARE_FROM_BINOMIAL = 2,        /* the binomial tree as it is */
  WSP__AWARE_FROM_BINOMIAL_ORDERED = 3 /* the binomial tree, children re-sorted */
} wsp__aware_source_t;

enum {
  WSP__AWARE_EXACT_MAX_P = 10,  /* the exact search's largest p */
  WSP__AWARE_IMPROVE_MAX_P = 64, /* step 3's largest p; the path's reversals' */
  WSP__AWARE_PATH_PASSES = 4     /* passes of the path's reversals */
};

typedef struct wsp__aware_problem {
  int p;                    /* ranks, >= 1 */
  int root;                 /* 0 <= root < p */
  const double *alpha;      /* p*p latencies (s), alpha[i*p + j]: i to j */
  const double *beta;       /* p*p times per byte (s/B), same layout */
  size_t n;                 /* bytes: the message, or one rank's block */
  wsp__aware_proto_t proto;
  wsp__aware_dir_t dir;
  wsp__aware_load_t load;
  /* The eager limit (bytes): a message of more bytes pays the rendezvous
   * cost whatever proto says. 0: none, proto holds for every message. What
   * it changes is the blocks' edges: near the root of a gather or scatter
   * an edge carries many blocks, and crosses the limit that one block does
   * not. */
  size_t eager;
} wsp__aware_problem_t;

typedef struct wsp__aware_tree {
  int *parent;      /* p entries */
  int *child_start; /* p + 1 entries */
  int *children;    /* p - 1 entries (may be NULL when p == 1) */
} wsp__aware_tree_t;

/* Bytes of the work area that the functions below taking one need. */
size_t wsp__aware_work_size(int p);

/* Cost (s) of one message of `bytes` bytes from `from` to `to` under the
 * problem's protocol and eager limit (its direction and load play no
 * part). Does not check its arguments. */
double wsp__aware_msg_cost(const wsp__aware_problem_t *pb, int from, int to,
                           size_t bytes);

/* Checks that *t is a tree over pb's ranks rooted at pb->root (every other
 * rank has exactly one parent, which lists it once as a child, and all
 * reach the root) and writes its predicted time to *time. On -1, *time is
 * left alone. */
int wsp__aware_time(const wsp__aware_problem_t *pb, const wsp__aware_tree_t *t,
                    void *work, double *time);

/* The binomial tree of tree.h rooted at pb->root, in this form: children
 * largest subtree first downwards, smallest first upwards (the order in
 * which binomial reduce and gather receive). Reads pb->p, root and dir
 * only. */
int wsp__aware_binomial(const wsp__aware_problem_t *pb, wsp__aware_tree_t *out);

/* Construction 1 alone, child lists in the order the greedy added them,
 * and its predicted time. */
int wsp__aware_greedy(const wsp__aware_problem_t *pb, void *work,
                      wsp__aware_tree_t *out, double *time);

/* Constructions 1, 2 and 3 (3 only up to WSP__AWARE_IMPROVE_MAX_P), for
 * any p, and the predicted time. */
int wsp__aware_heuristic(const wsp__aware_problem_t *pb, void *work,
                         wsp__aware_tree_t *out, double *time);

/* Construction 4: the best tree, for p <= WSP__AWARE_EXACT_MAX_P (-1
 * above), and its predicted time. */
int wsp__aware_exact(const wsp__aware_problem_t *pb, void *work,
                     wsp__aware_tree_t *out, double *time);

/* A pipelined path (bcast and reduce, WSP__AWARE_WHOLE loads). A tree's
 * serialised sends cost a rank n bytes per child; a path cut into
 * segments keeps every edge busy with its own segment, so for long
 * messages its time approaches n bytes over its slowest edge. Its
 * predicted time, with s = ceil(n / seg) segments each priced at seg bytes
 * under pb->proto and c_k the cost of one on the k-th edge (downwards from
 * the root; upwards, the same edge the other way), is the fill plus the
 * bottleneck:
 *   sum_k c_k + (s - 1) . max_k c_k
 * (each rank passes one segment at a time, in order; the last, shorter
 * segment counted whole). The path starts at the root. Two are timed: the
 * chain's rank order (root, root + 1, ...) and a nearest-neighbour walk
 * (from the last rank on it, on to the rank left whose segment edge is
 * the cheapest, ties to the lower rank), which keeps a rack's ranks
 * together but is left with whatever edges remain at its end, often the
 * worst; the faster one (the chain's on a tie) is then improved, for p up
 * to WSP__AWARE_IMPROVE_MAX_P, by reversing stretches of it (2-opt: each
 * reversal that shortens the time is kept), for at most
 * WSP__AWARE_PATH_PASSES passes. Writes the path as a tree (every rank one
 * child but the last) and its time, never above the chain's order, and (if
 * chain_time is not NULL) the chain's order's time; -1 for seg = 0 or a
 * BLOCKS problem. O(p^2), and O(p^3) per pass of reversals. */
int wsp__aware_path(const wsp__aware_problem_t *pb, size_t seg, void *work,
                    wsp__aware_tree_t *out, double *time, double *chain_time);

/* The tree to use: exact or heuristic, or the binomial tree where that is
 * not slower. Writes the tree, its predicted time and (if source is not
 * NULL) where it came from. */
int wsp__aware_build(const wsp__aware_problem_t *pb, void *work,
                     wsp__aware_tree_t *out, double *time,
                     wsp__aware_source_t *source);

#endif
