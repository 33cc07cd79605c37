/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Point-to-point on wirespeed's private communicator: the one family of
 * send and receive helpers every part of the library uses (src/core/p2p.c).
 *
 * - Any count. MPI counts are ints; a message of more elements than
 *   cfg.big_message is described as one element of a derived type made of
 *   chunks (wsp__count_type), here and nowhere else.
 * - Typed and bytes. Every helper takes (count, datatype); the _bytes forms
 *   are the same with MPI_BYTE.
 * - Waiting without burning a core: wsp__waitall tests and backs off
 *   (src/core/backoff.c) instead of spinning in MPI_Waitall.
 * - One cleanup for error paths: wsp__abandon cancels the receives a
 *   failed step had posted and lets its sends complete (MPI-4 deprecates
 *   cancelling sends, and the peer's receive for them is posted anyway),
 *   waiting for them no longer than the time limit.
 */
#ifndef WSP_P2P_H
#define WSP_P2P_H

#include "wirespeed.h"

#include <stddef.h>

/* Describes `count` elements of `base` to MPI as (n, type): base itself
 * when count <= cfg.big_message, otherwise a derived type of chunks plus a
 * remainder. *owned is set when the caller must MPI_Type_free the type.
 * Sender and receiver may build their types independently: MPI only
 * requires equal type signatures. */
int wsp__count_type(const wsp_comm_t *comm, size_t count, MPI_Datatype base,
                    int *n, MPI_Datatype *type, int *owned);
static inline int wsp__bytes_type(const wsp_comm_t *comm, size_t bytes,
                                  int *n, MPI_Datatype *type, int *owned) {
  return wsp__count_type(comm, bytes, MPI_BYTE, n, type, owned);
}
/* The byte length of a probed or received message, whatever its size. */
int wsp__status_bytes(const wsp_comm_t *comm, MPI_Status *st, size_t *bytes);

/* Nonblocking sends and receives of any count. */
int wsp__isend_typed(const wsp_comm_t *comm, const void *buf, size_t count,
                     MPI_Datatype type, int peer, int tag, MPI_Request *req);
int wsp__irecv_typed(const wsp_comm_t *comm, void *buf, size_t count,
                     MPI_Datatype type, int peer, int tag, MPI_Request *req);
/* Bytes; `synchronous` sends with MPI_Issend (NBX needs to know when its
 * messages were matched). */
int wsp__isend_bytes(const wsp_comm_t *comm, const void *buf, size_t bytes,
                     int peer, int tag, int synchronous, MPI_Request *req);
static inline int wsp__irecv_bytes(const wsp_comm_t *comm, void *buf,
                                   size_t bytes, int peer, int tag,
                                   MPI_Request *req) {
  return wsp__irecv_typed(comm, buf, bytes, MPI_BYTE, peer, tag, req);
}

/* Waits for n requests (MPI_REQUEST_NULL entries are fine) without burning
 * a core: MPI_Testall and the back-off. `bytes`: the data the awaited
 * transfers carry, or 0 when small or unknown; a wait for a bulk transfer
 * may sleep longer between polls (up to 1/8 of its time under the model),
 * and one the model expects to take at most 1 ms polls until 1.25x that
 * time before it sleeps at all (src/core/backoff.c). */
int wsp__waitall(const wsp_comm_t *comm, int n, MPI_Request *reqs, size_t bytes);
/* Waits, as wsp__waitall, until any one of n requests completes; *idx is
 * its index (MPI_UNDEFINED when every entry is MPI_REQUEST_NULL). For
 * loops that forward whichever of several streams moves first. */
int wsp__waitany(const wsp_comm_t *comm, int n, MPI_Request *reqs, size_t bytes, int *idx);

/* Waits, as wsp__waitall, for the request of one of MPI's non-blocking
 * collectives on comm (a timeout then names every rank, and drops the
 * request rather than freeing it, which MPI forbids). */
int wsp__coll_wait(const wsp_comm_t *comm, MPI_Request *req);
/* MPI's collective NAME (Allreduce, Allgather, Bcast, Alltoall, ...) on
 * the private communicator, args as MPI's without the request: the
 * blocking call, or with a time limit (cfg.timeout) the non-blocking one
 * waited for by wsp__coll_wait, so that the wait can end. Under SimGrid
 * always the blocking call (SMPI's non-blocking collectives, p2p.c). On
 * failure stores the status in rc and jumps to label. */
#define WSP__I_Allreduce MPI_Iallreduce
#define WSP__I_Barrier MPI_Ibarrier
#define WSP__I_Reduce MPI_Ireduce
#define WSP__I_Bcast MPI_Ibcast
#define WSP__I_Gather MPI_Igather
#define WSP__I_Scatter MPI_Iscatter
#define WSP__I_Allgather MPI_Iallgather
#define WSP__I_Alltoall MPI_Ialltoall
#define WSP__I_Alltoallv MPI_Ialltoallv
#define WSP__I_Reduce_scatter_block MPI_Ireduce_scatter_block
#define WSP__I_Reduce_scatter MPI_Ireduce_scatter
#define WSP__I_Allgatherv MPI_Iallgatherv
#ifdef WSP_SIMGRID
#define WSP__MPI_COLL_GOTO(comm, rc, label, NAME, ...)                         \
  WSP__MPI_GOTO(comm, MPI_##NAME(__VA_ARGS__), rc, label)
#else
#define WSP__MPI_COLL_GOTO(comm, rc, label, NAME, ...)                         \
  do {                                                                         \
    if ((comm)->cfg.timeout > 0) {                                             \
      MPI_Request wsp__creq = MPI_REQUEST_NULL;                                \
      WSP__MPI_GOTO(comm, WSP__I_##NAME(__VA_ARGS__, &wsp__creq), rc, label);  \
      if (((rc) = wsp__coll_wait((comm), &wsp__creq)) != WSP_OK) goto label;   \
    } else {                                                                   \
      WSP__MPI_GOTO(comm, MPI_##NAME(__VA_ARGS__), rc, label);                 \
    }                                                                          \
  } while (0)
#endif

/* MPI_Allreduce in place, waited for like the sends and receives (an
 * MPI_Iallreduce and the back-off): for steps where most ranks only wait,
 * which a blocking call would make spin in many MPIs. Under SimGrid, the
 * blocking call (p2p.c says why). */
int wsp__allreduce_wait(const wsp_comm_t *comm, void *buf, int count, MPI_Datatype type,
                        MPI_Op op);

/* Lets go of a request that may never complete, without waiting: a
 * receive is cancelled first; then the request is freed (MPI completes a
 * send in the background) and *req becomes MPI_REQUEST_NULL. Not for the
 * requests of non-blocking collectives, which MPI forbids freeing. The
 * buffer stays MPI's: only for buffers that outlive the communicator's
 * use, or after which the communicator is unusable. */
void wsp__let_go(MPI_Request *req, int is_recv);

/* After an error: cancels the posted receives among recvs, lets the sends
 * complete, and completes all of them, so that no request is left behind.
 * That wait obeys comm's time limit: when nothing completes for
 * cfg.timeout (a stopped receiver), the rest is let go and the
 * communicator is unusable (wsp__timeout_abandon). After a timeout (rc
 * WSP_ERR_TIMEOUT) nothing is waited for: receives are cancelled and
 * freed, sends freed. Returns rc unchanged. */
int wsp__abandon(const wsp_comm_t *comm, int rc, int nrecv, MPI_Request *recvs, int nsend,
                 MPI_Request *sends);

/* Blocking forms, built on the above (they wait with wsp__waitall). */
int wsp__send_typed(const wsp_comm_t *comm, const void *buf, size_t count,
                    MPI_Datatype type, int peer, int tag);
int wsp__recv_typed(const wsp_comm_t *comm, void *buf, size_t count,
                    MPI_Datatype type, int peer, int tag);
static inline int wsp__send_bytes(const wsp_comm_t *comm, const void *buf,
                                  size_t bytes, int peer, int tag) {
  return wsp__send_typed(comm, buf, bytes, MPI_BYTE, peer, tag);
}
static inline int wsp__recv_bytes(const wsp_comm_t *comm, void *buf,
                                  size_t bytes, int peer, int tag) {
  return wsp__recv_typed(comm, buf, bytes, MPI_BYTE, peer, tag);
}
/* Sends scount elements to dst while receiving rcount from src, and waits
 * for both. The send is posted before the receive: two ranks swapping one
 * large message each way over TCP moved each direction markedly slower
 * when both had posted the receive first (docs/results/coll.md,
 * "Exchanges ran at about half speed"); neither order can deadlock, as
 * both are nonblocking. */
int wsp__sendrecv_typed(const wsp_comm_t *comm, const void *sbuf, size_t scount,
                        int dst, void *rbuf, size_t rcount, int src,
                        MPI_Datatype type, int tag);
static inline int wsp__sendrecv_bytes(const wsp_comm_t *comm, const void *sbuf,
                                      size_t sbytes, int dst, void *rbuf,
                                      size_t rbytes, int src, int tag) {
  return wsp__sendrecv_typed(comm, sbuf, sbytes, dst, rbuf, rbytes, src,
                             MPI_BYTE, tag);
}

#endif
