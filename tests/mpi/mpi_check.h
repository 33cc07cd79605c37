/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The harness of the multi-rank tests: CHECK records a failure with the
 * rank and the place (printing the first 30 of a rank) and goes on; each
 * test sums `failures` over all ranks at the end and exits non-zero when
 * any rank failed.
 */
#ifndef WSP_TESTS_MPI_CHECK_H
#define WSP_TESTS_MPI_CHECK_H

#include <stdio.h>

#include "wirespeed.h"

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

/* wsp_comm_create over MPI_COMM_WORLD with the environment's settings; a
 * failure ends the job (nothing else can be tested then). */
static inline wsp_comm_t *world_comm(void) {
  wsp_comm_t *w = NULL;
  if (wsp_comm_create(MPI_COMM_WORLD, NULL, &w) != WSP_OK) {
    fprintf(stderr, "rank %d: wsp_comm_create: %s\n", rank, wsp_last_error());
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  return w;
}

#endif
