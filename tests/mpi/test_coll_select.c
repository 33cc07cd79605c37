/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Algorithm selection: the model's cheapest algorithm is the one chosen;
 * forced algorithms (environment and wsp_coll_set_alg) are used, and fall
 * back when their preconditions fail; bad names are clear errors listing
 * the valid ones; the rules file overrides the model and its mistakes are
 * reported with the place; calibration gives a usable model.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "wirespeed.h"
#include "mpi_check.h"

static const char *coll_env[WSP_COLL_COUNT] = {
    "WSP_BCAST_ALGORITHM",         "WSP_REDUCE_ALGORITHM",    "WSP_ALLREDUCE_ALGORITHM",
    "WSP_GATHER_ALGORITHM",        "WSP_SCATTER_ALGORITHM",   "WSP_ALLGATHER_ALGORITHM",
    "WSP_ALLTOALL_ALGORITHM",      "WSP_ALLTOALLV_ALGORITHM", "WSP_ALLGATHERV_ALGORITHM",
    "WSP_REDUCE_SCATTER_ALGORITHM"};

static wsp_comm_t *make(const wsp_config_t *cfg) {
  wsp_comm_t *w = NULL;
  int rc = wsp_comm_create(MPI_COMM_WORLD, cfg, &w);
  CHECK(rc == WSP_OK, "wsp_comm_create: %s", wsp_last_error());
  return w;
}

/* The selection equals the argmin of the predictions over the algorithms
 * whose preconditions hold (native excluded: the model has no cost for
 * it), for every collective, size and commutativity. */
static void check_argmin(const wsp_comm_t *w, const char *label) {
  for (int c = 0; c < WSP_COLL_COUNT; c++)
    for (size_t bytes = 1; bytes <= ((size_t)1 << 28); bytes *= 4)
      for (int comm_op = 0; comm_op <= 1; comm_op++) {
        int best = -1, sel = -2;
        double best_t = 0;
        for (int a = 1; a < wsp_coll_alg_count((wsp_coll_t)c); a++) {
          double t;
          CHECK(wsp_coll_predict(w, (wsp_coll_t)c, a, bytes, comm_op, &t) == WSP_OK, "%s",
                wsp_last_error());
          if (t >= 0 && (best < 0 || t < best_t)) best = a, best_t = t;
        }
        CHECK(wsp_coll_select(w, (wsp_coll_t)c, bytes, comm_op, &sel) == WSP_OK, "%s",
              wsp_last_error());
        if (best < 0) best = 0;
        double ts = -1;
        if (sel > 0) wsp_coll_predict(w, (wsp_coll_t)c, sel, bytes, comm_op, &ts);
        CHECK(sel == best || (sel > 0 && ts == best_t),
              "%s: %s %zu bytes commutative %d: selected %d, cheapest %d", label,
              wsp_coll_name((wsp_coll_t)c), bytes, comm_op, sel, best);
      }
}

/* The fallbacks the registry should declare, written out independently:
 * what runs when a forced algorithm's preconditions fail (native when the
 * algorithm is not listed). */
