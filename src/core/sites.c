/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Sites: which ranks of a communicator sit together behind a link that is
 * longer or narrower than the links among them (two clusters joined by a
 * WAN, cloud regions, racks behind an oversubscribed uplink). The
 * multi-site collectives (bcast and allreduce "sites", "far_first",
 * "two_tier"; docs/sites.md) move data between sites over several
 * connections at once, and the model prices those links on their own
 * (wsp_model_t alpha_wan, beta_wan, beta_wan_link).
 *
 * Where sites come from is cfg.sites (WSP_SITES):
 *   auto (or unset)  the network map's groups when a map is attached
 *                    (nodes joined by latencies a factor apart; netmap.c),
 *                    else none;
 *   none             no sites, even with a map;
 *   map              the map's groups, none without a map;
 *   ranks:LIST;...   one LIST per site: ranks and ranges of ranks of the
 *                    communicator ("0-3,8;4-7,9"); every rank exactly once;
 *   hosts:PAT,...;.. one list of host-name patterns (fnmatch(3)) per site;
 *                    a rank belongs to the first site one of whose
 *                    patterns matches MPI_Get_processor_name; every rank
 *                    must match one.
 * Sites are numbered by their lowest rank, whatever order the
 * specification lists them in, as nodes are (topo.c), so that every way of
 * naming the same grouping gives the same numbers. A specification naming
 * one site, or a map with one group, gives one site: no multi-site
 * algorithm runs.
 *
 * Every rank holds the same arrays: "ranks:" is parsed from the same
 * string on every rank (wsp_comm_create has compared the configurations'
 * fingerprints, which include it), and "hosts:" allgathers each rank's
 * match; a failure is therefore the same on every rank.
 */
#include "wsp_internal.h"
#include "../patterns/reduce_sched.h"
#include "../patterns/tree.h"

#include <ctype.h>
#include <fnmatch.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { WSP__SITES_PATTERN_MAX = 256 };

/* Parses a non-negative decimal at *s (no sign, no spaces); advances *s. */
static int wsp__sites_number(const char **s, long *v) {
  const char *q = *s;
  if (!isdigit((unsigned char)*q)) return -1;
  long x = 0;
  while (isdigit((unsigned char)*q)) {
    x = x * 10 + (*q++ - '0');
    if (x > 1000000000L) return -1;
  }
  *v = x;
  *s = q;
  return 0;
}

/* Walks a "ranks:" list: calls visit(site, lo, hi, arg) for every range
 * lo..hi (inclusive) of every site. -1 on a syntax error (message set). */
static int wsp__sites_walk_ranks(const char *list, int (*visit)(int, long, long, void *),
                                 void *arg) {
  const char *s = list;
  int site = 0;
  for (;;) {
    long lo, hi;
    if (wsp__sites_number(&s, &lo))
      return wsp__fail_quiet(WSP_ERR_CONFIG,
                             "WSP_SITES=\"ranks:%s\": expected a rank at \"%s\" (sites "
                             "separated by ';', ranks and ranges such as 0-3 by ',')",
                             list, s), -1;
    hi = lo;
    if (*s == '-') {
      s++;
      if (wsp__sites_number(&s, &hi) || hi < lo)
        return wsp__fail_quiet(WSP_ERR_CONFIG,
                               "WSP_SITES=\"ranks:%s\": range starting at %ld has no "
                               "end at or above it",
                               list, lo), -1;
    }
    if (visit && visit(site, lo, hi, arg)) return -1;
    if (*s == ',') {
      s++;
    } else if (*s == ';') {
      s++;
      site++;
    } else if (*s == '\0') {
      return site + 1;
    } else {
      return wsp__fail_quiet(WSP_ERR_CONFIG,
                             "WSP_SITES=\"ranks:%s\": unexpected '%c' (sites separated by "
                             "';', ranks by ',')",
                             list, *s), -1;
    }
  }
}

/* Checks a "hosts:" list: non-empty patterns of printable characters. */
static int wsp__sites_check_hosts(const char *list) {
  const char *s = list;
  size_t len = 0;
  for (;; s++) {
    if (*s == ',' || *s == ';' || *s == '\0') {
      if (len == 0)
        return wsp__fail_quiet(WSP_ERR_CONFIG,
                               "WSP_SITES=\"hosts:%s\": empty host pattern (sites separated "
                               "by ';', patterns by ',')",
                               list);
      if (len >= WSP__SITES_PATTERN_MAX)
        return wsp__fail_quiet(WSP_ERR_CONFIG,
                               "WSP_SITES=\"hosts:%s\": a pattern is %d characters or "
                               "longer",
                               list, WSP__SITES_PATTERN_MAX);
      len = 0;
      if (*s == '\0') return WSP_OK;
    } else if (!isgraph((unsigned char)*s)) {
      return wsp__fail_quiet(WSP_ERR_CONFIG,
                             "WSP_SITES=\"hosts:%s\": blank or control character in a "
                             "pattern",
                             list);
    } else {
      len++;
    }
  }
}

