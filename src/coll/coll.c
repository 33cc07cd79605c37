/*
 * Collectives: algorithm tables, selection and dispatch.
 *
 * Selection, in order:
 *   1. an algorithm forced for this communicator (WSP_<COLL>_ALGORITHM,
 *      wsp_config_t.coll_alg, wsp_coll_set_alg);
 *   2. the first matching rule of the rules file (WSP_RULES_FILE);
 *   3. the algorithm the α-β-γ model predicts cheapest among those whose
 *      preconditions hold ("native" is not a model candidate: its cost is
 *      unknown; rules can choose it).
 * The chosen algorithm's preconditions are then checked here, once, and
 * when they do not hold its fallback list is walked (each row names the
 * next algorithm to try; the end of every list is native). All inputs to
 * this decision (p, message size, op commutativity, the configuration and
 * the rules, which wsp_comm_create checked to agree) are the same on every
 * rank, so every rank runs the same algorithm.
 */
#include "coll_internal.h"

#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

static const wsp__coll_table_t *const wsp__tables[WSP_COLL_COUNT] = {
    [WSP_COLL_BCAST] = &wsp__bcast_table,
    [WSP_COLL_REDUCE] = &wsp__reduce_table,
    [WSP_COLL_ALLREDUCE] = &wsp__allreduce_table,
    [WSP_COLL_GATHER] = &wsp__gather_table,
    [WSP_COLL_SCATTER] = &wsp__scatter_table,
    [WSP_COLL_ALLGATHER] = &wsp__allgather_table,
    [WSP_COLL_ALLTOALL] = &wsp__alltoall_table,
};

const wsp__coll_table_t *wsp__coll_table(wsp_coll_t coll) {
  if ((int)coll < 0 || coll >= WSP_COLL_COUNT) return NULL;
  return wsp__tables[coll];
}

const char *wsp_coll_name(wsp_coll_t coll) {
  const wsp__coll_table_t *t = wsp__coll_table(coll);
  return t ? t->name : NULL;
}

int wsp_coll_from_name(const char *name, wsp_coll_t *coll) {
  if (name == NULL)
    return wsp__fail(NULL, WSP_ERR_ARG, "wsp_coll_from_name: name is NULL");
  if (coll == NULL)
    return wsp__fail(NULL, WSP_ERR_ARG, "wsp_coll_from_name: coll is NULL");
  for (int c = 0; c < WSP_COLL_COUNT; c++)
    if (strcmp(name, wsp__tables[c]->name) == 0) {
      *coll = (wsp_coll_t)c;
      return WSP_OK;
    }
  return wsp__fail(NULL, WSP_ERR_ARG,
                   "unknown collective \"%s\" (valid: bcast, reduce, "
                   "allreduce, gather, scatter, allgather, alltoall)",
                   name);
}

int wsp_coll_alg_count(wsp_coll_t coll) {
  const wsp__coll_table_t *t = wsp__coll_table(coll);
  return t ? t->count : 0;
}

const wsp_alg_info_t *wsp_coll_alg_info(wsp_coll_t coll, int alg) {
  const wsp__coll_table_t *t = wsp__coll_table(coll);
  if (t == NULL || alg < 0 || alg >= t->count) return NULL;
  return &t->algs[alg].info;
}

/* Text of a precondition set; the table of names is the one place where
 * the flags are spelled out. */
static const struct {
  unsigned flag;
  const char *text;
} wsp__pre_names[] = {
    {WSP__PRE_COMMUTATIVE, "commutative op"},
    {WSP__PRE_POW2, "p a power of two"},
    {WSP__PRE_COUNT_GE_P, "count >= p"},
    {WSP__PRE_SHARED_NODES, "two nodes or more, one with two ranks or more"},
    {WSP__PRE_NODE_ORDER, "commutative op, or nodes in blocks of consecutive ranks"},
    {WSP__PRE_DENSE, "a datatype without holes"},
};

