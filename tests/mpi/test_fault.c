/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A rank dies or stops in the middle of an operation; the others must
 * return an error within WSP_TIMEOUT plus a margin, and a later call must
 * fail at once (docs/faults.md).
 *
 *   test_fault --op allreduce|alltoall|sparse|shuffle|striped|bcast|sites|wan|
 *                   create|probe|refresh|setmap
 *              --fault kill|stop|none [--victim R] [--margin S] [--requests N]
 *              [--fail-isend N] [--pieces] [--agree WHAT]
 *
 * --fault none runs the operation once, checked, with nobody failing: for
 * faults injected from outside (a link dropped by netlab, tests/lab). Each
 * rank prints "START rank R op OP" before it and "RUN rank R ..." after it,
 * each flushed at once.
 * --requests: the shuffle's requests per pair of ranks (default 200);
 * --resp: the size of its responses (default 512 bytes), every byte checked;
 * --pieces: they must have travelled in pieces. A response chunk longer
 * than the shuffle's piece size goes as an announcement and pieces
 * (src/exchange/shuffle_serve.c); the piece size is the configuration's,
 * else a network map's eager limit, else 16 KiB. With neither set, as in
 * mpi.shuffle.defaults.*, a chunk holds at least one whole response, so
 * responses above 16 KiB put every chunk sent to another rank in pieces.
 *
 * bcast: a broadcast of 4 MiB from rank 0 by the pipelined chain, whose
 * first hop is the victim. --fail-isend N makes rank 0's N-th MPI_Isend of
 * the faulting call fail (tests/mpi/inject.h): the chain then abandons the
 * segments it already sent to the stopped victim, and that clean-up must
 * obey the limit too; the communicator is unusable afterwards, as after a
 * timeout, since those sends were let go.
 * sites: a broadcast by "far_first" with WSP_SITES set, the first call that
 * needs the site communicator: it is made inside the faulting call. The
 * run with every rank alive uses "binomial", which does not make it.
 * wan: the lanes' communicator of the multi-site collectives
 * (wsp__sites_wan_with, 2 lanes), made in the faulting call; the run with
 * every rank alive is a small allreduce.
 *
 * create: wsp_comm_create on MPI_COMM_WORLD (the new communicator freed);
 * probe: wsp_netmap_probe; refresh: a probe, then wsp_netmap_refresh of
 * its map; setmap: a probe, then wsp_comm_set_netmap.
 *
 * --agree WHAT (with --fault stop): the victim does not stop before the
 * call but inside it, on entering the agreement named WHAT (src/core/agree.c,
 * through the testing aid WSP_FAULT_AGREE), after the steps before it; each
 * survivor must then also name the victim in its message ("rank(s) R").
 * The communicator a failed create would have made does not exist, so after
 * it no later call is tried on it.
 *
 * Every rank first runs the operation once with every rank alive and
 * checks its result against an independent reference, so the fault hits a
 * communicator that works. Then the victim kills (SIGKILL) or stops
 * (SIGSTOP) itself: for the collectives and the sparse exchange right
 * before the call, while the others are inside it; in the shuffle from its
 * request handler, after it has answered some requests; in the striped
 * transfer after the receive has begun. Each survivor prints
 *
 *   FAULT rank R op OP status NAME after T s: MESSAGE
 *   AFTER rank R status NAME in T s
 *   FREE rank R status NAME in T s
 *
 * then "VERDICT rank R ok" only if it got WSP_ERR_TIMEOUT (or WSP_ERR_MPI,
 * when the MPI noticed the death itself, or WSP_ERR_CONN, when a striped
 * lane saw it) within WSP_TIMEOUT + margin, after a timeout WSP_ERR_TIMEOUT
 * again at once from the later call, and then wsp_comm_free succeeds
 * within 3 s. The job
 * then ends with MPI_Abort, which also takes the stopped victim; the
 * script around it (tests/mpi/fault.sh) checks that nothing is left.
 */
#include "wirespeed.h"

#include "inject.h"
#include "wsp_internal.h"
#include "p2p/wan.h"

#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int rank, size, victim = 1, sig = SIGKILL;
static long per_peer = 200, fail_isend = 0;
static int want_pieces; /* --pieces */
static const char *op = "allreduce";
static const char *agree; /* --agree */

static void die(const char *what) {
  fprintf(stderr, "rank %d: %s\n", rank, what);
  MPI_Abort(MPI_COMM_WORLD, 2);
}

static void fault_now(void) {
  fflush(stdout);
  fflush(stderr);
  raise(sig);
}

