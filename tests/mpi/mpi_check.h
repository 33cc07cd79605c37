/*
 * The harness of the multi-rank tests: CHECK records a failure with the
 * rank and the place (printing the first 30 of a rank) and goes on; each
 * test sums `failures` over all ranks at the end and exits non-zero when
 * any rank failed.
 */
#ifndef WSP_TESTS_MPI_CHECK_H
#define WSP_TESTS_MPI_CHECK_H

#include <stdio.h>

static int rank, size;
static long failures;

#define CHECK(cond, ...)                                                      \
  do {                                                                        \
    if (!(cond) && failures++ < 30) {                                         \
      fprintf(stderr, "FAIL rank %d %s:%d: %s: ", rank, __FILE__, __LINE__,   \
              #cond);                                                         \
      fprintf(stderr, __VA_ARGS__);                                           \
      fprintf(stderr, "\n");                                                  \
    }                                                                         \
  } while (0)

#endif
