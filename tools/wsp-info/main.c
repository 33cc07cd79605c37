/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * wsp-info: what this wirespeed is and what it would do here: version, the
 * MPI library it runs on, build options, the configuration taken from the
 * WSP_* environment, and the algorithms with their descriptions, costs and
 * preconditions. With --model (under mpirun) it also creates a
 * communicator, which calibrates the α-β-γ cost model unless WSP_MODEL
 * gives it, and prints the model's predicted time of every collective
 * algorithm over a range of sizes, marking the one auto would run.
 * Only rank 0 prints.
 */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "wirespeed.h"
#include "opts.h"
#include "comm/env_names.h"
#include "shim/shim_env.h"

/* The process's environment (POSIX), for the names --check does not know. */
extern char **environ;

/* 8 B .. 64 MiB: x8 steps, and 64 MiB itself. */
static const size_t model_sizes[] = {8,      64,       512,       4096,     32768,
                                     262144, 2097152,  16777216,  67108864};
#define NSIZES (sizeof model_sizes / sizeof model_sizes[0])

static const char usage_text[] =
    "usage: wsp-info [--check | --env-names | --markdown coll|sparse] [--quiet]\n"
    "       mpirun -np N wsp-info --model [--json FILE] [--quiet]\n\n"
    "Prints wirespeed's version, MPI library, build options, the\n"
    "configuration read from WSP_* environment variables and the\n"
    "available algorithms. Runs as a single process (no mpirun needed).\n";

/* Every WSP_* name that something of wirespeed reads (src/comm/env_names.h). */
static const char *const env_names[] = {
#define WSP_INFO_ENV_NAME(name, who) name,
    WSP__ENV_NAMES(WSP_INFO_ENV_NAME)
#undef WSP_INFO_ENV_NAME
};
static const char *const env_readers[] = {
#define WSP_INFO_ENV_WHO(name, who) who,
    WSP__ENV_NAMES(WSP_INFO_ENV_WHO)
#undef WSP_INFO_ENV_WHO
};
#define NENV (sizeof env_names / sizeof env_names[0])

/* --check: reads the environment with the parsers the library, the
 * shuffle and the shim use, so that it refuses what they refuse, and warns
 * about WSP_ names nothing reads. 0 when every value is valid (warnings
 * or not), 1 otherwise. No MPI: the files the variables name are only
 * tried for reading, their contents are checked where they are loaded. */
/* The library logs a refused value itself, at WSP_LOG's level, before it
 * returns it; --check says each once, in its own words: stderr is set
 * aside while the parsers run (-1 hides it, then the saved descriptor
 * restores it). */
static int set_aside_stderr(int saved) {
  fflush(stderr);
  if (saved >= 0) {
    dup2(saved, STDERR_FILENO);
    close(saved);
    return -1;
  }
  int keep = dup(STDERR_FILENO);
  FILE *null = keep >= 0 ? fopen("/dev/null", "w") : NULL;
  if (null) {
    dup2(fileno(null), STDERR_FILENO);
    fclose(null);
  }
  return keep;
}

