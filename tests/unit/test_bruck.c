/* SPDX-License-Identifier: BSD-3-Clause */
/* Bruck's allgather and alltoall for every p up to 70, simulated on real
 * byte buffers with the same pack/unpack/rotation code the collectives use:
 * every rank ends with block i of rank s at the place MPI puts it, for
 * block sizes 0, 1 and 3 bytes. Also: the step count is ceil(lg p), the
 * alltoall's packing buffer is big enough, and the block moves (reverse,
 * rotate) match their index definitions. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "patterns/bruck.h"

static unsigned char val(int src, int dst, size_t byte) {
  return (unsigned char)(src * 131 + dst * 7 + (int)byte * 3 + 1);
}

static void allgather(int p, size_t block) {
  char **buf = malloc((size_t)p * sizeof *buf);
  size_t all = (size_t)p * block;
  for (int r = 0; r < p; r++) {
    buf[r] = malloc(all ? all : 1);
    memset(buf[r], 0xEE, all);
    for (size_t b = 0; b < block; b++) buf[r][b] = (char)val(r, 0, b); /* local 0 */
  }
  int nk = wsp__bruck_nsteps(p);
  char *msgs = malloc(all ? all * (size_t)p : 1);
  for (int k = 0; k < nk; k++) {
    /* Every rank "sends" first, then every rank "receives". */
    for (int r = 0; r < p; r++) {
      wsp__bruck_ag_step_t s = wsp__bruck_ag_step(r, p, k);
      CHECK(s.count >= 1 && s.recv_lo + s.count <= p, "p %d k %d count %d", p, k, s.count);
      memcpy(msgs + (size_t)s.send_peer * all, buf[r], (size_t)s.count * block);
    }
    for (int r = 0; r < p; r++) {
      wsp__bruck_ag_step_t s = wsp__bruck_ag_step(r, p, k);
      wsp__bruck_ag_step_t t = wsp__bruck_ag_step(s.recv_peer, p, k);
      CHECK(t.send_peer == r && t.count == s.count, "p %d k %d: peers", p, k);
      memcpy(buf[r] + (size_t)s.recv_lo * block, msgs + (size_t)r * all,
             (size_t)s.count * block);
    }
  }
  for (int r = 0; r < p; r++) {
    /* Before the rotation local j is rank (r+j)'s block. */
    for (int j = 0; j < p; j++) {
      int src = wsp__bruck_ag_final(r, p, j);
      for (size_t b = 0; b < block; b++)
        CHECK((unsigned char)buf[r][(size_t)j * block + b] == val(src, 0, b),
              "ag p %d block %zu: rank %d local %d", p, block, r, j);
    }
    wsp__blocks_rotate_right(buf[r], p, r, block);
    for (int i = 0; i < p; i++)
      for (size_t b = 0; b < block; b++)
        CHECK((unsigned char)buf[r][(size_t)i * block + b] == val(i, 0, b),
              "ag p %d block %zu: rank %d final %d", p, block, r, i);
    free(buf[r]);
  }
  free(buf);
  free(msgs);
}

static void alltoall(int p, size_t block) {
  size_t all = (size_t)p * block;
  char **send = malloc((size_t)p * sizeof *send), **loc = malloc((size_t)p * sizeof *loc);
  for (int r = 0; r < p; r++) {
    send[r] = malloc(all ? all : 1);
    loc[r] = malloc(all ? all : 1);
    for (int d = 0; d < p; d++)
      for (size_t b = 0; b < block; b++) send[r][(size_t)d * block + b] = (char)val(r, d, b);
    /* The initial rotation as two contiguous copies. */
    for (int j = 0; j < p; j++) {
      int from = wsp__bruck_a2a_initial(r, p, j);
      memcpy(loc[r] + (size_t)j * block, send[r] + (size_t)from * block, block);
    }
  }
  int nk = wsp__bruck_nsteps(p), maxb = wsp__bruck_a2a_max_blocks(p);
  CHECK(maxb <= p / 2, "p %d: max blocks %d > p/2", p, maxb);
  char *msgs = malloc(all ? all * (size_t)p : 1);
  int *idx = malloc((size_t)p * sizeof *idx);
  for (int k = 0; k < nk; k++) {
    int n = wsp__bruck_a2a_blocks(p, k, idx);
    CHECK(n >= 1 && n <= maxb, "p %d k %d: %d blocks", p, k, n);
    for (int i = 0; i < n; i++) CHECK((idx[i] >> k) & 1, "index %d lacks bit %d", idx[i], k);
    for (int r = 0; r < p; r++) {
      int dst = wsp__bruck_a2a_send_peer(r, p, k);
      CHECK(wsp__bruck_a2a_recv_peer(dst, p, k) == r, "p %d k %d: peers", p, k);
      wsp__bruck_a2a_pack(loc[r], p, k, block, msgs + (size_t)dst * all);
      /* The packed order is idx order. */
      for (int i = 0; i < n && block; i++)
        CHECK(memcmp(msgs + (size_t)dst * all + (size_t)i * block,
                     loc[r] + (size_t)idx[i] * block, block) == 0,
              "p %d k %d: pack order", p, k);
    }
    for (int r = 0; r < p; r++) wsp__bruck_a2a_unpack(loc[r], p, k, block, msgs + (size_t)r * all);
  }
  for (int r = 0; r < p; r++) {
    wsp__bruck_a2a_finish(loc[r], r, p, block);
    for (int s = 0; s < p; s++)
      for (size_t b = 0; b < block; b++)
        CHECK((unsigned char)loc[r][(size_t)s * block + b] == val(s, r, b),
              "a2a p %d block %zu: rank %d from %d", p, block, r, s);
    free(send[r]);
    free(loc[r]);
  }
  free(send), free(loc), free(msgs), free(idx);
}

static void moves(int p) {
  int *a = malloc((size_t)p * sizeof *a);
  for (int s = -1; s <= p; s++) {
    for (int j = 0; j < p; j++) a[j] = j;
    wsp__blocks_rotate_right((char *)a, p, s, sizeof *a);
    for (int j = 0; j < p; j++)
      CHECK(a[((j + s) % p + p) % p] == j, "rotate p %d by %d", p, s);
  }
  for (int r = 0; r < p; r++) {
    for (int j = 0; j < p; j++) a[j] = j;
    wsp__bruck_a2a_finish((char *)a, r, p, sizeof *a);
    for (int j = 0; j < p; j++)
      CHECK(a[wsp__bruck_a2a_final(r, p, j)] == j, "finish p %d r %d", p, r);
  }
  free(a);
}

int main(void) {
  for (int p = 1; p <= 70; p++) {
    int n = wsp__bruck_nsteps(p);
    CHECK((1L << n) >= p && (n == 0 || (1L << (n - 1)) < p), "nsteps(%d) = %d", p, n);
    moves(p);
    for (size_t block = 0; block <= 3; block += (block ? 2 : 1)) {
      allgather(p, block);
      alltoall(p, block);
    }
  }
  return check_summary("test_bruck");
}
