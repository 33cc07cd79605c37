/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The statistics the benchmarks report: median, minimum, mean and maximum
 * of repeated timings, and the steadiness of a rate over time. Kept apart
 * from MPI so that the unit tests check them against direct computations.
 */
#ifndef WSP_STATS_H
#define WSP_STATS_H

#include <stddef.h>

typedef struct wsp_stats {
  size_t n;
  double min, max, mean, median;
} wsp_stats_t;

/* Sorts v[0..n) in place (ascending) and summarises it; with n = 0 every
 * field is 0. */
void wsp_stats_sorted(double *v, size_t n, wsp_stats_t *s);
/* The q-quantile (q in [0,1]) of sorted values, interpolated linearly
 * between neighbouring order statistics at position q (n - 1): q = 0.5 is
 * the median (the mean of the two middle values when n is even). 0 when n
 * is 0. */
double wsp_quantile(const double *sorted, size_t n, double q);
/* The median of x[0..n) (wsp_quantile at 0.5 of a sorted copy); x is left
 * as it is. 0 when n is 0, NAN when the copy cannot be made. */
double wsp_median(const double *x, size_t n);
/* Mean of x[0..n); 0 when n is 0. */
double wsp_mean(const double *x, size_t n);
/* The lowest mean of w consecutive values of x[0..n) divided by the mean
 * of all n: 1.0 for a perfectly steady rate. 0 when the mean is 0 or n is
 * 0; with w >= n there is one window, the whole series, and it is 1. */
double wsp_min_window_ratio(const double *x, size_t n, size_t w);

#endif
