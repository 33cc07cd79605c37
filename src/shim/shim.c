/* SPDX-License-Identifier: BSD-3-Clause */
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
 *     WSP_SHIM_COLLS and the message's bytes (the type signatures match on
 *     every rank). So every rank of a call
 *     takes the same path, and a communicator's wsp_comm_t is made (a
 *     collective call) by all its ranks in the same call.
 *   - In auto mode wirespeed runs a call from WSP_SHIM_MIN bytes up (the
 *     whole message, or one rank's block for gather, scatter, allgather
 *     and alltoall). Below it the MPI's own call runs: there latency
 *     decides, and the model cannot price the MPI's own algorithm, nor
 *     the scheduling a step pays where ranks share cores (docs/shim.md).
 *   - Those settings come from each rank's environment, so they are
 *     compared on each communicator, at the first intercepted call on it
 *     (a call all its ranks make, in any mode and of any size, before
 *     anything is decided): where they differ between its ranks, every
 *     rank of it hands all its calls to the MPI, and its rank 0 warns.
 *     The comparison is one small allreduce, which also agrees on whether
 *     every rank could keep the state below (kept by all or by none).
 *   - The state of a communicator (whether its settings agree, and its
 *     wsp_comm_t once a call wirespeed runs made it) is cached in an
 *     attribute of it; the attribute's delete callback frees it when the
 *     program frees the communicator. MPI_Finalize frees every one still
 *     cached before the MPI's own finalize, so no callback calls MPI
 *     while it shuts down.
 *   - A failure that is local to one rank (the state's memory, making the
 *     wsp_comm_t) is agreed on across the communicator before anything
 *     depends on it, so that every rank takes the same path: the MPI's
 *     own collective.
 *   - wirespeed itself calls MPI (its private communicators, its checks):
 *     the shim carries its own copy of wirespeed whose MPI_ calls are
 *     renamed PMPI_ (the MPI's own; CMake, src/shim/pmpi_core.py), and a
 *     thread-local guard sends any that still reach the shim to the MPI.
 *   - Room for other tools: the shim defines PMPI_X beside MPI_X, so that
 *     a profiler preloaded before or after it (one that wraps MPI_X and
 *     calls PMPI_X) still sees every call the program makes, and the shim
 *     still runs it (gen.py; wsp__shim_resolve and wsp__shim_caller
 *     below; docs/shim.md, "With a profiler").
 *   - An argument wirespeed refuses (refused on every rank before any
 *     traffic) sends the call to PMPI with the same arguments, so the MPI
 *     reports it with its own error class, as without the shim. Any other
 *     failure is raised on the communicator's error handler as the MPI
 *     error class closest to it.
 */
/* dladdr and RTLD_NEXT (glibc's, also in the BSDs and macOS). */
#define _GNU_SOURCE 1
#include "shim.h"
#include "report.h"
#include "shim_env.h"

#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One communicator's state (the attribute's value), made at the first
 * intercepted call on it by all its ranks in that call. */
typedef struct wsp__shim_entry {
  int run;       /* the settings agree on every rank and the shim is on */
  int made;      /* making w was tried, and its outcome agreed on */
  wsp_comm_t *w; /* NULL until made, and for good where making it failed */
  MPI_Comm comm;
  struct wsp__shim_entry *prev, *next;
} wsp__shim_entry_t;

/* Per collective, always counted (the job's report may be asked for on
 * another rank): the calls seen, on every call, without the lock; the
 * calls wirespeed ran, their seconds and those handed back, under it. */
typedef struct {
  atomic_ullong seen;
  unsigned long long ran, fell_back;
  double seconds;
} wsp__shim_count_t;

/* Kinds of warning, each said at most once per process (a program that
 * makes many communicators would otherwise repeat it for each). */
enum { WSP__SHIM_SAID_SETTINGS, WSP__SHIM_SAID_STATE, WSP__SHIM_SAID_CREATE, WSP__SHIM_SAID_N };

static struct {
  pthread_once_t once;
  int mode;
  unsigned colls; /* bit per wsp_coll_t */
  size_t min;
  int report; /* this rank asked for the report */
  /* The job's report (src/comm/report.h): where it goes ("1": stderr),
   * this rank's table that its communicators' rows fold into (NULL: out of
   * memory), and when the first communicator was set up. The rows are kept
   * whether or not this rank asked: another may have. */
  char *report_dest;
  double *job;
  double started;
  /* Testing aid (WSP_SHIM_FAULT_NOMEM): allocations that fail on this
   * rank, to show that every rank still takes the same path. */
  int fault_state, fault_create;
  int keyval;
  int finalizing;
  atomic_uint gen; /* changes whenever a communicator's state is freed */
  atomic_int said[WSP__SHIM_SAID_N];
  pthread_mutex_t lock; /* the keyval, the entry list and the counts */
  wsp__shim_entry_t *entries;
  wsp__shim_count_t count[WSP_COLL_COUNT];
  unsigned long long comms;  /* communicators set up (report) */
  double setup_seconds;      /* ... and the time it took */
} wsp__shim = {.once = PTHREAD_ONCE_INIT,
               .keyval = MPI_KEYVAL_INVALID,
               .lock = PTHREAD_MUTEX_INITIALIZER};

WSP__SHIM_TLS int wsp__shim_inside;

/* The communicator this thread looked up last and its state, valid while
 * no state was freed since (gen): most programs call one communicator
 * again and again, and the attribute lookup costs more than the rest of
 * a call the shim passes by. */
static WSP__SHIM_TLS struct {
  MPI_Comm comm;
  unsigned gen;
  wsp__shim_entry_t *e;
} wsp__shim_last;

/* ---- the next definitions ------------------------------------------------
 * dlsym(RTLD_NEXT) from the shim finds the definitions after it in the
 * dynamic linker's order: a tool preloaded after the shim, then the MPI.
 * In Open MPI and MPICH the library's MPI_X is a weak alias of its PMPI_X
 * (one address), so with no tool between the shim and the MPI the two are
 * one function; where an MPI makes them two, they are still one object. */
static pthread_mutex_t wsp__shim_sym_lock = PTHREAD_MUTEX_INITIALIZER;

static const void *wsp__shim_base(const void *addr) {
  Dl_info info;
  return addr && dladdr(addr, &info) ? info.dli_fbase : NULL;
}

static wsp__shim_fn_t wsp__shim_dlsym(void *handle, const char *prefix, const char *name) {
  char sym[96];
  snprintf(sym, sizeof sym, "%s%s", prefix, name);
  void *p = dlsym(handle, sym);
  wsp__shim_fn_t f;
  memcpy(&f, &p, sizeof f); /* POSIX: a function's address as a void * */
  return f;
}

void wsp__shim_resolve(wsp__shim_sym_t *s) {
  pthread_mutex_lock(&wsp__shim_sym_lock);
  if (!atomic_load_explicit(&s->ready, memory_order_relaxed)) {
    s->real = wsp__shim_dlsym(RTLD_NEXT, "PMPI_", s->name);
    s->next = wsp__shim_dlsym(RTLD_NEXT, "MPI_", s->name);
    if (s->real == NULL) {
      /* No MPI after the shim: nothing could run the call. */
      fprintf(stderr, "wirespeed shim: PMPI_%s not found after the shim (%s)\n", s->name,
              dlerror());
      abort();
    }
    if (s->next == NULL) s->next = s->real;
    s->real_base = wsp__shim_base((const void *)(uintptr_t)s->real);
    s->next_base = wsp__shim_base((const void *)(uintptr_t)s->next);
    s->tool_after = s->next != s->real && s->next_base != s->real_base;
    atomic_store_explicit(&s->ready, 1, memory_order_release);
  }
  pthread_mutex_unlock(&wsp__shim_sym_lock);
}

/* Whether the object loaded at `base`, named `file` by dladdr, itself
 * defines MPI_<name>: dlsym on the object's handle also searches its
 * dependencies, so the definition found must lie in the object. The
 * program itself has no name dlopen knows: its handle is dlopen(NULL)'s,
 * whose search starts with it. */
static int wsp__shim_defines(const void *base, const char *file, const char *name) {
  void *h = file && *file ? dlopen(file, RTLD_LAZY | RTLD_NOLOAD) : NULL;
  if (h == NULL) h = dlopen(NULL, RTLD_LAZY);
  if (h == NULL) return 0;
  wsp__shim_fn_t f = wsp__shim_dlsym(h, "MPI_", name);
  int here = f != NULL && wsp__shim_base((const void *)(uintptr_t)f) == base;
  dlclose(h);
  return here;
}

static int wsp__shim_verdict(const wsp__shim_sym_t *s, const void *ret) {
  Dl_info info;
  if (ret == NULL || !dladdr(ret, &info)) return WSP__SHIM_TO_MPI;
  const void *base = info.dli_fbase;
  /* The shim itself, the MPI (its internals), or an object that does not
   * define MPI_X (the program calling PMPI_X, another library). */
  if (base == wsp__shim_base((const void *)(uintptr_t)wsp__shim_verdict) || base == s->real_base ||
      !wsp__shim_defines(base, info.dli_fname, s->name))
    return WSP__SHIM_TO_MPI;
  /* A tool wrapping MPI_X. One before the shim while another is after it:
   * the call goes on to the one after, which calls PMPI_X in turn. */
  return s->tool_after && base != s->next_base ? WSP__SHIM_TO_NEXT : WSP__SHIM_TO_SHIM;
}

/* The verdicts, per call site and call: written once under the lock,
 * read without it (a slot's return address is stored last). A full table
 * still answers, by asking dladdr each time. */
enum { WSP__SHIM_CALLERS = 256 };
static struct {
  _Atomic(uintptr_t) ret;
  const wsp__shim_sym_t *sym;
  int verdict;
} wsp__shim_callers[WSP__SHIM_CALLERS];

int wsp__shim_caller(const wsp__shim_sym_t *s, const void *ret) {
  /* wirespeed's own calls (a callback of the MPI's, say). */
  if (wsp__shim_inside) return WSP__SHIM_TO_MPI;
  uintptr_t key = (uintptr_t)ret;
  unsigned h = (unsigned)((key >> 4) ^ ((uintptr_t)s >> 6)) % WSP__SHIM_CALLERS;
  for (unsigned i = 0; i < WSP__SHIM_CALLERS; i++) {
    unsigned k = (h + i) % WSP__SHIM_CALLERS;
    uintptr_t at = atomic_load_explicit(&wsp__shim_callers[k].ret, memory_order_acquire);
    if (at == 0) break;
    if (at == key && wsp__shim_callers[k].sym == s) return wsp__shim_callers[k].verdict;
  }
  int v = wsp__shim_verdict(s, ret);
  pthread_mutex_lock(&wsp__shim_sym_lock);
  for (unsigned i = 0; i < WSP__SHIM_CALLERS; i++) {
    unsigned k = (h + i) % WSP__SHIM_CALLERS;
    uintptr_t at = atomic_load_explicit(&wsp__shim_callers[k].ret, memory_order_relaxed);
    if (at == key && wsp__shim_callers[k].sym == s) break; /* another thread's */
    if (at != 0) continue;
    wsp__shim_callers[k].sym = s;
    wsp__shim_callers[k].verdict = v;
    atomic_store_explicit(&wsp__shim_callers[k].ret, key, memory_order_release);
    break;
  }
  pthread_mutex_unlock(&wsp__shim_sym_lock);
  return v;
}

/* A warning on stderr, from the rank of comm that passes `me_says` (the
 * caller picks the one rank that knows), at most once per process for
 * each kind. */
static void wsp__shim_say(int me_says, int kind, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static void wsp__shim_say(int me_says, int kind, const char *fmt, ...) {
  if (!me_says || atomic_exchange(&wsp__shim.said[kind], 1)) return;
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "wirespeed shim: ");
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
}

/* A warning from rank 0 of MPI_COMM_WORLD (a setting the shim cannot
 * read, the report). */
static void wsp__shim_warn(const char *fmt, const char *arg) {
  int rank = 0, init = 0;
  PMPI_Initialized(&init);
  if (init) PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank != 0) return;
  fprintf(stderr, "wirespeed shim: ");
  fprintf(stderr, fmt, arg);
  fputc('\n', stderr);
}

