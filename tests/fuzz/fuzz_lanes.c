/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fuzz target: what the lanes read from another process (src/p2p): the
 * frame parser of a lane that is up (wsp__lane_read: headers, payload into
 * the user's buffers, sealed records), and the higher rank's greeting of a
 * connection (wsp__hs_greet_event: HELLO, PROOF).
 *
 * The engine runs for real on socket pairs instead of TCP connections;
 * this program writes the input into the other ends. Input:
 *
 *   byte 0        scenario (bits 0-2) and sealed lanes (bit 3):
 *                   0 ready, receiving: two receives posted (the first
 *                     one's size from bytes 1-2)
 *                   1 ready, sending: two sends posted, waiting for CTS
 *                   2 probing, the lower rank (the streamer)
 *                   3 probing, the higher rank (the measurer, phase 1)
 *                   4 lanes forced, the higher rank before the verdict
 *                   5 a connection being greeted, for a pair being set up
 *   then segments [lane][length][bytes]: the bytes go to that lane (lane
 *   0xFF in scenario 5: the greeted connection; 0xFE: a correct PROOF for
 *   the challenge it got, made here with the pair's keys, so that the
 *   fuzzer reaches the lanes behind the handshake). On sealed lanes each
 *   segment is sealed here as one record, as a peer would.
 *
 * Must hold, besides no crash, no leak and no access outside a buffer:
 * the pair's state is one of its states; a receive never counts more
 * bytes than its size, and one completed without error has them all; a
 * lane's payload pointer stays inside its receive's buffer; the CTS list
 * stays within its bound; k stays within the lanes.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "p2p/striped_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum { NL = 3 }; /* the control lane and two data lanes */

typedef struct {
  wsp_comm_t comm;
  wsp__stripe_t st;
  wsp__pair_t *pair[2];
  wsp__pair_t *pr;
  int far[NL + 1];    /* the other end of each lane's socket pair; [NL] the greeting's */
  wsp__seal_t tx[NL]; /* the peer's sealing, sealed lanes only */
  wsp__sreq_t *req[2];
  unsigned char *buf[2];
} rig_t;

static const wsp__keys_t keys = {.auth = {1, 2, 3}, .up = {4, 5, 6}, .down = {7, 8, 9}};

static int pair_of_sockets(int *mine, int *far) {
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv) != 0) return -1;
  *mine = sv[0];
  *far = sv[1];
  return 0;
}

static wsp__sreq_t *post(rig_t *g, int is_send, size_t n, int tag, int i) {
  wsp__sreq_t *r = calloc(1, sizeof *r);
  g->buf[i] = malloc(n);
  r->st = &g->st;
  r->pair = g->pr;
  r->is_send = is_send;
  r->peer = g->pr->peer;
  r->tag = tag;
  r->buf = g->buf[i];
  r->size = n;
  r->mreq = MPI_REQUEST_NULL;
  g->st.live++;
  g->req[i] = r;
  wsp__lanes_start(&g->st, r);
  return r;
}

