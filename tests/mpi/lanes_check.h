/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the tests of the collectives' transport ask of a communicator's
 * lanes (src/p2p/xport.c): how many bytes this rank moved over them, both
 * ways, and whether a pair failed. Included after mpi_check.h (rank, size).
 */
#ifndef WSP_TESTS_MPI_LANES_CHECK_H
#define WSP_TESTS_MPI_LANES_CHECK_H

#include <stdint.h>

#include "wirespeed.h"
#include "../../src/core/wsp_internal.h"

/* Bytes through this rank's lanes to every other rank (0 without lanes);
 * *failed (when not NULL) is set when a pair's lanes failed. */
static inline uint64_t lanes_moved(const wsp_comm_t *w, int *failed) {
  uint64_t moved = 0;
  if (failed) *failed = 0;
  for (int q = 0; q < size && w->lanes; q++) {
    wsp_striped_info_t info;
    if (q == rank || wsp_striped_info(w->lanes, q, &info) != WSP_OK) continue;
    moved += info.bytes_sent + info.bytes_received;
    if (failed && info.state == WSP_STRIPED_FAILED) *failed = 1;
  }
  return moved;
}

/* What the model must take as the lanes' seconds per byte for pairs whose
 * lanes ran at rate[0..n) bytes/s (docs/p2p.md): the median of the
 * inverses, the mean of the middle two for even n. Worked out here by
 * sorting, apart from the library's own median. rate is left as it is;
 * n <= 64. */
static inline double lanes_median_inv(const double *rate, int n) {
  double inv[64];
  if (n < 1 || n > 64) return 0;
  for (int i = 0; i < n; i++) {
    int j = i;
    for (; j > 0 && inv[j - 1] > 1 / rate[i]; j--) inv[j] = inv[j - 1];
    inv[j] = 1 / rate[i];
  }
  return n % 2 ? inv[n / 2] : (inv[n / 2 - 1] + inv[n / 2]) / 2;
}

#endif
