/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Frames out: what goes next on each lane (control frames on lane 0, data
 * on lanes 1..k, the probe's stream on the lanes it names), the endgame
 * that copies a slow lane's last chunk to a free one, the accounting of
 * what TCP has delivered, and the flush and close of wsp_comm_free.
 */
#define _DEFAULT_SOURCE 1
#include "striped_internal.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/uio.h>

/* linux/sockios.h: unsent bytes in a TCP socket's send queue; and all
 * bytes not yet acknowledged by the peer (TIOCOUTQ). */
#define WSP__SIOCOUTQNSD 0x894B
#define WSP__SIOCOUTQ 0x5411

static size_t wsp__outq(int fd);

int wsp__lane_set(wsp__lane_t *l, const wsp__frame_t *f, const void *pay, size_t len) {
  l->oreq = NULL;
  l->ozero = 0;
  wsp__frame_encode(f, l->ohdr);
  l->ohdr_done = 0;
  l->opay = pay;
  l->opay_len = len;
  l->opay_done = 0;
  if (l->sealed) {
    /* Header and payload sealed now, the payload into the lane's buffer
     * (so the user's buffer is not read again once this returns). */
    if (wsp__seal(&l->tx, l->ohdr, l->ohdr, WSP__FRAME_HDR, l->ohdr + WSP__FRAME_HDR) != 0)
      return -1;
    if (len > 0) {
      if (len + WSP__TAG > l->obuf_cap) {
        unsigned char *b = realloc(l->obuf, len + WSP__TAG);
        if (b == NULL) return -1;
        l->obuf = b;
        l->obuf_cap = len + WSP__TAG;
      }
      if (wsp__seal(&l->tx, pay, l->obuf, len, l->obuf + len) != 0) return -1;
      l->opay = l->obuf;
      l->opay_len = len + WSP__TAG;
    }
  }
  l->obusy = 1;
  return 0;
}

/* A DATA frame of chunk [off, off + n) of send s on lane l, remembered
 * until TCP has it acknowledged. */
static int wsp__data_frame(wsp__lane_t *l, wsp__sreq_t *s, size_t off, size_t n, int dup) {
  wsp__frame_t f = wsp__frame_data(s->rid, off, n, s->chunk);
  if (wsp__lane_set(l, &f, (const unsigned char *)s->buf + off, n) != 0) return -1;
  if (!l->sealed) l->oreq = s;
  if (l->fl_n == WSP__INFLIGHT) { /* forget the oldest: it will not be re-sent */
    l->fl_head = (l->fl_head + 1) % WSP__INFLIGHT;
    l->fl_n--;
  }
  l->fl[(l->fl_head + l->fl_n++) % WSP__INFLIGHT] = (struct wsp__inflight){
      .req = s, .end = l->bytes_out + l->ohdr_len + l->opay_len, .off = off, .len = n, .dup = dup};
  return 0;
}

/* The endgame. Every chunk is handed out and lane li is free. If another
 * lane still holds a chunk it will take much longer to deliver than li
 * would (its unacknowledged bytes over its delivery rate, against li's
 * queue plus the chunk over li's rate, with a margin), li sends a copy:
 * the chunk that lane would deliver last, once. The receiver keeps
 * whichever copy arrives first. Lanes of equal speed finish together and
 * copy nothing; a lane slowed to a fraction stops holding the tail. */
static int wsp__endgame(const wsp__stripe_t *st, wsp__pair_t *pr, int li) {
  wsp__lane_t *L = &pr->lane[li];
  int always = st->endgame_always;
  if (!(L->rate > 0) && !always) return 0;
  double best = 0;
  struct wsp__inflight *be = NULL;
  for (int m = 1; m <= pr->k; m++) {
    wsp__lane_t *M = &pr->lane[m];
    if (m == li || M->fd < 0 || M->fl_n == 0 || (!(M->rate > 0) && !always)) continue;
    struct wsp__inflight *e = NULL;
    for (int j = M->fl_n - 1; j >= 0 && e == NULL; j--) {
      struct wsp__inflight *x = &M->fl[(M->fl_head + j) % WSP__INFLIGHT];
      if (!x->dup) e = x;
    }
    if (e == NULL) continue;
    if (always) { /* testing aid: copy whatever can be copied */
      be = e;
      break;
    }
    double tm = (double)wsp__outq(M->fd) / M->rate;
    double tl = (double)(wsp__outq(L->fd) + e->len) / L->rate;
    if (tm > 1.5 * tl + 0.005 && tm > best) best = tm, be = e;
  }
  if (be == NULL) return 0;
  be->dup = 1;
  return wsp__data_frame(L, be->req, be->off, be->len, 1) == 0 ? 1 : -1;
}

/* The probe's watch of a lane's loss, on the streamer: TCP_INFO is read
 * before each frame of the stream and at its end (into *ts; -1 when the
 * kernel cannot say). A rise in retransmissions is a new loss episode
 * unless one began less than a smoothed round trip ago: the losses of one
 * window are one reduction of TCP's window, the event its response to
 * loss counts (an episode goes on while rises follow each other within a
 * round trip). The episode that ends a lane's first slow start is left
 * out: a ramp overflows the path's queue (all lanes at once in phase 2),
 * which a flow that has found its rate does not. */
static int wsp__probe_watch(wsp__lane_t *l, wsp__tcpstat_t *ts) {
  if (wsp__tcpstat(l->fd, ts) != 0) return -1;
  const double now = wsp__now();
  if (!l->watched) {
    l->watched = 1;
    l->segs0 = ts->segs_out;
    l->retrans = ts->retrans;
    l->loss_t = -1e9;
  } else if (ts->retrans > l->retrans) {
    if (!l->was_slow && now - l->loss_t > 1e-6 * ts->srtt_us) l->losses++;
    l->loss_t = now;
    l->retrans = ts->retrans;
  }
  l->was_slow = ts->slow_start;
  l->segs = ts->segs_out;
  return 0;
}

/* The next frame for lane li, or 0 if there is none: 1 for a control
 * frame, 2 for a bulk one, -1 when it could not be made (sealing failed).
 * Control frames go on lane 0 only, data on lanes 1..k (the probe's
 * choice), the probe's stream on the lanes it names. */
static int wsp__next_frame(wsp__stripe_t *st, wsp__pair_t *pr, int li, int ctl_only) {
  wsp__lane_t *l = &pr->lane[li];
  if (l->bye_sent) return 0; /* nothing follows a BYE */
  if (l->pend_pending) {
    l->pend_pending = 0;
    wsp__tcpstat_t ts;
    wsp__pend_fields_t pf = {0};
    if (wsp__probe_watch(l, &ts) == 0) {
      pf.rtt_us = ts.min_rtt_us;
      pf.segs = l->segs - l->segs0;
      pf.losses = l->losses < pf.segs ? l->losses : pf.segs;
      pf.slow_start = (uint64_t)ts.slow_start;
    }
    wsp__probe_rtt_seen(pr, pf.rtt_us);
    wsp__frame_t f = wsp__frame_pend(pr->probe.phase, pf);
    return wsp__lane_set(l, &f, NULL, 0) == 0 ? 1 : -1;
  }
  if (pr->nctl && li == 0) {
    wsp__frame_t f = pr->ctl[0];
    memmove(pr->ctl, pr->ctl + 1, (pr->nctl - 1) * sizeof *pr->ctl);
    pr->nctl--;
    return wsp__lane_set(l, &f, NULL, 0) == 0 ? 1 : -1;
  }
  if (l->bye_pending) {
    l->bye_pending = 0;
    l->bye_sent = 1;
    wsp__frame_t f = wsp__frame_bye();
    return wsp__lane_set(l, &f, NULL, 0) == 0 ? 1 : -1;
  }
  if (ctl_only) return 0;
  if (pr->state == WSP__PAIR_READY && li >= 1 && li <= pr->k) {
    /* Testing aid: every chunk is copied, at once rather than at the end. */
    if (st->endgame_always) {
      int e = wsp__endgame(st, pr, li);
      if (e != 0) return e < 0 ? -1 : 2;
    }
    for (wsp__sreq_t *s = pr->active; s; s = s->next)
      if (s->next_off < s->size) {
        size_t n = s->size - s->next_off;
        if (n > s->chunk) n = s->chunk;
        wsp__lane_follow(l, st->lowat, s->chunk);
        if (wsp__data_frame(l, s, s->next_off, n, 0) != 0) return -1;
        s->next_off += n;
        return 2;
      }
    int e = wsp__endgame(st, pr, li);
    if (e != 0) return e < 0 ? -1 : 2;
  }
  if (pr->lower && pr->probe.streaming && li >= 1 && li <= pr->probe.lanes) {
    wsp__tcpstat_t ts;
    (void)wsp__probe_watch(l, &ts);
    wsp__lane_follow(l, st->lowat, 0);
    wsp__frame_t f = wsp__frame_pdata();
    return wsp__lane_set(l, &f, st->zeros, WSP__PROBE_FRAME) == 0 ? 2 : -1;
  }
  return 0;
}

int wsp__lane_has_work(const wsp__pair_t *pr, int li) {
  const wsp__lane_t *l = &pr->lane[li];
  if (l->obusy || l->pend_pending || l->bye_pending || (pr->nctl && li == 0)) return 1;
  if (li == 0) return 0;
  if (pr->state == WSP__PAIR_READY && li <= pr->k)
    for (const wsp__sreq_t *s = pr->active; s; s = s->next)
      if (s->next_off < s->size) return 1;
  return pr->lower && pr->probe.streaming && li <= pr->probe.lanes;
}

/* Bytes the kernel holds for this socket that have not been acknowledged
 * (SIOCOUTQ), and that have not been sent yet (SIOCOUTQNSD; as much as the
 * low-water mark when it cannot tell). */
static size_t wsp__outq(int fd) {
  int n = 0;
  return ioctl(fd, WSP__SIOCOUTQ, &n) == 0 && n >= 0 ? (size_t)n : 0;
}

static size_t wsp__unsent(int fd) {
  int n = 0;
  return ioctl(fd, WSP__SIOCOUTQNSD, &n) == 0 && n >= 0 ? (size_t)n : SIZE_MAX;
}

static uint64_t wsp__pair_bytes_out(const wsp__pair_t *pr) {
  uint64_t n = 0;
  for (int i = 0; i < pr->nlanes; i++) n += pr->lane[i].bytes_out;
  return n;
}

/* Writes frames on lane li until the socket is full or, after a bulk
 * frame, until poll reports it writable again; `ctl_only` starts no bulk
 * frame (the lane was not reported writable). */
void wsp__lane_write(wsp__stripe_t *st, wsp__pair_t *pr, int li, int ctl_only) {
  wsp__lane_t *l = &pr->lane[li];
  for (;;) {
    int kind = 1;
    if (!l->obusy && (kind = wsp__next_frame(st, pr, li, ctl_only)) <= 0) {
      if (kind < 0)
        wsp__pair_fail(st, pr, WSP_ERR_NOMEM, "lane %d to rank %d: a frame could not be sealed", li,
                       pr->peer);
      return;
    }
    if (kind == 2 && st->fault_reset_after && wsp__pair_bytes_out(pr) >= st->fault_reset_after) {
      st->fault_reset_after = 0;
      wsp__lane_release(l, 1);
      wsp__pair_fail(st, pr, WSP_ERR_CONN, "lane %d to rank %d was reset (injected fault)", li,
                     pr->peer);
      return;
    }
    struct iovec iov[2];
    int n = 0;
    if (l->ohdr_done < l->ohdr_len)
      iov[n++] = (struct iovec){l->ohdr + l->ohdr_done, l->ohdr_len - l->ohdr_done};
    if (l->opay_done < l->opay_len) {
      size_t left = l->opay_len - l->opay_done;
      if (l->ozero)
        iov[n++] =
            (struct iovec){(void *)st->zeros, left < WSP__PROBE_FRAME ? left : WSP__PROBE_FRAME};
      else
        iov[n++] = (struct iovec){(void *)(l->opay + l->opay_done), left};
    }
    struct msghdr mh;
    memset(&mh, 0, sizeof mh);
    mh.msg_iov = iov;
    mh.msg_iovlen = (size_t)n;
    ssize_t w = n ? sendmsg(l->fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT) : 0;
    if (w < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK) return;
      if (errno == EINTR) continue;
      wsp__pair_fail(st, pr, WSP_ERR_CONN, "lane %d to rank %d: %s", li, pr->peer, strerror(errno));
      return;
    }
    l->bytes_out += (uint64_t)w;
    size_t h = l->ohdr_len - l->ohdr_done;
    if ((size_t)w < h) {
      l->ohdr_done += (size_t)w;
      return;
    }
    l->ohdr_done = l->ohdr_len;
    l->opay_done += (size_t)w - h;
    if (l->opay_done < l->opay_len) {
      if (l->ozero && (size_t)w - h > 0) continue; /* more zeros */
      return;                                      /* the socket is full */
    }
    l->obusy = 0;
    l->oreq = NULL;
    l->ozero = 0;
    /* After a bulk frame, the next only while the lane's unsent backlog is
     * under the low-water mark: a fast lane (or loopback, which moves
     * data at once) takes several per pass, a slow one waits for poll. */
    if (kind == 2 && wsp__unsent(l->fd) >= wsp__lane_mark(l, st->lowat)) return;
  }
}

