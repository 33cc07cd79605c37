/* SPDX-License-Identifier: BSD-3-Clause */
/* The table-driven option parser of the tools: every kind parses what it
 * should into its target, and every bad input is refused with one message
 * that names the option (and leaves the target as it was). The expected
 * values are written out here, not computed with the library's parsers. */
#include <string.h>

#include "check.h"
#include "opts.h"

#define MAXMSG 4096

typedef struct targets {
  int quiet, given_sizes;
  long iters;
  double secs, rate;
  size_t max;
  wsp_opt_sizes_t sizes;
  wsp_opt_doubles_t dens;
  wsp_opt_strings_t names;
  const char *label;
  int dtype;
  wsp_opt_ints_t colors;
} targets_t;

static const char *const dtypes[] = {"double", "int", NULL};
static const char *const colors[] = {"red", "green", "blue", NULL};

static targets_t t;
static const wsp_opt_t table[] = {
    {"--quiet", WSP_OPT_FLAG, &t.quiet, NULL, "no table", NULL, 0, 0, NULL, NULL},
    {"--iters", WSP_OPT_INT, &t.iters, "N", "calls", "50", 1, 1000, NULL, NULL},
    {"--seconds", WSP_OPT_DOUBLE, &t.secs, "SEC", "seconds", "0.2", 1e-6, 1e5, NULL, NULL},
    WSP_OPT_DEPRECATED("--max-time", "--seconds"),
    {"--max-bytes-per-rank", WSP_OPT_SIZE, &t.max, "SIZE", "memory", "1G", 0, 0, NULL, NULL},
    {"--sizes", WSP_OPT_SIZE_LIST, &t.sizes, "LIST", "sizes", "1K,64K", 0, (double)(1 << 30), NULL,
     &t.given_sizes},
    {"--densities", WSP_OPT_DENSITY_LIST, &t.dens, "LIST", "densities", NULL, 0, 0, NULL, NULL},
    {"--algs", WSP_OPT_STRING_LIST, &t.names, "LIST", "names", NULL, 0, 0, NULL, NULL},
    {"--rate", WSP_OPT_RATE, &t.rate, "RATE", "a rate", NULL, 0, 0, NULL, NULL},
    {"--label", WSP_OPT_STRING, &t.label, "TEXT", "free text", NULL, 0, 0, NULL, NULL},
    {"--dtype", WSP_OPT_CHOICE, &t.dtype, "T", "type", "double", 0, 0, dtypes, NULL},
    {"--colors", WSP_OPT_CHOICE_LIST, &t.colors, "LIST",
     "a long help text that has to be wrapped over several lines because it "
     "goes on and on about colours, which nobody reads to the end",
     "all", 0, 0, colors, NULL},
    {NULL, 0, NULL, NULL, NULL, NULL, 0, 0, NULL, NULL}};
static const wsp_opt_cmd_t cmd = {"usage: test [options]", table, "Footer.\n"};

static void defaults(void) {
  memset(&t, 0, sizeof t);
  t.iters = 50;
  t.sizes = (wsp_opt_sizes_t){{1024, 65536}, 2};
  t.colors = (wsp_opt_ints_t){{0, 1, 2}, 3};
  t.label = "";
}

/* Runs the parser on the words of `line` (at most 31), with the messages
 * and help text in msg. The words stay in a static buffer, since string
 * options point into them. */
static int run(const char *line, char *msg) {
  static char buf[512];
  char *argv[32] = {"test"};
  int argc = 1;
  snprintf(buf, sizeof buf, "%s", line);
  for (char *sv = NULL, *w = strtok_r(buf, " ", &sv); w; w = strtok_r(NULL, " ", &sv)) {
    if (argc == 32) return -1;
    argv[argc++] = w;
  }
  FILE *f = tmpfile();
  if (f == NULL) {
    perror("tmpfile");
    return -1;
  }
  int rc = wsp_opts_parse(&cmd, argc, argv, f, f);
  rewind(f);
  size_t n = fread(msg, 1, MAXMSG - 1, f);
  msg[n] = '\0';
  fclose(f);
  return rc;
}