int wsp__sites_syntax(const char *spec) {
  if (spec == NULL || strcmp(spec, "auto") == 0 || strcmp(spec, "none") == 0 ||
      strcmp(spec, "map") == 0)
    return WSP_OK;
  if (strncmp(spec, "ranks:", 6) == 0)
    return wsp__sites_walk_ranks(spec + 6, NULL, NULL) < 0 ? WSP_ERR_CONFIG : WSP_OK;
  if (strncmp(spec, "hosts:", 6) == 0) return wsp__sites_check_hosts(spec + 6);
  return wsp__fail_quiet(WSP_ERR_CONFIG,
                         "WSP_SITES=\"%s\": expected auto, none, map, ranks:LIST;LIST... "
                         "(e.g. ranks:0-3;4-7) or hosts:PATTERNS;PATTERNS... (e.g. "
                         "hosts:a*;b*)",
                         spec);
}

typedef struct {
  const char *list;
  int p;
  int *site_of;
} wsp__sites_fill_t;

static int wsp__sites_fill(int site, long lo, long hi, void *arg) {
  wsp__sites_fill_t *f = arg;
  if (hi >= f->p) {
    wsp__fail_quiet(WSP_ERR_CONFIG,
                    "WSP_SITES=\"ranks:%s\": rank %ld is not in this communicator of %d "
                    "ranks",
                    f->list, hi, f->p);
    return -1;
  }
  for (long r = lo; r <= hi; r++) {
    if (f->site_of[r] >= 0) {
      wsp__fail_quiet(WSP_ERR_CONFIG, "WSP_SITES=\"ranks:%s\": rank %ld is listed twice",
                      f->list, r);
      return -1;
    }
    f->site_of[r] = site;
  }
  return 0;
}

int wsp__sites_parse_ranks(const char *list, int p, int *site_of) {
  for (int r = 0; r < p; r++) site_of[r] = -1;
  wsp__sites_fill_t f = {list, p, site_of};
  int n = wsp__sites_walk_ranks(list, wsp__sites_fill, &f);
  if (n < 0) return -1;
  for (int r = 0; r < p; r++)
    if (site_of[r] < 0)
      return wsp__fail_quiet(WSP_ERR_CONFIG,
                             "WSP_SITES=\"ranks:%s\": rank %d of this communicator of %d "
                             "ranks is on no site",
                             list, r, p), -1;
  return n;
}

int wsp__sites_match_host(const char *list, const char *host) {
  char pat[WSP__SITES_PATTERN_MAX];
  int site = 0;
  size_t len = 0;
  for (const char *s = list;; s++) {
    if (*s == ',' || *s == ';' || *s == '\0') {
      pat[len < sizeof pat ? len : sizeof pat - 1] = '\0';
      if (len > 0 && len < sizeof pat && fnmatch(pat, host, 0) == 0) return site;
      len = 0;
      if (*s == ';') site++;
      if (*s == '\0') return -1;
    } else if (len + 1 < sizeof pat) {
      pat[len++] = *s;
    } else {
      len = sizeof pat; /* too long: never matches (the syntax check refuses it) */
    }
  }
}

/* Builds the arrays from raw site ids (any numbering, all >= 0),
 * renumbering the sites by their lowest rank; with node_of, raw is indexed
 * by node (rank r's id is raw[node_of[r]]). Needs no memory: the raw id
 * of each new site is kept in index[] until index[] is filled (O(p.sites),
 * and sites are few). */
static void wsp__sites_build(wsp__sites_t *st, int p, const int *raw, const int *node_of) {
  int count = 0;
  for (int r = 0; r < p; r++) {
    int id = node_of ? raw[node_of[r]] : raw[r], s = 0;
    while (s < count && st->index[s] != id) s++;
    if (s == count) st->index[count++] = id;
    st->site_of[r] = s;
  }
  /* Counting sort of the ranks by site, rank order kept. */
  for (int s = 0; s <= count; s++) st->start[s] = 0;
  for (int r = 0; r < p; r++) st->start[st->site_of[r] + 1]++;
  for (int s = 0; s < count; s++) st->start[s + 1] += st->start[s];
  for (int r = 0; r < p; r++) st->rank[st->start[st->site_of[r]]++] = r;
  for (int s = count; s > 0; s--) st->start[s] = st->start[s - 1];
  st->start[0] = 0;
  st->min_size = p;
  st->max_size = 0;
  for (int s = 0; s < count; s++) {
    int n = st->start[s + 1] - st->start[s];
    if (n < st->min_size) st->min_size = n;
    if (n > st->max_size) st->max_size = n;
    for (int k = 0; k < n; k++) st->index[st->rank[st->start[s] + k]] = k;
  }
  st->count = count;
  st->cross_fold = wsp__sites_cross(st, p, 0);
  for (int k = 0; k < 31; k++) {
    st->cross[k] = (1 << k) < p ? wsp__sites_cross(st, p, 1 << k) : 0;
    st->shift[k] = (1 << k) < p ? wsp__sites_shift(st, p, 1 << k) : 0;
  }
  /* Rank r > 0 hangs from its parent at the level of r's lowest set bit. */
  st->tree_cross = 0;
  for (int r = 1; r < p; r++)
    if (st->site_of[r] != st->site_of[wsp__binomial_parent(r, p)])
      st->tree_cross |= (unsigned)(r & -r);
}