void wsp__stripe_flush(wsp__stripe_t *st, double seconds) {
  double end = wsp__now() + seconds;
  for (int p = 0; p < st->comm->size; p++) {
    wsp__pair_t *pr = st->pair[p];
    if (pr == NULL) continue;
    for (;;) {
      wsp__lane_t *l = &pr->lane[0];
      if (pr->state == WSP__PAIR_FAILED || l->fd < 0 || l->hs != WSP__HS_UP) break;
      if (pr->nctl == 0 && !l->obusy) break;
      wsp__lane_write(st, pr, 0, 1);
      if (pr->state == WSP__PAIR_FAILED || l->fd < 0 || (pr->nctl == 0 && !l->obusy)) break;
      double left = end - wsp__now();
      if (left <= 0) break;
      struct pollfd pfd = {.fd = l->fd, .events = POLLOUT};
      (void)poll(&pfd, 1, (int)(left * 1e3) + 1);
    }
  }
}

void wsp__stripe_close(wsp__stripe_t *st, double seconds) {
  double end = wsp__now() + seconds;
  int any = 0;
  st->closing = 1;
  for (int p = 0; p < st->comm->size; p++) {
    wsp__pair_t *pr = st->pair[p];
    if (pr == NULL || pr->state == WSP__PAIR_FAILED) continue;
    for (int i = 0; i < pr->nlanes; i++)
      if (pr->lane[i].fd >= 0 && pr->lane[i].hs == WSP__HS_UP) {
        pr->lane[i].bye_pending = 1;
        any = 1;
      }
  }
  /* Every pair at once, under one deadline. */
  size_t cap = 0;
  for (int p = 0; any && p < st->comm->size; p++)
    if (st->pair[p]) cap += (size_t)st->pair[p]->nlanes;
  struct pollfd *pfd = cap ? calloc(cap, sizeof *pfd) : NULL;
  while (any && pfd) {
    nfds_t n = 0;
    for (int p = 0; p < st->comm->size; p++) {
      wsp__pair_t *pr = st->pair[p];
      if (pr == NULL || pr->state == WSP__PAIR_FAILED) continue;
      for (int i = 0; i < pr->nlanes; i++) {
        wsp__lane_t *l = &pr->lane[i];
        if (l->fd < 0 || l->hs != WSP__HS_UP || l->bye_sent) continue;
        wsp__lane_write(st, pr, i, 1);
        if (pr->state == WSP__PAIR_FAILED) break;
        if (l->fd >= 0 && !l->bye_sent) pfd[n++] = (struct pollfd){.fd = l->fd, .events = POLLOUT};
      }
    }
    double left = end - wsp__now();
    if (n == 0 || left <= 0) break;
    (void)poll(pfd, n, (int)(left * 1e3) + 1);
  }
  free(pfd);
  for (int p = 0; p < st->comm->size; p++) {
    wsp__pair_t *pr = st->pair[p];
    if (pr == NULL) continue;
    for (int i = 0; i < pr->nlanes; i++) wsp__lane_shutdown(pr->lane[i].fd);
  }
}

/* What TCP has acknowledged on lane l: chunks delivered are forgotten,
 * and the delivery rate is sampled every 20 ms while bytes are in flight
 * (smoothed; an idle lane keeps its last rate). */
void wsp__lane_account(wsp__lane_t *l, double now, int always) {
  if (l->fd < 0 || l->hs != WSP__HS_UP) return;
  size_t q = wsp__outq(l->fd);
  uint64_t acked = l->bytes_out - (q < l->bytes_out ? q : l->bytes_out);
  while (l->fl_n && l->fl[l->fl_head].end <= acked && !always) {
    l->fl_head = (l->fl_head + 1) % WSP__INFLIGHT;
    l->fl_n--;
  }
  if (l->rate_t == 0 || (q == 0 && acked == l->rate_acked)) {
    l->rate_t = now;
    l->rate_acked = acked;
    return;
  }
  double dt = now - l->rate_t;
  if (dt < 0.02) return;
  double inst = (double)(acked - l->rate_acked) / dt;
  l->rate = l->rate > 0 ? 0.7 * l->rate + 0.3 * inst : inst;
  l->rate_t = now;
  l->rate_acked = acked;
}