/* WSP_SHIM, WSP_SHIM_COLLS, WSP_SHIM_MIN, WSP_SHIM_REPORT and the testing
 * aid WSP_SHIM_FAULT_NOMEM (shim_env.c, which wsp-info --check shares). A
 * value the shim cannot read turns the shim off with a warning: a job that
 * asked for something else must not run differently than it thinks. */
static void wsp__shim_settings(void) {
  wsp__shim_env_t e;
  char why[256];
  if (wsp__shim_env_read(&e, why, sizeof why) != 0) wsp__shim_warn("%s; the shim is off", why);
  wsp__shim.mode = e.mode;
  wsp__shim.colls = e.colls;
  wsp__shim.min = e.min;
  /* One report for the job: WSP_REPORT's (a table, or a file), which
   * WSP_SHIM_REPORT=1 turns on as a table. */
  const char *dest = getenv("WSP_REPORT");
  if (dest == NULL || *dest == 0 || strcmp(dest, "0") == 0) dest = e.report ? "1" : NULL;
  wsp__shim.report = dest != NULL;
  wsp__shim.job = calloc(wsp__report_job_size(), sizeof *wsp__shim.job);
  if (dest) wsp__shim.report_dest = strdup(dest);
  if (dest && (wsp__shim.report_dest == NULL || wsp__shim.job == NULL))
    wsp__shim_warn("%s", "out of memory for the report; there will be none");
  wsp__shim.fault_state = e.fault_state;
  wsp__shim.fault_create = e.fault_create;
}

