/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Selection: which algorithm a collective call runs. Every input to this
 * decision (p, the message size, the op's commutativity, the datatype's
 * density, the nodes, the configuration and the rules, which
 * wsp_comm_create checked to agree) is the same on every rank, so every
 * rank runs the same algorithm. The one exception is alltoallv, whose
 * shape is each rank's own (its algorithms may run beside each other:
 * src/coll/alltoallv/alltoallv.h); its native row can only be forced,
 * never chosen by a rule.
 *
 * In order:
 *   1. an algorithm forced for this communicator (WSP_<COLL>_ALGORITHM,
 *      wsp_config_t.coll_alg, wsp_coll_set_alg);
 *   2. the first matching rule of the rules file (WSP_RULES_FILE; below);
 *   3. the algorithm the α-β-γ model predicts cheapest among those whose
 *      preconditions hold ("native" is not a model candidate: its cost is
 *      unknown; rules can choose it).
 * A forced or ruled algorithm's preconditions are checked here, once, and
 * when they do not hold its fallback chain is walked (each registry row
 * names the next algorithm to try; every chain ends at native).
 *
 * The rules file: user overrides of the model by ranges of p and size.
 *
 *   {
 *     "version": 1,
 *     "rules": [
 *       {"collective": "allreduce", "algorithm": "ring",
 *        "min_bytes": 1048576},
 *       {"collective": "bcast", "algorithm": "native",
 *        "max_p": 8, "max_bytes": 4096}
 *     ]
 *   }
 *
 * A rule matches a call when min_p <= p <= max_p and min_bytes <= bytes <=
 * max_bytes (bytes as in wsp_coll_select: the whole message for bcast,
 * reduce and allreduce, one rank's block for the others). Missing bounds
 * are open. The first matching rule wins; "auto" as the algorithm means
 * "let the model choose" (a way to carve out a range). Unknown keys,
 * collectives or algorithm names are errors naming the file and the rule,
 * so that a typo never silently does nothing. Parsed with jansson.
 */
#include "coll_internal.h"
#include "select.h"
#include "sites.h"

#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The algorithm named by the first rule that matches, or WSP_ALG_AUTO. */
static int wsp__rules_match(const struct wsp__rules *r, wsp_coll_t coll, int p,
                            size_t bytes);

/* ---- forced algorithms ---- */

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

/* ---- preconditions and the model ---- */

int wsp__pre_holds(unsigned pre, const wsp__coll_shape_t *s) {
  if ((pre & WSP__PRE_COMMUTATIVE) && !s->commutative) return 0;
  if ((pre & WSP__PRE_POW2) && (s->p & (s->p - 1)) != 0) return 0;
  if ((pre & WSP__PRE_SHARED_NODES) && (s->nodes < 2 || s->max_node_ranks < 2))
    return 0;
  if ((pre & WSP__PRE_NODE_ORDER) && !s->commutative && !s->node_blocks) return 0;
  if ((pre & WSP__PRE_DENSE) && !s->dense) return 0;
  if ((pre & WSP__PRE_NETMAP) && s->aware == NULL) return 0;
  if ((pre & WSP__PRE_SITES) && s->sites == NULL) return 0;
  return 1;
}

void wsp__coll_shape_topo(const wsp_comm_t *comm, wsp__coll_shape_t *s) {
  s->nodes = comm->topo.pub.nodes;
  s->max_node_ranks = comm->topo.pub.max_node_ranks;
  s->node_blocks = comm->topo.pub.blocks;
  s->aware = comm->aware;
  s->sites = comm->sites.count >= 2 ? &comm->sites : NULL;
  s->wan_n = wsp__sites_conns(comm);
  s->wan_forced = comm->cfg.wan_connections > 0;
  s->wan_lanes = wsp__sites_lanes(comm);
  s->lane_min = wsp__p2p_min(&comm->cfg);
}

double wsp__coll_alg_cost(const wsp__coll_alg_t *r, const wsp_model_t *m,
                          const wsp__coll_shape_t *s, wsp__coll_tune_t *tune) {
  if (r->cost == NULL) return INFINITY;
  if (s->sites == NULL || (r->pre & WSP__PRE_SITES)) return r->cost(m, s, tune);
  /* A flat algorithm on a communicator with sites sends some of its
   * messages between sites, and a pipeline or a ring goes at the pace of
   * its slowest hop: it is priced as if every message crossed (the
   * latency and one connection's time per byte between sites, where they
   * are the larger). The exchange schedules, whose steps each wait for the
   * one before, price each step by whether it crosses (wsp__xstep_cost,
   * which reads the model inside a site from y.inside): at two sites of
   * 2^k ranks each only their last halving and first doubling cross,
   * spread over all the pairs (docs/sites.md). The site-aware algorithms price
   * their own steps. */
  wsp_model_t x = *m;
  x.alpha = fmax(m->alpha, m->alpha_wan);
  x.beta = fmax(m->beta, m->beta_wan);
  x.beta_x = fmax(m->beta_x, m->beta_wan);
  wsp__coll_shape_t y = *s;
  y.inside = m;
  return r->cost(&x, &y, tune);
}

int wsp__coll_cheapest(const wsp__coll_table_t *t, const wsp_model_t *m,
                       const wsp__coll_shape_t *s, double *cost) {
  int best = 0;
  double best_cost = INFINITY;
  for (int i = 1; i < t->count; i++) {
    const wsp__coll_alg_t *r = &t->algs[i];
    if (r->cost == NULL || !wsp__pre_holds(r->pre, s)) continue;
    wsp__coll_tune_t tune = {0};
    double c = wsp__coll_alg_cost(r, m, s, &tune);
    if (c < best_cost) best_cost = c, best = i;
  }
  if (cost) *cost = best_cost;
  return best;
}

/* Pure given (comm state, s), so every rank resolves alike where s is
 * alike (for alltoallv it is each rank's own). */
int wsp__coll_choose(const wsp_comm_t *comm, const wsp__coll_table_t *t,
                     const wsp__coll_shape_t *s, int *forced_fell_back) {
  int alg = comm->coll_alg[t->coll];
  *forced_fell_back = 0;
  if (alg == WSP_ALG_AUTO && comm->rules)
    alg = wsp__rules_match(comm->rules, t->coll, s->p, s->bytes);
  if (alg == WSP_ALG_AUTO) return wsp__coll_cheapest(t, &comm->model, s, NULL);
  /* A forced or ruled algorithm: follow fallbacks while preconditions fail.
   * Chains are short and end in native (which has none; unit.registry
   * checks every table); the bound only guards the loop. */
  for (int hops = 0; hops <= t->count; hops++) {
    const wsp__coll_alg_t *r = &t->algs[alg];
    if (wsp__pre_holds(r->pre, s)) return alg;
    *forced_fell_back = 1;
    alg = r->fallback;
  }
  return 0;
}

/* The shape of a call of the public select and predict, which give one
 * size: for the vector forms, p equal blocks of it. */
static void wsp__shape_public(const wsp_comm_t *comm, wsp_coll_t coll, wsp__coll_shape_t *s) {
  wsp__coll_shape_topo(comm, s);
  if (coll == WSP_COLL_ALLTOALLV) {
    s->total = s->bytes * (size_t)(s->p - 1);
    s->peers = s->bytes ? s->p - 1 : 0;
  } else if (coll == WSP_COLL_ALLGATHERV || coll == WSP_COLL_REDUCE_SCATTER) {
    s->total = s->bytes * (size_t)s->p;
  }
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
  wsp__shape_public(comm, coll, &s);
  const wsp__coll_alg_t *r = &t->algs[alg];
  wsp__coll_tune_t tune = {0};
  *seconds = (r->cost && wsp__pre_holds(r->pre, &s))
                 ? wsp__coll_alg_cost(r, &comm->model, &s, &tune)
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
  wsp__shape_public(comm, coll, &s);
  int fell;
  *alg = wsp__coll_choose(comm, t, &s, &fell);
  return WSP_OK;
}

/* ---- the rules file ---- */

typedef struct wsp__rule {
  int coll, alg;
  uint64_t min_p, max_p, min_bytes, max_bytes;
} wsp__rule_t;

struct wsp__rules {
  size_t n;
  wsp__rule_t *r;
};

static int wsp__rule_bound(const char *path, size_t i, json_t *obj,
                           const char *key, uint64_t dflt, uint64_t *out) {
  json_t *v = json_object_get(obj, key);
  if (v == NULL || json_is_null(v)) {
    *out = dflt;
    return WSP_OK;
  }
  if (!json_is_integer(v) || json_integer_value(v) < 0)
    return wsp__fail(NULL, WSP_ERR_CONFIG,
                     "rules file %s: rules[%zu].%s must be a non-negative "
                     "integer",
                     path, i, key);
  *out = (uint64_t)json_integer_value(v);
  return WSP_OK;
}

static int wsp__rules_parse(json_t *root, const char *path, struct wsp__rules **out);

int wsp__rules_load(const char *path, struct wsp__rules **out) {
  *out = NULL;
  json_error_t err;
  json_t *root = json_load_file(path, 0, &err);
  if (root == NULL && err.line < 1) /* not opened or not read */
    return wsp__fail(NULL, WSP_ERR_CONFIG, "rules file %s: %s", path, err.text);
  if (root == NULL)
    return wsp__fail(NULL, WSP_ERR_CONFIG, "rules file %s: line %d, column %d: %s",
                     path, err.line, err.column, err.text);
  return wsp__rules_parse(root, path, out);
}

int wsp__rules_load_bytes(const char *bytes, size_t len, const char *name,
                          struct wsp__rules **out) {
  *out = NULL;
  json_error_t err;
  json_t *root = json_loadb(bytes, len, 0, &err);
  if (root == NULL)
    return wsp__fail(NULL, WSP_ERR_CONFIG, "rules file %s: line %d, column %d: %s",
                     name, err.line, err.column, err.text);
  return wsp__rules_parse(root, name, out);
}

/* The rules that the document describes; takes root over (frees it). */
static int wsp__rules_parse(json_t *root, const char *path, struct wsp__rules **out) {
  int rc = WSP_OK;
  struct wsp__rules *rs = NULL;
  json_t *ver = json_object_get(root, "version");
  json_t *arr = json_object_get(root, "rules");
  if (!json_is_object(root) || !json_is_integer(ver) ||
      json_integer_value(ver) != 1 || !json_is_array(arr)) {
    rc = wsp__fail(NULL, WSP_ERR_CONFIG,
                   "rules file %s: expected an object with \"version\": 1 "
                   "and a \"rules\" array",
                   path);
    goto out;
  }
  rs = calloc(1, sizeof *rs);
  size_t n = json_array_size(arr);
  if (rs == NULL || (n && (rs->r = calloc(n, sizeof *rs->r)) == NULL)) {
    rc = wsp__fail(NULL, WSP_ERR_NOMEM, "rules file %s: out of memory", path);
    goto out;
  }
  for (size_t i = 0; i < n; i++) {
    json_t *o = json_array_get(arr, i);
    if (!json_is_object(o)) {
      rc = wsp__fail(NULL, WSP_ERR_CONFIG, "rules file %s: rules[%zu] is not an object",
                     path, i);
      goto out;
    }
    const char *key;
    json_t *val;
    json_object_foreach(o, key, val) {
      static const char *const known[] = {"collective", "algorithm", "min_p",
                                          "max_p", "min_bytes", "max_bytes"};
      int ok = 0;
      for (size_t k = 0; k < sizeof known / sizeof known[0]; k++)
        ok |= strcmp(key, known[k]) == 0;
      if (!ok) {
        rc = wsp__fail(NULL, WSP_ERR_CONFIG,
                       "rules file %s: rules[%zu] has unknown key \"%s\" "
                       "(valid: collective, algorithm, min_p, max_p, "
                       "min_bytes, max_bytes)",
                       path, i, key);
        goto out;
      }
    }
    const char *cname = json_string_value(json_object_get(o, "collective"));
    const char *aname = json_string_value(json_object_get(o, "algorithm"));
    if (cname == NULL || aname == NULL) {
      rc = wsp__fail(NULL, WSP_ERR_CONFIG,
                     "rules file %s: rules[%zu] needs \"collective\" and "
                     "\"algorithm\" strings",
                     path, i);
      goto out;
    }
    wsp__rule_t *r = &rs->r[i];
    wsp_coll_t coll;
    if (wsp_coll_from_name(cname, &coll) != WSP_OK ||
        wsp_coll_alg_from_name(coll, aname, &r->alg) != WSP_OK) {
      rc = wsp__fail(NULL, WSP_ERR_CONFIG, "rules file %s: rules[%zu]: %s", path,
                     i, wsp_last_error());
      goto out;
    }
    r->coll = (int)coll;
    /* An alltoallv rule matches each rank's own size (the shape of
     * alltoallv is this rank's), and every algorithm but native may run
     * beside another (alltoallv.h); MPI's own must run on every rank or
     * on none. */
    if (coll == WSP_COLL_ALLTOALLV && r->alg == 0) {
      rc = wsp__fail(NULL, WSP_ERR_CONFIG,
                     "rules file %s: rules[%zu]: alltoallv cannot go to the MPI by a rule: "
                     "a rule sees each rank's own size, and the MPI's alltoallv must run on "
                     "every rank or on none; WSP_ALLTOALLV_ALGORITHM=native gives it every call",
                     path, i);
      goto out;
    }
    if ((rc = wsp__rule_bound(path, i, o, "min_p", 0, &r->min_p)) ||
        (rc = wsp__rule_bound(path, i, o, "max_p", UINT64_MAX, &r->max_p)) ||
        (rc = wsp__rule_bound(path, i, o, "min_bytes", 0, &r->min_bytes)) ||
        (rc = wsp__rule_bound(path, i, o, "max_bytes", UINT64_MAX, &r->max_bytes)))
      goto out;
    if (r->min_p > r->max_p || r->min_bytes > r->max_bytes) {
      rc = wsp__fail(NULL, WSP_ERR_CONFIG,
                     "rules file %s: rules[%zu] has a minimum above its maximum",
                     path, i);
      goto out;
    }
    rs->n++;
  }
  *out = rs;
  rs = NULL;
out:
  wsp__rules_free(rs);
  json_decref(root);
  return rc;
}

void wsp__rules_free(struct wsp__rules *r) {
  if (r == NULL) return;
  free(r->r);
  free(r);
}

uint64_t wsp__rules_fingerprint(const struct wsp__rules *r) {
  uint64_t h = WSP__FNV_INIT;
  if (r == NULL) return h;
  /* The struct has no padding: two ints, then four uint64_t. */
  for (size_t i = 0; i < r->n; i++) h = wsp__fnv(h, &r->r[i], sizeof r->r[i]);
  return h;
}

static int wsp__rules_match(const struct wsp__rules *r, wsp_coll_t coll, int p,
                            size_t bytes) {
  if (r == NULL) return WSP_ALG_AUTO;
  for (size_t i = 0; i < r->n; i++) {
    const wsp__rule_t *x = &r->r[i];
    if (x->coll == (int)coll && (uint64_t)p >= x->min_p && (uint64_t)p <= x->max_p &&
        (uint64_t)bytes >= x->min_bytes && (uint64_t)bytes <= x->max_bytes)
      return x->alg;
  }
  return WSP_ALG_AUTO;
}
