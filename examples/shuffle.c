/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The all-pairs shuffle (docs/shuffle.md): every rank asks every other rank
 * for a few keys. The engine batches the requests, paces them and calls the
 * owner's request handler, which answers with a value computed from the key
 * and its own rank; the asker's response handler checks that value. After
 * the collective wsp_shuffle_close, every request of every rank has been
 * answered and handled, and rank 0 prints "shuffle: ok, N responses".
 *
 * Build:  mpicc shuffle.c $(pkg-config --cflags --libs wirespeed) -o shuffle
 * Run:    mpirun -np 3 ./shuffle
 * Settings such as WSP_SHUFFLE_BATCH or WSP_SHUFFLE_MEMORY come from the
 * environment (docs/env.md), as the NULL configuration below asks.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <wirespeed.h>

#define KEYS 8 /* keys each rank asks each other rank for */

static void check(int rc, const char *what) {
  if (rc != WSP_OK) {
    fprintf(stderr, "%s: %s: %s\n", what, wsp_err_name(rc), wsp_last_error());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
}

/* What the owner of a key answers: anything both sides can compute. */
static uint64_t value_of(uint64_t key, int owner) { return key * 1000003u + (uint64_t)owner; }

typedef struct state {
  int rank;
  uint64_t responses; /* checked responses received by this rank */
} state_t;

/* On the owner: one request (an 8-byte key) from `source`. A request
 * handler may only reply; a non-zero return fails the shuffle. */
static int on_request(void *user, int source, const void *req, size_t req_bytes,
                      wsp_shuffle_reply_t *reply) {
  const state_t *st = user;
  uint64_t key, value;
  if (req_bytes != sizeof key) return 1;
  memcpy(&key, req, sizeof key);               /* requests carry no alignment promise */
  if (key >> 32 != (uint64_t)source) return 1; /* the asker's rank is in the key */
  value = value_of(key, st->rank);
  return wsp_shuffle_reply(reply, &value, sizeof value) == WSP_OK ? 0 : 1;
}

/* On the asker: the request it posted to `dest`, with dest's answer. */
static int on_response(void *user, int dest, const void *req, size_t req_bytes, const void *resp,
                       size_t resp_bytes) {
  state_t *st = user;
  uint64_t key, value;
  if (req_bytes != sizeof key || resp_bytes != sizeof value) return 1;
  memcpy(&key, req, sizeof key);
  memcpy(&value, resp, sizeof value);
  if (value != value_of(key, dest)) {
    fprintf(stderr, "shuffle: rank %d: key %llu from rank %d: wrong value\n", st->rank,
            (unsigned long long)key, dest);
    return 1; /* close then returns WSP_ERR_HANDLER here, WSP_ERR_REMOTE elsewhere */
  }
  st->responses++;
  return 0;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  wsp_comm_t *comm;
  check(wsp_comm_create(MPI_COMM_WORLD, NULL, &comm), "wsp_comm_create");
  state_t st = {.responses = 0};
  int size;
  check(wsp_comm_rank(comm, &st.rank), "wsp_comm_rank");
  check(wsp_comm_size(comm, &size), "wsp_comm_size");

  /* The handlers' state must be ready before open: with a progress thread
   * (WSP_SHUFFLE_PROGRESS_THREAD=1) they may run before open returns. */
  wsp_shuffle_handlers_t handlers = {on_request, on_response};
  wsp_shuffle_t *sh;
  check(wsp_shuffle_open(comm, NULL, &handlers, &st, &sh), "wsp_shuffle_open");
  for (int dest = 0; dest < size; dest++) {
    if (dest == st.rank) continue;
    for (uint64_t j = 0; j < KEYS; j++) {
      uint64_t key = ((uint64_t)st.rank << 32) | ((uint64_t)dest << 8) | j;
      check(wsp_shuffle_post(sh, dest, &key, sizeof key), "wsp_shuffle_post"); /* copied */
    }
  }
  wsp_shuffle_stats_t stats;
  check(wsp_shuffle_close(sh, &stats), "wsp_shuffle_close"); /* collective */
  check(wsp_shuffle_free(&sh), "wsp_shuffle_free");

  /* Every request was answered once: this rank's own count, and the sum over
   * all ranks that close gathered. */
  uint64_t want = (uint64_t)(size - 1) * KEYS;
  if (st.responses != want || stats.global_requests_served != want * (uint64_t)size) {
    fprintf(stderr, "shuffle: rank %d: %llu responses (expected %llu), %llu served in all\n",
            st.rank, (unsigned long long)st.responses, (unsigned long long)want,
            (unsigned long long)stats.global_requests_served);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  if (st.rank == 0)
    printf("shuffle: ok, %llu responses on %d ranks, peak memory %zu bytes\n",
           (unsigned long long)stats.global_requests_served, size, stats.mem_peak);
  check(wsp_comm_free(&comm), "wsp_comm_free");
  MPI_Finalize();
  return 0;
}