static int setup(rig_t *g, int scenario, int sealed, const uint8_t *data, size_t size) {
  memset(g, 0, sizeof *g);
  for (int i = 0; i <= NL; i++) g->far[i] = -1;
  wsp_comm_t *c = &g->comm;
  wsp_config_init(&c->cfg);
  c->cfg.log_level = WSP_LOG_OFF;
  c->cfg.p2p_max_lanes = NL - 1;
  c->cfg.p2p_lanes = scenario == 4 || scenario == 5 ? NL - 1 : 0;
  c->cfg.p2p_probe_ms = 10;
  c->cfg.p2p_encrypt = sealed;
  c->size = 2;
  c->rank = scenario == 2 ? 0 : 1; /* the streamer is the lower rank */
  c->mpi = MPI_COMM_NULL;
  wsp__stripe_t *st = &g->st;
  st->comm = c;
  st->pair = g->pair;
  st->scratch = malloc(WSP__SCRATCH);
  st->zeros = calloc(1, WSP__PROBE_FRAME);
  st->lowat = 65536;
  st->addrs_known = 1;
  wsp__pair_t *pr = calloc(1, sizeof *pr);
  g->pr = pr;
  pr->peer = 1 - c->rank;
  pr->lower = c->rank < pr->peer;
  g->pair[pr->peer] = pr;
  pr->xreq[0] = pr->xreq[1] = pr->vreq = MPI_REQUEST_NULL;
  for (int i = 0; i <= WSP__LANES_MAX; i++) pr->lane[i].fd = -1;
  pr->nlanes = NL;
  pr->k = NL - 1;
  pr->threshold = 65536;
  pr->mine.encrypt = (uint32_t)sealed;
  pr->keys = keys;
  if (scenario == 5) {
    /* A pair being set up, no lane up yet; a connection from its address. */
    pr->state = WSP__PAIR_CONNECT;
    pr->src[0] = 0x0100007f;
    pr->nsrc = 1;
    int fd;
    if (pair_of_sockets(&fd, &g->far[NL]) != 0) return -1;
    st->greet = calloc(1, sizeof *st->greet);
    st->greet_cap = 1;
    st->ngreet = 1;
    st->greet[0] = (struct wsp__greet){.fd = fd, .src = 0x0100007f, .rank = -1,
                                        .since = wsp__now()};
    return 0;
  }
  for (int i = 0; i < NL; i++) {
    int fd;
    if (pair_of_sockets(&fd, &g->far[i]) != 0) return -1;
    wsp__lane_init(&pr->lane[i], fd);
    if (sealed && (wsp__lane_seal(&pr->lane[i], &keys, pr->lower, (uint32_t)i) != 0 ||
                   wsp__seal_init(&g->tx[i], pr->lower ? keys.down : keys.up, (uint32_t)i, 1) != 0))
      return -1;
  }
  pr->nconn = NL;
  switch (scenario) {
  case 0: {
    pr->state = WSP__PAIR_READY;
    size_t n = 1 + (size >= 2 ? ((size_t)data[0] << 8 | data[1]) * 5 : 70000);
    post(g, 0, n, 3, 0);
    post(g, 0, 70000, 4, 1);
    break;
  }
  case 1:
    pr->state = WSP__PAIR_READY;
    post(g, 1, 70000, 3, 0);
    post(g, 1, 200000, 3, 1);
    break;
  case 2:
    pr->state = WSP__PAIR_PROBE;
    break;
  case 3:
    pr->state = WSP__PAIR_PROBE;
    pr->probe.phase = 1;
    pr->probe.lanes = 1;
    pr->probe.streaming = 1;
    pr->probe.t_go = wsp__now();
    break;
  default:
    pr->state = WSP__PAIR_CONNECT;
    break;
  }
  return 0;
}

static void teardown(rig_t *g) {
  wsp__pair_t *pr = g->pr;
  for (int i = 0; i < NL; i++) {
    wsp__lane_release(&pr->lane[i], 0);
    if (g->tx[i].ctx) wsp__seal_free(&g->tx[i]);
  }
  for (int i = 0; i <= NL; i++)
    if (g->far[i] >= 0) close(g->far[i]);
  for (size_t i = 0; i < g->st.ngreet; i++) close(g->st.greet[i].fd);
  for (int i = 0; i < 2; i++)
    if (g->req[i]) {
      free(g->req[i]->have);
      free(g->req[i]);
      free(g->buf[i]);
    }
  free(pr->cts);
  free(pr->ctl);
  free(pr);
  free(g->st.greet);
  free(g->st.scratch);
  free((void *)g->st.zeros);
}

