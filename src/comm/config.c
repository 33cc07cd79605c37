/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The user's configuration (wsp_config_t): its defaults, the bounds of every
 * field, the WSP_* parser and the fingerprint compared across ranks. It sits
 * with the communicator's assembly, above the parts whose names it parses
 * (the collectives' and the sparse exchange's algorithms). docs/env.md
 * lists every variable; keep it in step with this file.
 */
#include "wsp_internal.h"

#include <errno.h>
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* The bounds of every field, shared by the WSP_* parser below and the check
 * of a configuration passed in (wsp__config_check), so both accept the same. */
enum {
  WSP__AUTO_INTERVAL_MIN = 1,
  WSP__AUTO_INTERVAL_MAX = 1000000000,
  WSP__POLL_SLEEP_MAX_US = 1000000, /* one second */
  WSP__BIG_MESSAGE_MIN = 1024,
  WSP__BIG_MESSAGE_MAX = INT_MAX,
  WSP__COLL_SEGMENT_MAX = INT_MAX,
  WSP__P2P_PROBE_MS_MAX = 60000,
  WSP__WAN_CONNECTIONS_MAX = 256, /* WSP__SITES_CHAIN_MAX (tags.h) */
};
/* The largest model parameter (seconds, seconds per byte) taken as meant. */
#define WSP__MODEL_MAX 1e6
/* The longest WSP_TIMEOUT (seconds): about 11 days. */
#define WSP__TIMEOUT_MAX 1e6

int wsp_config_init(wsp_config_t *cfg) {
  if (cfg == NULL) return wsp__fail(NULL, WSP_ERR_ARG, "wsp_config_init: cfg is NULL");
  memset(cfg, 0, sizeof *cfg);
  cfg->log_level = WSP_LOG_WARN;
  cfg->sparse_alg = WSP_SPARSE_AUTO;
  cfg->sparse_auto_interval = 64;
  cfg->poll_max_sleep_us = 1000;
  cfg->big_message = INT_MAX;
  for (int c = 0; c < WSP_COLL_COUNT; c++) cfg->coll_alg[c] = WSP_ALG_AUTO;
  cfg->p2p_max_lanes = 16;
  cfg->p2p_probe_ms = 300;
  cfg->transport = WSP_TRANSPORT_AUTO;
  return WSP_OK;
}

