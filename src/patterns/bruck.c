/* SPDX-License-Identifier: BSD-3-Clause */
/* Bruck's allgather and alltoall schedules and block moves; see bruck.h. */
#include "bruck.h"

#include <string.h>

int wsp__bruck_nsteps(int p) {
  int n = 0;
  while ((1L << n) < p) n++;
  return n;
}

wsp__bruck_ag_step_t wsp__bruck_ag_step(int r, int p, int k) {
  int d = 1 << k;
  wsp__bruck_ag_step_t s;
  s.send_peer = ((r - d) % p + p) % p;
  s.recv_peer = (r + d) % p;
  s.count = d < p - d ? d : p - d;
  s.recv_lo = d;
  return s;
}

int wsp__bruck_a2a_blocks(int p, int k, int *idx) {
  int n = 0;
  for (int j = 0; j < p; j++)
    if (j & (1 << k)) {
      if (idx) idx[n] = j;
      n++;
    }
  return n;
}

int wsp__bruck_a2a_max_blocks(int p) {
  int m = 0;
  for (int k = 0; k < wsp__bruck_nsteps(p); k++) {
    int n = wsp__bruck_a2a_blocks(p, k, NULL);
    if (n > m) m = n;
  }
  return m;
}

/* Indices with bit k set come in runs of 2^k starting at odd multiples of
 * 2^k, so they are copied a run at a time. */
static void wsp__bruck_runs(char *buf, int p, int k, size_t block, char *pk,
                            int unpack) {
  long d = 1L << k;
  size_t off = 0;
  for (long j = d; j < p; j += 2 * d) {
    long n = (j + d <= p ? d : p - j);
    size_t bytes = (size_t)n * block;
    if (unpack) memcpy(buf + (size_t)j * block, pk + off, bytes);
    else memcpy(pk + off, buf + (size_t)j * block, bytes);
    off += bytes;
  }
}

void wsp__bruck_a2a_pack(const char *buf, int p, int k, size_t block, char *out) {
  wsp__bruck_runs((char *)buf, p, k, block, out, 0);
}

void wsp__bruck_a2a_unpack(char *buf, int p, int k, size_t block, const char *in) {
  wsp__bruck_runs(buf, p, k, block, (char *)in, 1);
}

static void wsp__swap(char *a, char *b, size_t n) {
  char t[256];
  while (n) {
    size_t c = n < sizeof t ? n : sizeof t;
    memcpy(t, a, c);
    memcpy(a, b, c);
    memcpy(b, t, c);
    a += c, b += c, n -= c;
  }
}

void wsp__blocks_reverse(char *buf, int lo, int hi, size_t block) {
  for (int i = lo, j = hi - 1; i < j; i++, j--)
    wsp__swap(buf + (size_t)i * block, buf + (size_t)j * block, block);
}

void wsp__blocks_rotate_right(char *buf, int p, int s, size_t block) {
  s = p > 0 ? ((s % p) + p) % p : 0;
  if (s == 0 || block == 0) return;
  /* Three reversals: whole, first s, rest. */
  wsp__blocks_reverse(buf, 0, p, block);
  wsp__blocks_reverse(buf, 0, s, block);
  wsp__blocks_reverse(buf, s, p, block);
}

void wsp__bruck_a2a_finish(char *buf, int r, int p, size_t block) {
  /* j <= r goes to r - j; j > r goes to p + r - j. */
  wsp__blocks_reverse(buf, 0, r + 1, block);
  wsp__blocks_reverse(buf, r + 1, p, block);
}