static void check(const rig_t *g) {
  const wsp__pair_t *pr = g->pr;
  if ((int)pr->state < WSP__PAIR_NONE || pr->state > WSP__PAIR_FAILED) abort();
  if (pr->ncts > WSP__CTS_MAX || pr->k < 1 || pr->k > NL - 1) abort();
  if (pr->probe.phase < 0 || pr->probe.phase > 3) abort();
  for (int i = 0; i < 2; i++) {
    const wsp__sreq_t *r = g->req[i];
    if (r == NULL || r->is_send) continue;
    if (r->got > r->size) abort();
    if (r->done && r->status == WSP_OK && r->got != r->size) abort();
  }
  for (int i = 0; i < NL; i++) {
    const wsp__lane_t *l = &pr->lane[i];
    if (l->ihdr_got > sizeof l->ihdr || l->itag_got > WSP__TAG) abort();
    if (l->ireading && l->ipay && l->ireq) {
      const unsigned char *b = l->ireq->buf;
      if (l->ipay < b || l->ipay + l->ipay_left > b + l->ireq->size) abort();
    }
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  const int scenario = (data[0] & 7) % 6, sealed = (data[0] >> 3) & 1;
  data++, size--;
  rig_t g;
  if (setup(&g, scenario, sealed, data, size) != 0) {
    teardown(&g);
    return 0;
  }
  wsp__stripe_t *st = &g.st;
  wsp__pair_t *pr = g.pr;
  size_t at = scenario == 0 && size >= 2 ? 2 : 0;
  unsigned char rec[256 + WSP__TAG];
  while (at + 2 <= size) {
    const int lane = data[at];
    size_t n = data[at + 1];
    at += 2;
    if (n > size - at) n = size - at;
    const uint8_t *seg = data + at;
    at += n;
    if (scenario == 5 && lane >= 0xFE) {
      if (st->ngreet == 0) continue;
      if (lane == 0xFE) {
        /* The challenge the connection got, answered with the right key. */
        unsigned char b[WSP__HS_BUF];
        wsp__frame_t f;
        if (recv(g.far[NL], b, sizeof b, 0) != (ssize_t)sizeof b || wsp__frame_decode(b, &f) != 0 ||
            f.type != WSP__F_CHAL || st->greet[0].rank < 0)
          continue;
        unsigned char mac[WSP__MAC], p[WSP__FRAME_HDR + WSP__MAC];
        wsp__sec_proof(&keys, 'C', 0, 1, f.aux, NL, st->greet[0].nc, b + WSP__FRAME_HDR, mac);
        wsp__frame_t pf = {.type = WSP__F_PROOF, .aux = f.aux, .len = WSP__MAC};
        wsp__frame_encode(&pf, p);
        memcpy(p + WSP__FRAME_HDR, mac, sizeof mac);
        const uint32_t li = f.aux;
        if (send(g.far[NL], p, sizeof p, MSG_NOSIGNAL) != (ssize_t)sizeof p) continue;
        wsp__hs_greet_event(st, 0);
        if (pr->lane[li].fd >= 0) { /* attached: the far end now serves that lane */
          g.far[li] = g.far[NL];
          g.far[NL] = -1;
          if (sealed) wsp__seal_init(&g.tx[li], keys.up, li, 1);
        }
      } else {
        if (send(g.far[NL], seg, n, MSG_NOSIGNAL) < 0) continue;
        wsp__hs_greet_event(st, 0);
      }
      continue;
    }
    const int li = lane % NL;
    if (g.far[li] < 0 || pr->lane[li].fd < 0) continue;
    const unsigned char *out = seg;
    size_t len = n;
    if (sealed && g.tx[li].ctx) { /* one record, as a peer's engine seals */
      if (wsp__seal(&g.tx[li], seg, rec, n, rec + n) != 0) abort();
      out = rec;
      len = n + WSP__TAG;
    }
    if (send(g.far[li], out, len, MSG_NOSIGNAL) != (ssize_t)len) continue;
    wsp__lane_read(st, pr, li);
    check(&g);
  }
  check(&g);
  teardown(&g);
  return 0;
}