/* The shim's attribute key, made at the first need; MPI_KEYVAL_INVALID
 * when MPI could not make it (tried again at the next need). */
static int wsp__shim_delete(MPI_Comm comm, int keyval, void *value, void *extra);
static int wsp__shim_keyval(void) {
  pthread_mutex_lock(&wsp__shim.lock);
  if (wsp__shim.keyval == MPI_KEYVAL_INVALID &&
      PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, wsp__shim_delete, &wsp__shim.keyval,
                              NULL) != MPI_SUCCESS)
    wsp__shim.keyval = MPI_KEYVAL_INVALID;
  int keyval = wsp__shim.keyval;
  pthread_mutex_unlock(&wsp__shim.lock);
  return keyval;
}

static void wsp__shim_link(wsp__shim_entry_t *e) {
  pthread_mutex_lock(&wsp__shim.lock);
  e->prev = NULL;
  e->next = wsp__shim.entries;
  if (e->next) e->next->prev = e;
  wsp__shim.entries = e;
  pthread_mutex_unlock(&wsp__shim.lock);
}

static void wsp__shim_unlink(wsp__shim_entry_t *e) {
  pthread_mutex_lock(&wsp__shim.lock);
  if (e->prev) e->prev->next = e->next;
  else wsp__shim.entries = e->next;
  if (e->next) e->next->prev = e->prev;
  pthread_mutex_unlock(&wsp__shim.lock);
}

