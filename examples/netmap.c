/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The network map (docs/netmap.md): measure the latency and bandwidth
 * between the job's nodes with a short probe, save the map as JSON for later
 * jobs of the same shape, print the figures of the pair (0, size-1), and
 * attach the map to the communicator, whose bcast, reduce, gather and
 * scatter may then use trees built from it (the "aware" algorithms).
 *
 * Build:  mpicc netmap.c $(pkg-config --cflags --libs wirespeed) -o netmap
 * Run:    mpirun -np 3 ./netmap [FILE]          (default netmap.json)
 * A later job loads the file with wsp_netmap_load, or with WSP_NETMAP=FILE
 * and no code at all. Ranks on one machine form one node, so the pair's
 * figures are those inside it; WSP_NODES=cyclic:3 makes each rank a node.
 */
#include <stdio.h>
#include <wirespeed.h>

static void check(int rc, const char *what) {
  if (rc != WSP_OK) {
    fprintf(stderr, "%s: %s: %s\n", what, wsp_err_name(rc), wsp_last_error());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  const char *path = argc > 1 ? argv[1] : "netmap.json";
  wsp_comm_t *comm;
  check(wsp_comm_create(MPI_COMM_WORLD, NULL, &comm), "wsp_comm_create");
  int rank, size;
  check(wsp_comm_rank(comm, &rank), "wsp_comm_rank");
  check(wsp_comm_size(comm, &size), "wsp_comm_size");

  /* A quick probe: one pass over the pairs with a small stream. The
   * defaults (5 passes of 512 KiB) give steadier figures. */
  wsp_netmap_probe_config_t cfg;
  check(wsp_netmap_probe_config_init(&cfg), "wsp_netmap_probe_config_init");
  cfg.reps = 1;
  cfg.stream_bytes = 64 << 10;
  wsp_netmap_t *map;
  check(wsp_netmap_probe(comm, &cfg, &map), "wsp_netmap_probe"); /* collective */

  /* Every rank holds the same map; one rank writes the file. */
  if (rank == 0) check(wsp_netmap_save(map, path), "wsp_netmap_save");

  double latency, inv_bw;
  check(wsp_netmap_pair(map, 0, size - 1, &latency, &inv_bw), "wsp_netmap_pair");
  wsp_netmap_info_t info;
  check(wsp_netmap_info(map, &info), "wsp_netmap_info");
  if (size > 1 && !(latency > 0 && inv_bw > 0)) {
    fprintf(stderr, "netmap: rank %d: the pair (0, %d) has no figures\n", rank, size - 1);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  if (rank == 0) {
    printf("netmap: ok, %d ranks on %d node(s), probed in %.2f s, saved to %s\n", info.p,
           info.nodes, info.seconds, path);
    if (size > 1) /* both are 0 for a rank with itself */
      printf("netmap: ranks 0 and %d: latency %.1f us, bandwidth %.0f MB/s\n", size - 1,
             latency * 1e6, 1e-6 / inv_bw);
  }

  /* Collective: the communicator keeps what it needs, so the map can go. */
  check(wsp_comm_set_netmap(comm, map), "wsp_comm_set_netmap");
  check(wsp_netmap_free(&map), "wsp_netmap_free");
  check(wsp_comm_free(&comm), "wsp_comm_free");
  MPI_Finalize();
  return 0;
}