/* ---- the shuffle: every rank asks every rank --requests times ----
 * Request k = (requester << 40 | dest << 20 | i) asks for resp_words words,
 * word j being k * 1000003 + j; the requester checks every word and that
 * each request is answered exactly once. */
static size_t resp_words = 64;
static int64_t *resp_buf;

typedef struct {
  int served, answered, faulting;
  unsigned char *seen; /* [dest * per_peer + i] */
} shuf_t;

static int on_request(void *user, int source, const void *req, size_t bytes,
                      wsp_shuffle_reply_t *reply) {
  shuf_t *u = user;
  (void)source, (void)bytes;
  if (u->faulting && rank == victim && ++u->served == 20) fault_now();
  int64_t k;
  memcpy(&k, req, sizeof k);
  for (size_t j = 0; j < resp_words; j++) resp_buf[j] = k * 1000003 + (int64_t)j;
  return wsp_shuffle_reply(reply, resp_buf, resp_words * sizeof *resp_buf);
}

static int on_response(void *user, int dest, const void *req, size_t req_bytes,
                       const void *resp, size_t bytes) {
  shuf_t *u = user;
  int64_t k, w;
  (void)req_bytes;
  memcpy(&k, req, sizeof k);
  if (bytes != resp_words * sizeof w) return -1;
  for (size_t j = 0; j < resp_words; j++) {
    memcpy(&w, (const char *)resp + j * sizeof w, sizeof w);
    if (w != k * 1000003 + (int64_t)j) return -2;
  }
  long i = (long)(k & 0xfffff);
  if ((k >> 20 & 0xfffff) != dest || i >= per_peer || u->seen[(size_t)dest * per_peer + i]++)
    return -3; /* another request's answer, or a second one */
  u->answered++;
  return 0;
}

static int run_shuffle(wsp_comm_t *w, int faulting) {
  wsp_shuffle_handlers_t h = {.on_request = on_request, .on_response = on_response};
  shuf_t u = {.faulting = faulting && agree == NULL, .seen = calloc((size_t)size * per_peer, 1)};
  if (u.seen == NULL) die("out of memory");
  wsp_shuffle_t *sh = NULL;
  int rc = wsp_shuffle_open(w, NULL, &h, &u, &sh);
  if (rc != WSP_OK) return rc;
  for (int i = 0; i < per_peer && rc == WSP_OK; i++)
    for (int d = 0; d < size && rc == WSP_OK; d++) {
      int64_t k = (int64_t)rank << 40 | (int64_t)d << 20 | i;
      rc = wsp_shuffle_post(sh, d, &k, sizeof k);
    }
  wsp_shuffle_stats_t st;
  int crc = wsp_shuffle_close(sh, &st);
  if (rc == WSP_OK) rc = crc;
  if (rc == WSP_OK && u.answered != per_peer * size)
    die("shuffle: not every request was answered exactly once");
  if (rc == WSP_OK && !faulting)
    printf("SHUFFLE rank %d: %d requests answered, responses of %zu bytes, %llu of %llu chunks "
           "in pieces of %zu bytes\n",
           rank, u.answered, resp_words * sizeof(int64_t),
           (unsigned long long)st.chunks_in_pieces, (unsigned long long)st.chunks_sent,
           st.piece_bytes);
  if (rc == WSP_OK && !faulting && want_pieces &&
      (st.chunks_sent == 0 || st.chunks_in_pieces != st.chunks_sent ||
       st.piece_bytes == 0 || st.piece_bytes >= resp_words * sizeof(int64_t)))
    die("shuffle: the responses did not all travel in pieces smaller than a response");
  if (rc == WSP_OK) wsp_shuffle_free(&sh);
  free(u.seen);
  return rc;
}

/* ---- the striped transfer: rank 0 sends 64 MiB to the victim ---- */
static int run_striped(wsp_comm_t *w, int faulting) {
  const size_t n = (size_t)64 << 20;
  unsigned char *buf = malloc(n);
  if (buf == NULL) die("out of memory");
  int rc = WSP_OK;
  if (rank == 0) {
    for (size_t i = 0; i < n; i++) buf[i] = (unsigned char)(i * 7 + 3);
    rc = wsp_striped_send(w, buf, n, victim, 5);
  } else if (rank == victim) {
    wsp_striped_request_t *r = NULL;
    rc = wsp_striped_irecv(w, buf, n, 0, 5, &r);
    if (rc == WSP_OK && faulting) {
      int done = 0;
      for (int i = 0; i < 2 && rc == WSP_OK && !done; i++) {
        rc = wsp_striped_test(&r, &done);
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
      }
      fault_now();
    }
    if (rc == WSP_OK) rc = wsp_striped_wait(&r);
    for (size_t i = 0; rc == WSP_OK && i < n; i++)
      if (buf[i] != (unsigned char)(i * 7 + 3)) die("striped: wrong data");
  }
  /* The others (and, faulting, rank 0) learn of a failure through the
   * allreduce that follows. */
  int64_t one = 1, sum = 0;
  if (rc == WSP_OK) rc = wsp_allreduce(w, &one, &sum, 1, MPI_INT64_T, MPI_SUM);
  if (rc == WSP_OK && sum != size) die("striped: the allreduce after it is wrong");
  free(buf);
  return rc;
}