static int check_env(int quiet) {
  int bad = 0, set = 0, unknown = 0;
  wsp_config_t cfg;
  wsp_shuffle_config_t scfg;
  wsp_config_init(&cfg);
  int saved = set_aside_stderr(-1);
  int crc = wsp_config_from_env(&cfg);
  set_aside_stderr(saved);
  if (crc != WSP_OK) {
    fprintf(stderr, "error: %s\n", wsp_last_error());
    bad = 1;
  } else {
    const char *files[2][2] = {{"WSP_RULES_FILE", cfg.rules_file}, {"WSP_NETMAP", cfg.netmap_file}};
    for (int i = 0; i < 2; i++) {
      FILE *f = files[i][1] ? fopen(files[i][1], "r") : NULL;
      if (files[i][1] && f == NULL) {
        fprintf(stderr, "error: %s=\"%s\": the file cannot be read\n", files[i][0], files[i][1]);
        bad = 1;
      }
      if (f) fclose(f);
    }
  }
  wsp_shuffle_config_init(&scfg);
  saved = set_aside_stderr(-1);
  int src = wsp_shuffle_config_from_env(&scfg);
  set_aside_stderr(saved);
  if (src != WSP_OK) {
    fprintf(stderr, "error: %s\n", wsp_last_error());
    bad = 1;
  }
  wsp__shim_env_t shim;
  char why[256];
  if (wsp__shim_env_read(&shim, why, sizeof why) != 0) {
    fprintf(stderr, "error: %s (the shim would turn itself off)\n", why);
    bad = 1;
  }
  for (char **e = environ; e && *e; e++) {
    if (strncmp(*e, "WSP_", 4) != 0) continue;
    size_t len = strcspn(*e, "=");
    size_t k = 0, best = 0, best_len = 0;
    for (; k < NENV; k++) {
      if (strlen(env_names[k]) == len && strncmp(env_names[k], *e, len) == 0) break;
      size_t common = 0;
      while (common < len && env_names[k][common] == (*e)[common]) common++;
      if (common > best_len) best = k, best_len = common;
    }
    set++;
    if (k < NENV) continue;
    unknown++;
    fprintf(stderr, "warning: %.*s is set but nothing of wirespeed reads it (did you mean %s?)\n",
            (int)len, *e, env_names[best]);
  }
  if (bad)
    fprintf(stderr, "wsp-info --check: the WSP_* environment has a value wirespeed refuses\n");
  else if (!quiet)
    printf("wsp-info --check: %d WSP_* variable%s set, every value valid%s\n", set,
           set == 1 ? "" : "s", unknown ? " (see the warnings about unknown names)" : "");
  return bad;
}

static const char *fmt_size(size_t b, char *buf, size_t len) {
  if (b >= (1u << 20) && b % (1u << 20) == 0)
    snprintf(buf, len, "%zuM", b >> 20);
  else if (b >= 1024 && b % 1024 == 0)
    snprintf(buf, len, "%zuK", b >> 10);
  else
    snprintf(buf, len, "%zu", b);
  return buf;
}

static void print_coll_algs(void) {
  printf("\ncollective algorithms (WSP_<COLL>_ALGORITHM=name|auto; row 0 is "
         "the MPI library's own):\n");
  for (int c = 0; c < WSP_COLL_COUNT; c++) {
    printf("  %s:\n", wsp_coll_name((wsp_coll_t)c));
    for (int a = 0; a < wsp_coll_alg_count((wsp_coll_t)c); a++) {
      const wsp_alg_info_t *in = wsp_coll_alg_info((wsp_coll_t)c, a);
      const char *pre = wsp_coll_alg_preconditions((wsp_coll_t)c, a);
      printf("    %-18s %s\n", in->name, in->desc);
      printf("    %-18s cost: %s\n", "", in->cost);
      if (pre && *pre) printf("    %-18s needs: %s\n", "", pre);
    }
  }
}

/* A table cell: pipes escaped, so that the text cannot end the cell. */
static void md_cell(const char *s, int code) {
  code = code && *s;
  fputs(code ? " `" : " ", stdout);
  for (; *s; s++) {
    if (*s == '|') putchar('\\');
    putchar(*s);
  }
  fputs(code ? "` |" : " |", stdout);
}

/* The algorithm tables as Markdown, made only from the public table calls,
 * so that the docs show what the library has. */