static void good_values(void) {
  char msg[MAXMSG];
  defaults();
  int rc = run("--quiet --iters 7 --seconds 0.5 --max-bytes-per-rank 2MiB "
               "--sizes 4KiB,1M,0 --densities 1/p,10%,0.5 --algs ring,auto "
               "--rate 25mbit --label x --dtype int --colors blue,red,blue",
               msg);
  CHECK(rc == WSP_OPTS_OK, "rc %d, messages: %s", rc, msg);
  CHECK(msg[0] == '\0', "no message for good input: %s", msg);
  CHECK(t.quiet == 1, "flag");
  CHECK(t.iters == 7, "int %ld", t.iters);
  CHECK(t.secs == 0.5, "double %g", t.secs);
  CHECK(t.max == 2097152, "size %zu", t.max);
  CHECK(t.sizes.n == 3 && t.sizes.v[0] == 4096 && t.sizes.v[1] == 1048576 &&
            t.sizes.v[2] == 0,
        "size list n=%d", t.sizes.n);
  CHECK(t.given_sizes == 1, "given");
  CHECK(t.dens.n == 3 && t.dens.v[0] == -1.0 && t.dens.v[1] == 0.1 &&
            t.dens.v[2] == 0.5,
        "density list");
  CHECK(t.names.n == 2 && !strcmp(t.names.item[0], "ring") &&
            !strcmp(t.names.item[1], "auto"),
        "string list");
  CHECK(t.rate == 3125000.0, "rate %g (25 Mbit/s = 3125000 B/s)", t.rate);
  CHECK(!strcmp(t.label, "x"), "string");
  CHECK(t.dtype == 1, "choice %d", t.dtype);
  CHECK(t.colors.n == 2 && t.colors.v[0] == 2 && t.colors.v[1] == 0,
        "choice list keeps the first of a repeated name (n=%d)", t.colors.n);
  CHECK(wsp_density_resolve(-1.0, 5) == 0.25, "1/p at p=5 is one of 4 peers");
  CHECK(wsp_density_resolve(0.3, 5) == 0.3, "a fraction stays");
}

/* A bad command line: refused, one message naming `opt` and containing
 * `what`, and the targets as they were. */
static void bad(const char *line, const char *opt, const char *what) {
  char msg[MAXMSG];
  defaults();
  targets_t before = t;
  int rc = run(line, msg);
  CHECK(rc == WSP_OPTS_ERROR, "\"%s\": rc %d", line, rc);
  CHECK(strncmp(msg, "error: ", 7) == 0 && strstr(msg, opt) != NULL,
        "\"%s\": the message names %s: %s", line, opt, msg);
  CHECK(strstr(msg, what) != NULL, "\"%s\": message has \"%s\": %s", line, what, msg);
  CHECK(strchr(msg, '\n') == msg + strlen(msg) - 1, "\"%s\": one line: %s", line, msg);
  CHECK(before.sizes.n == t.sizes.n &&
            !memcmp(before.sizes.v, t.sizes.v, sizeof t.sizes.v) &&
            before.colors.n == t.colors.n &&
            !memcmp(before.colors.v, t.colors.v, sizeof t.colors.v) &&
            before.iters == t.iters && before.dtype == t.dtype,
        "\"%s\": the targets are unchanged", line);
}

static void bad_values(void) {
  bad("--bogus", "--bogus", "unknown option");
  bad("--quiet --iters", "--iters", "needs a value");
  bad("--sizes 4K,4BB", "--sizes", "\"4BB\" is not a size");
  bad("--sizes 4K,2G", "--sizes", "\"2G\" is not a size in [0, 1G]");
  bad("--sizes ,", "--sizes", "empty list");
  bad("--max-bytes-per-rank -1", "--max-bytes-per-rank", "is not a size");
  bad("--iters 0", "--iters", "is not an integer in [1, 1000]");
  bad("--iters 5x", "--iters", "is not an integer");
  bad("--seconds 0", "--seconds", "is not a number in");
  bad("--seconds nan", "--seconds", "is not a number in");
  bad("--densities 1.5", "--densities", "outside [0, 1]");
  bad("--densities 1/q", "--densities", "is not a density");
  bad("--rate 0", "--rate", "is not a rate");
  bad("--rate 25mbps", "--rate", "is not a rate");
  bad("--dtype float", "--dtype", "\"float\" is neither double nor int");
  bad("--colors red,pink", "--colors", "\"pink\" is not one of red, green, blue");
  /* --name=value: the same checks, the message naming the option without
   * its value. */
  bad("--iters=0", "--iters", "is not an integer in [1, 1000]");
  bad("--iters=", "--iters", "is not an integer");
  bad("--quiet=yes", "--quiet", "takes no value");
  bad("--bogus=3", "--bogus (see", "unknown option");
}

