/*
 * The PMPI shim: wirespeed's collectives under an unmodified MPI program
 * (docs/shim.md).
 *
 * How it works. libwirespeed_pmpi.so defines MPI_Bcast, MPI_Allreduce, ...
 * (the wrappers gen.py writes from colls.list); loaded before the MPI
 * library (LD_PRELOAD, or linked ahead of it), its definitions are the
 * ones the program calls, and each either runs wirespeed's collective or
 * hands the call to the MPI's PMPI_ entry point unchanged.
 *   - The choice uses only what every rank of the call shares: WSP_SHIM,
 *     WSP_SHIM_COLLS, the message's bytes (the type signatures match on
 *     every rank) and whether the op commutes. So every rank of a call
 *     takes the same path, and a communicator's wsp_comm_t is made (a
 *     collective call) by all its ranks in the same call.
 *   - In auto mode wirespeed runs a call from WSP_SHIM_MIN bytes up (the
 *     whole message, or one rank's block for gather, scatter, allgather
 *     and alltoall). Below it the MPI's own call runs: there latency
 *     decides, and the model cannot price the MPI's own algorithm, nor
 *     the scheduling a step pays where ranks share cores (docs/shim.md).
 *   - Those settings come from each rank's environment, so they are
 *     checked once, at the first intercepted call on MPI_COMM_WORLD (a
 *     call every rank makes, in any mode): where they differ between
 *     ranks, every rank turns the shim off, with a warning.
 *   - The wsp_comm_t of a communicator is cached in an attribute of it;
 *     the attribute's delete callback frees it when the program frees the
 *     communicator. MPI_Finalize frees every one still cached before the
 *     MPI's own finalize, so no callback calls MPI while it shuts down.
 *   - wirespeed itself calls MPI (its private communicators, its checks):
 *     a thread-local guard sends those calls straight to PMPI.
 *   - An argument wirespeed refuses (refused on every rank before any
 *     traffic) sends the call to PMPI with the same arguments, so the MPI
 *     reports it with its own error class, as without the shim. Any other
 *     failure is raised on the communicator's error handler as the MPI
 *     error class closest to it.
 */
#include "shim.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { WSP__SHIM_OFF, WSP__SHIM_AUTO, WSP__SHIM_FORCE };
enum { WSP__SHIM_ALGS = 32, WSP__SHIM_MIN_DEFAULT = 64 * 1024 };

/* One communicator's entry in the cache (the attribute's value). */
typedef struct wsp__shim_entry {
  wsp_comm_t *w; /* NULL: making it failed on every rank; the MPI runs */
  MPI_Comm comm;
  struct wsp__shim_entry *prev, *next;
} wsp__shim_entry_t;

typedef struct {
  unsigned long long seen, ran, fell_back;
  unsigned long long alg[WSP__SHIM_ALGS];
  double seconds;
} wsp__shim_count_t;

static struct {
  pthread_once_t once;
  _Atomic int mode; /* the check below may turn it off while others read it */
  atomic_int world_checked;
  unsigned colls; /* bit per wsp_coll_t */
  size_t min;
  int report;
  int keyval;
  int finalizing;
  pthread_mutex_t lock; /* the entry list and the counts */
  wsp__shim_entry_t *entries;
  wsp__shim_count_t count[WSP_COLL_COUNT];
  unsigned long long comms;  /* communicators set up (report) */
  double setup_seconds;      /* ... and the time it took */
} wsp__shim = {.once = PTHREAD_ONCE_INIT,
               .keyval = MPI_KEYVAL_INVALID,
               .lock = PTHREAD_MUTEX_INITIALIZER};

/* Set while wirespeed runs on this thread: its own MPI calls go to PMPI. */
static _Thread_local int wsp__shim_inside;

static void wsp__shim_warn(const char *fmt, const char *arg) {
  int rank = 0, init = 0;
  PMPI_Initialized(&init);
  if (init) PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank != 0) return;
  fprintf(stderr, "wirespeed shim: ");
  fprintf(stderr, fmt, arg);
  fputc('\n', stderr);
}

/* WSP_SHIM, WSP_SHIM_COLLS, WSP_SHIM_MIN, WSP_SHIM_REPORT. A value the
 * shim cannot read turns the shim off with a warning: a job that asked
 * for something else must not run differently than it thinks. */
