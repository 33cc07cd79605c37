/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The network map's flows (wsp_netmap_probe_config_t.flows): per pair of
 * nodes, one TCP flow's rate against several flows', and auto's transport
 * reading them from an attached map instead of measuring.
 *
 * Run with one node per rank (WSP_NODES=cyclic:P), WSP_TRANSPORT=auto and
 * the lanes' probe figures given (WSP_P2P_PROBE_FIGURES=1e6,5e6,0.0001:
 * one lane 1 MB/s, all lanes 5 MB/s), so that the expected figures are
 * known. Checks:
 *   1. every pair of nodes in the map holds the given rates, several flows
 *      and a threshold (lanes pay); a rank with itself holds zeros; bad
 *      arguments are refused naming them;
 *   2. saved and loaded, the map holds the same flows;
 *   3. a second communicator, made after the figures were changed to a
 *      pair where lanes do not pay (1e6 against 1.05e6), with the map
 *      attached: its first large allreduce takes the lanes the map says pay
 *      (bytes moved over them), with MPI's result, and its model prices
 *      them at the median of the map's pairs' rates, made to differ here;
 *      detached, a third one measures and keeps MPI.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "wirespeed.h"
#include "mpi_check.h"
#include "lanes_check.h"
#include "../../src/netmap/netmap.h"

