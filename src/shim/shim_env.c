/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The shim's WSP_SHIM* variables (shim_env.h). Lists are split by hand
 * rather than with strtok_r, so that the file builds wherever wsp-info
 * does.
 */
#include "shim_env.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wirespeed.h"

/* The next comma-separated item of *s into buf (cut to len - 1); 0 at the
 * end of the list. */
static int wsp__shim_item(const char **s, char *buf, size_t len) {
  if (**s == '\0') return 0;
  const char *end = strchr(*s, ',');
  size_t n = end ? (size_t)(end - *s) : strlen(*s);
  snprintf(buf, len, "%.*s", (int)n, *s);
  *s += n + (end != NULL);
  return 1;
}

/* Records the first value that cannot be read (later ones are still read,
 * so that the report, say, still follows its own variable). */
static void wsp__shim_bad(int *bad, char *why, size_t len, const char *fmt, const char *arg) {
  if ((*bad)++ == 0) snprintf(why, len, fmt, arg);
}

int wsp__shim_env_read(wsp__shim_env_t *e, char *why, size_t len) {
  char item[64];
  int bad = 0;
  memset(e, 0, sizeof *e);
  e->mode = WSP__SHIM_AUTO;
  e->colls = (1u << WSP_COLL_COUNT) - 1;
  e->min = WSP__SHIM_MIN_DEFAULT;
  if (len) why[0] = '\0';
  const char *v = getenv("WSP_SHIM");
  if (v && *v) {
    if (!strcmp(v, "off"))
      e->mode = WSP__SHIM_OFF;
    else if (!strcmp(v, "force"))
      e->mode = WSP__SHIM_FORCE;
    else if (strcmp(v, "auto") != 0)
      wsp__shim_bad(&bad, why, len, "WSP_SHIM=\"%s\" is not off, auto or force", v);
  }
  v = getenv("WSP_SHIM_COLLS");
  if (v && *v && strcmp(v, "all") != 0) {
    e->colls = 0;
    while (wsp__shim_item(&v, item, sizeof item)) {
      wsp_coll_t c;
      if (wsp_coll_from_name(item, &c) == WSP_OK) {
        e->colls |= 1u << c;
      } else {
        wsp__shim_bad(&bad, why, len,
                      "WSP_SHIM_COLLS names \"%s\", which is not a collective of "
                      "wirespeed's (bcast, reduce, allreduce, gather, scatter, "
                      "allgather, alltoall, alltoallv, allgatherv, reduce_scatter)",
                      item);
        break;
      }
    }
  }
  v = getenv("WSP_SHIM_MIN");
  if (v && *v && wsp_parse_size(v, &e->min) != WSP_OK)
    wsp__shim_bad(&bad, why, len, "WSP_SHIM_MIN=\"%s\" is not a size (e.g. 64K)", v);
  /* 0 and unset are off, as for WSP_REPORT; anything else is a typo. */
  v = getenv("WSP_SHIM_REPORT");
  if (v && *v && strcmp(v, "0") != 0 && strcmp(v, "1") != 0)
    wsp__shim_bad(&bad, why, len, "WSP_SHIM_REPORT=\"%s\" is not 0 or 1", v);
  e->report = v && !strcmp(v, "1");
  v = getenv("WSP_SHIM_FAULT_NOMEM");
  while (v && wsp__shim_item(&v, item, sizeof item)) {
    if (!strcmp(item, "state")) {
      e->fault_state = 1;
    } else if (!strcmp(item, "create")) {
      e->fault_create = 1;
    } else {
      wsp__shim_bad(&bad, why, len,
                    "WSP_SHIM_FAULT_NOMEM names \"%s\", which is not state or create", item);
      break;
    }
  }
  if (bad) e->mode = WSP__SHIM_OFF;
  return bad ? -1 : 0;
}
