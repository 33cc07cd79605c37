// SPDX-License-Identifier: BSD-3-Clause
/*
 * netlab's delay line: latency, jitter and loss for a kernel without netem.
 *
 * How it works. A port joins a network device that netlab took out of its bridge (a host's
 * switch port, or the router's leg into a site) to a TAP device that netlab puts into the
 * bridge in its place. Every Ethernet frame that arrives on one side is read here, given the
 * time at which it is due on the other side, and written there when that time comes. The
 * device side is read and written through a packet socket bound to the device, so its tc
 * shaping (a switch port's tbf) still applies to what leaves it; the TAP side is a file
 * descriptor whose reads are the frames the bridge sends to the port and whose writes are
 * frames the bridge receives from it.
 *
 * Each direction of each port has its own delay D, jitter J and loss L. A frame is lost with
 * probability L (independent draws, as netem's default); a kept frame is due D + u later, u
 * uniform in [-J, J] (netem's default distribution), never before it arrived. Frames wait in a
 * heap ordered by due time and then by arrival, so that without jitter they leave in the order
 * they came, and with jitter they may overtake each other, as netem lets them. The loop sleeps
 * in epoll until the earliest due time of all directions, less the lateness of recent
 * wake-ups; timer slack is set to 1 ns so that the wake-up is not rounded to 50 us. A frame
 * read from a packet socket is timed by the kernel's arrival stamp, not by our wake-up.
 *
 * The frames must be no larger than the MTU: netlab turns segmentation offload off on the
 * devices that feed the line, since a loss drawn for a 64 KiB segment train would drop 44
 * packets at once. A larger frame is dropped and counted. A direction holds at most --limit
 * frames (netem's limit); a frame beyond it is dropped and counted.
 *
 * The process opens its devices in their namespaces (setns) and then stays in the first port's
 * namespace, so that removing the lab's namespaces' processes removes it too. It prints
 * "ready" on stdout once every port is open, writes its counters to stderr on SIGUSR1 and on
 * exit (SIGTERM, SIGINT), and ends when a write finds its device gone.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/if_packet.h>
#include <linux/if_tun.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum {
  FRAME_MAX = 2048,      /* an Ethernet frame of MTU 1500 (and a VLAN tag) fits */
  MAX_PORTS = 256,       /* a lab has at most 250 hosts and one WAN port */
  READ_BATCH = 64,       /* frames read from one descriptor per wake-up */
  SOCK_BUF = 8 << 20,    /* packet sockets' buffers: 8 MiB, about 5000 frames */
  DEFAULT_LIMIT = 50000, /* frames held per direction: 100 ms at 6 Gbit/s */
};
#define MAX_DELAY_NS 10000000000ULL /* 10 s, delay and jitter alike */

struct frame {
  uint64_t due;
  uint64_t seq;
  uint32_t len;
  struct frame *next_free;
  unsigned char data[FRAME_MAX];
};

struct counters {
  uint64_t frames, bytes, lost, overflow, oversize, sent, send_errors;
  int64_t late_sum; /* how long after its due time frames left (may be < 0) */
  uint64_t late_max, late_n;
};

struct dir {
  const char *name; /* "DEV>TAP" or "TAP>DEV" */
  int in_fd, out_fd;
  int in_sock; /* the input is the packet socket (else the TAP) */
  uint64_t delay, jitter;
  uint64_t loss_bound; /* a frame is lost when a 64-bit draw is below this */
  struct frame **heap;
  size_t n, cap;
  struct counters c;
};

struct port {
  char spec[256];
  int dev_fd, tap_fd;
  struct dir d[2]; /* 0: device to TAP, 1: TAP to device */
};

static struct port ports[MAX_PORTS];
static int nports;
static size_t limit = DEFAULT_LIMIT;
static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;
static uint64_t seq_next;
static struct frame *free_list;
/* The expected lateness of a timer wake-up: a moving average over the last 16 or so. */
static uint64_t wake_late = 50000;
#define WAKE_LATE_MAX 500000ULL
#define BATCH_NS 100000ULL /* frames due within 100 us of the first leave with it */

