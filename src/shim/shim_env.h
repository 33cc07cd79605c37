/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The shim's own WSP_SHIM* variables, read in one place for the shim
 * (shim.c, at its first call) and for `wsp-info --check`, which compiles
 * this file too, so that both accept and refuse the same values. Plain C:
 * no MPI, no threads.
 */
#ifndef WSP_SHIM_ENV_H
#define WSP_SHIM_ENV_H

#include <stddef.h>

enum { WSP__SHIM_OFF, WSP__SHIM_AUTO, WSP__SHIM_FORCE };
enum { WSP__SHIM_MIN_DEFAULT = 64 * 1024 };

typedef struct wsp__shim_env {
  int mode;       /* WSP_SHIM: WSP__SHIM_OFF, _AUTO or _FORCE */
  unsigned colls; /* WSP_SHIM_COLLS: a bit per wsp_coll_t */
  size_t min;     /* WSP_SHIM_MIN */
  int report;     /* WSP_SHIM_REPORT */
  /* The testing aid WSP_SHIM_FAULT_NOMEM. */
  int fault_state, fault_create;
} wsp__shim_env_t;

/* Reads the variables into *e: 0, or -1 after the first value it cannot
 * read, with why[0..len) naming the variable and the value, and e->mode
 * WSP__SHIM_OFF (the shim turns itself off rather than run differently
 * than the job's script says). */
int wsp__shim_env_read(wsp__shim_env_t *e, char *why, size_t len);

#endif
