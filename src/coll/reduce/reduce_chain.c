/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Pipelined chain reduce.
 *
 * The vector is cut into s segments of a->tune.seg bytes (whole elements,
 * at least one). The ranks form a chain; the first rank of the chain sends
 * its segments one after the other to the next; every other rank receives
 * segment i from the rank before it, combines it with its own segment i
 * and passes the result on, so all links of the chain work at once on
 * different segments. The last rank of the chain combines into the
 * receive buffer. Two receive buffers per rank let segment i+1 arrive
 * while segment i is being reduced and sent.
 *
 * Commutative ops: the chain runs over ranks relative to the root,
 * root-1, root-2, ..., root+1, root, and ends at the root.
 *
 * Non-commutative ops: the chain runs p-1, p-2, ..., 1, 0. Each rank is
 * below all ranks before it in the chain, so "own op incoming" keeps rank
 * order. When the root is not 0, rank 0 passes each finished segment on to
 * the root (which also took its place in the chain): one more hop, so
 * Cost grows by one segment time (alpha + (n/s).(beta + gamma)), which the
 * model below, knowing neither root nor op order, does not count.
 *
 * The segment size minimises the model: seg = sqrt(n.alpha / ((p-2).(b +
 * gamma))) (wsp__pipeline_seg with p-1 stages). Every rank but the ends
 * receives and sends at once, so a byte costs b = beta_x (src/model/model.h);
 * b = beta for p = 2, a single send.
 *
 * Preconditions: none (any p, any count, any op).
 */
#include "../coll_internal.h"

#include "reduce_util.h"

#include <stdlib.h>

WSP__COST(reduce, chain,
          "(p - 1 + s - 1).(alpha + (n/s).b + (n/s).gamma) + drain(min(seg, n)), s = ceil(n / "
          "seg), b = beta_x (beta for p = 2)") {
  double per_byte = wsp__chain_beta(m, s->p) + m->gamma;
  size_t seg = wsp__pipeline_seg(m, s->bytes, s->p - 1, per_byte,
                                 wsp__red_elem_bytes(s));
  if (t) t->seg = seg;
  double nseg = seg ? (double)((s->bytes + seg - 1) / seg) : 1.0;
  if (nseg < 1) nseg = 1;
  /* Segments overlap: the lanes' queue drains once. */
  return (s->p - 1 + nseg - 1) * (m->alpha + (double)s->bytes / nseg * per_byte) +
         wsp__drain_pipeline(m, s->bytes, seg);
}

typedef struct {
  wsp_comm_t *comm;
  const wsp__coll_args_t *a;
  size_t segn, ns;
} wsp__chain_t;

static size_t wsp__seg_len(const wsp__chain_t *c, size_t i) {
  size_t off = i * c->segn;
  return c->a->count - off < c->segn ? c->a->count - off : c->segn;
}

int wsp__reduce_chain(wsp_comm_t *comm, const wsp__coll_args_t *a) {
  int p = comm->size, me = comm->rank, root = a->root;
  int prev, next, final_from = -1;
  if (a->commutative) {
    int v = (me - root + p) % p;
    prev = v + 1 < p ? (me + 1) % p : -1;
    next = v > 0 ? (me - 1 + p) % p : -1;
  } else {
    prev = me + 1 < p ? me + 1 : -1;
    next = me > 0 ? me - 1 : (root != 0 ? root : -1);
    if (me == root && root != 0) final_from = 0;
  }
  return wsp__reduce_path(comm, a, prev, next, final_from, wsp__red_segn(a));
}

