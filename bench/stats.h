/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The median the standalone benchmark programs of bench/ report; the
 * library's own (src/core/measure.h) is not exported.
 */
#ifndef WSP_BENCH_STATS_H
#define WSP_BENCH_STATS_H

#include <stdlib.h>

static int wsp_bench_cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* The median of v[0..n), n >= 1; sorts v. */
static double wsp_bench_median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, wsp_bench_cmp);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

#endif
