/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Internal interface of the collectives (src/coll).
 *
 * The layers, top down:
 *   coll_entry.c  the public entry points (wsp_bcast, ...): check every
 *                 argument before any traffic and bring the buffers into the
 *                 form the algorithms take (wsp__coll_args_t below);
 *   select.c      choose the algorithm (forced, rules file, or cheapest by
 *                 the model), check its preconditions once and walk its
 *                 fallbacks; wsp_coll_select and wsp_coll_predict;
 *   coll.c        run the chosen algorithm; the native one (row 0);
 *   registry.[ch] one row per algorithm (names, preconditions, fallbacks,
 *                 costs) and the tables built from the rows;
 *   <coll>/<coll>_<alg>.c  one algorithm each, with its cost.
 * Algorithms never see a bad argument or an unmet precondition. Messages go
 * through src/core/p2p.h, schedules come from src/patterns, costs use
 * src/model/model.h.
 */
#ifndef WSP_COLL_INTERNAL_H
#define WSP_COLL_INTERNAL_H

#include "wsp_internal.h"
#include "tags.h"
#include "../model/model.h"
#include "../p2p/wan.h"

#include <stddef.h>
#include <string.h>

/* ---- preconditions, declared once per algorithm in its registry row ----
 * X(flag, bit, text); the text is what wsp_coll_alg_preconditions, wsp-info
 * and docs/coll.md show; wsp__pre_holds (select.c) tests them. */
#define WSP__PRE_MAP(X)                                                        \
  X(COMMUTATIVE, 0, "commutative op")                                          \
  X(POW2, 1, "p a power of two")                                               \
  /* Two nodes or more, and a node with two ranks or more. */                  \
  X(SHARED_NODES, 2, "two nodes or more, one with two ranks or more")          \
  /* Reducing inside nodes first keeps rank order. */                          \
  X(NODE_ORDER, 3, "commutative op, or nodes in blocks of consecutive ranks") \
  /* The result may be copied as bytes. */                                     \
  X(DENSE, 4, "a datatype without holes")                                      \
  /* The aware trees (src/coll/aware.h). */                                    \
  X(NETMAP, 5, "a network map attached (wsp_comm_set_netmap)")                \
  /* The multi-site algorithms (src/coll/sites.h). */                          \
  X(SITES, 6, "two sites or more (WSP_SITES or the map's groups)")
#define WSP__PRE_ENUM(flag, bit, text) WSP__PRE_##flag = 1u << (bit),
enum { WSP__PRE_MAP(WSP__PRE_ENUM) };
#undef WSP__PRE_ENUM

/* What the model and the preconditions look at; every rank has the same
 * values (they come from arguments every rank shares). */
typedef struct wsp__coll_shape {
  int p;
  size_t bytes;  /* bcast/reduce/allreduce: the whole message; others: one
                    rank's block */
  size_t count;  /* elements (reductions; bytes for data movement) */
  int commutative;
  int dense;     /* the datatype has no holes (always 1 for data movement) */
  int root;      /* rooted collectives; 0 for the public select/predict calls */
  /* The communicator's nodes and its network map's trees (NULL: no map),
   * filled by wsp__coll_shape_topo. */
  int nodes, max_node_ranks, node_blocks;
  struct wsp__aware *aware;
  /* The communicator's sites (NULL: fewer than two) and the connections
   * between two sites (src/coll/sites.h, wsp__sites_conns); wan_forced
   * when the user set them (cfg.wan_connections), not the model; the
   * lanes of each connection (wsp__sites_lanes) and the shortest message
   * that goes over lanes (cfg.p2p_min). */
  const wsp__sites_t *sites;
  int wan_n, wan_forced, wan_lanes;
  size_t lane_min;
  /* With sites, the model as it is inside a site, for a flat algorithm
   * whose cost prices each step by whether it crosses (wsp__xstep_cost);
   * set by wsp__coll_alg_cost, NULL otherwise. */
  const wsp_model_t *inside;
  /* The vector forms (wsp__shape_block): allgatherv and reduce_scatter,
   * every rank's block in bytes (NULL: p blocks of `bytes`), `total` their
   * sum; alltoallv, this rank's own figures: `total` the larger of its
   * bytes out and in (others than itself), `peers` the ranks it sends to. */
  const size_t *blocks;
  size_t total;
  int peers;
} wsp__coll_shape_t;

/* Block i of a vector form's shape, in bytes. */
static inline size_t wsp__shape_block(const wsp__coll_shape_t *s, int i) {
  return s->blocks ? s->blocks[i] : s->bytes;
}

