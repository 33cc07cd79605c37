/*
 * Internal interface of the collectives (src/coll).
 *
 * Each collective has a table of algorithms (src/coll/<coll>/<coll>.c), one
 * row per algorithm built with designated initialisers:
 *
 *   [BCAST_BINOMIAL] = {.info = {.name = "binomial", .desc = "...",
 *                                .cost = "ceil(lg p)(alpha + n beta)"},
 *                       .pre = 0, .fallback = NULL,
 *                       .cost = wsp__bcast_binomial_cost,
 *                       .run = wsp__bcast_binomial},
 *
 * Row 0 of every table is "native": the MPI library's own collective on the
 * private communicator. It is what every fallback ends in.
 *
 * The public entry points (wsp_bcast, ...) check their arguments, bring the
 * buffers into the form the algorithms take (wsp__coll_args_t below), pick
 * an algorithm (forced, rules file, or cheapest by the model), check its
 * preconditions centrally (walking the fallback list when they fail) and
 * call it. Algorithms never see a bad argument or an unmet precondition.
 */
#ifndef WSP_COLL_INTERNAL_H
#define WSP_COLL_INTERNAL_H

#include "wsp_internal.h"
#include "tags.h"

#include <stddef.h>
#include <string.h>

/* ---- preconditions, declared once per algorithm in its table row ---- */
enum {
  WSP__PRE_COMMUTATIVE = 1u << 0, /* the op is commutative */
  WSP__PRE_POW2 = 1u << 1,        /* p is a power of two */
  WSP__PRE_COUNT_GE_P = 1u << 2,  /* at least p elements (reductions) */
  /* Two nodes or more, and a node with two ranks or more. */
  WSP__PRE_SHARED_NODES = 1u << 3,
  /* A commutative op, or nodes that are blocks of consecutive ranks (so
   * that reducing inside nodes first keeps rank order). */
  WSP__PRE_NODE_ORDER = 1u << 4,
  /* A datatype without holes (the result may be copied as bytes). */
  WSP__PRE_DENSE = 1u << 5,
};

/* What the model and the preconditions look at; every rank has the same
 * values (they come from arguments every rank shares). */
typedef struct wsp__coll_shape {
  int p;
  size_t bytes;  /* bcast/reduce/allreduce: the whole message; others: one
                    rank's block */
  size_t count;  /* elements (reductions; bytes for data movement) */
  int commutative;
  int dense;     /* the datatype has no holes (always 1 for data movement) */
  /* The communicator's nodes (filled by wsp__coll_run and the public
   * select/predict calls from comm->topo). */
  int nodes, max_node_ranks, node_blocks;
} wsp__coll_shape_t;

/* Tuning that the model chooses along with an algorithm. */
typedef struct wsp__coll_tune {
  size_t seg; /* segment bytes of pipelined algorithms (0: not pipelined) */
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
} wsp__coll_args_t;