int wsp__config_check(const wsp_config_t *c) {
  if ((int)c->log_level < WSP_LOG_OFF || c->log_level > WSP_LOG_TRACE)
    return wsp__fail(NULL, WSP_ERR_ARG,
                     "wsp_comm_create: cfg->log_level = %d is not a "
                     "wsp_log_level_t",
                     (int)c->log_level);
  if ((int)c->sparse_alg < WSP_SPARSE_AUTO || c->sparse_alg >= WSP_SPARSE_ALG_COUNT)
    return wsp__fail(NULL, WSP_ERR_ARG,
                     "wsp_comm_create: cfg->sparse_alg = %d is not a "
                     "wsp_sparse_alg_t",
                     (int)c->sparse_alg);
  if (c->sparse_auto_interval < WSP__AUTO_INTERVAL_MIN ||
      c->sparse_auto_interval > WSP__AUTO_INTERVAL_MAX)
    return wsp__fail(NULL, WSP_ERR_ARG,
                     "wsp_comm_create: cfg->sparse_auto_interval = %llu is "
                     "not in [%d, %d]",
                     (unsigned long long)c->sparse_auto_interval, WSP__AUTO_INTERVAL_MIN,
                     WSP__AUTO_INTERVAL_MAX);
  if (c->big_message < WSP__BIG_MESSAGE_MIN || c->big_message > WSP__BIG_MESSAGE_MAX)
    return wsp__fail(NULL, WSP_ERR_ARG,
                     "wsp_comm_create: cfg->big_message = %zu is not in "
                     "[%d, %d]",
                     c->big_message, WSP__BIG_MESSAGE_MIN, WSP__BIG_MESSAGE_MAX);
  for (int k = 0; k < WSP_COLL_COUNT; k++)
    if (c->coll_alg[k] != WSP_ALG_AUTO &&
        (c->coll_alg[k] < 0 || c->coll_alg[k] >= wsp_coll_alg_count((wsp_coll_t)k)))
      return wsp__fail(NULL, WSP_ERR_ARG,
                       "wsp_comm_create: cfg->coll_alg[%d] = %d is not "
                       "WSP_ALG_AUTO or a %s algorithm",
                       k, c->coll_alg[k], wsp_coll_name((wsp_coll_t)k));
  {
    static const char *const name[5] = {"alpha", "beta", "gamma", "beta_x", "gap"};
    double m[5] = {c->model_alpha, c->model_beta, c->model_gamma, c->model_beta_x,
                   c->model_gap};
    int set = 0;
    for (int k = 0; k < 5; k++) {
      if (!(m[k] >= 0) || m[k] > WSP__MODEL_MAX)
        return wsp__fail(NULL, WSP_ERR_ARG,
                         "wsp_comm_create: cfg->model_%s = %g is not in [0, %g]",
                         name[k], m[k], WSP__MODEL_MAX);
      set += k < 3 && m[k] > 0;
    }
    if (set != 0 && set != 3)
      return wsp__fail(NULL, WSP_ERR_ARG,
                       "wsp_comm_create: cfg->model_alpha, model_beta and "
                       "model_gamma must be all > 0 (configured model) or all "
                       "0 (calibrate)");
  }
  if ((int)c->node_split < WSP_NODES_HOST || c->node_split > WSP_NODES_CYCLIC ||
      (c->node_split != WSP_NODES_HOST && c->node_split_n < 1))
    return wsp__fail(NULL, WSP_ERR_ARG,
                     "wsp_comm_create: cfg->node_split = %d with node_split_n "
                     "= %d is not a valid node grouping",
                     (int)c->node_split, c->node_split_n);
  if (c->coll_segment > WSP__COLL_SEGMENT_MAX)
    return wsp__fail(NULL, WSP_ERR_ARG,
                     "wsp_comm_create: cfg->coll_segment = %zu is over %d",
                     c->coll_segment, WSP__COLL_SEGMENT_MAX);
  if (c->p2p_lanes > WSP_STRIPED_LANES_MAX)
    return wsp__fail(NULL, WSP_ERR_ARG, "wsp_comm_create: cfg->p2p_lanes = %u is over %d",
                     c->p2p_lanes, WSP_STRIPED_LANES_MAX);
  if (c->p2p_max_lanes < 2 || c->p2p_max_lanes > WSP_STRIPED_LANES_MAX)
    return wsp__fail(NULL, WSP_ERR_ARG,
                     "wsp_comm_create: cfg->p2p_max_lanes = %u is not in [2, %d]", c->p2p_max_lanes,
                     WSP_STRIPED_LANES_MAX);
  if (c->p2p_chunk != 0 && (c->p2p_chunk < 4096 || c->p2p_chunk > INT_MAX))
    return wsp__fail(NULL, WSP_ERR_ARG,
                     "wsp_comm_create: cfg->p2p_chunk = %zu is not 0 or in [4096, %d]",
                     c->p2p_chunk, INT_MAX);
  if (c->p2p_probe_ms < 10 || c->p2p_probe_ms > WSP__P2P_PROBE_MS_MAX)
    return wsp__fail(NULL, WSP_ERR_ARG,
                     "wsp_comm_create: cfg->p2p_probe_ms = %u is not in [10, %d]",
                     c->p2p_probe_ms, WSP__P2P_PROBE_MS_MAX);
  if (c->transport != WSP_TRANSPORT_AUTO && c->transport != WSP_TRANSPORT_MPI &&
      c->transport != WSP_TRANSPORT_LANES)
    return wsp__fail(NULL, WSP_ERR_ARG,
                     "wsp_comm_create: cfg->transport = %d is not a wsp_transport_t",
                     (int)c->transport);
  if (c->p2p_encrypt != 0 && c->p2p_encrypt != 1)
    return wsp__fail(NULL, WSP_ERR_ARG, "wsp_comm_create: cfg->p2p_encrypt = %d is not 0 or 1",
                     c->p2p_encrypt);
  if (wsp__sites_syntax(c->sites) != WSP_OK)
    return wsp__fail(NULL, WSP_ERR_ARG, "wsp_comm_create: cfg->sites: %s", wsp_last_error());
  if (c->wan_connections > WSP__WAN_CONNECTIONS_MAX)
    return wsp__fail(NULL, WSP_ERR_ARG,
                     "wsp_comm_create: cfg->wan_connections = %u is over %d",
                     c->wan_connections, WSP__WAN_CONNECTIONS_MAX);
  if (c->check != 0 && c->check != 1)
    return wsp__fail(NULL, WSP_ERR_ARG, "wsp_comm_create: cfg->check = %d (0 or 1)", c->check);
  if (c->wan_lanes > WSP_STRIPED_LANES_MAX)
    return wsp__fail(NULL, WSP_ERR_ARG, "wsp_comm_create: cfg->wan_lanes = %u is over %d",
                     c->wan_lanes, WSP_STRIPED_LANES_MAX);
  if (!(c->timeout >= 0) || c->timeout > WSP__TIMEOUT_MAX)
    return wsp__fail(NULL, WSP_ERR_ARG, "wsp_comm_create: cfg->timeout = %g is not in [0, %g] seconds",
                     c->timeout, WSP__TIMEOUT_MAX);
  if (c->poll_max_sleep_us > WSP__POLL_SLEEP_MAX_US)
    return wsp__fail(NULL, WSP_ERR_ARG,
                     "wsp_comm_create: cfg->poll_max_sleep_us = %u is over %d",
                     c->poll_max_sleep_us, WSP__POLL_SLEEP_MAX_US);
  return WSP_OK;
}