int wsp__reduce_path(wsp_comm_t *comm, const wsp__coll_args_t *a, int prev, int next,
                     int final_from, size_t segn) {
  int rc = WSP_OK;
  wsp__chain_t c = {comm, a, segn, 0};
  if (c.segn > a->count) c.segn = a->count;
  c.ns = (a->count + c.segn - 1) / c.segn;
  const int in_place = a->sendbuf == a->recvbuf;

  void *mem[2] = {NULL, NULL}, *buf[2] = {NULL, NULL};
  MPI_Request *freq = NULL;
  MPI_Request rreq[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  MPI_Request sreq[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  /* Buffers: a middle rank reduces into them; the end reduces into them
   * only in place (own data and result share recvbuf). */
  int need_buf = prev >= 0 && (next >= 0 || in_place);
  for (int k = 0; need_buf && k < 2; k++)
    if ((buf[k] = wsp__tmp_typed(comm, a, c.segn, &mem[k])) == NULL) {
      rc = WSP_ERR_NOMEM;
      goto out;
    }
  if (final_from >= 0) {
    if ((freq = malloc(c.ns * sizeof *freq)) == NULL) {
      rc = wsp__fail(comm, WSP_ERR_NOMEM, "reduce/chain: out of memory");
      goto out;
    }
    for (size_t i = 0; i < c.ns; i++) freq[i] = MPI_REQUEST_NULL;
  }
#define SEG(buf_, i) wsp__elem(a, (buf_), (i) * c.segn)
#define CHK(call)                                                             \
  do {                                                                        \
    if ((rc = (call)) != WSP_OK) goto fail;                                   \
  } while (0)

  if (prev < 0) {
    /* First in the chain: send own segments, two in flight. When it is also
     * the root (non-commutative, root p-1), the result comes back from 0
     * into recvbuf, which may be sendbuf: each final receive is posted once
     * the send of that segment has completed. */
    for (size_t i = 0; i < c.ns; i++) {
      CHK(wsp__waitall(comm, 1, &sreq[i % 2], c.segn * a->type_size));
      if (freq && i >= 2)
        CHK(wsp__irecv_typed(comm, SEG(a->recvbuf, i - 2), wsp__seg_len(&c, i - 2),
                             a->dtype, final_from, a->tag, &freq[i - 2]));
      CHK(wsp__isend_typed(comm, SEG(a->sendbuf, i), wsp__seg_len(&c, i), a->dtype,
                           next, a->tag, &sreq[i % 2]));
    }
    for (size_t i = c.ns >= 2 ? c.ns - 2 : 0; i < c.ns; i++) {
      CHK(wsp__waitall(comm, 1, &sreq[i % 2], c.segn * a->type_size));
      if (freq)
        CHK(wsp__irecv_typed(comm, SEG(a->recvbuf, i), wsp__seg_len(&c, i),
                             a->dtype, final_from, a->tag, &freq[i]));
    }
  } else if (next >= 0) {
    /* Middle: receive into buf[i%2], own op incoming, pass on. */
    CHK(wsp__irecv_typed(comm, buf[0], wsp__seg_len(&c, 0), a->dtype, prev,
                         a->tag, &rreq[0]));
    for (size_t i = 0; i < c.ns; i++) {
      int k = (int)(i % 2);
      if (i + 1 < c.ns) {
        CHK(wsp__waitall(comm, 1, &sreq[1 - k], c.segn * a->type_size)); /* segment i-1 left */
        CHK(wsp__irecv_typed(comm, buf[1 - k], wsp__seg_len(&c, i + 1), a->dtype,
                             prev, a->tag, &rreq[1 - k]));
      }
      CHK(wsp__waitall(comm, 1, &rreq[k], c.segn * a->type_size));
      CHK(wsp__reduce_local(comm, SEG(a->sendbuf, i), buf[k], wsp__seg_len(&c, i),
                            a->dtype, a->op));
      if (freq) /* own segment i is read: recvbuf's may be overwritten */
        CHK(wsp__irecv_typed(comm, SEG(a->recvbuf, i), wsp__seg_len(&c, i),
                             a->dtype, final_from, a->tag, &freq[i]));
      CHK(wsp__isend_typed(comm, buf[k], wsp__seg_len(&c, i), a->dtype, next,
                           a->tag, &sreq[k]));
    }
  } else {
    /* End of the chain, the root. Not in place: receive straight into
     * recvbuf and fold own data in. In place: receive into buf. */
    for (size_t i = 0; i < c.ns && i < 2; i++)
      CHK(wsp__irecv_typed(comm, in_place ? buf[i] : SEG(a->recvbuf, i),
                           wsp__seg_len(&c, i), a->dtype, prev, a->tag, &rreq[i]));
    for (size_t i = 0; i < c.ns; i++) {
      int k = (int)(i % 2);
      size_t len = wsp__seg_len(&c, i);
      CHK(wsp__waitall(comm, 1, &rreq[k], c.segn * a->type_size));
      void *res = SEG(a->recvbuf, i);
      if (!in_place) {
        /* own op incoming: own is the lowest rank so far (either order is
         * right for commutative ops). */
        CHK(wsp__reduce_local(comm, SEG(a->sendbuf, i), res, len, a->dtype, a->op));
      } else if (a->commutative) {
        CHK(wsp__reduce_local(comm, buf[k], res, len, a->dtype, a->op));
      } else {
        CHK(wsp__reduce_local(comm, res, buf[k], len, a->dtype, a->op));
        CHK(wsp__copy_typed(comm, a, buf[k], res, len));
      }
      if (i + 2 < c.ns)
        CHK(wsp__irecv_typed(comm, in_place ? buf[k] : SEG(a->recvbuf, i + 2),
                             wsp__seg_len(&c, i + 2), a->dtype, prev, a->tag,
                             &rreq[k]));
    }
  }
  CHK(wsp__waitall(comm, 2, sreq, 0));
  if (freq) CHK(wsp__waitall(comm, (int)c.ns, freq, 0));
  goto out;
fail:
  wsp__abandon(comm, rc, 2, rreq, 2, sreq);
  if (freq) wsp__abandon(comm, rc, (int)c.ns, freq, 0, NULL);
out:
#undef SEG
#undef CHK
  free(freq);
  free(mem[0]);
  free(mem[1]);
  return rc;
}