static const char *expected_fallback(wsp_coll_t c, const char *alg) {
  static const struct {
    wsp_coll_t c;
    const char *alg, *fallback;
  } list[] = {
      {WSP_COLL_ALLREDUCE, "ring", "recursive_doubling"},
      {WSP_COLL_ALLREDUCE, "hier", "rabenseifner"},
      {WSP_COLL_ALLGATHER, "recursive_doubling", "bruck"},
      {WSP_COLL_REDUCE_SCATTER, "ring", "halving"},
      {WSP_COLL_REDUCE_SCATTER, "pairwise", "halving"},
      /* No network map attached. */
      {WSP_COLL_BCAST, "aware", "binomial"},
      {WSP_COLL_REDUCE, "aware", "binomial"},
      {WSP_COLL_GATHER, "aware", "binomial"},
      {WSP_COLL_SCATTER, "aware", "binomial"},
      /* No sites (the chain walks on: two_tier needs sites too). */
      {WSP_COLL_BCAST, "sites", "scatter_ring"},
      {WSP_COLL_BCAST, "sites_chain", "chain"},
      {WSP_COLL_BCAST, "far_first", "binomial"},
      {WSP_COLL_ALLREDUCE, "sites", "rabenseifner"},
      {WSP_COLL_ALLREDUCE, "two_tier", "rabenseifner"},
  };
  for (size_t i = 0; i < sizeof list / sizeof list[0]; i++)
    if (list[i].c == c && strcmp(list[i].alg, alg) == 0) return list[i].fallback;
  return NULL;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  for (int c = 0; c < WSP_COLL_COUNT; c++) unsetenv(coll_env[c]);
  unsetenv("WSP_MODEL");
  unsetenv("WSP_RULES_FILE");

  /* 1. Calibration runs (its figures are clamped to positive floors, so
   * only that it ran and gave finite numbers can be checked here). */
  wsp_comm_t *w = make(NULL);
  wsp_model_t m;
  if (w) {
    CHECK(wsp_comm_model(w, &m) == WSP_OK, "%s", wsp_last_error());
    CHECK(m.calibrated == 1 && m.alpha < 1 && m.beta < 1e-3 && m.gamma < 1e-3 &&
              m.beta_x >= m.beta && m.gap > 0 && m.gap <= m.alpha,
          "calibrated %d alpha %g beta %g gamma %g beta_x %g gap %g", m.calibrated, m.alpha,
          m.beta, m.gamma, m.beta_x, m.gap);
    check_argmin(w, "calibrated");
    wsp_comm_free(&w);
  }

  /* 2. Configured models from latency-bound to bandwidth-bound. */
  const double models[3][3] = {{1e-3, 1e-12, 1e-13}, {5e-5, 1e-9, 1e-10},
                               {1e-9, 1e-6, 1e-9}};
  for (int i = 0; i < 3; i++) {
    wsp_config_t cfg;
    wsp_config_init(&cfg);
    cfg.model_alpha = models[i][0], cfg.model_beta = models[i][1];
    cfg.model_gamma = models[i][2];
    w = make(&cfg);
    if (!w) continue;
    wsp_comm_model(w, &m);
    CHECK(m.calibrated == 0 && m.alpha == models[i][0], "configured model not used");
    char label[32];
    snprintf(label, sizeof label, "model %d", i);
    check_argmin(w, label);
    if (i == 2 && size >= 4) {
      /* Bandwidth-bound, large message, commutative: a bandwidth-optimal
       * allreduce ((p-1)/p n per rank, not lg p . n) must win over
       * recursive doubling. */
      int sel = -1, rd = -1;
      wsp_coll_select(w, WSP_COLL_ALLREDUCE, (size_t)64 << 20, 1, &sel);
      if (wsp_coll_alg_from_name(WSP_COLL_ALLREDUCE, "recursive_doubling", &rd) == WSP_OK)
        CHECK(sel != rd && sel > 0, "bandwidth-bound 64 MiB allreduce chose %d", sel);
    }
    wsp_comm_free(&w);
  }

  /* 2b. The per-message gap decides between linear and binomial gather
   * and scatter: with all p-1 messages in flight at the root, a gap far
   * below the latency makes linear (one latency) cheaper than binomial
   * (ceil(lg p) latencies in sequence) for small blocks; with the gap
   * equal to the latency (the default of a configured model without it)
   * p-1 latencies add up and binomial wins from p = 4 on. */
  if (size >= 4) {
    for (int g = 0; g < 2; g++) {
      wsp_config_t cfg;
      wsp_config_init(&cfg);
      cfg.model_alpha = 1e-4, cfg.model_beta = 1e-9, cfg.model_gamma = 1e-10;
      cfg.model_gap = g ? 1e-7 : 0;
      w = make(&cfg);
      if (!w) continue;
      wsp_comm_model(w, &m);
      CHECK(m.gap == (g ? 1e-7 : 1e-4), "configured gap %d: model gap %g", g, m.gap);
      const char *want = g ? "linear" : "binomial";
      for (int c = WSP_COLL_GATHER; c <= WSP_COLL_SCATTER; c++) {
        int sel = -1, a = -2;
        wsp_coll_alg_from_name((wsp_coll_t)c, want, &a);
        wsp_coll_select(w, (wsp_coll_t)c, 64, 1, &sel);
        CHECK(sel == a, "%s of 64-byte blocks, p = %d, gap %g: selected %d, want %s",
              wsp_coll_name((wsp_coll_t)c), size, m.gap, sel, want);
      }
      wsp_comm_free(&w);
    }
  }
  /* The gap as WSP_MODEL's fifth value, and what WSP_MODEL refuses. */
  setenv("WSP_MODEL", "5e-5,1e-9,1e-10,0,2e-6", 1);
  w = make(NULL);
  if (w) {
    wsp_comm_model(w, &m);
    CHECK(m.gap == 2e-6 && m.beta_x == 1e-9 && m.calibrated == 0,
          "WSP_MODEL with gap: gap %g beta_x %g", m.gap, m.beta_x);
    wsp_comm_free(&w);
  }
  const char *bad_models[] = {"5e-5,1e-9,1e-10,0,-1", "5e-5,1e-9,1e-10,0,1e-6,7",
                              "5e-5,1e-9,1e-10,0,1e-6x", "5e-5,1e-9,1e-10,0,1e7"};
  for (size_t i = 0; i < sizeof bad_models / sizeof *bad_models; i++) {
    setenv("WSP_MODEL", bad_models[i], 1);
    w = NULL;
    int brc = wsp_comm_create(MPI_COMM_WORLD, NULL, &w);
    CHECK(brc == WSP_ERR_CONFIG && w == NULL && strstr(wsp_last_error(), "WSP_MODEL") &&
              strstr(wsp_last_error(), "gap"),
          "WSP_MODEL=%s gave %s: %s", bad_models[i], wsp_err_name(brc), wsp_last_error());
  }
  unsetenv("WSP_MODEL");
  {
    wsp_config_t cfg;
    wsp_config_init(&cfg);
    cfg.model_alpha = 1e-4, cfg.model_beta = 1e-9, cfg.model_gamma = 1e-10;
    cfg.model_gap = -1;
    w = NULL;
    int brc = wsp_comm_create(MPI_COMM_WORLD, &cfg, &w);
    CHECK(brc == WSP_ERR_ARG && w == NULL && strstr(wsp_last_error(), "model_gap"),
          "cfg.model_gap = -1 gave %s: %s", wsp_err_name(brc), wsp_last_error());
  }

  /* 3. Forced by environment, and forced with unmet preconditions. */
  for (int c = 0; c < WSP_COLL_COUNT; c++) {
    int n = wsp_coll_alg_count((wsp_coll_t)c);
    for (int a = 0; a < n; a++) {
      const char *name = wsp_coll_alg_info((wsp_coll_t)c, a)->name;
      setenv(coll_env[c], name, 1);
      setenv("WSP_MODEL", "5e-5,1e-9,1e-10", 1);
      w = make(NULL);
      unsetenv(coll_env[c]);
      if (!w) continue;
      for (int comm_op = 0; comm_op <= 1; comm_op++) {
        int sel = -2;
        wsp_coll_select(w, (wsp_coll_t)c, 4096, comm_op, &sel);
        double t = -1;
        wsp_coll_predict(w, (wsp_coll_t)c, a, 4096, comm_op, &t);
        if (a == 0 || t >= 0) {
          CHECK(sel == a, "%s=%s: selected %d", coll_env[c], name, sel);
        } else {
          /* Preconditions fail: the fallback written out here, or native. */
          const char *want = expected_fallback((wsp_coll_t)c, name);
          int w_alg = 0;
          if (want) wsp_coll_alg_from_name((wsp_coll_t)c, want, &w_alg);
          CHECK(sel == w_alg, "%s=%s with unmet preconditions: selected %d, expected %s",
                coll_env[c], name, sel, want ? want : "native");
        }
        if (sel > 0) {
          double ts = -1;
          wsp_coll_predict(w, (wsp_coll_t)c, sel, 4096, comm_op, &ts);
          CHECK(ts >= 0, "fallback %d of %s has unmet preconditions", sel, name);
        }
      }
      /* wsp_coll_set_alg back to auto restores the model's choice. */
      CHECK(wsp_coll_set_alg(w, (wsp_coll_t)c, WSP_ALG_AUTO) == WSP_OK, "%s", wsp_last_error());
      wsp_comm_free(&w);
    }
  }

  /* 4. Bad names. */
  setenv("WSP_BCAST_ALGORITHM", "nonesuch", 1);
  w = NULL;
  int rc = wsp_comm_create(MPI_COMM_WORLD, NULL, &w);
  CHECK(rc == WSP_ERR_CONFIG && w == NULL, "bad env name gave %s", wsp_err_name(rc));
  CHECK(strstr(wsp_last_error(), "WSP_BCAST_ALGORITHM") &&
            strstr(wsp_last_error(), "nonesuch") && strstr(wsp_last_error(), "binomial"),
        "message: %s", wsp_last_error());
  unsetenv("WSP_BCAST_ALGORITHM");
  int alg;
  CHECK(wsp_coll_alg_from_name(WSP_COLL_ALLREDUCE, "rign", &alg) == WSP_ERR_ARG &&
            strstr(wsp_last_error(), "native"),
        "message: %s", wsp_last_error());
  CHECK(wsp_coll_alg_from_name(WSP_COLL_ALLREDUCE, "auto", &alg) == WSP_OK &&
            alg == WSP_ALG_AUTO,
        "auto");
  w = make(NULL);
  if (w) {
    CHECK(wsp_coll_set_alg(w, WSP_COLL_BCAST, 999) == WSP_ERR_ARG, "set_alg 999");
    CHECK(wsp_coll_set_alg(w, (wsp_coll_t)42, 0) == WSP_ERR_ARG, "set_alg coll 42");
    wsp_comm_free(&w);
  }
  setenv("WSP_MODEL", "1,2", 1);
  rc = wsp_comm_create(MPI_COMM_WORLD, NULL, &w);
  CHECK(rc == WSP_ERR_CONFIG && strstr(wsp_last_error(), "WSP_MODEL"), "bad WSP_MODEL: %s",
        wsp_last_error());
  setenv("WSP_MODEL", "5e-5,1e-9,1e-10", 1);

  /* 5. Rules file. */
  char path[64], bad1[64], bad2[64];
  snprintf(path, sizeof path, "/tmp/wsp_rules_%d.json", (int)getpid());
  snprintf(bad1, sizeof bad1, "/tmp/wsp_rules_bad1_%d.json", (int)getpid());
  snprintf(bad2, sizeof bad2, "/tmp/wsp_rules_bad2_%d.json", (int)getpid());
  FILE *f = fopen(path, "w");
  fprintf(f, "{\"version\": 1, \"rules\": [\n"
             " {\"collective\": \"allreduce\", \"algorithm\": \"native\", \"max_bytes\": 1024},\n"
             " {\"collective\": \"bcast\", \"algorithm\": \"binomial\", \"min_p\": 1}\n]}\n");
  fclose(f);
  f = fopen(bad1, "w");
  fprintf(f, "{\"version\": 1, \"rules\": [{\"collective\": \"bcast\", \"algoritm\": \"x\"}]}");
  fclose(f);
  f = fopen(bad2, "w");
  fprintf(f, "{\"version\": 1,\n \"rules\": [,]}");
  fclose(f);
  wsp_config_t cfg;
  wsp_config_init(&cfg);
  wsp_config_from_env(&cfg);
  cfg.rules_file = path;
  w = make(&cfg);
  if (w) {
    int sel, bin;
    wsp_coll_alg_from_name(WSP_COLL_BCAST, "binomial", &bin);
    wsp_coll_select(w, WSP_COLL_ALLREDUCE, 1024, 1, &sel);
    CHECK(sel == 0, "rule allreduce<=1024 -> native gave %d", sel);
    wsp_coll_select(w, WSP_COLL_BCAST, (size_t)64 << 20, 1, &sel);
    CHECK(sel == bin, "rule bcast -> binomial gave %d", sel);
    /* Outside the rule's range the model decides again. */
    int want_sel;
    wsp_comm_t *plain = NULL;
    wsp_config_t c2 = cfg;
    c2.rules_file = NULL;
    plain = make(&c2);
    if (plain) {
      wsp_coll_select(plain, WSP_COLL_ALLREDUCE, 4096, 1, &want_sel);
      wsp_coll_select(w, WSP_COLL_ALLREDUCE, 4096, 1, &sel);
      CHECK(sel == want_sel, "allreduce 4096 outside the rule: %d vs %d", sel, want_sel);
      wsp_comm_free(&plain);
    }
    wsp_comm_free(&w);
  }
  cfg.rules_file = bad1;
  rc = wsp_comm_create(MPI_COMM_WORLD, &cfg, &w);
  CHECK(rc == WSP_ERR_CONFIG && strstr(wsp_last_error(), "algoritm"), "bad key: %s %s",
        wsp_err_name(rc), wsp_last_error());
  cfg.rules_file = bad2;
  rc = wsp_comm_create(MPI_COMM_WORLD, &cfg, &w);
  CHECK(rc == WSP_ERR_CONFIG && strstr(wsp_last_error(), "line 2"), "bad JSON: %s %s",
        wsp_err_name(rc), wsp_last_error());
  /* alltoallv's native row cannot be a rule's (each rank matches its own
   * size); another of its algorithms can. */
  f = fopen(bad1, "w");
  fprintf(f, "{\"version\": 1, \"rules\": [{\"collective\": \"alltoallv\", "
             "\"algorithm\": \"native\", \"max_bytes\": 4096}]}");
  fclose(f);
  cfg.rules_file = bad1;
  rc = wsp_comm_create(MPI_COMM_WORLD, &cfg, &w);
  CHECK(rc == WSP_ERR_CONFIG && strstr(wsp_last_error(), "alltoallv cannot go to the MPI"),
        "alltoallv native by a rule: %s %s", wsp_err_name(rc), wsp_last_error());
  f = fopen(bad1, "w");
  fprintf(f, "{\"version\": 1, \"rules\": [{\"collective\": \"alltoallv\", "
             "\"algorithm\": \"pairwise\", \"max_bytes\": 4096}]}");
  fclose(f);
  rc = wsp_comm_create(MPI_COMM_WORLD, &cfg, &w);
  CHECK(rc == WSP_OK, "alltoallv pairwise by a rule: %s", wsp_last_error());
  if (rc == WSP_OK) wsp_comm_free(&w);
  cfg.rules_file = "/nonexistent/rules.json";
  rc = wsp_comm_create(MPI_COMM_WORLD, &cfg, &w);
  CHECK(rc == WSP_ERR_CONFIG && strstr(wsp_last_error(), "/nonexistent/rules.json"),
        "missing file: %s", wsp_last_error());
  MPI_Barrier(MPI_COMM_WORLD);
  remove(path), remove(bad1), remove(bad2);

  /* 6. Node topology (WSP_NODES), against the grouping computed here, and
   * the node-aware allreduce: selected when forced exactly where its
   * preconditions hold, and in the model's argmin like any other. */
  unsetenv("WSP_MODEL");
  const char *splits[] = {"block:2", "block:3", "cyclic:2", "cyclic:3", "block:1", "host"};
  int hier = -1;
  wsp_coll_alg_from_name(WSP_COLL_ALLREDUCE, "hier", &hier);
  for (size_t i = 0; i < sizeof splits / sizeof *splits; i++) {
    setenv("WSP_NODES", splits[i], 1);
    w = make(NULL);
    if (!w) continue;
    wsp_topology_t t;
    CHECK(wsp_comm_topology(w, &t) == WSP_OK, "%s", wsp_last_error());
    int k = 0, cyc = splits[i][0] == 'c';
    if (strcmp(splits[i], "host") != 0) k = atoi(strchr(splits[i], ':') + 1);
    int nodes, node, mine = 0, most = 0, blocks;
    if (k == 0) { /* one machine: one node */
      nodes = 1, node = 0, mine = most = size, blocks = 1;
    } else if (cyc) {
      nodes = k < size ? k : size, node = rank % k, blocks = k == 1 || k >= size;
      for (int r = 0; r < size; r++) mine += r % k == node;
      most = (size + k - 1) / k;
    } else {
      nodes = (size + k - 1) / k, node = rank / k, blocks = 1;
      mine = size - node * k < k ? size - node * k : k;
      most = k < size ? k : size;
    }
    CHECK(t.nodes == nodes && t.node == node && t.node_ranks == mine &&
              t.max_node_ranks == most && t.blocks == blocks,
          "WSP_NODES=%s: nodes %d node %d ranks %d max %d blocks %d, expected %d %d %d %d %d",
          splits[i], t.nodes, t.node, t.node_ranks, t.max_node_ranks, t.blocks, nodes, node,
          mine, most, blocks);
    /* Every rank's node, on every rank (the map the shuffle and tools use). */
    for (int r = 0; r < size; r++) {
      int want = k == 0 ? 0 : cyc ? r % k : r / k, got = -1;
      CHECK(wsp_comm_node(w, r, &got) == WSP_OK && got == want,
            "WSP_NODES=%s: wsp_comm_node(%d) = %d, expected %d", splits[i], r, got, want);
    }
    check_argmin(w, splits[i]);
    CHECK(wsp_coll_set_alg(w, WSP_COLL_ALLREDUCE, hier) == WSP_OK, "%s", wsp_last_error());
    for (int comm_op = 0; comm_op <= 1; comm_op++) {
      int sel = -1;
      wsp_coll_select(w, WSP_COLL_ALLREDUCE, 1 << 20, comm_op, &sel);
      int ok = nodes >= 2 && most >= 2 && (comm_op || blocks);
      CHECK((sel == hier) == ok, "WSP_NODES=%s, %scommutative: forced hier selected %d",
            splits[i], comm_op ? "" : "non-", sel);
    }
    wsp_comm_free(&w);
  }
  const char *bad_splits[] = {"block:0", "cyclic:", "block:2x", "nodes", "cyclic:-1"};
  for (size_t i = 0; i < sizeof bad_splits / sizeof *bad_splits; i++) {
    setenv("WSP_NODES", bad_splits[i], 1);
    rc = wsp_comm_create(MPI_COMM_WORLD, NULL, &w);
    CHECK(rc == WSP_ERR_CONFIG && w == NULL && strstr(wsp_last_error(), "WSP_NODES") &&
              strstr(wsp_last_error(), bad_splits[i]),
          "WSP_NODES=%s: %s %s", bad_splits[i], wsp_err_name(rc), wsp_last_error());
  }
  unsetenv("WSP_NODES");
  CHECK(wsp_comm_topology(NULL, NULL) == WSP_ERR_ARG, "topology of NULL");
  {
    wsp_comm_t *tw = make(NULL);
    rc = wsp_comm_topology(tw, NULL);
    CHECK(rc == WSP_ERR_ARG && strstr(wsp_last_error(), "topo is NULL"),
          "topology into NULL: %s %s", wsp_err_name(rc), wsp_last_error());
    int nd = -7;
    rc = wsp_comm_node(tw, size, &nd);
    CHECK(rc == WSP_ERR_ARG && nd == -7 && strstr(wsp_last_error(), "rank = "),
          "node of rank p: %s %s", wsp_err_name(rc), wsp_last_error());
    rc = wsp_comm_node(tw, -1, &nd);
    CHECK(rc == WSP_ERR_ARG && nd == -7, "node of rank -1: %s", wsp_err_name(rc));
    rc = wsp_comm_node(tw, 0, NULL);
    CHECK(rc == WSP_ERR_ARG && strstr(wsp_last_error(), "node is NULL"),
          "node into NULL: %s %s", wsp_err_name(rc), wsp_last_error());
    CHECK(wsp_comm_node(NULL, 0, &nd) == WSP_ERR_ARG, "node of NULL comm");
    wsp_comm_free(&tw);
  }

  long all = 0;
  MPI_Allreduce(&failures, &all, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf("test_coll_select: np %d, %ld failures\n", size, all);
  MPI_Finalize();
  return all ? 1 : 0;
}