/* The attribute's delete callback: the program freed the communicator
 * (or MPI_Finalize below deletes the attribute, or the first call on the
 * communicator found that another rank could not keep its state). */
static int wsp__shim_delete(MPI_Comm comm, int keyval, void *value, void *extra) {
  (void)comm, (void)keyval, (void)extra;
  wsp__shim_entry_t *e = value;
  wsp__shim_unlink(e);
  /* No thread may take e from its last lookup any more. */
  atomic_fetch_add_explicit(&wsp__shim.gen, 1, memory_order_acq_rel);
  int outer = wsp__shim_inside;
  wsp__shim_inside = 1;
  if (e->w && wsp__shim.job) {
    /* Its rows go to the job's report, gathered once at MPI_Finalize
     * (report.c says why not here). */
    pthread_mutex_lock(&wsp__shim.lock);
    (void)wsp__report_fold(e->w, wsp__shim.job);
    pthread_mutex_unlock(&wsp__shim.lock);
  }
  if (e->w) (void)wsp_comm_free(&e->w);
  wsp__shim_inside = outer;
  free(e);
  return MPI_SUCCESS;
}

/* The first intercepted call on comm, on every rank of it (collective):
 * keeps the communicator's state in an attribute and compares the
 * settings in one allreduce. NULL when some rank could not keep the state
 * (nobody keeps it; this call goes to the MPI everywhere and the next one
 * tries again). */
static wsp__shim_entry_t *wsp__shim_first(MPI_Comm comm, int keyval) {
  static const char *const names[3] = {"WSP_SHIM", "WSP_SHIM_COLLS", "WSP_SHIM_MIN"};
  int rank = 0;
  if (PMPI_Comm_rank(comm, &rank) != MPI_SUCCESS) return NULL;
  wsp__shim_entry_t *e = NULL;
  if (keyval != MPI_KEYVAL_INVALID && !wsp__shim.fault_state) e = calloc(1, sizeof *e);
  if (e) {
    e->comm = comm;
    /* Linked first: a set attribute is always on the list MPI_Finalize
     * walks, and its delete callback unlinks it. */
    wsp__shim_link(e);
    if (PMPI_Comm_set_attr(comm, keyval, e) != MPI_SUCCESS) {
      wsp__shim_unlink(e);
      free(e);
      e = NULL;
    }
  }
  /* The settings and their negations under MPI_MIN give every rank the
   * least and the largest of each; the last value is the lowest rank
   * that could not keep the state (LLONG_MAX: none). */
  long long v[7] = {wsp__shim.mode, wsp__shim.colls, (long long)wsp__shim.min, 0, 0, 0,
                    e ? LLONG_MAX : rank};
  for (int i = 0; i < 3; i++) v[3 + i] = -v[i];
  int mrc = wsp__shim_real_Allreduce(MPI_IN_PLACE, v, 7, MPI_LONG_LONG, MPI_MIN, comm);
  if (mrc != MPI_SUCCESS || v[6] != LLONG_MAX) {
    if (e) PMPI_Comm_delete_attr(comm, keyval);
    wsp__shim_say(mrc == MPI_SUCCESS && v[6] == rank, WSP__SHIM_SAID_STATE,
                  "out of memory for a communicator's state on rank %d of it; its calls go "
                  "to the MPI on every rank until each can keep it%s",
                  rank, wsp__shim.fault_state ? " (WSP_SHIM_FAULT_NOMEM=state)" : "");
    return NULL;
  }
  e->run = wsp__shim.mode != WSP__SHIM_OFF;
  for (int i = 0; i < 3; i++) {
    if (v[i] != -v[3 + i]) {
      wsp__shim_say(rank == 0, WSP__SHIM_SAID_SETTINGS,
                    "%s differs between the ranks of a communicator; the MPI runs its "
                    "collectives (calls would take different paths on different ranks)",
                    names[i]);
      e->run = 0;
      break;
    }
  }
  return e;
}