static void print_markdown(int sparse) {
  if (sparse) {
    printf("| algorithm | what it does | cost |\n|---|---|---|\n");
    /* auto (WSP_SPARSE_AUTO, -1) first, then the table's rows from 0. */
    for (int a = WSP_SPARSE_AUTO; a < WSP_SPARSE_ALG_COUNT; a++) {
      const wsp_alg_info_t *in = wsp_sparse_alg_info((wsp_sparse_alg_t)a);
      printf("|");
      md_cell(in->name, 1);
      md_cell(in->desc, 0);
      md_cell(in->cost, 1);
      printf("\n");
    }
    return;
  }
  for (int c = 0; c < WSP_COLL_COUNT; c++) {
    printf("%s**%s**\n\n| algorithm | what it does | preconditions | cost |\n"
           "|---|---|---|---|\n",
           c ? "\n" : "", wsp_coll_name((wsp_coll_t)c));
    for (int a = 0; a < wsp_coll_alg_count((wsp_coll_t)c); a++) {
      const wsp_alg_info_t *in = wsp_coll_alg_info((wsp_coll_t)c, a);
      printf("|");
      md_cell(in->name, 1);
      md_cell(in->desc, 0);
      md_cell(wsp_coll_alg_preconditions((wsp_coll_t)c, a), 0);
      md_cell(in->cost, a > 0);
      printf("\n");
    }
  }
}

/* The eager limits and where they came from (WSP_EAGER_LIMIT, a map). */
static void print_eager(const wsp_model_t *m) {
  const char *from = wsp_eager_from_name(m->eager_from);
  switch (m->eager_from) {
  case WSP_EAGER_FROM_MAP:
    printf("  eager limit (network map): %zu bytes between nodes, %zu inside a node\n", m->eager,
           m->eager_node);
    break;
  case WSP_EAGER_FROM_MEASURED:
    if (m->eager)
      printf("  eager limit between nodes: %zu bytes (measured by wsp_comm_create)\n", m->eager);
    else
      printf("  eager limit between nodes: below 4096 bytes or above 256 KiB (measured by "
             "wsp_comm_create; segments are not bounded by it)\n");
    break;
  case WSP_EAGER_FROM_CONFIG:
    printf("  eager limit between nodes: %zu bytes (WSP_EAGER_LIMIT)\n", m->eager);
    break;
  default:
    printf("  eager limit between nodes: not known (%s: one node, or WSP_EAGER_LIMIT=none)\n",
           from);
  }
}

/* The sites (WSP_SITES or the map's groups): each site's ranks as ranges,
 * the figures between sites and the connections used. */
static void print_sites(const wsp_comm_t *comm, int p, const wsp_topology_t *topo,
                        const wsp_model_t *m) {
  if (topo->sites == 0) {
    printf("  sites: none (WSP_SITES, or the groups of a network map)\n");
    return;
  }
  printf("  sites: %d (WSP_SITES, or the groups of a network map)\n", topo->sites);
  for (int s = 0; s < topo->sites && s < 16; s++) {
    printf("    site %d: ranks", s);
    int shown = 0;
    for (int r = 0; r < p && shown < 12; r++) {
      int sr = -1, prev = -1, next = -1;
      wsp_comm_site(comm, r, &sr);
      if (sr != s) continue;
      if (r > 0) wsp_comm_site(comm, r - 1, &prev);
      if (prev == s) continue; /* inside a range */
      int e = r;
      while (e + 1 < p && wsp_comm_site(comm, e + 1, &next) == WSP_OK && next == s) e++;
      printf(shown ? ",%d" : " %d", r);
      if (e > r) printf("-%d", e);
      shown++;
    }
    printf("%s\n", shown == 12 ? ",..." : "");
  }
  if (topo->sites > 16) printf("    ...\n");
  if (topo->sites < 2) return;
  printf("  between sites: alpha_wan %.4g s (a round trip of %.4g ms), beta_wan %.4g s per "
         "byte (%.4g GB/s) per connection,\n",
         m->alpha_wan, 2e3 * m->alpha_wan, m->beta_wan, m->beta_wan > 0 ? 1e-9 / m->beta_wan : 0.0);
  if (m->beta_wan_link > 0)
    printf("    beta_wan_link %.4g s per byte (%.4g GB/s) for the link as a whole\n",
           m->beta_wan_link, 1e-9 / m->beta_wan_link);
  else
    printf("    the link as a whole not measured (one rank on a site, a map's sites, or "
           "WSP_MODEL)\n");
  printf("  connections between two sites: %d (WSP_WAN_CONNECTIONS, else the model)\n",
         topo->wan_connections);
  printf("  lanes per connection: %d (WSP_WAN_LANES, else the model; 1: one MPI message)\n",
         topo->wan_lanes);
}

