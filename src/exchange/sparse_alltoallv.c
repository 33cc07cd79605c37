/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * alltoallv — the dense approach that NBX replaces, kept as a baseline and
 * for dense patterns of small messages where MPI's tuned all-to-all wins.
 *
 * How it works. MPI_Alltoall exchanges, for every pair, the size of the
 * message (0 = none, b + 1 = b bytes, so zero-length messages survive) and
 * the sender's message count and bytes; after it every rank knows what it
 * receives and the round's totals, with which `auto` notices a changed
 * pattern. The
 * messages are packed into one buffer and moved by MPI_Alltoallv.
 *
 * MPI_Alltoallv counts and displacements are ints. Each message therefore
 * travels in MPI_Alltoallv only up to L = big_message / p bytes (so no total
 * can pass INT_MAX) and its tail, if any, by MPI_Isend/MPI_Irecv. Sender and
 * receiver both know the message size after the first step, so they agree on
 * the split without further talk. With the default big_message = INT_MAX no
 * message under 2 GiB / p has a tail.
 *
 * Failures. A rank with bad arguments (or without memory to pack what it
 * sends) announces it in place of every size; everybody sees it after the
 * first step and skips the data step. Memory for what a rank receives can
 * only be sought once the sizes are known, and a rank without it could not
 * take part in MPI_Alltoallv, where the others would wait for it: so every
 * allocation the data step needs is made before it, and the agreement
 * (src/core/agree.c) tells every rank whether all of them succeeded. The O(p)
 * arrays live in the communicator's scratch (sparse_internal.h).
 *
 * Cost = alltoall(24.p bytes) + alltoallv(m) ~ 2.(p-1).alpha + (24.p + m).beta
 */
#include "sparse_internal.h"

#include <stdlib.h>
#include <string.h>

#define WSP__A2AV_FAILED UINT64_MAX