/* Whether shape s meets the preconditions `pre` (select.c). */
int wsp__pre_holds(unsigned pre, const wsp__coll_shape_t *s);
/* The preconditions as text ("commutative op; p a power of two"), into
 * buf; "" when there are none (registry.c). */
void wsp__pre_text(unsigned pre, char *buf, size_t len);

/* Tuning that the model chooses along with an algorithm. */
typedef struct wsp__coll_tune {
  size_t seg; /* segment bytes of pipelined algorithms (0: not pipelined) */
  int conns;  /* connections between two sites a multi-site algorithm uses (0: n) */
  int lanes;  /* lanes per connection of its crossings (0 or 1: MPI messages) */
} wsp__coll_tune_t;

/*
 * The arguments an algorithm gets.
 *
 * Reductions (reduce, allreduce) are typed: count elements of dtype, op.
 *   `sendbuf` is never MPI_IN_PLACE: for in-place calls it equals `recvbuf`.
 *   For reduce, `recvbuf` is NULL on ranks other than the root.
 *
 * Data movement (bcast, gather, scatter, allgather, alltoall) is in bytes:
 * the entry point has packed non-contiguous data, and `block` is the bytes
 * of one rank's part (for bcast, of the whole message).
 *   bcast:     recvbuf holds `block` bytes on every rank (input at the root).
 *   gather:    sendbuf `block` bytes on every rank; at the root it may point
 *              into recvbuf at root*block (in place). recvbuf p*block bytes,
 *              root only (NULL elsewhere).
 *   scatter:   sendbuf p*block bytes at the root (NULL elsewhere); recvbuf
 *              `block` bytes; at the root it may point into sendbuf.
 *   allgather: sendbuf `block` bytes, may point into recvbuf at rank*block;
 *              recvbuf p*block bytes.
 *   alltoall:  sendbuf and recvbuf p*block bytes, never overlapping.
 *   alltoallv: sendbuf and recvbuf, never overlapping; block i to rank i
 *              is scounts[i] bytes at sdispls[i], from rank i rcounts[i]
 *              bytes at rdispls[i] (`block` unused).
 *   allgatherv: recvbuf holds block i at rdispls[i], rcounts[i] bytes
 *              (the same on every rank); sendbuf this rank's, which may be
 *              recvbuf + rdispls[rank] (in place).
 * reduce_scatter is typed like the reductions: sendbuf holds the whole
 * vector (the sum of rcounts, in elements; in place it is a copy the entry
 * made), rank i's part starts at element rdispls[i] (the sum of the counts
 * before it) and recvbuf holds rcounts[me] elements.
 * wsp__copy_bytes handles the aliasing cases (same pointer: no copy).
 */
typedef struct wsp__coll_args {
  wsp_coll_t coll;
  const void *sendbuf;
  void *recvbuf;
  size_t count;
  MPI_Datatype dtype;
  MPI_Op op;
  int commutative;
  size_t type_size;          /* MPI_Type_size of dtype */
  MPI_Aint extent;           /* MPI_Type_get_extent of dtype */
  MPI_Aint true_lb, true_extent;
  size_t block;
  int root;
  int tag;                   /* this collective's tag on the private comm */
  wsp__coll_tune_t tune;
  /* The vector forms (above); NULL for the others. */
  const size_t *scounts, *sdispls, *rcounts, *rdispls;
  int block_form; /* reduce_scatter called as _block */
} wsp__coll_args_t;

/* A table row, made from the algorithm's row in registry.h. */
typedef struct wsp__coll_alg {
  /* name ("binomial"), desc (one sentence), cost (the formula of `cost`
   * below as text: WSP__COST in the algorithm's file). */
  wsp_alg_info_t info;
  unsigned pre; /* WSP__PRE_* */
  /* The row to run when `pre` does not hold (0: native). */
  int fallback;
  /* Predicted seconds under model m; may set tune (segment size). NULL only
   * for native, whose cost the model does not know. */
  double (*cost)(const wsp_model_t *m, const wsp__coll_shape_t *s,
                 wsp__coll_tune_t *tune);
  int (*run)(wsp_comm_t *comm, const wsp__coll_args_t *a);
} wsp__coll_alg_t;

typedef struct wsp__coll_table {
  wsp_coll_t coll;
  const char *name; /* "bcast" */
  int count;
  const wsp__coll_alg_t *algs;
} wsp__coll_table_t;

/* The table of a collective; NULL for a value that is not a wsp_coll_t. */
const wsp__coll_table_t *wsp__coll_table(wsp_coll_t coll);

