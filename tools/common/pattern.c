/* SPDX-License-Identifier: BSD-3-Clause */
#include "pattern.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

uint64_t wsp_splitmix64(uint64_t *state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

void wsp_random_order(int *order, int n, uint64_t *state) {
  for (int i = 0; i < n; i++) order[i] = i;
  for (int i = n - 1; i > 0; i--) { /* Fisher-Yates */
    int j = (int)(wsp_splitmix64(state) % (uint64_t)(i + 1));
    int t = order[i];
    order[i] = order[j];
    order[j] = t;
  }
}

static uint64_t wsp__mix(uint64_t a, uint64_t b, uint64_t c, uint64_t d) {
  uint64_t s = a ^ 0x243f6a8885a308d3ULL;
  s = wsp_splitmix64(&s) ^ b;
  s = wsp_splitmix64(&s) ^ c;
  s = wsp_splitmix64(&s) ^ d;
  return wsp_splitmix64(&s);
}

int wsp_pattern_k(const wsp_pattern_t *pt) {
  if (pt->p <= 1 || pt->density <= 0.0) return 0;
  int k = (int)lround(pt->density * (pt->p - 1));
  if (k < 1) k = 1;
  if (k > pt->p - 1) k = pt->p - 1;
  return k;
}

static int wsp__cmp_int(const void *a, const void *b) {
  int x = *(const int *)a, y = *(const int *)b;
  return (x > y) - (x < y);
}

int wsp_pattern_sends(const wsp_pattern_t *pt, int src, int *dests,
                      size_t *bytes) {
  int p = pt->p, k = wsp_pattern_k(pt), n = 0;
  uint64_t st = wsp__mix(pt->seed, pt->round, (uint64_t)src, 1);
  if (k > 0) {
    /* Partial Fisher-Yates over the other ranks, in place in `dests` (room
     * for p entries): the first k of a random permutation of
     * {0..p-1} \ {src}. No allocation: this runs p times per rank per round
     * in the tests. */
    for (int i = 0, j = 0; i < p; i++)
      if (i != src) dests[j++] = i;
    for (int i = 0; i < k; i++) {
      int j = i + (int)(wsp_splitmix64(&st) % (uint64_t)(p - 1 - i));
      int t = dests[i];
      dests[i] = dests[j];
      dests[j] = t;
    }
    n = k;
  }
  if (pt->with_self) dests[n++] = src;
  qsort(dests, (size_t)n, sizeof *dests, wsp__cmp_int);
  for (int i = 0; i < n; i++) {
    size_t span = pt->max_bytes - pt->min_bytes;
    uint64_t h = wsp__mix(pt->seed, pt->round, (uint64_t)src, (uint64_t)dests[i] + 7);
    bytes[i] = pt->min_bytes + (span ? (size_t)(h % (span + 1)) : 0);
  }
  return n;
}

void wsp_pattern_fill(const wsp_pattern_t *pt, int src, int dst, void *buf,
                      size_t bytes) {
  uint64_t st = wsp__mix(pt->seed, pt->round, (uint64_t)src, (uint64_t)dst + 99);
  unsigned char *b = buf;
  size_t i = 0;
  for (; i + 8 <= bytes; i += 8) {
    uint64_t v = wsp_splitmix64(&st);
    memcpy(b + i, &v, 8);
  }
  if (i < bytes) {
    uint64_t v = wsp_splitmix64(&st);
    memcpy(b + i, &v, bytes - i);
  }
}

int wsp_pattern_check(const wsp_pattern_t *pt, int src, int dst,
                      const void *buf, size_t bytes) {
  uint64_t st = wsp__mix(pt->seed, pt->round, (uint64_t)src, (uint64_t)dst + 99);
  const unsigned char *b = buf;
  size_t i = 0;
  for (; i + 8 <= bytes; i += 8) {
    uint64_t v = wsp_splitmix64(&st);
    if (memcmp(b + i, &v, 8) != 0) return 0;
  }
  if (i < bytes) {
    uint64_t v = wsp_splitmix64(&st);
    if (memcmp(b + i, &v, bytes - i) != 0) return 0;
  }
  return 1;
}
