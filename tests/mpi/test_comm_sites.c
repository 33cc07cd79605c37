/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Sites on a communicator (src/core/sites.c, docs/sites.md), at any rank
 * count:
 *   - "ranks:" lists: every rank's site from wsp_comm_site against the
 *     list, numbered by lowest rank whatever order the list gives; the
 *     topology's counts;
 *   - a list naming a rank the communicator lacks, and a "hosts:" pattern
 *     no host matches: WSP_ERR_CONFIG on every rank, nobody hangs; a
 *     malformed cfg.sites, cfg.wan_connections over 256 and cfg.wan_lanes
 *     over 64: WSP_ERR_ARG naming the field;
 *   - "hosts:*" (every rank on one site) and "none": no multi-site
 *     algorithm can run (wsp_coll_predict gives -1), and with two sites
 *     they can (a time above 0), with the WAN figures of a configured
 *     model equal to its alpha and beta, and so one lane per connection.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wirespeed.h"
#include "mpi_check.h"

static wsp_comm_t *make(const char *sites, int *rc) {
  wsp_config_t c;
  wsp_config_init(&c);
  c.sites = sites;
  c.model_alpha = 1e-5, c.model_beta = 1e-9, c.model_gamma = 1e-10;
  wsp_comm_t *w = NULL;
  *rc = wsp_comm_create(MPI_COMM_WORLD, &c, &w);
  return w;
}

