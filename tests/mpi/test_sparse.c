/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Sparse exchange against an independent reference: every rank computes,
 * from the seeded pattern, exactly which messages it must receive (source,
 * size, content) and checks what the library delivered. Runs every algorithm
 * over densities {0, 1/p, 10%, 50%, 100%}, empty / odd / tiny / past-eager
 * sizes, with and without self messages; then many back-to-back rounds with
 * random per-rank delays, alternating algorithms so that rounds of different
 * kinds follow each other.
 *
 * usage: test_sparse [--rounds N] [--max-bytes B] [--max-density D] [--lanes]
 * (--max-density trims the matrix for large simulated runs; --lanes: the
 * test also fails unless bytes went over the lanes of the collectives'
 * transport, which the large messages to other nodes take when
 * WSP_TRANSPORT and WSP_NODES make them, with no pair failed)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pattern.h"
#include "wirespeed.h"
#include "mpi_check.h"
#include "lanes_check.h"

static const char *alg_name(wsp_sparse_alg_t a) {
  return wsp_sparse_alg_info(a)->name;
}

/* One round of pattern `pt` with algorithm `alg`, checked. */
static void run_round(wsp_comm_t *comm, wsp_sparse_alg_t alg,
                      const wsp_pattern_t *pt) {
  int *dests = malloc((size_t)size * sizeof *dests);
  size_t *bytes = malloc((size_t)size * sizeof *bytes);
  wsp_send_t *sends = malloc((size_t)size * sizeof *sends);
  int n = wsp_pattern_sends(pt, rank, dests, bytes);
  for (int i = 0; i < n; i++) {
    void *buf = bytes[i] ? malloc(bytes[i]) : NULL;
    wsp_pattern_fill(pt, rank, dests[i], buf, bytes[i]);
    sends[i] = (wsp_send_t){.peer = dests[i], .data = buf, .bytes = bytes[i]};
  }
  wsp_recvset_t out;
  int rc = wsp_sparse_exchange_alg(comm, alg, sends, (size_t)n, &out);
  CHECK(rc == WSP_OK, "%s: exchange failed: %s: %s", alg_name(alg),
        wsp_err_name(rc), wsp_last_error());
  if (rc == WSP_OK) {
    CHECK(alg == WSP_SPARSE_AUTO || out.alg == alg, "alg reported %d", out.alg);
    /* Expected messages, in source order. */
    size_t got = 0;
    for (int s = 0; s < size; s++) {
      int m = wsp_pattern_sends(pt, s, dests, bytes);
      for (int i = 0; i < m; i++) {
        if (dests[i] != rank) continue;
        if (got >= out.count) {
          CHECK(0, "%s round %llu density %.3f: missing message from %d",
                alg_name(alg), (unsigned long long)pt->round, pt->density, s);
          continue;
        }
        const wsp_recv_t *r = &out.msgs[got++];
        CHECK(r->source == s, "%s: message %zu from %d, expected from %d",
              alg_name(alg), got - 1, r->source, s);
        CHECK(r->bytes == bytes[i], "%s: message from %d has %zu bytes, "
              "expected %zu", alg_name(alg), s, r->bytes, bytes[i]);
        if (r->source == s && r->bytes == bytes[i])
          CHECK(wsp_pattern_check(pt, s, rank, r->data, r->bytes),
                "%s: wrong content from %d (%zu bytes)", alg_name(alg), s,
                r->bytes);
        CHECK(r->bytes != 0 || r->data == NULL, "zero-length with data");
      }
    }
    CHECK(got == out.count, "%s: %zu unexpected extra messages",
          alg_name(alg), out.count - got);
    wsp_recvset_free(&out);
    CHECK(out.msgs == NULL && out.count == 0, "recvset_free did not reset");
  }
  for (int i = 0; i < n; i++) free((void *)sends[i].data);
  free(sends);
  free(dests);
  free(bytes);
}