int wsp__sites_shift(const wsp__sites_t *st, int p, int d) {
  int most = 0;
  for (int s = 0; s < st->count; s++) {
    int n = 0;
    for (int i = st->start[s]; i < st->start[s + 1]; i++)
      n += st->site_of[(st->rank[i] - d % p + p) % p] != s;
    if (n > most) most = n;
  }
  return most;
}

int wsp__sites_cross(const wsp__sites_t *st, int p, int d) {
  int most = 0;
  for (int s = 0; s < st->count; s++) {
    int n = 0;
    for (int i = st->start[s]; i < st->start[s + 1]; i++) {
      int r = st->rank[i], nr = wsp__fold_newrank(r, p, -1), peer;
      if (d == 0)
        peer = wsp__fold_partner(r, p);
      else if (nr < 0 || (nr ^ d) >= wsp__rsched_pow2_floor(p))
        peer = -1;
      else
        peer = wsp__fold_oldrank(nr ^ d, p, -1);
      if (peer >= 0 && st->site_of[peer] != s) n++;
    }
    if (n > most) most = n;
  }
  return most;
}

static wsp__sites_mode_t wsp__sites_mode(const char *spec) {
  if (spec == NULL || strcmp(spec, "auto") == 0) return WSP__SITES_AUTO;
  if (strcmp(spec, "none") == 0) return WSP__SITES_NONE;
  if (strcmp(spec, "map") == 0) return WSP__SITES_MAP;
  if (strncmp(spec, "ranks:", 6) == 0) return WSP__SITES_RANKS;
  return WSP__SITES_HOSTS;
}

int wsp__sites_create(wsp_comm_t *comm) {
  wsp__sites_t *st = &comm->sites;
  int p = comm->size, rc = WSP_OK;
  const char *spec = comm->cfg.sites;
  memset(st, 0, sizeof *st);
  st->mode = wsp__sites_mode(spec);
  /* Every array now, also for auto and map, so that a map attached later
   * needs no memory. */
  int *mem = malloc((size_t)(4 * p + 1) * sizeof *mem);
  int *raw = malloc((size_t)p * sizeof *raw);
  if (spec) st->spec = strdup(spec);
  rc = wsp__agree_alloc(comm, mem == NULL || raw == NULL || (spec && !st->spec),
                        "wsp_comm_create: sites");
  if (rc != WSP_OK) {
    free(mem);
    free(raw);
    free(st->spec);
    st->spec = NULL;
    return rc;
  }
  st->site_of = mem;
  st->rank = mem + p;
  st->index = mem + 2 * p;
  st->start = mem + 3 * p;
  comm->cfg.sites = st->spec; /* the copy outlives the caller's string */
  if (st->mode == WSP__SITES_RANKS) {
    /* The same string on every rank: the same outcome, no traffic. */
    if (wsp__sites_parse_ranks(spec + 6, p, raw) < 0)
      rc = wsp__fail(comm, WSP_ERR_CONFIG, "wsp_comm_create: %s", wsp_last_error());
    else
      wsp__sites_build(st, p, raw, NULL);
  } else if (st->mode == WSP__SITES_HOSTS) {
    char name[MPI_MAX_PROCESSOR_NAME + 1] = "";
    int len = 0, mine;
    WSP__MPI_GOTO(comm, MPI_Get_processor_name(name, &len), rc, out);
    mine = wsp__sites_match_host(spec + 6, name);
    WSP__MPI_COLL_GOTO(comm, rc, out, Allgather, &mine, 1, MPI_INT, raw, 1, MPI_INT, comm->mpi);
    int first = -1;
    for (int r = 0; r < p && first < 0; r++)
      if (raw[r] < 0) first = r;
    if (first >= 0) {
      /* Every rank reports the same rank; it names its own host. */
      if (first == comm->rank)
        rc = wsp__fail(comm, WSP_ERR_CONFIG,
                       "wsp_comm_create: WSP_SITES=\"%s\": host \"%s\" (rank %d) "
                       "matches no site's pattern",
                       spec, name, first);
      else
        rc = wsp__fail(comm, WSP_ERR_CONFIG,
                       "wsp_comm_create: WSP_SITES=\"%s\": the host of rank %d matches "
                       "no site's pattern",
                       spec, first);
    } else {
      wsp__sites_build(st, p, raw, NULL);
    }
  }
out:
  free(raw);
  if (rc != WSP_OK) wsp__sites_free(comm);
  else if (st->count)
    wsp__log(comm, WSP_LOG_DEBUG, "sites: %d (%d to %d ranks), this rank on site %d",
             st->count, st->min_size, st->max_size, st->site_of[comm->rank]);
  return rc;
}

