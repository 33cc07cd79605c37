/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Levelled logging to stderr. Each line carries the rank so that the
 * interleaved output of many processes can be read.
 */
#include "wsp_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <strings.h>

static const char *const wsp__level_names[] = {"off",  "error", "warn",
                                               "info", "debug", "trace"};

int wsp__parse_log_level(const char *s) {
  if (s == NULL || *s == '\0') return -1;
  for (int i = 0; i <= (int)WSP_LOG_TRACE; i++)
    if (strcasecmp(s, wsp__level_names[i]) == 0) return i;
  if (strcasecmp(s, "warning") == 0) return WSP_LOG_WARN;
  if (s[0] >= '0' && s[0] <= '5' && s[1] == '\0') return s[0] - '0';
  return -1;
}

wsp_log_level_t wsp__env_log_level(void) {
  int lvl = wsp__parse_log_level(getenv("WSP_LOG"));
  return lvl < 0 ? WSP_LOG_WARN : (wsp_log_level_t)lvl;
}

void wsp__log(const wsp_comm_t *comm, wsp_log_level_t level, const char *fmt,
              ...) {
  wsp_log_level_t limit = comm ? comm->cfg.log_level : wsp__env_log_level();
  if (level == WSP_LOG_OFF || level > limit) return;
  char line[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  if (comm)
    fprintf(stderr, "[wsp %s rank %d] %s\n", wsp__level_names[level],
            comm->rank, line);
  else
    fprintf(stderr, "[wsp %s] %s\n", wsp__level_names[level], line);
}