/* What a rank passed to a collective, as WSP_CHECK compares it (check.c):
 * root -1 where there is none, op MPI_OP_NULL where there is none, and the
 * data one rank contributes or receives (count elements of type: the
 * whole message for bcast, reduce and allreduce, one block for the rest). */
typedef struct wsp__check_args {
  wsp_coll_t coll;
  int root;
  MPI_Op op;
  size_t count;
  MPI_Datatype type;
  /* This rank refused its own arguments (the vector forms check theirs
   * first: each rank sees different counts). */
  int refused;
} wsp__check_args_t;

/* With cfg.check: compares c across the ranks before any traffic; where it
 * differs, or some rank's root or type is invalid, every rank returns
 * WSP_ERR_MISMATCH naming the first rank that differs and the argument
 * (WSP_ERR_ARG where every rank refuses the same root or type). */
int wsp__coll_check(wsp_comm_t *comm, const char *fn, const wsp__check_args_t *c);

/* Runs the algorithm selection chooses for a (coll.c). Every rank decides
 * the same way. */
int wsp__coll_run(wsp_comm_t *comm, wsp__coll_args_t *a,
                  const wsp__coll_shape_t *shape);
/* The algorithm to run for shape s: forced, rules, model; then the
 * fallback chain. *forced_fell_back tells whether a forced or ruled
 * algorithm gave way to its fallback (select.c). */
int wsp__coll_choose(const wsp_comm_t *comm, const wsp__coll_table_t *t,
                     const wsp__coll_shape_t *s, int *forced_fell_back);

/* Algorithm r's predicted seconds for shape s under model m (its cost
 * function; on a communicator with sites, a flat algorithm's under the
 * figures between sites where they are worse: select.c says why); may set
 * tune. INFINITY when r has no cost. */
double wsp__coll_alg_cost(const wsp__coll_alg_t *r, const wsp_model_t *m,
                          const wsp__coll_shape_t *s, wsp__coll_tune_t *tune);
/* The model's cheapest algorithm of table t for shape s (preconditions
 * holding, native excluded) and its cost in *cost (INFINITY if none). */
int wsp__coll_cheapest(const wsp__coll_table_t *t, const wsp_model_t *m,
                       const wsp__coll_shape_t *s, double *cost);
/* Fills s's node fields from comm's topology, and its map's trees. */
void wsp__coll_shape_topo(const wsp_comm_t *comm, wsp__coll_shape_t *s);

/* The native algorithm (row 0 of each table), in coll.c. */
int wsp__coll_native(wsp_comm_t *comm, const wsp__coll_args_t *a);

/* ---- helpers for algorithms (src/coll/coll_util.c; messages: src/core/p2p.h) ---- */

/* inout[i] = in[i] op inout[i] for count elements (MPI_Reduce_local, any
 * count). For non-commutative ops `in` must hold the lower ranks' part. */
int wsp__reduce_local(wsp_comm_t *comm, const void *in, void *inout,
                      size_t count, MPI_Datatype type, MPI_Op op);

/* Memory for count elements of a's dtype: *mem is what to free, the return
 * value is the buffer to pass to MPI (shifted by the type's true lower
 * bound). NULL (with WSP_ERR_NOMEM recorded) on failure. */
void *wsp__tmp_typed(wsp_comm_t *comm, const wsp__coll_args_t *a, size_t count,
                     void **mem);
/* Address of element i of a typed buffer. */
static inline void *wsp__elem(const wsp__coll_args_t *a, const void *buf,
                              size_t i) {
  return (char *)buf + (ptrdiff_t)i * a->extent;
}
/* Copies count elements of a's dtype from src to dst (no-op if equal). */
int wsp__copy_typed(wsp_comm_t *comm, const wsp__coll_args_t *a,
                    const void *src, void *dst, size_t count);
/* memmove unless src == dst. */
static inline void wsp__copy_bytes(void *dst, const void *src, size_t n) {
  if (dst != src && n) memmove(dst, src, n);
}

/* Splits `count` items into `parts` nearly equal blocks: block i starts at
 * wsp__part_start(count, parts, i); the first count % parts blocks have one
 * more item. */
static inline size_t wsp__part_start(size_t count, int parts, int i) {
  size_t q = count / (size_t)parts, r = count % (size_t)parts;
  size_t ui = (size_t)i;
  return ui * q + (ui < r ? ui : r);
}
static inline size_t wsp__part_len(size_t count, int parts, int i) {
  return wsp__part_start(count, parts, i + 1) - wsp__part_start(count, parts, i);
}

#include "registry.h"

#endif
