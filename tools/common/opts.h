/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Command-line options of the tools, declared as tables. A command lists
 * its options once, as rows {name, kind, target, placeholder, help,
 * default}; parsing, --help and every error message (which always names the
 * option) come from that table, so no tool parses or documents an option by
 * hand. Sizes and rates are read by the library's wsp_parse_size and
 * wsp_parse_rate, the rules the WSP_* variables follow.
 *
 * The conventions every tool keeps (docs/tools.md): a value follows its
 * option as the next word or after '=' (--sizes 4K or --sizes=4K); --help
 * and --version anywhere; an old name stays accepted as a row of kind
 * WSP_OPT_ALIAS (WSP_OPT_DEPRECATED below), which prints one warning
 * naming the new one.
 *
 * Nothing here calls MPI: a tool prints errors on one rank only by passing
 * a NULL error stream on the others, and the unit tests call the parser
 * directly.
 */
#ifndef WSP_OPTS_H
#define WSP_OPTS_H

#include <stddef.h>
#include <stdio.h>

#define WSP_OPTS_MAX_LIST 64

/* Lists keep their values and their number together; a tool sets its
 * default by initialising the list, and a list on the command line
 * replaces it. */
typedef struct wsp_opt_sizes {
  size_t v[WSP_OPTS_MAX_LIST];
  int n;
} wsp_opt_sizes_t;

typedef struct wsp_opt_doubles {
  double v[WSP_OPTS_MAX_LIST];
  int n;
} wsp_opt_doubles_t;

typedef struct wsp_opt_ints {
  int v[WSP_OPTS_MAX_LIST];
  int n;
} wsp_opt_ints_t;

/* Names kept as text (checked by the tool, e.g. against tables only it
 * knows); item[i] points into buf. */
typedef struct wsp_opt_strings {
  char buf[1024];
  const char *item[WSP_OPTS_MAX_LIST];
  int n;
} wsp_opt_strings_t;

typedef enum wsp_opt_kind {
  WSP_OPT_FLAG,         /* int: set to 1; takes no value */
  WSP_OPT_INT,          /* long in [lo, hi] */
  WSP_OPT_DOUBLE,       /* double in [lo, hi] */
  WSP_OPT_SIZE,         /* size_t in [lo, hi] (wsp_parse_size) */
  WSP_OPT_SIZE_LIST,    /* wsp_opt_sizes_t: comma-separated, each in [lo, hi] */
  WSP_OPT_DENSITY_LIST, /* wsp_opt_doubles_t: fractions in [0,1], "10%", or
                           "1/p" (stored as -1, see wsp_density_resolve) */
  WSP_OPT_RATE,         /* double, bytes per second (wsp_parse_rate) */
  WSP_OPT_STRING,       /* const char *: the argument itself */
  WSP_OPT_STRING_LIST,  /* wsp_opt_strings_t: comma-separated text */
  WSP_OPT_CHOICE,       /* int: index of the value in choices */
  WSP_OPT_CHOICE_LIST,  /* wsp_opt_ints_t: indices in choices, in the order
                           given, a repeated name kept once */
  WSP_OPT_ALIAS         /* a deprecated name: `help` holds the option's
                           name now, whose row parses the value; not shown
                           by --help */
} wsp_opt_kind_t;

typedef struct wsp_opt {
  const char *name;   /* "--sizes"; NULL ends the table */
  wsp_opt_kind_t kind;
  void *target;       /* of the type the kind names */
  const char *arg;    /* placeholder shown by --help ("LIST", "N") */
  const char *help;   /* one paragraph; --help wraps it */
  const char *def;    /* the default as --help shows it; NULL: none shown */
  /* Bounds of INT and DOUBLE (always given), SIZE and SIZE_LIST (hi = 0:
   * at most 1 TiB, which no benchmark needs more of). */
  double lo, hi;
  const char *const *choices; /* CHOICE and CHOICE_LIST; NULL-terminated */
  int *given;         /* if not NULL, set to 1 when the option appears */
} wsp_opt_t;

/* The row of a deprecated name OLD of the option NEW (a row of its own in
 * the same table): OLD keeps working and prints once
 * "warning: OLD is deprecated, use NEW". */
#define WSP_OPT_DEPRECATED(old, now)                                                               \
  { (old), WSP_OPT_ALIAS, NULL, NULL, (now), NULL, 0, 0, NULL, NULL }

typedef struct wsp_opt_cmd {
  const char *usage;  /* the first lines of --help */
  const wsp_opt_t *opts;
  const char *footer; /* text after the options; may be NULL */
} wsp_opt_cmd_t;

enum { WSP_OPTS_OK = 0, WSP_OPTS_HELP = 1, WSP_OPTS_ERROR = 2 };

/* Parses argv[1..argc) (argv[0] is the command's name) into the targets;
 * a value is the next word or follows '=' in the same word (--iters=5).
 * --help or -h prints the help to `out` (when not NULL) and returns
 * WSP_OPTS_HELP; an unknown option, a missing value, a value given to a
 * flag or a bad value prints one line "error: OPTION: ..." (or "error:
 * unknown option OPTION ...") to `err` (when not NULL) and returns
 * WSP_OPTS_ERROR; otherwise WSP_OPTS_OK. A deprecated name prints its
 * warning to `err` (when not NULL), once. */
int wsp_opts_parse(const wsp_opt_cmd_t *cmd, int argc, char **argv, FILE *out,
                   FILE *err);
/* When argv holds --version: prints "NAME (wirespeed) X.Y.Z" to out and
 * returns 1 (the tool then exits 0, before MPI_Init, printing nothing
 * else); else 0. */
int wsp_opts_version(const char *name, int argc, char **argv, FILE *out);
/* The help text generated from the table. */
void wsp_opts_help(const wsp_opt_cmd_t *cmd, FILE *f);

/* A density as WSP_OPT_DENSITY_LIST stores it, for p ranks: "1/p" (stored
 * as a negative value) is one peer of the other p - 1. */
double wsp_density_resolve(double d, int p);
/* Human text for a byte count ("64K"). */
const char *wsp_fmt_size(size_t bytes, char *buf, size_t len);

#endif