static void wsp__shim_settings(void) {
  const char *v = getenv("WSP_SHIM");
  wsp__shim.mode = WSP__SHIM_AUTO;
  if (v && *v) {
    if (!strcmp(v, "off")) {
      wsp__shim.mode = WSP__SHIM_OFF;
    } else if (!strcmp(v, "force")) {
      wsp__shim.mode = WSP__SHIM_FORCE;
    } else if (strcmp(v, "auto") != 0) {
      wsp__shim_warn("WSP_SHIM = \"%s\" is not off, auto or force; the shim is off", v);
      wsp__shim.mode = WSP__SHIM_OFF;
    }
  }
  wsp__shim.colls = (1u << WSP_COLL_COUNT) - 1;
  v = getenv("WSP_SHIM_COLLS");
  if (v && *v && strcmp(v, "all") != 0) {
    wsp__shim.colls = 0;
    char buf[256], *save = NULL;
    snprintf(buf, sizeof buf, "%s", v);
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
      wsp_coll_t c;
      if (wsp_coll_from_name(t, &c) != WSP_OK) {
        wsp__shim_warn("WSP_SHIM_COLLS names \"%s\", which is not a collective of "
                       "wirespeed's (bcast, reduce, allreduce, gather, scatter, allgather, "
                       "alltoall); the shim is off",
                       t);
        wsp__shim.mode = WSP__SHIM_OFF;
        break;
      }
      wsp__shim.colls |= 1u << c;
    }
  }
  wsp__shim.min = WSP__SHIM_MIN_DEFAULT;
  v = getenv("WSP_SHIM_MIN");
  if (v && *v && wsp_parse_size(v, &wsp__shim.min) != WSP_OK) {
    wsp__shim_warn("WSP_SHIM_MIN = \"%s\" is not a size (e.g. 64K); the shim is off", v);
    wsp__shim.mode = WSP__SHIM_OFF;
  }
  v = getenv("WSP_SHIM_REPORT");
  wsp__shim.report = v && !strcmp(v, "1");
}

/* The settings the path of a call depends on, compared across
 * MPI_COMM_WORLD: one small allreduce of each value and its negation
 * under MPI_MIN gives every rank the least and the largest. */
static void wsp__shim_check_world(void) {
  static const char *const names[3] = {"WSP_SHIM", "WSP_SHIM_COLLS", "WSP_SHIM_MIN"};
  long long v[6] = {wsp__shim.mode, wsp__shim.colls, (long long)wsp__shim.min};
  for (int i = 0; i < 3; i++) v[3 + i] = -v[i];
  if (PMPI_Allreduce(MPI_IN_PLACE, v, 6, MPI_LONG_LONG, MPI_MIN, MPI_COMM_WORLD) != MPI_SUCCESS)
    return;
  for (int i = 0; i < 3; i++) {
    if (v[i] != -v[3 + i]) {
      wsp__shim_warn("%s differs between the ranks of MPI_COMM_WORLD; the shim is off "
                     "(calls would take different paths on different ranks)",
                     names[i]);
      wsp__shim.mode = WSP__SHIM_OFF;
      return;
    }
  }
}

int wsp__shim_pass(wsp_coll_t coll, MPI_Comm comm) {
  if (wsp__shim_inside) return 1;
  pthread_once(&wsp__shim.once, wsp__shim_settings);
  /* Collectives on one communicator are never concurrent, so only this
   * thread can be here for MPI_COMM_WORLD. */
  if (comm == MPI_COMM_WORLD &&
      !atomic_load_explicit(&wsp__shim.world_checked, memory_order_relaxed)) {
    atomic_store(&wsp__shim.world_checked, 1);
    wsp__shim_check_world();
  }
  if (wsp__shim.report) {
    pthread_mutex_lock(&wsp__shim.lock);
    wsp__shim.count[coll].seen++;
    pthread_mutex_unlock(&wsp__shim.lock);
  }
  if (wsp__shim.mode == WSP__SHIM_OFF || !(wsp__shim.colls & (1u << coll)) ||
      comm == MPI_COMM_NULL || wsp__shim.finalizing)
    return 1;
  int inter = 1;
  return PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter;
}

/* The attribute's delete callback: the program freed the communicator
 * (or MPI_Finalize below deletes the attribute). */
static int wsp__shim_delete(MPI_Comm comm, int keyval, void *value, void *extra) {
  (void)comm, (void)keyval, (void)extra;
  wsp__shim_entry_t *e = value;
  pthread_mutex_lock(&wsp__shim.lock);
  if (e->prev) e->prev->next = e->next;
  else wsp__shim.entries = e->next;
  if (e->next) e->next->prev = e->prev;
  pthread_mutex_unlock(&wsp__shim.lock);
  int outer = wsp__shim_inside;
  wsp__shim_inside = 1;
  if (e->w) (void)wsp_comm_free(&e->w);
  wsp__shim_inside = outer;
  free(e);
  return MPI_SUCCESS;
}

