/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the communicator (src/comm/comm.c) needs from the sparse exchange:
 * its per-communicator state, made when a wsp_comm_t is created and freed
 * with it. The rest is internal to src/exchange (sparse_internal.h).
 */
#ifndef WSP_EXCHANGE_SPARSE_H
#define WSP_EXCHANGE_SPARSE_H

#include <stdint.h>

struct wsp__sparse_comm;

/* The state of a communicator of p ranks: the `auto` chooser (committing
 * to a winner for `interval` rounds) and the O(p) scratch the algorithms
 * need. NULL when out of memory. */
struct wsp__sparse_comm *wsp__sparse_comm_new(int p, uint64_t interval);
void wsp__sparse_comm_free(struct wsp__sparse_comm *s);

#endif
