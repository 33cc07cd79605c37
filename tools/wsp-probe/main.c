/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * wsp-probe: measures the network map of a job (wsp_netmap_probe), writes
 * it as JSON and prints what it found: the nodes and their groups, the
 * classes of pairs (inside a node, inside a group, between groups) with
 * their latencies and bandwidths, the slowest pairs, and the eager limits.
 * --plot draws heat maps of latency and bandwidth. Rank 0 prints.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opts.h"
#include "script.h"
#include "stats.h"
#include "wirespeed.h"

typedef struct probe_opts {
  const char *out, *plot;
  long reps;
  size_t stream, budget_bytes;
  double budget_seconds;
  int no_eager, flows, quiet;
} probe_opts_t;

static int parse(int argc, char **argv, int rank, probe_opts_t *o) {
  static char reps_def[16], stream_def[16];
  wsp_netmap_probe_config_t d;
  wsp_netmap_probe_config_init(&d);
  *o = (probe_opts_t){.out = "netmap.json", .reps = d.reps, .stream = d.stream_bytes};
  snprintf(reps_def, sizeof reps_def, "%d", d.reps);
  wsp_fmt_size(d.stream_bytes, stream_def, sizeof stream_def);
  const wsp_opt_t opts[] = {
      {"--out", WSP_OPT_STRING, &o->out, "FILE", "where to write the map (JSON)", "netmap.json", 0,
       0, NULL, NULL},
      {"--reps", WSP_OPT_INT, &o->reps, "N",
       "passes over every pair of nodes (latency: the smallest round trip; bandwidth: the "
       "median stream)",
       reps_def, 1, 1000, NULL, NULL},
      {"--stream-bytes", WSP_OPT_SIZE, &o->stream, "SIZE",
       "bytes of one bandwidth stream (8 messages back to back)", stream_def, 64, 256 << 20, NULL,
       NULL},
      {"--time-limit", WSP_OPT_DOUBLE, &o->budget_seconds, "SEC",
       "stop passing once another pass would take the probe past SEC seconds (0: no limit)", "0", 0,
       1e9, NULL, NULL},
      WSP_OPT_DEPRECATED("--budget-seconds", "--time-limit"),
      {"--byte-limit", WSP_OPT_SIZE, &o->budget_bytes, "SIZE",
       "... or past SIZE bytes sent by one rank (0: no limit)", "0", 0, 0, NULL, NULL},
      WSP_OPT_DEPRECATED("--budget-bytes", "--byte-limit"),
      {"--no-eager", WSP_OPT_FLAG, &o->no_eager, NULL,
       "do not search for the eager/rendezvous switch", NULL, 0, 0, NULL, NULL},
      {"--flows", WSP_OPT_FLAG, &o->flows, NULL,
       "also measure one TCP flow against several per pair of nodes (the lanes' probe, about "
       "2 x WSP_P2P_PROBE_MS and a set-up per round of pairs), which WSP_TRANSPORT=auto then "
       "reads from the map instead of measuring",
       NULL, 0, 0, NULL, NULL},
      {"--plot", WSP_OPT_STRING, &o->plot, "PNG",
       "draw heat maps of latency and bandwidth (python/wsp_report netmap; Python 3 with "
       "matplotlib)",
       NULL, 0, 0, NULL, NULL},
      {"--quiet", WSP_OPT_FLAG, &o->quiet, NULL,
       "print no tables (errors and warnings still go to stderr)", NULL, 0, 0, NULL, NULL},
      {NULL, 0, NULL, NULL, NULL, NULL, 0, 0, NULL, NULL},
  };
  const wsp_opt_cmd_t cmd = {
      .usage = "usage: mpirun -np N wsp-probe [options]\n"
               "       wsp-probe --version\n\n"
               "Measures the network between the job's nodes (WSP_NODES says which ranks "
               "share one)\nand writes the map as JSON, for wsp_netmap_load.\n",
      .opts = opts,
      .footer = "Exit status 0, 1 when the probe or writing the map failed, 2 for a bad "
                "option.\n"};
  return wsp_opts_parse(&cmd, argc, argv, rank == 0 ? stdout : NULL, rank == 0 ? stderr : NULL);
}

/* Figures of one class of pairs. */
typedef struct klass {
  const char *name;
  int n;
  double *lat, *bw; /* us, Mbit/s */
} klass_t;