int wsp__sparse_alltoallv(wsp__sparse_round_t *r) {
  wsp_comm_t *c = r->comm;
  struct wsp__sparse_comm *sc_ = c->sparse;
  const int p = c->size;
  int rc = WSP_OK;
  int tag = r->parity ? WSP__TAG_SPARSE_TAIL_ODD : WSP__TAG_SPARSE_TAIL_EVEN;
  size_t L = c->cfg.big_message / (size_t)p;
  if (L == 0) L = 1;

  uint64_t *hout = sc_->u64, *hin = sc_->u64 + 3 * (size_t)p;
  int *sc = sc_->cnt, *sd = sc_->cnt + p, *rcn = sc_->cnt + 2 * p, *rd = sc_->cnt + 3 * p;
  const wsp_send_t **to = sc_->to;
  MPI_Request *reqs = sc_->reqs;
  char *sendbuf = NULL, *recvbuf = NULL;
  size_t nreq = 0;
  memset(to, 0, (size_t)p * sizeof *to);

  /* Sizes and the packed send buffer, before anything is said. */
  size_t stotal = 0;
  for (size_t i = 0; i < r->nsends; i++)
    if (r->sends[i].peer != c->rank) to[r->sends[i].peer] = &r->sends[i];
  for (int j = 0; j < p; j++)
    stotal += to[j] ? (to[j]->bytes < L ? to[j]->bytes : L) : 0;
  if (stotal && (sendbuf = wsp__malloc(stotal)) == NULL) {
    r->poisoned = 1;
    wsp__fail(c, WSP_ERR_NOMEM, "alltoallv: no memory to pack %zu bytes", stotal);
  }
  for (int j = 0; j < p; j++) {
    uint64_t *h = &hout[3 * j];
    h[0] = r->poisoned ? WSP__A2AV_FAILED : (to[j] ? (uint64_t)to[j]->bytes + 1 : 0);
    h[1] = r->local.sends;
    h[2] = r->local.bytes;
  }
  WSP__MPI_COLL_GOTO(c, rc, out, Alltoall, hout, 3, MPI_UINT64_T, hin, 3, MPI_UINT64_T, c->mpi);
  r->have_global = 1;
  memset(&r->global, 0, sizeof r->global);
  for (int i = 0; i < p; i++) {
    const uint64_t *h = &hin[3 * i];
    if (h[0] == WSP__A2AV_FAILED) r->remote_failed = 1;
    r->global.sends += h[1];
    r->global.bytes += h[2];
  }
  if (r->remote_failed) goto out;

  size_t off = 0, rtotal = 0, nmsgs = 0;
  for (int j = 0; j < p; j++) {
    size_t b = to[j] ? to[j]->bytes : 0;
    size_t head = b < L ? b : L;
    sc[j] = (int)head;
    sd[j] = (int)off;
    if (head) memcpy(sendbuf + off, to[j]->data, head);
    off += head;
  }
  for (int i = 0; i < p; i++) {
    uint64_t e = hin[3 * i];
    size_t b = e ? (size_t)(e - 1) : 0;
    size_t head = b < L ? b : L;
    rcn[i] = (int)head;
    rd[i] = (int)rtotal;
    rtotal += head;
    nmsgs += e != 0 && i != c->rank;
  }

  /* Everything the data step needs, then one agreement: nobody enters
   * MPI_Alltoallv unless everybody can complete the round. A message with
   * a tail gets its whole buffer now; its head is copied in afterwards. */
  int nomem = 0;
  if (rtotal) {
    if ((recvbuf = wsp__malloc(rtotal)) == NULL) {
      nomem = 1;
    } else if (wsp__sparse_own(r, recvbuf) != WSP_OK) {
      free(recvbuf);
      recvbuf = NULL;
      nomem = 1;
    }
  }
  if (!nomem && wsp__sparse_reserve(r, nmsgs, nmsgs) != WSP_OK) nomem = 1;
  for (int i = 0; i < p && !nomem; i++) {
    uint64_t e = hin[3 * i];
    size_t b = e ? (size_t)(e - 1) : 0;
    if (e == 0 || i == c->rank) continue;
    void *data = b ? recvbuf + rd[i] : NULL;
    if (b > L) {
      char *full = wsp__malloc(b);
      if (full == NULL || wsp__sparse_own(r, full) != WSP_OK) {
        free(full);
        nomem = 1;
        break;
      }
      data = full;
    }
    wsp__sparse_append(r, i, b, data); /* reserved above: cannot fail */
  }
  if (nomem) {
    r->poisoned = 1;
    wsp__fail(c, WSP_ERR_NOMEM, "alltoallv: no memory to receive %zu bytes", rtotal);
  }
  wsp__agree_t ag = {.what = "wsp_sparse_exchange (alltoallv)",
                     .status = r->poisoned ? WSP_ERR_NOMEM : WSP_OK};
  if ((rc = wsp__agree(c, &ag)) != WSP_OK) {
    /* A timeout fails the round; a failure anywhere skips the data step
     * everywhere. */
    if (rc != WSP_ERR_TIMEOUT) {
      r->remote_failed = 1;
      rc = WSP_OK;
    }
    goto out;
  }

  WSP__MPI_COLL_GOTO(c, rc, out, Alltoallv, sendbuf, sc, sd, MPI_BYTE, recvbuf, rcn, rd,
                     MPI_BYTE, c->mpi);
  /* Tails go directly to their final place, after their heads. */
  for (size_t k = 0; k < r->count; k++) {
    wsp_recv_t *m = &r->msgs[k];
    if (m->bytes <= L) continue;
    memcpy(m->data, recvbuf + rd[m->source], L);
    if ((rc = wsp__irecv_bytes(c, (char *)m->data + L, m->bytes - L, m->source, tag,
                               &reqs[nreq])) != WSP_OK)
      goto out;
    nreq++;
  }
  for (int j = 0; j < p; j++) {
    if (!to[j] || to[j]->bytes <= L) continue;
    if ((rc = wsp__isend_bytes(c, (const char *)to[j]->data + L, to[j]->bytes - L, j, tag,
                               0, &reqs[nreq])) != WSP_OK)
      goto out;
    nreq++;
  }
  if (nreq) rc = wsp__waitall(c, (int)nreq, reqs, 0);

out:
  free(sendbuf);
  return rc;
}
