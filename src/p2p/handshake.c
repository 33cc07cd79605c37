/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A pair's lanes coming up (the set-up as a whole is outlined in
 * striped_internal.h; the keys come from secure.c).
 *
 * The lower rank connects every lane to the first address the higher rank
 * offered and, on each, proves itself and asks for proof:
 *
 *   lower                                   higher
 *   HELLO  lane, lanes, rank, challenge Nc  ->
 *                                          <-  CHAL   challenge Na, HMAC('A', .., Nc, Na)
 *   PROOF  HMAC('C', .., Nc, Na)            ->
 *                                          <-  ACK    the lane is up
 *
 * The proofs are keyed with the pair's proof key, which only the two ranks
 * have, and cover both fresh challenges, the two ranks and the lane: a
 * recorded exchange replayed against a new challenge proves nothing. The
 * lower rank counts a lane as up only at the ACK, which the higher rank
 * sends after it took the lane. A CHAL that does not prove the peer means
 * the address reaches someone else (another process on that port): the
 * next address is tried. A lane the higher rank closes before its ACK is
 * connected again (its pending connections may have been over the cap
 * while a stranger flooded the port), a few times per address. Whatever
 * fails, and the 15-s deadline, ends in the lower rank's verdict over MPI
 * (wsp__hs_failed): both ends then use MPI for the pair.
 *
 * The higher rank listens only while it sets a pair up (wsp__hs_idle
 * closes the listeners as soon as none is), on the addresses it offered,
 * and drops at once, with a reset and nothing said: a connection from an
 * address that no peer being set up offered; one whose first frame is not
 * a HELLO for a lane still missing of a pair being set up with that rank,
 * from that rank's addresses, with the pair's number of lanes; one whose
 * proof is wrong; one that took longer than WSP__HELLO_SECONDS to say
 * HELLO or the connect deadline to prove itself. Pending connections are
 * capped (twice the lanes still missing, plus a few): at the cap, a new
 * one takes the place of the oldest that has not said HELLO, and a HELLO
 * for a lane that already has WSP__CLAIMS_MAX connections waiting for
 * their proof takes the place of the oldest of them. A real lane says
 * HELLO as it connects and proves itself one round trip later, so a flood
 * of silent connections or of claims cannot keep it out for long; a
 * stranger never learns anything but a challenge and an HMAC over it.
 */
#define _DEFAULT_SOURCE 1
#include "striped_internal.h"

#include "tags.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

/* Lane connects an address may see closed before their ACK, per lane of
 * the pair, before the next address is tried. */
#define WSP__RETRIES_PER_LANE 4
/* Connections that said HELLO for one lane and wait for their proof. */
#define WSP__CLAIMS_MAX 4

/* A handshake frame on a fresh connection: its few bytes fit the socket's
 * buffer at once, or the connection is broken. */
static int wsp__send_now(int fd, const unsigned char *b, size_t n) {
  return send(fd, b, n, MSG_NOSIGNAL | MSG_DONTWAIT) == (ssize_t)n ? 0 : -1;
}

static void wsp__frame_with(unsigned char *out, const wsp__frame_t *f, const unsigned char *a,
                            size_t na, const unsigned char *b, size_t nb) {
  wsp__frame_encode(f, out);
  if (na) memcpy(out + WSP__FRAME_HDR, a, na);
  if (nb) memcpy(out + WSP__FRAME_HDR + na, b, nb);
}

/* ---- the lower rank ---- */

/* The lower rank's verdict on the lanes to the higher one, over MPI: 0,
 * or -1 when it could not be sent (the pair failed). */
static int wsp__send_verdict(wsp__stripe_t *st, wsp__pair_t *pr, int status) {
  pr->verdict[0] = (uint32_t)(-status);
  int mrc = MPI_Isend(pr->verdict, 2, MPI_UINT32_T, pr->peer, WSP__TAG_STRIPE_SETUP,
                      st->comm->mpi, &pr->vreq);
  if (mrc == MPI_SUCCESS) return 0;
  wsp__pair_fail(st, pr, WSP_ERR_MPI, "the set-up's verdict to rank %d could not be sent",
                 pr->peer);
  return -1;
}

