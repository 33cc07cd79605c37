/*
 * The sockets under striped point-to-point: which addresses this rank
 * offers, its listener, connects and accepts, the options every lane gets,
 * and the encoding of the frame header.
 *
 * Addresses: the IPv4 addresses of this rank's interfaces that are up, in
 * the order the system lists them, loopback last (so that two ranks on one
 * host can still stripe, which only tests need), or only those of the
 * interfaces WSP_P2P_IF names. The peer tries them in order and keeps the
 * first that connects. The listener takes any port the system gives it.
 */
#define _DEFAULT_SOURCE 1 /* getifaddrs, TCP_NOTSENT_LOWAT */
#include "striped_internal.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#ifndef TCP_NOTSENT_LOWAT
#define TCP_NOTSENT_LOWAT 25
#endif

static void put32(unsigned char *p, uint32_t v) {
  for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (8 * i));
}
static void put64(unsigned char *p, uint64_t v) {
  for (int i = 0; i < 8; i++) p[i] = (unsigned char)(v >> (8 * i));
}
static uint32_t get32(const unsigned char *p) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; i--) v = (v << 8) | p[i];
  return v;
}
static uint64_t get64(const unsigned char *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; i--) v = (v << 8) | p[i];
  return v;
}

/* Little-endian on the wire, whatever the hosts are: magic, type, aux, a
 * reserved word, id, off, len. */
void wsp__frame_encode(const wsp__frame_t *f, unsigned char out[WSP__FRAME_HDR]) {
  put32(out, WSP__FRAME_MAGIC);
  put32(out + 4, f->type);
  put32(out + 8, f->aux);
  put32(out + 12, 0);
  put64(out + 16, f->id);
  put64(out + 24, f->off);
  put64(out + 32, f->len);
}

int wsp__frame_decode(const unsigned char in[WSP__FRAME_HDR], wsp__frame_t *f) {
  if (get32(in) != WSP__FRAME_MAGIC) return -1;
  f->type = get32(in + 4);
  f->aux = get32(in + 8);
  f->id = get64(in + 16);
  f->off = get64(in + 24);
  f->len = get64(in + 32);
  return f->type >= WSP__F_HELLO && f->type < WSP__F_COUNT ? 0 : -1;
}

static int set_nonblock(int fd) {
  int fl = fcntl(fd, F_GETFL, 0);
  return fl < 0 ? -1 : fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

int wsp__lane_listen(wsp__stripe_t *st) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  int one = 1;
  (void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  struct sockaddr_in a;
  memset(&a, 0, sizeof a);
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_ANY);
  socklen_t len = sizeof a;
  if (bind(fd, (struct sockaddr *)&a, sizeof a) != 0 || listen(fd, 128) != 0 ||
      getsockname(fd, (struct sockaddr *)&a, &len) != 0 || set_nonblock(fd) != 0) {
    int e = errno;
    close(fd);
    errno = e;
    return -1;
  }
  st->listen_fd = fd;
  st->port = ntohs(a.sin_port);
  return 0;
}

/* Whether interface `name` is in the comma-separated list `ifaces`. */
static int named(const char *ifaces, const char *name) {
  size_t n = strlen(name);
  for (const char *p = ifaces; p && *p;) {
    const char *e = strchr(p, ',');
    size_t l = e ? (size_t)(e - p) : strlen(p);
    if (l == n && strncmp(p, name, n) == 0) return 1;
    p = e ? e + 1 : NULL;
  }
  return 0;
}

int wsp__lane_addrs(wsp__stripe_t *st) {
  struct ifaddrs *ifa = NULL;
  if (getifaddrs(&ifa) != 0) return -1;
  st->naddr = 0;
  uint32_t loop[WSP__ADDRS_MAX];
  int nloop = 0;
  for (struct ifaddrs *i = ifa; i; i = i->ifa_next) {
    if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET || !(i->ifa_flags & IFF_UP))
      continue;
    if (st->ifaces && !named(st->ifaces, i->ifa_name)) continue;
    uint32_t a = ((struct sockaddr_in *)(void *)i->ifa_addr)->sin_addr.s_addr;
    if (i->ifa_flags & IFF_LOOPBACK) {
      if (nloop < WSP__ADDRS_MAX) loop[nloop++] = a;
    } else if (st->naddr < WSP__ADDRS_MAX) {
      st->addr[st->naddr++] = a;
    }
  }
  freeifaddrs(ifa);
  for (int i = 0; i < nloop && st->naddr < WSP__ADDRS_MAX; i++) st->addr[st->naddr++] = loop[i];
  return 0;
}

int wsp__lane_connect(uint32_t addr, uint16_t port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  if (set_nonblock(fd) != 0) {
    int e = errno;
    close(fd);
    errno = e;
    return -1;
  }
  struct sockaddr_in a;
  memset(&a, 0, sizeof a);
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = addr;
  a.sin_port = htons(port);
  if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0 && errno != EINPROGRESS) {
    int e = errno;
    close(fd);
    errno = e;
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
void wsp__lane_options(int fd, size_t lowat) {
  int one = 1;
  (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  int lw = lowat > (size_t)1 << 30 ? 1 << 30 : (int)lowat;
  (void)setsockopt(fd, IPPROTO_TCP, TCP_NOTSENT_LOWAT, &lw, sizeof lw);
  (void)set_nonblock(fd);
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
}
