/* SPDX-License-Identifier: BSD-3-Clause */
#include "opts.h"

#include "wirespeed.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define SIZE_LIMIT ((double)((size_t)1 << 40))
#define HELP_WIDTH 78
#define HELP_INDENT 21

/* Every message of the parser goes through here, so that a rank that
 * passes no stream stays silent and each message is one line naming the
 * option. */
static void fail(FILE *err, const char *opt, const char *fmt, ...) {
  if (err == NULL) return;
  /* One write for the whole line: stderr is unbuffered, and the launcher
   * merges it with stdout, where another line may land between pieces. */
  char line[1024];
  int n = snprintf(line, sizeof line, "error: %s: ", opt);
  va_list ap;
  va_start(ap, fmt);
  if (n >= 0 && (size_t)n < sizeof line) vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
  va_end(ap);
  fprintf(err, "%s\n", line);
}

/* ---- one value ---- */

static int parse_size(const wsp_opt_t *o, const char *s, size_t *out, FILE *err) {
  double lo = o->lo, hi = o->hi > 0 ? o->hi : SIZE_LIMIT;
  size_t v = 0;
  if (wsp_parse_size(s, &v) != WSP_OK) {
    fail(err, o->name, "\"%s\" is not a size (examples: 0, 100, 4K, 4KiB, 1M)", s);
    return -1;
  }
  if ((double)v < lo || (double)v > hi) {
    char a[32], b[32];
    fail(err, o->name, "\"%s\" is not a size in [%s, %s]", s,
         wsp_fmt_size((size_t)lo, a, sizeof a), wsp_fmt_size((size_t)hi, b, sizeof b));
    return -1;
  }
  *out = v;
  return 0;
}

static int parse_int(const wsp_opt_t *o, const char *s, long *out, FILE *err) {
  long lo = (long)o->lo, hi = (long)o->hi;
  char *end = NULL;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (errno || end == s || *end != '\0' || v < lo || v > hi) {
    fail(err, o->name, "\"%s\" is not an integer in [%ld, %ld]", s, lo, hi);
    return -1;
  }
  *out = v;
  return 0;
}

static int parse_double(const wsp_opt_t *o, const char *s, double *out, FILE *err) {
  double lo = o->lo, hi = o->hi;
  char *end = NULL;
  errno = 0;
  double v = strtod(s, &end);
  /* !(v >= lo) also refuses NaN. */
  if (errno || end == s || *end != '\0' || !(v >= lo) || v > hi) {
    fail(err, o->name, "\"%s\" is not a number in [%g, %g]", s, lo, hi);
    return -1;
  }
  *out = v;
  return 0;
}

static int parse_density(const wsp_opt_t *o, const char *s, double *out, FILE *err) {
  if (strcmp(s, "1/p") == 0) {
    *out = -1.0;
    return 0;
  }
  char *end = NULL;
  errno = 0;
  double v = strtod(s, &end);
  int ok = !errno && end != s;
  if (ok && *end == '%') v /= 100.0, end++;
  if (!ok || *end != '\0') {
    fail(err, o->name,
         "\"%s\" is not a density (a fraction in [0,1], a percentage like "
         "10%%, or 1/p)", s);
    return -1;
  }
  if (!(v >= 0.0 && v <= 1.0)) {
    fail(err, o->name, "density %s is outside [0, 1]", s);
    return -1;
  }
  *out = v;
  return 0;
}

/* The names of choices as the error shows them: "a nor b" for two, else
 * "one of a, b, c". */
static void fail_choice(const wsp_opt_t *o, const char *s, FILE *err) {
  if (err == NULL) return;
  int n = 0;
  while (o->choices[n]) n++;
  if (n == 2) {
    fail(err, o->name, "\"%s\" is neither %s nor %s", s, o->choices[0], o->choices[1]);
    return;
  }
  char list[512] = "";
  size_t used = 0;
  for (int i = 0; i < n; i++) {
    int k = snprintf(list + used, sizeof list - used, "%s%s", i ? ", " : "", o->choices[i]);
    if (k < 0 || (size_t)k >= sizeof list - used) break;
    used += (size_t)k;
  }
  fail(err, o->name, "\"%s\" is not one of %s", s, list);
}

static int parse_choice(const wsp_opt_t *o, const char *s, int *out, FILE *err) {
  for (int i = 0; o->choices[i]; i++)
    if (strcmp(s, o->choices[i]) == 0) {
      *out = i;
      return 0;
    }
  fail_choice(o, s, err);
  return -1;
}

/* ---- comma-separated lists ---- */

/* Calls item(o, text, i, dst, err) on each item of a comma-separated list
 * (in a copy of s); an item returns 1 when stored at dst[i], 0 when dropped
 * (a repeated choice), -1 on error. Returns the number stored or -1
 * (message printed). */
typedef int (*item_fn)(const wsp_opt_t *o, const char *item, int i, void *dst,
                       FILE *err);