/* WSP_TIMEOUT: seconds as a decimal number, with an optional unit (s, ms,
 * min), in [0, WSP__TIMEOUT_MAX]; unset or empty leaves *out alone. */
static int wsp__env_seconds(const char *var, double *out) {
  static const struct {
    const char *unit;
    double factor;
  } units[] = {{"", 1}, {"s", 1}, {"ms", 1e-3}, {"min", 60}};
  const char *s = getenv(var);
  if (s == NULL || *s == '\0') return WSP_OK;
  char *end = NULL;
  errno = 0;
  double v = isdigit((unsigned char)s[0]) || s[0] == '.' ? strtod(s, &end) : -1;
  if (!errno && end != NULL && isfinite(v) && v >= 0)
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
      if (strcasecmp(end, units[i].unit) == 0 && v * units[i].factor <= WSP__TIMEOUT_MAX) {
        *out = v * units[i].factor;
        return WSP_OK;
      }
  return wsp__fail(NULL, WSP_ERR_CONFIG,
                   "%s=\"%s\": expected seconds in [0, %g] (30, 2.5, 500ms, 5min; 0: no limit)",
                   var, s, WSP__TIMEOUT_MAX);
}

int wsp_config_from_env(wsp_config_t *cfg) {
  if (cfg == NULL)
    return wsp__fail(NULL, WSP_ERR_ARG, "wsp_config_from_env: cfg is NULL");
  /* Parse into a copy so that a bad variable leaves *cfg untouched. */
  wsp_config_t c = *cfg;
  const char *s = getenv("WSP_LOG");
  if (s && *s) {
    int lvl = wsp__parse_log_level(s);
    if (lvl < 0)
      return wsp__fail(NULL, WSP_ERR_CONFIG,
                       "WSP_LOG=\"%s\": expected off, error, warn, info, "
                       "debug or trace",
                       s);
    c.log_level = (wsp_log_level_t)lvl;
  }
  s = getenv("WSP_SPARSE_ALGORITHM");
  if (s && *s) {
    int rc = wsp_sparse_alg_from_name(s, &c.sparse_alg);
    if (rc != WSP_OK)
      return wsp__fail(NULL, WSP_ERR_CONFIG, "WSP_SPARSE_ALGORITHM: %s",
                       wsp_last_error());
  }
  int rc;
  size_t v;
  v = (size_t)c.sparse_auto_interval;
  if ((rc = wsp__env_count("WSP_SPARSE_AUTO_INTERVAL", WSP__AUTO_INTERVAL_MIN,
                           WSP__AUTO_INTERVAL_MAX, &v)))
    return rc;
  c.sparse_auto_interval = v;
  v = c.poll_max_sleep_us;
  if ((rc = wsp__env_count("WSP_POLL_MAX_SLEEP_US", 0, WSP__POLL_SLEEP_MAX_US, &v))) return rc;
  c.poll_max_sleep_us = (unsigned)v;
  if ((rc = wsp__env_size("WSP_BIG_MESSAGE", WSP__BIG_MESSAGE_MIN, WSP__BIG_MESSAGE_MAX,
                          &c.big_message)))
    return rc;
  /* WSP_<COLL>_ALGORITHM for every collective. */
  for (int k = 0; k < WSP_COLL_COUNT; k++) {
    char var[64], up[32];
    const char *name = wsp_coll_name((wsp_coll_t)k);
    size_t i = 0;
    for (; name[i] && i + 1 < sizeof up; i++)
      up[i] = (char)toupper((unsigned char)name[i]);
    up[i] = '\0';
    snprintf(var, sizeof var, "WSP_%s_ALGORITHM", up);
    s = getenv(var);
    if (s && *s && wsp_coll_alg_from_name((wsp_coll_t)k, s, &c.coll_alg[k]))
      return wsp__fail(NULL, WSP_ERR_CONFIG, "%s: %s", var, wsp_last_error());
  }
  s = getenv("WSP_MODEL");
  if (s && *s) {
    double a, b, g, bx = 0, gap = 0;
    char extra;
    int n = sscanf(s, "%lf,%lf,%lf,%lf,%lf%c", &a, &b, &g, &bx, &gap, &extra);
    if (n < 3 || n > 5 || !(a > 0) || !(b > 0) || !(g > 0) || !(bx >= 0) ||
        !(gap >= 0) || !isfinite(a) || !isfinite(b) || !isfinite(g) ||
        !isfinite(bx) || !isfinite(gap) || a > WSP__MODEL_MAX || b > WSP__MODEL_MAX ||
        g > WSP__MODEL_MAX || bx > WSP__MODEL_MAX || gap > WSP__MODEL_MAX)
      return wsp__fail(NULL, WSP_ERR_CONFIG,
                       "WSP_MODEL=\"%s\": expected alpha,beta,gamma[,beta_x[,gap]] "
                       "(seconds per message, per byte sent, per byte reduced, "
                       "per byte exchanged, seconds between back-to-back "
                       "messages), the first three > 0 and all <= 1e6, e.g. "
                       "\"5e-5,8e-9,2e-10\"",
                       s);
    c.model_alpha = a, c.model_beta = b, c.model_gamma = g;
    c.model_beta_x = bx, c.model_gap = gap;
  }
  s = getenv("WSP_NODES");
  if (s && *s) {
    int n = 0, used = 0;
    if (strcmp(s, "host") == 0) {
      c.node_split = WSP_NODES_HOST, c.node_split_n = 0;
    } else if (sscanf(s, "block:%d%n", &n, &used) == 1 && s[used] == '\0' && n >= 1) {
      c.node_split = WSP_NODES_BLOCK, c.node_split_n = n;
    } else if (sscanf(s, "cyclic:%d%n", &n, &used) == 1 && s[used] == '\0' && n >= 1) {
      c.node_split = WSP_NODES_CYCLIC, c.node_split_n = n;
    } else {
      return wsp__fail(NULL, WSP_ERR_CONFIG,
                       "WSP_NODES=\"%s\": expected host, block:K (K "
                       "consecutive ranks per node) or cyclic:N (rank r on "
                       "node r mod N), K, N >= 1",
                       s);
    }
  }
  s = getenv("WSP_RULES_FILE");
  if (s && *s) c.rules_file = s;
  s = getenv("WSP_NETMAP");
  if (s && *s) c.netmap_file = s;
  if ((rc = wsp__env_size("WSP_COLL_SEGMENT", 0, WSP__COLL_SEGMENT_MAX, &c.coll_segment)))
    return rc;
  v = c.p2p_lanes;
  if ((rc = wsp__env_count("WSP_P2P_LANES", 0, WSP_STRIPED_LANES_MAX, &v))) return rc;
  c.p2p_lanes = (unsigned)v;
  v = c.p2p_max_lanes;
  if ((rc = wsp__env_count("WSP_P2P_MAX_LANES", 2, WSP_STRIPED_LANES_MAX, &v))) return rc;
  c.p2p_max_lanes = (unsigned)v;
  if ((rc = wsp__env_size("WSP_P2P_MIN", 0, SIZE_MAX, &c.p2p_min))) return rc;
  s = getenv("WSP_P2P_CHUNK");
  if (s && *s && strcmp(s, "0") != 0 &&
      (rc = wsp__env_size("WSP_P2P_CHUNK", 4096, INT_MAX, &c.p2p_chunk)))
    return rc;
  v = c.p2p_probe_ms;
  if ((rc = wsp__env_count("WSP_P2P_PROBE_MS", 10, WSP__P2P_PROBE_MS_MAX, &v))) return rc;
  c.p2p_probe_ms = (unsigned)v;
  s = getenv("WSP_P2P_IF");
  if (s && *s) c.p2p_interfaces = s;
  v = (size_t)c.p2p_encrypt;
  if ((rc = wsp__env_count("WSP_P2P_ENCRYPT", 0, 1, &v))) return rc;
  c.p2p_encrypt = (int)v;
  s = getenv("WSP_TRANSPORT");
  if (s && *s) {
    if (strcmp(s, "auto") == 0)
      c.transport = WSP_TRANSPORT_AUTO;
    else if (strcmp(s, "mpi") == 0)
      c.transport = WSP_TRANSPORT_MPI;
    else if (strcmp(s, "lanes") == 0)
      c.transport = WSP_TRANSPORT_LANES;
    else
      return wsp__fail(NULL, WSP_ERR_CONFIG, "WSP_TRANSPORT=\"%s\": expected auto, mpi or lanes",
                       s);
  }
  /* The striped engine's testing aids (docs/env.md) are read where they
   * act (src/p2p/striped.c), not kept here; a bad value is refused here
   * like any other, rather than ignored there. */
  size_t aid = 0;
  if ((rc = wsp__env_size("WSP_P2P_FAULT_RESET", 0, SIZE_MAX, &aid)) ||
      (rc = wsp__env_size("WSP_P2P_FAULT_POLL", 0, SIZE_MAX, &aid)) ||
      (rc = wsp__env_count("WSP_P2P_FAULT_SETUP_MS", 0, 600000, &aid)))
    return rc;
  s = getenv("WSP_P2P_ENDGAME");
  if (s && *s && strcmp(s, "always") != 0)
    return wsp__fail(NULL, WSP_ERR_CONFIG, "WSP_P2P_ENDGAME=\"%s\": expected always, or unset", s);
  double figures[5];
  if ((rc = wsp__env_probe_figures(figures)) < 0) return rc;
  s = getenv("WSP_SITES");
  if (s && *s) {
    if ((rc = wsp__sites_syntax(s)) != WSP_OK)
      return wsp__fail(NULL, rc, "%s", wsp_last_error());
    c.sites = s;
  }
  v = c.wan_connections;
  if ((rc = wsp__env_count("WSP_WAN_CONNECTIONS", 0, WSP__WAN_CONNECTIONS_MAX, &v))) return rc;
  c.wan_connections = (unsigned)v;
  v = c.wan_lanes;
  if ((rc = wsp__env_count("WSP_WAN_LANES", 0, WSP_STRIPED_LANES_MAX, &v))) return rc;
  c.wan_lanes = (unsigned)v;
  v = (size_t)c.check;
  if ((rc = wsp__env_count("WSP_CHECK", 0, 1, &v))) return rc;
  c.check = (int)v;
  if ((rc = wsp__env_seconds("WSP_TIMEOUT", &c.timeout))) return rc;
  /* WSP_REPORT: 0 (or unset) off, 1 the table, anything else a file name;
   * no value is refused, as any text can name a file. */
  s = getenv("WSP_REPORT");
  c.report = s && *s && strcmp(s, "0") != 0 ? s : NULL;
  s = getenv("WSP_EAGER_LIMIT");
  if (s && *s) {
    size_t lim = 0;
    if (strcmp(s, "auto") == 0)
      c.eager_limit = WSP_EAGER_LIMIT_AUTO;
    else if (strcmp(s, "none") == 0)
      c.eager_limit = WSP_EAGER_LIMIT_NONE;
    else if (wsp_parse_size(s, &lim) == WSP_OK && lim >= 1 && lim < WSP_EAGER_LIMIT_NONE)
      c.eager_limit = lim;
    else
      return wsp__fail(NULL, WSP_ERR_CONFIG,
                       "WSP_EAGER_LIMIT=\"%s\": expected auto, none or a size of at least 1 "
                       "byte (K, M, G: powers of two)",
                       s);
  }
  *cfg = c;
  return WSP_OK;
}