void wsp__hs_failed(wsp__stripe_t *st, wsp__pair_t *pr, int status, const char *fmt, ...) {
  char why[160];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(why, sizeof why, fmt, ap);
  va_end(ap);
  for (int i = 0; i < pr->nlanes; i++) wsp__lane_release(&pr->lane[i], 1);
  if (wsp__send_verdict(st, pr, status) == 0) wsp__pair_fallback(st, pr, "%s", why);
}

/* The source for connects to addr: the system's choice when it is an
 * address this rank offered (the higher rank checks), else the first one
 * offered (WSP_P2P_IF named other interfaces than the route's). */
static uint32_t wsp__source_for(const wsp__pair_t *pr, uint32_t addr) {
  uint32_t s = wsp__lane_route_source(addr);
  for (uint32_t i = 0; i < pr->mine.naddr; i++)
    if (pr->mine.addr[i] == s && (pr->same_host || !pr->mine.local[i])) return 0;
  for (uint32_t i = 0; i < pr->mine.naddr; i++)
    if (pr->same_host || !pr->mine.local[i]) return pr->mine.addr[i];
  return 0;
}

/* (Re)starts lane li's connect to the current address; -1 when the
 * socket could not even be made. */
static int wsp__lane_dial(wsp__pair_t *pr, int li) {
  wsp__lane_t *l = &pr->lane[li];
  wsp__lane_release(l, 1);
  uint32_t a = pr->theirs.addr[pr->addr_idx];
  int fd = wsp__lane_connect(a, pr->theirs.port[pr->addr_idx], wsp__source_for(pr, a));
  wsp__lane_init(l, fd);
  l->hs = fd >= 0 ? WSP__HS_CONNECTING : WSP__HS_UP;
  return fd >= 0 ? 0 : -1;
}

static const char *wsp__addr_text(uint32_t a, char *buf, size_t n) {
  struct in_addr ia = {.s_addr = a};
  if (inet_ntop(AF_INET, &ia, buf, (socklen_t)n) == NULL) snprintf(buf, n, "?");
  return buf;
}

/* Connects every lane to the first address, from addr_idx on, where the
 * connects can start. */
static void wsp__try_address(wsp__stripe_t *st, wsp__pair_t *pr) {
  for (;; pr->addr_idx++) {
    if (pr->addr_idx >= (int)pr->theirs.naddr) {
      wsp__hs_failed(st, pr, WSP_ERR_CONN,
                   "no lane could be connected to rank %d on any of its %u addresses", pr->peer,
                   pr->theirs.naddr);
      return;
    }
    /* Loopback reaches only this host's own listeners. */
    uint32_t h = ntohl(pr->theirs.addr[pr->addr_idx]);
    if (!pr->same_host && (h >> 24) == 127) continue;
    int ok = 1;
    for (int i = 0; i < pr->nlanes && ok; i++) ok = wsp__lane_dial(pr, i) == 0;
    if (ok) break;
    for (int i = 0; i < pr->nlanes; i++) wsp__lane_release(&pr->lane[i], 1);
  }
  pr->nconn = 0;
  pr->retries = 0;
}

static void wsp__next_address(wsp__stripe_t *st, wsp__pair_t *pr, const char *why) {
  char a[32];
  wsp__log(st->comm, WSP_LOG_INFO, "striped: rank %d's address %s: %s; trying the next", pr->peer,
           wsp__addr_text(pr->theirs.addr[pr->addr_idx], a, sizeof a), why);
  for (int i = 0; i < pr->nlanes; i++) wsp__lane_release(&pr->lane[i], 1);
  pr->addr_idx++;
  wsp__try_address(st, pr);
}

void wsp__hs_connect(wsp__stripe_t *st, wsp__pair_t *pr) {
  pr->connect_at = 0;
  pr->addr_idx = 0;
  pr->connect_deadline = wsp__now() + WSP__CONNECT_SECONDS;
  wsp__try_address(st, pr);
}

