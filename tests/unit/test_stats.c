/* SPDX-License-Identifier: BSD-3-Clause */
/* The benchmarks' statistics against hand-computed values and, for random
 * inputs, against definitions computed another way: the median as the
 * value with as many values below as above (counted, not sorted), the
 * minimum window by summing each window from scratch. */
#include <math.h>
#include <stdlib.h>

#include "check.h"
#include "pattern.h"
#include "stats.h"

/* The median by counting: for odd n the value with (n-1)/2 values below and
 * above (ties allowed); for even n the mean of the two middle order
 * statistics, each found as the value whose rank range covers that order. */
static double order_stat(const double *v, size_t n, size_t k) {
  for (size_t i = 0; i < n; i++) {
    size_t below = 0, equal = 0;
    for (size_t j = 0; j < n; j++) {
      below += v[j] < v[i];
      equal += v[j] == v[i];
    }
    if (below <= k && k < below + equal) return v[i];
  }
  return NAN;
}

static double median_by_count(const double *v, size_t n) {
  if (n % 2) return order_stat(v, n, n / 2);
  return 0.5 * (order_stat(v, n, n / 2 - 1) + order_stat(v, n, n / 2));
}

static double min_window_direct(const double *x, size_t n, size_t w) {
  double total = 0, lo = INFINITY;
  for (size_t i = 0; i < n; i++) total += x[i];
  if (w > n) w = n;
  for (size_t s = 0; s + w <= n; s++) {
    double sum = 0;
    for (size_t k = s; k < s + w; k++) sum += x[k];
    if (sum / (double)w < lo) lo = sum / (double)w;
  }
  return total > 0 ? lo / (total / (double)n) : 0;
}

static void by_hand(void) {
  double a[] = {5, 1, 4, 2, 3};
  wsp_stats_t s;
  wsp_stats_sorted(a, 5, &s);
  CHECK(s.n == 5 && s.min == 1 && s.max == 5 && s.mean == 3 && s.median == 3,
        "1..5: min %g max %g mean %g median %g", s.min, s.max, s.mean, s.median);
  CHECK(a[0] == 1 && a[4] == 5, "sorted in place");
  double b[] = {10, 2, 4, 8};
  wsp_stats_sorted(b, 4, &s);
  CHECK(s.median == 6 && s.mean == 6, "even n: median of 4 and 8 is 6 (%g)", s.median);
  CHECK(wsp_quantile(b, 4, 0.0) == 2 && wsp_quantile(b, 4, 1.0) == 10,
        "quantiles 0 and 1 are min and max");
  CHECK(fabs(wsp_quantile(b, 4, 0.9) - 9.4) < 1e-12,
        "q 0.9 of 2,4,8,10 is at position 2.7: 0.7 of the way from 8 to 10: %g",
        wsp_quantile(b, 4, 0.9));
  const double d[] = {9, 3, 7, 1};
  CHECK(wsp_median(d, 4) == 5 && d[0] == 9 && d[3] == 1,
        "wsp_median: 5 (between 3 and 7), the input untouched: %g", wsp_median(d, 4));
  CHECK(wsp_median(d, 0) == 0, "median of nothing");
  wsp_stats_sorted(NULL, 0, &s);
  CHECK(s.n == 0 && s.median == 0 && s.mean == 0, "empty");
  double c[] = {7};
  wsp_stats_sorted(c, 1, &s);
  CHECK(s.min == 7 && s.median == 7 && s.max == 7, "one value");
  /* A dip: 10 10 10 0 10 10 (mean 50/6); the lowest 2-window is 5. */
  double r[] = {10, 10, 10, 0, 10, 10};
  CHECK(fabs(wsp_min_window_ratio(r, 6, 2) - 5.0 / (50.0 / 6)) < 1e-12,
        "window 2: %g", wsp_min_window_ratio(r, 6, 2));
  CHECK(wsp_min_window_ratio(r, 6, 6) == 1.0, "one window is the mean");
  CHECK(wsp_min_window_ratio(r, 6, 9) == 1.0, "a window longer than the series");
  double z[] = {0, 0, 0};
  CHECK(wsp_min_window_ratio(z, 3, 2) == 0, "zero mean");
}

static void random_inputs(void) {
  uint64_t st = 42;
  double v[41], w[41];
  for (int round = 0; round < 200; round++) {
    size_t n = 1 + (size_t)(wsp_splitmix64(&st) % 41);
    for (size_t i = 0; i < n; i++) {
      /* Few distinct values, so ties are common. */
      v[i] = (double)(wsp_splitmix64(&st) % 9) * 0.5;
      w[i] = v[i];
    }
    double med = median_by_count(v, n), lo = INFINITY, hi = -INFINITY, sum = 0;
    for (size_t i = 0; i < n; i++) {
      lo = v[i] < lo ? v[i] : lo;
      hi = v[i] > hi ? v[i] : hi;
      sum += v[i];
    }
    size_t win = 1 + (size_t)(wsp_splitmix64(&st) % 7);
    double ratio = wsp_min_window_ratio(v, n, win);
    double want = min_window_direct(v, n, win);
    CHECK(fabs(ratio - want) <= 1e-12 * (want > 1 ? want : 1),
          "round %d: window %zu of %zu: %g, directly %g", round, win, n, ratio, want);
    wsp_stats_t s;
    wsp_stats_sorted(w, n, &s);
    CHECK(s.median == med, "round %d: median %g, by counting %g", round, s.median, med);
    CHECK(wsp_median(v, n) == med, "round %d: wsp_median %g, by counting %g", round,
          wsp_median(v, n), med);
    CHECK(s.min == lo && s.max == hi, "round %d: min/max", round);
    CHECK(fabs(s.mean - sum / (double)n) <= 1e-12 * (hi > 1 ? hi : 1),
          "round %d: mean", round);
    for (size_t i = 1; i < n; i++) CHECK(w[i - 1] <= w[i], "round %d: sorted", round);
  }
}

int main(void) {
  by_hand();
  random_inputs();
  return check_summary("test_stats");
}
