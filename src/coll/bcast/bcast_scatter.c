/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The parts that the scatter-based broadcasts (scatter_ring, scatter_rdb)
 * share: the binomial scatter of the message's p blocks from the root, and
 * one step of an allgather schedule. The schedules themselves are in
 * src/patterns/bcast_sched.h; block j of relative rank j is bytes
 * [wsp__part_start(n, p, j), wsp__part_start(n, p, j + 1)), so some blocks
 * are empty when n < p, and messages of no bytes are left out on both ends.
 */
#include "bcast.h"

#include "../../patterns/tree.h"

/* Byte offset of block blk (of p) of the message. */
static size_t wsp__off(const wsp__coll_args_t *a, int p, int blk) {
  return wsp__part_start(a->block, p, blk);
}

int wsp__bcast_scatter_phase(wsp_comm_t *comm, const wsp__coll_args_t *a) {
  int p = comm->size, r = wsp__tree_rel(comm->rank, a->root, p), rc;
  char *buf = a->recvbuf;
  wsp__bsched_xfer_t from = wsp__bsched_scatter_recv(r, p);
  if (from.peer >= 0) {
    size_t off = wsp__off(a, p, from.lo), len = wsp__off(a, p, from.hi) - off;
    if (len &&
        (rc = wsp__recv_bytes(comm, buf + off, len,
                              wsp__tree_abs(from.peer, a->root, p), a->tag)))
      return rc;
  }
  /* One child at a time, largest subtree first, as in the binomial
   * broadcast (bcast_binomial.c says why). */
  wsp__bsched_xfer_t to[32];
  int n = wsp__bsched_scatter_sends(r, p, to, 32);
  for (int i = 0; i < n; i++) {
    size_t off = wsp__off(a, p, to[i].lo), len = wsp__off(a, p, to[i].hi) - off;
    if (len &&
        (rc = wsp__send_bytes(comm, buf + off, len, wsp__tree_abs(to[i].peer, a->root, p), a->tag)))
      return rc;
  }
  return WSP_OK;
}

int wsp__bcast_step(wsp_comm_t *comm, const wsp__coll_args_t *a,
                    wsp__bsched_xfer_t send, wsp__bsched_xfer_t recv) {
  int p = comm->size, rc;
  char *buf = a->recvbuf;
  MPI_Request req[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  if (recv.peer >= 0) {
    size_t off = wsp__off(a, p, recv.lo), len = wsp__off(a, p, recv.hi) - off;
    if (len && (rc = wsp__irecv_typed(comm, buf + off, len, MPI_BYTE,
                                      wsp__tree_abs(recv.peer, a->root, p),
                                      a->tag, &req[0])))
      return rc;
  }
  if (send.peer >= 0) {
    size_t off = wsp__off(a, p, send.lo), len = wsp__off(a, p, send.hi) - off;
    if (len && (rc = wsp__isend_typed(comm, buf + off, len, MPI_BYTE,
                                      wsp__tree_abs(send.peer, a->root, p),
                                      a->tag, &req[1]))) {
      return wsp__abandon(comm, rc, 1, &req[0], 0, NULL);
    }
  }
  return wsp__waitall(comm, 2, req, 0);
}
