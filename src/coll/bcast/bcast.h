/* SPDX-License-Identifier: BSD-3-Clause */
/* What the broadcast algorithms share (each algorithm is in its own file). */
#ifndef WSP_COLL_BCAST_H
#define WSP_COLL_BCAST_H

#include "../coll_internal.h"
#include "../../patterns/bcast_sched.h"

/* ---- shared by the pipelined broadcasts (bcast_chain.c) ---- */
/* Segments a pipelined broadcast keeps posted ahead for segments of seg
 * bytes: enough to cover 2 MiB, from 4 to 32 (the bcast chain's header
 * says why). Under SimGrid, about twice the hop's latency lat (s) in
 * segments that take seg_time (s) each on it, from 1 to
 * WSP__BCAST_MAX_AHEAD. */
enum { WSP__BCAST_MAX_AHEAD = 128 };
#define WSP__BCAST_DEFAULT_SEG ((size_t)64 * 1024) /* when tune.seg is 0 */
size_t wsp__bcast_ahead(size_t seg, double lat, double seg_time);
/* The same for a hop whose latency the cost prices once, not per segment
 * (a crossing between sites): under SimGrid one more than twice lat in
 * segments of seg_time, seg_time being a segment's time with the link to
 * itself; elsewhere wsp__bcast_ahead. */
size_t wsp__bcast_ahead_far(size_t seg, double lat, double seg_time);
/* One rank's part in a pipelined broadcast along a path of ranks (the
 * chain's, or the map's in bcast_aware.c): receives a->block bytes in
 * segments of seg from prev and forwards each to next (-1: none). */
int wsp__bcast_path(wsp_comm_t *comm, const wsp__coll_args_t *a, int prev, int next,
                    size_t seg);
/* Segments of seg bytes in len bytes (the last one shorter), and the
 * length of segment i. */
static inline size_t wsp__bcast_nseg(size_t len, size_t seg) {
  return len / seg + (len % seg != 0);
}
static inline size_t wsp__bcast_seg_len(size_t len, size_t seg, size_t i) {
  return (i + 1) * seg < len ? seg : len - i * seg;
}

/* ---- shared by the scatter-based broadcasts (bcast_scatter.c) ---- */
/* The binomial scatter of the p blocks of a->recvbuf from a->root
 * (src/patterns/bcast_sched.h): afterwards relative rank r holds blocks
 * [r, r + subtree(r)). */
int wsp__bcast_scatter_phase(wsp_comm_t *comm, const wsp__coll_args_t *a);
/* One allgather step: receives `recv` and sends `send` (relative peers,
 * blocks of a->recvbuf; peer -1 or an empty byte range: nothing) and waits
 * for both. */
int wsp__bcast_step(wsp_comm_t *comm, const wsp__coll_args_t *a,
                    wsp__bsched_xfer_t send, wsp__bsched_xfer_t recv);

#endif
