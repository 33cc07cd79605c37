/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Pipelined ring allgatherv.
 *
 * Rank r sends to r+1 and receives from r-1. Its outgoing stream is the
 * blocks r, r-1, r-2, ..., r+2 (every block but that of r+1, which r+1
 * has), its incoming stream the blocks r-1, r-2, ..., r+1; so after its
 * own block, what r sends is what it received, in the order it arrived.
 * Each block is cut into pieces of a->tune.seg bytes, and a piece is sent
 * on as soon as it has arrived, while the next ones are still on the
 * wire: a block travels the ring as a pipeline, not in p-1 whole steps.
 * Every piece lands straight in recvbuf at its block's displacement, and
 * is sent on from there. Empty blocks produce no messages; both ends cut
 * the same pieces from the counts every rank shares, and MPI keeps one
 * sender's messages in order, so each receive matches its piece.
 *
 * Why pipelined: with very uneven counts, a plain ring moves the largest
 * block one hop per step, p-1 times its transfer; here it costs one
 * transfer and p-2 pieces of fill. With equal blocks it is the ring.
 *
 * Every receive is posted first (the pieces of the incoming stream), then
 * the own block's pieces go out, then each forwarded piece after its
 * receive completes.
 *
 * Preconditions: none (any p, any counts).
 *
 * With K the pieces of the longest stream and c_min the smallest block,
 * each link carries at most N - c_min bytes while sending and receiving
 * (beta_x), and the last piece needs p-2 hops more than the first. The
 * piece size minimising it is sqrt(N.alpha / ((p-2).beta_x))
 * (wsp__pipeline_seg over N bytes with p-1 stages).
 */
#include "../coll_internal.h"

#include <stdlib.h>

static size_t wsp__agv_min_block(const wsp__coll_shape_t *s) {
  size_t lo = SIZE_MAX;
  for (int i = 0; i < s->p; i++)
    if (wsp__shape_block(s, i) < lo) lo = wsp__shape_block(s, i);
  return lo;
}

WSP__COST(allgatherv, ring,
          "(K + p - 2).alpha + (N - c_min).beta_x + (p-2).seg.beta_x, "
          "K = sum of ceil(c_i / seg)") {
  int p = s->p, fill = p > 2 ? p - 2 : 0;
  size_t total = s->total ? s->total : s->bytes * (size_t)p;
  size_t seg = wsp__pipeline_seg(m, total, p - 1, m->beta_x, 1), pieces = 0;
  if (t) t->seg = seg;
  if (p < 2) return 0;
  for (int i = 0; i < p; i++) pieces += (wsp__shape_block(s, i) + seg - 1) / seg;
  return ((double)pieces + fill) * m->alpha + (double)(total - wsp__agv_min_block(s)) * m->beta_x +
         fill * (double)seg * m->beta_x;
}

/* The pieces of one block. */
static size_t wsp__agv_pieces(size_t c, size_t seg) { return (c + seg - 1) / seg; }

int wsp__allgatherv_ring(wsp_comm_t *comm, const wsp__coll_args_t *a) {
  int p = comm->size, r = comm->rank, rc = WSP_OK;
  int right = (r + 1) % p, left = (r - 1 + p) % p;
  const size_t *c = a->rcounts, *d = a->rdispls;
  char *out = a->recvbuf;
  size_t seg = a->tune.seg, nin = 0, nout = 0;
  if (seg == 0) { /* whole blocks */
    for (int i = 0; i < p; i++)
      if (c[i] > seg) seg = c[i];
  }
  /* Incoming: the blocks r-1-t, t = 0..p-2; outgoing: r-t. */
  for (int t = 0; t < p - 1; t++) {
    nin += wsp__agv_pieces(c[((r - 1 - t) % p + p) % p], seg);
    nout += wsp__agv_pieces(c[((r - t) % p + p) % p], seg);
  }
  MPI_Request *req = malloc((nin + nout + 1) * sizeof *req);
  if (req == NULL) return wsp__fail(comm, WSP_ERR_NOMEM, "allgatherv/ring: out of memory");
  MPI_Request *rreq = req, *sreq = req + nin;
  for (size_t i = 0; i < nin + nout; i++) req[i] = MPI_REQUEST_NULL;
  wsp__copy_bytes(out + d[r], a->sendbuf, c[r]);
  size_t k = 0;
  for (int t = 0; t < p - 1 && rc == WSP_OK; t++) {
    int b = ((r - 1 - t) % p + p) % p;
    for (size_t off = 0; off < c[b] && rc == WSP_OK; off += seg, k++)
      rc = wsp__irecv_bytes(comm, out + d[b] + off, c[b] - off < seg ? c[b] - off : seg, left,
                            a->tag, &rreq[k]);
  }
  /* Outgoing piece by piece; piece j of block r-t (t >= 1) is incoming
   * piece number `in` (the streams run in the same order). */
  size_t ks = 0, in = 0;
  for (int t = 0; t < p - 1 && rc == WSP_OK; t++) {
    int b = ((r - t) % p + p) % p;
    for (size_t off = 0; off < c[b] && rc == WSP_OK; off += seg, ks++) {
      size_t len = c[b] - off < seg ? c[b] - off : seg;
      if (t > 0 && (rc = wsp__waitall(comm, 1, &rreq[in++], len)) != WSP_OK) break;
      rc = wsp__isend_bytes(comm, out + d[b] + off, len, right, a->tag, 0, &sreq[ks]);
    }
  }
  if (rc == WSP_OK) rc = wsp__waitall(comm, (int)(nin + nout), req, seg);
  if (rc != WSP_OK) wsp__abandon(comm, rc, (int)nin, rreq, (int)nout, sreq);
  free(req);
  return rc;
}