static void wsp__pre_text(unsigned pre, char *buf, size_t len) {
  buf[0] = '\0';
  size_t used = 0;
  for (size_t i = 0; i < sizeof wsp__pre_names / sizeof wsp__pre_names[0]; i++)
    if (pre & wsp__pre_names[i].flag) {
      int n = snprintf(buf + used, len - used, "%s%s", used ? "; " : "",
                       wsp__pre_names[i].text);
      if (n < 0 || (size_t)n >= len - used) break;
      used += (size_t)n;
    }
}

const char *wsp_coll_alg_preconditions(wsp_coll_t coll, int alg) {
  static _Thread_local char buf[128];
  const wsp__coll_table_t *t = wsp__coll_table(coll);
  if (t == NULL || alg < 0 || alg >= t->count) return NULL;
  wsp__pre_text(t->algs[alg].pre, buf, sizeof buf);
  return buf;
}

int wsp_coll_alg_from_name(wsp_coll_t coll, const char *name, int *alg) {
  const wsp__coll_table_t *t = wsp__coll_table(coll);
  if (t == NULL)
    return wsp__fail(NULL, WSP_ERR_ARG,
                     "wsp_coll_alg_from_name: coll = %d is not a wsp_coll_t",
                     (int)coll);
  if (name == NULL)
    return wsp__fail(NULL, WSP_ERR_ARG, "wsp_coll_alg_from_name: name is NULL");
  if (alg == NULL)
    return wsp__fail(NULL, WSP_ERR_ARG, "wsp_coll_alg_from_name: alg is NULL");
  if (strcmp(name, "auto") == 0) {
    *alg = WSP_ALG_AUTO;
    return WSP_OK;
  }
  char valid[512] = "auto";
  size_t used = strlen(valid);
  for (int i = 0; i < t->count; i++) {
    if (strcmp(name, t->algs[i].info.name) == 0) {
      *alg = i;
      return WSP_OK;
    }
    int n = snprintf(valid + used, sizeof valid - used, ", %s",
                     t->algs[i].info.name);
    if (n > 0 && (size_t)n < sizeof valid - used) used += (size_t)n;
  }
  return wsp__fail(NULL, WSP_ERR_ARG,
                   "unknown %s algorithm \"%s\" (valid: %s)", t->name, name,
                   valid);
}

int wsp_coll_set_alg(wsp_comm_t *comm, wsp_coll_t coll, int alg) {
  if (comm == NULL)
    return wsp__fail(NULL, WSP_ERR_ARG, "wsp_coll_set_alg: comm is NULL");
  const wsp__coll_table_t *t = wsp__coll_table(coll);
  if (t == NULL)
    return wsp__fail(comm, WSP_ERR_ARG,
                     "wsp_coll_set_alg: coll = %d is not a wsp_coll_t",
                     (int)coll);
  if (alg != WSP_ALG_AUTO && (alg < 0 || alg >= t->count))
    return wsp__fail(comm, WSP_ERR_ARG,
                     "wsp_coll_set_alg: alg = %d is not WSP_ALG_AUTO or a %s "
                     "algorithm in [0, %d)",
                     alg, t->name, t->count);
  comm->coll_alg[coll] = alg;
  return WSP_OK;
}

int wsp_comm_model(const wsp_comm_t *comm, wsp_model_t *model) {
  if (comm == NULL)
    return wsp__fail(NULL, WSP_ERR_ARG, "wsp_comm_model: comm is NULL");
  if (model == NULL)
    return wsp__fail(comm, WSP_ERR_ARG, "wsp_comm_model: model is NULL");
  *model = comm->model;
  return WSP_OK;
}

