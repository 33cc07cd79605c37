/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Internal declarations shared by the library's sources. Nothing here is
 * public: names are wsp__* and may change at any time.
 */
#ifndef WSP_INTERNAL_H
#define WSP_INTERNAL_H

#include "wirespeed.h"
#include "p2p.h"

#include <stdarg.h>
#include <stdint.h>

/* Which ranks share a node (src/core/topo.c). On a communicator whose nodes
 * hold more than one rank and that has more than one node, `local` is this
 * node's ranks (in rank order) and `leaders` the lowest rank of each node
 * (NULL on the other ranks); both are wsp_comm_t of their own, with the
 * parent's configuration and their part of the model, so that the
 * collectives run on them as on any communicator. */
typedef struct wsp__topo {
  wsp_topology_t pub;
  /* node_of[r]: the node of rank r (nodes numbered by their lowest rank),
   * the same array on every rank; p entries. The one node map of the
   * library: the collectives, the shuffle and wsp_comm_node read it. */
  int *node_of;
  struct wsp_comm *local, *leaders;
} wsp__topo_t;

/* Sites: groups of ranks joined by a link that is longer or narrower than
 * the links inside them (src/core/sites.c). Every rank holds the same
 * arrays; sites are numbered by their lowest rank. count < 2 means the
 * communicator has no sites to speak of (the multi-site collectives'
 * precondition). */
typedef enum {
  WSP__SITES_AUTO = 0, /* the map's groups when a map is attached */
  WSP__SITES_NONE,
  WSP__SITES_MAP,
  WSP__SITES_RANKS,
  WSP__SITES_HOSTS
} wsp__sites_mode_t;

typedef struct wsp__sites {
  wsp__sites_mode_t mode;
  int count;
  /* site_of[r]: the site of rank r (p entries); site s's ranks, in rank
   * order, are rank[start[s] .. start[s + 1]); index[r]: r's place among
   * them. */
  int *site_of, *start, *rank, *index;
  int min_size, max_size;
  char *spec; /* the copy of cfg.sites behind comm->cfg.sites */
  /* This rank's site as a communicator of its own (wsp__sites_comm); NULL
   * until an algorithm needs it. */
  struct wsp_comm *comm;
  /* A duplicate of the communicator whose striped point-to-point carries
   * the crossings of the multi-site bcast and allreduce over lanes
   * (wsp__sites_wan); NULL until a crossing uses lanes, or when making it
   * failed (failed set: the crossings go through MPI). */
  struct wsp_comm *wan;
  int wan_failed;
  /* wan_off[r]: the crossings with rank r go through MPI, after a failure
   * on their lanes that both ends saw (src/coll/coll_sites.c). */
  unsigned char *wan_off;
  /* The crossings of the flat exchange schedules (wsp__sites_cross), which
   * their costs price step by step: cross[k], k < 31, in the step where
   * folded ranks nr and nr ^ 2^k swap; cross_fold, in the fold's; shift[k],
   * in the step where every rank r sends to r - 2^k mod p (Bruck's). */
  int cross[31], cross_fold, shift[31];
  /* Bit i: some edge of level i of the binomial tree rooted at rank 0
   * (ranks r and r + 2^i, r a multiple of 2^(i+1)) joins two sites; what
   * an agreement (src/core/agree.c) waits for, priced by wsp__agree_cost. */
  unsigned tree_cross;
} wsp__sites_t;