int main(int argc, char **argv) {
  long rounds = 1000;
  size_t maxbig = (size_t)1 << 20;
  double maxdens = 1.0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int lanes = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--lanes"))
      lanes = 1;
    else if (i + 1 >= argc)
      break;
    else if (!strcmp(argv[i], "--rounds"))
      rounds = atol(argv[++i]);
    else if (!strcmp(argv[i], "--max-bytes"))
      maxbig = (size_t)atol(argv[++i]);
    else if (!strcmp(argv[i], "--max-density"))
      maxdens = atof(argv[++i]);
  }

  wsp_comm_t *comm = NULL;
  int rc = wsp_comm_create(MPI_COMM_WORLD, NULL, &comm);
  if (rc != WSP_OK) {
    fprintf(stderr, "wsp_comm_create: %s\n", wsp_last_error());
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  wsp_config_t cfg;
  wsp_comm_config(comm, &cfg);

  const double dens[] = {0.0, -1.0, 0.1, 0.5, 1.0};
  const size_t lo[] = {0, 0, 1, 1000, maxbig};
  const size_t hi[] = {0, 33, 1, 1000, maxbig + 13};
  const wsp_sparse_alg_t algs[] = {WSP_SPARSE_NBX, WSP_SPARSE_PEX,
                                   WSP_SPARSE_ALLTOALLV, WSP_SPARSE_AUTO};
  uint64_t round = 0;
  long cases = 0;
  for (int a = 0; a < 4; a++)
    for (int d = 0; d < 5; d++)
      for (int z = 0; z < 5; z++)
        for (int self = 0; self < 2; self++) {
          double dd = d == 1 && size > 1 ? 1.0 / (size - 1)
                                         : (dens[d] < 0 ? 0 : dens[d]);
          if (dd > maxdens) continue;
          wsp_pattern_t pt = {.seed = 42, .round = round++, .p = size,
                              .density = dd,
                              .min_bytes = lo[z], .max_bytes = hi[z],
                              .with_self = self};
          run_round(comm, algs[a], &pt);
          cases++;
        }

  /* Back-to-back rounds, random delays, algorithms changing every round
   * (nbx, pex, alltoallv, auto, ...) and densities/sizes varying. */
  uint64_t st = 1234 + (uint64_t)rank;
  for (long r = 0; r < rounds; r++) {
    uint64_t shared = 777 + (uint64_t)r; /* same on every rank */
    uint64_t h = wsp_splitmix64(&shared);
    wsp_pattern_t pt = {.seed = 9, .round = round++, .p = size,
                        .density = (double)(h % 5) / 8.0 * maxdens,
                        .min_bytes = 0, .max_bytes = (h >> 8) % 3 ? 64 : 3000,
                        .with_self = (int)((h >> 16) & 1)};
    if (wsp_splitmix64(&st) % 4 == 0) {
      struct timespec ts = {0, (long)(wsp_splitmix64(&st) % 300) * 1000L};
      nanosleep(&ts, NULL);
    }
    run_round(comm, algs[r % 4], &pt);
    cases++;
  }

  if (lanes) {
    /* Every message was checked above; this checks that the large ones to
     * other nodes did go over the lanes (more than auto's probe moves on
     * them: one message of cfg.p2p_min each way), and that no pair
     * failed. */
    int failed = 0;
    uint64_t moved = lanes_moved(comm, &failed);
    CHECK(comm->xport && moved >= maxbig && !failed, "--lanes: %s",
          comm->xport == NULL ? "the sparse exchange's messages never took the lanes"
          : failed            ? "a pair's lanes failed"
                              : "less than one large message went over the lanes");
  }

  long total = 0;
  MPI_Allreduce(&failures, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0)
    printf("test_sparse: p=%d big_message=%zu: %ld cases, %ld failures\n", size,
           cfg.big_message, cases, total);
  wsp_comm_free(&comm);
  MPI_Finalize();
  return total ? 1 : 0;
}
