/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fuzz target: the network map file parser (wsp__netmap_from_bytes, the
 * JSON that wsp-probe writes and WSP_NETMAP loads; docs/netmap.md). Any
 * input must give a map or a reason, never a crash or a leak; and a map
 * that was read must survive writing and reading back unchanged: its text
 * read again gives the same text.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "netmap/netmap.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char why[400] = "";
  wsp_netmap_t *m = wsp__netmap_from_bytes((const char *)data, size, why, sizeof why);
  if (m == NULL) {
    if (why[0] == '\0') abort(); /* refused without a reason */
    return 0;
  }
  char *t1 = wsp__netmap_to_text(m);
  wsp_netmap_t *m2 = t1 ? wsp__netmap_from_bytes(t1, strlen(t1), why, sizeof why) : NULL;
  char *t2 = m2 ? wsp__netmap_to_text(m2) : NULL;
  if (t1 && (m2 == NULL || t2 == NULL || strcmp(t1, t2) != 0 ||
             wsp__netmap_fingerprint(m) != wsp__netmap_fingerprint(m2)))
    abort(); /* a map written and read back differs */
  free(t1);
  free(t2);
  wsp_netmap_free(&m);
  wsp_netmap_free(&m2);
  return 0;
}
