/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Seeded random traffic patterns for the sparse-exchange tests and
 * benchmarks. Any rank can compute any other rank's sends, so a receiver
 * knows exactly what it must get without asking anybody: that is the
 * independent reference the tests check against.
 */
#ifndef WSP_PATTERN_H
#define WSP_PATTERN_H

#include <stddef.h>
#include <stdint.h>

typedef struct wsp_pattern {
  uint64_t seed;
  uint64_t round;   /* changes the pattern from round to round */
  int p;            /* number of ranks */
  double density;   /* fraction of the other p-1 ranks each rank sends to */
  size_t min_bytes; /* message sizes are uniform in [min_bytes, max_bytes] */
  size_t max_bytes;
  int with_self;    /* also send a message to oneself */
} wsp_pattern_t;

uint64_t wsp_splitmix64(uint64_t *state);

/* order[0..n-1] = a random permutation of 0..n-1 drawn from *state (the same
 * on every rank that starts from the same state). Benchmarks draw a new
 * order of their algorithms per repetition, so that no algorithm always
 * runs right after the same other one and carries what it left behind. */
void wsp_random_order(int *order, int n, uint64_t *state);

/* Number of peers (other than self) each rank sends to. */
int wsp_pattern_k(const wsp_pattern_t *pt);

/* Destinations of `src` (ascending) and their sizes; returns their number.
 * dests and bytes need room for p entries. */
int wsp_pattern_sends(const wsp_pattern_t *pt, int src, int *dests,
                      size_t *bytes);

/* Fills the payload of message src -> dst with its deterministic content. */
void wsp_pattern_fill(const wsp_pattern_t *pt, int src, int dst, void *buf,
                      size_t bytes);
/* 1 if buf holds exactly the payload of src -> dst. */
int wsp_pattern_check(const wsp_pattern_t *pt, int src, int dst,
                      const void *buf, size_t bytes);

#endif