/* The communicator object. `mpi` is wirespeed's private duplicate. */
struct wsp_comm {
  MPI_Comm mpi;
  int rank;
  int size;
  wsp_config_t cfg;
  /* The communicator the user holds for this one: itself for
   * wsp_comm_create's, the parent's owner for the sub-communicators
   * (wsp__comm_wrap) and the shuffle's copy. A timeout on any of them marks
   * the owner unusable (src/core/timeout.c). */
  struct wsp_comm *owner;
  /* Set by a timeout on this communicator or one it owns: every later call
   * fails at once (wsp__usable). */
  int broken;
  /* Counts sparse-exchange rounds; its low bit picks the tag of a round so
   * that a rank one round ahead never feeds a rank still in the previous
   * round (see src/exchange/sparse.c for why one bit is enough). */
  uint64_t sparse_round;
  /* The sparse exchange's state: its `auto` chooser and its scratch
   * (src/exchange/sparse.h); NULL on the node sub-communicators, which never
   * run a sparse exchange. */
  struct wsp__sparse_comm *sparse;
  /* Collectives: the algorithm of each (WSP_ALG_AUTO or a table index),
   * the cost model, and the parsed rules file (NULL if none). */
  int coll_alg[WSP_COLL_COUNT];
  /* Which algorithm each collective ran last on this communicator (a
   * table index) and how many of its calls reached an algorithm, set by
   * wsp__coll_run. Nothing in the library reads it: it lets the tests see
   * that a forced algorithm really ran rather than a fallback
   * (tests/mpi/test_coll.c). */
  struct {
    unsigned long calls;
    int alg;
  } coll_ran[WSP_COLL_COUNT];
  /* What the report (cfg.report, docs/report.md) gathers; NULL when it is
   * off, and on every sub-communicator and copy, so that a call is counted
   * once, on the communicator the user called. */
  struct wsp__report *report;
  wsp_model_t model;
  struct wsp__rules *rules;
  wsp__topo_t topo;
  /* The network map's trees (src/coll/aware.h); NULL without a map. */
  struct wsp__aware *aware;
  /* Striped point-to-point (src/p2p); NULL on the node sub-communicators. */
  struct wsp__stripe *stripe;
  wsp__sites_t sites;
  /* The transport under the collectives' transfers (src/p2p/xport.c): a
   * duplicate whose striped engine carries them where the pair's lanes
   * pay, and the calls core's point-to-point makes through it (core sits
   * below p2p, so it reaches the lanes through these pointers only). Both
   * NULL when every transfer goes through MPI (cfg.transport, one node,
   * SimGrid, auto found no gain), and on the sub-communicators, whose
   * waits drive their owner's lanes; lanes without xport: auto has not
   * decided yet (wsp__xport_decide). */
  struct wsp_comm *lanes;
  const struct wsp__xport_ops *xport;
  /* What the attached map's flows say (wsp_comm_set_netmap, src/coll/
   * aware.c), for auto's verdict (wsp__xport_decide), which then measures
   * nothing: pairs of nodes with figures (0: none, the transport measures)
   * and pairs where several flows paid; over those, the most flows, the
   * largest size from which they paid, the median pair's rate of the
   * flows (bytes/s) and the longest round trip (s). */
  struct {
    double pairs, pay, lanes, threshold, rate_one, rate_k, rtt;
  } map_flows;
  /* What auto's verdict took the lanes on (wsp__xport_decide), in bytes/s:
   * the fastest pair's one flow and the median pair's lanes; 0 when the
   * lanes were forced (WSP_TRANSPORT=lanes) or are off. A pattern that runs
   * many flows per host at once, as the shuffle does, weighs them against
   * each other (src/exchange/shuffle.c, wsp__shuffle_lanes). */
  double lanes_rate_one, lanes_rate_k;
  /* The eager limit between nodes as wsp_comm_create found it (measured
   * or given; src/model/calibrate.c, wsp__model_eager) and where from
   * (wsp_eager_from_t): the model's again when a map is detached. */
  size_t eager_own;
  int eager_own_from;
  /* A transfer of that transport failed on a lane, on this rank or, as
   * the rank that saw it told every other over MPI, on another one
   * (src/p2p/xport.c): the pair (a < b) and why. Every wait on the
   * communicator ends at its next idle pass, and it and every later call
   * fail with WSP_ERR_CONN (src/core/timeout.c). Set on the owner. */
  struct {
    int failed, a, b;
    char why[160];
  } lane_fault;
};

/* ---- the report (src/comm/report.c, docs/report.md) ----
 * One row per operation and algorithm that ran. Every figure is a double so
 * that the rows travel in one reduction at wsp_comm_free; `fewest` is
 * filled there (the calls as a negative number, so that one MAX gives the
 * fewest calls any rank made beside the most); `sent` and `busy` are the
 * calls and the seconds summed over the ranks rather than the most and the
 * slowest rank's: the striped rows count each sender's own messages, and
 * their rate is their bytes over `busy`. */
