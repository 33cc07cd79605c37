#include "opts.h"

#include "wirespeed.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int wsp_opt_size(const char *opt, const char *s, size_t *out) {
  size_t v = 0;
  /* wsp_parse_size reads the text (the same rules as WSP_* variables); a
   * benchmark has no use for more than 1 TiB. */
  if (wsp_parse_size(s, &v) != WSP_OK || v > ((size_t)1 << 40)) {
    fprintf(stderr,
            "error: %s: \"%s\" is not a size of at most 1 TiB (examples: 0, 100, "
            "4K, 4KiB, 1M)\n",
            opt, s ? s : "");
    return -1;
  }
  *out = v;
  return 0;
}

/* Splits a comma-separated list and calls parse(opt, item, i, ctx) on each
 * item; returns the number of items or -1 (message printed). */
typedef int (*wsp__item_fn)(const char *opt, const char *item, int i, void *ctx);

static int wsp__list(const char *opt, const char *s, int max, wsp__item_fn parse,
                     void *ctx) {
  char buf[1024];
  if (strlen(s) >= sizeof buf) {
    fprintf(stderr, "error: %s: list too long\n", opt);
    return -1;
  }
  strcpy(buf, s);
  int n = 0;
  for (char *save = NULL, *t = strtok_r(buf, ",", &save); t;
       t = strtok_r(NULL, ",", &save)) {
    if (n == max) {
      fprintf(stderr, "error: %s: more than %d values\n", opt, max);
      return -1;
    }
    if (parse(opt, t, n++, ctx) != 0) return -1;
  }
  if (n == 0) fprintf(stderr, "error: %s: empty list\n", opt);
  return n ? n : -1;
}

static int wsp__size_item(const char *opt, const char *t, int i, void *ctx) {
  return wsp_opt_size(opt, t, &((size_t *)ctx)[i]);
}

int wsp_opt_size_list(const char *opt, const char *s, size_t *out, int max) {
  return wsp__list(opt, s, max, wsp__size_item, out);
}

static int wsp__density_item(const char *opt, const char *t, int i, void *ctx) {
  double *out = ctx;
  if (strcmp(t, "1/p") == 0) {
    out[i] = -1.0;
    return 0;
  }
  char *end = NULL;
  errno = 0;
  double v = strtod(t, &end);
  int ok = !errno && end != t;
  if (ok && *end == '%') v /= 100.0, end++;
  if (!ok || *end != '\0') {
    fprintf(stderr,
            "error: %s: \"%s\" is not a density (a fraction in [0,1], a "
            "percentage like 10%%, or 1/p)\n",
            opt, t);
    return -1;
  }
  if (!(v >= 0.0 && v <= 1.0)) {
    fprintf(stderr, "error: %s: density %s is outside [0, 1]\n", opt, t);
    return -1;
  }
  out[i] = v;
  return 0;
}

int wsp_opt_density_list(const char *opt, const char *s, double *out, int max) {
  return wsp__list(opt, s, max, wsp__density_item, out);
}

double wsp_density_resolve(double d, int p) {
  if (d >= 0.0) return d;
  return p > 1 ? 1.0 / (double)(p - 1) : 0.0;
}

int wsp_opt_int(const char *opt, const char *s, long lo, long hi, long *out) {
  char *end = NULL;
  errno = 0;
  long v = s ? strtol(s, &end, 10) : 0;
  if (s == NULL || errno || end == s || *end != '\0' || v < lo || v > hi) {
    fprintf(stderr, "error: %s: \"%s\" is not an integer in [%ld, %ld]\n", opt,
            s ? s : "", lo, hi);
    return -1;
  }
  *out = v;
  return 0;
}

const char *wsp_fmt_size(size_t bytes, char *buf, size_t len) {
  if (bytes >= (1u << 30) && bytes % (1u << 30) == 0)
    snprintf(buf, len, "%zuG", bytes >> 30);
  else if (bytes >= (1u << 20) && bytes % (1u << 20) == 0)
    snprintf(buf, len, "%zuM", bytes >> 20);
  else if (bytes >= 1024 && bytes % 1024 == 0)
    snprintf(buf, len, "%zuK", bytes >> 10);
  else
    snprintf(buf, len, "%zu", bytes);
  return buf;
}

int wsp_opt_rate(const char *opt, const char *s, double *bytes_per_s) {
  if (wsp_parse_rate(s, bytes_per_s) == WSP_OK) return 0;
  fprintf(stderr,
          "error: %s: \"%s\" is not a rate > 0 (bytes/s: 3000000, 3MB; "
          "bits/s: 25mbit, 1gbit)\n",
          opt, s ? s : "");
  return -1;
}

int wsp_opt_seconds(const char *opt, const char *s, double lo, double hi,
                    double *out) {
  char *end = NULL;
  errno = 0;
  double v = s ? strtod(s, &end) : 0;
  if (s == NULL || errno || end == s || *end != '\0' || !(v >= lo) || v > hi) {
    fprintf(stderr, "error: %s: \"%s\" is not a number of seconds in [%g, %g]\n",
            opt, s ? s : "", lo, hi);
    return -1;
  }
  *out = v;
  return 0;
}
