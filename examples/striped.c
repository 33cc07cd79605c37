/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One large message from rank 0 to rank 1 with wsp_striped_send and
 * wsp_striped_recv (docs/p2p.md): the library may cut it into chunks over
 * several TCP connections ("lanes") it opens itself, or leave it to MPI
 * where lanes do not pay. Rank 1 checks every byte, then prints
 * "striped: ok, N bytes ..." and what wsp_striped_info says about the pair:
 * how many lanes carried it, or that it went through MPI. Other ranks only
 * take part in creating and freeing the communicator.
 *
 * Build:  mpicc striped.c $(pkg-config --cflags --libs wirespeed) -o striped
 * Run:    mpirun -np 2 ./striped [SIZE]        (SIZE as "64M"; default 32M)
 * Ranks on one machine talk over loopback, where one TCP connection is as
 * fast as several: auto's probe usually finds that lanes do not pay, and the
 * message goes through MPI. To see lanes on loopback, force their number
 * (making each rank a node of its own matters too once collectives use the
 * lanes, WSP_TRANSPORT; docs/env.md):
 *         WSP_NODES=cyclic:2 WSP_P2P_LANES=4 mpirun -np 2 ./striped
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <wirespeed.h>

static void check(int rc, const char *what) {
  if (rc != WSP_OK) {
    fprintf(stderr, "%s: %s: %s\n", what, wsp_err_name(rc), wsp_last_error());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
}

/* Byte i of the message: a pattern that differs from one chunk to the next
 * (251 is prime), so a chunk put at the wrong offset shows. */
static unsigned char byte_at(size_t i) { return (unsigned char)(i % 251 + i / 65536); }

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  size_t bytes = (size_t)32 << 20;
  if (argc > 1) check(wsp_parse_size(argv[1], &bytes), "SIZE"); /* "64M", "1G", ... */
  wsp_comm_t *comm;
  check(wsp_comm_create(MPI_COMM_WORLD, NULL, &comm), "wsp_comm_create");
  int rank, size;
  check(wsp_comm_rank(comm, &rank), "wsp_comm_rank");
  check(wsp_comm_size(comm, &size), "wsp_comm_size");
  if (size < 2) {
    fprintf(stderr, "striped: needs 2 ranks or more\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }

  unsigned char *buf = NULL;
  if (rank <= 1) {
    buf = malloc(bytes > 0 ? bytes : 1);
    if (buf == NULL) {
      fprintf(stderr, "rank %d: out of memory for %zu bytes\n", rank, bytes);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (size_t i = 0; i < bytes; i++) buf[i] = rank == 0 ? byte_at(i) : 0;
  }
  MPI_Barrier(MPI_COMM_WORLD); /* both ends ready: time the transfer alone */
  const int tag = 7;
  double t = MPI_Wtime();
  if (rank == 0) {
    /* Returns once rank 1 holds every byte. The pair's first message of at
     * least WSP_P2P_MIN bytes sets it up (and, in auto, probes it). */
    check(wsp_striped_send(comm, buf, bytes, 1, tag), "wsp_striped_send");
  } else if (rank == 1) {
    check(wsp_striped_recv(comm, buf, bytes, 0, tag), "wsp_striped_recv"); /* same size */
    t = MPI_Wtime() - t;
    for (size_t i = 0; i < bytes; i++)
      if (buf[i] != byte_at(i)) {
        fprintf(stderr, "striped: byte %zu is %u, expected %u\n", i, buf[i], byte_at(i));
        MPI_Abort(MPI_COMM_WORLD, 1);
      }
    /* What this rank knows of the pair (local; no communication). */
    wsp_striped_info_t info;
    check(wsp_striped_info(comm, 0, &info), "wsp_striped_info");
    /* Which path it took follows the pair's state: a message of at least
     * the threshold the probe (or WSP_P2P_LANES) set goes on the lanes. The
     * byte counters alone do not tell, as they include the probe's stream. */
    int lanes =
        info.state == WSP_STRIPED_READY && info.threshold != SIZE_MAX && bytes >= info.threshold;
    printf("striped: ok, %zu bytes from rank 0 in %.3f s (set-up included), %s", bytes, t,
           lanes ? "over the lanes" : "through MPI");
    if (lanes) printf(", %d of them", info.lanes);
    if (info.rate_one > 0)
      printf(" (probe: one lane %.0f MB/s, %d lanes %.0f MB/s)", info.rate_one / 1e6,
             info.lanes_open, info.rate_lanes / 1e6);
    else if (lanes)
      printf(" (forced by WSP_P2P_LANES: no probe)");
    printf("\n");
  }
  free(buf);
  check(wsp_comm_free(&comm), "wsp_comm_free"); /* collective */
  MPI_Finalize();
  return 0;
}