static int wsp__pre_holds(unsigned pre, const wsp__coll_shape_t *s) {
  if ((pre & WSP__PRE_COMMUTATIVE) && !s->commutative) return 0;
  if ((pre & WSP__PRE_POW2) && (s->p & (s->p - 1)) != 0) return 0;
  if ((pre & WSP__PRE_COUNT_GE_P) && s->count < (size_t)s->p) return 0;
  if ((pre & WSP__PRE_SHARED_NODES) && (s->nodes < 2 || s->max_node_ranks < 2))
    return 0;
  if ((pre & WSP__PRE_NODE_ORDER) && !s->commutative && !s->node_blocks) return 0;
  if ((pre & WSP__PRE_DENSE) && !s->dense) return 0;
  return 1;
}

void wsp__coll_shape_topo(const wsp_comm_t *comm, wsp__coll_shape_t *s) {
  s->nodes = comm->topo.pub.nodes;
  s->max_node_ranks = comm->topo.pub.max_node_ranks;
  s->node_blocks = comm->topo.pub.blocks;
}

static int wsp__find(const wsp__coll_table_t *t, const char *name) {
  for (int i = 0; i < t->count; i++)
    if (strcmp(t->algs[i].info.name, name) == 0) return i;
  return 0; /* native */
}

int wsp__coll_cheapest(const wsp__coll_table_t *t, const wsp_model_t *m,
                       const wsp__coll_shape_t *s, double *cost) {
  int best = 0;
  double best_cost = INFINITY;
  for (int i = 1; i < t->count; i++) {
    const wsp__coll_alg_t *r = &t->algs[i];
    if (r->cost == NULL || !wsp__pre_holds(r->pre, s)) continue;
    wsp__coll_tune_t tune = {0};
    double c = r->cost(m, s, &tune);
    if (c < best_cost) best_cost = c, best = i;
  }
  if (cost) *cost = best_cost;
  return best;
}

/* Resolves the algorithm for shape s: forced, rules, model; then the
 * fallback list. Pure given (comm state, s). */
static int wsp__choose(const wsp_comm_t *comm, const wsp__coll_table_t *t,
                       const wsp__coll_shape_t *s, int *forced_fell_back) {
  int alg = comm->coll_alg[t->coll];
  *forced_fell_back = 0;
  if (alg == WSP_ALG_AUTO && comm->rules)
    alg = wsp__rules_match(comm->rules, t->coll, s->p, s->bytes);
  if (alg == WSP_ALG_AUTO) return wsp__coll_cheapest(t, &comm->model, s, NULL);
  /* A forced or ruled algorithm: follow fallbacks while preconditions fail.
   * Lists are short and end in native (which has none); the bound guards
   * against a cycle in a table. */
  for (int hops = 0; hops <= t->count; hops++) {
    const wsp__coll_alg_t *r = &t->algs[alg];
    if (wsp__pre_holds(r->pre, s)) return alg;
    *forced_fell_back = 1;
    alg = r->fallback ? wsp__find(t, r->fallback) : 0;
  }
  return 0;
}

int wsp_coll_predict(const wsp_comm_t *comm, wsp_coll_t coll, int alg,
                     size_t bytes, int commutative, double *seconds) {
  if (comm == NULL)
    return wsp__fail(NULL, WSP_ERR_ARG, "wsp_coll_predict: comm is NULL");
  const wsp__coll_table_t *t = wsp__coll_table(coll);
  if (t == NULL)
    return wsp__fail(comm, WSP_ERR_ARG,
                     "wsp_coll_predict: coll = %d is not a wsp_coll_t",
                     (int)coll);
  if (alg < 0 || alg >= t->count)
    return wsp__fail(comm, WSP_ERR_ARG,
                     "wsp_coll_predict: alg = %d is not a %s algorithm in "
                     "[0, %d)",
                     alg, t->name, t->count);
  if (seconds == NULL)
    return wsp__fail(comm, WSP_ERR_ARG, "wsp_coll_predict: seconds is NULL");
  wsp__coll_shape_t s = {.p = comm->size, .bytes = bytes, .count = bytes,
                         .commutative = commutative != 0, .dense = 1};
  wsp__coll_shape_topo(comm, &s);
  const wsp__coll_alg_t *r = &t->algs[alg];
  wsp__coll_tune_t tune = {0};
  *seconds = (r->cost && wsp__pre_holds(r->pre, &s)) ? r->cost(&comm->model, &s, &tune)
                                                     : -1.0;
  return WSP_OK;
}

