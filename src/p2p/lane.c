/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The sockets under striped point-to-point: which addresses this rank
 * offers, its listeners, connects and accepts, the options every lane gets,
 * and the encoding of the frame header.
 *
 * Addresses: the IPv4 addresses of this rank's interfaces that are up, in
 * the order the system lists them, or only those of the interfaces
 * WSP_P2P_IF names. Each is marked "local" when it cannot reach another
 * host: loopback, link-local, and the bridges that container and VM
 * managers make on every host alike (docker*, br-*, virbr*, lxcbr*,
 * podman*, cni*), whose addresses repeat from host to host. A peer on
 * another host is offered only the others, and not one it has itself
 * (wsp__lane_usable); a peer on the same host (same boot and network
 * namespace: wsp__lane_host_id) gets all, local ones last, so that two ranks
 * of one host can still stripe. The peer tries them in order.
 *
 * Every socket is close-on-exec: a program that starts another must not
 * hand it the lanes. Listeners are bound to one address each (never to
 * every interface) and use TCP_DEFER_ACCEPT, so a connection that sends
 * nothing is not even handed to the engine.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1 /* accept4; getifaddrs, TCP_NOTSENT_LOWAT */
#endif
#include "striped_internal.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef TCP_NOTSENT_LOWAT
#define TCP_NOTSENT_LOWAT 25
#endif

/* Little-endian on the wire, whatever the hosts are: magic, type, aux, a
 * reserved word, id, off, len. */
void wsp__frame_encode(const wsp__frame_t *f, unsigned char out[WSP__FRAME_HDR]) {
  wsp__le32_put(out, WSP__FRAME_MAGIC);
  wsp__le32_put(out + 4, f->type);
  wsp__le32_put(out + 8, f->aux);
  wsp__le32_put(out + 12, 0);
  wsp__le64_put(out + 16, f->id);
  wsp__le64_put(out + 24, f->off);
  wsp__le64_put(out + 32, f->len);
}

int wsp__frame_decode(const unsigned char in[WSP__FRAME_HDR], wsp__frame_t *f) {
  if (wsp__le32_get(in) != WSP__FRAME_MAGIC) return -1;
  f->type = wsp__le32_get(in + 4);
  f->aux = wsp__le32_get(in + 8);
  f->id = wsp__le64_get(in + 16);
  f->off = wsp__le64_get(in + 24);
  f->len = wsp__le64_get(in + 32);
  return wsp__le32_get(in + 12) == 0 && f->type >= WSP__F_HELLO && f->type < WSP__F_COUNT ? 0 : -1;
}

int wsp__frame_has_payload(uint32_t type) {
  return type == WSP__F_HELLO || type == WSP__F_CHAL || type == WSP__F_PROOF ||
         type == WSP__F_DATA || type == WSP__F_PDATA;
}

static void wsp__close_keep_errno(int fd) {
  int e = errno;
  close(fd);
  errno = e;
}

int wsp__lane_listen(uint32_t addr, uint16_t *port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return -1;
  struct sockaddr_in a;
  memset(&a, 0, sizeof a);
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = addr;
  socklen_t len = sizeof a;
  /* Connections that send nothing within the HELLO's time are not handed
   * to accept (the kernel keeps or drops them). */
  int defer = (int)WSP__HELLO_SECONDS;
  (void)setsockopt(fd, IPPROTO_TCP, TCP_DEFER_ACCEPT, &defer, sizeof defer);
  if (bind(fd, (struct sockaddr *)&a, sizeof a) != 0 || listen(fd, 128) != 0 ||
      getsockname(fd, (struct sockaddr *)&a, &len) != 0) {
    wsp__close_keep_errno(fd);
    return -1;
  }
  *port = ntohs(a.sin_port);
  return fd;
}

int wsp__lane_accept(int lfd, uint32_t *src) {
  struct sockaddr_in a;
  socklen_t len = sizeof a;
  memset(&a, 0, sizeof a);
  int fd = accept4(lfd, (struct sockaddr *)&a, &len, SOCK_CLOEXEC | SOCK_NONBLOCK);
  if (fd >= 0) *src = a.sin_family == AF_INET ? a.sin_addr.s_addr : 0;
  return fd;
}