/* Forces the broadcast's algorithm on w (the same on every rank). */
static void bcast_alg(wsp_comm_t *w, const char *name) {
  int alg = 0;
  if (wsp_coll_alg_from_name(WSP_COLL_BCAST, name, &alg) != WSP_OK ||
      wsp_coll_set_alg(w, WSP_COLL_BCAST, alg) != WSP_OK)
    die(wsp_last_error());
}

/* A broadcast of 4 MiB from rank 0, checked on every rank. */
static int run_bcast(wsp_comm_t *w) {
  const size_t n = (size_t)4 << 20;
  unsigned char *buf = malloc(n);
  if (buf == NULL) die("out of memory");
  for (size_t i = 0; i < n; i++) buf[i] = rank == 0 ? (unsigned char)(i * 13 + 5) : 0;
  int rc = wsp_bcast(w, buf, n, MPI_BYTE, 0);
  for (size_t i = 0; rc == WSP_OK && i < n; i++)
    if (buf[i] != (unsigned char)(i * 13 + 5)) die("bcast: wrong data");
  free(buf);
  return rc;
}

/* ---- one run of the operation ---- */
static int run(wsp_comm_t *w, int faulting) {
  if (faulting && rank == victim && agree) {
    /* Stop inside the call, on entering the agreement named --agree. */
    char spec[256];
    snprintf(spec, sizeof spec, "%d:%s", victim, agree);
    if (setenv("WSP_FAULT_AGREE", spec, 1) != 0) die("setenv");
  }
  if (strcmp(op, "shuffle") == 0) return run_shuffle(w, faulting);
  if (strcmp(op, "striped") == 0) return run_striped(w, faulting);
  if (strcmp(op, "sites") == 0) bcast_alg(w, faulting ? "far_first" : "binomial");
  if (strcmp(op, "bcast") == 0) bcast_alg(w, "chain");
  if (faulting && rank == victim && agree == NULL) fault_now();
  if (faulting && rank == 0 && fail_isend > 0) {
    inject.fail_tag = MPI_ANY_TAG;
    inject.fail_in = fail_isend;
  }
  int rc = WSP_OK;
  if (strcmp(op, "bcast") == 0 || strcmp(op, "sites") == 0) {
    rc = run_bcast(w);
  } else if (strcmp(op, "wan") == 0 && faulting) {
    /* As a collective calls it: after the check that names the call. */
    wsp_comm_t *wan = NULL;
    if ((rc = wsp__usable(w, "wsp__sites_wan_with")) == WSP_OK)
      wan = wsp__sites_wan_with(w, 2, &rc);
    if (rc == WSP_OK && wan == NULL) die("wan: the lanes' communicator was not made");
  } else if (strcmp(op, "wan") == 0) {
    int64_t one = 1, sum = 0;
    rc = wsp_allreduce(w, &one, &sum, 1, MPI_INT64_T, MPI_SUM);
    if (rc == WSP_OK && sum != size) die("wan: the allreduce is wrong");
  } else if (strcmp(op, "create") == 0) {
    wsp_comm_t *x = (wsp_comm_t *)&x; /* must come back NULL after a failure */
    rc = wsp_comm_create(MPI_COMM_WORLD, NULL, &x);
    if (rc != WSP_OK && x != NULL) die("create: a failed wsp_comm_create left *out set");
    if (rc == WSP_OK && wsp_comm_free(&x) != WSP_OK) die(wsp_last_error());
  } else if (strcmp(op, "probe") == 0 || strcmp(op, "refresh") == 0 ||
             strcmp(op, "setmap") == 0) {
    wsp_netmap_t *map = NULL;
    wsp_netmap_probe_config_t pc;
    wsp_netmap_probe_config_init(&pc);
    pc.reps = 1;
    pc.stream_bytes = 64 << 10;
    pc.eager_limits = 0;
    rc = wsp_netmap_probe(w, &pc, &map);
    if (rc == WSP_OK && strcmp(op, "refresh") == 0) rc = wsp_netmap_refresh(w, map, 1);
    if (rc == WSP_OK && strcmp(op, "setmap") == 0) rc = wsp_comm_set_netmap(w, map);
    wsp_netmap_free(&map);
  } else if (strcmp(op, "allreduce") == 0) {
    const size_t n = 1 << 18; /* 2 MiB of int64: wirespeed's algorithms */
    int64_t *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
    if (!a || !b) die("out of memory");
    for (size_t i = 0; i < n; i++) a[i] = (int64_t)i + rank;
    rc = wsp_allreduce(w, a, b, n, MPI_INT64_T, MPI_SUM);
    for (size_t i = 0; rc == WSP_OK && i < n; i++)
      if (b[i] != (int64_t)i * size + (int64_t)size * (size - 1) / 2) die("allreduce: wrong sum");
    free(a), free(b);
  } else if (strcmp(op, "alltoall") == 0) {
    const size_t n = 1 << 14; /* ints per peer */
    int *a = malloc(n * size * sizeof *a), *b = malloc(n * size * sizeof *b);
    if (!a || !b) die("out of memory");
    for (size_t i = 0; i < n * size; i++) a[i] = rank * 1000003 + (int)i;
    rc = wsp_alltoall(w, a, n, MPI_INT, b, n, MPI_INT);
    for (int s = 0; rc == WSP_OK && s < size; s++)
      for (size_t i = 0; i < n; i++)
        if (b[s * n + i] != s * 1000003 + (int)(rank * n + i)) die("alltoall: wrong block");
    free(a), free(b);
  } else if (strcmp(op, "sparse") == 0) {
    /* Every rank sends 16 KiB to its two neighbours. */
    static int64_t data[2][2048];
    wsp_send_t s[2];
    for (int k = 0; k < 2; k++) {
      int peer = (rank + (k ? size - 1 : 1)) % size;
      for (int i = 0; i < 2048; i++) data[k][i] = (int64_t)rank * 4096 + i;
      s[k] = (wsp_send_t){.peer = peer, .data = data[k], .bytes = sizeof data[k]};
    }
    wsp_recvset_t got;
    rc = wsp_sparse_exchange(w, s, size > 2 ? 2 : 1, &got);
    if (rc == WSP_OK) {
      for (size_t m = 0; m < got.count; m++) {
        const int64_t *v = got.msgs[m].data;
        if (got.msgs[m].bytes != sizeof data[0] || v[5] != (int64_t)got.msgs[m].source * 4096 + 5)
          die("sparse: wrong message");
      }
      wsp_recvset_free(&got);
    }
  } else {
    die("unknown --op");
  }
  return rc;
}

