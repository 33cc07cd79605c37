/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * wsp_comm_t: a private duplicate of the user's communicator plus the
 * configuration every rank agreed on, the node topology (src/core/topo.c),
 * the sites (src/core/sites.c) and the lanes between them (src/p2p/wan.c),
 * striped point-to-point (src/p2p), the cost model (src/model), the rules
 * file (src/coll/select.c), the network map's trees (src/coll/aware.h) and
 * the sparse exchange's state (src/exchange). This layer assembles them
 * and answers the public questions about a communicator; it sits above
 * every part it assembles, so that none of them reaches up (docs/internals.md).
 */
#include "wsp_internal.h"

#include "../coll/select.h"
#include "../exchange/sparse.h"
#include "../model/model.h"
#include "../p2p/striped_internal.h"
#include "../p2p/wan.h"
#include "../p2p/xport.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int wsp_comm_create(MPI_Comm comm, const wsp_config_t *cfg, wsp_comm_t **out) {
  if (out == NULL)
    return wsp__fail(NULL, WSP_ERR_ARG, "wsp_comm_create: out is NULL");
  *out = NULL;
  if (comm == MPI_COMM_NULL)
    return wsp__fail(NULL, WSP_ERR_ARG, "wsp_comm_create: comm is MPI_COMM_NULL");
  int flag = 0;
  if (MPI_Initialized(&flag) != MPI_SUCCESS || !flag)
    return wsp__fail(NULL, WSP_ERR_ARG,
                     "wsp_comm_create: MPI is not initialized");

  /* A local configuration problem must not leave the other ranks waiting
   * in MPI_Comm_dup, so it is only reported after the agreement below. */
  wsp_config_t c;
  int local_rc = WSP_OK;
  char local_msg[512] = "";
  if (cfg) {
    c = *cfg;
    local_rc = wsp__config_check(&c);
  } else {
    wsp_config_init(&c);
    local_rc = wsp_config_from_env(&c);
  }
  struct wsp__rules *rules = NULL;
  if (local_rc == WSP_OK && c.rules_file)
    local_rc = wsp__rules_load(c.rules_file, &rules);
  if (local_rc != WSP_OK) {
    snprintf(local_msg, sizeof local_msg, "%s", wsp_last_error());
    wsp_config_init(&c); /* something valid to carry on with */
  }
  c.rules_file = NULL; /* read; the string need not outlive this call */
  const char *netmap_file = c.netmap_file; /* loaded once the comm exists */
  c.netmap_file = NULL;
  int want_netmap = netmap_file != NULL;

  wsp_comm_t *w = calloc(1, sizeof *w);
  /* The communicator's size before it is duplicated: the sparse state's
   * scratch is made now, so that no round ever needs O(p) memory. */
  int psize = 0;
  struct wsp__sparse_comm *sp = NULL;
  if (MPI_Comm_size(comm, &psize) == MPI_SUCCESS)
    sp = wsp__sparse_comm_new(psize, c.sparse_auto_interval);
  if (sp == NULL) {
    free(w);
    w = NULL;
  }
  int rc = WSP_OK;
  MPI_Comm dup = MPI_COMM_NULL;
  /* Allocation failure is local too; carry on with a stack object so the
   * collective steps still happen, then report. */
  wsp_comm_t tmp;
  wsp_comm_t *t = w ? w : &tmp;
  memset(t, 0, sizeof *t);
  t->cfg = c;
  t->owner = t;
  t->mpi = MPI_COMM_NULL;
  t->sparse = w ? sp : NULL;
  if (w == NULL) wsp__sparse_comm_free(sp);

  {
    /* The private duplicate, made under the time limit the configuration
     * asks for, as every wait of the library (a rank that never comes
     * makes MPI_Comm_idup's wait end in WSP_ERR_TIMEOUT). */
    wsp_comm_t user = {.mpi = comm, .cfg = c, .rank = 0, .size = psize};
    user.owner = &user;
    (void)wsp__usable(&user, "wsp_comm_create"); /* names the call in a timeout's message */
    if ((rc = wsp__comm_dup(&user, &dup)) != WSP_OK) goto fail;
  }
  WSP__MPI_GOTO(NULL, MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN), rc, fail);
  t->mpi = dup;
  WSP__MPI_GOTO(NULL, MPI_Comm_rank(dup, &t->rank), rc, fail);
  WSP__MPI_GOTO(NULL, MPI_Comm_size(dup, &t->size), rc, fail);
  {
    /* Agree: everybody's fingerprint equal and nobody failed locally. */
    int status = local_rc != WSP_OK ? local_rc : w == NULL ? WSP_ERR_NOMEM : WSP_OK;
    if (local_rc == WSP_OK && w == NULL)
      snprintf(local_msg, sizeof local_msg, "wsp_comm_create: out of memory");
    wsp__agree_t ag = {
        .what = "wsp_comm_create",
        .status = status,
        .status_msg = local_msg,
        .fp = wsp__config_fingerprint(&c) ^ (wsp__rules_fingerprint(rules) * 31u) ^
              (uint64_t)want_netmap * 0x9e3779b97f4a7c15u,
        .compare = 1,
        .differ_status = WSP_ERR_CONFIG,
        .differ = "the configuration differs between ranks (WSP_* environment variables "
                  "or wsp_config_t); every rank must use the same",
    };
    if ((rc = wsp__agree(t, &ag)) != WSP_OK) goto fail;
  }
  if (w->cfg.report && strcmp(w->cfg.report, "0") == 0) w->cfg.report = NULL;
  if (w->cfg.report) {
    /* Allocated now, after the agreement, so that every rank reports; a
     * rank without memory for it fails alone, as wsp__agree_alloc says. */
    w->report = wsp__report_new(w->cfg.report);
    if ((rc = wsp__agree_alloc(w, w->report == NULL, "wsp_comm_create: the report")) != WSP_OK)
      goto fail;
    w->cfg.report = w->report->dest; /* the copy outlives the caller's string */
  }
  for (int k = 0; k < WSP_COLL_COUNT; k++) w->coll_alg[k] = w->cfg.coll_alg[k];
  w->rules = rules;
  rules = NULL;
  if ((rc = wsp__topo_create(w)) != WSP_OK) goto fail;
  if ((rc = wsp__sites_create(w)) != WSP_OK) goto fail;
  if ((rc = wsp__stripe_create(w)) != WSP_OK) goto fail;
  if ((rc = wsp__xport_create(w)) != WSP_OK) goto fail;
  if (w->cfg.model_alpha > 0) {
    w->model.alpha = w->model.alpha_node = w->cfg.model_alpha;
    w->model.beta = w->model.beta_node = w->cfg.model_beta;
    w->model.gamma = w->cfg.model_gamma;
    w->model.beta_x = w->cfg.model_beta_x > 0 ? w->cfg.model_beta_x : w->cfg.model_beta;
    w->model.gap = w->cfg.model_gap > 0 ? w->cfg.model_gap : w->cfg.model_alpha;
    w->model.alpha_wan = w->model.alpha;
    w->model.beta_wan = w->model.beta;
    w->model.beta_wan_link = 0;
    w->model.calibrated = 0;
  } else if ((rc = wsp__model_calibrate(w, &w->model)) != WSP_OK) {
    goto fail;
  }
  if ((rc = wsp__model_eager(w, &w->model)) != WSP_OK) goto fail;
  wsp__topo_set_models(w);
  if (want_netmap) {
    wsp_netmap_t *map = NULL;
    if ((rc = wsp_netmap_load(w, netmap_file, &map)) == WSP_OK)
      rc = wsp_comm_set_netmap(w, map);
    wsp_netmap_free(&map);
    if (rc != WSP_OK) goto fail;
  }
  /* A forced segment above the eager limit makes every segment that MPI
   * carries wait for its receiver's handshake, which the pipelines' costs
   * do not price (docs/env.md, WSP_COLL_SEGMENT). Said once per
   * communicator, after an attached map has set the limit; not refused: the
   * lanes carry such segments without one. */
  if (w->cfg.coll_segment > 0 && w->model.eager > 0 && w->cfg.coll_segment > w->model.eager &&
      w->rank == 0)
    wsp__log(w, WSP_LOG_WARN,
             "the collectives' segment (WSP_COLL_SEGMENT, cfg.coll_segment) of %zu bytes is above "
             "the MPI's eager limit between nodes (%zu bytes, %s): "
             "each segment MPI carries between nodes pays a rendezvous handshake; a segment "
             "of at most %zu keeps the pipelines streaming",
             w->cfg.coll_segment, w->model.eager, wsp_eager_from_name(w->model.eager_from),
             w->model.eager);
  wsp__log(w, WSP_LOG_DEBUG, "wsp_comm_create: model alpha %.3g s, beta %.3g s/B, gamma %.3g s/B, beta_x %.3g s/B, gap %.3g s (%s)",
           w->model.alpha, w->model.beta, w->model.gamma, w->model.beta_x, w->model.gap,
           w->model.calibrated ? "calibrated" : "configured");
  wsp__log(w, WSP_LOG_DEBUG, "wsp_comm_create: size %d, sparse algorithm %s",
           w->size, wsp_sparse_alg_info(w->cfg.sparse_alg)->name);
  *out = w;
  return WSP_OK;

