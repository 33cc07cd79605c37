/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Internal interface between the sparse-exchange dispatcher (sparse.c) and
 * its algorithms (sparse_<alg>.c).
 *
 * The dispatcher checks arguments, handles the self message, and sorts the
 * result. An algorithm moves the messages for other ranks and, on every
 * rank, learns whether any rank failed locally (`poisoned`), so that all
 * ranks abandon a round together. Algorithms that see every rank's numbers
 * anyway also fill `global` (the same on every rank), which `auto` uses to
 * choose the next round's algorithm.
 */
#ifndef WSP_SPARSE_INTERNAL_H
#define WSP_SPARSE_INTERNAL_H

#include "../core/wsp_internal.h"
#include "../core/tags.h"
#include "sparse.h"

/* A sparse round's size, summed over all ranks (self messages excluded). */
typedef struct wsp__sparse_stats {
  uint64_t sends; /* messages */
  uint64_t bytes; /* bytes */
} wsp__sparse_stats_t;

/* auto's candidates: every algorithm of WSP_SPARSE_ALG_MAP (auto itself,
 * WSP_ALG_AUTO, is not in it). A full exploration runs each of them
 * WSP__AUTO_FULL_REPS times plus one round that only carries the last
 * report; shorter ones run each twice. The plan holds the longest. */
#define WSP__AUTO_NCAND WSP_SPARSE_ALG_COUNT
#define WSP__AUTO_FULL_REPS 3
#define WSP__AUTO_PLAN_MAX (WSP__AUTO_FULL_REPS * WSP__AUTO_NCAND + 1)
_Static_assert(WSP_SPARSE_AUTO == -1,
               "auto is -1, just below the rows 0..count-1: the range checks rely on it");
_Static_assert(WSP__AUTO_FULL_REPS >= 2, "a later exploration runs each candidate twice");

/* The state of the sparse `auto` chooser (sparse_auto.c). Identical on every
 * rank: it only ever sees sums over all ranks. */
struct wsp__sparse_auto {
  int exploring;    /* in an exploration (else committed to `choice`) */
  int step;         /* next round's place in `plan` */
  int nplan;        /* rounds of this exploration */
  wsp_sparse_alg_t plan[WSP__AUTO_PLAN_MAX];
  int explorations; /* how many were completed */
  wsp_sparse_alg_t choice;
  uint64_t time_ns[WSP_SPARSE_ALG_COUNT]; /* best timing in this exploration */
  int have_time[WSP_SPARSE_ALG_COUNT];
  /* A candidate that lost by 1.5x or more sits out explorations: skip[c]
   * more of them, after which it is measured again; each new big loss
   * doubles the next wait (skip_len), up to 16. */
  int skip[WSP_SPARSE_ALG_COUNT], skip_len[WSP_SPARSE_ALG_COUNT];
  uint64_t first_interval, interval, left; /* committed rounds */
  int have_cls, cls_sends, cls_bytes; /* log2 buckets of the pattern */
  uint64_t last_ns; /* this rank's time of its last auto round (reported next) */
};
typedef struct wsp__sparse_auto wsp__sparse_auto_t;

/* A communicator's sparse state. The scratch holds what the algorithms
 * need per rank of the communicator, made once with the communicator: an
 * allocation of O(p) that failed inside a round, before the round's first
 * collective step, could not be reported to the others (the rank could not
 * even state its part), and they would wait for it forever. */
struct wsp__sparse_comm {
  wsp__sparse_auto_t chooser;
  int p;
  uint64_t *u64;          /* 6p: pex's counts; alltoallv's sizes out and in */
  int *cnt;               /* 4p: alltoallv's counts and displacements */
  const wsp_send_t **to;  /* p: alltoallv's message to each rank */
  MPI_Request *reqs;      /* 2p: alltoallv's tails; nbx's and pex's sends */
  uint64_t *announced;    /* p: the sizes of messages over the lanes (sparse.c) */
  /* A round's messages averaged cfg.p2p_min bytes or more: under auto, the
   * transport is decided before the next one (sparse.c). */
  int lanes_due;
};

/* ---- memory of a round ----
 * Every allocation of the sparse exchange goes through these, so that a
 * test can make one of them fail (wsp__fail_alloc_in) and check that every
 * rank still returns, with an error where the round could not complete. */
void *wsp__malloc(size_t n);
void *wsp__calloc(size_t n, size_t size);
void *wsp__realloc(void *p, size_t n);
/* Tests: the n-th allocation from now on this thread fails (0: none);
 * returns how many allocations failed so far this way. */
unsigned long wsp__fail_alloc_in(unsigned long n);

/* ---- the chooser: pure logic (sparse_auto.c) ---- */
void wsp__sparse_auto_init(wsp__sparse_auto_t *a, uint64_t interval);
void wsp__sparse_auto_restart(wsp__sparse_auto_t *a);
/* The algorithm of the next auto round; *report is set when that round
 * must carry the timing report (an exploring round). */