/* comm's wsp_comm_t, made at its first use; NULL when making it failed
 * (on every rank: wsp_comm_create agrees), and from then on. */
static wsp_comm_t *wsp__shim_comm(MPI_Comm comm) {
  void *value = NULL;
  int found = 0;
  pthread_mutex_lock(&wsp__shim.lock);
  if (wsp__shim.keyval == MPI_KEYVAL_INVALID &&
      PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, wsp__shim_delete, &wsp__shim.keyval,
                              NULL) != MPI_SUCCESS)
    wsp__shim.keyval = MPI_KEYVAL_INVALID;
  int keyval = wsp__shim.keyval;
  pthread_mutex_unlock(&wsp__shim.lock);
  if (keyval == MPI_KEYVAL_INVALID) return NULL;
  if (PMPI_Comm_get_attr(comm, keyval, &value, &found) != MPI_SUCCESS) return NULL;
  if (found) return ((wsp__shim_entry_t *)value)->w;
  /* Collective from here: every rank of comm is here in the same call.
   * The entry's memory is agreed on first (a rank without it would leave
   * the others with a cached communicator it does not have). */
  wsp__shim_entry_t *e = calloc(1, sizeof *e);
  int ok = e != NULL;
  if (PMPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS || !ok) {
    free(e);
    return NULL; /* not cached: the next call tries again, on every rank */
  }
  /* The defaults and the WSP_* environment; a bad setting fails on every
   * rank alike. wirespeed's log stays off unless WSP_LOG asks for it: an
   * argument it refuses goes to the MPI, which reports it, and a failure
   * the shim prints once itself. */
  wsp_comm_t *w = NULL;
  double t0 = PMPI_Wtime();
  wsp_config_t cfg;
  int crc = wsp_config_init(&cfg);
  if (crc == WSP_OK) crc = wsp_config_from_env(&cfg);
  const char *log = getenv("WSP_LOG");
  if (crc == WSP_OK && (log == NULL || *log == 0)) cfg.log_level = WSP_LOG_OFF;
  if (wsp_comm_create(comm, crc == WSP_OK ? &cfg : NULL, &w) != WSP_OK) {
    wsp__shim_warn("the communicator could not be set up (%s); the MPI runs its collectives",
                   wsp_last_error());
    w = NULL;
  }
  pthread_mutex_lock(&wsp__shim.lock);
  wsp__shim.comms++;
  wsp__shim.setup_seconds += PMPI_Wtime() - t0;
  pthread_mutex_unlock(&wsp__shim.lock);
  e->w = w;
  e->comm = comm;
  if (PMPI_Comm_set_attr(comm, keyval, e) != MPI_SUCCESS) {
    if (w) (void)wsp_comm_free(&e->w);
    free(e);
    return NULL;
  }
  pthread_mutex_lock(&wsp__shim.lock);
  e->next = wsp__shim.entries;
  if (e->next) e->next->prev = e;
  wsp__shim.entries = e;
  pthread_mutex_unlock(&wsp__shim.lock);
  return e->w;
}

int wsp__shim_begin(wsp__shim_call_t *c, wsp_coll_t coll, MPI_Comm comm, size_t bytes,
                    int commutative) {
  if (wsp__shim.mode == WSP__SHIM_AUTO && bytes < wsp__shim.min) return 0;
  wsp__shim_inside = 1;
  wsp_comm_t *w = wsp__shim_comm(comm);
  if (w == NULL) {
    wsp__shim_inside = 0;
    return 0;
  }
  *c = (wsp__shim_call_t){.w = w, .comm = comm, .coll = coll, .alg = -1};
  if (wsp__shim.report) {
    if (wsp_coll_select(w, coll, bytes, commutative, &c->alg) != WSP_OK) c->alg = -1;
    c->t0 = PMPI_Wtime();
  }
  return 1;
}

/* The MPI error class closest to a wirespeed status that is not a refused
 * argument. */