static void klass_add(klass_t *k, double lat, double inv) {
  k->lat[k->n] = lat * 1e6;
  k->bw[k->n] = 8e-6 / inv;
  k->n++;
}

static void klass_print(const klass_t *k) {
  if (k->n == 0) return;
  wsp_stats_t l, b;
  wsp_stats_sorted(k->lat, (size_t)k->n, &l);
  wsp_stats_sorted(k->bw, (size_t)k->n, &b);
  printf("  %-16s %6d   %10.1f %10.1f %10.1f   %10.1f %10.1f %10.1f\n", k->name, k->n, l.min,
         l.median, l.max, b.min, b.median, b.max);
}

typedef struct pair_fig {
  int a, b;
  double lat, bw;
} pair_fig_t;

static int by_bw(const void *x, const void *y) {
  const pair_fig_t *p = x, *q = y;
  return (p->bw > q->bw) - (p->bw < q->bw);
}
static int by_lat(const void *x, const void *y) {
  const pair_fig_t *p = x, *q = y;
  return (p->lat < q->lat) - (p->lat > q->lat);
}

/* The flows' figures of every pair of nodes that has them. */
static void flows_summary(const wsp_netmap_t *m, int n, const int *lead) {
  int shown = 0;
  for (int a = 0; a < n; a++)
    for (int b = a + 1; b < n; b++) {
      double one, k_rate, rtt = 0;
      int k;
      size_t from;
      if (wsp_netmap_flows(m, lead[a], lead[b], &one, &k_rate, &k, &from) != WSP_OK || k == 0)
        continue;
      (void)wsp_netmap_rtt(m, lead[a], lead[b], &rtt);
      if (shown++ == 0)
        printf("# flows per pair (node a - node b: one flow, k flows in Mbit/s; lanes from; "
               "TCP round trip)\n");
      char sz[32];
      printf("  %d-%d: %.1f, %d: %.1f; %s; %.3g ms\n", a, b, 8e-6 * one, k, 8e-6 * k_rate,
             from ? wsp_fmt_size(from, sz, sizeof sz) : "never (one flow is as fast)", 1e3 * rtt);
    }
}

static void summary(const wsp_netmap_t *m, const char *out, int eager) {
  wsp_netmap_info_t in;
  wsp_netmap_info(m, &in);
  int n = in.nodes, *lead = malloc((size_t)n * sizeof *lead), *count = calloc((size_t)n, sizeof *count),
      *group = malloc((size_t)n * sizeof *group);
  size_t np = (size_t)n * (size_t)(n + 1) / 2;
  double *buf = malloc(4 * np * sizeof *buf);
  pair_fig_t *pairs = malloc(np * sizeof *pairs);
  if (!lead || !count || !group || !buf || !pairs) {
    fprintf(stderr, "error: out of memory for the summary\n");
    goto out;
  }
  for (int r = in.p - 1; r >= 0; r--) {
    int node, g;
    wsp_netmap_node(m, r, &node, &g);
    lead[node] = r, group[node] = g, count[node]++;
  }
  printf("# wsp-probe: p=%d on %d node(s) in %d group(s), %d pass(es), %.2f s; map in %s\n",
         in.p, n, in.groups, in.reps, in.seconds, out);
  if (eager)
    printf("# eager up to %zu bytes inside a node, %zu between nodes (0: none eager, or no "
           "such pair)\n",
           in.eager_intra, in.eager_inter);
  for (int g = 0; g < in.groups; g++) {
    printf("# group %d: nodes", g);
    for (int a = 0; a < n; a++)
      if (group[a] == g) printf(" %d", a);
    printf("\n");
  }
  klass_t k[3] = {{"inside a node", 0, buf, buf + np},
                  {"inside a group", 0, buf + 2 * np, buf + 3 * np},
                  {"between groups", 0, NULL, NULL}};
  /* Between groups reuses the pairs array's room through a second pass. */
  int npairs = 0;
  for (int a = 0; a < n; a++)
    for (int b = a; b < n; b++) {
      if (a == b && count[a] < 2) continue;
      double lat, inv;
      int ra = lead[a], rb = a == b ? lead[a] + 1 : lead[b];
      if (a == b) { /* the node's second rank: the next rank on it */
        for (rb = ra + 1; rb < in.p; rb++) {
          int nd, g;
          wsp_netmap_node(m, rb, &nd, &g);
          if (nd == a) break;
        }
      }
      wsp_netmap_pair(m, ra, rb, &lat, &inv);
      pairs[npairs++] = (pair_fig_t){a, b, lat * 1e6, 8e-6 / inv};
      if (a == b) klass_add(&k[0], lat, inv);
      else if (group[a] == group[b]) klass_add(&k[1], lat, inv);
    }
  printf("# pairs: latency (us) min / median / max, bandwidth (Mbit/s) min / median / max\n");
  printf("  %-16s %6s   %10s %10s %10s   %10s %10s %10s\n", "class", "pairs", "lat min", "median",
         "max", "bw min", "median", "max");
  klass_print(&k[0]);
  klass_print(&k[1]);
  if (in.groups > 1) {
    k[2].lat = buf, k[2].bw = buf + np; /* k[0] is printed */
    for (int i = 0; i < npairs; i++)
      if (pairs[i].a != pairs[i].b && group[pairs[i].a] != group[pairs[i].b]) {
        k[2].lat[k[2].n] = pairs[i].lat, k[2].bw[k[2].n] = pairs[i].bw, k[2].n++;
      }
    klass_print(&k[2]);
  }
  int shown = npairs < 5 ? npairs : 5;
  qsort(pairs, (size_t)npairs, sizeof *pairs, by_bw);
  printf("# the %d slowest pairs by bandwidth (node a - node b: Mbit/s, us)\n ", shown);
  for (int i = 0; i < shown; i++)
    printf(" %d-%d: %.1f, %.1f;", pairs[i].a, pairs[i].b, pairs[i].bw, pairs[i].lat);
  qsort(pairs, (size_t)npairs, sizeof *pairs, by_lat);
  printf("\n# the %d slowest pairs by latency (node a - node b: us, Mbit/s)\n ", shown);
  for (int i = 0; i < shown; i++)
    printf(" %d-%d: %.1f, %.1f;", pairs[i].a, pairs[i].b, pairs[i].lat, pairs[i].bw);
  printf("\n");
  flows_summary(m, n, lead);
out:
  free(lead);
  free(count);
  free(group);
  free(buf);
  free(pairs);
}