static int split_list(const wsp_opt_t *o, const char *s, item_fn item, void *dst,
                      FILE *err) {
  char buf[1024];
  if (strlen(s) >= sizeof buf) {
    fail(err, o->name, "list too long");
    return -1;
  }
  strcpy(buf, s);
  int n = 0;
  for (char *save = NULL, *t = strtok_r(buf, ",", &save); t;
       t = strtok_r(NULL, ",", &save)) {
    if (n == WSP_OPTS_MAX_LIST) {
      fail(err, o->name, "more than %d values", WSP_OPTS_MAX_LIST);
      return -1;
    }
    int rc = item(o, t, n, dst, err);
    if (rc < 0) return -1;
    n += rc;
  }
  if (n == 0) fail(err, o->name, "empty list");
  return n ? n : -1;
}

static int size_item(const wsp_opt_t *o, const char *t, int i, void *dst, FILE *err) {
  return parse_size(o, t, &((size_t *)dst)[i], err) ? -1 : 1;
}

static int density_item(const wsp_opt_t *o, const char *t, int i, void *dst,
                        FILE *err) {
  return parse_density(o, t, &((double *)dst)[i], err) ? -1 : 1;
}

/* A repeated name is kept once: running one algorithm twice in a row of a
 * table would only repeat a column. */
static int choice_item(const wsp_opt_t *o, const char *t, int i, void *dst,
                       FILE *err) {
  int *v = dst, c = 0;
  if (parse_choice(o, t, &c, err)) return -1;
  for (int j = 0; j < i; j++)
    if (v[j] == c) return 0;
  v[i] = c;
  return 1;
}

static int parse_strings(const wsp_opt_t *o, const char *s, FILE *err) {
  wsp_opt_strings_t l, *out = o->target;
  if (strlen(s) >= sizeof l.buf) {
    fail(err, o->name, "list too long");
    return -1;
  }
  strcpy(l.buf, s);
  l.n = 0;
  for (char *save = NULL, *t = strtok_r(l.buf, ",", &save); t;
       t = strtok_r(NULL, ",", &save)) {
    if (l.n == WSP_OPTS_MAX_LIST) {
      fail(err, o->name, "more than %d names", WSP_OPTS_MAX_LIST);
      return -1;
    }
    l.item[l.n++] = t;
  }
  if (l.n == 0) {
    fail(err, o->name, "empty list");
    return -1;
  }
  /* The items point into the buffer: moved with it. */
  memcpy(out->buf, l.buf, sizeof l.buf);
  for (int i = 0; i < l.n; i++) out->item[i] = out->buf + (l.item[i] - l.buf);
  out->n = l.n;
  return 0;
}

/* Lists are parsed into a copy and stored only when every item is good,
 * so that an error leaves the default as it was. */
static int parse_list(const wsp_opt_t *o, const char *s, FILE *err) {
  int n = -1;
  switch (o->kind) {
  case WSP_OPT_SIZE_LIST: {
    wsp_opt_sizes_t l;
    if ((n = split_list(o, s, size_item, l.v, err)) > 0) {
      l.n = n;
      *(wsp_opt_sizes_t *)o->target = l;
    }
    break;
  }
  case WSP_OPT_DENSITY_LIST: {
    wsp_opt_doubles_t l;
    if ((n = split_list(o, s, density_item, l.v, err)) > 0) {
      l.n = n;
      *(wsp_opt_doubles_t *)o->target = l;
    }
    break;
  }
  case WSP_OPT_CHOICE_LIST: {
    wsp_opt_ints_t l;
    if ((n = split_list(o, s, choice_item, l.v, err)) > 0) {
      l.n = n;
      *(wsp_opt_ints_t *)o->target = l;
    }
    break;
  }
  default:
    return parse_strings(o, s, err);
  }
  return n > 0 ? 0 : -1;
}

/* One option's value into its target; 0 or -1 (message printed). */
static int parse_value(const wsp_opt_t *o, const char *v, FILE *err) {
  switch (o->kind) {
  case WSP_OPT_INT: return parse_int(o, v, o->target, err);
  case WSP_OPT_DOUBLE: return parse_double(o, v, o->target, err);
  case WSP_OPT_SIZE: return parse_size(o, v, o->target, err);
  case WSP_OPT_RATE:
    if (wsp_parse_rate(v, o->target) == WSP_OK) return 0;
    fail(err, o->name,
         "\"%s\" is not a rate > 0 (bytes/s: 3000000, 3MB; bits/s: 25mbit, 1gbit)", v);
    return -1;
  case WSP_OPT_STRING: *(const char **)o->target = v; return 0;
  case WSP_OPT_CHOICE: return parse_choice(o, v, o->target, err);
  case WSP_OPT_SIZE_LIST:
  case WSP_OPT_DENSITY_LIST:
  case WSP_OPT_STRING_LIST:
  case WSP_OPT_CHOICE_LIST: return parse_list(o, v, err);
  case WSP_OPT_FLAG: *(int *)o->target = 1; return 0;
  case WSP_OPT_ALIAS:
    break; /* resolved by the caller */
  }
  return -1;
}

