/* SPDX-License-Identifier: BSD-3-Clause */
/* A minimal harness for single-process unit tests: CHECK records a failure
 * with its location and goes on; check_summary() prints the closing line
 * and gives the exit code. */
#ifndef WSP_CHECK_H
#define WSP_CHECK_H

#include <stdio.h>

static long check_passed, check_failed;

#define CHECK(cond, ...)                                              \
  do {                                                                \
    if (cond) {                                                       \
      check_passed++;                                                 \
    } else {                                                          \
      check_failed++;                                                 \
      fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
      fprintf(stderr, __VA_ARGS__);                                   \
      fprintf(stderr, "\n");                                          \
    }                                                                 \
  } while (0)

static inline int check_summary(const char *name) {
  printf("%s: %ld checks passed, %ld failed\n", name, check_passed, check_failed);
  return check_failed ? 1 : 0;
}

#endif