/* The model and its predictions: as text on stdout when `text`, and as
 * one JSON line appended to `jf` when not NULL (rank 0's); 0 or an exit
 * code. */
static int print_model(int text, FILE *jf, int rank) {
  int json = jf != NULL;
  wsp_comm_t *comm = NULL;
  int p = 0;
  wsp_model_t m;
  wsp_topology_t topo;
  if (wsp_comm_create(MPI_COMM_WORLD, NULL, &comm) != WSP_OK ||
      wsp_comm_size(comm, &p) != WSP_OK || wsp_comm_model(comm, &m) != WSP_OK ||
      wsp_comm_topology(comm, &topo) != WSP_OK) {
    fprintf(stderr, "error: rank %d: %s\n", rank, wsp_last_error());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  /* What auto would choose, even where WSP_<COLL>_ALGORITHM forces one. */
  for (int c = 0; c < WSP_COLL_COUNT; c++)
    if (wsp_coll_set_alg(comm, (wsp_coll_t)c, WSP_ALG_AUTO) != WSP_OK) {
      fprintf(stderr, "error: rank %d: %s\n", rank, wsp_last_error());
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
  if (rank != 0) {
    wsp_comm_free(&comm);
    return 0;
  }
  json_t *doc = NULL, *jcolls = NULL;
  if (json) {
    doc =
        json_pack("{s:s, s:i, s:{s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:b, s:I, s:I}, "
                  "s:{s:i, s:i, s:b}}",
                  "wirespeed", wsp_version(), "p", p, "model", "alpha", m.alpha, "beta", m.beta,
                  "gamma", m.gamma, "beta_x", m.beta_x, "alpha_node", m.alpha_node, "beta_node",
                  m.beta_node, "gap", m.gap, "calibrated", m.calibrated, "eager",
                  (json_int_t)m.eager, "eager_node", (json_int_t)m.eager_node, "topology", "nodes",
                  topo.nodes, "max_node_ranks", topo.max_node_ranks, "blocks", topo.blocks);
    json_object_set_new(json_object_get(doc, "model"), "alpha_wan", json_real(m.alpha_wan));
    json_object_set_new(json_object_get(doc, "model"), "beta_wan", json_real(m.beta_wan));
    json_object_set_new(json_object_get(doc, "model"), "beta_wan_link",
                        json_real(m.beta_wan_link));
    json_object_set_new(json_object_get(doc, "model"), "lanes_min",
                        json_integer((json_int_t)m.lanes_min));
    json_object_set_new(json_object_get(doc, "model"), "lanes_drain", json_real(m.lanes_drain));
    json_object_set_new(json_object_get(doc, "model"), "eager_from",
                        json_string(wsp_eager_from_name(m.eager_from)));
    json_t *jt = json_object_get(doc, "topology"), *jsite = json_array();
    for (int r = 0; r < p && topo.sites; r++) {
      int sr = -1;
      wsp_comm_site(comm, r, &sr);
      json_array_append_new(jsite, json_integer(sr));
    }
    json_object_set_new(jt, "sites", json_integer(topo.sites));
    json_object_set_new(jt, "site_of", jsite);
    json_object_set_new(jt, "wan_connections", json_integer(topo.wan_connections));
    json_object_set_new(jt, "wan_lanes", json_integer(topo.wan_lanes));
    jcolls = json_object();
    json_object_set_new(doc, "collectives", jcolls);
  }
  if (text) {
    printf("\ncost model on MPI_COMM_WORLD, p = %d (%s):\n", p,
           m.calibrated ? "calibrated by wsp_comm_create"
                        : "configured (WSP_MODEL)");
    printf("  alpha %.4g s per message, beta %.4g s per byte (%.4g GB/s), "
           "gamma %.4g s per byte reduced,\n  beta_x %.4g s per byte when "
           "a rank sends and receives at once (%.4g GB/s each way),\n  gap %.4g s "
           "between small messages received back to back\n",
           m.alpha, m.beta, m.beta > 0 ? 1e-9 / m.beta : 0.0, m.gamma, m.beta_x,
           m.beta_x > 0 ? 1e-9 / m.beta_x : 0.0, m.gap);
    printf("  inside a node: alpha %.4g s, beta %.4g s per byte (%.4g GB/s)\n",
           m.alpha_node, m.beta_node, m.beta_node > 0 ? 1e-9 / m.beta_node : 0.0);
    print_eager(&m);
    printf("  nodes: %d, at most %d ranks per node%s (WSP_NODES)\n", topo.nodes,
           topo.max_node_ranks, topo.blocks ? ", in blocks of consecutive ranks" : "");
    print_sites(comm, p, &topo, &m);
    printf("\npredicted time per call in microseconds ('-': no cost known or "
           "preconditions fail; '*': what auto runs; size: whole message for "
           "bcast/reduce/allreduce, one rank's block otherwise):\n");
  }
  for (int ci = 0; ci < WSP_COLL_COUNT; ci++) {
    wsp_coll_t c = (wsp_coll_t)ci;
    int na = wsp_coll_alg_count(c);
    json_t *jalgs = NULL, *jpred = NULL;
    int width[64];
    for (int a = 0; a < na && a < 64; a++) {
      int l = (int)strlen(wsp_coll_alg_info(c, a)->name);
      width[a] = l < 11 ? 12 : l + 1;
    }
    if (na > 64) na = 64;
    if (json) {
      jalgs = json_array();
      jpred = json_array();
      for (int a = 0; a < na; a++) {
        const wsp_alg_info_t *in = wsp_coll_alg_info(c, a);
        json_array_append_new(
            jalgs, json_pack("{s:s, s:s, s:s, s:s}", "name", in->name, "desc",
                             in->desc, "cost", in->cost, "preconditions",
                             wsp_coll_alg_preconditions(c, a)));
      }
      json_object_set_new(jcolls, wsp_coll_name(c),
                          json_pack("{s:o, s:o}", "algorithms", jalgs,
                                    "predictions", jpred));
    }
    if (text) {
      printf("\n  %-9s", wsp_coll_name(c));
      for (int a = 0; a < na; a++)
        printf(" %*s", width[a], wsp_coll_alg_info(c, a)->name);
      printf("\n");
    }
    for (size_t si = 0; si < NSIZES; si++) {
      size_t bytes = model_sizes[si];
      int sel = 0;
      if (wsp_coll_select(comm, c, bytes, 1, &sel) != WSP_OK) {
        fprintf(stderr, "error: wsp_coll_select: %s\n", wsp_last_error());
        MPI_Abort(MPI_COMM_WORLD, 1);
      }
      json_t *jsec = json ? json_object() : NULL;
      char sz[32];
      if (text) printf("  %9s", fmt_size(bytes, sz, sizeof sz));
      for (int a = 0; a < na; a++) {
        double t = -1;
        if (wsp_coll_predict(comm, c, a, bytes, 1, &t) != WSP_OK) {
          fprintf(stderr, "error: wsp_coll_predict: %s\n", wsp_last_error());
          MPI_Abort(MPI_COMM_WORLD, 1);
        }
        if (json)
          json_object_set_new(jsec, wsp_coll_alg_info(c, a)->name,
                              t >= 0 ? json_real(t) : json_null());
        if (text) {
          char cell[40];
          if (t >= 0)
            snprintf(cell, sizeof cell, "%.2f%s", t * 1e6, a == sel ? "*" : " ");
          else
            snprintf(cell, sizeof cell, "-%s", a == sel ? "*" : " ");
          printf(" %*s", width[a], cell);
        }
      }
      if (json)
        json_array_append_new(
            jpred, json_pack("{s:I, s:s, s:o}", "bytes", (json_int_t)bytes,
                             "auto", wsp_coll_alg_info(c, sel)->name,
                             "seconds", jsec));
      if (text) printf("\n");
    }
  }
  if (json) {
    /* One line: --json FILE appends JSON lines, as every tool's. */
    char *s = json_dumps(doc, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(6));
    if (s) fprintf(jf, "%s\n", s);
    free(s);
    json_decref(doc);
  }
  wsp_comm_free(&comm);
  return 0;
}

static const char *const markdown_names[] = {"coll", "sparse", NULL};

typedef struct info_opts {
  int model, check, env_names, quiet, markdown, markdown_given;
  const char *json;
} info_opts_t;

/* The options from the one table of the tools (tools/common/opts.c);
 * -1 to go on, else the exit code. */
static int parse(info_opts_t *o, int argc, char **argv) {
  const wsp_opt_t table[] = {
      {"--model", WSP_OPT_FLAG, &o->model, NULL,
       "also create a communicator over MPI_COMM_WORLD (this calibrates the cost model unless "
       "WSP_MODEL sets it; run it under mpirun with the job's process count) and print the "
       "model and, per collective, the predicted time of every algorithm at sizes 8 B .. 64 "
       "MiB, with '*' on the one auto runs (rules file, then model; commutative op). Size is "
       "what the model and rules files take: the whole message for bcast/reduce/allreduce, one "
       "rank's block for gather, scatter, allgather and alltoall",
       NULL, 0, 0, NULL, NULL},
      {"--json", WSP_OPT_STRING, &o->json, "FILE",
       "with --model: append the model and its predictions as one JSON line to FILE (-: "
       "standard output)",
       NULL, 0, 0, NULL, NULL},
      {"--check", WSP_OPT_FLAG, &o->check, NULL,
       "only check the WSP_* environment as the library, the shuffle and the shim read it: "
       "exit 1 naming each variable whose value they refuse, warn about WSP_ names nothing "
       "reads (no MPI needed)",
       NULL, 0, 0, NULL, NULL},
      {"--env-names", WSP_OPT_FLAG, &o->env_names, NULL,
       "print every WSP_* name wirespeed reads and what reads it", NULL, 0, 0, NULL, NULL},
      {"--markdown", WSP_OPT_CHOICE, &o->markdown, "coll|sparse",
       "print only the algorithm table of the collectives or of the sparse exchange as "
       "Markdown (name, description, preconditions, cost): docs/coll.md and docs/sparse.md "
       "include exactly this output (scripts/doc-tables checks it)",
       NULL, 0, 0, markdown_names, &o->markdown_given},
      {"--quiet", WSP_OPT_FLAG, &o->quiet, NULL,
       "print no tables (errors and warnings still go to stderr; --check's verdict is its exit "
       "status)",
       NULL, 0, 0, NULL, NULL},
      {NULL, 0, NULL, NULL, NULL, NULL, 0, 0, NULL, NULL}};
  const wsp_opt_cmd_t cmd = {usage_text, table, NULL};
  int rc = wsp_opts_parse(&cmd, argc, argv, stdout, stderr);
  if (rc != WSP_OPTS_OK) return rc == WSP_OPTS_HELP ? 0 : 2;
  /* --check, --env-names and --markdown each do one thing, without MPI. */
  int alone = o->check + o->env_names + o->markdown_given;
  const char *which = o->check ? "--check" : o->env_names ? "--env-names" : "--markdown";
  if (alone > 0 && alone + o->model + (o->json != NULL) > 1) {
    fprintf(stderr, "error: %s takes no other option but --quiet\n", which);
    return 2;
  }
  if (o->json && !o->model) {
    fprintf(stderr, "error: --json goes with --model\n");
    return 2;
  }
  return -1;
}

int main(int argc, char **argv) {
  if (wsp_opts_version("wsp-info", argc, argv, stdout)) return 0;
  info_opts_t o = {0};
  int prc = parse(&o, argc, argv);
  if (prc >= 0) return prc;
  if (o.markdown_given) { /* static tables: no MPI needed */
    print_markdown(o.markdown == 1);
    return 0;
  }
  if (o.check) return check_env(o.quiet);
  if (o.env_names) {
    for (size_t k = 0; k < NENV; k++) printf("%s\t%s\n", env_names[k], env_readers[k]);
    return 0;
  }
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  char lib[MPI_MAX_LIBRARY_VERSION_STRING + 1];
  int len = 0, major = 0, minor = 0;
  MPI_Get_library_version(lib, &len);
  lib[len] = '\0';
  char *nl = strchr(lib, '\n');
  if (nl) *nl = '\0';
  MPI_Get_version(&major, &minor);

  wsp_config_t cfg;
  wsp_config_init(&cfg);
  int rc = wsp_config_from_env(&cfg);
  /* --json FILE: rank 0 opens it for appending; every rank learns whether
   * it could, so that all stop together. */
  FILE *jf = NULL;
  int ok = 1;
  if (rank == 0 && o.json) {
    jf = strcmp(o.json, "-") == 0 ? stdout : fopen(o.json, "a");
    if (jf == NULL) {
      fprintf(stderr, "error: --json: cannot open %s: %s\n", o.json, strerror(errno));
      ok = 0;
    }
  }
  MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (!ok) {
    MPI_Finalize();
    return 2;
  }
  if (rank == 0 && o.quiet && rc != WSP_OK) fprintf(stderr, "error: %s\n", wsp_last_error());
  if (rank == 0 && !o.quiet) {
    printf("wirespeed %s\n", wsp_version());
    printf("MPI library:   %s (MPI %d.%d)\n", lib, major, minor);
    printf("build:         %s\n", wsp_build_info());
    printf("\nconfiguration (defaults + WSP_* environment):\n");
    if (rc != WSP_OK) {
      printf("  ERROR: %s\n", wsp_last_error());
    } else {
      static const char *levels[] = {"off", "error", "warn", "info", "debug", "trace"};
      printf("  WSP_LOG                  %s\n", levels[cfg.log_level]);
      printf("  WSP_SPARSE_ALGORITHM     %s\n", wsp_sparse_alg_info(cfg.sparse_alg)->name);
      printf("  WSP_SPARSE_AUTO_INTERVAL %llu\n",
             (unsigned long long)cfg.sparse_auto_interval);
      printf("  WSP_POLL_MAX_SLEEP_US    %u\n", cfg.poll_max_sleep_us);
      printf("  WSP_BIG_MESSAGE          %zu\n", cfg.big_message);
      for (int c = 0; c < WSP_COLL_COUNT; c++) {
        char var[64];
        const char *name = wsp_coll_name((wsp_coll_t)c);
        size_t i = 0;
        i += (size_t)snprintf(var, sizeof var, "WSP_");
        for (; *name && i + 1 < sizeof var; name++)
          var[i++] = (char)(*name >= 'a' && *name <= 'z' ? *name - 32 : *name);
        var[i] = '\0';
        snprintf(var + i, sizeof var - i, "_ALGORITHM");
        int a = cfg.coll_alg[c];
        printf("  %-24s %s\n", var,
               a == WSP_ALG_AUTO ? "auto" : wsp_coll_alg_info((wsp_coll_t)c, a)->name);
      }
      if (cfg.model_alpha > 0 && cfg.model_beta > 0 && cfg.model_gamma > 0)
        printf("  WSP_MODEL                %g,%g,%g,%g,%g (0: beta_x = beta, gap = alpha)\n",
               cfg.model_alpha, cfg.model_beta, cfg.model_gamma, cfg.model_beta_x,
               cfg.model_gap);
      else
        printf("  WSP_MODEL                (unset: calibrated by wsp_comm_create)\n");
      printf("  WSP_RULES_FILE           %s\n",
             cfg.rules_file ? cfg.rules_file : "(unset)");
      printf("  WSP_NETMAP               %s\n",
             cfg.netmap_file ? cfg.netmap_file : "(unset)");
      printf("  WSP_COLL_SEGMENT         %zu%s\n", cfg.coll_segment,
             cfg.coll_segment ? "" : " (the model picks)");
      if (cfg.node_split == WSP_NODES_HOST)
        printf("  WSP_NODES                host (ranks with the same host name)\n");
      else
        printf("  WSP_NODES                %s:%d\n",
               cfg.node_split == WSP_NODES_BLOCK ? "block" : "cyclic", cfg.node_split_n);
      if (cfg.p2p_lanes)
        printf("  WSP_P2P_LANES            %u (forced, no probe)\n", cfg.p2p_lanes);
      else
        printf("  WSP_P2P_LANES            auto (a probe per pair, up to WSP_P2P_MAX_LANES = %u)\n",
               cfg.p2p_max_lanes);
      if (cfg.p2p_min)
        printf("  WSP_P2P_MIN              %zu\n", cfg.p2p_min);
      else
        printf("  WSP_P2P_MIN              auto (%zu; under the collectives, once auto's probe "
               "finds lanes pay, 4 KiB per lane)\n",
               WSP_P2P_MIN_DEFAULT);
      printf("  WSP_P2P_CHUNK            %zu%s\n", cfg.p2p_chunk,
             cfg.p2p_chunk ? "" : " (per message)");
      printf("  WSP_P2P_PROBE_MS         %u\n", cfg.p2p_probe_ms);
      printf("  WSP_P2P_IF               %s\n",
             cfg.p2p_interfaces ? cfg.p2p_interfaces : "(unset: every interface that is up)");
      printf("  WSP_P2P_ENCRYPT          %d%s\n", cfg.p2p_encrypt,
             cfg.p2p_encrypt ? " (lanes sealed with AES-256-GCM)" : " (lanes authenticated, in clear)");
      printf("  WSP_SITES                %s\n",
             cfg.sites ? cfg.sites : "auto (the groups of a network map, if one is attached)");
      if (cfg.wan_connections)
        printf("  WSP_WAN_CONNECTIONS      %u\n", cfg.wan_connections);
      else
        printf("  WSP_WAN_CONNECTIONS      0 (the model chooses)\n");
      if (cfg.wan_lanes)
        printf("  WSP_WAN_LANES            %u\n", cfg.wan_lanes);
      else
        printf("  WSP_WAN_LANES            0 (the model chooses)\n");
      printf("  WSP_CHECK                %d%s\n", cfg.check,
             cfg.check ? " (collectives compare their arguments across ranks)" : " (off)");
      if (cfg.timeout > 0)
        printf("  WSP_TIMEOUT              %g s (a wait without progress for longer fails)\n",
               cfg.timeout);
      else
        printf("  WSP_TIMEOUT              0 (off: waits last as long as MPI's)\n");
      const char *report = cfg.report ? cfg.report : "(unset: no report)";
      if (cfg.report && strcmp(cfg.report, "1") == 0)
        report = "1 (a table on stderr at wsp_comm_free)";
      printf("  WSP_REPORT               %s\n", report);
    }

    printf("\nsparse exchange algorithms (wsp_sparse_exchange, WSP_SPARSE_ALGORITHM):\n");
    for (int a = WSP_SPARSE_AUTO; a < WSP_SPARSE_ALG_COUNT; a++) { /* auto first */
      const wsp_alg_info_t *in = wsp_sparse_alg_info((wsp_sparse_alg_t)a);
      printf("  %-10s %s\n", in->name, in->desc);
      printf("  %-10s cost: %s\n", "", in->cost);
    }
    print_coll_algs();
    fflush(stdout);
  }
  if (o.model && rc == WSP_OK) print_model(!o.quiet, rank == 0 ? jf : NULL, rank);
  if (jf && jf != stdout) fclose(jf);
  MPI_Finalize();
  return rc == WSP_OK ? 0 : 1;
}