/* --name=value is --name value; an '=' in the value stays in it. */
static void equals_form(void) {
  char msg[MAXMSG];
  defaults();
  int rc = run("--iters=7 --sizes=4K,8K --label=a=b --dtype=int --quiet", msg);
  CHECK(rc == WSP_OPTS_OK, "rc %d, messages: %s", rc, msg);
  CHECK(msg[0] == '\0', "no message: %s", msg);
  CHECK(t.iters == 7 && t.sizes.n == 2 && t.sizes.v[1] == 8192 && t.dtype == 1 && t.quiet,
        "values as with a separate word");
  CHECK(!strcmp(t.label, "a=b"), "label \"%s\"", t.label);
}

/* A deprecated name sets the option it stands for and warns once, naming
 * the new one; --help does not show it. */
static void deprecated(void) {
  char msg[MAXMSG];
  defaults();
  int rc = run("--max-time 0.5 --iters 3 --max-time=0.25", msg);
  CHECK(rc == WSP_OPTS_OK, "rc %d, messages: %s", rc, msg);
  CHECK(t.secs == 0.25 && t.iters == 3, "the last value wins (%g)", t.secs);
  CHECK(!strcmp(msg, "warning: --max-time is deprecated, use --seconds\n"),
        "one warning naming the new option: \"%s\"", msg);
  defaults();
  rc = run("--help", msg);
  CHECK(rc == WSP_OPTS_HELP && strstr(msg, "--max-time") == NULL,
        "the old name is not in --help: %s", msg);
  CHECK(strstr(msg, "  --version ") != NULL && strstr(msg, "  --help, -h ") != NULL,
        "--help lists --help and --version: %s", msg);
}

static void help(void) {
  char msg[MAXMSG];
  defaults();
  int rc = run("--iters 3 --help --bogus", msg);
  CHECK(rc == WSP_OPTS_HELP, "rc %d", rc);
  CHECK(strncmp(msg, "usage: test [options]\n", 22) == 0, "usage first: %s", msg);
  for (const wsp_opt_t *o = table; o->name; o++)
    CHECK(o->kind == WSP_OPT_ALIAS || strstr(msg, o->name) != NULL, "help lists %s", o->name);
  CHECK(strstr(msg, "(default 1K,64K)") && strstr(msg, "(default all)"),
        "defaults shown: %s", msg);
  CHECK(strstr(msg, "\nFooter.\n") != NULL, "footer");
  int longest = 0, col = 0, lines = 0;
  for (const char *c = msg; *c; c++) {
    if (*c == '\n') {
      lines++;
      if (col > longest) longest = col;
      col = 0;
    } else {
      col++;
    }
  }
  CHECK(longest <= 78, "lines of at most 78 columns (%d)", longest);
  CHECK(strstr(msg, "  --max-bytes-per-rank SIZE\n") != NULL,
        "a long option has its text on the next line: %s", msg);
  CHECK(lines > 14, "the long text is wrapped (%d lines)", lines);
  defaults();
  char *argv[] = {"test", "--sizes", "4BB", NULL};
  CHECK(wsp_opts_parse(&cmd, 3, argv, NULL, NULL) == WSP_OPTS_ERROR,
        "no streams: still refused, silently");
}

int main(void) {
  good_values();
  bad_values();
  equals_form();
  deprecated();
  help();
  char b[32];
  CHECK(!strcmp(wsp_fmt_size(65536, b, sizeof b), "64K"), "64K");
  CHECK(!strcmp(wsp_fmt_size(3u << 20, b, sizeof b), "3M"), "3M");
  CHECK(!strcmp(wsp_fmt_size(1000, b, sizeof b), "1000"), "1000");
  return check_summary("test_opts");
}