static void die(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("delayline: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  exit(2);
}

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* splitmix64: seeded, so that a run's losses can be repeated. */
static uint64_t rng_next(void) {
  uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

static struct frame *frame_get(void) {
  struct frame *f = free_list;
  if (f) {
    free_list = f->next_free;
    return f;
  }
  f = malloc(sizeof *f);
  if (!f) die("out of memory for frames");
  return f;
}

static void frame_put(struct frame *f) {
  f->next_free = free_list;
  free_list = f;
}

static int earlier(const struct frame *a, const struct frame *b) {
  return a->due < b->due || (a->due == b->due && a->seq < b->seq);
}

static void heap_push(struct dir *d, struct frame *f) {
  if (d->n == d->cap) {
    size_t cap = d->cap ? d->cap * 2 : 256;
    struct frame **h = realloc(d->heap, cap * sizeof *h);
    if (!h) die("out of memory for the queue of %s", d->name);
    d->heap = h;
    d->cap = cap;
  }
  size_t i = d->n++;
  while (i > 0) {
    size_t up = (i - 1) / 2;
    if (!earlier(f, d->heap[up])) break;
    d->heap[i] = d->heap[up];
    i = up;
  }
  d->heap[i] = f;
}

static struct frame *heap_pop(struct dir *d) {
  struct frame *top = d->heap[0];
  struct frame *last = d->heap[--d->n];
  size_t i = 0;
  for (;;) {
    size_t l = 2 * i + 1, m = i;
    const struct frame *best = last;
    if (l < d->n && earlier(d->heap[l], best)) {
      m = l;
      best = d->heap[l];
    }
    if (l + 1 < d->n && earlier(d->heap[l + 1], best)) m = l + 1;
    if (m == i) break;
    d->heap[i] = d->heap[m];
    i = m;
  }
  if (d->n > 0) d->heap[i] = last;
  return top;
}

/* Writes one frame to the direction's output. A failed write is a frame the network dropped
 * (the switch port's queue is full, or its link is down); it is counted, never retried. A
 * write that finds the device gone (its namespace was removed) ends the line: a vanished
 * device only shows in a write, since its packet socket reports ENETDOWN as for a link set
 * down. */
static const char *gone;
static void emit(struct dir *d, const struct frame *f) {
  ssize_t w = write(d->out_fd, f->data, f->len);
  if (w == (ssize_t)f->len) {
    d->c.sent++;
    return;
  }
  d->c.send_errors++;
  if (w < 0 && (errno == ENXIO || errno == ENODEV || errno == EBADFD)) gone = d->name;
}

/* Takes one frame that arrived on d's input at time t. */
static void arrive(struct dir *d, struct frame *f, uint64_t t) {
  d->c.frames++;
  d->c.bytes += f->len;
  if (d->loss_bound && rng_next() < d->loss_bound) {
    d->c.lost++;
    frame_put(f);
    return;
  }
  uint64_t delay = d->delay;
  if (d->jitter) {
    uint64_t span = 2 * d->jitter + 1;
    int64_t u = (int64_t)(rng_next() % span) - (int64_t)d->jitter;
    delay = (int64_t)delay + u > 0 ? (uint64_t)((int64_t)delay + u) : 0;
  }
  f->due = t + delay;
  f->seq = seq_next++;
  if (d->n == 0 && delay == 0) { /* nothing waits ahead of it */
    emit(d, f);
    frame_put(f);
    return;
  }
  if (d->n >= limit) {
    d->c.overflow++;
    frame_put(f);
    return;
  }
  heap_push(d, f);
}

/* Reads what is waiting on d's input; returns -1 when its device is gone. */
static int drain(struct dir *d) {
  uint64_t t = now_ns();
  /* A frame from a packet socket carries the kernel's time of arrival (CLOCK_REALTIME),
   * which does not include our own wake-up; it is moved onto the monotonic clock here. */
  struct timespec real;
  clock_gettime(CLOCK_REALTIME, &real);
  uint64_t real_now = (uint64_t)real.tv_sec * 1000000000ULL + (uint64_t)real.tv_nsec;
  for (int k = 0; k < READ_BATCH; k++) {
    struct frame *f = frame_get();
    uint64_t arrived = t;
    ssize_t r;
    if (d->in_sock) {
      union {
        char buf[CMSG_SPACE(sizeof(struct timespec))];
        struct cmsghdr align;
      } ctl;
      struct iovec iov = {.iov_base = f->data, .iov_len = FRAME_MAX};
      struct msghdr mh = {.msg_iov = &iov,
                          .msg_iovlen = 1,
                          .msg_control = ctl.buf,
                          .msg_controllen = sizeof ctl.buf};
      r = recvmsg(d->in_fd, &mh, MSG_TRUNC | MSG_DONTWAIT);
      struct cmsghdr *c = r >= 0 ? CMSG_FIRSTHDR(&mh) : NULL;
      if (c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMPNS) {
        struct timespec ts;
        memcpy(&ts, CMSG_DATA(c), sizeof ts);
        uint64_t k_real = (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
        if (k_real <= real_now && real_now - k_real < t) arrived = t - (real_now - k_real);
      }
    } else {
      r = read(d->in_fd, f->data, FRAME_MAX);
    }
    if (r < 0) {
      frame_put(f);
      if (errno == EAGAIN || errno == EINTR) return 0;
      if (errno == ENETDOWN) /* the link was set down (netlab fault down) */
        return 0;
      if (errno == ENODEV || errno == ENXIO || errno == EBADFD) return -1;
      fprintf(stderr, "delayline: %s: read: %s\n", d->name, strerror(errno));
      return 0;
    }
    if (r == 0 || r > FRAME_MAX) {
      d->c.frames++;
      d->c.oversize += r > FRAME_MAX;
      frame_put(f);
      continue;
    }
    f->len = (uint32_t)r;
    arrive(d, f, arrived);
  }
  return 0;
}

/* Sends every frame due by `horizon`, and with each direction's first such frame those due
 * up to BATCH_NS after it; returns the earliest due time left (0: none). */
static uint64_t release(uint64_t now, uint64_t horizon) {
  uint64_t next = 0;
  for (int i = 0; i < nports; i++) {
    for (int k = 0; k < 2; k++) {
      struct dir *d = &ports[i].d[k];
      uint64_t t = horizon;
      if (d->n > 0 && d->heap[0]->due <= horizon && d->heap[0]->due + BATCH_NS > t)
        t = d->heap[0]->due + BATCH_NS;
      while (d->n > 0 && d->heap[0]->due <= t) {
        struct frame *f = heap_pop(d);
        int64_t late = (int64_t)(now - f->due);
        d->c.late_sum += late;
        d->c.late_n++;
        if (late > 0 && (uint64_t)late > d->c.late_max) d->c.late_max = (uint64_t)late;
        emit(d, f);
        frame_put(f);
      }
      if (d->n > 0 && (next == 0 || d->heap[0]->due < next)) next = d->heap[0]->due;
    }
  }
  return next;
}

static void report(void) {
  for (int i = 0; i < nports; i++) {
    for (int k = 0; k < 2; k++) {
      const struct dir *d = &ports[i].d[k];
      fprintf(stderr,
              "delayline: %s: frames %llu bytes %llu lost %llu overflow %llu "
              "oversize %llu sent %llu send_errors %llu queued %zu late_mean_us %.1f "
              "late_max_us %.1f\n",
              d->name, (unsigned long long)d->c.frames, (unsigned long long)d->c.bytes,
              (unsigned long long)d->c.lost, (unsigned long long)d->c.overflow,
              (unsigned long long)d->c.oversize, (unsigned long long)d->c.sent,
              (unsigned long long)d->c.send_errors, d->n,
              d->c.late_n ? d->c.late_sum / 1e3 / (double)d->c.late_n : 0.0, d->c.late_max / 1e3);
    }
  }
  fflush(stderr);
}

/* --- setting up ------------------------------------------------------------------------ */

static uint64_t parse_u64(const char *s, uint64_t max, const char *what, const char *spec) {
  char *end;
  errno = 0;
  if (*s < '0' || *s > '9') die("--port %s: %s %s is not a whole number", spec, what, s);
  unsigned long long v = strtoull(s, &end, 10);
  if (errno || *end || v > max)
    die("--port %s: %s %s is not a whole number of at most %llu", spec, what, s,
        (unsigned long long)max);
  return v;
}

/* "DELAY_NS/JITTER_NS/LOSS" of one direction; LOSS is a probability in [0, 1]. */
static void parse_dir(struct dir *d, char *text, const char *spec) {
  char *jit = strchr(text, '/');
  char *loss = jit ? strchr(jit + 1, '/') : NULL;
  if (!jit || !loss) die("--port %s: a direction is DELAY_NS/JITTER_NS/LOSS, not %s", spec, text);
  *jit++ = '\0';
  *loss++ = '\0';
  d->delay = parse_u64(text, MAX_DELAY_NS, "delay", spec);
  d->jitter = parse_u64(jit, MAX_DELAY_NS, "jitter", spec);
  char *end;
  errno = 0;
  double p = strtod(loss, &end);
  if (errno || *end || end == loss || !(p >= 0.0 && p <= 1.0))
    die("--port %s: loss %s is not a probability in [0, 1]", spec, loss);
  d->loss_bound = p >= 1.0 ? UINT64_MAX : (uint64_t)(p * 18446744073709551616.0);
}

static void enter_netns(const char *ns, const char *spec) {
  char path[300];
  if (snprintf(path, sizeof path, "/run/netns/%s", ns) >= (int)sizeof path)
    die("--port %s: namespace name too long", spec);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) die("--port %s: cannot open %s: %s", spec, path, strerror(errno));
  if (setns(fd, CLONE_NEWNET) != 0)
    die("--port %s: cannot enter namespace %s: %s", spec, ns, strerror(errno));
  close(fd);
}

static int open_device(const char *dev, const char *spec) {
  int fd = socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, htons(ETH_P_ALL));
  if (fd < 0) die("--port %s: packet socket: %s", spec, strerror(errno));
  unsigned idx = if_nametoindex(dev);
  if (idx == 0) die("--port %s: no device %s in its namespace", spec, dev);
  int one = 1, buf = SOCK_BUF;
  /* Our own writes must not come back to us as frames to carry. */
  if (setsockopt(fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof one) != 0)
    die("--port %s: PACKET_IGNORE_OUTGOING: %s", spec, strerror(errno));
  (void)setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &buf, sizeof buf);
  if (setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof one) != 0)
    die("--port %s: SO_TIMESTAMPNS: %s", spec, strerror(errno));
  (void)setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &buf, sizeof buf);
  struct sockaddr_ll sll = {
      .sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL), .sll_ifindex = (int)idx};
  if (bind(fd, (struct sockaddr *)&sll, sizeof sll) != 0)
    die("--port %s: bind to %s: %s", spec, dev, strerror(errno));
  /* Before the bind the socket heard every device of the namespace: drop that. */
  unsigned char junk[FRAME_MAX];
  for (int i = 0; i < 100000; i++) { /* a pending error (the device is down) comes first */
    if (recv(fd, junk, sizeof junk, MSG_DONTWAIT | MSG_TRUNC) < 0 && errno == EAGAIN) break;
  }
  return fd;
}