int main(int argc, char **argv) {
  if (wsp_opts_version("wsp-probe", argc, argv, stdout)) return 0;
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  probe_opts_t o;
  int prc = parse(argc, argv, rank, &o);
  if (prc != WSP_OPTS_OK) {
    MPI_Finalize();
    return prc == WSP_OPTS_HELP ? 0 : 2;
  }
  wsp_comm_t *comm = NULL;
  wsp_netmap_t *map = NULL;
  wsp_netmap_probe_config_t cfg;
  wsp_netmap_probe_config_init(&cfg);
  cfg.reps = (int)o.reps;
  cfg.stream_bytes = o.stream;
  cfg.budget_seconds = o.budget_seconds;
  cfg.budget_bytes = o.budget_bytes;
  cfg.eager_limits = !o.no_eager;
  cfg.flows = o.flows;
  int rc = wsp_comm_create(MPI_COMM_WORLD, NULL, &comm);
  if (rc == WSP_OK) rc = wsp_netmap_probe(comm, &cfg, &map);
  if (rc == WSP_OK && rank == 0) rc = wsp_netmap_save(map, o.out);
  if (rc != WSP_OK) fprintf(stderr, "error: rank %d: %s\n", rank, wsp_last_error());
  else if (rank == 0 && !o.quiet) summary(map, o.out, !o.no_eager);
  int bad = rc != WSP_OK, anybad = 0;
  MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  wsp_netmap_free(&map);
  wsp_comm_free(&comm);
  /* The marker launchers wait for (netlab run --done-line), also under
   * --quiet, as wsp-bench's (docs/tools.md). */
  if (rank == 0) printf("# wsp-probe: finished (exit %d), entering MPI_Finalize\n", anybad);
  fflush(stdout);
  MPI_Finalize();
  if (rank == 0 && !anybad && o.plot) {
    const char *script = wsp_script_path("wsp_report", "WSP_PLOT_SCRIPT");
    if (script == NULL) {
      fprintf(stderr, "error: --plot: python/wsp_report not found; the map is in %s\n", o.out);
      return 1;
    }
    char *pargv[] = {(char *)wsp_script_python(),
                     (char *)script,
                     "netmap",
                     (char *)o.out,
                     "--out",
                     (char *)o.plot,
                     NULL};
    if (wsp_script_run("--plot", pargv) != 0) return 1;
  }
  return anybad;
}
