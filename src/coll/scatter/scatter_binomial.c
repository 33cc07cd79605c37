/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Binomial-tree scatter.
 *
 * The mirror image of binomial gather. Ranks are numbered relative to the
 * root (v = rank - root mod p); in the binomial tree of src/patterns/tree.h
 * the subtree of v is the contiguous range of relative ranks
 * [v, v + size(v)). A non-root rank receives its whole subtree's blocks
 * from its parent in one message (in relative-rank order), keeps the first
 * (its own) and sends each child its subrange at offset (c - v), one after
 * another, largest subtree first. A leaf receives straight into recvbuf.
 *
 * The root sends each child's range straight from sendbuf: relative rank j
 * is absolute block (j + root) mod p, so a range is contiguous in sendbuf
 * unless it wraps past block p-1. At most one child's range wraps; that one
 * is copied into a temporary in two pieces first. Intermediate ranks need a
 * temporary of size(v) blocks.
 *
 * Preconditions: none (any p, any block size).
 */
#include "../coll_internal.h"

#include <stdlib.h>

#include "../../patterns/tree.h"

WSP__COST(scatter, binomial,
          "ceil(lg p).alpha + (p-1).n.beta") {
  return wsp__ceil_log2(s->p) * m->alpha +
         (double)(s->p - 1) * (double)s->bytes * m->beta;
}

int wsp__scatter_binomial(wsp_comm_t *comm, const wsp__coll_args_t *a) {
  int p = comm->size, root = a->root, rc = WSP_OK;
  int v = wsp__tree_rel(comm->rank, root, p);
  size_t n = a->block;
  int size = wsp__binomial_subtree(v, p);
  int parent = wsp__binomial_parent(v, p);
  if (size == 1) /* a leaf */
    return wsp__recv_bytes(comm, a->recvbuf, n, wsp__tree_abs(parent, root, p),
                           a->tag);

  int child[32];
  int nch = wsp__binomial_children(v, p, child, 32);
  /* One child at a time, largest subtree first, as in the binomial
   * broadcast (src/coll/bcast/bcast_binomial.c says why). */
  char *buf = NULL; /* this subtree's blocks, or the root's wrapping range */
  if (v == 0) {
    const char *in = a->sendbuf;
    for (int i = 0; i < nch && rc == WSP_OK; i++) {
      int lo = wsp__tree_abs(child[i], root, p), sz = wsp__binomial_subtree(child[i], p);
      const char *from = in + (size_t)lo * n;
      if (lo + sz > p) { /* wraps: at most one child does */
        buf = malloc((size_t)sz * n);
        if (buf == NULL) {
          rc = wsp__fail(comm, WSP_ERR_NOMEM, "scatter binomial: out of memory");
          break;
        }
        size_t first = (size_t)(p - lo);
        memcpy(buf, from, first * n);
        memcpy(buf + first * n, in, ((size_t)sz - first) * n);
        from = buf;
      }
      rc = wsp__send_bytes(comm, from, (size_t)sz * n, lo, a->tag);
    }
    if (rc == WSP_OK) wsp__copy_bytes(a->recvbuf, in + (size_t)root * n, n);
  } else {
    buf = malloc((size_t)size * n);
    if (buf == NULL)
      return wsp__fail(comm, WSP_ERR_NOMEM, "scatter binomial: out of memory");
    rc = wsp__recv_bytes(comm, buf, (size_t)size * n, wsp__tree_abs(parent, root, p),
                         a->tag);
    for (int i = 0; i < nch && rc == WSP_OK; i++) {
      int sz = wsp__binomial_subtree(child[i], p);
      rc = wsp__send_bytes(comm, buf + (size_t)(child[i] - v) * n, (size_t)sz * n,
                           wsp__tree_abs(child[i], root, p), a->tag);
    }
    if (rc == WSP_OK) wsp__copy_bytes(a->recvbuf, buf, n);
  }
  free(buf);
  return rc;
}
