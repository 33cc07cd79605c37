/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A stranger against the lanes (docs/p2p.md, "Security").
 *
 *   test_hostile [--rounds N]      (3 ranks; root for the replay attack)
 *
 * Ranks 0 and 1 are the job: in each round they make a communicator of
 * their own, send each other 8 MiB over 4 forced lanes at once, check
 * every byte against an independent reference and free the communicator.
 * Rank 2 is the stranger: it uses no wirespeed call and no MPI message of
 * theirs, only what any process on the host can do. It finds rank 1's
 * listening sockets as ss(8) would (/proc/net/tcp and rank 1's file
 * descriptors), records the lanes' handshakes on the loopback device with
 * a packet socket (root only), and attacks each listener it sees, one
 * attack per round:
 *
 *   none      nothing (the first round's handshakes are recorded)
 *   garbage   connects and sends 4 KiB of random bytes
 *   replay    replays a recorded HELLO, then the recorded PROOF
 *   claim     sends a HELLO for every lane of the pair, as rank 0, and
 *             sits on the challenges it gets
 *   flood     opens 400 connections, each sending one byte, and keeps them
 *   none      the job after the attacks
 *
 * WSP_P2P_FAULT_SETUP_MS (the test's environment) makes rank 0 wait before
 * it connects, so that the stranger meets the listener before the lanes.
 *
 * Passes when, in every round: both transfers return WSP_OK (over the
 * lanes, or over MPI if the lanes could not come up) or both ends return
 * WSP_ERR_CONN; every byte received is the reference's; the stranger never
 * got an ACK; no listener of the lanes was bound to every interface (the
 * MPI's own listeners, there before the first round, are left out of every
 * count and never attacked), rank 0
 * never listened, and rank 1 listened no more once its lanes were up;
 * rank 1's descriptors stayed within the lanes and a few while attacked,
 * and both ranks have as many descriptors after the last round as before
 * the first. Rank 0 prints the table of what happened.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include "wirespeed.h"

#include "mpi_check.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/if_ether.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <netinet/tcp.h>
#include <netpacket/packet.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum { LANES = 4, NLANES = LANES + 1, MSG = 8 << 20, FLOOD = 400, MAXC = 512 };
enum { A_NONE, A_GARBAGE, A_REPLAY, A_CLAIM, A_FLOOD, A_COUNT };
static const char *const attack_name[A_COUNT] = {"none", "garbage", "replay", "claim", "flood"};
static const int plan[] = {A_NONE, A_GARBAGE, A_REPLAY, A_CLAIM, A_FLOOD, A_NONE};

/* What the stranger saw in a round. */
typedef struct {
  int listeners;    /* distinct listening sockets of rank 1 seen */
  int any_addr;     /* of them bound to 0.0.0.0 */
  int rank0_listen; /* rank 0 listened */
  int conns;        /* connections it made */
  int refused;      /* connects refused, or closed/reset by the job */
  int chal;         /* challenges it got */
  int ack;          /* ACK frames it got: must stay 0 */
  int captured;     /* handshakes recorded so far (replay needs one) */
} seen_t;

/* What a victim saw in a round. */
typedef struct {
  int rc_send, rc_recv, data_ok, lanes_open, fds_mid, fds_base, listening_after;
} victim_t;

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void nap(double s) {
  struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
  nanosleep(&ts, NULL);
}

static unsigned char expect_byte(int from, int round, size_t i) {
  uint64_t x = ((uint64_t)from * 1000003u) ^ ((uint64_t)round << 40) ^ (i * 0x9e3779b97f4a7c15ull);
  x ^= x >> 29;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 32;
  return (unsigned char)x;
}

static int count_fds(void) {
  DIR *d = opendir("/proc/self/fd");
  int n = 0;
  if (d == NULL) return -1;
  for (struct dirent *e; (e = readdir(d));)
    if (e->d_name[0] != '.') n++;
  closedir(d);
  return n - 1; /* the directory's own */
}

/* The socket inodes among pid's descriptors. */
static int socket_inodes(int pid, unsigned long *ino, int max) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/fd", pid);
  DIR *d = opendir(path);
  int n = 0;
  if (d == NULL) return 0;
  for (struct dirent *e; (e = readdir(d)) && n < max;) {
    char p[400], l[64];
    snprintf(p, sizeof p, "%s/%s", path, e->d_name);
    ssize_t k = readlink(p, l, sizeof l - 1);
    if (k <= 0) continue;
    l[k] = '\0';
    if (sscanf(l, "socket:[%lu]", &ino[n]) == 1) n++;
  }
  closedir(d);
  return n;
}

/* pid's listening TCP sockets (as ss -ltnp finds them): address (network
 * order) and port. */
static int listeners_of(int pid, uint32_t *addr, uint16_t *port, int max) {
  unsigned long ino[1024];
  int ni = socket_inodes(pid, ino, 1024), n = 0;
  FILE *f = fopen("/proc/net/tcp", "re");
  if (f == NULL) return 0;
  char line[512];
  if (fgets(line, sizeof line, f) == NULL) line[0] = '\0'; /* the heading */
  while (n < max && fgets(line, sizeof line, f)) {
    unsigned a, p, st;
    unsigned long inode;
    if (sscanf(line, " %*d: %x:%x %*x:%*x %x %*x:%*x %*x:%*x %*x %*u %*u %lu", &a, &p, &st,
               &inode) != 4 ||
        st != 0x0A)
      continue;
    for (int i = 0; i < ni; i++)
      if (ino[i] == inode) {
        addr[n] = (uint32_t)a; /* /proc prints the address's bytes as one host-order word */
        port[n] = (uint16_t)p;
        n++;
        break;
      }
  }
  fclose(f);
  return n;
}

/* Whether (a, p) is among the n listeners of `base`. */
static int among(const uint32_t *ba, const uint16_t *bp, int n, uint32_t a, uint16_t p) {
  for (int i = 0; i < n; i++)
    if (ba[i] == a && bp[i] == p) return 1;
  return 0;
}

/* ---- the stranger ---- */

static int dial(uint32_t addr, uint16_t port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
  a.sin_addr.s_addr = addr;
  struct timeval tv = {1, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

static uint32_t get32le(const unsigned char *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Frames the lanes' handshake uses (src/p2p/striped_internal.h): the
 * stranger knows the protocol, as anyone with the source would. */
enum { F_HELLO = 1, F_CHAL = 2, F_PROOF = 3, F_ACK = 4, HDR = 40 };
static const unsigned char MAGIC[4] = {'W', 'S', 'P', '2'};

/* Reads what the job answers within `secs`; counts a CHAL and an ACK.
 * Returns 1 when the job closed or reset the connection. */
static int read_answer(int fd, seen_t *s, double secs) {
  unsigned char b[256];
  size_t got = 0;
  double end = now() + secs;
  while (now() < end) {
    struct pollfd p = {.fd = fd, .events = POLLIN};
    if (poll(&p, 1, 50) <= 0) continue;
    ssize_t n = recv(fd, b + got, sizeof b - got, MSG_DONTWAIT);
    if (n <= 0) return 1;
    got += (size_t)n;
    while (got >= HDR && memcmp(b, MAGIC, 4) == 0) {
      uint32_t type = get32le(b + 4);
      size_t len = (size_t)get32le(b + 32);
      if (got < HDR + len) break;
      if (type == F_CHAL) s->chal++;
      if (type == F_ACK) s->ack++;
      memmove(b, b + HDR + len, got - HDR - len);
      got -= HDR + len;
    }
    if (got == sizeof b) got = 0;
  }
  return 0;
}

/* The recorded handshakes: a HELLO and the PROOF of the same connection. */
static struct {
  int have;
  uint16_t sport;
  unsigned char hello[HDR + 32], proof[HDR + 32];
  int have_hello;
} rec;

static int capture_open(void) {
  int fd = socket(AF_PACKET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, htons(ETH_P_IP));
  if (fd < 0) return -1;
  struct sockaddr_ll a = {.sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_IP)};
  a.sll_ifindex = (int)if_nametoindex("lo");
  if (bind(fd, (struct sockaddr *)&a, sizeof a) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

static void capture_poll(int fd) {
  unsigned char pkt[70000];
  for (;;) {
    ssize_t n = recv(fd, pkt, sizeof pkt, 0);
    if (n <= 0) return;
    if (n < 20 || (pkt[0] >> 4) != 4 || pkt[9] != IPPROTO_TCP) continue;
    size_t ihl = (size_t)(pkt[0] & 15) * 4;
    if ((size_t)n < ihl + 20) continue;
    const unsigned char *t = pkt + ihl;
    size_t doff = (size_t)(t[12] >> 4) * 4;
    uint16_t sport = (uint16_t)(t[0] << 8 | t[1]);
    if ((size_t)n < ihl + doff + HDR + 32) continue;
    const unsigned char *pay = t + doff;
    if (memcmp(pay, MAGIC, 4) != 0) continue;
    uint32_t type = get32le(pay + 4);
    if (type == F_HELLO && !rec.have) {
      memcpy(rec.hello, pay, sizeof rec.hello);
      rec.sport = sport;
      rec.have_hello = 1;
    } else if (type == F_PROOF && rec.have_hello && !rec.have && sport == rec.sport) {
      memcpy(rec.proof, pay, sizeof rec.proof);
      rec.have = 1;
    }
  }
}

static void attack(int kind, uint32_t addr, uint16_t port, seen_t *s, int *held, int *nheld) {
  switch (kind) {
  case A_GARBAGE: {
    int fd = dial(addr, port);
    s->conns++;
    if (fd < 0) {
      s->refused++;
      return;
    }
    unsigned char junk[4096];
    for (size_t i = 0; i < sizeof junk; i++) junk[i] = (unsigned char)rand();
    (void)send(fd, junk, sizeof junk, MSG_NOSIGNAL);
    s->refused += read_answer(fd, s, 1.0);
    close(fd);
    return;
  }
  case A_REPLAY: {
    if (!rec.have) return;
    int fd = dial(addr, port);
    s->conns++;
    if (fd < 0) {
      s->refused++;
      return;
    }
    (void)send(fd, rec.hello, sizeof rec.hello, MSG_NOSIGNAL);
    int closed = read_answer(fd, s, 0.3);
    if (!closed) {
      (void)send(fd, rec.proof, sizeof rec.proof, MSG_NOSIGNAL);
      closed = read_answer(fd, s, 1.0);
    }
    s->refused += closed;
    close(fd);
    return;
  }
  case A_CLAIM:
    for (int lane = 0; lane < NLANES && *nheld < MAXC; lane++) {
      int fd = dial(addr, port);
      s->conns++;
      if (fd < 0) {
        s->refused++;
        continue;
      }
      unsigned char h[HDR + 32];
      memset(h, 0, sizeof h);
      memcpy(h, MAGIC, 4);
      h[4] = F_HELLO;
      h[8] = (unsigned char)lane; /* aux: the lane */
      h[16] = NLANES;             /* id: the lanes of the pair */
      h[24] = 0;                  /* off: claims to be rank 0 */
      h[32] = 32;                 /* len: its challenge */
      for (int i = 0; i < 32; i++) h[HDR + i] = (unsigned char)rand();
      (void)send(fd, h, sizeof h, MSG_NOSIGNAL);
      if (read_answer(fd, s, 0.2)) {
        s->refused++;
        close(fd);
      } else {
        held[(*nheld)++] = fd; /* sits on the challenge */
      }
    }
    return;
  case A_FLOOD:
    for (int i = 0; i < FLOOD && *nheld < MAXC; i++) {
      int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
      if (fd < 0) break;
      struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
      a.sin_addr.s_addr = addr;
      s->conns++;
      if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0 && errno != EINPROGRESS) {
        s->refused++;
        close(fd);
        continue;
      }
      held[(*nheld)++] = fd;
    }
    nap(0.2);
    for (int i = 0; i < *nheld; i++) (void)send(held[i], MAGIC, 1, MSG_NOSIGNAL | MSG_DONTWAIT);
    return;
  default:
    return;
  }
}

static void stranger(int nrounds, int pid0, int pid1) {
  /* The MPI's own listeners (MPICH's, say) are there before the rounds
   * and are left alone: garbage on them ends the job, which is the MPI's
   * matter, not the lanes'. */
  uint32_t base_a[2][16];
  uint16_t base_p[2][16];
  int nbase[2] = {listeners_of(pid0, base_a[0], base_p[0], 16),
                  listeners_of(pid1, base_a[1], base_p[1], 16)};
  int cap = capture_open();
  if (cap < 0) printf("stranger: no packet socket (%s): the replay round replays nothing\n",
                      strerror(errno));
  for (int r = 0; r < nrounds; r++) {
    seen_t s;
    memset(&s, 0, sizeof s);
    int kind = plan[r % (int)(sizeof plan / sizeof *plan)];
    uint32_t done_addr[16];
    uint16_t done_port[16];
    int ndone = 0, held[MAXC], nheld = 0, flag = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Request stop;
    int dummy;
    MPI_Irecv(&dummy, 1, MPI_INT, 0, 77, MPI_COMM_WORLD, &stop);
    while (!flag) {
      if (cap >= 0) capture_poll(cap);
      uint32_t a[16];
      uint16_t p[16];
      int n = listeners_of(pid1, a, p, 16);
      uint32_t a0[16];
      uint16_t p0[16];
      int n0 = listeners_of(pid0, a0, p0, 16);
      for (int i = 0; i < n0; i++)
        if (!among(base_a[0], base_p[0], nbase[0], a0[i], p0[i])) s.rank0_listen = 1;
      for (int i = 0; i < n; i++) {
        if (among(base_a[1], base_p[1], nbase[1], a[i], p[i])) continue;
        int known = 0;
        for (int j = 0; j < ndone; j++) known |= done_addr[j] == a[i] && done_port[j] == p[i];
        if (known || ndone == 16) continue;
        done_addr[ndone] = a[i], done_port[ndone++] = p[i];
        s.listeners++;
        if (a[i] == 0) s.any_addr++;
        attack(kind, a[i], p[i], &s, held, &nheld);
      }
      nap(0.005);
      MPI_Test(&stop, &flag, MPI_STATUS_IGNORE);
    }
    /* What became of the connections it held. */
    for (int i = 0; i < nheld; i++) {
      unsigned char b[256];
      ssize_t n = recv(held[i], b, sizeof b, MSG_DONTWAIT);
      if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) s.refused++;
      if (n >= HDR && memcmp(b, MAGIC, 4) == 0 && get32le(b + 4) == F_ACK) s.ack++;
      close(held[i]);
    }
    if (cap >= 0) capture_poll(cap);
    s.captured = rec.have;
    MPI_Send(&s, (int)sizeof s, MPI_BYTE, 0, 78, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
  }
  if (cap >= 0) close(cap);
}

/* ---- the job ---- */

static void victim(int nrounds, MPI_Comm pair) {
  const int me = rank, peer = 1 - rank;
  unsigned char *out = malloc(MSG), *in = malloc(MSG);
  for (size_t i = 0; i < MSG; i++) out[i] = 0;
  int fds_before = count_fds();
  uint32_t base_a[16];
  uint16_t base_p[16];
  const int nbase = listeners_of(getpid(), base_a, base_p, 16); /* the MPI's own */
  victim_t v[16];
  seen_t seen[16];
  for (int r = 0; r < nrounds && r < 16; r++) {
    memset(&v[r], 0, sizeof v[r]);
    for (size_t i = 0; i < MSG; i++) out[i] = expect_byte(me, r, i);
    memset(in, 0xA5, MSG);
    v[r].fds_base = count_fds();
    MPI_Barrier(MPI_COMM_WORLD);
    wsp_config_t c;
    wsp_config_init(&c);
    wsp_config_from_env(&c);
    c.p2p_lanes = LANES;
    c.model_alpha = 1e-5, c.model_beta = 1e-9, c.model_gamma = 1e-10; /* no calibration */
    wsp_comm_t *w = NULL;
    int rc = wsp_comm_create(pair, &c, &w);
    CHECK(rc == WSP_OK, "round %d: wsp_comm_create: %s", r, wsp_last_error());
    if (rc != WSP_OK) break;
    wsp_striped_request_t *q[2] = {NULL, NULL};
    int rcs = wsp_striped_isend(w, out, MSG, peer, 1, &q[0]);
    int rcr = wsp_striped_irecv(w, in, MSG, peer, 1, &q[1]);
    if (rcs == WSP_OK) rcs = wsp_striped_wait(&q[0]);
    if (rcr == WSP_OK) rcr = wsp_striped_wait(&q[1]);
    v[r].rc_send = rcs, v[r].rc_recv = rcr;
    if (rcs != WSP_OK || rcr != WSP_OK)
      printf("rank %d round %d (%s): %s\n", me, r, attack_name[plan[r % 6]], wsp_last_error());
    size_t bad = SIZE_MAX;
    for (size_t i = 0; i < MSG && bad == SIZE_MAX; i++)
      if (in[i] != expect_byte(peer, r, i)) bad = i;
    v[r].data_ok = rcr != WSP_OK || bad == SIZE_MAX;
    wsp_striped_info_t info;
    wsp_striped_info(w, peer, &info);
    v[r].lanes_open = info.lanes_open;
    v[r].fds_mid = count_fds();
    uint32_t a[16];
    uint16_t p[16];
    int nl = listeners_of(getpid(), a, p, 16);
    for (int i = 0; i < nl; i++) v[r].listening_after += !among(base_a, base_p, nbase, a[i], p[i]);
    if (me == 0) MPI_Send(&r, 1, MPI_INT, 2, 77, MPI_COMM_WORLD); /* the stranger stops */
    MPI_Barrier(pair);
    CHECK(wsp_comm_free(&w) == WSP_OK, "round %d: free: %s", r, wsp_last_error());
    if (me == 0) MPI_Recv(&seen[r], (int)sizeof seen[r], MPI_BYTE, 2, 78, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Barrier(MPI_COMM_WORLD);
  }
  int fds_after = count_fds();
  victim_t other[16];
  if (me == 0)
    MPI_Recv(other, (int)sizeof other, MPI_BYTE, 1, 79, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  else
    MPI_Send(v, (int)sizeof v, MPI_BYTE, 0, 79, MPI_COMM_WORLD);
  int both_fds[2] = {fds_before, fds_after}, fds1[2];
  if (me == 0)
    MPI_Recv(fds1, 2, MPI_INT, 1, 80, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  else
    MPI_Send(both_fds, 2, MPI_INT, 0, 80, MPI_COMM_WORLD);
  CHECK(fds_after == fds_before, "descriptors: %d before the rounds, %d after", fds_before,
        fds_after);
  if (me == 0) {
    printf("| round | attack | rank 0 send/recv | rank 1 send/recv | data | path | stranger: "
           "listeners, conns, dropped, CHAL, ACK | rank 1 fds (base/with lanes) |\n");
    printf("|---|---|---|---|---|---|---|---|\n");
    for (int r = 0; r < nrounds && r < 16; r++) {
      victim_t *a = &v[r], *b = &other[r];
      seen_t *s = &seen[r];
      printf("| %d | %s | %s/%s | %s/%s | %s | %s | %d, %d, %d, %d, %d | %d/%d |\n", r,
             attack_name[plan[r % 6]], wsp_err_name(a->rc_send), wsp_err_name(a->rc_recv),
             wsp_err_name(b->rc_send), wsp_err_name(b->rc_recv),
             a->data_ok && b->data_ok ? "correct" : "WRONG",
             a->lanes_open ? "lanes" : "MPI", s->listeners, s->conns, s->refused, s->chal, s->ack,
             b->fds_base, b->fds_mid);
      int ok0 = a->rc_send == WSP_OK && a->rc_recv == WSP_OK && b->rc_send == WSP_OK &&
                b->rc_recv == WSP_OK;
      int conn = (a->rc_send == WSP_ERR_CONN || a->rc_recv == WSP_ERR_CONN) &&
                 (b->rc_send == WSP_ERR_CONN || b->rc_recv == WSP_ERR_CONN);
      CHECK(ok0 || conn, "round %d: the transfers returned %d/%d and %d/%d", r, a->rc_send,
            a->rc_recv, b->rc_send, b->rc_recv);
      CHECK(a->data_ok && b->data_ok, "round %d: a receive holds bytes that were not sent", r);
      CHECK(s->ack == 0, "round %d: the stranger got %d ACKs", r, s->ack);
      CHECK(s->any_addr == 0, "round %d: a listener was bound to every interface", r);
      CHECK(!s->rank0_listen, "round %d: rank 0 (the lower rank) listened", r);
      CHECK(a->listening_after == 0 && b->listening_after == 0,
            "round %d: still listening after the set-up (%d, %d)", r, a->listening_after,
            b->listening_after);
      CHECK(b->fds_mid - b->fds_base <= NLANES + 8,
            "round %d: rank 1 held %d descriptors more than before the round", r,
            b->fds_mid - b->fds_base);
      CHECK(plan[r % 6] == A_NONE || s->listeners > 0,
            "round %d: the stranger never saw a listener to attack", r);
      CHECK(plan[r % 6] != A_REPLAY || !s->captured || s->chal > 0,
            "round %d: the replayed HELLO got no challenge", r);
    }
    printf("descriptors before/after the rounds: rank 0 %d/%d, rank 1 %d/%d\n", fds_before,
           fds_after, fds1[0], fds1[1]);
  }
  free(out);
  free(in);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int rounds = 6;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc) {
      rounds = atoi(argv[++i]);
    } else {
      if (rank == 0) fprintf(stderr, "usage: test_hostile [--rounds N] (3 ranks)\n");
      MPI_Finalize();
      return 2;
    }
  }
  if (size != 3 || rounds < 1 || rounds > 16) {
    if (rank == 0) fprintf(stderr, "test_hostile: needs 3 ranks and 1..16 rounds\n");
    MPI_Finalize();
    return 2;
  }
  srand(12345);
  int pid = getpid(), pids[3];
  MPI_Allgather(&pid, 1, MPI_INT, pids, 1, MPI_INT, MPI_COMM_WORLD);
  MPI_Comm pair;
  MPI_Comm_split(MPI_COMM_WORLD, rank < 2 ? 0 : MPI_UNDEFINED, rank, &pair);
  if (rank == 2)
    stranger(rounds, pids[0], pids[1]);
  else
    victim(rounds, pair);
  if (pair != MPI_COMM_NULL) MPI_Comm_free(&pair);
  long all = 0;
  MPI_Allreduce(&failures, &all, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf("test_hostile: %s (%ld failures)\n", all ? "FAILED" : "ok", all);
  MPI_Finalize();
  return all ? 1 : 0;
}