/* comm's state: from this thread's last lookup, from the attribute, or
 * made now by wsp__shim_first. NULL when the call goes to the MPI as it
 * is: an intercommunicator, a communicator MPI refuses (its own call
 * then reports it), or a state some rank could not keep. */
static wsp__shim_entry_t *wsp__shim_entry(MPI_Comm comm) {
  unsigned gen = atomic_load_explicit(&wsp__shim.gen, memory_order_acquire);
  if (wsp__shim_last.e && wsp__shim_last.comm == comm && wsp__shim_last.gen == gen)
    return wsp__shim_last.e;
  int keyval = wsp__shim_keyval();
  wsp__shim_entry_t *e = NULL;
  if (keyval != MPI_KEYVAL_INVALID) {
    void *value = NULL;
    int found = 0;
    /* This fails only for a communicator MPI does not know. */
    if (PMPI_Comm_get_attr(comm, keyval, &value, &found) != MPI_SUCCESS) return NULL;
    if (found) e = value;
  }
  if (e == NULL) {
    int inter = 1;
    if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter) return NULL;
    /* A keyval that MPI could not make counts as state that could not be
     * kept: this rank joins the agreement all the same. */
    if ((e = wsp__shim_first(comm, keyval)) == NULL) return NULL;
  }
  wsp__shim_last.comm = comm;
  wsp__shim_last.gen = gen;
  wsp__shim_last.e = e;
  return e;
}

int wsp__shim_pass(wsp_coll_t coll, MPI_Comm comm) {
  if (wsp__shim_inside) return 1;
  pthread_once(&wsp__shim.once, wsp__shim_settings);
  atomic_fetch_add_explicit(&wsp__shim.count[coll].seen, 1, memory_order_relaxed);
  if (comm == MPI_COMM_NULL || wsp__shim.finalizing) return 1;
  wsp__shim_entry_t *e = wsp__shim_entry(comm);
  return e == NULL || !e->run || !(wsp__shim.colls & (1u << coll));
}

/* Makes e's wsp_comm_t, at the first call on e->comm that wirespeed runs
 * (collective: every rank of it is here in the same call), and agrees on
 * the outcome: where it failed on any rank, no rank keeps one, and the
 * MPI runs every collective of the communicator from now on. */
