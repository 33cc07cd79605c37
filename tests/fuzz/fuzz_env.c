/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fuzz target: the WSP_* environment parsers (wsp_config_from_env and the
 * parsers it calls: sizes, rates of the model, node and site groupings,
 * algorithm names, log levels, seconds; docs/env.md).
 *
 * The input is lines "K VALUE": K's byte picks one of the variables below,
 * the rest of the line is its value. The variables are set, the
 * configuration is read, and:
 * - a success must give a configuration that the check of a configuration
 *   passed in accepts (wsp__config_check): the parser and the check share
 *   their bounds, so what one accepts the other must;
 * - a failure must be WSP_ERR_CONFIG with a message naming a WSP_ variable,
 *   and must leave the configuration untouched.
 */
/* putenv */
#define _XOPEN_SOURCE 700

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wsp_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const vars[] = {"WSP_LOG",
                                   "WSP_SPARSE_ALGORITHM",
                                   "WSP_SPARSE_AUTO_INTERVAL",
                                   "WSP_POLL_MAX_SLEEP_US",
                                   "WSP_BIG_MESSAGE",
                                   "WSP_ALLREDUCE_ALGORITHM",
                                   "WSP_BCAST_ALGORITHM",
                                   "WSP_MODEL",
                                   "WSP_NODES",
                                   "WSP_COLL_SEGMENT",
                                   "WSP_P2P_LANES",
                                   "WSP_P2P_MAX_LANES",
                                   "WSP_P2P_MIN",
                                   "WSP_P2P_CHUNK",
                                   "WSP_P2P_PROBE_MS",
                                   "WSP_SITES",
                                   "WSP_WAN_CONNECTIONS",
                                   "WSP_WAN_LANES",
                                   "WSP_CHECK",
                                   "WSP_TIMEOUT",
                                   "WSP_EAGER_LIMIT"};
enum { NVARS = sizeof vars / sizeof vars[0], VALUE_MAX = 256 };
/* The environment's entries ("NAME=value"), which putenv keeps by reference. */
static char entry[NVARS][VALUE_MAX + 32];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  for (int i = 0; i < NVARS; i++) unsetenv(vars[i]);
  size_t at = 0;
  while (at < size) {
    size_t end = at;
    while (end < size && data[end] != '\n') end++;
    if (end > at) {
      char value[VALUE_MAX + 1];
      size_t n = end - at - 1 < VALUE_MAX ? end - at - 1 : VALUE_MAX;
      memcpy(value, data + at + 1, n);
      value[n] = '\0';
      if (strlen(value) == n) { /* putenv: setenv would keep a copy of every value */
        int k = data[at] % NVARS;
        snprintf(entry[k], sizeof entry[k], "%s=%s", vars[k], value);
        putenv(entry[k]);
      }
    }
    at = end + 1;
  }
  wsp_config_t c, before;
  wsp_config_init(&c);
  before = c;
  int rc = wsp_config_from_env(&c);
  if (rc == WSP_OK) {
    if (wsp__config_check(&c) != WSP_OK) abort(); /* accepted by one, refused by the other */
  } else {
    if (rc != WSP_ERR_CONFIG || strstr(wsp_last_error(), "WSP_") == NULL) abort();
    if (memcmp(&c, &before, sizeof c) != 0) abort(); /* half-applied */
  }
  for (int i = 0; i < NVARS; i++) unsetenv(vars[i]);
  return 0;
}
