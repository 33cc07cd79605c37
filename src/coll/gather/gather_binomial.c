/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Binomial-tree gather.
 *
 * Ranks are numbered relative to the root (v = rank - root mod p) and form
 * the binomial tree of src/patterns/tree.h, in which the subtree of v is
 * the contiguous range of relative ranks [v, v + size(v)). Each rank
 * collects its subtree's blocks in relative-rank order: its own block
 * first, then each child's whole subtree, received in one message straight
 * into its offset (c - v). It then sends the lot to its parent in one
 * message. Leaves send their block from sendbuf without a copy.
 *
 * The root receives into recvbuf directly: relative rank j belongs at
 * absolute block (j + root) mod p, so a child's range lands in place unless
 * it wraps past block p-1. At most one child's range wraps; that one goes
 * through a temporary buffer and is copied in two pieces. Intermediate
 * ranks need a temporary of size(v) blocks.
 *
 * ceil(lg p) rounds, and every block crosses one link per tree level it
 * climbs, but the root's link carries p-1 blocks in total.
 *
 * Preconditions: none (any p, any block size).
 */
#include "../coll_internal.h"

#include <stdlib.h>

#include "../../patterns/tree.h"

WSP__COST(gather, binomial,
          "ceil(lg p).alpha + (p-1).n.beta") {
  return wsp__ceil_log2(s->p) * m->alpha +
         (double)(s->p - 1) * (double)s->bytes * m->beta;
}

int wsp__gather_binomial(wsp_comm_t *comm, const wsp__coll_args_t *a) {
  int p = comm->size, root = a->root, rc = WSP_OK;
  int v = wsp__tree_rel(comm->rank, root, p);
  size_t n = a->block;
  int size = wsp__binomial_subtree(v, p);
  int parent = wsp__binomial_parent(v, p);
  if (size == 1) /* a leaf: its block goes up as it is */
    return wsp__send_bytes(comm, a->sendbuf, n, wsp__tree_abs(parent, root, p),
                           a->tag);

  int child[32];
  int nch = wsp__binomial_children(v, p, child, 32);
  MPI_Request req[32];
  char *buf = NULL, *wrap = NULL; /* collection buffer; the root's wrapping child */
  int wrap_lo = 0, wrap_n = 0;    /* its first absolute block and block count */
  if (v == 0) {
    char *out = a->recvbuf;
    wsp__copy_bytes(out + (size_t)root * n, a->sendbuf, n);
    for (int i = 0; i < nch; i++) {
      int lo = wsp__tree_abs(child[i], root, p), sz = wsp__binomial_subtree(child[i], p);
      if (lo + sz > p) { /* wraps: at most one child does */
        wrap = malloc((size_t)sz * n);
        if (wrap == NULL) {
          rc = wsp__fail(comm, WSP_ERR_NOMEM, "gather binomial: out of memory");
          nch = i;
          break;
        }
        wrap_lo = lo, wrap_n = sz;
        rc = wsp__irecv_typed(comm, wrap, (size_t)sz * n, MPI_BYTE, lo, a->tag, &req[i]);
      } else {
        rc = wsp__irecv_typed(comm, out + (size_t)lo * n, (size_t)sz * n, MPI_BYTE,
                              lo, a->tag, &req[i]);
      }
      if (rc != WSP_OK) {
        nch = i;
        break;
      }
    }
  } else {
    buf = malloc((size_t)size * n);
    if (buf == NULL)
      return wsp__fail(comm, WSP_ERR_NOMEM, "gather binomial: out of memory");
    wsp__copy_bytes(buf, a->sendbuf, n);
    for (int i = 0; i < nch; i++) {
      int sz = wsp__binomial_subtree(child[i], p);
      rc = wsp__irecv_typed(comm, buf + (size_t)(child[i] - v) * n, (size_t)sz * n,
                            MPI_BYTE, wsp__tree_abs(child[i], root, p), a->tag, &req[i]);
      if (rc != WSP_OK) {
        nch = i;
        break;
      }
    }
  }
  if (rc != WSP_OK) {
    wsp__abandon(comm, rc, nch, req, 0, NULL);
    goto out;
  }
  if ((rc = wsp__waitall(comm, nch, req, 0))) goto out;
  if (v == 0) {
    if (wrap) {
      char *out = a->recvbuf;
      size_t first = (size_t)(p - wrap_lo);
      memcpy(out + (size_t)wrap_lo * n, wrap, first * n);
      memcpy(out, wrap + first * n, ((size_t)wrap_n - first) * n);
    }
  } else {
    rc = wsp__send_bytes(comm, buf, (size_t)size * n, wsp__tree_abs(parent, root, p),
                         a->tag);
  }
out:
  free(buf);
  free(wrap);
  return rc;
}
