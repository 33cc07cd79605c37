/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mpi_stream: how much of a network an all-to-all stream of point-to-point
 * messages gets through the MPI library, with no wirespeed code.
 *
 * Every rank keeps `window` messages of `bytes` each in flight, sent to its
 * peers in round robin (rank + 1, rank + 2, ... mod p), and keeps `recvs`
 * receives posted from each peer, reposting each as it completes. This is
 * the traffic of an all-pairs shuffle at its best: every pair busy in both
 * directions, no handler, no pacing, no request going the other way. So
 * what it reaches is the ceiling of what an engine on top of this MPI can
 * deliver on this network, to be compared with the shuffle's goodput and
 * with raw TCP (netlab calibrate --only a2a).
 *
 * Waiting: MPI_Testsome over all requests; when nothing completed, the rank
 * sleeps --sleep-us microseconds (default 50; 0 polls without sleeping),
 * as a polite engine does. The run lasts --seconds seconds; goodput is the
 * bytes each rank received from other hosts between second --skip and the
 * end, summed per host of --ppn consecutive ranks (netlab places ranks in
 * blocks). After
 * the time is up no new message is sent; a rank whose sends are done enters
 * MPI_Ibarrier and keeps receiving until everybody has; then every rank
 * learns from MPI_Alltoall how many messages each peer sent it, receives
 * the rest and cancels the receives left over.
 *
 * Build: mpicc -O2 -std=c11 -o mpi_stream bench/mpi_stream.c
 * Usage: mpi_stream [--bytes N] [--window W] [--recvs R] [--seconds S]
 *                   [--skip S] [--sleep-us U] [--ppn K] [--link-mbit M]
 *                   [--json FILE] [--label TEXT]
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int me, np;

static void usage(FILE *f) {
  fprintf(f,
          "usage: mpi_stream [--bytes N] [--window W] [--recvs R] [--seconds S]\n"
          "                  [--skip S] [--sleep-us U] [--ppn K] [--link-mbit M]\n"
          "                  [--json FILE] [--label TEXT]\n"
          "  --bytes N      bytes per message (default 102400)\n"
          "  --window W     messages in flight per rank (default 16)\n"
          "  --recvs R      receives kept posted per peer (default 2)\n"
          "  --seconds S    seconds of sending (default 30; --duration: its old name)\n"
          "  --skip S       seconds at the start left out of the goodput (default 3)\n"
          "  --sleep-us U   sleep when nothing completed (default 50; 0: poll)\n"
          "  --ppn K        ranks per host, placed in blocks (default 1)\n"
          "  --link-mbit M  also print goodput per host as a fraction of M Mbit/s\n"
          "  --json FILE    append one JSON line\n"
          "  --label TEXT   label of the JSON line (default mpi-stream)\n");
}

/* A non-negative integer option value (positive unless zero_ok); 0 on
 * error, after rank 0 named the option. */
static int parse_u64(const char *opt, const char *v, int zero_ok, unsigned long long *out) {
  char *end = NULL;
  errno = 0;
  unsigned long long x = v ? strtoull(v, &end, 10) : 0;
  if (v == NULL || *v == '\0' || *v == '-' || *end != '\0' || errno != 0 ||
      (x == 0 && !zero_ok)) {
    if (me == 0)
      fprintf(stderr, "mpi_stream: %s needs a %s integer, got '%s'\n", opt,
              zero_ok ? "non-negative" : "positive", v ? v : "(nothing)");
    return 0;
  }
  *out = x;
  return 1;
}

static void nap(long us) {
  struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
  nanosleep(&ts, NULL);
}