int wsp_coll_select(const wsp_comm_t *comm, wsp_coll_t coll, size_t bytes,
                    int commutative, int *alg) {
  if (comm == NULL)
    return wsp__fail(NULL, WSP_ERR_ARG, "wsp_coll_select: comm is NULL");
  const wsp__coll_table_t *t = wsp__coll_table(coll);
  if (t == NULL)
    return wsp__fail(comm, WSP_ERR_ARG,
                     "wsp_coll_select: coll = %d is not a wsp_coll_t",
                     (int)coll);
  if (alg == NULL)
    return wsp__fail(comm, WSP_ERR_ARG, "wsp_coll_select: alg is NULL");
  wsp__coll_shape_t s = {.p = comm->size, .bytes = bytes, .count = bytes,
                         .commutative = commutative != 0, .dense = 1};
  wsp__coll_shape_topo(comm, &s);
  int fell;
  *alg = wsp__choose(comm, t, &s, &fell);
  return WSP_OK;
}

int wsp__coll_run(wsp_comm_t *comm, wsp__coll_args_t *a,
                  const wsp__coll_shape_t *in) {
  const wsp__coll_table_t *t = wsp__coll_table(a->coll);
  wsp__coll_shape_t sh = *in, *shape = &sh;
  wsp__coll_shape_topo(comm, shape);
  int fell = 0;
  int alg = wsp__choose(comm, t, shape, &fell);
  const wsp__coll_alg_t *r = &t->algs[alg];
  if (fell && comm->rank == 0)
    wsp__log(comm, WSP_LOG_INFO,
             "%s: the requested algorithm's preconditions do not hold; "
             "running %s",
             t->name, r->info.name);
  memset(&a->tune, 0, sizeof a->tune);
  if (r->cost) (void)r->cost(&comm->model, shape, &a->tune);
  if (comm->cfg.coll_segment) a->tune.seg = comm->cfg.coll_segment;
  a->tag = WSP__COLL_TAG(a->coll);
  wsp__log(comm, WSP_LOG_TRACE, "%s: %s, %zu bytes, seg %zu", t->name,
           r->info.name, shape->bytes, a->tune.seg);
  return r->run(comm, a);
}

/* ---- native: the MPI library's own collective, on the private comm ----
 * The arguments are already in the algorithms' form (bytes for data
 * movement), which MPI takes as they are; sizes beyond int go through
 * wsp__bytes_type / a chunked loop. */

