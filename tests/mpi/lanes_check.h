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

#endif