/* An allreduce of 1 MiB of integer-valued doubles against MPI's. */
static void allreduce_check(wsp_comm_t *w, const char *what) {
  size_t n = (size_t)1 << 17;
  double *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y), *ref = malloc(n * sizeof *ref);
  for (size_t i = 0; i < n; i++) x[i] = (double)((i * 7 + (size_t)rank * 13) % 1000);
  int rc = wsp_allreduce(w, x, y, n, MPI_DOUBLE, MPI_SUM);
  CHECK(rc == WSP_OK, "%s: allreduce: %s", what, wsp_last_error());
  MPI_Allreduce(x, ref, (int)n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  CHECK(rc != WSP_OK || memcmp(y, ref, n * sizeof *y) == 0, "%s: allreduce differs from MPI's",
        what);
  free(x);
  free(y);
  free(ref);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  wsp_comm_t *w = world_comm();
  wsp_netmap_probe_config_t cfg;
  wsp_netmap_probe_config_init(&cfg);
  CHECK(cfg.flows == 0, "flows are measured by default");
  cfg.reps = 1;
  cfg.eager_limits = 0;
  cfg.flows = 1;
  wsp_netmap_t *map = NULL;
  int rc = wsp_netmap_probe(w, &cfg, &map);
  CHECK(rc == WSP_OK, "probe: %s", wsp_last_error());
  if (rc != WSP_OK) MPI_Abort(MPI_COMM_WORLD, 1);

  /* 1. The figures given to the lanes' probe, for every pair. */
  for (int a = 0; a < size; a++)
    for (int b = 0; b < size; b++) {
      double one = -1, k_rate = -1;
      int k = -1;
      size_t from = 1;
      rc = wsp_netmap_flows(map, a, b, &one, &k_rate, &k, &from);
      CHECK(rc == WSP_OK, "flows(%d, %d): %s", a, b, wsp_last_error());
      if (a == b)
        CHECK(one == 0 && k_rate == 0 && k == 0 && from == 0, "flows(%d, %d) not zero", a, b);
      else
        CHECK(fabs(one - 1e6) < 1 && fabs(k_rate - 5e6) < 1 && k >= 2 && from > 0,
              "flows(%d, %d): one %g, k %d at %g, from %zu; expected 1e6, several at 5e6, > 0", a,
              b, one, k, k_rate, from);
      /* The round trip is the kernel's own (the figures given replace the
       * rates only): on one host's loopback, above 0 and far under 0.1 s. */
      double rtt = -1;
      rc = wsp_netmap_rtt(map, a, b, &rtt);
      CHECK(rc == WSP_OK && (a == b ? rtt == 0 : rtt > 0 && rtt < 0.1), "rtt(%d, %d) = %g s: %s", a,
            b, rtt, rc == WSP_OK ? "out of bounds" : wsp_last_error());
    }
  CHECK(wsp_netmap_rtt(map, 0, 1, NULL) == WSP_ERR_ARG &&
            strstr(wsp_last_error(), "seconds is NULL") != NULL,
        "rtt to NULL: %s", wsp_last_error());
  CHECK(wsp_netmap_rtt(map, 0, size, &(double){0}) == WSP_ERR_ARG &&
            strstr(wsp_last_error(), "b = ") != NULL,
        "rtt of an out-of-range rank: %s", wsp_last_error());
  CHECK(wsp_netmap_rtt(map, -1, 0, &(double){0}) == WSP_ERR_ARG &&
            strstr(wsp_last_error(), "a = -1") != NULL,
        "rtt of a negative rank: %s", wsp_last_error());
  CHECK(wsp_netmap_rtt(NULL, 0, 0, &(double){0}) == WSP_ERR_ARG &&
            strstr(wsp_last_error(), "map is NULL") != NULL,
        "rtt of no map: %s", wsp_last_error());
  double d;
  int k;
  size_t z;
  CHECK(wsp_netmap_flows(map, 0, size, &d, &d, &k, &z) == WSP_ERR_ARG &&
            strstr(wsp_last_error(), "b = ") != NULL,
        "an out-of-range rank: %s", wsp_last_error());
  CHECK(wsp_netmap_flows(map, -1, 0, &d, &d, &k, &z) == WSP_ERR_ARG &&
            strstr(wsp_last_error(), "a = -1") != NULL,
        "a negative rank: %s", wsp_last_error());
  CHECK(wsp_netmap_flows(NULL, 0, 0, &d, &d, &k, &z) == WSP_ERR_ARG &&
            strstr(wsp_last_error(), "map is NULL") != NULL,
        "map NULL: %s", wsp_last_error());
  CHECK(wsp_netmap_flows(map, 0, 0, &d, &d, NULL, &z) == WSP_ERR_ARG &&
            strstr(wsp_last_error(), "k is NULL") != NULL,
        "k NULL: %s", wsp_last_error());

  /* 2. Saved and loaded: the same flows. */
  char path[64] = "";
  if (rank == 0) {
    snprintf(path, sizeof path, "/tmp/wsp-map-flows-%ld.json", (long)getpid());
    CHECK(wsp_netmap_save(map, path) == WSP_OK, "save: %s", wsp_last_error());
  }
  MPI_Bcast(path, sizeof path, MPI_CHAR, 0, MPI_COMM_WORLD);
  wsp_netmap_t *back = NULL;
  rc = wsp_netmap_load(w, path, &back);
  CHECK(rc == WSP_OK, "load: %s", wsp_last_error());
  if (rank == 0) remove(path);
  for (int b = 1; rc == WSP_OK && b < size; b++) {
    double o1, k1, o2, k2;
    int n1, n2;
    size_t f1, f2;
    double r1 = -1, r2 = -2;
    wsp_netmap_flows(map, 0, b, &o1, &k1, &n1, &f1);
    wsp_netmap_flows(back, 0, b, &o2, &k2, &n2, &f2);
    wsp_netmap_rtt(map, 0, b, &r1);
    wsp_netmap_rtt(back, 0, b, &r2);
    CHECK(o1 == o2 && k1 == k2 && n1 == n2 && f1 == f2 && r1 == r2,
          "pair 0-%d differs after loading", b);
  }

  /* 3. A communicator where measuring would find no gain, with the map.
   * Its pairs' rates of all flows are made to differ, 2, 3, 4, ... MB/s:
   * the model must price the lanes at the median pair's (docs/p2p.md),
   * worked out here; WSP_MODEL's slow MPI (10 us per byte) lets the
   * lanes' rate replace its beta. */
  double want_beta = 0;
  if (back) {
    const int n = back->nodes;
    double rate[64];
    int npairs = 0;
    for (int a = 0; a < n; a++)
      for (int b = a + 1; b < n && npairs < 64; b++) {
        rate[npairs] = 2e6 + 1e6 * npairs;
        back->rate_k[a * n + b] = back->rate_k[b * n + a] = rate[npairs++];
      }
    want_beta = lanes_median_inv(rate, npairs);
  }
  setenv("WSP_P2P_PROBE_FIGURES", "1e6,1.05e6,0.0001", 1);
  setenv("WSP_MODEL", "1e-5,1e-5,1e-9", 1);
  /* The algorithm is fixed to one whose transfers take the communicator's
   * transport: on a loaded machine the probe can find groups of nodes in
   * the loopback's noise, and auto then picks the multi-site allreduce,
   * whose crossings go over connections of its own (not counted here). */
  setenv("WSP_ALLREDUCE_ALGORITHM", "rabenseifner", 1);
  wsp_comm_t *m2 = world_comm();
  unsetenv("WSP_ALLREDUCE_ALGORITHM");
  unsetenv("WSP_MODEL");
  rc = wsp_comm_set_netmap(m2, back ? back : map);
  CHECK(rc == WSP_OK, "set_netmap: %s", wsp_last_error());
  allreduce_check(m2, "with the map");
  CHECK(m2->xport != NULL && lanes_moved(m2, NULL) >= ((size_t)1 << 17), "with the map: %s",
        m2->xport == NULL ? "the transport stayed on MPI"
                          : "less than one block went over the lanes");
  wsp_model_t mm = {0};
  CHECK(want_beta > 0 && wsp_comm_model(m2, &mm) == WSP_OK &&
            fabs(mm.beta - want_beta) <= 1e-6 * want_beta,
        "with the map: the model prices the lanes at %g s/B, not the median pair's %g", mm.beta,
        want_beta);
  wsp_comm_free(&m2);
  /* Without it, the same settings measure and keep MPI. */
  wsp_comm_t *m3 = world_comm();
  allreduce_check(m3, "without the map");
  CHECK(m3->xport == NULL && m3->lanes == NULL,
        "without the map the transport took the lanes the probe figures say do not pay");
  wsp_comm_free(&m3);

  wsp_netmap_free(&back);
  wsp_netmap_free(&map);
  wsp_comm_free(&w);
  long total = 0;
  MPI_Allreduce(&failures, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf("test_map_flows: np %d, %ld failures\n", size, total);
  MPI_Finalize();
  return total ? 1 : 0;
}
