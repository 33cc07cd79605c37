/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The network map on this machine (WSP_NODES may group the ranks into
 * nodes): the probe's map is whole (every pair, positive figures, the node
 * layout of wsp_comm_node); the eager limit found matches the MPI setting
 * the test ran under (--expect-eager N: the MPI's eager limit in bytes,
 * which the payload may fall short of by a header); a map saved and loaded
 * is the same to the bit; bad files and maps of another job shape are
 * refused on every rank with WSP_ERR_CONFIG naming the file, and nobody
 * hangs; bad arguments give WSP_ERR_ARG on the rank that passed them and
 * WSP_ERR_REMOTE on the others; a byte budget stops after one pass; a map
 * attached to a communicator enables the aware algorithms; a refresh
 * measures again exactly the pairs of its rounds (seeded here with an
 * impossible latency, so that a measured one tells them apart), and all
 * pairs after a whole tournament of calls.
 *   test_netmap [--expect-eager N]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "wirespeed.h"
#include "mpi_check.h"
#include "../../src/netmap/netmap.h"
#include "../../src/coll/aware.h"

static wsp_comm_t *make(MPI_Comm c) {
  wsp_comm_t *w = NULL;
  int rc = wsp_comm_create(c, NULL, &w);
  CHECK(rc == WSP_OK, "wsp_comm_create: %s", wsp_last_error());
  return w;
}

/* A temporary path chosen on rank 0, the same on every rank. */
static void shared_path(char *path, size_t len, const char *what) {
  if (rank == 0) snprintf(path, len, "/tmp/wsp-test-netmap-%d-%s.json", (int)getpid(), what);
  MPI_Bcast(path, (int)len, MPI_CHAR, 0, MPI_COMM_WORLD);
}