static int wsp__shim_class(int rc) {
  int cls = MPI_ERR_INTERN;
  switch (rc) {
  case WSP_ERR_NOMEM: cls = MPI_ERR_NO_MEM; break;
  case WSP_ERR_MPI: {
    int code = wsp_last_mpi_error();
    if (code == MPI_SUCCESS || PMPI_Error_class(code, &cls) != MPI_SUCCESS) cls = MPI_ERR_OTHER;
    break;
  }
  case WSP_ERR_UNSUPPORTED: cls = MPI_ERR_UNSUPPORTED_OPERATION; break;
  /* WSP_CHECK found arguments that differ between the ranks: the MPI's own
   * call would hang or overrun, so the error is raised here. */
  case WSP_ERR_MISMATCH: cls = MPI_ERR_ARG; break;
  default: cls = MPI_ERR_OTHER; break;
  }
  return cls;
}

int wsp__shim_end(wsp__shim_call_t *c, int rc) {
  wsp__shim_inside = 0;
  if (wsp__shim.report) {
    double t = PMPI_Wtime() - c->t0;
    pthread_mutex_lock(&wsp__shim.lock);
    wsp__shim_count_t *k = &wsp__shim.count[c->coll];
    if (rc == WSP_OK) {
      k->ran++;
      k->seconds += t;
      if (c->alg >= 0 && c->alg < WSP__SHIM_ALGS) k->alg[c->alg]++;
    }
    pthread_mutex_unlock(&wsp__shim.lock);
  }
  if (rc == WSP_OK) return MPI_SUCCESS;
  if (rc == WSP_ERR_ARG) return WSP__SHIM_FALLBACK;
  int cls = wsp__shim_class(rc);
  fprintf(stderr, "wirespeed shim: %s\n", wsp_last_error());
  PMPI_Comm_call_errhandler(c->comm, cls);
  return cls;
}

int wsp__shim_fallback(wsp__shim_call_t *c, int mpi_rc) {
  if (wsp__shim.report) {
    pthread_mutex_lock(&wsp__shim.lock);
    wsp__shim.count[c->coll].fell_back++;
    pthread_mutex_unlock(&wsp__shim.lock);
  }
  return mpi_rc;
}

size_t wsp__shim_bytes(MPI_Count count, MPI_Datatype type) {
  int size = 0;
  if (count <= 0 || type == MPI_DATATYPE_NULL || PMPI_Type_size(type, &size) != MPI_SUCCESS ||
      size <= 0)
    return 0;
  return (size_t)count * (size_t)size;
}

size_t wsp__shim_block(MPI_Comm comm, int root, int in_place, MPI_Count count1,
                       MPI_Datatype type1, MPI_Count count2, MPI_Datatype type2) {
  int rank = -1;
  if (root >= 0 && PMPI_Comm_rank(comm, &rank) != MPI_SUCCESS) return 0;
  return rank == root || in_place ? wsp__shim_bytes(count2, type2)
                                  : wsp__shim_bytes(count1, type1);
}

int wsp__shim_commutative(MPI_Op op) {
  int c = 1;
  if (op == MPI_OP_NULL || PMPI_Op_commutative(op, &c) != MPI_SUCCESS) return 1;
  return c;
}

/* Rank 0's counts, at MPI_Finalize (every rank took the same paths). */
static void wsp__shim_print_report(void) {
  int rank = 0;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (!wsp__shim.report || rank != 0) return;
  fprintf(stderr, "wirespeed shim report (rank 0; WSP_SHIM=%s, WSP_SHIM_MIN=%zu):\n",
          wsp__shim.mode == WSP__SHIM_OFF ? "off"
          : wsp__shim.mode == WSP__SHIM_FORCE ? "force"
                                              : "auto",
          wsp__shim.min);
  fprintf(stderr, "  %-10s %10s %10s %10s %12s  %s\n", "collective", "calls", "wirespeed",
          "fell back", "seconds", "algorithms");
  for (int c = 0; c < WSP_COLL_COUNT; c++) {
    const wsp__shim_count_t *k = &wsp__shim.count[c];
    if (k->seen == 0) continue;
    char algs[512] = "";
    size_t used = 0;
    for (int a = 0; a < WSP__SHIM_ALGS && used < sizeof algs; a++) {
      if (k->alg[a] == 0) continue;
      const wsp_alg_info_t *info = wsp_coll_alg_info((wsp_coll_t)c, a);
      int n = snprintf(algs + used, sizeof algs - used, "%s%s %llu", used ? ", " : "",
                       info ? info->name : "?", k->alg[a]);
      if (n < 0) break;
      used += (size_t)n;
    }
    fprintf(stderr, "  %-10s %10llu %10llu %10llu %12.6f  %s\n", wsp_coll_name((wsp_coll_t)c),
            k->seen, k->ran, k->fell_back, k->seconds, algs);
  }
  /* The set-up (the model's calibration, mostly) is paid inside the first
   * call wirespeed runs on each communicator; not in the seconds above. */
  fprintf(stderr, "  communicators set up: %llu, in %.6f s (inside their first calls)\n",
          wsp__shim.comms, wsp__shim.setup_seconds);
}