typedef struct wsp__coll_alg {
  /* name ("binomial"), desc (one sentence), cost (the formula of `cost`
   * below as text, as in the algorithm's file header). */
  wsp_alg_info_t info;
  unsigned pre; /* WSP__PRE_* */
  /* Name of the algorithm to run when `pre` does not hold (NULL: native). */
  const char *fallback;
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

extern const wsp__coll_table_t wsp__bcast_table, wsp__reduce_table,
    wsp__allreduce_table, wsp__gather_table, wsp__scatter_table,
    wsp__allgather_table, wsp__alltoall_table;

const wsp__coll_table_t *wsp__coll_table(wsp_coll_t coll);


/* Chooses the algorithm (forced > rules > model), checks preconditions and
 * walks fallbacks, then runs it. Every rank decides the same way. */
int wsp__coll_run(wsp_comm_t *comm, wsp__coll_args_t *a,
                  const wsp__coll_shape_t *shape);

/* The model's cheapest algorithm of table t for shape s (preconditions
 * holding, native excluded) and its cost in *cost (INFINITY if none). */
int wsp__coll_cheapest(const wsp__coll_table_t *t, const wsp_model_t *m,
                       const wsp__coll_shape_t *s, double *cost);
/* Fills s's node fields from comm's topology. */
void wsp__coll_shape_topo(const wsp_comm_t *comm, wsp__coll_shape_t *s);

/* The native algorithms (row 0 of each table), in coll.c. */
int wsp__coll_native(wsp_comm_t *comm, const wsp__coll_args_t *a);

/* ---- helpers for algorithms (src/coll/coll_util.c) ---- */

/* Waits for n requests without burning a core (Testall + back-off). NULL
 * requests (MPI_REQUEST_NULL) are fine. `bytes`: the data the awaited
 * transfers carry, or 0 when small or unknown; a wait for a bulk transfer
 * may sleep longer between polls (up to 1/8 of its time under the model),
 * and one the model expects to take at most 1 ms polls until 1.25x that
 * time before it sleeps at all (src/core/backoff.c). */
int wsp__coll_waitall(wsp_comm_t *comm, int n, MPI_Request *reqs, size_t bytes);

/* Typed point-to-point of any count on the private communicator
 * (counts above INT_MAX become a derived type, as in bigcount.c). */
int wsp__isend_typed(wsp_comm_t *comm, const void *buf, size_t count,
                     MPI_Datatype type, int peer, int tag, MPI_Request *req);
int wsp__irecv_typed(wsp_comm_t *comm, void *buf, size_t count,
                     MPI_Datatype type, int peer, int tag, MPI_Request *req);
/* Blocking conveniences built on the two above and wsp__coll_waitall. */
int wsp__send_bytes(wsp_comm_t *comm, const void *buf, size_t bytes, int peer,
                    int tag);
int wsp__recv_bytes(wsp_comm_t *comm, void *buf, size_t bytes, int peer,
                    int tag);
/* Exchanges post the send before the receive. Two ranks swapping one large
 * message each way, both having posted the receive first, moved each
 * direction at 0.44-0.46 of the link rate on netlab (8 hosts, 100 Mbit/s,
 * TCP) under both Open MPI 4.1 and MPICH 4.0; posting the send first gave
 * 0.71-0.87 (plain MPI, no wirespeed code in between; docs/coll.md,
 * "Exchanges"). Neither order can deadlock, as both are nonblocking. */
int wsp__sendrecv_bytes(wsp_comm_t *comm, const void *sbuf, size_t sbytes,
                        int dst, void *rbuf, size_t rbytes, int src, int tag);
int wsp__sendrecv_typed(wsp_comm_t *comm, const void *sbuf, size_t scount,
                        int dst, void *rbuf, size_t rcount, int src,
                        MPI_Datatype type, int tag);

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

/* ---- model helpers (src/model/model.c) ---- */
/* ceil(log2 p) for p >= 1. */
int wsp__ceil_log2(int p);
/* ceil(log_k p) for p >= 1, k >= 2. */
int wsp__ceil_logk(int p, int k);
/* The segment size minimising a pipeline of `stages` stages over n bytes
 * with per-segment cost alpha + seg*(beta [+ gamma]): sqrt(n a / ((stages-1)
 * b)), rounded to a multiple of `align` and clamped to [align, n]. */
size_t wsp__pipeline_seg(const wsp_model_t *m, size_t n, int stages,
                         double per_byte, size_t align);
/* Per-byte cost of a pipelined chain of p ranks: beta_x when some rank is
 * in the middle, receiving and forwarding at once (p > 2), else beta. */
double wsp__chain_beta(const wsp_model_t *m, int p);
/* Cost of a root exchanging a block of `bytes` with each of the other p-1
 * ranks, all messages in flight at once (linear gather and scatter): the
 * latencies overlap, so alpha + (p-2).gap + (p-1).bytes.beta; 0 at p = 1. */
double wsp__fan_cost(const wsp_model_t *m, int p, size_t bytes);

#endif