/* Lane li was closed before its ACK: connected again, a few times. */
static void wsp__lane_retry(wsp__stripe_t *st, wsp__pair_t *pr, int li) {
  if (++pr->retries > WSP__RETRIES_PER_LANE * pr->nlanes) {
    wsp__next_address(st, pr, "the listener kept closing the lanes before they were up");
    return;
  }
  if (wsp__lane_dial(pr, li) != 0) wsp__next_address(st, pr, strerror(errno));
}

/* The lower rank's next handshake frame on lane li (f->len bytes of
 * payload), then the lane waits in stage `next`; a lane whose socket does
 * not take it is connected again. */
static void wsp__hs_send(wsp__stripe_t *st, wsp__pair_t *pr, int li, const wsp__frame_t *f,
                         const unsigned char *pay, wsp__hs_t next) {
  unsigned char b[WSP__HS_BUF];
  wsp__frame_with(b, f, pay, (size_t)f->len, NULL, 0);
  if (wsp__send_now(pr->lane[li].fd, b, WSP__FRAME_HDR + (size_t)f->len) != 0) {
    wsp__lane_retry(st, pr, li);
    return;
  }
  pr->lane[li].hs = next;
  pr->lane[li].hsgot = 0;
}

void wsp__hs_lane_event(wsp__stripe_t *st, wsp__pair_t *pr, int li) {
  wsp__lane_t *l = &pr->lane[li];
  const int rank = st->comm->rank;
  if (l->hs == WSP__HS_CONNECTING) {
    int c = wsp__lane_connected(l->fd);
    if (c == 0) return;
    if (c < 0) {
      wsp__next_address(st, pr, strerror(errno));
      return;
    }
    wsp__lane_options(l->fd, st->lowat);
    if (wsp__sec_random(l->nc, sizeof l->nc) != 0) {
      wsp__hs_failed(st, pr, WSP_ERR_UNSUPPORTED, "no randomness for a lane's challenge");
      return;
    }
    wsp__frame_t f = wsp__frame_hello(li, pr->nlanes, rank);
    wsp__hs_send(st, pr, li, &f, l->nc, WSP__HS_HELLO);
    return;
  }
  /* The answer the listener owes: a CHAL after our HELLO, an ACK after our
   * PROOF, exactly as their makers make them, payload included. */
  const wsp__frame_t expect = l->hs == WSP__HS_HELLO ? wsp__frame_chal(li) : wsp__frame_ack(li);
  const size_t want = WSP__FRAME_HDR + (size_t)expect.len;
  ssize_t n = recv(l->fd, l->hsbuf + l->hsgot, want - l->hsgot, 0);
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return;
  if (n <= 0) {
    wsp__lane_retry(st, pr, li);
    return;
  }
  l->hsgot += (size_t)n;
  if (l->hsgot < want) return;
  wsp__frame_t f;
  const int stranger = wsp__frame_decode(l->hsbuf, &f) != 0 || !wsp__frame_equal(&f, &expect);
  if (stranger) {
    wsp__next_address(st, pr, "something that is not a lane's listener answered");
    return;
  }
  if (l->hs == WSP__HS_HELLO) {
    const unsigned char *na = l->hsbuf + WSP__FRAME_HDR;
    unsigned char mac[WSP__MAC];
    wsp__sec_proof(&pr->keys, 'A', rank, pr->peer, (uint32_t)li, (uint32_t)pr->nlanes, l->nc, na,
                   mac);
    if (!wsp__sec_equal(na + WSP__CHALLENGE, mac, WSP__MAC)) {
      wsp__next_address(st, pr, "the listener there could not prove it is the peer");
      return;
    }
    wsp__sec_proof(&pr->keys, 'C', rank, pr->peer, (uint32_t)li, (uint32_t)pr->nlanes, l->nc, na,
                   mac);
    wsp__frame_t p = wsp__frame_proof(li);
    wsp__hs_send(st, pr, li, &p, mac, WSP__HS_PROOF);
    return;
  }
  /* ACK: the lane is up; its frames are sealed from here on. */
  l->hs = WSP__HS_UP;
  if (pr->mine.encrypt && wsp__lane_seal(l, &pr->keys, 1, (uint32_t)li) != 0) {
    wsp__hs_failed(st, pr, WSP_ERR_NOMEM, "a lane's cipher could not be set up");
    return;
  }
  if (++pr->nconn < pr->nlanes) return;
  if (wsp__send_verdict(st, pr, WSP_OK) != 0) return;
  wsp__sec_cleanse(pr->keys.auth, sizeof pr->keys.auth); /* no more proofs */
  wsp__pair_connected(st, pr);
}