WSP__SHIM_API int MPI_Finalize(void) {
  pthread_once(&wsp__shim.once, wsp__shim_settings);
  /* Every cached wsp_comm_t is freed while MPI still works: deleting the
   * attribute runs the callback above, which unlinks the entry. */
  for (;;) {
    pthread_mutex_lock(&wsp__shim.lock);
    wsp__shim_entry_t *e = wsp__shim.entries;
    pthread_mutex_unlock(&wsp__shim.lock);
    if (e == NULL) break;
    if (PMPI_Comm_delete_attr(e->comm, wsp__shim.keyval) != MPI_SUCCESS) {
      /* Should not happen; unlink it so that the loop ends. */
      pthread_mutex_lock(&wsp__shim.lock);
      wsp__shim.entries = e->next;
      if (e->next) e->next->prev = NULL;
      pthread_mutex_unlock(&wsp__shim.lock);
    }
  }
  wsp__shim_print_report();
  wsp__shim.finalizing = 1;
  if (wsp__shim.keyval != MPI_KEYVAL_INVALID) PMPI_Comm_free_keyval(&wsp__shim.keyval);
  return PMPI_Finalize();
}

#ifdef WSP_SHIM_FORTRAN
/* Open MPI's Fortran bindings call its internals, not the C MPI_
 * functions, so the shim defines the Fortran entry points too (gen.py
 * --fortran). A Fortran MPI_IN_PLACE or MPI_BOTTOM is the address of a
 * common block that Open MPI's libmpi defines (mpif-sentinels.h); weak, so
 * that a library without them loads and simply has none. */
extern int mpi_fortran_in_place_ __attribute__((weak));
extern int mpi_fortran_bottom_ __attribute__((weak));

void *wsp__shim_fbuf(void *buf) {
  if (&mpi_fortran_in_place_ != NULL && buf == (void *)&mpi_fortran_in_place_)
    return MPI_IN_PLACE;
  if (&mpi_fortran_bottom_ != NULL && buf == (void *)&mpi_fortran_bottom_) return MPI_BOTTOM;
  return buf;
}

/* MPI_FINALIZE from Fortran: the same as from C (the cache and the
 * report), every name a compiler may use. */
static void wsp__shim_f_finalize(MPI_Fint *ierr) {
  int rc = MPI_Finalize();
  if (ierr) *ierr = (MPI_Fint)rc;
}
WSP__SHIM_API void mpi_finalize(MPI_Fint *ierr);
void mpi_finalize(MPI_Fint *ierr) __attribute__((alias("wsp__shim_f_finalize")));
WSP__SHIM_API void mpi_finalize_(MPI_Fint *ierr);
void mpi_finalize_(MPI_Fint *ierr) __attribute__((alias("wsp__shim_f_finalize")));
WSP__SHIM_API void mpi_finalize__(MPI_Fint *ierr);
void mpi_finalize__(MPI_Fint *ierr) __attribute__((alias("wsp__shim_f_finalize")));
WSP__SHIM_API void MPI_FINALIZE(MPI_Fint *ierr);
void MPI_FINALIZE(MPI_Fint *ierr) __attribute__((alias("wsp__shim_f_finalize")));
WSP__SHIM_API void mpi_finalize_f08_(MPI_Fint *ierr);
void mpi_finalize_f08_(MPI_Fint *ierr) __attribute__((alias("wsp__shim_f_finalize")));
#else
void *wsp__shim_fbuf(void *buf) { return buf; }
#endif

#if defined(MPICH_VERSION) && !defined(WSP_SHIM_FORTRAN)
/* MPICH's Fortran bindings call the C MPI_ functions (so the wrappers
 * above take their collectives, whose sentinels they have already turned
 * into C's), except `use mpi_f08`'s MPI_Finalize, which calls
 * PMPI_Finalize: without this the cache would outlive the MPI and the
 * report would not be printed. The binding passes its optional ierror by
 * address, NULL when absent. */
WSP__SHIM_API void mpi_finalize_f08_(MPI_Fint *ierr);
void mpi_finalize_f08_(MPI_Fint *ierr) {
  int rc = MPI_Finalize();
  if (ierr) *ierr = (MPI_Fint)rc;
}
#endif