/* Over the fields that change which messages go where. Log level and poll
 * sleep may differ between ranks without harm. */
uint64_t wsp__config_fingerprint(const wsp_config_t *cfg) {
  uint64_t h = WSP__FNV_INIT;
  uint64_t alg = (uint64_t)cfg->sparse_alg;
  uint64_t big = (uint64_t)cfg->big_message;
  uint64_t interval = cfg->sparse_auto_interval;
  h = wsp__fnv(h, &alg, sizeof alg);
  h = wsp__fnv(h, &big, sizeof big);
  h = wsp__fnv(h, &interval, sizeof interval);
  for (int c = 0; c < WSP_COLL_COUNT; c++) {
    int64_t a = cfg->coll_alg[c];
    h = wsp__fnv(h, &a, sizeof a);
  }
  double m[5] = {cfg->model_alpha, cfg->model_beta, cfg->model_gamma,
                 cfg->model_beta_x, cfg->model_gap};
  h = wsp__fnv(h, m, sizeof m);
  uint64_t seg = cfg->coll_segment;
  h = wsp__fnv(h, &seg, sizeof seg);
  int64_t nodes[2] = {(int64_t)cfg->node_split, cfg->node_split_n};
  h = wsp__fnv(h, nodes, sizeof nodes);
  /* Whether to load a map (a collective step); its contents are compared
   * when it is loaded. */
  uint64_t netmap = cfg->netmap_file != NULL;
  h = wsp__fnv(h, &netmap, sizeof netmap);
  /* Both ends of a striped message choose its path from these. */
  uint64_t p2p[4] = {cfg->p2p_lanes, cfg->p2p_max_lanes, cfg->p2p_min,
                     (uint64_t)(cfg->p2p_encrypt != 0)};
  h = wsp__fnv(h, p2p, sizeof p2p);
  int64_t transport = cfg->transport;
  h = wsp__fnv(h, &transport, sizeof transport);
  /* Sites decide which ranks talk across sites. */
  const char *sites = cfg->sites ? cfg->sites : "auto";
  h = wsp__fnv(h, sites, strlen(sites) + 1);
  uint64_t wan[2] = {cfg->wan_connections, cfg->wan_lanes};
  h = wsp__fnv(h, wan, sizeof wan);
  /* A rank that checks waits in the check's allreduce for the others. */
  uint64_t check = (uint64_t)cfg->check;
  h = wsp__fnv(h, &check, sizeof check);
  /* With a time limit MPI's collectives run as their non-blocking forms,
   * which do not match the blocking ones; the limit itself may differ. */
  uint64_t timed = cfg->timeout > 0;
  h = wsp__fnv(h, &timed, sizeof timed);
  /* A report gathers its figures with a reduction at wsp_comm_free, which
   * every rank must join; where it goes may differ. */
  uint64_t report = cfg->report != NULL && strcmp(cfg->report, "0") != 0;
  h = wsp__fnv(h, &report, sizeof report);
  /* Whether the limit is measured (a collective step at create) and the
   * segments it bounds. */
  uint64_t eager = cfg->eager_limit;
  h = wsp__fnv(h, &eager, sizeof eager);
  return h;
}