/* The same outcome on every rank. */
static void agree(int rc, const char *what) {
  int lo = rc, hi = rc;
  MPI_Allreduce(MPI_IN_PLACE, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &hi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  CHECK(lo == hi, "%s: ranks returned %d and %d", what, lo, hi);
}

static int alg(wsp_coll_t c, const char *name) {
  int a = -1;
  wsp_coll_alg_from_name(c, name, &a);
  return a;
}

static void expect_multisite(wsp_comm_t *w, int yes, const char *what) {
  double t = 0;
  CHECK(wsp_coll_predict(w, WSP_COLL_BCAST, alg(WSP_COLL_BCAST, "sites"), 1 << 20, 1, &t) ==
            WSP_OK, "%s: predict", what);
  CHECK(yes ? t > 0 : t == -1, "%s: bcast/sites predicts %g", what, t);
  CHECK(wsp_coll_predict(w, WSP_COLL_ALLREDUCE, alg(WSP_COLL_ALLREDUCE, "two_tier"), 1 << 20, 1,
                         &t) == WSP_OK, "%s: predict", what);
  CHECK(yes ? t > 0 : t == -1, "%s: allreduce/two_tier predicts %g", what, t);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int rc;
  char spec[256];
  /* Odd ranks first in the list, then even ones: site 0 is the even ranks
   * (rank 0's), site 1 the odd ones. */
  if (size >= 2) {
    int n = snprintf(spec, sizeof spec, "ranks:");
    for (int par = 1; par >= 0; par--) {
      for (int r = par; r < size; r += 2)
        n += snprintf(spec + n, sizeof spec - (size_t)n, "%s%d", r == par ? "" : ",", r);
      if (par) n += snprintf(spec + n, sizeof spec - (size_t)n, ";");
    }
    wsp_comm_t *w = make(spec, &rc);
    agree(rc, spec);
    CHECK(rc == WSP_OK, "%s: %s", spec, wsp_last_error());
    if (w) {
      for (int r = 0; r < size; r++) {
        int s = -2;
        CHECK(wsp_comm_site(w, r, &s) == WSP_OK && s == r % 2, "%s: rank %d on site %d", spec, r,
              s);
      }
      wsp_topology_t t;
      wsp_comm_topology(w, &t);
      CHECK(t.sites == 2 && t.site == rank % 2 && t.site_ranks == (size + 1 - rank % 2) / 2,
            "%s: topology sites %d site %d ranks %d", spec, t.sites, t.site, t.site_ranks);
      wsp_model_t m;
      wsp_comm_model(w, &m);
      CHECK(m.alpha_wan == m.alpha && m.beta_wan == m.beta && m.beta_wan_link == 0,
            "configured model: WAN figures %g %g %g", m.alpha_wan, m.beta_wan, m.beta_wan_link);
      /* One connection between sites as fast as a NIC: no lanes. */
      CHECK(t.wan_lanes == 1, "configured model: %d lanes per connection", t.wan_lanes);
      expect_multisite(w, 1, spec);
      int s = 0;
      CHECK(wsp_comm_site(w, size, &s) == WSP_ERR_ARG, "rank %d accepted", size);
      CHECK(wsp_comm_site(w, -1, &s) == WSP_ERR_ARG, "rank -1 accepted");
      CHECK(wsp_comm_site(w, 0, NULL) == WSP_ERR_ARG, "site NULL accepted");
      CHECK(wsp_comm_site(NULL, 0, &s) == WSP_ERR_ARG, "comm NULL accepted");
      CHECK(strstr(wsp_last_error(), "comm is NULL") != NULL, "%s", wsp_last_error());
      wsp_config_t c;
      wsp_comm_config(w, &c);
      CHECK(c.sites && strcmp(c.sites, spec) == 0, "config keeps the specification");
      wsp_comm_free(&w);
    }
  }
  snprintf(spec, sizeof spec, "ranks:0-%d", size);
  wsp_comm_t *w = make(spec, &rc);
  agree(rc, spec);
  CHECK(rc == WSP_ERR_CONFIG && w == NULL, "%s: rc %d", spec, rc);
  CHECK(strstr(wsp_last_error(), "is not in this communicator") != NULL, "%s: %s", spec,
        wsp_last_error());
  {
    /* Bad configuration fields, refused before any traffic, naming them. */
    wsp_config_t c;
    wsp_config_init(&c);
    c.wan_connections = 257;
    w = NULL;
    rc = wsp_comm_create(MPI_COMM_WORLD, &c, &w);
    agree(rc, "wan_connections 257");
    CHECK(rc == WSP_ERR_ARG && w == NULL && strstr(wsp_last_error(), "wan_connections"),
          "cfg.wan_connections = 257 gave %d: %s", rc, wsp_last_error());
    wsp_config_init(&c);
    c.wan_lanes = 65;
    rc = wsp_comm_create(MPI_COMM_WORLD, &c, &w);
    agree(rc, "wan_lanes 65");
    CHECK(rc == WSP_ERR_ARG && w == NULL && strstr(wsp_last_error(), "wan_lanes"),
          "cfg.wan_lanes = 65 gave %d: %s", rc, wsp_last_error());
    wsp_config_init(&c);
    c.sites = "ranks:0;;1";
    rc = wsp_comm_create(MPI_COMM_WORLD, &c, &w);
    agree(rc, "sites ranks:0;;1");
    CHECK(rc == WSP_ERR_ARG && w == NULL && strstr(wsp_last_error(), "cfg->sites"),
          "cfg.sites = \"ranks:0;;1\" gave %d: %s", rc, wsp_last_error());
  }
  w = make("hosts:no-such-host-*", &rc);
  agree(rc, "hosts:no-such-host-*");
  CHECK(rc == WSP_ERR_CONFIG && w == NULL, "hosts:no-such-host-*: rc %d", rc);
  CHECK(strstr(wsp_last_error(), "matches no site") != NULL, "%s", wsp_last_error());
  static const char *none[] = {"hosts:*", "none", "auto"};
  for (int k = 0; k < 3; k++) {
    w = make(none[k], &rc);
    agree(rc, none[k]);
    CHECK(rc == WSP_OK, "%s: %s", none[k], wsp_last_error());
    if (w == NULL) continue;
    wsp_topology_t t;
    wsp_comm_topology(w, &t);
    int s = 0;
    wsp_comm_site(w, 0, &s);
    CHECK(k == 0 ? t.sites == 1 && t.site == 0 && t.site_ranks == size && s == 0
                 : t.sites == 0 && s == -1,
          "%s: sites %d site %d ranks %d", none[k], t.sites, t.site, t.site_ranks);
    expect_multisite(w, 0, none[k]);
    wsp_comm_free(&w);
  }
  MPI_Allreduce(MPI_IN_PLACE, &failures, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf("test_comm_sites: np %d, %ld failures\n", size, failures);
  MPI_Finalize();
  return failures != 0;
}