/* Whether interface `name` is in the comma-separated list `ifaces`. */
static int wsp__named(const char *ifaces, const char *name) {
  size_t n = strlen(name);
  for (const char *p = ifaces; p && *p;) {
    const char *e = strchr(p, ',');
    size_t l = e ? (size_t)(e - p) : strlen(p);
    if (l == n && strncmp(p, name, n) == 0) return 1;
    p = e ? e + 1 : NULL;
  }
  return 0;
}

/* An address that cannot reach another host: loopback, link-local, or
 * (unless the user named the interface) a container or VM bridge's. */
static int wsp__host_local(const char *ifname, unsigned flags, uint32_t a, int user_named) {
  uint32_t h = ntohl(a);
  if ((flags & IFF_LOOPBACK) || (h >> 24) == 127 || (h >> 16) == 0xA9FE) return 1;
  static const char *const bridges[] = {"docker", "br-", "virbr", "lxcbr", "podman", "cni"};
  for (size_t i = 0; !user_named && i < sizeof bridges / sizeof *bridges; i++)
    if (strncmp(ifname, bridges[i], strlen(bridges[i])) == 0) return 1;
  return 0;
}

int wsp__lane_addrs(wsp__stripe_t *st) {
  struct ifaddrs *ifa = NULL;
  if (getifaddrs(&ifa) != 0) return -1;
  st->naddr = 0;
  uint32_t loc[WSP__ADDRS_MAX];
  int nloc = 0;
  for (struct ifaddrs *i = ifa; i; i = i->ifa_next) {
    if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET || !(i->ifa_flags & IFF_UP))
      continue;
    if (st->ifaces && !wsp__named(st->ifaces, i->ifa_name)) continue;
    uint32_t a = ((struct sockaddr_in *)(void *)i->ifa_addr)->sin_addr.s_addr;
    if (wsp__host_local(i->ifa_name, i->ifa_flags, a, st->ifaces != NULL)) {
      if (nloc < WSP__ADDRS_MAX) loc[nloc++] = a;
    } else if (st->naddr < WSP__ADDRS_MAX) {
      st->addr_local[st->naddr] = 0;
      st->addr[st->naddr++] = a;
    }
  }
  freeifaddrs(ifa);
  for (int i = 0; i < nloc && st->naddr < WSP__ADDRS_MAX; i++) {
    st->addr_local[st->naddr] = 1;
    st->addr[st->naddr++] = loc[i];
  }
  st->addrs_known = 1;
  return 0;
}

void wsp__lane_host_id(unsigned char id[WSP__HOST_ID]) {
  /* The boot (a host, rebooted or not), and the network namespace (the
   * scope of loopback and of every address). */
  char text[256] = "", boot[64] = "";
  FILE *f = fopen("/proc/sys/kernel/random/boot_id", "re");
  if (f) {
    if (fgets(boot, sizeof boot, f) == NULL) boot[0] = '\0';
    fclose(f);
  }
  struct stat ns;
  memset(&ns, 0, sizeof ns);
  (void)stat("/proc/self/ns/net", &ns);
  char host[128] = "";
  (void)gethostname(host, sizeof host - 1);
  int n = snprintf(text, sizeof text, "%s|%llu:%llu|%s", boot, (unsigned long long)ns.st_dev,
                   (unsigned long long)ns.st_ino, host);
  wsp__sec_digest(text, n > 0 && (size_t)n < sizeof text ? (size_t)n : strlen(text), id);
}

int wsp__lane_usable(const uint32_t *addr, const uint8_t *local, int n, int same_host,
                     const uint32_t *peer_addr, int peer_n, uint32_t *out, uint8_t *out_local) {
  int m = 0;
  for (int i = 0; i < n; i++) {
    if (!same_host) {
      if (local[i]) continue;
      int theirs_too = 0;
      for (int j = 0; j < peer_n; j++) theirs_too |= peer_addr[j] == addr[i];
      if (theirs_too) continue;
    }
    out[m] = addr[i];
    if (out_local) out_local[m] = local[i];
    m++;
  }
  return m;
}

uint32_t wsp__lane_route_source(uint32_t addr) {
  /* A UDP socket's connect sends nothing; it only picks the route. */
  int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return 0;
  struct sockaddr_in a;
  memset(&a, 0, sizeof a);
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = addr;
  a.sin_port = htons(9);
  socklen_t len = sizeof a;
  uint32_t src = 0;
  if (connect(fd, (struct sockaddr *)&a, sizeof a) == 0 &&
      getsockname(fd, (struct sockaddr *)&a, &len) == 0)
    src = a.sin_addr.s_addr;
  close(fd);
  return src;
}