enum { WSP__REPORT_ALGS = 16 };
/* The striped rows: messages that went over the lanes, and through MPI. */
enum { WSP__REPORT_STRIPED_LANES = 0, WSP__REPORT_STRIPED_MPI = 1 };
typedef struct wsp__report_row {
  double calls, fewest, bytes, seconds, predicted, unpredicted, sent, busy;
} wsp__report_row_t;
typedef struct wsp__report {
  char *dest;     /* "1": a table on stderr; else the JSON file's path */
  double created; /* MPI_Wtime at wsp_comm_create */
  wsp__report_row_t coll[WSP_COLL_COUNT][WSP__REPORT_ALGS];
  wsp__report_row_t sparse[WSP__REPORT_ALGS];
  /* The user's striped sends that completed, by the path they took. */
  wsp__report_row_t striped[WSP__REPORT_ALGS];
} wsp__report_t;
/* Counts one call that ran (predicted < 0: the model has no cost for it). */
static inline void wsp__report_add(wsp__report_row_t *row, size_t bytes, double seconds,
                                   double predicted) {
  row->calls += 1;
  row->sent += 1;
  row->bytes += (double)bytes;
  row->seconds += seconds;
  row->busy += seconds;
  if (predicted >= 0)
    row->predicted += predicted;
  else
    row->unpredicted += 1;
}
/* At wsp_comm_create with cfg.report set: the rows, or NULL and a recorded
 * failure (WSP_ERR_NOMEM). */
wsp__report_t *wsp__report_new(const char *dest);
/* At wsp_comm_free, collective: gathers the rows over every rank in one
 * reduction, prints or writes them on rank 0, and frees them. */
int wsp__report_finish(wsp_comm_t *comm);

/* What core's point-to-point asks of the transport (src/p2p/xport.c). */
typedef struct wsp__xport_ops {
  /* Posts a transfer over the lanes when it should take them: WSP_OK with
   * *req a request MPI can test and wait for like any other, or
   * WSP__XPORT_MPI when it goes through MPI as before (a status < 0 is a
   * failure). Both ends of a transfer decide alike. */
  int (*post)(const struct wsp_comm *comm, int is_recv, void *buf, size_t count, MPI_Datatype type,
              int peer, int tag, MPI_Request *req);
  /* One pass of the lanes' progress that may sleep up to `seconds` on
   * their sockets: -1 when nothing is in flight on them (the caller waits
   * its own way), else 1 when bytes moved and 0 when none did. */
  int (*drive)(struct wsp_comm *lanes, double seconds);
} wsp__xport_ops_t;
#define WSP__XPORT_MPI 1

/* ---- errors ---- */

/* Records a formatted message for wsp_last_error(), logs it at error level
 * when `comm` allows, and returns `status`. */
