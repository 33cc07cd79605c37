/*
 * What the communicator (src/core/comm.c) needs from the sparse exchange:
 * the state of its `auto` chooser, made when a wsp_comm_t is created and
 * freed with it. The rest is internal to src/exchange (sparse_internal.h).
 */
#ifndef WSP_EXCHANGE_SPARSE_H
#define WSP_EXCHANGE_SPARSE_H

#include <stdint.h>

struct wsp__sparse_auto;

/* A fresh chooser that commits to a winner for `interval` rounds; NULL
 * when out of memory. Freed with free(). */
struct wsp__sparse_auto *wsp__sparse_auto_new(uint64_t interval);

#endif