/* ---- the higher rank ---- */

int wsp__hs_accepting(const wsp__stripe_t *st) {
  for (int p = 0; p < st->comm->size; p++) {
    const wsp__pair_t *pr = st->pair[p];
    if (pr && !pr->lower && pr->state == WSP__PAIR_CONNECT) return 1;
  }
  return 0;
}

int wsp__hs_listen(wsp__stripe_t *st, wsp__pair_t *pr) {
  uint32_t n = 0;
  for (uint32_t i = 0; i < pr->mine.naddr; i++) {
    uint32_t a = pr->mine.addr[i];
    int j = 0;
    while (j < st->nlst && st->lst[j].addr != a) j++;
    if (j == st->nlst) {
      uint16_t port = 0;
      int fd = wsp__lane_listen(a, &port);
      if (fd < 0) {
        char t[32];
        wsp__log(st->comm, WSP_LOG_INFO, "striped: cannot listen on %s: %s",
                 wsp__addr_text(a, t, sizeof t), strerror(errno));
        continue; /* not offered */
      }
      st->lst[st->nlst++] = (struct wsp__listener){.fd = fd, .addr = a, .port = port};
    }
    pr->mine.addr[n] = a;
    pr->mine.local[n] = pr->mine.local[i];
    pr->mine.port[n] = st->lst[j].port;
    n++;
  }
  pr->mine.naddr = n;
  return n > 0 ? 0 : -1;
}

static void wsp__refuse(wsp__stripe_t *st, int fd, uint32_t src, const char *why) {
  char a[32];
  wsp__lane_close(fd, 1);
  const int first = st->refused++ == 0;
  wsp__log(st->comm, first ? WSP_LOG_WARN : WSP_LOG_INFO,
           "striped: dropped a connection to the lanes' port from %s: %s%s",
           wsp__addr_text(src, a, sizeof a), why,
           first ? " (further ones are logged at level info)" : "");
}

static void wsp__greet_drop(wsp__stripe_t *st, size_t g, const char *why) {
  struct wsp__greet G = st->greet[g];
  st->greet[g] = st->greet[--st->ngreet];
  if (why)
    wsp__refuse(st, G.fd, G.src, why);
  else
    wsp__lane_close(G.fd, 1);
}

void wsp__hs_idle(wsp__stripe_t *st, int rank) {
  const int idle = !wsp__hs_accepting(st);
  for (size_t g = st->ngreet; g-- > 0;)
    if (idle || (rank >= 0 && st->greet[g].rank == rank)) wsp__greet_drop(st, g, NULL);
  if (!idle) return;
  for (int i = 0; i < st->nlst; i++) wsp__lane_close(st->lst[i].fd, 0);
  st->nlst = 0;
}

/* Pending connections the higher rank keeps: twice the lanes still
 * missing (a stranger's claims beside the real ones), plus a few. */
static size_t wsp__greet_cap(const wsp__stripe_t *st) {
  size_t missing = 0;
  for (int p = 0; p < st->comm->size; p++) {
    const wsp__pair_t *pr = st->pair[p];
    if (pr && !pr->lower && pr->state == WSP__PAIR_CONNECT)
      missing += (size_t)(pr->nlanes - pr->nconn);
  }
  return 2 * missing + 8;
}

/* Whether src is an address some peer being set up may connect from. */
static int wsp__known_source(const wsp__stripe_t *st, uint32_t src) {
  for (int p = 0; p < st->comm->size; p++) {
    const wsp__pair_t *pr = st->pair[p];
    if (pr == NULL || pr->lower || pr->state != WSP__PAIR_CONNECT) continue;
    for (int i = 0; i < pr->nsrc; i++)
      if (pr->src[i] == src) return 1;
  }
  return 0;
}