/* Rank 0 writes `text` to path. */
static void put(const char *path, const char *text, size_t n) {
  if (rank == 0) {
    FILE *f = fopen(path, "wb");
    CHECK(f && fwrite(text, 1, n, f) == n, "cannot write %s", path);
    if (f) fclose(f);
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

/* Every rank loads path on w and must fail with WSP_ERR_CONFIG naming the
 * file and saying `want`. */
static void refused(wsp_comm_t *w, const char *path, const char *want, const char *what) {
  wsp_netmap_t *m = NULL;
  int rc = wsp_netmap_load(w, path, &m);
  CHECK(rc == WSP_ERR_CONFIG && m == NULL && strstr(wsp_last_error(), path) &&
            strstr(wsp_last_error(), want),
        "%s: %s: %s (wanted \"%s\")", what, wsp_err_name(rc), wsp_last_error(), want);
  wsp_netmap_free(&m);
}

/* The saved file with the first `from` replaced by `to`, on rank 0. */
static char *edited(const char *text, const char *from, const char *to) {
  const char *at = strstr(text, from);
  if (at == NULL) return NULL;
  size_t n = strlen(text) + strlen(to) + 1;
  char *e = malloc(n);
  snprintf(e, n, "%.*s%s%s", (int)(at - text), text, to, at + strlen(from));
  return e;
}

static char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  rewind(f);
  char *t = calloc(1, (size_t)n + 1);
  if (t && fread(t, 1, (size_t)n, f) != (size_t)n) t[0] = '\0';
  fclose(f);
  return t;
}

static void check_map(wsp_comm_t *w, const wsp_netmap_t *m, int reps) {
  wsp_netmap_info_t in;
  wsp_topology_t topo;
  CHECK(wsp_netmap_info(m, &in) == WSP_OK && wsp_comm_topology(w, &topo) == WSP_OK, "info");
  CHECK(in.p == size && in.nodes == topo.nodes && in.groups >= 1 && in.groups <= in.nodes &&
            in.reps == reps && in.seconds > 0,
        "info: p %d nodes %d groups %d reps %d seconds %g", in.p, in.nodes, in.groups, in.reps,
        in.seconds);
  CHECK((in.eager_inter > 0) == (topo.nodes >= 2), "eager between nodes: %zu", in.eager_inter);
  CHECK((in.eager_intra > 0) == (topo.max_node_ranks >= 2), "eager inside nodes: %zu",
        in.eager_intra);
  for (int a = 0; a < size; a++) {
    int node = -1, group = -1, want = -2;
    wsp_comm_node(w, a, &want);
    CHECK(wsp_netmap_node(m, a, &node, &group) == WSP_OK && node == want && group >= 0 &&
              group < in.groups,
          "rank %d: node %d (wsp_comm_node %d), group %d", a, node, want, group);
    for (int b = 0; b < size; b++) {
      double lat = -1, inv = -1, lat2, inv2;
      CHECK(wsp_netmap_pair(m, a, b, &lat, &inv) == WSP_OK, "pair %d %d", a, b);
      wsp_netmap_pair(m, b, a, &lat2, &inv2);
      if (a == b)
        CHECK(lat == 0 && inv == 0, "rank %d with itself: %g %g", a, lat, inv);
      else
        CHECK(lat > 0 && lat < 1 && inv > 0 && inv < 1e-3 && lat == lat2 && inv == inv2,
              "pair %d %d: latency %g s, %g s/byte", a, b, lat, inv);
    }
  }
}

static void same_map(const wsp_netmap_t *x, const wsp_netmap_t *y) {
  wsp_netmap_info_t a, b;
  wsp_netmap_info(x, &a);
  wsp_netmap_info(y, &b);
  CHECK(a.p == b.p && a.nodes == b.nodes && a.groups == b.groups && a.reps == b.reps &&
            a.eager_intra == b.eager_intra && a.eager_inter == b.eager_inter &&
            a.seconds == b.seconds,
        "info differs after save and load");
  for (int i = 0; i < a.p; i++)
    for (int j = 0; j < a.p; j++) {
      double l1, i1, l2, i2;
      wsp_netmap_pair(x, i, j, &l1, &i1);
      wsp_netmap_pair(y, i, j, &l2, &i2);
      CHECK(l1 == l2 && i1 == i2, "pair %d %d differs after save and load", i, j);
    }
}

static int aware_bcast(void) {
  int a = -1;
  wsp_coll_alg_from_name(WSP_COLL_BCAST, "aware", &a);
  return a;
}

/* The calls whose trees section 8 follows (predicting an aware algorithm
 * builds its tree, for root 0): bcast of a small and a large message,
 * reduce of a small one. */
static void build_trees(wsp_comm_t *w) {
  int ar = -1;
  double t[3] = {-1, -1, -1};
  wsp_coll_alg_from_name(WSP_COLL_REDUCE, "aware", &ar);
  CHECK(wsp_coll_predict(w, WSP_COLL_BCAST, aware_bcast(), 1024, 1, &t[0]) == WSP_OK &&
            wsp_coll_predict(w, WSP_COLL_BCAST, aware_bcast(), 1 << 20, 1, &t[1]) == WSP_OK &&
            wsp_coll_predict(w, WSP_COLL_REDUCE, ar, 64, 1, &t[2]) == WSP_OK && t[0] >= 0 &&
            t[1] >= 0 && t[2] >= 0,
        "predicting the aware trees: %g %g %g %s", t[0], t[1], t[2], wsp_last_error());
}

/* How many of the communicator's trees are built. */
static int trees_built(const wsp_comm_t *w) {
  int n = 0;
  for (int e = 0; e < WSP__AWARE_CACHE; e++) n += w->aware->entry[e].valid;
  return n;
}

/* Checks that x and y (the trees of two attaches) hold the same trees for
 * the same calls, children in the same order, and the same figures. */
static void same_trees(const struct wsp__aware *x, const struct wsp__aware *y, const char *what) {
  size_t pp = (size_t)size * (size_t)size;
  CHECK(memcmp(x->alpha, y->alpha, pp * sizeof *x->alpha) == 0 &&
            memcmp(x->beta, y->beta, pp * sizeof *x->beta) == 0 && x->eager == y->eager,
        "%s: the figures differ", what);
  int found = 0;
  for (int e = 0; e < WSP__AWARE_CACHE; e++) {
    const wsp__aware_entry_t *a = &x->entry[e];
    if (!a->valid) continue;
    for (int f = 0; f < WSP__AWARE_CACHE; f++) {
      const wsp__aware_entry_t *b = &y->entry[f];
      if (!b->valid || a->coll != b->coll || a->root != b->root || a->bytes != b->bytes ||
          a->proto != b->proto)
        continue;
      found++;
      CHECK(memcmp(a->tree.parent, b->tree.parent, (size_t)size * sizeof(int)) == 0 &&
                memcmp(a->order, b->order, (size_t)size * sizeof(int)) == 0,
            "%s: the trees of coll %d root %d, %zu bytes differ", what, (int)a->coll, a->root,
            a->bytes);
    }
  }
  CHECK(found == 3, "%s: %d of 3 trees found in both", what, found);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  long expect_eager = 0;
  for (int i = 1; i + 1 < argc; i++)
    if (strcmp(argv[i], "--expect-eager") == 0) expect_eager = atol(argv[i + 1]);
  wsp_comm_t *w = make(MPI_COMM_WORLD);
  wsp_netmap_probe_config_t cfg;
  wsp_netmap_probe_config_init(&cfg);
  cfg.reps = 3;
  cfg.stream_bytes = 64 << 10;

  /* 0. The eager limit wsp_comm_create measured (WSP_EAGER_LIMIT=auto)
   * between two nodes: the MPI's setting less a header, found to within
   * 1/16 from 4096 bytes up (a limit below that is reported as 0); with
   * one node, none. */
  wsp_topology_t topo0;
  wsp_model_t m0;
  wsp_comm_topology(w, &topo0);
  wsp_comm_model(w, &m0);
  if (topo0.nodes < 2)
    CHECK(m0.eager_from == WSP_EAGER_FROM_NONE && m0.eager == 0, "one node: eager %zu from %s",
          m0.eager, wsp_eager_from_name(m0.eager_from));
  else
    CHECK(m0.eager_from == WSP_EAGER_FROM_MEASURED, "eager from %s",
          wsp_eager_from_name(m0.eager_from));
  if (topo0.nodes >= 2 && expect_eager > 4096)
    CHECK(m0.eager <= (size_t)expect_eager &&
              m0.eager + (size_t)expect_eager / 16 + 256 >= (size_t)expect_eager,
          "measured at create: eager limit %zu, the MPI's setting %ld", m0.eager, expect_eager);
  else if (topo0.nodes >= 2 && expect_eager > 0)
    CHECK(m0.eager == 0,
          "measured at create: eager limit %zu, the MPI's setting %ld (below "
          "4096: 0)",
          m0.eager, expect_eager);

  /* 1. The probe's map. */
  wsp_netmap_t *m = NULL;
  int rc = wsp_netmap_probe(w, &cfg, &m);
  CHECK(rc == WSP_OK && m, "probe: %s %s", wsp_err_name(rc), wsp_last_error());
  if (m == NULL) MPI_Abort(MPI_COMM_WORLD, 1);
  check_map(w, m, 3);
  wsp_netmap_info_t info;
  wsp_netmap_info(m, &info);
  if (expect_eager > 0) {
    size_t found[2] = {info.eager_intra, info.eager_inter};
    for (int k = 0; k < 2; k++)
      if (found[k])
        CHECK(found[k] <= (size_t)expect_eager && found[k] + 256 >= (size_t)expect_eager,
              "eager limit %zu, the MPI's setting %ld", found[k], expect_eager);
  }

  /* 2. Saved and loaded: the same map. */
  char path[256], bad[256];
  shared_path(path, sizeof path, "map");
  shared_path(bad, sizeof bad, "bad");
  if (rank == 0) CHECK(wsp_netmap_save(m, path) == WSP_OK, "save: %s", wsp_last_error());
  MPI_Barrier(MPI_COMM_WORLD);
  wsp_netmap_t *back = NULL;
  rc = wsp_netmap_load(w, path, &back);
  CHECK(rc == WSP_OK && back, "load: %s %s", wsp_err_name(rc), wsp_last_error());
  if (back) same_map(m, back);
  wsp_netmap_free(&back);

  /* 3. Bad files, refused everywhere. */
  char *text = rank == 0 ? slurp(path) : NULL;
  refused(w, "/nonexistent/map.json", "cannot open", "missing file");
  put(bad, "hello", 5);
  refused(w, bad, "line 1", "not JSON");
  if (rank == 0) put(bad, text, strlen(text) / 2);
  else put(bad, "", 0);
  refused(w, bad, "line", "truncated");
  put(bad, "{\"format\": \"something else\"}", 28);
  refused(w, bad, "not a network map", "wrong format");
  const struct {
    const char *from, *to, *want, *what;
  } edits[] = {
      {"\"version\": 1", "\"version\": 99", "version 99", "wrong version"},
      {"\"latency_s\": ", "\"latency_s\": -", "must be a number > 0", "negative latency"},
      {"\"node_of\": [", "\"node_of\": [0, ", "wrong size", "node_of too long"},
  };
  for (size_t i = 0; i < sizeof edits / sizeof *edits; i++) {
    if (size == 1 && strstr(edits[i].from, "latency")) continue; /* no pair to edit */
    char *e = rank == 0 ? edited(text, edits[i].from, edits[i].to) : NULL;
    if (rank == 0) CHECK(e != NULL, "%s: no \"%s\" in the file", edits[i].what, edits[i].from);
    put(bad, e ? e : "", e ? strlen(e) : 0);
    refused(w, bad, edits[i].want, edits[i].what);
    free(e);
  }
  /* Another job shape: fewer ranks, another node layout. */
  MPI_Comm sub;
  MPI_Comm_split(MPI_COMM_WORLD, rank < size - 1 || size == 1, rank, &sub);
  wsp_comm_t *ws = make(sub);
  int subsize = 0;
  MPI_Comm_size(sub, &subsize);
  if (ws && subsize != size) refused(ws, path, "was measured for", "fewer ranks");
  wsp_comm_free(&ws);
  MPI_Comm_free(&sub);
  const char *nodes_env = getenv("WSP_NODES");
  char *saved_env = nodes_env ? strdup(nodes_env) : NULL;
  setenv("WSP_NODES", info.nodes == size ? "block:2" : "block:1", 1);
  wsp_comm_t *wn = make(MPI_COMM_WORLD);
  wsp_topology_t t;
  wsp_comm_topology(wn, &t);
  if (t.nodes != info.nodes) refused(wn, path, "nodes", "another node layout");
  wsp_comm_free(&wn);
  if (saved_env) setenv("WSP_NODES", saved_env, 1);
  else unsetenv("WSP_NODES");
  free(saved_env);

  /* 4. Bad arguments. */
  wsp_netmap_t *x = NULL;
  rc = wsp_netmap_probe(w, &cfg, rank == 0 ? NULL : &x);
  CHECK(rank == 0 ? rc == WSP_ERR_ARG && strstr(wsp_last_error(), "out is NULL")
                  : rc == WSP_ERR_REMOTE && x == NULL,
        "NULL out on rank 0: %s %s", wsp_err_name(rc), wsp_last_error());
  wsp_netmap_probe_config_t badcfg = cfg;
  badcfg.reps = 0;
  rc = wsp_netmap_probe(w, &badcfg, &x);
  CHECK(rc == WSP_ERR_ARG && strstr(wsp_last_error(), "cfg->reps") && x == NULL,
        "reps 0: %s %s", wsp_err_name(rc), wsp_last_error());
  badcfg = cfg;
  badcfg.stream_bytes = 7;
  rc = wsp_netmap_probe(w, &badcfg, &x);
  CHECK(rc == WSP_ERR_ARG && strstr(wsp_last_error(), "cfg->stream_bytes"), "stream 7: %s",
        wsp_last_error());
  if (size > 1) {
    badcfg = cfg;
    badcfg.reps = rank == 0 ? 2 : 3;
    rc = wsp_netmap_probe(w, &badcfg, &x);
    CHECK(rc == WSP_ERR_CONFIG && strstr(wsp_last_error(), "differs"), "mismatch: %s %s",
          wsp_err_name(rc), wsp_last_error());
  }
  CHECK(wsp_netmap_probe(NULL, &cfg, &x) == WSP_ERR_ARG, "NULL comm");
  CHECK(wsp_netmap_save(NULL, path) == WSP_ERR_ARG, "save NULL map");
  CHECK(wsp_netmap_save(m, NULL) == WSP_ERR_ARG, "save NULL path");
  CHECK(wsp_netmap_save(m, "/nonexistent/dir/map.json") == WSP_ERR_CONFIG &&
            strstr(wsp_last_error(), "/nonexistent/dir/map.json"),
        "save into a missing directory: %s", wsp_last_error());
  CHECK(wsp_netmap_load(w, NULL, &x) == WSP_ERR_ARG, "load NULL path");
  double l, iv;
  CHECK(wsp_netmap_pair(m, -1, 0, &l, &iv) == WSP_ERR_ARG &&
            wsp_netmap_pair(m, 0, size, &l, &iv) == WSP_ERR_ARG &&
            wsp_netmap_pair(m, 0, 0, NULL, &iv) == WSP_ERR_ARG,
        "pair out of range");
  int nd, gr;
  CHECK(wsp_netmap_node(m, size, &nd, &gr) == WSP_ERR_ARG, "node out of range");
  CHECK(wsp_netmap_info(NULL, &info) == WSP_ERR_ARG, "info of NULL");
  CHECK(wsp_netmap_free(NULL) == WSP_ERR_ARG, "free NULL");

  /* 5. A budget of one byte: one pass, still a whole map. */
  badcfg = cfg;
  badcfg.budget_bytes = 1;
  badcfg.eager_limits = 0;
  rc = wsp_netmap_probe(w, &badcfg, &x);
  CHECK(rc == WSP_OK, "budget: %s", wsp_last_error());
  if (x) {
    wsp_netmap_info(x, &info);
    /* One rank measures nothing: no byte counts against the budget. */
    CHECK(info.reps == (size > 1 ? 1 : 3) && info.eager_inter == 0 && info.eager_intra == 0,
          "byte budget: %d passes, eager %zu %zu", info.reps, info.eager_inter, info.eager_intra);
  }
  wsp_netmap_free(&x);
  CHECK(x == NULL && wsp_netmap_free(&x) == WSP_OK, "free of a NULL map");

  /* 6. Attaching a map: the aware algorithms' precondition holds only with
   * one (wsp_coll_predict says -1 without), from the call or WSP_NETMAP;
   * a map of another shape is refused on every rank. */
  double pt = 0;
  CHECK(wsp_coll_predict(w, WSP_COLL_BCAST, aware_bcast(), 1024, 1, &pt) == WSP_OK && pt < 0,
        "aware without a map: %g", pt);
  rc = wsp_comm_set_netmap(w, m);
  CHECK(rc == WSP_OK, "set_netmap: %s", wsp_last_error());
  CHECK(wsp_coll_predict(w, WSP_COLL_BCAST, aware_bcast(), 1024, 1, &pt) == WSP_OK && pt >= 0,
        "aware with a map: %g", pt);
  /* The map's eager limits replace the measured one, until it is detached. */
  wsp_model_t mm;
  wsp_comm_model(w, &mm);
  if (info.eager_inter || info.eager_intra)
    CHECK(mm.eager_from == WSP_EAGER_FROM_MAP && mm.eager == info.eager_inter &&
              mm.eager_node == info.eager_intra,
          "with the map: eager %zu from %s", mm.eager, wsp_eager_from_name(mm.eager_from));
  CHECK(wsp_comm_set_netmap(w, NULL) == WSP_OK &&
            wsp_coll_predict(w, WSP_COLL_BCAST, aware_bcast(), 1024, 1, &pt) == WSP_OK && pt < 0,
        "aware after detaching: %g", pt);
  wsp_comm_model(w, &mm);
  CHECK(mm.eager == m0.eager && mm.eager_node == 0 && mm.eager_from == m0.eager_from,
        "detached: eager %zu from %s, not the measured %zu", mm.eager,
        wsp_eager_from_name(mm.eager_from), m0.eager);
  CHECK(wsp_comm_set_netmap(NULL, m) == WSP_ERR_ARG, "set_netmap NULL comm");
  MPI_Comm_split(MPI_COMM_WORLD, rank < size - 1 || size == 1, rank, &sub);
  ws = make(sub);
  MPI_Comm_size(sub, &subsize);
  if (ws && subsize != size) {
    rc = wsp_comm_set_netmap(ws, m);
    CHECK(rc == WSP_ERR_ARG && strstr(wsp_last_error(), "was measured for"),
          "set_netmap, fewer ranks: %s %s", wsp_err_name(rc), wsp_last_error());
  }
  wsp_comm_free(&ws);
  MPI_Comm_free(&sub);
  setenv("WSP_NETMAP", path, 1);
  wsp_comm_t *we = make(MPI_COMM_WORLD);
  CHECK(we && wsp_coll_predict(we, WSP_COLL_BCAST, aware_bcast(), 1024, 1, &pt) == WSP_OK &&
            pt >= 0,
        "WSP_NETMAP: %g", pt);
  wsp_comm_free(&we);
  setenv("WSP_NETMAP", bad, 1);
  we = NULL;
  rc = wsp_comm_create(MPI_COMM_WORLD, NULL, &we);
  CHECK(rc == WSP_ERR_CONFIG && we == NULL && strstr(wsp_last_error(), bad),
        "WSP_NETMAP of a bad file: %s %s", wsp_err_name(rc), wsp_last_error());
  unsetenv("WSP_NETMAP");

  /* 7. Refreshing. Every pair between nodes gets a latency of 100 s; a
   * refresh of one round must bring back to earth exactly the pairs of one
   * round of a round-robin tournament (a perfect matching of the nodes:
   * floor(nodes / 2) pairs), and rounds = nodes - 1 (or nodes for odd
   * counts) every pair. */
  CHECK(wsp_netmap_refresh(w, m, 0) == WSP_ERR_ARG && strstr(wsp_last_error(), "rounds"),
        "refresh 0 rounds: %s", wsp_last_error());
  CHECK(wsp_netmap_refresh(w, m, -3) == WSP_ERR_ARG && strstr(wsp_last_error(), "rounds = -3"),
        "refresh -3 rounds: %s", wsp_last_error());
  CHECK(wsp_netmap_refresh(NULL, m, 1) == WSP_ERR_ARG && strstr(wsp_last_error(), "comm is NULL"),
        "refresh NULL comm: %s", wsp_last_error());
  rc = wsp_netmap_refresh(w, rank == 0 ? NULL : m, 1);
  CHECK(rank == 0 ? rc == WSP_ERR_ARG && strstr(wsp_last_error(), "map is NULL")
                  : rc == WSP_ERR_REMOTE,
        "refresh with NULL on rank 0: %s %s", wsp_err_name(rc), wsp_last_error());
  int nodes = m->nodes;
  for (int a = 0; a < nodes; a++)
    for (int b = 0; b < nodes; b++)
      if (a != b) m->lat[a * nodes + b] = 100;
  rc = wsp_netmap_refresh(w, m, 1);
  CHECK(rc == WSP_OK, "refresh: %s", wsp_last_error());
  int fresh = 0, stale = 0;
  for (int a = 0; a < nodes; a++)
    for (int b = a + 1; b < nodes; b++) {
      double l2 = m->lat[a * nodes + b];
      CHECK(l2 == m->lat[b * nodes + a], "refresh: pair %d %d not symmetric", a, b);
      if (l2 == 100) stale++;
      else if (l2 > 0 && l2 < 1) fresh++;
      else CHECK(0, "refresh: pair %d %d has latency %g", a, b, l2);
    }
  CHECK(fresh == nodes / 2 && stale == nodes * (nodes - 1) / 2 - nodes / 2,
        "one round refreshed %d pairs and left %d (nodes %d)", fresh, stale, nodes);
  rc = wsp_netmap_refresh(w, m, nodes);
  stale = 0;
  for (int a = 0; a < nodes; a++)
    for (int b = a + 1; b < nodes; b++) stale += m->lat[a * nodes + b] >= 1;
  CHECK(rc == WSP_OK && stale == 0, "a whole tournament left %d pairs: %s", stale,
        wsp_last_error());
  CHECK(wsp_comm_set_netmap(w, m) == WSP_OK && wsp_comm_set_netmap(w, NULL) == WSP_OK,
        "attaching a refreshed map: %s", wsp_last_error());

  /* 8. Attaching a map again. Figures that moved by at most 20% are kept,
   * and so are the trees; a pair that moved more takes its new figures and
   * the trees are built again, the same trees as a first attach of the
   * figures kept gives. A changed eager limit, too, builds them again. */
  if (nodes > 1) {
    size_t nn = (size_t)nodes * (size_t)nodes;
    double *lat0 = malloc(nn * sizeof *lat0), *inv0 = malloc(nn * sizeof *inv0);
    memcpy(lat0, m->lat, nn * sizeof *lat0);
    memcpy(inv0, m->inv_bw, nn * sizeof *inv0);
    CHECK(wsp_comm_set_netmap(w, m) == WSP_OK, "attach: %s", wsp_last_error());
    build_trees(w);
    const struct wsp__aware *aw = w->aware;
    int built = trees_built(w);
    CHECK(built == 3, "%d trees built for three calls", built);
    for (size_t k = 0; k < nn; k++) m->lat[k] *= 1.15, m->inv_bw[k] *= 0.85;
    CHECK(wsp_comm_set_netmap(w, m) == WSP_OK && w->aware == aw && trees_built(w) == 3,
          "figures within 20%%: %d trees kept, %s", trees_built(w), wsp_last_error());
    m->lat[1] = m->lat[nodes] = 3 * lat0[1];
    CHECK(wsp_comm_set_netmap(w, m) == WSP_OK && trees_built(w) == 0,
          "a pair moved: %d trees kept, %s", trees_built(w), wsp_last_error());
    build_trees(w);
    /* The reference: the first figures with pair (0, 1)'s latency tripled,
     * attached to a second communicator afresh. */
    memcpy(m->lat, lat0, nn * sizeof *lat0);
    memcpy(m->inv_bw, inv0, nn * sizeof *inv0);
    m->lat[1] = m->lat[nodes] = 3 * lat0[1];
    wsp_comm_t *wr = make(MPI_COMM_WORLD);
    CHECK(wr && wsp_comm_set_netmap(wr, m) == WSP_OK, "reference attach: %s", wsp_last_error());
    if (wr && wr->aware) {
      build_trees(wr);
      same_trees(w->aware, wr->aware, "a pair moved, against a first attach");
    }
    wsp_comm_free(&wr);
    m->eager_inter += 1;
    CHECK(wsp_comm_set_netmap(w, m) == WSP_OK && trees_built(w) == 0,
          "the eager limit moved: %d trees kept", trees_built(w));
    m->eager_inter -= 1;
    CHECK(wsp_comm_set_netmap(w, NULL) == WSP_OK, "detach: %s", wsp_last_error());
    memcpy(m->lat, lat0, nn * sizeof *lat0);
    free(lat0);
    free(inv0);
  }

  free(text);
  if (rank == 0) remove(path), remove(bad);
  wsp_netmap_free(&m);
  wsp_comm_free(&w);
  long all = 0;
  MPI_Allreduce(&failures, &all, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf("test_netmap: np %d, %ld failures\n", size, all);
  MPI_Finalize();
  return all ? 1 : 0;
}
