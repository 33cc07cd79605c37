/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * aware_tree_cost: how long building a tree from a measured map takes
 * (src/patterns/aware_tree.h), and how its predicted time compares with the
 * binomial tree's, for p from 8 to 1024.
 *
 * No MPI and no network: for each p it makes one seeded random map (every
 * ordered pair drawn alone: latency 1-100 us, 1-10 ns per byte), builds the
 * tree for a 4 KiB broadcast under rendezvous (whole message) and for a
 * scatter of 4 KiB blocks, and the pipelined path of a 1 MiB broadcast in
 * 64 KiB segments, repeating each build for at least 0.3 s of CPU time, and
 * prints per build: the mean time, the work area's size, which construction
 * won (exact, heuristic, binomial, binomial re-sorted) and the predicted
 * time over the binomial tree's. Single-threaded; times are the process's
 * CPU time (CLOCK_PROCESS_CPUTIME_ID), so that other work on a shared
 * machine lengthens them less than it would wall-clock time.
 *
 * Build: built with the tools (build/<flavour>/tools/aware_tree_cost), or by hand:
 *        cc -O2 -std=c11 -Isrc -o aware_tree_cost bench/aware_tree_cost.c \
 *          src/patterns/aware_tree.c src/patterns/tree.c -lm
 * Usage: aware_tree_cost
 * Results: docs/results/aware_trees.md.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "patterns/aware_tree.h"

static uint64_t state = 20240312;
/* A uniform double in [0, 1) (splitmix64), the same on every libc. */
static double unif(void) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return (double)((z ^ (z >> 31)) >> 11) / 9007199254740992.0;
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int main(void) {
  static const int ps[] = {8, 9, 10, 11, 16, 32, 64, 65, 128, 256, 512, 1024};
  static const char *from[] = {"exact", "heuristic", "binomial", "binomial re-sorted"};
  printf("%5s %-7s %10s %9s  %-19s %s\n", "p", "load", "ms/build", "work kB", "won", "built/binomial");
  for (size_t q = 0; q < sizeof ps / sizeof ps[0]; q++) {
    int p = ps[q];
    size_t pp = (size_t)p * (size_t)p;
    double *a = malloc(pp * sizeof *a), *b = malloc(pp * sizeof *b);
    void *work = malloc(wsp__aware_work_size(p));
    int *parent = malloc((size_t)p * sizeof(int)), *start = malloc((size_t)(p + 1) * sizeof(int));
    int *children = malloc((size_t)p * sizeof(int));
    if (!a || !b || !work || !parent || !start || !children) {
      fprintf(stderr, "aware_tree_cost: out of memory at p = %d\n", p);
      return 1;
    }
    for (size_t k = 0; k < pp; k++) a[k] = 1e-6 * (1 + 99 * unif()), b[k] = 1e-9 * (1 + 9 * unif());
    for (int v = 0; v < p; v++) a[(size_t)v * p + v] = b[(size_t)v * p + v] = 0;
    wsp__aware_tree_t t = {parent, start, children};
    for (int load = 0; load < 2; load++) {
      wsp__aware_problem_t pb = {p, 1, a, b, 4096, WSP__AWARE_RNDV, WSP__AWARE_DOWN,
                                 load ? WSP__AWARE_BLOCKS : WSP__AWARE_WHOLE, 0};
      double built = 0, binomial = 0, t0 = now();
      wsp__aware_source_t src = WSP__AWARE_FROM_EXACT;
      long reps = 0;
      do {
        if (wsp__aware_build(&pb, work, &t, &built, &src) != 0) {
          fprintf(stderr, "aware_tree_cost: build failed at p = %d\n", p);
          return 1;
        }
        reps++;
      } while (now() - t0 < 0.3);
      double per = (now() - t0) / (double)reps;
      wsp__aware_binomial(&pb, &t);
      wsp__aware_time(&pb, &t, work, &binomial);
      printf("%5d %-7s %10.3f %9zu  %-19s %.3f\n", p, load ? "blocks" : "whole", 1e3 * per,
             wsp__aware_work_size(p) / 1024, from[src], built / binomial);
    }
    /* The pipelined path of a 1 MiB broadcast in 64 KiB segments (one
     * segment size; src/coll/aware.c tries up to nine). */
    wsp__aware_problem_t pp1 = {p, 1, a, b, 1 << 20, WSP__AWARE_RNDV, WSP__AWARE_DOWN,
                                WSP__AWARE_WHOLE, 0};
    double path = 0, binomial = 0, t0 = now();
    long reps = 0;
    do {
      if (wsp__aware_path(&pp1, 65536, work, &t, &path, NULL) != 0) {
        fprintf(stderr, "aware_tree_cost: path failed at p = %d\n", p);
        return 1;
      }
      reps++;
    } while (now() - t0 < 0.3);
    double per = (now() - t0) / (double)reps;
    wsp__aware_binomial(&pp1, &t);
    wsp__aware_time(&pp1, &t, work, &binomial);
    printf("%5d %-7s %10.3f %9zu  %-19s %.3f\n", p, "path", 1e3 * per,
           wsp__aware_work_size(p) / 1024, "path (1 MiB, 64K)", path / binomial);
    free(a), free(b), free(work), free(parent), free(start), free(children);
  }
  return 0;
}
