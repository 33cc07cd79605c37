/*
 * Internal declarations shared by the library's sources. Nothing here is
 * public: names are wsp__* and may change at any time.
 */
#ifndef WSP_INTERNAL_H
#define WSP_INTERNAL_H

#include "wirespeed.h"

#include <stdarg.h>
#include <stdint.h>

/* The communicator object. `mpi` is wirespeed's private duplicate. */
struct wsp_comm {
  MPI_Comm mpi;
  int rank;
  int size;
  wsp_config_t cfg;
  /* Counts sparse-exchange rounds; its low bit picks the tag of a round so
   * that a rank one round ahead never feeds a rank still in the previous
   * round (see src/exchange/sparse.c for why one bit is enough). */
  uint64_t sparse_round;
  /* What `auto` learnt from the previous round (identical on all ranks). */
  int sparse_have_stats;
  struct wsp__sparse_stats {
    uint64_t max_sends;  /* largest number of destinations of one rank */
    uint64_t max_bytes;  /* largest single message */
  } sparse_stats;
};

typedef struct wsp__sparse_stats wsp__sparse_stats_t;

/* ---- errors ---- */

/* Records a formatted message for wsp_last_error(), logs it at error level
 * when `comm` allows, and returns `status`. */
int wsp__fail(const wsp_comm_t *comm, int status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* Records an MPI failure (keeping its code) and returns WSP_ERR_MPI. */
int wsp__mpi_fail(const wsp_comm_t *comm, int mpi_rc, const char *call,
                  const char *where);

#define WSP__STR2(x) #x
#define WSP__STR(x) WSP__STR2(x)
#define WSP__WHERE __FILE__ ":" WSP__STR(__LINE__)

/* Runs an MPI call; on failure records it, stores WSP_ERR_MPI in `rc` and
 * jumps to `label` so the caller can release what it holds. */
#define WSP__MPI_GOTO(comm, call, rc, label)                                   \
  do {                                                                         \
    int wsp__mrc = (call);                                                     \
    if (wsp__mrc != MPI_SUCCESS) {                                             \
      (rc) = wsp__mpi_fail((comm), wsp__mrc, #call, WSP__WHERE);               \
      goto label;                                                              \
    }                                                                          \
  } while (0)

/* ---- logging ---- */
void wsp__log(const wsp_comm_t *comm, wsp_log_level_t level, const char *fmt,
              ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* Level used when no communicator is at hand: read from WSP_LOG. */
wsp_log_level_t wsp__env_log_level(void);

/* ---- configuration ---- */
/* Parses a log level name or number; -1 if invalid. */
int wsp__parse_log_level(const char *s);
/* A fingerprint of the fields that must agree on every rank. */
uint64_t wsp__config_fingerprint(const wsp_config_t *cfg);

/* ---- messages of any size ----
 * MPI counts are ints. wsp__bytes_type describes `bytes` bytes as
 * (count, type): MPI_BYTE when bytes <= limit, otherwise a derived type made
 * of limit-sized chunks plus a remainder. *owned is set when the caller must
 * MPI_Type_free the type. This is the one place where sizes above INT_MAX
 * are handled. */
int wsp__bytes_type(const wsp_comm_t *comm, size_t bytes, int *count,
                    MPI_Datatype *type, int *owned);
/* The byte length of a probed message, whatever its size. */
int wsp__status_bytes(const wsp_comm_t *comm, MPI_Status *st, size_t *bytes);

/* ---- polling without burning a core ----
 * A loop that polls MPI calls wsp__backoff_idle() after each pass that made
 * no progress and wsp__backoff_reset() after one that did. Idle passes first
 * spin, then yield the core, then sleep with a doubling interval up to
 * cfg.poll_max_sleep_us. */
typedef struct wsp__backoff {
  unsigned idle;
  unsigned sleep_us;
  unsigned max_sleep_us;
} wsp__backoff_t;

void wsp__backoff_init(wsp__backoff_t *b, const wsp_comm_t *comm);
void wsp__backoff_reset(wsp__backoff_t *b);
void wsp__backoff_idle(wsp__backoff_t *b);

#endif