int main(int argc, char **argv) {
  double margin = 3.0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--op") == 0 && i + 1 < argc) op = argv[++i];
    else if (strcmp(argv[i], "--fault") == 0 && i + 1 < argc) {
      const char *f = argv[++i];
      if (strcmp(f, "kill") == 0) sig = SIGKILL;
      else if (strcmp(f, "stop") == 0) sig = SIGSTOP;
      else if (strcmp(f, "none") == 0) sig = 0;
      else die("--fault: expected kill, stop or none");
    } else if (strcmp(argv[i], "--victim") == 0 && i + 1 < argc) victim = atoi(argv[++i]);
    else if (strcmp(argv[i], "--margin") == 0 && i + 1 < argc) margin = atof(argv[++i]);
    else if (strcmp(argv[i], "--requests") == 0 && i + 1 < argc) per_peer = atoi(argv[++i]);
    else if (strcmp(argv[i], "--fail-isend") == 0 && i + 1 < argc) fail_isend = atol(argv[++i]);
    else if (strcmp(argv[i], "--pieces") == 0) want_pieces = 1;
    else if (strcmp(argv[i], "--agree") == 0 && i + 1 < argc) agree = argv[++i];
    else if (strcmp(argv[i], "--resp") == 0 && i + 1 < argc) {
      long b = atol(argv[++i]);
      if (b < 8 || b % 8 || b > (4L << 20)) die("--resp: expected a multiple of 8 in [8, 4M]");
      resp_words = (size_t)b / 8;
    }
    else die("usage: test_fault --op OP --fault kill|stop|none [--victim R] [--margin S] "
             "[--requests N] [--resp BYTES] [--fail-isend N] [--pieces] [--agree WHAT]");
  }
  if (size < 2 || victim < 1 || victim >= size) die("needs 2+ ranks and a victim in [1, p)");
  if (agree && sig != SIGSTOP) die("--agree needs --fault stop");
  if (per_peer < 1 || per_peer >= (1 << 20)) die("--requests: expected a count in [1, 2^20)");
  if ((resp_buf = malloc(resp_words * sizeof *resp_buf)) == NULL) die("out of memory");
  wsp_comm_t *w = NULL;
  if (wsp_comm_create(MPI_COMM_WORLD, NULL, &w) != WSP_OK) die(wsp_last_error());
  if (sig == 0) {
    /* No fault from here: the operation must succeed and be right. The
     * lines that mark its start and its end go out as they happen, so that
     * a fault injected from outside can be placed between them. */
    printf("START rank %d op %s\n", rank, op);
    fflush(stdout);
    double t0 = MPI_Wtime();
    int rc = run(w, 0);
    printf("RUN rank %d op %s status %s after %.2f s\n", rank, op, wsp_err_name(rc),
           MPI_Wtime() - t0);
    printf("VERDICT rank %d %s\n", rank, rc == WSP_OK ? "ok" : "FAILED");
    fflush(stdout);
    wsp_comm_free(&w);
    MPI_Finalize();
    return rc == WSP_OK ? 0 : 1;
  }
  wsp_config_t cfg;
  wsp_comm_config(w, &cfg);
  if (!(cfg.timeout > 0)) die("set WSP_TIMEOUT");
  if (run(w, 0) != WSP_OK) die(wsp_last_error()); /* all alive: must work */
  MPI_Barrier(MPI_COMM_WORLD);

  double t0 = MPI_Wtime();
  int rc = run(w, 1);
  double t = MPI_Wtime() - t0;
  /* A stopped victim may be continued while the job is taken down (Open
   * MPI sends SIGCONT before it kills) and return an error of its own: it
   * is no survivor, and only waits to be killed. */
  if (rank == victim) for (;;) pause();
  /* Rank 0 sends nothing to the victim in some runs, and may finish. */
  printf("FAULT rank %d op %s status %s after %.2f s: %s\n", rank, op, wsp_err_name(rc), t,
         rc == WSP_OK ? "" : wsp_last_error());
  /* WSP_ERR_MPI: the MPI noticed the death, or a failure was injected;
   * WSP_ERR_CONN: a striped lane's socket was closed by the dead rank's
   * kernel. All are errors in time. */
  int ok = (rc == WSP_ERR_TIMEOUT || rc == WSP_ERR_MPI || rc == WSP_ERR_CONN) &&
           t <= cfg.timeout + margin;
  /* Stopped inside an agreement: every survivor knows whom it lacks. */
  if (agree) {
    char who[32];
    snprintf(who, sizeof who, "rank(s) %d (", victim);
    int named = rc == WSP_ERR_TIMEOUT && strstr(wsp_last_error(), who) != NULL;
    if (!named) printf("rank %d: the message does not name rank %d as \"%s\"\n", rank, victim, who);
    ok = ok && named;
  }
  /* An injected failure must have happened, or this run tested nothing. */
  if (rank == 0 && fail_isend > 0 && inject.fired != 1) {
    printf("rank %d: the failure of MPI_Isend %ld was not injected\n", rank, fail_isend);
    ok = 0;
  }
  /* After an injected failure the sends already made to the stopped
   * victim were let go: the communicator is unusable, as after a timeout. */
  if ((rc == WSP_ERR_TIMEOUT && strcmp(op, "create") != 0) || (rank == 0 && inject.fired)) {
    int64_t x = 1, y = 0;
    double t1 = MPI_Wtime();
    int rc2 = wsp_allreduce(w, &x, &y, 1, MPI_INT64_T, MPI_SUM);
    double t2 = MPI_Wtime() - t1;
    printf("AFTER rank %d status %s in %.3f s\n", rank, wsp_err_name(rc2), t2);
    ok = ok && rc2 == WSP_ERR_TIMEOUT && t2 < 0.5;
  }
  /* Freeing the communicator afterwards releases what is local and waits
   * for nobody. */
  double tf = MPI_Wtime();
  int frc = wsp_comm_free(&w);
  double tfree = MPI_Wtime() - tf;
  printf("FREE rank %d status %s in %.3f s\n", rank, wsp_err_name(frc), tfree);
  ok = ok && frc == WSP_OK && tfree < 3.0;
  printf("VERDICT rank %d %s\n", rank, ok ? "ok" : "FAILED");
  fflush(stdout);
  /* The lowest survivor ends the job once the others had time to print
   * (they time out at about the same moment). */
  int lowest = victim == 0 ? 1 : 0;
  if (rank == lowest) {
    sleep(2);
    MPI_Abort(MPI_COMM_WORLD, ok ? 0 : 1);
  }
  for (;;) pause();
}
