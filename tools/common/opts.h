/*
 * Small helpers for the command-line tools: parsing sizes ("64K"), lists
 * ("1K,64K"), densities ("1/p,0.1") with errors that name the option.
 */
#ifndef WSP_OPTS_H
#define WSP_OPTS_H

#include <stddef.h>

#define WSP_OPTS_MAX_LIST 64

/* "123", "4K", "1M", "2G" (powers of two). 0 on success, -1 on error
 * (message printed to stderr naming `opt`). */
int wsp_opt_size(const char *opt, const char *s, size_t *out);
/* Comma-separated sizes; returns the count or -1. */
int wsp_opt_size_list(const char *opt, const char *s, size_t *out, int max);
/* Comma-separated densities in [0,1]; "1/p" is stored as a negative value
 * meaning "one peer" and resolved by wsp_density_resolve. */
int wsp_opt_density_list(const char *opt, const char *s, double *out, int max);
double wsp_density_resolve(double d, int p);
/* Positive integer with an upper bound. */
int wsp_opt_int(const char *opt, const char *s, long lo, long hi, long *out);
/* A rate in bytes per second: a number with an optional unit, bytes/s
 * ("3000000", "3MB", "500KB", decimal) or bits/s in tc's syntax ("25mbit",
 * "1gbit", "800kbit"). 0 on success, -1 on error (message naming `opt`). */
int wsp_opt_rate(const char *opt, const char *s, double *bytes_per_s);
/* Seconds: a positive number ("10", "0.5"). */
int wsp_opt_seconds(const char *opt, const char *s, double lo, double hi,
                    double *out);
/* Human text for a byte count ("64K"). */
const char *wsp_fmt_size(size_t bytes, char *buf, size_t len);

#endif