fail:
  if (w && w->report) {
    free(w->report->dest);
    free(w->report);
  }
  if (w) wsp__xport_free(w);
  if (w) wsp__stripe_free(w);
  if (w) wsp__aware_free(w->aware);
  if (w) wsp__topo_free(w);
  if (w) wsp__sites_wan_free(w);
  if (w) wsp__sites_free(w);
  if (dup != MPI_COMM_NULL) MPI_Comm_free(&dup);
  if (w) wsp__rules_free(w->rules);
  wsp__rules_free(rules);
  if (w) wsp__sparse_comm_free(w->sparse);
  free(w);
  return rc;
}

int wsp_comm_free(wsp_comm_t **comm) {
  if (comm == NULL)
    return wsp__fail(NULL, WSP_ERR_ARG, "wsp_comm_free: comm is NULL");
  wsp_comm_t *w = *comm;
  if (w == NULL) return WSP_OK;
  /* First, while every part of the communicator still works. */
  int rrc = wsp__report_finish(w);
  int rc = wsp__xport_free(w);
  if (rc == WSP_OK) rc = rrc;
  int src = wsp__stripe_free(w);
  if (rc == WSP_OK) rc = src;
  int trc = wsp__topo_free(w);
  if (rc == WSP_OK) rc = trc;
  wsp__sites_wan_free(w);
  wsp__sites_free(w);
  if (w->mpi != MPI_COMM_NULL) {
    int mrc = MPI_Comm_free(&w->mpi);
    if (mrc != MPI_SUCCESS)
      rc = wsp__mpi_fail(w, mrc, "MPI_Comm_free", WSP__WHERE);
  }
  wsp__rules_free(w->rules);
  wsp__aware_free(w->aware);
  wsp__sparse_comm_free(w->sparse);
  free(w);
  *comm = NULL;
  return rc;
}