int wsp__fail(const wsp_comm_t *comm, int status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* The same without the log line: for parsers such as wsp_parse_rate, whose
 * callers report the failure in their own words (naming their option). */
int wsp__fail_quiet(int status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Records an MPI failure (keeping its code) and returns WSP_ERR_MPI. */
int wsp__mpi_fail(const wsp_comm_t *comm, int mpi_rc, const char *call,
                  const char *where);

/* The shortest striped message that takes the lanes: cfg.p2p_min, and at 0
 * (automatic, the default) WSP_P2P_MIN_DEFAULT; the collectives' transport
 * then chooses its own (wsp__xport_threshold). */
static inline size_t wsp__p2p_min(const wsp_config_t *c) {
  return c->p2p_min ? c->p2p_min : WSP_P2P_MIN_DEFAULT;
}

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

/* ---- the agreement (src/core/agree.c) ----
 * Collective over comm->mpi, and the one way the library agrees: every rank
 * brings its own failure (status, already recorded with wsp__fail, or
 * WSP_OK) and, when `compare` is set, a fingerprint of what must be equal
 * on every rank; every rank that answered leaves with the same verdict, in
 * this order: a rank did not answer within the time limit (WSP_ERR_TIMEOUT
 * naming it; the communicator is unusable from then on); this rank failed
 * (its status; status_msg, when given, recorded again as its message);
 * another rank failed (WSP_ERR_REMOTE naming it and its status); the
 * fingerprints differ (differ_status, "<what>: <differ>"). */
typedef struct wsp__agree {
  const char *what; /* the step, as messages name it: "wsp_shuffle_open" */
  int status;
  const char *status_msg;
  uint64_t fp;
  int compare;
  int differ_status;
  const char *differ;
} wsp__agree_t;
int wsp__agree(const wsp_comm_t *comm, const wsp__agree_t *a);
/* The agreement on a local allocation failure (`failed`): WSP_OK when no
 * rank had one; otherwise "<what>: out of memory" (WSP_ERR_NOMEM) on the
 * rank that failed, WSP_ERR_REMOTE naming it on the others. */
int wsp__agree_alloc(const wsp_comm_t *comm, int failed, const char *what);

/* ---- time limits (src/core/timeout.c, docs/faults.md) ---- */
/* At the start of every public call on comm: records fn as the operation a
 * timeout names, and fails with WSP_ERR_TIMEOUT when an earlier timeout
 * made the communicator unusable. */
int wsp__usable(const wsp_comm_t *comm, const char *fn);
/* Remembers which rank a request talks to (peer; WSP__PEER_ALL for a
 * collective of the whole communicator) and whether it receives, so that a
 * timeout can name the ranks it waited for and cancel its receives. Called
 * by the one place that posts messages (p2p.c) and by the waits for MPI's
 * non-blocking collectives; a thread-local table, overwritten as it goes. */
#define WSP__PEER_ALL (-2)
void wsp__req_note(MPI_Request req, int peer, int is_recv);
/* A wait on n requests made no progress for cfg.timeout: names the ranks of
 * the pending ones (`what` says what was awaited), cancels their receives,
 * lets go of them (the entries become MPI_REQUEST_NULL, so that the
 * caller's clean-up does not wait again), marks the communicator's owner
 * unusable, and returns WSP_ERR_TIMEOUT. */
int wsp__timeout(const wsp_comm_t *comm, int n, MPI_Request *reqs, const char *what);
/* The clean-up after a failure rc (already recorded) waited for the failed
 * step's transfers (wsp__abandon), and none completed for cfg.timeout:
 * lets go of them (the receives among them were cancelled), marks the
 * communicator's owner unusable, adds the ranks it waited for to the
 * recorded message, and returns rc. */
int wsp__timeout_abandon(const wsp_comm_t *comm, int rc, int nrecv, MPI_Request *recvs,
                         int nsend, MPI_Request *sends);
/* The same for a polling loop that knows whom it waits for: peers[0..npeers)
 * (npeers < 0: any rank). Lets go of no request. */
int wsp__timeout_peers(const wsp_comm_t *comm, const int *peers, int npeers,
                       const char *what);
/* rc, or, once a lane of the collectives' transport has failed
 * (wsp_comm_t.lane_fault), WSP_ERR_CONN naming it, with the owner marked
 * unusable. All three above report such a failure this way instead of a
 * timeout, and so does wsp__mpi_fail. */
int wsp__lane_failure(const wsp_comm_t *comm, int rc);

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
/* Reads environment variable `var` as a size (K/M/G suffixes, powers of
 * two) in [lo, hi] into *out; unset or empty leaves *out alone. On a bad
 * value returns WSP_ERR_CONFIG naming the variable. */
int wsp__env_size(const char *var, size_t lo, size_t hi, size_t *out);
/* The same for a count, a flag or a time (digits only, no suffix). */
int wsp__env_count(const char *var, size_t lo, size_t hi, size_t *out);
/* WSP_P2P_PROBE_FIGURES (a testing aid, docs/env.md): 1 with out = one
 * lane's rate, all lanes' rate (bytes/s, above 0), a round trip (s,
 * >= 0), the share of segments lost ([0, 1), 0 when not given) and
 * whether one lane was in slow start (0 or 1, 0 when not given); 0 when
 * unset (out untouched); WSP_ERR_CONFIG naming it when bad. */
int wsp__env_probe_figures(double out[5]);
/* A fingerprint of the fields that must agree on every rank. */
uint64_t wsp__config_fingerprint(const wsp_config_t *cfg);
/* Checks a configuration passed in by the user against the same bounds as
 * the WSP_* parser; WSP_ERR_ARG naming the field. */
int wsp__config_check(const wsp_config_t *c);
/* FNV-1a (64 bits) of n bytes, continuing from h (WSP__FNV_INIT to start):
 * the one hash behind every fingerprint compared across ranks and the
 * host names of the node map. */
#define WSP__FNV_INIT 1469598103934665603ULL
uint64_t wsp__fnv(uint64_t h, const void *p, size_t n);

/* ---- polling without burning a core ----
 * A loop that polls MPI calls wsp__backoff_idle() after each pass that made
 * no progress and wsp__backoff_reset() after one that did. Idle passes first
 * spin, then yield the core, then sleep 1, 2, 4, ... us up to a cap: 50 us,
 * or for a bulk transfer expected to take `expect_seconds`, up to 1/8 of
 * that (wsp__backoff_init_bulk, which also keeps yielding until a short
 * expected wait should be over); never more than cfg.poll_max_sleep_us
 * (src/core/backoff.c). */
typedef struct wsp__backoff {
  unsigned idle;     /* idle passes since the last progress */
  unsigned sleep_us; /* the next sleep */
  unsigned cap_us;
  /* Idle passes that spin, then that yield, before the first sleep. Init
   * sets the library's defaults; a loop that waits on long transfers (the
   * shuffle) lowers them. */
  unsigned spin_passes, yield_passes;
  /* wsp__now() until which an idle pass yields instead of sleeping (0:
   * none): set by wsp__backoff_init_bulk for short expected waits. */
  double poll_until;
  /* The time limit: seconds an idle stretch may last (0: none; init sets
   * cfg.timeout, init_bulk adds the expected transfer time), and when the
   * current stretch began (0: not yet timed; reset clears it). */
  double timeout, idle_since;
  /* The lanes an idle pass drives (wsp_comm_t.lanes of the owner), so that
   * every polling loop of the library keeps them moving; NULL: none. */
  struct wsp_comm *lanes;
  int (*drive)(struct wsp_comm *lanes, double seconds);
  /* The owner's lane_fault.failed: set, every idle pass ends the wait. */
  const int *lane_failed;
} wsp__backoff_t;

void wsp__backoff_init(wsp__backoff_t *b, const wsp_comm_t *comm);
/* Sets the cap for waits expected to take `expect_seconds` (as
 * wsp__backoff_init_bulk) without restarting the back-off. */
void wsp__backoff_expect(wsp__backoff_t *b, const wsp_comm_t *comm,
                         double expect_seconds);
void wsp__backoff_init_bulk(wsp__backoff_t *b, const wsp_comm_t *comm,
                            double expect_seconds);
void wsp__backoff_reset(wsp__backoff_t *b);
/* The library's one clock, in seconds: monotonic, and simulated under
 * SimGrid (the clock of the waits, the time limits and the lanes). */
double wsp__now(void);
/* One idle pass. Returns nonzero, without waiting, once the passes since
 * the last progress have lasted longer than b->timeout: the caller gives up
 * with wsp__timeout or wsp__timeout_peers. */
int wsp__backoff_idle(wsp__backoff_t *b);
/* Sleeps s seconds (nothing when s <= 0); simulated time under SimGrid. */
void wsp__sleep_seconds(double s);
#ifdef WSP_SIMGRID
/* The simulated seconds of the next idle pass, starting at simulated time
 * `now`, with the back-off's state advanced past it: what wsp__backoff_idle
 * sleeps, for the waits that replay the schedule (wsp__waitall). */
double wsp__backoff_sim_pass(wsp__backoff_t *b, double now);
#endif

/* ---- non-blocking sum of a few counters (src/core/sum.c) ----
 * Every rank starts one with the same tag (no other traffic may use that
 * tag on the private communicator meanwhile) and polls wsp__sum_test until
 * done; s->val then holds the sums. */
#define WSP__SUM_MAX 4
typedef struct wsp__sum {
  const wsp_comm_t *comm;
  int tag, n, step, nsteps, started, nreq;
  uint64_t val[WSP__SUM_MAX], in[WSP__SUM_MAX];
  MPI_Request req[2];
} wsp__sum_t;

int wsp__sum_start(wsp__sum_t *s, const wsp_comm_t *comm, int tag,
                   const uint64_t *v, int n);
int wsp__sum_test(wsp__sum_t *s, int *done);
int wsp__sum_wait(wsp__sum_t *s);

/* ---- sites (src/core/sites.c; the lanes between them: src/p2p/wan.c,
 * declared in src/p2p/striped_internal.h) ---- */
/* Checks the syntax of a WSP_SITES value (cfg.sites); WSP_ERR_CONFIG with
 * a message (wsp__fail_quiet) saying what is wrong. NULL is valid. */
int wsp__sites_syntax(const char *spec);
/* Parses the list after "ranks:" for a communicator of p ranks into
 * site_of (the sites in the order the list gives them); the number of
 * sites, or -1 with a message (wsp__fail_quiet) when a rank is out of
 * range, listed twice or missing. */
int wsp__sites_parse_ranks(const char *list, int p, int *site_of);
/* The site (in the list's order) whose patterns match host, among the list
 * after "hosts:"; -1 when none does. */
int wsp__sites_match_host(const char *list, const char *host);
/* Collective (wsp_comm_create, after the topology): sets comm->sites from
 * cfg.sites; the same outcome on every rank. */
int wsp__sites_create(wsp_comm_t *comm);
/* Sets the sites from a map's groups (rank r's site is group[node_of[r]];
 * group NULL drops map-made sites) when cfg.sites asks for the map's
 * groups. Local: every rank has the same map. */
void wsp__sites_from_map(wsp_comm_t *comm, const int *node_of, const int *group);
void wsp__sites_free(wsp_comm_t *comm);
/* The most ranks of one site that send to another site in one step of the
 * exchange schedules over p ranks folded to a power of two
 * (src/patterns/reduce_sched.h, no rank kept): with d > 0 the step where
 * folded ranks nr and nr ^ d swap; with d = 0 the fold, where a pair's
 * two members send to each other in turn (both are counted). Pure. */
int wsp__sites_cross(const wsp__sites_t *st, int p, int d);
/* The most ranks of one site whose message goes to another site when every
 * rank r sends to (r - d) mod p, 0 < d < p. Pure. */
int wsp__sites_shift(const wsp__sites_t *st, int p, int d);
/* Connections between two sites for this communicator: cfg.wan_connections
 * when set, else the link's capacity over one connection's
 * (beta_wan / beta_wan_link, rounded up past a quarter), else the smallest
 * site; within [1, smallest site]. 0 without sites. The same on every
 * rank (the model and the configuration are). */
int wsp__sites_conns(const wsp_comm_t *comm);
/* This rank's site as a wsp_comm_t (ranks in rank order, the parent's
 * configuration and model, nodes of one rank each), made on first use.
 * Collective over comm: every rank of comm calls it in the same call (the
 * algorithms that need it do). NULL with *rc set, alike on every rank,
 * after a failure; after a timeout (its waits obey the limit), on the
 * ranks that waited. */
wsp_comm_t *wsp__sites_comm(wsp_comm_t *comm, int *rc);

/* A wsp_comm_t around an existing communicator, taken over (freed with
 * it): the parent's configuration without forced algorithms, rules or
 * map, and the parent's model (topo.c). NULL on allocation failure. */
wsp_comm_t *wsp__comm_wrap(const wsp_comm_t *parent, MPI_Comm mpi);
void wsp__comm_unwrap(wsp_comm_t **w);
/* MPI_Comm_dup of comm->mpi into *out, as MPI_Comm_idup waited for under
 * the time limit when there is one (topo.c); *out is MPI_COMM_NULL after a
 * failure. Collective over comm. */
int wsp__comm_dup(const wsp_comm_t *comm, MPI_Comm *out);

/* ---- node topology (src/core/topo.c) ----
 * Collective over comm (after its private communicator exists): finds the
 * nodes by comm->cfg.node_split and builds the sub-communicators. */
int wsp__topo_create(wsp_comm_t *comm);
/* Gives the sub-communicators their part of the model (after calibration). */
void wsp__topo_set_models(wsp_comm_t *comm);
/* The model inside a node: m's node figures as alpha, beta and beta_x,
 * its eager limit inside a node, a gap no longer than that alpha, and no
 * lanes (nothing inside a node takes them). The node communicator's
 * model, and what the hierarchical algorithms price their node steps
 * with. */
wsp_model_t wsp__model_node(const wsp_model_t *m);
/* Frees the sub-communicators (collective over comm). */
int wsp__topo_free(wsp_comm_t *comm);

#endif