static int open_tap(const char *tap, const char *spec) {
  int fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) die("--port %s: /dev/net/tun: %s", spec, strerror(errno));
  struct ifreq ifr;
  memset(&ifr, 0, sizeof ifr);
  ifr.ifr_flags = IFF_TAP | IFF_NO_PI;
  if (strlen(tap) >= IFNAMSIZ)
    die("--port %s: TAP name %s is longer than %d characters", spec, tap, IFNAMSIZ - 1);
  memcpy(ifr.ifr_name, tap, strlen(tap) + 1);
  if (ioctl(fd, TUNSETIFF, &ifr) != 0)
    die("--port %s: cannot create TAP %s: %s", spec, tap, strerror(errno));
  return fd;
}

/* "NETNS,DEV,TAP,DIR,DIR": the first direction is from DEV to TAP, the second back. */
static void add_port(const char *arg) {
  if (nports == MAX_PORTS) die("more than %d ports", MAX_PORTS);
  struct port *p = &ports[nports];
  if (strlen(arg) >= sizeof p->spec) die("--port %.40s...: too long", arg);
  strcpy(p->spec, arg);
  char text[256];
  strcpy(text, arg);
  char *field[5];
  char *save = NULL;
  int n = 0;
  for (char *tok = strtok_r(text, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    if (n == 5) die("--port %s: expected NETNS,DEV,TAP,DELAY/JITTER/LOSS,DELAY/JITTER/LOSS", arg);
    field[n++] = tok;
  }
  if (n != 5) die("--port %s: expected NETNS,DEV,TAP,DELAY/JITTER/LOSS,DELAY/JITTER/LOSS", arg);
  parse_dir(&p->d[0], field[3], arg);
  parse_dir(&p->d[1], field[4], arg);
  enter_netns(field[0], arg);
  p->dev_fd = open_device(field[1], arg);
  p->tap_fd = open_tap(field[2], arg);
  char name[2][64];
  snprintf(name[0], sizeof name[0], "%s>%s", field[1], field[2]);
  snprintf(name[1], sizeof name[1], "%s>%s", field[2], field[1]);
  for (int k = 0; k < 2; k++) {
    p->d[k].name = strdup(name[k]);
    p->d[k].in_fd = k == 0 ? p->dev_fd : p->tap_fd;
    p->d[k].in_sock = k == 0;
    p->d[k].out_fd = k == 0 ? p->tap_fd : p->dev_fd;
  }
  nports++;
}

static void usage(FILE *to) {
  fputs("usage: delayline [--seed N] [--limit FRAMES] --port SPEC [--port SPEC ...]\n"
        "  SPEC: NETNS,DEV,TAP,DELAY_NS/JITTER_NS/LOSS,DELAY_NS/JITTER_NS/LOSS\n"
        "  Joins device DEV of namespace NETNS to a new TAP device TAP; the first\n"
        "  direction is DEV to TAP, the second TAP to DEV. LOSS is a probability.\n"
        "  netlab starts this (netlab up --delay ...); see docs/netlab.md.\n",
        to);
}

int main(int argc, char **argv) {
  const char *first_ns = NULL;
  char first_ns_buf[256] = "";
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      usage(stdout);
      return 0;
    }
    if (i + 1 >= argc) die("%s needs a value (see --help)", a);
    const char *v = argv[++i];
    if (!strcmp(a, "--seed"))
      rng_state = parse_u64(v, UINT64_MAX, "seed", "(--seed)");
    else if (!strcmp(a, "--limit"))
      limit = (size_t)parse_u64(v, 10000000, "limit", "(--limit)");
    else if (!strcmp(a, "--port")) {
      if (!first_ns) {
        snprintf(first_ns_buf, sizeof first_ns_buf, "%s", v);
        char *comma = strchr(first_ns_buf, ',');
        if (comma) *comma = '\0';
        first_ns = first_ns_buf;
      }
      add_port(v);
    } else
      die("unknown option %s (see --help)", a);
  }
  if (nports == 0) die("no --port given (see --help)");
  if (limit == 0) die("--limit must be at least 1");
  enter_netns(first_ns, "(first)");
  (void)prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);

  sigset_t sigs;
  sigemptyset(&sigs);
  sigaddset(&sigs, SIGTERM);
  sigaddset(&sigs, SIGINT);
  sigaddset(&sigs, SIGUSR1);
  sigprocmask(SIG_BLOCK, &sigs, NULL);
  signal(SIGPIPE, SIG_IGN);
  int sfd = signalfd(-1, &sigs, SFD_NONBLOCK | SFD_CLOEXEC);
  int ep = epoll_create1(EPOLL_CLOEXEC);
  if (sfd < 0 || ep < 0) die("cannot set up the event loop: %s", strerror(errno));
  struct epoll_event ev = {.events = EPOLLIN};
  ev.data.u64 = UINT64_MAX;
  epoll_ctl(ep, EPOLL_CTL_ADD, sfd, &ev);
  for (int i = 0; i < nports; i++) {
    for (int k = 0; k < 2; k++) {
      ev.data.u64 = (uint64_t)(2 * i + k);
      if (epoll_ctl(ep, EPOLL_CTL_ADD, ports[i].d[k].in_fd, &ev) != 0)
        die("epoll: %s", strerror(errno));
    }
  }
  printf("ready\n");
  fflush(stdout);

  int timed_out = 0;
  for (;;) {
    /* The wait ends early by the lateness of the last wake-ups, so that frames leave on
     * average at their due time rather than a wake-up's latency after it (tens of
     * microseconds on a virtual machine); after such a wake-up, what falls due within that
     * lateness leaves. After a wake-up for input only what is due leaves. Every frame due up
     * to BATCH_NS after a direction's first leaves with it: a frame alone leaves on time, one
     * in a stream up to BATCH_NS early, and at 100 Mbit/s a wake-up carries about two frames.
     * epoll_pwait2 takes the timeout in nanoseconds, so that no timer descriptor costs two
     * more system calls per wake-up. */
    uint64_t now = now_ns();
    uint64_t next = release(now, timed_out ? now + wake_late : now);
    if (gone) {
      fprintf(stderr, "delayline: %s: device gone, stopping\n", gone);
      report();
      return 0;
    }
    uint64_t at = next == 0 ? 0 : next > wake_late ? next - wake_late : 1;
    now = now_ns(); /* the writes above took time */
    struct timespec wait = {0, 0};
    if (at > now) {
      wait.tv_sec = (time_t)((at - now) / 1000000000ULL);
      wait.tv_nsec = (long)((at - now) % 1000000000ULL);
    }
    struct epoll_event evs[2 * MAX_PORTS + 1];
    int n = epoll_pwait2(ep, evs, 2 * MAX_PORTS + 1, at ? &wait : NULL, NULL);
    if (n < 0 && errno != EINTR) die("epoll_pwait2: %s", strerror(errno));
    timed_out = n == 0 && at > now;
    if (timed_out) { /* the wait ran out: how late did we wake? */
      uint64_t late = now_ns() - at;
      if (late > WAKE_LATE_MAX) late = WAKE_LATE_MAX;
      wake_late += ((int64_t)late - (int64_t)wake_late) / 16;
    }
    for (int e = 0; e < n; e++) {
      uint64_t id = evs[e].data.u64;
      if (id == UINT64_MAX) {
        struct signalfd_siginfo si;
        while (read(sfd, &si, sizeof si) == (ssize_t)sizeof si) {
          report();
          if (si.ssi_signo != SIGUSR1) return 0;
        }
      } else {
        struct dir *d = &ports[id / 2].d[id % 2];
        if (drain(d) != 0) {
          fprintf(stderr, "delayline: %s: device gone, stopping\n", d->name);
          report();
          return 0;
        }
        if (evs[e].events & EPOLLERR) { /* clear a pending socket error (link down) */
          int err;
          socklen_t len = sizeof err;
          (void)getsockopt(d->in_fd, SOL_SOCKET, SO_ERROR, &err, &len);
        }
      }
    }
  }
}
