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
 * A rank with bad arguments announces it in place of every size; everybody
 * sees it after the first step and skips the data step.
 *
 * Cost = alltoall(24.p bytes) + alltoallv(m) ~ 2.(p-1).alpha + (24.p + m).beta
 */
#include "sparse_internal.h"

#include <stdlib.h>
#include <string.h>

#define WSP__A2AV_FAILED UINT64_MAX

int wsp__sparse_alltoallv(wsp__sparse_round_t *r) {
  wsp_comm_t *c = r->comm;
  const int p = c->size;
  int rc = WSP_OK;
  int tag = r->parity ? WSP__TAG_SPARSE_TAIL_ODD : WSP__TAG_SPARSE_TAIL_EVEN;
  size_t L = c->cfg.big_message / (size_t)p;
  if (L == 0) L = 1;

  uint64_t *hout = calloc((size_t)p * 3, sizeof *hout);
  uint64_t *hin = malloc((size_t)p * 3 * sizeof *hin);
  int *cnt = malloc((size_t)p * 4 * sizeof *cnt); /* sc, sd, rc, rd */
  const wsp_send_t **to = calloc((size_t)p, sizeof *to);
  char *sendbuf = NULL, *recvbuf = NULL;
  MPI_Request *reqs = NULL;
  size_t nreq = 0;
  if (!hout || !hin || !cnt || !to) {
    rc = wsp__fail(c, WSP_ERR_NOMEM, "alltoallv: cannot allocate %d sizes", p);
    goto out;
  }
  int *sc = cnt, *sd = cnt + p, *rcn = cnt + 2 * p, *rd = cnt + 3 * p;

  /* Sizes and the packed send buffer, before anything is said. */
  size_t stotal = 0;
  for (size_t i = 0; i < r->nsends; i++)
    if (r->sends[i].peer != c->rank) to[r->sends[i].peer] = &r->sends[i];
  for (int j = 0; j < p; j++)
    stotal += to[j] ? (to[j]->bytes < L ? to[j]->bytes : L) : 0;
  if (stotal && (sendbuf = malloc(stotal)) == NULL) {
    r->poisoned = 1;
    wsp__fail(c, WSP_ERR_NOMEM, "alltoallv: no memory to pack %zu bytes",
              stotal);
  }
  for (int j = 0; j < p; j++) {
    uint64_t *h = &hout[3 * j];
    h[0] = r->poisoned ? WSP__A2AV_FAILED
                       : (to[j] ? (uint64_t)to[j]->bytes + 1 : 0);
    h[1] = r->local.sends;
    h[2] = r->local.bytes;
  }
  WSP__MPI_GOTO(c, MPI_Alltoall(hout, 3, MPI_UINT64_T, hin, 3, MPI_UINT64_T,
                                c->mpi),
                rc, out);
  r->have_global = 1;
  memset(&r->global, 0, sizeof r->global);
  for (int i = 0; i < p; i++) {
    const uint64_t *h = &hin[3 * i];
    if (h[0] == WSP__A2AV_FAILED) r->remote_failed = 1;
    r->global.sends += h[1];
    r->global.bytes += h[2];
  }
  if (r->remote_failed) goto out;

  size_t off = 0, rtotal = 0;
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
  }
  if (rtotal && (recvbuf = malloc(rtotal)) == NULL) {
    rc = wsp__fail(c, WSP_ERR_NOMEM,
                   "alltoallv: no memory to receive %zu bytes; this rank "
                   "cannot complete the round",
                   rtotal);
    goto out;
  }
  if (recvbuf && wsp__sparse_own(r, recvbuf) != WSP_OK) {
    free(recvbuf);
    recvbuf = NULL;
    rc = wsp__fail(c, WSP_ERR_NOMEM, "alltoallv: out of memory");
    goto out;
  }
  WSP__MPI_GOTO(c, MPI_Alltoallv(sendbuf, sc, sd, MPI_BYTE, recvbuf, rcn, rd,
                                 MPI_BYTE, c->mpi),
                rc, out);

  /* Messages, in source order; tails go directly to their final place. */
  reqs = malloc((size_t)p * 2 * sizeof *reqs);
  if (reqs == NULL) {
    rc = wsp__fail(c, WSP_ERR_NOMEM, "alltoallv: out of memory");
    goto out;
  }
  for (int i = 0; i < p; i++) {
    uint64_t e = hin[3 * i];
    if (e == 0 || i == c->rank) continue;
    size_t b = (size_t)(e - 1);
    void *data = b ? recvbuf + rd[i] : NULL;
    if (b > L) {
      char *full = malloc(b);
      if (full == NULL || wsp__sparse_own(r, full) != WSP_OK) {
        free(full);
        rc = wsp__fail(c, WSP_ERR_NOMEM,
                       "alltoallv: no memory for a %zu-byte message", b);
        goto out;
      }
      memcpy(full, recvbuf + rd[i], L);
      if ((rc = wsp__irecv_bytes(c, full + L, b - L, i, tag, &reqs[nreq])) !=
          WSP_OK)
        goto out;
      nreq++;
      data = full;
    }
    if (wsp__sparse_append(r, i, b, data) != WSP_OK) {
      rc = wsp__fail(c, WSP_ERR_NOMEM, "alltoallv: out of memory");
      goto out;
    }
  }
  for (int j = 0; j < p; j++) {
    if (!to[j] || to[j]->bytes <= L) continue;
    if ((rc = wsp__isend_bytes(c, (const char *)to[j]->data + L,
                               to[j]->bytes - L, j, tag, 0, &reqs[nreq])) !=
        WSP_OK)
      goto out;
    nreq++;
  }
  if (nreq)
    WSP__MPI_GOTO(c, MPI_Waitall((int)nreq, reqs, MPI_STATUSES_IGNORE), rc, out);

out:
  free(hout);
  free(hin);
  free(cnt);
  free(to);
  free(sendbuf);
  free(reqs);
  return rc;
}
