/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Parsing what users write (sizes, rates, the WSP_* variables that hold
 * them) and the one hash compared across ranks: the helpers every layer
 * uses. The configuration itself, its bounds and the WSP_* parser are the
 * communicator's (src/comm/config.c).
 */
#include "wsp_internal.h"

#include <errno.h>
#include <ctype.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int wsp_parse_rate(const char *s, double *bytes_per_s) {
  static const struct {
    const char *unit;
    double factor;
  } units[] = {{"", 1},           {"b", 1},           {"kb", 1e3},
               {"mb", 1e6},       {"gb", 1e9},        {"bit", 1.0 / 8},
               {"kbit", 1e3 / 8}, {"mbit", 1e6 / 8}, {"gbit", 1e9 / 8}};
  if (bytes_per_s == NULL)
    return wsp__fail_quiet(WSP_ERR_ARG, "wsp_parse_rate: bytes_per_s is NULL");
  char *end = NULL;
  errno = 0;
  double v = s ? strtod(s, &end) : 0;
  if (s && !errno && end != s && isfinite(v) && v > 0)
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
      if (strcasecmp(end, units[i].unit) == 0) {
        double b = v * units[i].factor; /* "1e308gbit" overflows here */
        if (!isfinite(b) || !(b > 0)) break;
        *bytes_per_s = b;
        return WSP_OK;
      }
  return wsp__fail_quiet(WSP_ERR_ARG,
                         "wsp_parse_rate: \"%s\" is not a rate > 0 (bytes/s: "
                         "3000000, 3MB; bits/s: 25mbit, 1gbit)",
                         s ? s : "(null)");
}

int wsp_parse_size(const char *s, size_t *bytes) {
  static const struct {
    const char *unit;
    int shift;
  } units[] = {{"", 0},    {"b", 0},    {"k", 10},   {"kb", 10},
               {"kib", 10}, {"m", 20},   {"mb", 20},  {"mib", 20},
               {"g", 30},   {"gb", 30},  {"gib", 30}};
  if (bytes == NULL)
    return wsp__fail_quiet(WSP_ERR_ARG, "wsp_parse_size: bytes is NULL");
  /* Digits first: strtoull would skip blanks and take a sign (wrapping
   * "-1" around to ULLONG_MAX), and a bare unit would read as 0. */
  if (s && isdigit((unsigned char)s[0])) {
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    for (size_t i = 0; !errno && i < sizeof units / sizeof units[0]; i++)
      if (strcasecmp(end, units[i].unit) == 0) {
        /* A value the unit would shift past size_t is refused, not
         * wrapped around into range. */
        if (v > (unsigned long long)(SIZE_MAX >> units[i].shift)) break;
        *bytes = (size_t)(v << units[i].shift);
        return WSP_OK;
      }
  }
  return wsp__fail_quiet(WSP_ERR_ARG,
                         "wsp_parse_size: \"%s\" is not a size (bytes: 4096, "
                         "4K, 4KiB, 1M, 2G; units are powers of two)",
                         s ? s : "(null)");
}

int wsp__env_size(const char *var, size_t lo, size_t hi, size_t *out) {
  const char *s = getenv(var);
  if (s == NULL || *s == '\0') return WSP_OK;
  size_t v = 0;
  if (wsp_parse_size(s, &v) != WSP_OK || v < lo || v > hi)
    return wsp__fail(NULL, WSP_ERR_CONFIG,
                     "%s=\"%s\": expected an integer in [%zu, %zu] (K, M, G: "
                     "powers of two)",
                     var, s, lo, hi);
  *out = v;
  return WSP_OK;
}

int wsp__env_count(const char *var, size_t lo, size_t hi, size_t *out) {
  const char *s = getenv(var);
  if (s == NULL || *s == '\0') return WSP_OK;
  /* Digits only: a count, a flag or a time is not a size, so "1K" or
   * "0x10" is refused rather than read as 1024 or 16. */
  size_t v = 0;
  int ok = 1;
  for (const char *c = s; *c && ok; c++) {
    ok = *c >= '0' && *c <= '9' && v <= (SIZE_MAX - (size_t)(*c - '0')) / 10;
    if (ok) v = v * 10 + (size_t)(*c - '0');
  }
  if (!ok || v < lo || v > hi)
    return wsp__fail(NULL, WSP_ERR_CONFIG,
                     "%s=\"%s\": expected a whole number in [%zu, %zu] (digits only)", var, s, lo,
                     hi);
  *out = v;
  return WSP_OK;
}

int wsp__env_probe_figures(double out[5]) {
  const char *s = getenv("WSP_P2P_PROBE_FIGURES");
  if (s == NULL || *s == '\0') return 0;
  /* Three to five figures separated by commas, each a finite number
   * (strtod up to the comma or the end), nothing else. */
  double f[5] = {0, 0, 0, 0, 0};
  int n = 0, bad = 0;
  for (const char *c = s; n < 5 && !bad; n++) {
    char *e;
    f[n] = strtod(c, &e);
    bad = e == c || !isfinite(f[n]) || (*e != ',' && *e != '\0');
    if (*e == '\0') {
      n++;
      break;
    }
    c = e + 1;
    if (n == 4) bad = 1; /* a sixth figure */
  }
  if (bad || n < 3 || !(f[0] > 0) || !(f[1] > 0) || !(f[2] >= 0) || !(f[3] >= 0 && f[3] < 1) ||
      !(f[4] == 0 || f[4] == 1))
    return wsp__fail(NULL, WSP_ERR_CONFIG,
                     "WSP_P2P_PROBE_FIGURES=\"%s\": expected RATE1,RATEK,RTT[,LOSS[,RAMPING]] "
                     "(two rates above 0 in bytes/s, a round trip in s, a share of segments "
                     "lost in [0, 1), 0 or 1)",
                     s);
  memcpy(out, f, sizeof f);
  return 1;
}

uint64_t wsp__fnv(uint64_t h, const void *p, size_t n) {
  const unsigned char *b = p;
  for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 1099511628211ULL;
  return h;
}