int wsp__coll_native(wsp_comm_t *comm, const wsp__coll_args_t *a) {
  int rc = WSP_OK, owned = 0, b;
  MPI_Datatype ty = MPI_DATATYPE_NULL;
  MPI_Comm c = comm->mpi;
  switch (a->coll) {
  case WSP_COLL_BCAST: {
    if ((rc = wsp__bytes_type(comm, a->block, &b, &ty, &owned))) return rc;
    int mrc = MPI_Bcast(a->recvbuf, b, ty, a->root, c);
    if (owned) MPI_Type_free(&ty);
    if (mrc != MPI_SUCCESS) return wsp__mpi_fail(comm, mrc, "MPI_Bcast", WSP__WHERE);
    return WSP_OK;
  }
  case WSP_COLL_REDUCE:
  case WSP_COLL_ALLREDUCE: {
    /* Reductions are element-wise, so a long vector is reduced in pieces
     * of at most big_message elements. */
    size_t step = comm->cfg.big_message;
    for (size_t off = 0; off < a->count || off == 0; off += step) {
      size_t n = a->count - off < step ? a->count - off : step;
      const void *s = a->sendbuf == a->recvbuf ? MPI_IN_PLACE
                                               : wsp__elem(a, a->sendbuf, off);
      void *r = a->recvbuf ? wsp__elem(a, a->recvbuf, off) : NULL;
      if (a->coll == WSP_COLL_ALLREDUCE) {
        WSP__MPI_GOTO(comm, MPI_Allreduce(s, r, (int)n, a->dtype, a->op, c), rc,
                      out);
      } else if (s == MPI_IN_PLACE && a->root != 0) {
        /* MPICH 4.0.2 (ch4:ucx) crashes in MPI_Reduce with MPI_IN_PLACE at
         * a root other than 0 from about 600 ints on (reproduced with a
         * plain MPI program); give it a copy of the input instead. */
        /* Without memory for the copy the root still takes part (the
         * others are already in MPI_Reduce), in place. */
        void *mem = NULL, *tmp = wsp__tmp_typed(comm, a, n, &mem);
        if (tmp && wsp__copy_typed(comm, a, r, tmp, n) != WSP_OK) {
          free(mem);
          tmp = NULL, mem = NULL;
        }
        int mrc = MPI_Reduce(tmp ? tmp : MPI_IN_PLACE, r, (int)n, a->dtype, a->op,
                             a->root, c);
        free(mem);
        if (mrc != MPI_SUCCESS) return wsp__mpi_fail(comm, mrc, "MPI_Reduce", WSP__WHERE);
      } else {
        /* MPI_IN_PLACE only exists at the root of MPI_Reduce. */
        if (comm->rank != a->root && s == MPI_IN_PLACE) s = r;
        WSP__MPI_GOTO(comm,
                      MPI_Reduce(s, r, (int)n, a->dtype, a->op, a->root, c), rc,
                      out);
      }
      if (a->count == 0) break;
    }
    return WSP_OK;
  }
  default:
    break;
  }
  /* Data movement with per-rank blocks: one block is one element of a
   * type of `block` bytes (a chunked derived type past the int limit, whose
   * extent is still `block`), so MPI's counts stay small whatever the size. */
  if ((rc = wsp__bytes_type(comm, a->block, &b, &ty, &owned))) return rc;
  int me = comm->rank;
  switch (a->coll) {
  case WSP_COLL_GATHER: {
    const void *s = a->sendbuf;
    if (me == a->root && s == (const char *)a->recvbuf + (size_t)me * a->block)
      s = MPI_IN_PLACE;
    WSP__MPI_GOTO(comm, MPI_Gather(s, b, ty, a->recvbuf, b, ty, a->root, c), rc, out);
    break;
  }
  case WSP_COLL_SCATTER: {
    void *r = a->recvbuf;
    if (me == a->root && r == (const char *)a->sendbuf + (size_t)me * a->block)
      r = MPI_IN_PLACE;
    WSP__MPI_GOTO(comm, MPI_Scatter(a->sendbuf, b, ty, r, b, ty, a->root, c), rc, out);
    break;
  }
  case WSP_COLL_ALLGATHER: {
    const void *s = a->sendbuf;
    if (s == (const char *)a->recvbuf + (size_t)me * a->block) s = MPI_IN_PLACE;
    WSP__MPI_GOTO(comm, MPI_Allgather(s, b, ty, a->recvbuf, b, ty, c), rc, out);
    break;
  }
  case WSP_COLL_ALLTOALL:
    WSP__MPI_GOTO(comm, MPI_Alltoall(a->sendbuf, b, ty, a->recvbuf, b, ty, c), rc, out);
    break;
  default:
    rc = wsp__fail(comm, WSP_ERR_INTERNAL, "native: bad collective %d", (int)a->coll);
    break;
  }
out:
  if (owned) MPI_Type_free(&ty);
  return rc;
}
