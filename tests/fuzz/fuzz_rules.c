/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fuzz target: the rules file parser (wsp__rules_load_bytes, the JSON of
 * WSP_RULES_FILE; docs/coll.md). Any input must give WSP_OK or
 * WSP_ERR_CONFIG with a message naming the file, never a crash or a leak;
 * and parsing the same bytes twice must give the same rules (the
 * fingerprint every rank compares).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "coll/select.h"
#include "wsp_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  struct wsp__rules *a = NULL, *b = NULL;
  int rc = wsp__rules_load_bytes((const char *)data, size, "fuzz.json", &a);
  if (rc != WSP_OK && (rc != WSP_ERR_CONFIG || strstr(wsp_last_error(), "fuzz.json") == NULL))
    abort(); /* another status, or a message that does not name the file */
  int rc2 = wsp__rules_load_bytes((const char *)data, size, "fuzz.json", &b);
  if (rc2 != rc || wsp__rules_fingerprint(a) != wsp__rules_fingerprint(b)) abort();
  wsp__rules_free(a);
  wsp__rules_free(b);
  return 0;
}
