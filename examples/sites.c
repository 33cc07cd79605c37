/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Multi-site collectives (docs/sites.md) with ranks as the sites: the lower
 * half of the ranks is one site and the upper half the other, as if they
 * were two clusters joined by a long link. wsp_bcast from the last rank and
 * wsp_allreduce run the "sites" algorithms, which cross between the sites
 * over a few connections at once, and each result is compared with MPI's.
 * They are forced: auto picks them only where the model finds the link
 * between the sites slower than those inside, which on one machine it is not.
 *
 * Build:  mpicc sites.c $(pkg-config --cflags --libs wirespeed) -o sites
 * Run:    mpirun -np 4 ./sites     (other sites: WSP_SITES="ranks:0;1-3")
 * Rank 0 prints "sites: ok, ..."; any failure aborts the job.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wirespeed.h>

static void fail(const char *what, const char *why) {
  fprintf(stderr, "sites: %s%s%s\n", what, *why ? ": " : "", why);
  MPI_Abort(MPI_COMM_WORLD, 1);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size < 2) fail("two sites need two ranks or more", "");
  char halves[64]; /* the sites unless WSP_SITES names others */
  snprintf(halves, sizeof halves, "ranks:0-%d;%d-%d", size / 2 - 1, size / 2, size - 1);
  wsp_config_t cfg;
  if (wsp_config_init(&cfg) || wsp_config_from_env(&cfg)) fail("config", wsp_last_error());
  if (cfg.sites == NULL) cfg.sites = halves;
  if (wsp_coll_alg_from_name(WSP_COLL_BCAST, "sites", &cfg.coll_alg[WSP_COLL_BCAST]) ||
      wsp_coll_alg_from_name(WSP_COLL_ALLREDUCE, "sites", &cfg.coll_alg[WSP_COLL_ALLREDUCE]))
    fail("algorithm", wsp_last_error());
  wsp_comm_t *comm;
  if (wsp_comm_create(MPI_COMM_WORLD, &cfg, &comm)) fail("wsp_comm_create", wsp_last_error());

  /* What runs for 2 MiB of doubles: a forced algorithm whose needs do not
   * hold (two sites, a commutative op) falls back to another. */
  const size_t n = (size_t)1 << 18;
  wsp_topology_t topo;
  int bc, ar;
  if (wsp_comm_topology(comm, &topo) || topo.sites < 2) fail("fewer than two sites", "");
  if (wsp_coll_select(comm, WSP_COLL_BCAST, n * sizeof(double), 1, &bc) ||
      wsp_coll_select(comm, WSP_COLL_ALLREDUCE, n * sizeof(double), 1, &ar))
    fail("wsp_coll_select", wsp_last_error());

  double *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b), *ref = malloc(n * sizeof *ref);
  if (a == NULL || b == NULL || ref == NULL) fail("out of memory", "");
  /* Small integers: every order of summing them gives the same bits, so
   * each result must equal MPI's byte for byte. The bcast's root is on the
   * second site. */
  for (size_t i = 0; i < n; i++) a[i] = ref[i] = rank == size - 1 ? (double)(i % 977) : -1.0;
  if (wsp_bcast(comm, a, n, MPI_DOUBLE, size - 1)) fail("wsp_bcast", wsp_last_error());
  MPI_Bcast(ref, (int)n, MPI_DOUBLE, size - 1, MPI_COMM_WORLD);
  if (memcmp(a, ref, n * sizeof *a)) fail("wsp_bcast's result differs from MPI_Bcast's", "");
  for (size_t i = 0; i < n; i++) a[i] = rank * 1000.0 + (double)(i % 1000);
  if (wsp_allreduce(comm, a, b, n, MPI_DOUBLE, MPI_SUM)) fail("wsp_allreduce", wsp_last_error());
  MPI_Allreduce(a, ref, (int)n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  if (memcmp(b, ref, n * sizeof *b)) fail("wsp_allreduce's result differs from MPI's", "");

  if (rank == 0)
    printf("sites: ok, %d sites on %d ranks (%s), %d connection(s) between two; bcast by %s and "
           "allreduce by %s of %zu bytes equal MPI's\n",
           topo.sites, size, cfg.sites, topo.wan_connections,
           wsp_coll_alg_info(WSP_COLL_BCAST, bc)->name,
           wsp_coll_alg_info(WSP_COLL_ALLREDUCE, ar)->name, n * sizeof(double));
  free(a);
  free(b);
  free(ref);
  if (wsp_comm_free(&comm)) fail("wsp_comm_free", wsp_last_error());
  MPI_Finalize();
  return 0;
}
