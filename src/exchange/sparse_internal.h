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


typedef struct wsp__sparse_round {
  wsp_comm_t *comm;
  const wsp_send_t *sends; /* validated; entries with peer == rank skipped */
  size_t nsends;
  int parity;              /* round number & 1 */
  int poisoned;            /* this rank fails the round (arguments, memory) */
  wsp__sparse_stats_t local; /* this rank's messages and bytes (no self) */

  /* Filled by the algorithm. */
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

/* Starts receiving the message that `st` describes (probed with MPI_Iprobe
 * or MPI_Probe) with an MPI_Irecv of exactly st->MPI_SOURCE and
 * st->MPI_TAG, which MPI's non-overtaking rule makes the probed message, as
 * only one thread uses a wsp_comm_t (MPI_Mprobe would do the same, but
 * SimGrid lacks it). The receive is not waited for: several large messages
 * then arrive at once instead of one round trip after another. Without
 * memory for the message, it is still consumed (as a truncated receive) so
 * that its sender completes, and the round is poisoned. */
int wsp__recv_probed(wsp__sparse_round_t *r, MPI_Status *st);
/* Starts the round's sends to other ranks (MPI_Issend if `synchronous`,
 * else MPI_Isend); reqs has room for nsends; *nreq gets the number. */
int wsp__sparse_post_sends(wsp__sparse_round_t *r, int tag, int synchronous,
                           MPI_Request *reqs, size_t *nreq);
/* Waits for every receive wsp__recv_probed started. */
int wsp__recv_wait(wsp__sparse_round_t *r);

int wsp__sparse_nbx(wsp__sparse_round_t *r);
int wsp__sparse_pex(wsp__sparse_round_t *r);
int wsp__sparse_alltoallv(wsp__sparse_round_t *r);

#endif