void wsp__sites_from_map(wsp_comm_t *comm, const int *node_of, const int *group) {
  wsp__sites_t *st = &comm->sites;
  if (st->site_of == NULL) return;
  if (st->mode != WSP__SITES_AUTO && st->mode != WSP__SITES_MAP) return;
  /* The site communicator speaks of the old sites. MPI_Comm_free is
   * collective, and so is attaching a map: every rank is here. */
  wsp__comm_unwrap(&st->comm);
  if (group == NULL) {
    st->count = 0;
    return;
  }
  wsp__sites_build(st, comm->size, group, node_of);
  if (st->count < 2) st->count = 0;
}

/* Under a time limit, a barrier that obeys it: the site's communicator
 * below is made with MPI_Comm_split, which has no non-blocking form, so it
 * starts only once every rank is in the call that makes it. A rank that
 * stopped before it ends the wait with WSP_ERR_TIMEOUT instead of hanging
 * that call; one that stops in the moment between still hangs it
 * (docs/faults.md). */
static int wsp__sites_gate(const wsp_comm_t *comm) {
#ifdef WSP_SIMGRID
  (void)comm;
  return WSP_OK; /* the simulated build ignores the limit */
#else
  if (!(comm->cfg.timeout > 0)) return WSP_OK;
  MPI_Request r = MPI_REQUEST_NULL;
  int mrc = MPI_Ibarrier(comm->mpi, &r);
  return mrc != MPI_SUCCESS ? wsp__mpi_fail(comm, mrc, "MPI_Ibarrier", WSP__WHERE)
                            : wsp__coll_wait(comm, &r);
#endif
}

wsp_comm_t *wsp__sites_comm(wsp_comm_t *comm, int *rc) {
  wsp__sites_t *st = &comm->sites;
  *rc = WSP_OK;
  if (st->comm) return st->comm;
  if ((*rc = wsp__sites_gate(comm)) != WSP_OK) return NULL;
  MPI_Comm mc = MPI_COMM_NULL;
  int mrc = MPI_Comm_split(comm->mpi, st->site_of[comm->rank], comm->rank, &mc);
  if (mrc != MPI_SUCCESS) {
    *rc = wsp__mpi_fail(comm, mrc, "MPI_Comm_split", WSP__WHERE);
    return NULL;
  }
  wsp_comm_t *w = wsp__comm_wrap(comm, mc);
  if (w == NULL) MPI_Comm_free(&mc);
  if ((*rc = wsp__agree_alloc(comm, w == NULL, "sites: site communicator"))) {
    wsp__comm_unwrap(&w);
    return NULL;
  }
  /* Nodes of one rank each: the node-aware algorithms do not nest in a
   * site's step. */
  w->topo.pub = (wsp_topology_t){.nodes = w->size, .node = w->rank, .node_ranks = 1,
                                 .max_node_ranks = 1, .blocks = 1};
  for (int r = 0; r < w->size; r++) w->topo.node_of[r] = r;
  st->comm = w;
  return w;
}

void wsp__sites_free(wsp_comm_t *comm) {
  wsp__sites_t *st = &comm->sites;
  /* The lanes' communicator is p2p's (wsp__sites_wan_free), freed first. */
  wsp__comm_unwrap(&st->comm);
  free(st->site_of);
  free(st->spec);
  if (comm->cfg.sites == st->spec) comm->cfg.sites = NULL;
  memset(st, 0, sizeof *st);
}

int wsp__sites_conns(const wsp_comm_t *comm) {
  const wsp__sites_t *st = &comm->sites;
  if (st->count < 2) return 0;
  int n = (int)comm->cfg.wan_connections;
  if (n == 0) {
    const wsp_model_t *m = &comm->model;
    /* Enough connections to fill the link and no more: beyond that they
     * only share it (and, on a real WAN, congest it). */
    double r = m->beta_wan_link > 0 ? m->beta_wan / m->beta_wan_link : INFINITY;
    n = r < st->min_size ? (int)ceil(r - 0.25) : st->min_size;
  }
  if (n > st->min_size) n = st->min_size;
  return n < 1 ? 1 : n;
}

