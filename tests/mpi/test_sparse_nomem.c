/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Running out of memory in a sparse round. On one rank, the n-th allocation
 * the exchange makes in the round fails (wsp__fail_alloc_in), for n = 1, 2,
 * ... until the round no longer makes that many. Whatever fails:
 *   - nobody hangs (the test's timeout);
 *   - the rank whose allocation failed returns WSP_ERR_NOMEM;
 *   - every other rank returns WSP_ERR_REMOTE with nothing delivered, or
 *     WSP_OK with exactly the messages sent to it (a failure on the
 *     receiving side that the others cannot learn of any more);
 *   - a failure before the round's first collective step (n = 1 is the
 *     argument check's bitmap) reaches every rank;
 *   - the next round works on every rank (nothing of the failed round is
 *     left in flight to be taken for the next one's messages).
 * Messages of several sizes, some above the MPI's eager limit; run with a
 * low WSP_BIG_MESSAGE, alltoallv also sends tails.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/exchange/sparse_internal.h"
#include "mpi_check.h"


/* Rank r sends to r+1, r+2 and r+4 (those that are not itself, once each),
 * message k of r being 8, 3000 and 200000 bytes, byte i = f(r, dst, i). */
enum { NPEERS = 3 };
static const int offsets[NPEERS] = {1, 2, 4};
static const size_t sizes[NPEERS] = {8, 3000, 200000};

static unsigned char byte_of(int src, int dst, size_t i) {
  return (unsigned char)(src * 31 + dst * 7 + i % 251);
}

static size_t make_sends(wsp_send_t *s, unsigned char **bufs) {
  size_t n = 0;
  for (int k = 0; k < NPEERS; k++) {
    int dst = (rank + offsets[k]) % size, dup = dst == rank;
    for (size_t j = 0; j < n; j++) dup |= s[j].peer == dst;
    if (dup) continue;
    for (size_t i = 0; i < sizes[k]; i++) bufs[k][i] = byte_of(rank, dst, i);
    s[n++] = (wsp_send_t){.peer = dst, .data = bufs[k], .bytes = sizes[k]};
  }
  return n;
}

/* Whether `got` holds exactly what the other ranks sent this one. */
static int delivered_right(const wsp_recvset_t *got) {
  size_t want = 0;
  for (int src = 0; src < size; src++) {
    if (src == rank) continue;
    int sent = 0;
    for (int k = 0; k < NPEERS && !sent; k++) {
      int dst = (src + offsets[k]) % size, first = 1;
      for (int j = 0; j < k; j++) first &= (src + offsets[j]) % size != dst;
      if (dst != rank || !first) continue;
      sent = 1;
      want++;
      const wsp_recv_t *m = NULL;
      for (size_t i = 0; i < got->count; i++)
        if (got->msgs[i].source == src) m = &got->msgs[i];
      if (m == NULL || m->bytes != sizes[k]) return 0;
      for (size_t i = 0; i < sizes[k]; i++)
        if (((unsigned char *)m->data)[i] != byte_of(src, rank, i)) return 0;
    }
  }
  return got->count == want;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int culprit = size - 1;
  wsp_comm_t *c = NULL;
  if (wsp_comm_create(MPI_COMM_WORLD, NULL, &c) != WSP_OK) {
    fprintf(stderr, "create: %s\n", wsp_last_error());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  unsigned char *bufs[NPEERS];
  for (int k = 0; k < NPEERS; k++) bufs[k] = malloc(sizes[k]);
  wsp_send_t sends[NPEERS];
  size_t nsends = make_sends(sends, bufs);

  const wsp_sparse_alg_t algs[] = {WSP_SPARSE_NBX, WSP_SPARSE_PEX, WSP_SPARSE_ALLTOALLV};
  for (size_t a = 0; a < sizeof algs / sizeof *algs; a++) {
    const char *name = wsp_sparse_alg_info(algs[a])->name;
    int rounds = 0;
    for (unsigned long n = 1; n <= 1000; n++) {
      unsigned long before = 0;
      if (rank == culprit) before = wsp__fail_alloc_in(n);
      wsp_recvset_t got;
      int rc = wsp_sparse_exchange_alg(c, algs[a], sends, nsends, &got);
      int injected = 0;
      if (rank == culprit) injected = wsp__fail_alloc_in(0) > before;
      MPI_Bcast(&injected, 1, MPI_INT, culprit, MPI_COMM_WORLD);
      if (!injected) {
        CHECK(rc == WSP_OK && delivered_right(&got), "%s, no failure: %s", name,
              wsp_err_name(rc));
      } else if (rank == culprit) {
        CHECK(rc == WSP_ERR_NOMEM, "%s, allocation %lu failed here: %s (%s)", name, n,
              wsp_err_name(rc), wsp_last_error());
      } else {
        CHECK(rc == WSP_ERR_REMOTE || (rc == WSP_OK && delivered_right(&got)),
              "%s, allocation %lu failed on rank %d: %s, %zu messages", name, n, culprit,
              wsp_err_name(rc), rc == WSP_OK ? got.count : (size_t)0);
        if (rc != WSP_OK)
          CHECK(got.count == 0 && got.msgs == NULL, "%s: a failed round delivered", name);
        if (n == 1)
          CHECK(rc == WSP_ERR_REMOTE, "%s: the first allocation failed on rank %d, yet %s",
                name, culprit, wsp_err_name(rc));
      }
      if (rc == WSP_OK) wsp_recvset_free(&got);
      /* The next round is whole on every rank. */
      rc = wsp_sparse_exchange_alg(c, algs[a], sends, nsends, &got);
      CHECK(rc == WSP_OK && delivered_right(&got), "%s: the round after allocation %lu: %s",
            name, n, wsp_err_name(rc));
      if (rc == WSP_OK) wsp_recvset_free(&got);
      rounds++;
      if (!injected) break;
    }
    CHECK(rounds >= 2 && rounds < 1000, "%s: %d rounds", name, rounds);
    if (rank == 0) printf("%s: failed each of the first %d allocations\n", name, rounds - 1);
  }
  for (int k = 0; k < NPEERS; k++) free(bufs[k]);
  wsp_comm_free(&c);
  long all = 0;
  MPI_Allreduce(&failures, &all, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf("test_sparse_nomem: np %d, %ld failures\n", size, all);
  MPI_Finalize();
  return all ? 1 : 0;
}