int wsp__lane_connect(uint32_t addr, uint16_t port, uint32_t from) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return -1;
  struct sockaddr_in a;
  memset(&a, 0, sizeof a);
  a.sin_family = AF_INET;
  if (from != 0) {
    a.sin_addr.s_addr = from;
    if (bind(fd, (struct sockaddr *)&a, sizeof a) != 0) {
      wsp__close_keep_errno(fd);
      return -1;
    }
  }
  a.sin_addr.s_addr = addr;
  a.sin_port = htons(port);
  if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0 && errno != EINPROGRESS) {
    wsp__close_keep_errno(fd);
    return -1;
  }
  return fd;
}

int wsp__lane_connected(int fd) {
  int err = 0;
  socklen_t len = sizeof err;
  if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) return -1;
  if (err == 0) {
    struct sockaddr_in a;
    socklen_t al = sizeof a;
    /* Connected once it has a peer; still in progress otherwise. */
    if (getpeername(fd, (struct sockaddr *)&a, &al) == 0) return 1;
    return errno == ENOTCONN ? 0 : -1;
  }
  if (err == EINPROGRESS || err == EALREADY) return 0;
  errno = err;
  return -1;
}

/* No Nagle: control frames are small and must not wait. TCP_NOTSENT_LOWAT:
 * poll reports the lane writable only when its unsent backlog is below
 * `lowat`, which is what makes "the next chunk to the lane that is free"
 * follow each lane's real rate (striped_internal.h). */
static void wsp__set_lowat(int fd, size_t lowat) {
  int lw = lowat > (size_t)1 << 30 ? 1 << 30 : (int)lowat;
  (void)setsockopt(fd, IPPROTO_TCP, TCP_NOTSENT_LOWAT, &lw, sizeof lw);
}

void wsp__lane_options(int fd, size_t lowat) {
  int one = 1;
  (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  wsp__set_lowat(fd, lowat);
}

size_t wsp__lane_mark(const wsp__lane_t *l, size_t engine) { return l->lowat ? l->lowat : engine; }

void wsp__lane_follow(wsp__lane_t *l, size_t engine, size_t chunk) {
  size_t want = chunk == 0 || chunk > engine ? engine : chunk;
  if (wsp__lane_mark(l, engine) == want) return;
  wsp__set_lowat(l->fd, want);
  l->lowat = want;
}

void wsp__lane_shutdown(int fd) {
  if (fd >= 0) (void)shutdown(fd, SHUT_WR);
}

void wsp__lane_close(int fd, int reset) {
  if (fd < 0) return;
  /* Unread bytes at close make the kernel answer with a reset, which may
   * cost the peer frames it has not read yet: read them away first. */
  unsigned char sink[4096];
  for (int i = 0; !reset && i < 4096 && recv(fd, sink, sizeof sink, MSG_DONTWAIT) > 0; i++)
    ;
  if (reset) {
    struct linger lg = {1, 0};
    (void)setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
  }
  close(fd);
}

void wsp__lane_init(wsp__lane_t *l, int fd) {
  memset(l, 0, sizeof *l);
  l->fd = fd;
  l->ohdr_len = WSP__FRAME_HDR;
}

int wsp__lane_seal(wsp__lane_t *l, const wsp__keys_t *k, int lower, uint32_t li) {
  /* The lower rank sends under "up" and reads under "down". */
  if (wsp__seal_init(&l->tx, lower ? k->up : k->down, li, 1) != 0) return -1;
  if (wsp__seal_init(&l->rx, lower ? k->down : k->up, li, 0) != 0) {
    wsp__seal_free(&l->tx);
    return -1;
  }
  l->sealed = 1;
  l->ohdr_len = WSP__FRAME_HDR + WSP__TAG;
  return 0;
}

void wsp__lane_release(wsp__lane_t *l, int reset) {
  wsp__lane_close(l->fd, reset);
  l->fd = -1;
  if (l->sealed) {
    wsp__seal_free(&l->tx);
    wsp__seal_free(&l->rx);
    l->sealed = 0;
  }
  free(l->obuf);
  l->obuf = NULL;
  l->obuf_cap = 0;
}
