/* SPDX-License-Identifier: BSD-3-Clause */
#include "stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

double wsp_quantile(const double *sorted, size_t n, double q) {
  if (n == 0) return 0;
  if (q <= 0) return sorted[0];
  if (q >= 1) return sorted[n - 1];
  double pos = q * (double)(n - 1);
  size_t i = (size_t)pos;
  double frac = pos - (double)i;
  if (i + 1 >= n) return sorted[n - 1];
  /* Equal neighbours give exactly their value, whatever frac is; at
   * frac = 0.5 this is exactly (a + b) / 2, the usual median. */
  if (sorted[i] == sorted[i + 1]) return sorted[i];
  return (1.0 - frac) * sorted[i] + frac * sorted[i + 1];
}

double wsp_median(const double *x, size_t n) {
  if (n == 0) return 0;
  double *v = malloc(n * sizeof *v);
  if (v == NULL) return NAN;
  memcpy(v, x, n * sizeof *v);
  qsort(v, n, sizeof *v, cmp_double);
  double m = wsp_quantile(v, n, 0.5);
  free(v);
  return m;
}

double wsp_mean(const double *x, size_t n) {
  double s = 0;
  for (size_t i = 0; i < n; i++) s += x[i];
  return n ? s / (double)n : 0;
}

void wsp_stats_sorted(double *v, size_t n, wsp_stats_t *s) {
  *s = (wsp_stats_t){.n = n};
  if (n == 0) return;
  qsort(v, n, sizeof *v, cmp_double);
  s->min = v[0];
  s->max = v[n - 1];
  s->mean = wsp_mean(v, n);
  s->median = wsp_quantile(v, n, 0.5);
}

double wsp_min_window_ratio(const double *x, size_t n, size_t w) {
  if (n == 0) return 0;
  if (w > n) w = n;
  if (w == 0) w = 1;
  double lo = 0, mean = wsp_mean(x, n);
  for (size_t t = 0; t + w <= n; t++) {
    double m = wsp_mean(x + t, w);
    if (t == 0 || m < lo) lo = m;
  }
  return mean > 0 ? lo / mean : 0;
}