int wsp_comm_rank(const wsp_comm_t *comm, int *rank) {
  if (comm == NULL) return wsp__fail(NULL, WSP_ERR_ARG, "wsp_comm_rank: comm is NULL");
  if (rank == NULL) return wsp__fail(comm, WSP_ERR_ARG, "wsp_comm_rank: rank is NULL");
  *rank = comm->rank;
  return WSP_OK;
}

int wsp_comm_size(const wsp_comm_t *comm, int *size) {
  if (comm == NULL) return wsp__fail(NULL, WSP_ERR_ARG, "wsp_comm_size: comm is NULL");
  if (size == NULL) return wsp__fail(comm, WSP_ERR_ARG, "wsp_comm_size: size is NULL");
  *size = comm->size;
  return WSP_OK;
}

int wsp_comm_config(const wsp_comm_t *comm, wsp_config_t *cfg) {
  if (comm == NULL) return wsp__fail(NULL, WSP_ERR_ARG, "wsp_comm_config: comm is NULL");
  if (cfg == NULL) return wsp__fail(comm, WSP_ERR_ARG, "wsp_comm_config: cfg is NULL");
  *cfg = comm->cfg;
  return WSP_OK;
}

const char *wsp_eager_from_name(int from) {
  switch (from) {
  case WSP_EAGER_FROM_NONE:
    return "none";
  case WSP_EAGER_FROM_MEASURED:
    return "measured";
  case WSP_EAGER_FROM_CONFIG:
    return "config";
  case WSP_EAGER_FROM_MAP:
    return "map";
  default:
    return "unknown";
  }
}

int wsp_comm_model(const wsp_comm_t *comm, wsp_model_t *model) {
  if (comm == NULL)
    return wsp__fail(NULL, WSP_ERR_ARG, "wsp_comm_model: comm is NULL");
  if (model == NULL)
    return wsp__fail(comm, WSP_ERR_ARG, "wsp_comm_model: model is NULL");
  *model = comm->model;
  return WSP_OK;
}

int wsp_comm_topology(const wsp_comm_t *comm, wsp_topology_t *topo) {
  if (comm == NULL)
    return wsp__fail(NULL, WSP_ERR_ARG, "wsp_comm_topology: comm is NULL");
  if (topo == NULL)
    return wsp__fail(comm, WSP_ERR_ARG, "wsp_comm_topology: topo is NULL");
  *topo = comm->topo.pub;
  const wsp__sites_t *st = &comm->sites;
  topo->sites = st->count;
  topo->site = st->count ? st->site_of[comm->rank] : -1;
  topo->site_ranks = st->count ? st->start[topo->site + 1] - st->start[topo->site] : 0;
  topo->wan_connections = st->count >= 2 ? wsp__sites_conns(comm) : 0;
  topo->wan_lanes = st->count >= 2 ? wsp__sites_lanes(comm) : 0;
  return WSP_OK;
}

int wsp_comm_node(const wsp_comm_t *comm, int rank, int *node) {
  if (comm == NULL) return wsp__fail(NULL, WSP_ERR_ARG, "wsp_comm_node: comm is NULL");
  if (node == NULL) return wsp__fail(comm, WSP_ERR_ARG, "wsp_comm_node: node is NULL");
  if (rank < 0 || rank >= comm->size)
    return wsp__fail(comm, WSP_ERR_ARG,
                     "wsp_comm_node: rank = %d is out of range [0, %d)", rank,
                     comm->size);
  *node = comm->topo.node_of[rank];
  return WSP_OK;
}

int wsp_comm_site(const wsp_comm_t *comm, int rank, int *site) {
  if (comm == NULL) return wsp__fail(NULL, WSP_ERR_ARG, "wsp_comm_site: comm is NULL");
  if (site == NULL) return wsp__fail(comm, WSP_ERR_ARG, "wsp_comm_site: site is NULL");
  if (rank < 0 || rank >= comm->size)
    return wsp__fail(comm, WSP_ERR_ARG,
                     "wsp_comm_site: rank = %d is out of range [0, %d)", rank, comm->size);
  *site = comm->sites.count > 0 ? comm->sites.site_of[rank] : -1;
  return WSP_OK;
}