static void wsp__shim_make(wsp__shim_entry_t *e) {
  double t0 = PMPI_Wtime();
  /* The defaults and the WSP_* environment; a bad setting fails on every
   * rank alike. wirespeed's log stays off unless WSP_LOG asks for it: an
   * argument it refuses goes to the MPI, which reports it, and a failure
   * the shim prints once itself. */
  wsp_comm_t *w = NULL;
  wsp_config_t cfg;
  int crc = wsp_config_init(&cfg);
  if (crc == WSP_OK) crc = wsp_config_from_env(&cfg);
  const char *log = getenv("WSP_LOG");
  if (crc == WSP_OK && (log == NULL || *log == 0)) cfg.log_level = WSP_LOG_OFF;
  /* The job's report is the shim's (report.h): kept out of the
   * configuration the ranks compare, so that ranks whose settings differ
   * still agree; its rows are attached below, on this rank alone. */
  if (crc == WSP_OK) cfg.report = NULL;
  int rc = wsp_comm_create(e->comm, crc == WSP_OK ? &cfg : NULL, &w);
  char why[320];
  snprintf(why, sizeof why, "%s", rc == WSP_OK ? "" : wsp_last_error());
  if (rc == WSP_OK && wsp__shim.fault_create) {
    rc = WSP_ERR_NOMEM;
    snprintf(why, sizeof why, "out of memory (WSP_SHIM_FAULT_NOMEM=create)");
  }
  /* wsp_comm_create agrees on its own failures, but the shim does not
   * count on every path of it doing so: a rank that went on with a
   * communicator its partners do not have would wait for them forever.
   * The lowest rank whose failure is its own (not "another rank
   * failed"), else the lowest that failed, reports its reason. */
  int rank = 0;
  PMPI_Comm_rank(e->comm, &rank);
  long long who = LLONG_MAX;
  if (rc != WSP_OK) who = (rc == WSP_ERR_REMOTE ? (long long)INT_MAX + 1 : 0) + rank;
  if (wsp__shim_real_Allreduce(MPI_IN_PLACE, &who, 1, MPI_LONG_LONG, MPI_MIN, e->comm) !=
      MPI_SUCCESS) {
    /* Nothing was agreed: this rank can only keep to the MPI. */
    who = rank;
    snprintf(why, sizeof why, "the shim's agreement on the outcome failed");
  }
  if (who != LLONG_MAX) {
    if (w) (void)wsp_comm_free(&w);
    wsp__shim_say(who % ((long long)INT_MAX + 1) == rank, WSP__SHIM_SAID_CREATE,
                  "a communicator could not be set up on rank %d of it (%s); the MPI runs its "
                  "collectives on every rank",
                  rank, why);
  }
  /* Rows of this rank's own, folded into the job's table when the shim
   * frees w (nothing collective; without memory for them, no rows). */
  if (w && wsp__shim.job) wsp__report_attach(w);
  e->w = w;
  e->made = 1;
  pthread_mutex_lock(&wsp__shim.lock);
  if (wsp__shim.comms++ == 0) wsp__shim.started = t0;
  wsp__shim.setup_seconds += PMPI_Wtime() - t0;
  pthread_mutex_unlock(&wsp__shim.lock);
}

int wsp__shim_begin(wsp__shim_call_t *c, wsp_coll_t coll, MPI_Comm comm, size_t bytes) {
  if (wsp__shim.mode == WSP__SHIM_AUTO && bytes < wsp__shim.min) return 0;
  /* The state wsp__shim_pass just looked up on this thread for comm. */
  wsp__shim_entry_t *e = wsp__shim_last.e;
  if (e == NULL || e->comm != comm) return 0;
  wsp__shim_inside = 1;
  if (!e->made) wsp__shim_make(e);
  if (e->w == NULL) {
    wsp__shim_inside = 0;
    return 0;
  }
  *c = (wsp__shim_call_t){.w = e->w, .comm = comm, .coll = coll};
  c->t0 = PMPI_Wtime();
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
  case WSP_ERR_ARG:
    cls = MPI_ERR_ARG;
    break; /* alltoallv's (wsp__shim_end) */
  default: cls = MPI_ERR_OTHER; break;
  }
  return cls;
}

int wsp__shim_end(wsp__shim_call_t *c, int rc) {
  wsp__shim_inside = 0;
  if (rc == WSP_OK) {
    double t = PMPI_Wtime() - c->t0;
    pthread_mutex_lock(&wsp__shim.lock);
    wsp__shim.count[c->coll].ran++;
    wsp__shim.count[c->coll].seconds += t;
    pthread_mutex_unlock(&wsp__shim.lock);
  }
  if (rc == WSP_OK) return MPI_SUCCESS;
  /* A refused argument goes to the MPI, which reports it as its own; not
   * alltoallv's, which one rank may refuse alone (its counts are its own):
   * that rank would sit in the MPI's call while the others run
   * wirespeed's. It gets the error raised here instead. */
  if (rc == WSP_ERR_ARG && c->coll != WSP_COLL_ALLTOALLV) return WSP__SHIM_FALLBACK;
  int cls = wsp__shim_class(rc);
  fprintf(stderr, "wirespeed shim: %s\n", wsp_last_error());
  PMPI_Comm_call_errhandler(c->comm, cls);
  return cls;
}

