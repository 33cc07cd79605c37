/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Bad arguments: the rank that passes one gets WSP_ERR_ARG with a message
 * naming the argument, every other rank gets WSP_ERR_REMOTE, nobody hangs,
 * nobody receives a partial round, and the next good round works. Also
 * covers wsp_comm_create with a bad or mismatched configuration.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wirespeed.h"
#include "mpi_check.h"


enum { BAD_OUT, BAD_SENDS_NULL, BAD_PEER_HIGH, BAD_PEER_NEG, BAD_DATA_NULL,
       BAD_ABSURD, BAD_DUP, BAD_TOO_MANY, NBAD };
static const char *const expect_text[NBAD] = {
    "out is NULL", "sends is NULL", ".peer = ", ".peer = -1", ".data is NULL",
    "absurd", "appears twice", "exceeds the communicator size"};

/* A good round: everyone sends its rank to its right neighbour. */
static void good_round(wsp_comm_t *c, wsp_sparse_alg_t alg) {
  int v = rank;
  wsp_send_t s = {.peer = (rank + 1) % size, .data = &v, .bytes = sizeof v};
  wsp_recvset_t out;
  int rc = wsp_sparse_exchange_alg(c, alg, &s, 1, &out);
  CHECK(rc == WSP_OK, "good round after a bad one failed: %s", wsp_last_error());
  if (rc == WSP_OK) {
    CHECK(out.count == 1 && out.msgs[0].source == (rank + size - 1) % size &&
              *(int *)out.msgs[0].data == (rank + size - 1) % size,
          "good round delivered the wrong thing");
    wsp_recvset_free(&out);
  }
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int culprit = size - 1;

  wsp_comm_t *c = NULL;
  CHECK(wsp_comm_create(MPI_COMM_WORLD, NULL, &c) == WSP_OK, "create: %s",
        wsp_last_error());

  const wsp_sparse_alg_t algs[] = {WSP_SPARSE_NBX, WSP_SPARSE_PEX,
                                   WSP_SPARSE_ALLTOALLV, WSP_SPARSE_AUTO};
  int v[4] = {1, 2, 3, 4};
  for (int a = 0; a < 4; a++) {
    for (int bad = 0; bad < NBAD; bad++) {
      /* Everybody sends one good message to rank 0, so that the round has
       * traffic in flight when it is abandoned. */
      wsp_send_t s[3] = {{.peer = 0, .data = v, .bytes = sizeof v}};
      size_t n = 1;
      wsp_recvset_t out, *outp = &out;
      const wsp_send_t *sp = s;
      if (rank == culprit) {
        switch (bad) {
          case BAD_OUT: outp = NULL; break;
          case BAD_SENDS_NULL: sp = NULL; break;
          case BAD_PEER_HIGH: s[0].peer = size; break;
          case BAD_PEER_NEG: s[0].peer = -1; break;
          case BAD_DATA_NULL: s[0].data = NULL; break;
          case BAD_ABSURD: s[0].bytes = (size_t)-5; break;
          case BAD_DUP:
            s[1] = s[0];
            n = 2;
            break;
          case BAD_TOO_MANY: n = (size_t)size + 1; break;
        }
      }
      int rc = wsp_sparse_exchange_alg(c, algs[a], sp, n, outp);
      if (rank == culprit) {
        CHECK(rc == WSP_ERR_ARG, "alg %d bad %d: got %s", a, bad, wsp_err_name(rc));
        /* With one rank a duplicate is also one message too many. */
        const char *want = bad == BAD_DUP && size == 1
                               ? expect_text[BAD_TOO_MANY] : expect_text[bad];
        CHECK(strstr(wsp_last_error(), want) != NULL,
              "alg %d bad %d: message \"%s\" does not name \"%s\"", a, bad,
              wsp_last_error(), want);
      } else {
        CHECK(rc == WSP_ERR_REMOTE, "alg %d bad %d: got %s, expected REMOTE",
              a, bad, wsp_err_name(rc));
      }
      if (outp) CHECK(out.count == 0 && out.msgs == NULL, "partial result");
      good_round(c, algs[a]);
    }
  }

  /* Errors every rank makes alike return at once without communication. */
  wsp_recvset_t out;
  CHECK(wsp_sparse_exchange(NULL, NULL, 0, &out) == WSP_ERR_ARG, "NULL comm");
  CHECK(strstr(wsp_last_error(), "comm is NULL") != NULL, "names comm");
  CHECK(wsp_sparse_exchange_alg(c, (wsp_sparse_alg_t)99, NULL, 0, &out) ==
            WSP_ERR_ARG, "bad alg");
  CHECK(strstr(wsp_last_error(), "alg = 99") != NULL, "names alg");
  wsp_sparse_alg_t alg;
  CHECK(wsp_sparse_alg_from_name("fastest", &alg) == WSP_ERR_ARG, "bad name");
  CHECK(strstr(wsp_last_error(), "nbx") != NULL, "lists the valid names");
  good_round(c, WSP_SPARSE_AUTO);

  /* A bad configuration on one rank fails creation on every rank. */
  wsp_config_t cfg;
  wsp_config_init(&cfg);
  if (rank == culprit) cfg.sparse_auto_interval = 0;
  wsp_comm_t *c2 = NULL;
  int rc = wsp_comm_create(MPI_COMM_WORLD, &cfg, &c2);
  CHECK(rc == (rank == culprit ? WSP_ERR_ARG : WSP_ERR_REMOTE),
        "bad cfg: got %s", wsp_err_name(rc));
  CHECK(c2 == NULL, "comm returned on failure");
  if (rank == culprit)
    CHECK(strstr(wsp_last_error(), "sparse_auto_interval") != NULL, "names field");
  /* Different (valid) configurations on different ranks are refused. */
  wsp_config_init(&cfg);
  if (rank == culprit && size > 1) cfg.sparse_alg = WSP_SPARSE_PEX;
  rc = wsp_comm_create(MPI_COMM_WORLD, &cfg, &c2);
  CHECK(size == 1 ? rc == WSP_OK : rc == WSP_ERR_CONFIG,
        "mismatched cfg: got %s", wsp_err_name(rc));
  wsp_comm_free(&c2);
  CHECK(wsp_comm_create(MPI_COMM_WORLD, NULL, NULL) == WSP_ERR_ARG, "NULL out");
  CHECK(wsp_comm_create(MPI_COMM_NULL, NULL, &c2) == WSP_ERR_ARG, "COMM_NULL");

  good_round(c, WSP_SPARSE_NBX);
  wsp_comm_free(&c);
  CHECK(c == NULL, "free resets");

  long total = 0;
  MPI_Allreduce(&failures, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0)
    printf("test_sparse_args: p=%d: %ld failures\n", size, total);
  MPI_Finalize();
  return total ? 1 : 0;
}