static const wsp_opt_t *find(const wsp_opt_cmd_t *cmd, const char *name, size_t len) {
  for (const wsp_opt_t *o = cmd->opts; o->name; o++)
    if (strlen(o->name) == len && strncmp(o->name, name, len) == 0) return o;
  return NULL;
}

#define MAX_ALIASES 32

int wsp_opts_parse(const wsp_opt_cmd_t *cmd, int argc, char **argv, FILE *out,
                   FILE *err) {
  /* The deprecated names already warned about: one warning each. */
  const wsp_opt_t *warned[MAX_ALIASES];
  int nwarned = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      if (out) wsp_opts_help(cmd, out);
      return WSP_OPTS_HELP;
    }
    /* --name=value: the name is what comes before the first '='. */
    const char *eq = strncmp(a, "--", 2) == 0 ? strchr(a, '=') : NULL;
    size_t len = eq ? (size_t)(eq - a) : strlen(a);
    const wsp_opt_t *o = find(cmd, a, len);
    if (o && o->kind == WSP_OPT_ALIAS) {
      const char *now = o->help;
      int seen = 0;
      for (int k = 0; k < nwarned; k++) seen |= warned[k] == o;
      if (!seen && err) fprintf(err, "warning: %s is deprecated, use %s\n", o->name, now);
      if (!seen && nwarned < MAX_ALIASES) warned[nwarned++] = o;
      o = find(cmd, now, strlen(now));
    }
    if (o == NULL) {
      if (err) fprintf(err, "error: unknown option %.*s (see --help)\n", (int)len, a);
      return WSP_OPTS_ERROR;
    }
    const char *v = NULL;
    if (o->kind == WSP_OPT_FLAG) {
      if (eq) {
        if (err) fprintf(err, "error: %s takes no value (see --help)\n", o->name);
        return WSP_OPTS_ERROR;
      }
    } else if (eq) {
      v = eq + 1;
    } else if (i + 1 < argc) {
      v = argv[++i];
    }
    if (o->kind != WSP_OPT_FLAG && v == NULL) {
      if (err) fprintf(err, "error: %s needs a value (see --help)\n", o->name);
      return WSP_OPTS_ERROR;
    }
    if (parse_value(o, v, err) != 0) return WSP_OPTS_ERROR;
    if (o->given) *o->given = 1;
  }
  return WSP_OPTS_OK;
}

int wsp_opts_version(const char *name, int argc, char **argv, FILE *out) {
  for (int i = 1; i < argc; i++)
    if (strcmp(argv[i], "--version") == 0) {
      fprintf(out, "%s (wirespeed) %s\n", name, wsp_version());
      return 1;
    }
  return 0;
}

/* ---- --help ---- */

/* Prints text word by word from column `col`, breaking lines before
 * HELP_WIDTH and starting each new one at column `indent`. */
static void wrap(FILE *f, const char *text, int col, int indent) {
  const char *p = text;
  while (*p) {
    while (*p == ' ') p++;
    size_t w = strcspn(p, " ");
    if (w == 0) break;
    if (col > indent && col + 1 + (int)w > HELP_WIDTH) {
      fprintf(f, "\n%*s", indent, "");
      col = indent;
    } else if (col > indent) {
      fputc(' ', f);
      col++;
    }
    fprintf(f, "%.*s", (int)w, p);
    col += (int)w;
    p += w;
  }
  fputc('\n', f);
}

void wsp_opts_help(const wsp_opt_cmd_t *cmd, FILE *f) {
  fprintf(f, "%s\n", cmd->usage);
  for (const wsp_opt_t *o = cmd->opts; o->name; o++) {
    if (o->kind == WSP_OPT_ALIAS) continue; /* docs/tools.md lists the old names */
    char left[128], text[2048];
    int n = snprintf(left, sizeof left, "  %s%s%s", o->name, o->arg ? " " : "",
                     o->arg ? o->arg : "");
    snprintf(text, sizeof text, "%s%s%s%s", o->help, o->def ? " (default " : "",
             o->def ? o->def : "", o->def ? ")" : "");
    /* A long option name gets its own line, the text below it. */
    if (n >= HELP_INDENT) fprintf(f, "%s\n%*s", left, HELP_INDENT, "");
    else fprintf(f, "%-*s", HELP_INDENT, left);
    wrap(f, text, HELP_INDENT, HELP_INDENT);
  }
  fprintf(f, "%-*s%s\n%-*s%s\n", HELP_INDENT, "  --help, -h", "print this help and exit",
          HELP_INDENT, "  --version", "print the version and exit");
  if (cmd->footer) fprintf(f, "\n%s", cmd->footer);
}

/* ---- helpers for values ---- */

double wsp_density_resolve(double d, int p) {
  if (d >= 0.0) return d;
  return p > 1 ? 1.0 / (double)(p - 1) : 0.0;
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