void wsp__hs_accept(wsp__stripe_t *st, int lfd) {
  /* A bounded number per pass, so that a flood cannot hold the pass. */
  for (int k = 0; k < 64; k++) {
    uint32_t src = 0;
    int fd = wsp__lane_accept(lfd, &src);
    if (fd < 0) return;
    if (!wsp__known_source(st, src)) {
      wsp__refuse(st, fd, src, "no peer being set up offered that address");
      continue;
    }
    if (st->ngreet >= wsp__greet_cap(st)) {
      /* The oldest that has not said HELLO makes room, if there is one. */
      size_t old = st->ngreet;
      for (size_t g = 0; g < st->ngreet; g++)
        if (!st->greet[g].proving && (old == st->ngreet || st->greet[g].since < st->greet[old].since))
          old = g;
      if (old == st->ngreet) {
        wsp__refuse(st, fd, src, "too many connections wait for their proof");
        continue;
      }
      wsp__greet_drop(st, old, "too many connections were pending; it had not said HELLO");
    }
    if (st->ngreet == st->greet_cap) {
      size_t cap = st->greet_cap ? 2 * st->greet_cap : 16;
      struct wsp__greet *n = realloc(st->greet, cap * sizeof *n);
      if (n == NULL) {
        wsp__refuse(st, fd, src, "out of memory");
        continue;
      }
      st->greet = n;
      st->greet_cap = cap;
    }
    struct wsp__greet *G = &st->greet[st->ngreet++];
    memset(G, 0, sizeof *G);
    G->fd = fd;
    G->src = src;
    G->rank = -1;
    G->since = wsp__now();
    /* A lane's HELLO is there already (TCP_DEFER_ACCEPT): take it now. */
    wsp__hs_greet_event(st, st->ngreet - 1);
  }
}

/* The pair a HELLO names, when it may name it: a pair being set up by
 * this rank with that rank, the lane still missing, the lanes as agreed,
 * and the connection from one of that rank's addresses. */
static wsp__pair_t *wsp__hello_pair(const wsp__stripe_t *st, const struct wsp__greet *G,
                                    const wsp__frame_t *f) {
  const uint64_t rank = wsp__hello_rank(f);
  const uint32_t lane = wsp__frame_lane(f);
  if (f->type != WSP__F_HELLO || rank >= (uint64_t)st->comm->size) return NULL;
  wsp__pair_t *pr = st->pair[(int)rank];
  if (pr == NULL || pr->lower || pr->state != WSP__PAIR_CONNECT || lane >= (uint32_t)pr->nlanes ||
      pr->lane[lane].fd >= 0)
    return NULL;
  const wsp__frame_t expect = wsp__frame_hello((int)lane, pr->nlanes, (int)rank);
  if (!wsp__frame_equal(f, &expect)) return NULL; /* the lanes as agreed, nothing else set */
  for (int i = 0; i < pr->nsrc; i++)
    if (pr->src[i] == G->src) return pr;
  return NULL;
}