wsp_sparse_alg_t wsp__sparse_auto_next(const wsp__sparse_auto_t *a, int p,
                                       int *report);
/* After an auto round: the round's global stats when known (else NULL) and,
 * on a reporting round, the sum over ranks of the previous round's time. */
void wsp__sparse_auto_update(wsp__sparse_auto_t *a, int p,
                             const wsp__sparse_stats_t *stats,
                             const uint64_t *prev_time_ns);


typedef struct wsp__sparse_round {
  wsp_comm_t *comm;
  const wsp_send_t *sends; /* validated; entries with peer == rank skipped */
  size_t nsends;
  int parity;              /* round number & 1 */
  int poisoned;            /* this rank fails the round (arguments, memory) */
  wsp__sparse_stats_t local; /* this rank's messages and bytes (no self) */

  /* Filled by the algorithm. */
  wsp_sparse_alg_t alg;      /* what ran (auto: the candidate it picked) */
  int remote_failed;         /* some rank (maybe this one) was poisoned */
  int have_global;
  wsp__sparse_stats_t global; /* sums over all ranks */

  /* Received messages, in any order; wsp__sparse_take appends. */
  wsp_recv_t *msgs;
  size_t count, cap;
  void **blocks; /* memory to free with the result */
  size_t nblocks, capblocks;
  MPI_Request *rreqs; /* receives posted by wsp__recv_probed */
  size_t nrreqs, caprreqs;
} wsp__sparse_round_t;

typedef int (*wsp__sparse_fn)(wsp__sparse_round_t *r);
/* Runs one round with algorithm `alg` (never auto) (sparse.c). */
int wsp__sparse_run(wsp__sparse_round_t *r, wsp_sparse_alg_t alg);

/* Appends a received message of `bytes` bytes from `source` and returns
 * where to put its data (NULL for 0 bytes). On allocation failure returns
 * WSP_ERR_NOMEM and marks the round poisoned; the caller must still drain
 * the message so that the protocol completes. */
int wsp__sparse_take(wsp__sparse_round_t *r, int source, size_t bytes,
                     void **data);
/* Records that `block` belongs to the result (freed with it). */
int wsp__sparse_own(wsp__sparse_round_t *r, void *block);
/* Appends a message whose data lives in an owned block. */
int wsp__sparse_append(wsp__sparse_round_t *r, int source, size_t bytes,
                       void *data);
/* Makes room for nmsgs more messages and nblocks more owned blocks, so
 * that the appends and owns that follow cannot fail. */
int wsp__sparse_reserve(wsp__sparse_round_t *r, size_t nmsgs, size_t nblocks);

/* Starts receiving the message that `st` describes (probed with MPI_Iprobe
 * or MPI_Probe) with an MPI_Irecv of exactly st->MPI_SOURCE and
 * st->MPI_TAG, which MPI's non-overtaking rule makes the probed message, as
 * only one thread uses a wsp_comm_t (MPI_Mprobe would do the same, but
 * SimGrid lacks it). The receive is not waited for: several large messages
 * then arrive at once instead of one round trip after another. Without
 * memory for the message, it is still consumed (as a truncated receive) so
 * that its sender completes, and the round is poisoned. */
int wsp__recv_probed(wsp__sparse_round_t *r, MPI_Status *st);
/* MPI_Iprobe from any source for the round's messages (`tag`) and, with
 * the lanes on, their announcements (sparse.c); what it finds goes to
 * wsp__recv_probed, which starts its receive either way. */
int wsp__sparse_probe(wsp__sparse_round_t *r, int tag, int *flag, MPI_Status *st);
/* Starts the round's sends to other ranks (MPI_Issend if `synchronous`,
 * else MPI_Isend; a message over the lanes is announced that way and its
 * bytes follow on the lanes); reqs has room for 2 nsends; *nreq gets the
 * number. */
int wsp__sparse_post_sends(wsp__sparse_round_t *r, int tag, int synchronous,
                           MPI_Request *reqs, size_t *nreq);
/* Waits for every receive wsp__recv_probed started. */
int wsp__recv_wait(wsp__sparse_round_t *r);

/* The algorithms: wsp__sparse_<name> for every row of WSP_SPARSE_ALG_MAP. */
#define WSP__SPARSE_PROTO(id, name, desc, cost) int wsp__sparse_##name(wsp__sparse_round_t *r);
WSP_SPARSE_ALG_MAP(WSP__SPARSE_PROTO)
#undef WSP__SPARSE_PROTO

/* auto (WSP_SPARSE_AUTO): picks a candidate, runs it and learns from its
 * time (sparse_auto.c); it sets r->alg to the candidate that ran. */
int wsp__sparse_auto(wsp__sparse_round_t *r);

#endif