#define CHECK_MPI(call)                                                        \
  do {                                                                         \
    int rc_ = (call);                                                          \
    if (rc_ != MPI_SUCCESS) {                                                  \
      fprintf(stderr, "mpi_stream: rank %d: %s failed (%d)\n", me, #call, rc_); \
      MPI_Abort(MPI_COMM_WORLD, 1);                                            \
    }                                                                          \
  } while (0)

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &np);
  unsigned long long bytes = 102400, window = 16, recvs = 2, duration = 30, skip = 3,
                     sleep_us = 50, ppn = 1, link_mbit = 0;
  const char *json = NULL, *label = "mpi-stream";
  int ok = 1;
  for (int i = 1; i < argc && ok; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      if (me == 0) usage(stdout);
      MPI_Finalize();
      return 0;
    }
    if (!strcmp(a, "--bytes")) ok = parse_u64(a, v, 0, &bytes), i++;
    else if (!strcmp(a, "--window")) ok = parse_u64(a, v, 0, &window), i++;
    else if (!strcmp(a, "--recvs")) ok = parse_u64(a, v, 0, &recvs), i++;
    else if (!strcmp(a, "--seconds")) ok = parse_u64(a, v, 0, &duration), i++;
    else if (!strcmp(a, "--duration")) { /* the old name (docs/tools.md) */
      if (me == 0) fprintf(stderr, "warning: --duration is deprecated, use --seconds\n");
      ok = parse_u64(a, v, 0, &duration), i++;
    }
    else if (!strcmp(a, "--skip")) ok = parse_u64(a, v, 1, &skip), i++;
    else if (!strcmp(a, "--sleep-us")) ok = parse_u64(a, v, 1, &sleep_us), i++;
    else if (!strcmp(a, "--ppn")) ok = parse_u64(a, v, 0, &ppn), i++;
    else if (!strcmp(a, "--link-mbit")) ok = parse_u64(a, v, 0, &link_mbit), i++;
    else if (!strcmp(a, "--json") && v) json = v, i++;
    else if (!strcmp(a, "--label") && v) label = v, i++;
    else {
      if (me == 0) {
        fprintf(stderr, "mpi_stream: unknown or incomplete option '%s'\n", a);
        usage(stderr);
      }
      ok = 0;
    }
  }
  if (ok && (bytes > 1u << 30 || window > 4096 || recvs > 64 || sleep_us > 1000000)) {
    if (me == 0)
      fprintf(stderr, "mpi_stream: --bytes at most 1 GiB, --window 4096, --recvs 64, "
                      "--sleep-us 1000000\n");
    ok = 0;
  }
  if (ok && skip >= duration) {
    if (me == 0) fprintf(stderr, "mpi_stream: --skip must be below --seconds\n");
    ok = 0;
  }
  if (ok && label && strpbrk(label, "\"\\") != NULL) {
    if (me == 0) fprintf(stderr, "mpi_stream: --label must not contain quotes or backslashes\n");
    ok = 0;
  }
  if (ok && (np < 2 || ppn > (unsigned long long)np || np % (int)ppn != 0)) {
    if (me == 0)
      fprintf(stderr, "mpi_stream: needs 2 ranks or more, a multiple of --ppn (%llu); got %d\n",
              ppn, np);
    ok = 0;
  }
  if (!ok) {
    MPI_Finalize();
    return 2;
  }

  int peers = np - 1, nr = peers * (int)recvs, ns = (int)window;
  char *sbuf = malloc(bytes), *rbuf = malloc((size_t)nr * bytes);
  MPI_Request *req = malloc(sizeof(MPI_Request) * (size_t)(nr + ns));
  int *idx = malloc(sizeof(int) * (size_t)(nr + ns));
  int *sent = calloc((size_t)np, sizeof(int)), *got = calloc((size_t)np, sizeof(int));
  int *expect = calloc((size_t)np, sizeof(int));
  if (!sbuf || !rbuf || !req || !idx || !sent || !got || !expect) {
    fprintf(stderr, "mpi_stream: rank %d: out of memory\n", me);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  memset(sbuf, me & 0xff, bytes);
  /* Requests 0 .. nr-1: receives, recvs per peer (slot k is peer k / recvs
   * counted over the others); nr .. nr+ns-1: sends. */
  for (int k = 0; k < nr; k++) {
    int src = (me + 1 + k / (int)recvs) % np;
    CHECK_MPI(MPI_Irecv(rbuf + (size_t)k * bytes, (int)bytes, MPI_BYTE, src, 7, MPI_COMM_WORLD,
                        &req[k]));
  }
  int next = 1; /* distance of the next destination */
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime(), tskip = t0 + (double)skip, tend = t0 + (double)duration;
  for (int k = 0; k < ns; k++) {
    int dst = (me + next) % np;
    next = next % peers + 1;
    CHECK_MPI(MPI_Isend(sbuf, (int)bytes, MPI_BYTE, dst, 7, MPI_COMM_WORLD, &req[nr + k]));
    sent[dst]++;
  }
  double counted = 0; /* bytes received between tskip and tend */
  int sending = 1, barrier_done = 0;
  MPI_Request bar = MPI_REQUEST_NULL;
  for (;;) {
    int done = 0;
    CHECK_MPI(MPI_Testsome(nr + ns, req, &done, idx, MPI_STATUSES_IGNORE));
    double now = MPI_Wtime();
    if (sending && now >= tend) sending = 0;
    for (int i = 0; i < done; i++) {
      int k = idx[i];
      if (k < nr) {
        int src = (me + 1 + k / (int)recvs) % np;
        got[src]++;
        /* Goodput is what crosses the NIC: peers on this host do not count. */
        if (now >= tskip && now < tend && src / (int)ppn != me / (int)ppn)
          counted += (double)bytes;
        /* Reposted also while stopping: a peer's last sends may need it
         * (rendezvous); whatever is left over is cancelled below. */
        CHECK_MPI(MPI_Irecv(rbuf + (size_t)k * bytes, (int)bytes, MPI_BYTE, src, 7,
                            MPI_COMM_WORLD, &req[k]));
      } else if (sending) {
        int dst = (me + next) % np;
        next = next % peers + 1;
        CHECK_MPI(MPI_Isend(sbuf, (int)bytes, MPI_BYTE, dst, 7, MPI_COMM_WORLD, &req[k]));
        sent[dst]++;
      }
    }
    if (!sending) {
      /* Once this rank's sends are done it says so with MPI_Ibarrier, and
       * goes on reposting receives until every rank has said so: a peer's
       * last sends may need those receives to complete (rendezvous), so
       * leaving early could leave that peer waiting for ever. */
      if (bar == MPI_REQUEST_NULL && !barrier_done) {
        int pending = 0;
        for (int k = nr; k < nr + ns; k++) pending |= req[k] != MPI_REQUEST_NULL;
        if (!pending) CHECK_MPI(MPI_Ibarrier(MPI_COMM_WORLD, &bar));
      }
      if (bar != MPI_REQUEST_NULL) CHECK_MPI(MPI_Test(&bar, &barrier_done, MPI_STATUS_IGNORE));
      if (barrier_done) break;
    }
    if (done == 0 && sleep_us) nap((long)sleep_us);
  }
  /* Every receive is posted again; the counts say which to wait for. */
  CHECK_MPI(MPI_Alltoall(sent, 1, MPI_INT, expect, 1, MPI_INT, MPI_COMM_WORLD));
  for (int s = 0; s < np; s++) {
    if (s == me) continue;
    int first = ((s - me - 1 + np) % np) * (int)recvs, which;
    /* A peer's messages match its receives in the order they were posted,
     * so wait for whichever completes. */
    while (got[s] < expect[s]) {
      CHECK_MPI(MPI_Waitany((int)recvs, &req[first], &which, MPI_STATUS_IGNORE));
      got[s]++;
      int k = first + which;
      CHECK_MPI(MPI_Irecv(rbuf + (size_t)k * bytes, (int)bytes, MPI_BYTE, s, 7, MPI_COMM_WORLD,
                          &req[k]));
    }
    for (int k = first; k < first + (int)recvs; k++) {
      CHECK_MPI(MPI_Cancel(&req[k]));
      CHECK_MPI(MPI_Wait(&req[k], MPI_STATUS_IGNORE));
    }
  }
  int bad = 0;
  for (int s = 0; s < np; s++) bad |= s != me && got[s] != expect[s];
  double window_s = (double)(duration - skip);
  double rate = counted / window_s; /* bytes/s of this rank */
  /* Per host: sum over the ranks of a block. */
  MPI_Comm host;
  CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, me / (int)ppn, me, &host));
  double hrate = 0;
  CHECK_MPI(MPI_Reduce(&rate, &hrate, 1, MPI_DOUBLE, MPI_SUM, 0, host));
  int hrank;
  MPI_Comm_rank(host, &hrank);
  MPI_Comm_free(&host);
  double in[2] = {hrank == 0 ? hrate : 0, hrank == 0 ? -hrate : -1e300}, sum[2];
  CHECK_MPI(MPI_Reduce(&in[0], &sum[0], 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD));
  CHECK_MPI(MPI_Reduce(&in[1], &sum[1], 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD));
  int anybad = 0;
  CHECK_MPI(MPI_Reduce(&bad, &anybad, 1, MPI_INT, MPI_LOR, 0, MPI_COMM_WORLD));
  if (me == 0) {
    int hosts = np / (int)ppn;
    double mean = sum[0] / hosts, min = -sum[1];
    double link = (double)link_mbit * 1e6 / 8;
    printf("mpi_stream: p %d, %d hosts, %llu B messages, window %llu, %llu receives per peer, "
           "%llu s (first %llu left out), sleep %llu us\n",
           np, hosts, bytes, window, recvs, duration, skip, sleep_us);
    printf("goodput per host: mean %.0f B/s, slowest %.0f B/s", mean, min);
    if (link > 0) printf(" = %.3f / %.3f of %llu Mbit/s", mean / link, min / link, link_mbit);
    printf("\n");
    if (anybad) printf("mpi_stream: message counts did not match\n");
    if (json) {
      FILE *f = fopen(json, "a");
      if (!f) {
        fprintf(stderr, "mpi_stream: cannot open %s: %s\n", json, strerror(errno));
      } else {
        fprintf(f,
                "{\"bench\": \"mpi_stream\", \"label\": \"%s\", \"p\": %d, \"ppn\": %llu, "
                "\"bytes\": %llu, \"window\": %llu, \"recvs\": %llu, \"duration_s\": %llu, "
                "\"skip_s\": %llu, \"sleep_us\": %llu, \"mean_Bps_host\": %.1f, "
                "\"min_Bps_host\": %.1f, \"link_mbit\": %llu}\n",
                label, np, ppn, bytes, window, recvs, duration, skip, sleep_us, mean, min,
                link_mbit);
        fclose(f);
      }
    }
  }
  free(sbuf), free(rbuf), free(req), free(idx), free(sent), free(got), free(expect);
  MPI_Finalize();
  return anybad ? 1 : 0;
}
