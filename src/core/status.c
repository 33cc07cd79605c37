/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Status codes, their names and texts, and the per-thread record of the
 * last failure. The texts come from WSP_STATUS_MAP in wirespeed.h.
 */
#include "wsp_internal.h"

#include <stdio.h>
#include <string.h>

#define WSP__ERRMSG_LEN 512

/* Per-thread, so concurrent users of different communicators never see
 * each other's messages. This is a record of what happened, not a setting. */
static _Thread_local char wsp__errmsg[WSP__ERRMSG_LEN];
static _Thread_local int wsp__errmpi = MPI_SUCCESS;

const char *wsp_strerror(int status) {
  switch (status) {
#define WSP__STATUS_TEXT(name, value, text) \
  case value:                               \
    return text;
    WSP_STATUS_MAP(WSP__STATUS_TEXT)
#undef WSP__STATUS_TEXT
  }
  return "unknown status code";
}

const char *wsp_err_name(int status) {
  switch (status) {
#define WSP__STATUS_NAME(name, value, text) \
  case value:                               \
    return "WSP_" #name;
    WSP_STATUS_MAP(WSP__STATUS_NAME)
#undef WSP__STATUS_NAME
  }
  return "WSP_ERR_UNKNOWN";
}

const char *wsp_last_error(void) { return wsp__errmsg; }

int wsp_last_mpi_error(void) { return wsp__errmpi; }

static void wsp__record(const wsp_comm_t *comm, int status, const char *msg) {
  snprintf(wsp__errmsg, sizeof wsp__errmsg, "%s", msg);
  if (status != WSP_ERR_MPI) wsp__errmpi = MPI_SUCCESS;
  /* Remote failures are reported on the rank that caused them; the others
   * only say so at debug level to keep the output readable. WSP_ERR_AGAIN
   * is no failure: the caller tries again (the shuffle's follow-ups). */
  wsp__log(comm, status == WSP_ERR_REMOTE || status == WSP_ERR_AGAIN ? WSP_LOG_DEBUG
                                                                     : WSP_LOG_ERROR,
           "%s (%s)", msg, wsp_err_name(status));
}

int wsp__fail(const wsp_comm_t *comm, int status, const char *fmt, ...) {
  char buf[WSP__ERRMSG_LEN];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  wsp__record(comm, status, buf);
  return status;
}

int wsp__fail_quiet(int status, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(wsp__errmsg, sizeof wsp__errmsg, fmt, ap);
  va_end(ap);
  wsp__errmpi = MPI_SUCCESS;
  return status;
}

int wsp__mpi_fail(const wsp_comm_t *comm, int mpi_rc, const char *call,
                  const char *where) {
  char text[MPI_MAX_ERROR_STRING + 1];
  int len = 0;
  if (MPI_Error_string(mpi_rc, text, &len) != MPI_SUCCESS) len = 0;
  text[len] = '\0';
  char buf[WSP__ERRMSG_LEN];
  snprintf(buf, sizeof buf, "%s failed at %s: %s (MPI error %d)", call, where,
           len ? text : "no text", mpi_rc);
  wsp__record(comm, WSP_ERR_MPI, buf);
  wsp__errmpi = mpi_rc;
  /* A lane of the collectives' transport failed: the request that failed
   * here was one of its transfers, or waited with them. */
  return comm ? wsp__lane_failure(comm, WSP_ERR_MPI) : WSP_ERR_MPI;
}