int wsp__shim_fallback(wsp__shim_call_t *c, int mpi_rc) {
  pthread_mutex_lock(&wsp__shim.lock);
  wsp__shim.count[c->coll].fell_back++;
  pthread_mutex_unlock(&wsp__shim.lock);
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

/* The shim's own figures, below the job's table: what only the shim knows,
 * rank 0's counts (every rank takes the same paths). Its seconds are the
 * whole wrapped call, where the table's are the algorithm's. */
static const char *wsp__shim_mode_name(void) {
  return wsp__shim.mode == WSP__SHIM_OFF     ? "off"
         : wsp__shim.mode == WSP__SHIM_FORCE ? "force"
                                             : "auto";
}

static void wsp__shim_report_text(void *arg) {
  (void)arg;
  fprintf(stderr, "wirespeed shim (rank 0; WSP_SHIM=%s, WSP_SHIM_MIN=%zu):\n",
          wsp__shim_mode_name(), wsp__shim.min);
  fprintf(stderr, "  %-14s %10s %10s %10s %12s\n", "collective", "calls", "wirespeed", "fell back",
          "call s");
  for (int c = 0; c < WSP_COLL_COUNT; c++) {
    const wsp__shim_count_t *k = &wsp__shim.count[c];
    if (k->seen == 0) continue;
    fprintf(stderr, "  %-14s %10llu %10llu %10llu %12.6f\n", wsp_coll_name((wsp_coll_t)c), k->seen,
            k->ran, k->fell_back, k->seconds);
  }
  /* The set-up (the model's calibration, mostly) is paid inside the first
   * call wirespeed runs on each communicator; not in the seconds above. */
  fprintf(stderr, "  communicators set up: %llu, in %.6f s (inside their first calls)\n",
          wsp__shim.comms, wsp__shim.setup_seconds);
}

static json_t *wsp__shim_report_json(void *arg) {
  (void)arg;
  json_t *colls = json_array();
  json_t *o = json_pack("{s:s, s:I, s:o, s:I, s:f}", "mode", wsp__shim_mode_name(), "min",
                        (json_int_t)wsp__shim.min, "collectives", colls, "communicators",
                        (json_int_t)wsp__shim.comms, "setup_seconds", wsp__shim.setup_seconds);
  if (o == NULL) return NULL;
  for (int c = 0; c < WSP_COLL_COUNT; c++) {
    const wsp__shim_count_t *k = &wsp__shim.count[c];
    if (k->seen == 0) continue;
    json_t *row = json_pack("{s:s, s:I, s:I, s:I, s:f}", "collective", wsp_coll_name((wsp_coll_t)c),
                            "calls", (json_int_t)k->seen, "wirespeed", (json_int_t)k->ran,
                            "fell_back", (json_int_t)k->fell_back, "call_seconds", k->seconds);
    if (row == NULL || json_array_append_new(colls, row) != 0) {
      json_decref(o);
      return NULL;
    }
  }
  return o;
}

/* The job's report, at MPI_Finalize on every rank: one reduction of the
 * tables the communicators folded into (report.h). A first reduction
 * counts the ranks that asked for it and those without memory for their
 * table, so that every rank takes the same path whatever its settings:
 * none is left in a reduction the others never call. */
static void wsp__shim_report(void) {
  int rank = 0, size = 1;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  PMPI_Comm_size(MPI_COMM_WORLD, &size);
  int v[2] = {wsp__shim.report, wsp__shim.job == NULL};
  if (wsp__shim_real_Allreduce(MPI_IN_PLACE, v, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD) !=
          MPI_SUCCESS ||
      v[0] == 0)
    return;
  int rc = MPI_ERR_NO_MEM;
  /* The table is a few thousand doubles: one int count holds it. */
  if (v[1] == 0)
    rc = wsp__shim_real_Allreduce(MPI_IN_PLACE, wsp__shim.job, (int)wsp__report_job_size(),
                                  MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) {
    if (v[0] != size)
      fprintf(stderr,
              "wirespeed shim: WSP_REPORT or WSP_SHIM_REPORT is set on %d of %d ranks; the "
              "report is the whole job's, written where rank 0's says (set it on every rank: "
              "docs/env.md)\n",
              v[0], size);
    const char *dest = wsp__shim.report_dest ? wsp__shim.report_dest : "1";
    if (rc != MPI_SUCCESS)
      fprintf(stderr, "wirespeed shim: the report could not be gathered (%s)\n",
              v[1] ? "out of memory on some rank" : "an MPI error");
    else if (wsp__report_job_emit(wsp__shim.job, size,
                                  wsp__shim.comms ? PMPI_Wtime() - wsp__shim.started : 0, dest,
                                  wsp__shim_report_text, wsp__shim_report_json, NULL) != 0)
      wsp__shim_warn("WSP_REPORT=\"%s\": the report could not be written", dest);
  }
}

/* Frees every cached wsp_comm_t while MPI still works and prints the
 * report, once, before the MPI's own finalize. */
static void wsp__shim_finalize(void) {
  pthread_once(&wsp__shim.once, wsp__shim_settings);
  if (wsp__shim.finalizing) return;
  /* Deleting the attribute runs the callback above, which unlinks the
   * entry. */
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
  wsp__shim_report();
  wsp__shim.finalizing = 1;
  if (wsp__shim.keyval != MPI_KEYVAL_INVALID) PMPI_Comm_free_keyval(&wsp__shim.keyval);
}

/* MPI_Finalize and PMPI_Finalize chain like the collectives (gen.py): a
 * tool that wraps MPI_Finalize (to print its profile, say) sees the
 * program's call, before or after the shim, and the shim's cleanup runs
 * last, just before the MPI's own. */
typedef int (*wsp__shim_fn_Finalize)(void);
static wsp__shim_sym_t wsp__shim_sym_Finalize = WSP__SHIM_SYM("Finalize");

int wsp__shim_real_Finalize(void) {
  return ((wsp__shim_fn_Finalize)wsp__shim_sym(&wsp__shim_sym_Finalize)->real)();
}

WSP__SHIM_API int MPI_Finalize(void) {
  const wsp__shim_sym_t *s = wsp__shim_sym(&wsp__shim_sym_Finalize);
  if (s->tool_after) return ((wsp__shim_fn_Finalize)s->next)();
  wsp__shim_finalize();
  return wsp__shim_real_Finalize();
}

/* Whoever calls it (a tool, the program, the MPI's Fortran bindings), the
 * shim's state goes first. */
WSP__SHIM_API int PMPI_Finalize(void) {
  const wsp__shim_sym_t *s = wsp__shim_sym(&wsp__shim_sym_Finalize);
  if (wsp__shim_caller(s, __builtin_return_address(0)) == WSP__SHIM_TO_NEXT)
    return ((wsp__shim_fn_Finalize)s->next)();
  wsp__shim_finalize();
  return wsp__shim_real_Finalize();
}

#ifdef WSP_SHIM_FORTRAN
/* Open MPI's Fortran bindings call its internals, not the C MPI_
 * functions, so the shim defines the Fortran entry points too (gen.py
 * --fortran). A Fortran MPI_IN_PLACE or MPI_BOTTOM is the address of a
 * common block that Open MPI's libmpi defines (mpif-sentinels.h), under
 * the one name its Fortran compiler gives it: mpi_fortran_in_place_ for
 * gfortran (Debian's; its use-mpi and mpi_f08 libraries define the same
 * name, which the dynamic linker makes one object), and in Open MPI's
 * list of the other manglings (ompi/mpi/fortran/base/constants.h) the
 * plain, the two-underscore and the capitals' names. The shim is built
 * once for any such libmpi, so it knows all four; each is weak, so that a
 * library without it loads and simply has none. */
extern int mpi_fortran_in_place __attribute__((weak));
extern int mpi_fortran_in_place_ __attribute__((weak));
extern int mpi_fortran_in_place__ __attribute__((weak));
extern int MPI_FORTRAN_IN_PLACE __attribute__((weak));
extern int mpi_fortran_bottom __attribute__((weak));
extern int mpi_fortran_bottom_ __attribute__((weak));
extern int mpi_fortran_bottom__ __attribute__((weak));
extern int MPI_FORTRAN_BOTTOM __attribute__((weak));

/* Whether buf is one of the names' addresses (an absent one is NULL,
 * which a Fortran buffer never is). */
static int wsp__shim_fis(const void *buf, int *const names[4]) {
  for (int i = 0; i < 4; i++)
    if (names[i] != NULL && buf == (const void *)names[i]) return 1;
  return 0;
}

void *wsp__shim_fbuf(void *buf) {
  int *const in_place[4] = {&mpi_fortran_in_place, &mpi_fortran_in_place_,
                            &mpi_fortran_in_place__, &MPI_FORTRAN_IN_PLACE};
  int *const bottom[4] = {&mpi_fortran_bottom, &mpi_fortran_bottom_, &mpi_fortran_bottom__,
                          &MPI_FORTRAN_BOTTOM};
  if (buf == NULL) return buf;
  if (wsp__shim_fis(buf, in_place)) return MPI_IN_PLACE;
  if (wsp__shim_fis(buf, bottom)) return MPI_BOTTOM;
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
