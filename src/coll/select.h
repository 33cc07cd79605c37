/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the communicator (src/comm/comm.c) needs from selection: reading
 * the rules file when a wsp_comm_t is created, comparing it across ranks,
 * and freeing it; freeing the network map's trees (src/coll/aware.h). The rest of selection is internal to src/coll
 * (coll_internal.h).
 */
#ifndef WSP_COLL_SELECT_H
#define WSP_COLL_SELECT_H

#include <stddef.h>
#include <stdint.h>

struct wsp__rules;

/* Reads a rules file (every rank reads it; parse errors name the file and
 * the place, as WSP_ERR_CONFIG). *out is NULL for a file without rules. */
int wsp__rules_load(const char *path, struct wsp__rules **out);
/* The same from the file's bytes (len of them; `name` names it in
 * messages): the parser under the fuzzer (tests/fuzz). */
int wsp__rules_load_bytes(const char *bytes, size_t len, const char *name,
                          struct wsp__rules **out);
void wsp__rules_free(struct wsp__rules *r);
/* A fingerprint of the rules, compared across ranks. */
uint64_t wsp__rules_fingerprint(const struct wsp__rules *r);

struct wsp__aware;
/* Frees what wsp_comm_set_netmap attached; NULL is accepted. */
void wsp__aware_free(struct wsp__aware *aw);

#endif