void wsp__hs_greet_event(wsp__stripe_t *st, size_t g) {
  struct wsp__greet *G = &st->greet[g];
  const size_t want = WSP__FRAME_HDR + (G->proving ? WSP__MAC : WSP__CHALLENGE);
  ssize_t n = recv(G->fd, G->buf + G->got, want - G->got, 0);
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return;
  if (n <= 0) {
    wsp__greet_drop(st, g, "it closed before it was a lane");
    return;
  }
  G->got += (size_t)n;
  if (G->got < want) return;
  wsp__frame_t f;
  if (wsp__frame_decode(G->buf, &f) != 0) {
    wsp__greet_drop(st, g, "it did not send a frame");
    return;
  }
  if (!G->proving) {
    wsp__pair_t *pr = wsp__hello_pair(st, G, &f);
    if (pr == NULL) {
      wsp__greet_drop(st, g, "its HELLO names no lane being set up with it");
      return;
    }
    /* At most WSP__CLAIMS_MAX wait for their proof per lane: the oldest
     * makes room. */
    size_t claims = 0, old = st->ngreet;
    for (size_t h = 0; h < st->ngreet; h++) {
      const struct wsp__greet *H = &st->greet[h];
      if (H->proving && H->rank == (int)wsp__hello_rank(&f) && H->lane == wsp__frame_lane(&f)) {
        claims++;
        if (old == st->ngreet || H->since < st->greet[old].since) old = h;
      }
    }
    if (claims >= WSP__CLAIMS_MAX) {
      wsp__greet_drop(st, old, "more connections claimed its lane; it had not proven itself");
      if (g == st->ngreet) g = old; /* wsp__greet_drop moved this one into old's place */
      G = &st->greet[g];
    }
    G->rank = (int)wsp__hello_rank(&f);
    G->lane = wsp__frame_lane(&f);
    memcpy(G->nc, G->buf + WSP__FRAME_HDR, WSP__CHALLENGE);
    unsigned char mac[WSP__MAC], b[WSP__FRAME_HDR + WSP__CHALLENGE + WSP__MAC];
    if (wsp__sec_random(G->na, sizeof G->na) != 0) {
      wsp__greet_drop(st, g, "no randomness for a challenge");
      return;
    }
    wsp__sec_proof(&pr->keys, 'A', pr->peer, st->comm->rank, G->lane, (uint32_t)pr->nlanes, G->nc,
                   G->na, mac);
    wsp__frame_t c = wsp__frame_chal((int)G->lane);
    wsp__frame_with(b, &c, G->na, sizeof G->na, mac, sizeof mac);
    if (wsp__send_now(G->fd, b, sizeof b) != 0) {
      wsp__greet_drop(st, g, "it closed before it was a lane");
      return;
    }
    G->proving = 1;
    G->got = 0;
    G->since = wsp__now();
    return;
  }
  wsp__pair_t *pr = st->pair[G->rank];
  unsigned char mac[WSP__MAC];
  const wsp__frame_t proof = wsp__frame_proof((int)G->lane);
  if (!wsp__frame_equal(&f, &proof) || pr == NULL || pr->state != WSP__PAIR_CONNECT ||
      pr->lane[G->lane].fd >= 0) {
    wsp__greet_drop(st, g, "it did not answer its challenge as a lane");
    return;
  }
  wsp__sec_proof(&pr->keys, 'C', pr->peer, st->comm->rank, G->lane, (uint32_t)pr->nlanes, G->nc,
                 G->na, mac);
  if (!wsp__sec_equal(G->buf + WSP__FRAME_HDR, mac, WSP__MAC)) {
    wsp__greet_drop(st, g, "its proof is wrong");
    return;
  }
  /* Proven: the connection is lane G->lane of the pair. */
  wsp__lane_t *l = &pr->lane[G->lane];
  const int fd = G->fd;
  const uint32_t li = G->lane;
  st->greet[g] = st->greet[--st->ngreet];
  unsigned char b[WSP__FRAME_HDR];
  wsp__frame_t a = wsp__frame_ack((int)li);
  wsp__frame_encode(&a, b);
  wsp__lane_options(fd, st->lowat);
  if (wsp__send_now(fd, b, sizeof b) != 0) {
    wsp__lane_close(fd, 1); /* the lower rank connects it again */
    return;
  }
  wsp__lane_init(l, fd);
  if (pr->mine.encrypt && wsp__lane_seal(l, &pr->keys, 0, li) != 0) {
    /* The lower rank cannot know: it counts the lane as up. This rank's
     * closing the lane makes its first frame fail the pair. */
    wsp__lane_release(l, 1);
    wsp__log(st->comm, WSP_LOG_WARN, "striped: a lane's cipher could not be set up");
    return;
  }
  pr->nconn++;
}

void wsp__hs_expire(wsp__stripe_t *st, double now) {
  for (size_t g = st->ngreet; g-- > 0;) {
    const struct wsp__greet *G = &st->greet[g];
    if (now - G->since > (G->proving ? WSP__CONNECT_SECONDS : WSP__HELLO_SECONDS))
      wsp__greet_drop(st, g,
                      G->proving ? "it did not prove itself in time" : "it said nothing in time");
  }
}
