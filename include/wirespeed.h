/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * wirespeed — network-speed communication on top of any MPI-3 library.
 *
 * This is the one public header. Its conventions, which every function
 * below follows:
 *
 * Names.     wsp_<object>_<verb>: the object first, then what is done to it
 *            (wsp_comm_create, wsp_netmap_probe, wsp_striped_send). Types
 *            end in _t, constants are WSP_<OBJECT>_<NAME>; names with two
 *            underscores (wsp__, WSP__) are internal and not for users.
 * Status.    Every function returns an int status: WSP_OK (0) or a negative
 *            WSP_ERR_* code (one table below). A failed call leaves a message
 *            naming the offending argument or MPI call in wsp_last_error()
 *            of the calling thread, and starts no communication when the
 *            error is in its arguments. The exceptions are the lookups that
 *            return a name or a table row (NULL when there is none).
 * Outputs.   Results come back through pointer arguments, written only on
 *            success; an output handle is set to NULL on failure.
 * Ownership. What the library allocates, the caller frees with the matching
 *            wsp_<object>_free, which takes the address of what it frees,
 *            resets it (a handle to NULL, a structure to zeros), returns a
 *            status and accepts an already freed one. The library never
 *            keeps a pointer to a caller's buffer beyond the call, except a
 *            nonblocking call's buffer until the request completes.
 * Settings.  A configuration structure starts from its ..._config_init
 *            (the defaults), is changed field by field, and takes the WSP_*
 *            environment on top from ..._config_from_env where there is one
 *            (a bad variable leaves the structure untouched). Passing NULL
 *            instead means the defaults, plus the environment where the
 *            object reads one.
 * Auto.      Wherever an algorithm is chosen, WSP_ALG_AUTO (-1) lets the
 *            library choose; algorithms are numbered from 0 in their table.
 * Threads.   One wsp_comm_t (and everything made on it) is used by one
 *            thread at a time; different communicators may be used from
 *            different threads when MPI provides MPI_THREAD_MULTIPLE. The
 *            table lookups and wsp_last_error are safe from any thread.
 * Traffic.   Internal traffic runs on a duplicate of the user's
 *            communicator, never on the user's communicator itself.
 *
 * Names changed since 0.1.0 keep their old spelling for one release as
 * deprecated aliases at the end of this header (CHANGELOG.md lists them).
 */
#ifndef WIRESPEED_H
#define WIRESPEED_H

#include <stddef.h>
#include <stdint.h>
#include <mpi.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What the shared library exports: exactly the functions declared here
 * (it is built with hidden visibility; the test install.exports checks). */
#if defined(__GNUC__) && __GNUC__ >= 4
#define WSP_API __attribute__((visibility("default")))
#else
#define WSP_API
#endif

/* The version, written here and nowhere else: CMake, the Python package
 * and every tool's --version read it from these three lines. */
#define WSP_VERSION_MAJOR 0
#define WSP_VERSION_MINOR 2
#define WSP_VERSION_PATCH 0
#define WSP__VERSION_STR(x) #x
#define WSP__VERSION_XSTR(x) WSP__VERSION_STR(x)
#define WSP_VERSION_STRING                                                                         \
  WSP__VERSION_XSTR(WSP_VERSION_MAJOR)                                                             \
  "." WSP__VERSION_XSTR(WSP_VERSION_MINOR) "." WSP__VERSION_XSTR(WSP_VERSION_PATCH)

/* ------------------------------------------------------------------------
 * Status codes. One table; wsp_strerror() and wsp_err_name() are built
 * from it, so a new code needs exactly one new line here.
 * ---------------------------------------------------------------------- */
#define WSP_STATUS_MAP(XX)                                                     \
  XX(OK, 0, "success")                                                         \
  XX(ERR_ARG, -1, "invalid argument")                                          \
  XX(ERR_NOMEM, -2, "out of memory")                                           \
  XX(ERR_MPI, -3, "an MPI call failed")                                        \
  XX(ERR_CONFIG, -4, "invalid configuration")                                  \
  XX(ERR_UNSUPPORTED, -5, "operation not supported")                           \
  XX(ERR_REMOTE, -6,                                                           \
     "another rank failed this collective operation; it was abandoned on "    \
     "every rank")                                                             \
  XX(ERR_INTERNAL, -7, "internal error (a bug in wirespeed)")                 \
  XX(ERR_HANDLER, -8, "a user handler (callback) returned an error")          \
  XX(ERR_CONN, -9, "a connection to another rank failed")                    \
  XX(ERR_MISMATCH, -10,                                                        \
     "the ranks passed different arguments to a collective (WSP_CHECK)")       \
  XX(ERR_TIMEOUT, -11,                                                         \
     "a wait made no progress for WSP_TIMEOUT seconds; the communicator is "  \
     "unusable")                                                               \
  XX(ERR_AGAIN, -12,                                                           \
     "no room now, and the caller cannot wait for it: try again later")

typedef enum wsp_status {
#define WSP__STATUS_ENUM(name, value, text) WSP_##name = (value),
  WSP_STATUS_MAP(WSP__STATUS_ENUM)
#undef WSP__STATUS_ENUM
} wsp_status_t;

/* Human-readable text for a status code ("invalid argument"). */
WSP_API const char *wsp_strerror(int status);
/* The code's name ("WSP_ERR_ARG"); "WSP_ERR_UNKNOWN" for other values. */
WSP_API const char *wsp_err_name(int status);
/* Details of the last failure on the calling thread, e.g.
 * "wsp_sparse_exchange: sends[3].peer = 17 is out of range [0, 16)". */
WSP_API const char *wsp_last_error(void);
/* Parses a rate into bytes per second: a number > 0 with an optional unit,
 * in any case. Bytes per second: none, "B", "KB", "MB", "GB" (decimal, as
 * rates are quoted: 1 MB/s = 10^6 B/s); bits per second in tc's syntax:
 * "bit", "kbit", "mbit", "gbit". "25mbit" is 3125000. Returns WSP_OK, or
 * WSP_ERR_ARG with a message naming the text when s or bytes_per_s is NULL
 * or s is not such a rate; *bytes_per_s is only written on success. Used by
 * WSP_SHUFFLE_RATE and wsp-bench's rate options, so both read the same. */
WSP_API int wsp_parse_rate(const char *s, double *bytes_per_s);
/* Parses a size in bytes: digits with an optional unit, in any case: none
 * or "B"; "K", "KB", "KiB"; "M", "MB", "MiB"; "G", "GB", "GiB", all powers
 * of two (as message sizes are written: 4K is 4096; unlike rates, where
 * "KB" is 1000). No sign, blanks or fractions. Returns WSP_OK, or
 * WSP_ERR_ARG with a message naming the text when s or bytes is NULL, s is
 * not such a size, or it does not fit in size_t; *bytes is only written on
 * success. Used by every WSP_* size variable and wsp-bench's size options,
 * so both read the same. */
WSP_API int wsp_parse_size(const char *s, size_t *bytes);
/* The MPI error code behind the last WSP_ERR_MPI on this thread
 * (MPI_SUCCESS if there was none). */
WSP_API int wsp_last_mpi_error(void);

/* ------------------------------------------------------------------------
 * Configuration. wsp_config_init() sets defaults; wsp_config_from_env()
 * applies WSP_* environment variables (see docs/env.md). A configuration
 * is copied into each wsp_comm_t: there are no process-global settings.
 * ---------------------------------------------------------------------- */
typedef enum wsp_log_level {
  WSP_LOG_OFF = 0,
  WSP_LOG_ERROR = 1,
  WSP_LOG_WARN = 2,
  WSP_LOG_INFO = 3,
  WSP_LOG_DEBUG = 4,
  WSP_LOG_TRACE = 5
} wsp_log_level_t;

/* The "algorithm" that lets the library choose: the cost model and rules
 * for collectives, measurement for the sparse exchange. Algorithms are
 * numbered from 0 in their tables. */
#define WSP_ALG_AUTO (-1)

/* Sparse-exchange algorithms: XX(ID, name, description, cost), one list
 * from which come this enum (WSP_SPARSE_<ID>, in list order from 0), the
 * algorithm table (wsp_sparse_alg_info, wsp_sparse_alg_from_name,
 * WSP_SPARSE_ALGORITHM, wsp-info) and auto's candidates (all of them).
 * In the costs, k is the number of peers and m the bytes the busiest rank
 * sends. */
/* clang-format off */
#define WSP_SPARSE_ALG_MAP(XX)                                                 \
  XX(NBX, nbx,                                                                 \
     "nonblocking consensus: MPI_Issend to each peer, MPI_Iprobe for "         \
     "arrivals, a non-blocking sum (in place of MPI_Ibarrier) entered once "   \
     "all own sends are matched (Hoefler et al. 2010)",                        \
     "k.(2.alpha) + lg(p).alpha + m.beta")                                     \
  XX(PEX, pex,                                                                 \
     "personalized exchange: MPI_Reduce_scatter_block of per-destination "     \
     "counts, then MPI_Isend and exactly that many MPI_Iprobe + MPI_Irecv",    \
     "lg(p).alpha + 8.p.beta + k.alpha + m.beta")                              \
  XX(ALLTOALLV, alltoallv,                                                     \
     "MPI_Alltoall of sizes then MPI_Alltoallv of the packed data (the usual " \
     "dense approach), with a one-integer MPI_Allreduce between them so that " \
     "a rank without memory for what it receives stops every rank",           \
     "(p-1).alpha + 24.p.beta + lg(p).alpha + alltoallv(m)")

typedef enum wsp_sparse_alg {
  /* Measures the algorithms on the job's own rounds and runs the fastest
   * (docs/sparse.md); wsp_sparse_alg_info describes it too. */
  WSP_SPARSE_AUTO = WSP_ALG_AUTO,
#define WSP__SPARSE_ENUM(id, name, desc, cost) WSP_SPARSE_##id,
  WSP_SPARSE_ALG_MAP(WSP__SPARSE_ENUM)
#undef WSP__SPARSE_ENUM
  WSP_SPARSE_ALG_COUNT /* the algorithms, auto not counted */
} wsp_sparse_alg_t;
/* clang-format on */

/* The collectives (see below). */
typedef enum wsp_coll {
  WSP_COLL_BCAST = 0,
  WSP_COLL_REDUCE = 1,
  WSP_COLL_ALLREDUCE = 2,
  WSP_COLL_GATHER = 3,
  WSP_COLL_SCATTER = 4,
  WSP_COLL_ALLGATHER = 5,
  WSP_COLL_ALLTOALL = 6,
  WSP_COLL_ALLTOALLV = 7,
  WSP_COLL_ALLGATHERV = 8,
  /* wsp_reduce_scatter and wsp_reduce_scatter_block (equal counts). */
  WSP_COLL_REDUCE_SCATTER = 9,
  WSP_COLL_COUNT = 10
} wsp_coll_t;

/* What carries the collectives' transfers between nodes (WSP_TRANSPORT;
 * docs/p2p.md, "Under the collectives"). */
typedef enum wsp_transport {
  /* At the first collective that could use lanes, a short measurement
   * between pairs of nodes decides, alike on every rank, whether transfers
   * between nodes take lanes or all stay on MPI ("auto"). */
  WSP_TRANSPORT_AUTO = -1,
  /* Every transfer through MPI ("mpi"). */
  WSP_TRANSPORT_MPI = 0,
  /* Transfers of at least WSP_P2P_MIN bytes between nodes go to the striped
   * engine, whose per-pair probe (or p2p_lanes) chooses lanes or MPI
   * ("lanes"). */
  WSP_TRANSPORT_LANES = 1
} wsp_transport_t;

/* How wirespeed learns which ranks share a node (WSP_NODES). */
typedef enum wsp_node_split {
  /* Ranks with the same MPI_Get_processor_name (host name) ("host"). */
  WSP_NODES_HOST = 0,
  /* Blocks of node_split_n consecutive ranks form a node ("block:K"). */
  WSP_NODES_BLOCK = 1,
  /* Rank r is on node r mod node_split_n ("cyclic:N"). */
  WSP_NODES_CYCLIC = 2
} wsp_node_split_t;

typedef struct wsp_config {
  wsp_log_level_t log_level;  /* WSP_LOG; default warn */
  wsp_sparse_alg_t sparse_alg; /* WSP_SPARSE_ALGORITHM; default auto */
  /* auto: rounds run with the algorithm auto measured fastest before it
   * measures again (doubling while the winner stays the same).
   * WSP_SPARSE_AUTO_INTERVAL; default 64. */
  uint64_t sparse_auto_interval;
  /* Longest sleep (microseconds) of a polling loop that finds nothing to
   * do. Sleeps double from 1 to 50 us; a wait for a bulk transfer that the
   * model expects to take T sleeps up to T/8, never more than this. 0
   * means yield only. WSP_POLL_MAX_SLEEP_US; default 1000. */
  unsigned poll_max_sleep_us;
  /* Messages longer than this many bytes are described to MPI with a
   * chunked derived datatype so that counts never overflow an int.
   * Default INT_MAX; lower values (WSP_BIG_MESSAGE) exist to test that path
   * with small buffers. Must be at least 1024. */
  size_t big_message;
  /* Collectives: the algorithm of each collective, by table index
   * (wsp_coll_alg_from_name), or WSP_ALG_AUTO to let the cost model and
   * the rules file choose. WSP_<COLL>_ALGORITHM=name|auto; default auto. */
  int coll_alg[WSP_COLL_COUNT];
  /* The cost model's parameters: latency (s), inverse bandwidth (s/byte)
   * and reduction cost (s/byte). All three > 0 skip the calibration that
   * wsp_comm_create otherwise runs.
   * WSP_MODEL="alpha,beta,gamma[,beta_x[,gap]]". */
  double model_alpha, model_beta, model_gamma;
  /* Exchange inverse bandwidth (see wsp_model_t.beta_x); 0 means "the same
   * as model_beta" when the model is configured. 4th value of WSP_MODEL. */
  double model_beta_x;
  /* Per-message gap (see wsp_model_t.gap); 0 means "the same as
   * model_alpha" (no overlap of messages assumed) when the model is
   * configured. 5th value of WSP_MODEL. */
  double model_gap;
  /* A JSON rules file overriding the model by ranges of p and size
   * (docs/coll.md); NULL for none. Read by wsp_comm_create only, so the
   * string need not outlive that call. WSP_RULES_FILE. */
  const char *rules_file;
  /* A network map file (wsp-probe, wsp_netmap_save) to load and attach
   * (wsp_netmap_load, wsp_comm_set_netmap); NULL for none. Read by
   * wsp_comm_create only. WSP_NETMAP. */
  const char *netmap_file;
  /* Segment size (bytes) of pipelined algorithms; 0 lets the model pick
   * one per call. WSP_COLL_SEGMENT. */
  size_t coll_segment;
  /* Which ranks share a node, for the node-aware algorithms (allreduce
   * "hier") and the node part of the model. The default groups ranks by
   * host name; "block:K" and "cyclic:N" impose a grouping (tests on one
   * machine; jobs whose MPI does not know its nodes). WSP_NODES=
   * host|block:K|cyclic:N; default host. */
  wsp_node_split_t node_split;
  int node_split_n;
  /* Striped point-to-point (wsp_striped_send; docs/p2p.md). Lanes of a
   * striped message: 0 lets a short probe of each pair choose (auto);
   * 1..64 forces that many, with no probe. WSP_P2P_LANES; default 0. */
  unsigned p2p_lanes;
  /* Lanes auto opens and probes per pair, 2..64. WSP_P2P_MAX_LANES;
   * default 16. */
  unsigned p2p_max_lanes;
  /* Messages shorter than this many bytes always go through MPI, and do
   * not set a pair up. 0 (automatic, the default): WSP_P2P_MIN_DEFAULT,
   * and under the collectives, once auto's own probe finds that lanes pay,
   * 4 KiB per lane up to 64 KiB (or the probe's larger threshold; a map's
   * verdict keeps the map's; docs/p2p.md). WSP_P2P_MIN. */
  size_t p2p_min;
  /* Chunk size (bytes) of striped messages, and the unsent backlog under
   * which a lane takes the next chunk; 0 lets each send choose.
   * WSP_P2P_CHUNK; default 0. */
  size_t p2p_chunk;
  /* How long each of the probe's two phases streams, in milliseconds.
   * WSP_P2P_PROBE_MS; default 300. */
  unsigned p2p_probe_ms;
  /* Comma-separated interface names whose IPv4 addresses a rank offers
   * for lanes; NULL offers every interface that is up (loopback last).
   * Copied by wsp_comm_create. WSP_P2P_IF. */
  const char *p2p_interfaces;
  /* 1: every frame on the lanes is sealed with AES-256-GCM under the
   * pair's keys (privacy and integrity across untrusted networks); 0:
   * lanes are authenticated but travel in clear. Both ends must agree.
   * WSP_P2P_ENCRYPT=0|1; default 0 (docs/p2p.md, "Security"). */
  int p2p_encrypt;
  /* What carries the collectives' transfers between nodes: MPI, or the
   * pairs' lanes where they pay. WSP_TRANSPORT=auto|mpi|lanes; default
   * auto (docs/p2p.md, "Under the collectives"). */
  wsp_transport_t transport;
  /* Which ranks form sites (clusters, data centres, racks behind one
   * uplink), for the multi-site collectives (docs/sites.md). NULL or
   * "auto": the groups of the network map when one is attached, else none;
   * "none"; "map" (the map's groups, none without a map);
   * "ranks:0-3;4-7" (sites separated by ';', ranks and ranges by ',');
   * "hosts:a*,b1;c*" (host-name patterns, fnmatch(3)). Copied by
   * wsp_comm_create. WSP_SITES. */
  const char *sites;
  /* Connections each pair of sites uses at once in a multi-site
   * collective; 0 lets the model choose from the measured WAN and NIC
   * rates (docs/sites.md). WSP_WAN_CONNECTIONS; default 0. */
  unsigned wan_connections;
  /* Lanes (TCP connections of the striped point-to-point) each of those
   * connections is made of, for the crossings of the multi-site bcast and
   * allreduce: 0 lets the model choose (more than one where one
   * connection between sites is slower than a NIC), 1 sends every
   * crossing as one MPI message, 2..64 forces that many. Never more than
   * one under SimGrid. WSP_WAN_LANES; default 0. */
  unsigned wan_lanes;
  /* 1: before each collective the ranks compare its count, type
   * signature, op and root (one small allreduce), and where they differ
   * every rank returns WSP_ERR_MISMATCH naming the first rank that differs and
   * the argument, instead of the undefined behaviour (a hang, an overrun)
   * that follows in MPI. WSP_CHECK=0|1; default 0. */
  int check;
  /* Seconds a wait inside wirespeed may go without progress before the
   * call returns WSP_ERR_TIMEOUT, naming the operation and the ranks it
   * was waiting for; the communicator is unusable from then on (every
   * later call fails at once). 0 waits forever, as MPI does. Whether it is
   * 0 must agree on every rank: with a limit, MPI's own collectives that
   * wirespeed calls run as their non-blocking forms so that their waits
   * can end (docs/faults.md). WSP_TIMEOUT=seconds ("30", "2.5", "500ms");
   * default 0. */
  double timeout;
  /* What the communicator ran, reported when it is freed (docs/report.md):
   * NULL (or "0") for nothing; "1" for a table on stderr from rank 0; any
   * other text is a file rank 0 writes the same figures to as one JSON
   * object. Whether it is on must agree on every rank (wsp_comm_free then
   * gathers the figures with one reduction). Copied by wsp_comm_create.
   * WSP_REPORT; default unset. */
  const char *report;
  /* The MPI's eager limit between nodes (bytes up to which a send completes
   * before its receive is posted), within which pipelined algorithms keep
   * their segments (wsp_model_t.eager): WSP_EAGER_LIMIT_AUTO (0) measures
   * it when the communicator is created, with a few sends between two
   * nodes (docs/coll.md, "The eager limit"); WSP_EAGER_LIMIT_NONE leaves it
   * unknown (no measurement); any other value is taken as it is. An
   * attached network map's figure replaces it. Must agree on every rank.
   * WSP_EAGER_LIMIT=auto|none|SIZE; default auto. */
  size_t eager_limit;
} wsp_config_t;

#define WSP_EAGER_LIMIT_AUTO ((size_t)0)
#define WSP_EAGER_LIMIT_NONE ((size_t)-1)

WSP_API int wsp_config_init(wsp_config_t *cfg);
WSP_API int wsp_config_from_env(wsp_config_t *cfg);

/* ------------------------------------------------------------------------
 * Communicator. wsp_comm_create is collective over `comm`: it duplicates
 * it (wirespeed's traffic never touches `comm` itself) and checks that every
 * rank got the same configuration. cfg == NULL means defaults + environment.
 * A wsp_comm_t must not be used by two threads at the same time.
 * ---------------------------------------------------------------------- */
typedef struct wsp_comm wsp_comm_t;

WSP_API int wsp_comm_create(MPI_Comm comm, const wsp_config_t *cfg, wsp_comm_t **out);
/* Collective. Frees *comm and sets it to NULL; NULL is accepted. */
WSP_API int wsp_comm_free(wsp_comm_t **comm);
WSP_API int wsp_comm_rank(const wsp_comm_t *comm, int *rank);
WSP_API int wsp_comm_size(const wsp_comm_t *comm, int *size);
WSP_API int wsp_comm_config(const wsp_comm_t *comm, wsp_config_t *cfg);

/* ------------------------------------------------------------------------
 * Dynamic sparse data exchange.
 *
 * Each rank passes the messages it sends (at most one per destination;
 * zero-length and self messages are allowed) and gets back every message
 * sent to it, without knowing in advance who sends. Collective over the
 * communicator; every rank must call it, possibly with nsends == 0.
 * Received messages are ordered by source rank.
 *
 * If any rank passes a bad argument, that rank returns WSP_ERR_ARG and every
 * other rank returns WSP_ERR_REMOTE; nobody hangs and nobody receives a
 * partial round.
 * ---------------------------------------------------------------------- */
typedef struct wsp_send {
  int peer;          /* destination rank in the communicator */
  const void *data;  /* may be NULL when bytes == 0 */
  size_t bytes;
} wsp_send_t;

typedef struct wsp_recv {
  int source;
  size_t bytes;
  void *data;  /* owned by the wsp_recvset_t; NULL when bytes == 0 */
} wsp_recv_t;

typedef struct wsp_recvset {
  size_t count;         /* number of messages received */
  wsp_recv_t *msgs;     /* count entries, ascending source */
  wsp_sparse_alg_t alg; /* the algorithm that ran (never AUTO) */
  void *wsp__storage;   /* internal: the memory behind msgs[].data */
} wsp_recvset_t;

/* Uses the communicator's configured algorithm (default auto). */
WSP_API int wsp_sparse_exchange(wsp_comm_t *comm, const wsp_send_t *sends,
                                size_t nsends, wsp_recvset_t *out);
/* Forces one algorithm; every rank must pass the same alg. */
WSP_API int wsp_sparse_exchange_alg(wsp_comm_t *comm, wsp_sparse_alg_t alg,
                                    const wsp_send_t *sends, size_t nsends,
                                    wsp_recvset_t *out);
/* Frees what a successful exchange returned and zeroes *set; NULL or an
 * already freed (zeroed) set is accepted. Returns WSP_OK. */
WSP_API int wsp_recvset_free(wsp_recvset_t *set);

/* Algorithm table, for tools and users. */
typedef struct wsp_alg_info {
  const char *name;  /* "nbx" */
  const char *desc;  /* one sentence */
  const char *cost;  /* alpha-beta cost formula, as text */
} wsp_alg_info_t;

/* Table row of one algorithm; auto's (WSP_SPARSE_AUTO) too. NULL when alg
 * is out of range. */
WSP_API const wsp_alg_info_t *wsp_sparse_alg_info(wsp_sparse_alg_t alg);
/* Accepts the table's names and "auto"; WSP_ERR_ARG (listing the valid
 * names in wsp_last_error) otherwise. */
WSP_API int wsp_sparse_alg_from_name(const char *name, wsp_sparse_alg_t *alg);

/* ------------------------------------------------------------------------
 * Collectives. MPI's signatures with size_t counts, on a wsp_comm_t.
 * Any datatype and any op that MPI_Reduce_local accepts (built-in or
 * user-defined; non-commutative ops give MPI's rank-order result);
 * MPI_IN_PLACE where MPI allows it; MPI_BOTTOM (a NULL buffer) with a type
 * of absolute addresses, as MPI takes it. Collective: every rank calls with
 * matching arguments, as in MPI. Arguments are checked before anything is
 * sent; a bad one gives WSP_ERR_ARG naming it. What wirespeed cannot handle
 * goes to the native MPI collective (on the private communicator), decided
 * from arguments every rank shares.
 * ---------------------------------------------------------------------- */

WSP_API int wsp_bcast(wsp_comm_t *comm, void *buf, size_t count, MPI_Datatype type,
                      int root);
WSP_API int wsp_reduce(wsp_comm_t *comm, const void *sendbuf, void *recvbuf,
                       size_t count, MPI_Datatype type, MPI_Op op, int root);
WSP_API int wsp_allreduce(wsp_comm_t *comm, const void *sendbuf, void *recvbuf,
                          size_t count, MPI_Datatype type, MPI_Op op);
WSP_API int wsp_gather(wsp_comm_t *comm, const void *sendbuf, size_t sendcount,
                       MPI_Datatype sendtype, void *recvbuf, size_t recvcount,
                       MPI_Datatype recvtype, int root);
WSP_API int wsp_scatter(wsp_comm_t *comm, const void *sendbuf, size_t sendcount,
                        MPI_Datatype sendtype, void *recvbuf, size_t recvcount,
                        MPI_Datatype recvtype, int root);
WSP_API int wsp_allgather(wsp_comm_t *comm, const void *sendbuf, size_t sendcount,
                          MPI_Datatype sendtype, void *recvbuf, size_t recvcount,
                          MPI_Datatype recvtype);
WSP_API int wsp_alltoall(wsp_comm_t *comm, const void *sendbuf, size_t sendcount,
                         MPI_Datatype sendtype, void *recvbuf, size_t recvcount,
                         MPI_Datatype recvtype);

/* The vector forms. Counts and displacements are per rank, in elements of
 * the type, like MPI's (displacements in units of the type's extent), as
 * size_t. A receive layout whose blocks overlap is refused (MPI calls it
 * erroneous). alltoallv: every rank knows only its own row and column, so
 * each rank paces its own sends; every receive is posted before any wait,
 * which makes any mix of the algorithms safe (docs/coll.md). */
WSP_API int wsp_alltoallv(wsp_comm_t *comm, const void *sendbuf, const size_t sendcounts[],
                          const size_t sdispls[], MPI_Datatype sendtype, void *recvbuf,
                          const size_t recvcounts[], const size_t rdispls[], MPI_Datatype recvtype);
WSP_API int wsp_allgatherv(wsp_comm_t *comm, const void *sendbuf, size_t sendcount,
                           MPI_Datatype sendtype, void *recvbuf, const size_t recvcounts[],
                           const size_t displs[], MPI_Datatype recvtype);
/* Rank i receives recvcounts[i] elements of the reduction, the part that
 * starts after the counts of ranks 0..i-1; sendbuf holds the sum of the
 * counts (MPI_IN_PLACE: recvbuf does). */
WSP_API int wsp_reduce_scatter(wsp_comm_t *comm, const void *sendbuf, void *recvbuf,
                               const size_t recvcounts[], MPI_Datatype type, MPI_Op op);
WSP_API int wsp_reduce_scatter_block(wsp_comm_t *comm, const void *sendbuf, void *recvbuf,
                                     size_t recvcount, MPI_Datatype type, MPI_Op op);

/* "bcast", "reduce", ...; NULL for an invalid value. */
WSP_API const char *wsp_coll_name(wsp_coll_t coll);
WSP_API int wsp_coll_from_name(const char *name, wsp_coll_t *coll);
/* Number of algorithms of a collective (index 0 is always "native"). */
WSP_API int wsp_coll_alg_count(wsp_coll_t coll);
/* Table row of one algorithm: name, description, cost formula; auto's
 * (WSP_ALG_AUTO) too. NULL when coll or alg is out of range. */
WSP_API const wsp_alg_info_t *wsp_coll_alg_info(wsp_coll_t coll, int alg);
/* The algorithm's preconditions as text, with the algorithm that runs
 * when they do not hold ("commutative op (else recursive_doubling)"); ""
 * when it has none. */
WSP_API const char *wsp_coll_alg_preconditions(wsp_coll_t coll, int alg);
/* Name -> index; "auto" gives WSP_ALG_AUTO. WSP_ERR_ARG (listing the valid
 * names in wsp_last_error) otherwise. */
WSP_API int wsp_coll_alg_from_name(wsp_coll_t coll, const char *name, int *alg);
/* Collective over comm (every rank passes the same values): runs `coll`
 * with algorithm `alg` (or WSP_ALG_AUTO) on this communicator from now on. */
WSP_API int wsp_coll_set_alg(wsp_comm_t *comm, wsp_coll_t coll, int alg);

/* Where the model's eager limits came from (wsp_model_t.eager_from). */
typedef enum wsp_eager_from {
  WSP_EAGER_FROM_NONE = 0,     /* not known (WSP_EAGER_LIMIT=none, one node) */
  WSP_EAGER_FROM_MEASURED = 1, /* measured by wsp_comm_create */
  WSP_EAGER_FROM_CONFIG = 2,   /* given (cfg.eager_limit, WSP_EAGER_LIMIT) */
  WSP_EAGER_FROM_MAP = 3       /* the attached network map's */
} wsp_eager_from_t;
/* "none", "measured", "config" or "map"; "unknown" for another value. */
WSP_API const char *wsp_eager_from_name(int from);

/* The α-β-γ cost model. */
typedef struct wsp_model {
  double alpha; /* seconds per message */
  double beta;  /* seconds per byte sent */
  double gamma; /* seconds per byte reduced */
  /* Seconds per byte when a rank sends and receives at the same time
   * (exchanges, rings, Bruck steps, the middle of a pipelined chain); the
   * calibration measures it with both ranks of a pair streaming at once.
   * On shaped TCP links it comes out a little above beta
   * (docs/results/coll.md, "The cost model's history"). */
  double beta_x;
  /* Latency and inverse bandwidth between two ranks of the same node
   * (shared memory), for the node-aware algorithms. Calibrated when some
   * node holds two ranks or more; otherwise, and when the model is
   * configured, equal to alpha and beta. */
  double alpha_node, beta_node;
  /* Seconds between two small messages a rank receives back to back
   * (LogGP's g): what each further message costs a root that has all its
   * receives (or sends) in flight at once, as linear gather and scatter
   * do, where the latencies overlap and only this per-message overhead
   * adds up. The calibration streams a window of small messages; when
   * the model is configured without it, equal to alpha. */
  double gap;
  int calibrated; /* 1 when measured by wsp_comm_create, 0 when configured */
  /* Bytes up to which the MPI sends eagerly (a send completes before its
   * receive is posted), between nodes and inside a node: the network map's
   * figures when one is attached (wsp_comm_set_netmap); else, between
   * nodes, what wsp_comm_create measured or was given (cfg.eager_limit),
   * and inside a node 0 (unknown).
   * Pipelined algorithms keep their segments within it (src/model/cost.c,
   * wsp__pipeline_seg, says when). */
  size_t eager, eager_node;
  /* Between sites (docs/sites.md): the latency of one message (s), the
   * inverse bandwidth of one connection (s/byte), and of the link between
   * two sites as a whole, all connections together (s/byte; 0 when not
   * known). Calibrated when the communicator has two sites or more;
   * otherwise alpha, beta and 0. */
  double alpha_wan, beta_wan, beta_wan_link;
  /* Bytes from which a transfer between nodes takes the lanes (the
   * collectives' transport, WSP_TRANSPORT; docs/p2p.md), 0 when none does.
   * Set when auto finds that lanes pay (alpha, beta and beta_x are then the
   * lanes': one more round trip per message, the rate of all lanes) and
   * when the lanes are forced (the rates stay MPI's); pipelined algorithms
   * keep their segments at or above it. */
  size_t lanes_min;
  /* Where eager and eager_node came from (wsp_eager_from_t). */
  int eager_from;
  /* Seconds a transfer over the lanes lasts beyond its bytes when the
   * next one waits for it (a step of a tree, of recursive halving or
   * doubling): the lanes' standing queue, which each drains at its own
   * cap, so the last bytes arrive on a few lanes while the link idles.
   * Pipelined algorithms pay it once, at their end. Measured with the
   * lanes when auto decides; 0 when no transfer takes the lanes or the
   * lanes were not measured (forced, or decided from a map). */
  double lanes_drain;
} wsp_model_t;

/* Which ranks share a node, as wirespeed sees it (WSP_NODES). */
typedef struct wsp_topology {
  int nodes;       /* number of nodes */
  int node;        /* this rank's node; nodes are numbered by lowest rank */
  int node_ranks;  /* ranks on this rank's node */
  int max_node_ranks; /* most ranks on one node */
  int blocks;      /* 1 if every node's ranks are consecutive ranks */
  /* Sites (WSP_SITES, or the network map's groups): how many (0 when the
   * communicator has none), this rank's site (numbered by lowest rank),
   * and the ranks on it. */
  int sites, site, site_ranks;
  /* Connections between every two sites that the multi-site algorithms
   * use at once (WSP_WAN_CONNECTIONS, or the model's choice); 0 without
   * sites. */
  int wan_connections;
  /* Lanes per connection for the crossings of the multi-site bcast and
   * allreduce (WSP_WAN_LANES, or the model's choice); 1 when they go
   * through MPI, 0 without sites. */
  int wan_lanes;
} wsp_topology_t;

WSP_API int wsp_comm_topology(const wsp_comm_t *comm, wsp_topology_t *topo);
/* The node of any rank of the communicator, numbered as wsp_topology_t
 * numbers them (by lowest rank): ranks with the same node share it.
 * WSP_ERR_ARG when comm or node is NULL or rank is not in [0, size). */
WSP_API int wsp_comm_node(const wsp_comm_t *comm, int rank, int *node);
/* The site of any rank, numbered as wsp_topology_t numbers them; -1 when
 * the communicator has no sites. WSP_ERR_ARG as wsp_comm_node. */
WSP_API int wsp_comm_site(const wsp_comm_t *comm, int rank, int *site);

WSP_API int wsp_comm_model(const wsp_comm_t *comm, wsp_model_t *model);
/* Predicted time (s) of `alg` for a message of `bytes` (for gather,
 * scatter, allgather and alltoall: the bytes of one rank's block) with a
 * commutative op or not. -1 when its preconditions do not hold. */
WSP_API int wsp_coll_predict(const wsp_comm_t *comm, wsp_coll_t coll, int alg,
                             size_t bytes, int commutative, double *seconds);
/* The algorithm auto would run for this size (rules file, then model). */
WSP_API int wsp_coll_select(const wsp_comm_t *comm, wsp_coll_t coll, size_t bytes,
                            int commutative, int *alg);

/* ------------------------------------------------------------------------
 * The network map (docs/netmap.md): for every pair of nodes the latency and
 * the bandwidth measured between them, the same inside every node of two
 * ranks or more, the message size at which the MPI switches from eager to
 * rendezvous inside nodes and between them, and groups of nodes that are
 * close to each other (racks, sites). wsp_netmap_probe measures it on a
 * communicator, collectively; it is saved and loaded as a versioned JSON
 * file, and a map measured for another job shape (ranks, node layout,
 * hosts) is refused. Nodes are those of wsp_comm_topology (WSP_NODES).
 * ---------------------------------------------------------------------- */
typedef struct wsp_netmap wsp_netmap_t;

typedef struct wsp_netmap_probe_config {
  /* Passes over every pair: each measures a round trip of 8 bytes and a
   * stream of stream_bytes once per pass; the latency is half the smallest
   * round trip, the bandwidth comes from the median stream. Default 5. */
  int reps;
  /* Bytes of one stream (8 messages back to back). Default 512K. */
  size_t stream_bytes;
  /* Stop passing over the pairs once another pass would take the probe
   * past this many seconds, or past this many bytes sent by one rank
   * (0: no budget). At least one pass is always made. */
  double budget_seconds;
  size_t budget_bytes;
  /* 1: also find the eager/rendezvous switch inside nodes and between
   * them (a send that completes before its receive is posted is eager).
   * Default 1. */
  int eager_limits;
  /* 1: also measure, per pair of nodes, one TCP flow's rate against
   * several flows' (the striped engine's probe, docs/p2p.md, between the
   * pair's lowest ranks), which the collectives' transport then reads
   * instead of measuring (WSP_TRANSPORT=auto). Costs a lane set-up and
   * 2 x WSP_P2P_PROBE_MS per round of pairs, about nodes - 1 rounds. Not
   * under SimGrid (no sockets: the figures stay unmeasured). Default 0. */
  int flows;
} wsp_netmap_probe_config_t;

typedef struct wsp_netmap_info {
  int p;       /* ranks */
  int nodes;   /* nodes */
  int groups;  /* groups of nodes (1 when the nodes are alike) */
  int reps;    /* passes made */
  /* Bytes up to which a send went eagerly (completed before its receive
   * was posted), inside a node and between nodes; 0 when not measured or
   * when no send did (SimGrid with smpi/send-is-detached-thresh:0). */
  size_t eager_intra, eager_inter;
  double seconds; /* what the probe took */
} wsp_netmap_info_t;

WSP_API int wsp_netmap_probe_config_init(wsp_netmap_probe_config_t *cfg);
/* Collective: measures comm's network. cfg == NULL: defaults. Every rank
 * passes the same configuration. */
WSP_API int wsp_netmap_probe(wsp_comm_t *comm, const wsp_netmap_probe_config_t *cfg,
                             wsp_netmap_t **out);
/* Writes the map as JSON to path (replacing it whole; one rank suffices). */
WSP_API int wsp_netmap_save(const wsp_netmap_t *map, const char *path);
/* Collective: rank 0 reads the file and broadcasts it, every rank parses
 * it and checks that it fits comm (ranks, node layout, hosts); every rank
 * returns the same status, WSP_ERR_CONFIG naming the file and the problem
 * when it does not. */
WSP_API int wsp_netmap_load(wsp_comm_t *comm, const char *path, wsp_netmap_t **out);
WSP_API int wsp_netmap_info(const wsp_netmap_t *map, wsp_netmap_info_t *info);
/* One-way latency (s) and inverse bandwidth (s/byte) between two ranks of
 * the map's communicator: their nodes' pair, or their node's own figures
 * when they share a node; 0 and 0 for a rank with itself. */
WSP_API int wsp_netmap_pair(const wsp_netmap_t *map, int a, int b, double *latency,
                            double *inv_bandwidth);
/* What the probe's flows (cfg.flows) measured between the nodes of ranks a
 * and b: one TCP flow's rate and the rate of k flows (bytes/s), and the
 * message size from which the flows paid (threshold; 0 when they did not).
 * All 0 when not measured, for a pair inside one node, and for a rank with
 * itself. */
WSP_API int wsp_netmap_flows(const wsp_netmap_t *map, int a, int b, double *rate_one,
                             double *rate_k, int *k, size_t *threshold);
/* The round trip (s) of the flows' TCP connections between the nodes of
 * ranks a and b, as the kernel measured it during the flows' probe (its
 * smallest); 0 where the flows were not measured or the kernel could not
 * say, inside one node, and for a rank with itself. */
WSP_API int wsp_netmap_rtt(const wsp_netmap_t *map, int a, int b, double *seconds);
/* The node and the group of a rank. */
WSP_API int wsp_netmap_node(const wsp_netmap_t *map, int rank, int *node, int *group);
/* Frees *map and sets it to NULL; NULL is accepted. */
WSP_API int wsp_netmap_free(wsp_netmap_t **map);
/* Collective: measures again the pairs of nodes of `rounds` rounds of the
 * probe's tournament (each node in at most one pair per round; about
 * nodes - 1 rounds cover every pair, and successive calls go on where the
 * last one stopped), four round trips (the fastest counts) and one stream
 * of 256 KiB per pair, and puts the new figures into map in place of the
 * old ones (so the map follows a network that changes), then groups the
 * nodes again. Every rank passes the same map, which must fit comm. To use
 * the new figures in a communicator's trees, attach it again
 * (wsp_comm_set_netmap). */
WSP_API int wsp_netmap_refresh(wsp_comm_t *comm, wsp_netmap_t *map, int rounds);
/* Collective: attaches map to comm, for the `aware` algorithms of bcast,
 * reduce, gather and scatter, which build their trees from it (auto then
 * considers them; docs/netmap.md). comm keeps what it needs: the map may
 * be freed afterwards. Every rank passes the same map, measured for comm's
 * shape (WSP_ERR_ARG naming the difference otherwise; the same status on
 * every rank); trees are built for at most 1024 ranks. Attaching a map
 * again (a refreshed one) takes a pair's new figures only where they moved
 * by more than 20%, and builds the trees again only when some did; to take
 * a map's figures exactly, detach first. NULL detaches (local, no traffic). */
WSP_API int wsp_comm_set_netmap(wsp_comm_t *comm, const wsp_netmap_t *map);

/* ------------------------------------------------------------------------
 * All-pairs shuffle: a request/response engine (docs/shuffle.md).
 *
 * Every rank posts requests to any rank; the engine batches them per
 * destination, sends them under flow control and adaptive pacing, calls
 * the destination's request handler on each, which answers with
 * wsp_shuffle_reply, and calls the requester's response handler with the
 * original request and its response. wsp_shuffle_close is collective and
 * returns once every request of every rank has been answered and its
 * response handled.
 *
 * Contract:
 *  - Each request gets exactly one response (possibly zero bytes: a request
 *    handler that does not call wsp_shuffle_reply answers with an empty
 *    response). Responses from one peer are handled in the order the posts
 *    to that peer returned (a follow-up posted by a response handler while
 *    an outer post waits for room returns first).
 *  - Request handlers may only call wsp_shuffle_reply (at most once per
 *    request). Response handlers may call wsp_shuffle_post (follow-up
 *    requests; such a post never waits) and wsp_shuffle_stats. Anything
 *    else from a handler is refused with WSP_ERR_ARG.
 *  - wsp_shuffle_post copies the request; it may progress the shuffle
 *    (serving other ranks and calling handlers meanwhile, so `data` must not
 *    be a buffer the handlers write) while the configured bounds are
 *    reached, so it can wait but never deadlocks as long as every rank keeps
 *    calling post, progress or close.
 *  - Memory: every payload buffer the engine holds (batches being filled,
 *    requests in flight, received requests, responses being built, sent or
 *    received) is counted; the sum never exceeds cfg.mem_limit for posts
 *    made outside handlers (stats.mem_peak shows it). Requests larger than
 *    stats.max_request and responses larger than stats.max_response are
 *    refused with WSP_ERR_ARG, as the bound could not hold for them.
 *  - A handler that returns non-zero makes the shuffle fail: the engine goes
 *    on serving other ranks (nobody hangs), and close returns
 *    WSP_ERR_HANDLER on that rank and WSP_ERR_REMOTE on the others.
 * ---------------------------------------------------------------------- */
typedef struct wsp_shuffle wsp_shuffle_t;
/* The answer to one request, valid only during the request handler call. */
typedef struct wsp_shuffle_reply wsp_shuffle_reply_t;

typedef struct wsp_shuffle_handlers {
  /* Called on the destination rank for each request from `source`.
   * Answers with wsp_shuffle_reply(reply, ...) at most once. Returns 0, or
   * non-zero to fail the shuffle. */
  int (*on_request)(void *user, int source, const void *req, size_t req_bytes,
                    wsp_shuffle_reply_t *reply);
  /* Called on the requesting rank with the request it posted to `dest` and
   * the response. Both buffers are valid during the call only. */
  int (*on_response)(void *user, int dest, const void *req, size_t req_bytes,
                     const void *resp, size_t resp_bytes);
} wsp_shuffle_handlers_t;

/* Batched handlers (wsp_shuffle_open_batched): the same contract, with
 * several requests or responses of one peer per call, for callers whose
 * per-call cost is high (an interpreter: the Python package calls Python
 * once per batch, not per request). */
typedef struct wsp_shuffle_item {
  const void *req; /* a request as posted (NULL when req_bytes == 0) */
  size_t req_bytes;
  /* on_responses: the response to it. on_requests: set by the handler, to
   * memory that stays valid and unchanged until this shuffle's next
   * on_requests call returns or the shuffle is closed (the engine copies
   * each response into its chunks as their room allows); NULL and 0, as
   * the engine passes them in, answer with an empty response. */
  const void *resp;
  size_t resp_bytes;
} wsp_shuffle_item_t;

typedef struct wsp_shuffle_batch_handlers {
  /* Called on the destination rank with n >= 1 requests from `source`, in
   * the order they were posted, to answer by setting items[i].resp and
   * items[i].resp_bytes. Responses larger than stats.max_response fail the
   * shuffle as a handler error. Returns 0, or non-zero to fail the shuffle
   * (its requests are then answered with empty responses). May not call
   * the shuffle (wsp_shuffle_reply is for on_request only). */
  int (*on_requests)(void *user, int source, size_t n, wsp_shuffle_item_t *items);
  /* Called on the requesting rank with n >= 1 requests it posted to `dest`
   * and their responses, in the order the posts to dest returned. Buffers
   * are valid during the call only. May post follow-ups, as on_response. */
  int (*on_responses)(void *user, int dest, size_t n, const wsp_shuffle_item_t *items);
} wsp_shuffle_batch_handlers_t;

typedef enum wsp_shuffle_mode {
  WSP_SHUFFLE_ADAPTIVE = 0, /* paced at a rate found by steering the queue, no tuning */
  WSP_SHUFFLE_FIXED = 1     /* fixed rate (cfg.rate), the hand-tuned way */
} wsp_shuffle_mode_t;

typedef struct wsp_shuffle_config {
  /* A batch to one destination is sent once its requests plus their
   * expected responses reach this many bytes (a batch always holds at least
   * one request). WSP_SHUFFLE_BATCH; default 64K. */
  size_t batch_bytes;
  /* ... or once its oldest request has waited this long (seconds).
   * WSP_SHUFFLE_BATCH_DELAY_US (microseconds); default 2000 us. */
  double batch_delay;
  /* Largest volume (requests plus expected responses, bytes) in flight to
   * one peer. WSP_SHUFFLE_PEER_WINDOW; default 1M. */
  size_t peer_window;
  /* Largest volume (requests plus expected responses, bytes) in flight in
   * total, whatever the pacing rate. WSP_SHUFFLE_WINDOW; default 16M. */
  size_t window;
  /* Bound on the payload bytes the engine holds on this rank, all buffers
   * together (see above). WSP_SHUFFLE_MEMORY; default 64M. */
  size_t mem_limit;
  wsp_shuffle_mode_t mode; /* WSP_SHUFFLE_MODE=adaptive|fixed */
  /* Fixed mode: bytes per second (requests plus expected responses) this
   * rank lets into the network. WSP_SHUFFLE_RATE (e.g. 3M, 24mbit; setting
   * it selects fixed mode). */
  double rate;
  /* 1: a thread progresses the shuffle in the background (needs
   * MPI_THREAD_MULTIPLE; handlers then run on that thread, possibly before
   * wsp_shuffle_open has returned).
   * WSP_SHUFFLE_PROGRESS_THREAD=0|1; default 0. */
  int progress_thread;
  /* Response chunks larger than this many bytes travel as several MPI
   * messages of at most this size, put together again at the requester, so
   * that each is sent eagerly whatever the MPI's rendezvous threshold
   * (docs/shuffle.md). 0: the communicator's eager limit between nodes
   * (wsp_model_t.eager: measured, given or a map's) when it is known, else
   * 16 KiB. WSP_SHUFFLE_PIECE; at least 1 KiB. */
  size_t piece_bytes;
} wsp_shuffle_config_t;

typedef struct wsp_shuffle_stats {
  /* This rank. */
  uint64_t requests_posted;     /* by wsp_shuffle_post (self included) */
  uint64_t requests_served;     /* request handler calls */
  uint64_t responses_handled;   /* response handler calls */
  uint64_t request_bytes;       /* payload of posted requests */
  uint64_t response_bytes_sent; /* payload of replies given */
  uint64_t response_bytes_received; /* payload handed to on_response */
  uint64_t batches_sent, chunks_sent; /* MPI messages of requests/responses */
  /* Response chunks sent as an announcement and pieces (larger than the
   * piece size, cfg.piece_bytes), and the piece size used. */
  uint64_t chunks_in_pieces;
  size_t piece_bytes;
  uint64_t post_waits;          /* posts that had to wait for room */
  double post_wait_seconds;
  /* Memory: the bound, the current and peak total, and the peak of each
   * part (each part has a share of mem_limit; see docs/shuffle.md). */
  size_t mem_limit, mem_current, mem_peak;
  size_t peak_backlog, peak_inflight, peak_intake, peak_resp_out, peak_resp_in;
  size_t max_request, max_response; /* largest payloads accepted */
  /* Pacing (network peers only): the rate requests and their expected
   * responses are let into the network at (bytes/s; fixed mode: cfg.rate),
   * its smallest and largest value so far, the smallest round-trip time per
   * byte seen (seconds), the smoothed round-trip time of a batch (s). */
  double rate, rate_min, rate_max, rtt_min_per_byte, srtt;
  /* Bytes of cost (requests plus expected responses) now in flight to
   * network peers (cfg.window caps it). */
  double inflight;
  /* Filled by wsp_shuffle_close: sums over all ranks. */
  uint64_t global_requests_posted, global_requests_served;
  /* This rank (last, so that the fields above keep their offsets): times an
   * allocation inside the engine failed and what needed it was left for a
   * later pass (running out of memory is back-pressure). */
  uint64_t nomem_waits;
  /* Response chunks this rank sent over the shuffle's lanes, as one
   * transfer after their announcement instead of pieces (docs/shuffle.md,
   * "Over the lanes"). */
  uint64_t chunks_on_lanes;
} wsp_shuffle_stats_t;

/* Defaults; from_env applies WSP_SHUFFLE_* (docs/env.md) and leaves *cfg
 * untouched on error (WSP_ERR_CONFIG naming the variable). */
WSP_API int wsp_shuffle_config_init(wsp_shuffle_config_t *cfg);
WSP_API int wsp_shuffle_config_from_env(wsp_shuffle_config_t *cfg);
/* Collective over comm. cfg == NULL: defaults + environment. Every rank must
 * pass the same configuration. A rank with a bad argument returns
 * WSP_ERR_ARG and the others WSP_ERR_REMOTE; nobody hangs. */
WSP_API int wsp_shuffle_open(wsp_comm_t *comm, const wsp_shuffle_config_t *cfg,
                             const wsp_shuffle_handlers_t *handlers, void *user,
                             wsp_shuffle_t **out);
/* wsp_shuffle_open with batched handlers (above); everything else about
 * the shuffle is the same. */
WSP_API int wsp_shuffle_open_batched(wsp_comm_t *comm, const wsp_shuffle_config_t *cfg,
                                     const wsp_shuffle_batch_handlers_t *handlers,
                                     void *user, wsp_shuffle_t **out);
/* Copies `bytes` bytes (data may be NULL when bytes == 0) into a request to
 * rank `dest` (any rank, this one included). */
WSP_API int wsp_shuffle_post(wsp_shuffle_t *sh, int dest, const void *data,
                             size_t bytes);
/* From a request handler: the response (copied). */
WSP_API int wsp_shuffle_reply(wsp_shuffle_reply_t *reply, const void *data,
                              size_t bytes);
/* One non-blocking pass: receive, serve, send what the bounds allow. */
WSP_API int wsp_shuffle_progress(wsp_shuffle_t *sh);
/* Collective. Sends what is batched, keeps serving, and returns when every
 * rank's requests are all answered and handled. Releases the shuffle's
 * communication resources; the handle stays for wsp_shuffle_stats until
 * wsp_shuffle_free. stats may be NULL. */
WSP_API int wsp_shuffle_close(wsp_shuffle_t *sh, wsp_shuffle_stats_t *stats);
WSP_API int wsp_shuffle_stats(const wsp_shuffle_t *sh, wsp_shuffle_stats_t *stats);
/* Frees a closed shuffle and sets *sh to NULL (NULL is accepted). An open
 * shuffle is refused (WSP_ERR_ARG): close it first. */
WSP_API int wsp_shuffle_free(wsp_shuffle_t **sh);

/* ------------------------------------------------------------------------
 * Striped point-to-point (docs/p2p.md): one large message between two
 * ranks over k TCP connections ("lanes") that the library opens itself,
 * for paths where one connection gets only part of the capacity (a
 * per-flow cap, a window over a long round trip). Chunks go to whichever
 * lane is free, so a slow lane carries less instead of holding the rest.
 *
 * A pair of ranks is set up at its first striped message of at least
 * cfg.p2p_min bytes (WSP_P2P_MIN_DEFAULT when it is 0): both ranks
 * exchange addresses over MPI, connect, and (auto) probe how much
 * several lanes carry against one, which gives the lanes to use and the
 * smallest message worth striping. Shorter messages,
 * messages to oneself, pairs where several lanes carry no more than one,
 * and every message under SimGrid go through MPI unchanged.
 *
 * Rules: a send and its receive give the same size (the choice of path
 * depends on it; a mismatch on the lanes fails the pair with WSP_ERR_ARG);
 * no wildcards; messages between one pair with one tag arrive in the order
 * they were sent, as in MPI. A striped send completes when the receiver
 * has every byte. Progress happens in the test and wait calls of the
 * communicator. Complete every request before wsp_comm_free.
 * ---------------------------------------------------------------------- */
typedef struct wsp_striped_request wsp_striped_request_t;

/* The most data lanes a pair opens (WSP_P2P_LANES, WSP_P2P_MAX_LANES). */
#define WSP_STRIPED_LANES_MAX 64
/* The shortest striped message that takes the lanes when cfg.p2p_min is 0
 * (automatic). */
#define WSP_P2P_MIN_DEFAULT ((size_t)64 << 10)

/* Blocking: `bytes` bytes of buf to rank dest of comm (receive: from
 * source) with tag in [0, MPI_TAG_UB]. */
WSP_API int wsp_striped_send(wsp_comm_t *comm, const void *buf, size_t bytes, int dest, int tag);
WSP_API int wsp_striped_recv(wsp_comm_t *comm, void *buf, size_t bytes, int source, int tag);
/* Non-blocking: *req is the request until a test or wait completes it and
 * sets it to NULL. */
WSP_API int wsp_striped_isend(wsp_comm_t *comm, const void *buf, size_t bytes, int dest, int tag,
                              wsp_striped_request_t **req);
WSP_API int wsp_striped_irecv(wsp_comm_t *comm, void *buf, size_t bytes, int source, int tag,
                              wsp_striped_request_t **req);
/* *done = 1 and *req = NULL when it completed (its status is returned);
 * a NULL *req counts as done. */
WSP_API int wsp_striped_test(wsp_striped_request_t **req, int *done);
WSP_API int wsp_striped_wait(wsp_striped_request_t **req);
/* Waits for all n (NULL entries are fine); returns the first failure's
 * status, after completing every one of them. */
WSP_API int wsp_striped_waitall(int n, wsp_striped_request_t **reqs);

typedef enum wsp_striped_state {
  WSP_STRIPED_NONE = 0, /* no striped message long enough to set it up yet */
  WSP_STRIPED_SETUP,    /* connecting or probing */
  WSP_STRIPED_READY,
  WSP_STRIPED_FAILED /* a lane failed: striped messages to it fail at once */
} wsp_striped_state_t;

typedef struct wsp_striped_info {
  wsp_striped_state_t state;
  int lanes;          /* lanes a striped message uses */
  int lanes_open;     /* data lanes connected (a control lane besides) */
  size_t threshold;   /* smallest message on the lanes; SIZE_MAX: none */
  /* The probe's figures (0 when the lanes were forced): bytes/s over one
   * lane and over all lanes opened, the path's round trip (seconds: the
   * smallest the streaming rank's kernel saw on any lane, the same on both
   * ends; where it could not say, on the higher rank the time to the
   * probe's first chunk, on the lower 0); and, known to the higher rank
   * of the pair only, the share of segments lost as priced (the most the
   * probe's count of loss episodes per segment leaves possible, 0 when
   * none was seen) and whether the one lane's rate was taken for a ramp
   * (1: still in its first slow start, within the round trips a ramp
   * takes to fill the path). docs/p2p.md says how auto uses them. */
  double rate_one, rate_lanes, rtt, loss;
  int slow_start;
  /* Bytes through this pair's lanes so far, frames included. */
  uint64_t bytes_sent, bytes_received;
  char peer_address[64]; /* the peer's end of the first lane */
  /* This rank's TCP port of each connection to the peer: [0] the control
   * lane (CTS, confirmations), [1..lanes_open] the data lanes; 0 where
   * there is none. To tell the lanes apart in ss, tc or a firewall log. */
  uint16_t local_port[WSP_STRIPED_LANES_MAX + 1];
} wsp_striped_info_t;

/* What this rank knows of its lanes to `peer` (local; no communication). */
WSP_API int wsp_striped_info(const wsp_comm_t *comm, int peer, wsp_striped_info_t *info);

/* The library's version ("0.1.0"), which may differ from the header's
 * WSP_VERSION_STRING when a program runs with another build than it was
 * compiled against; and how it was built (compiler, MPI, build type). */
WSP_API const char *wsp_version(void);
WSP_API const char *wsp_build_info(void);

/* ------------------------------------------------------------------------
 * Deprecated names, kept for the release after 0.1.0 only (CHANGELOG.md).
 * They are inline wrappers, not exported symbols; a compiler that knows
 * the attribute warns at each use.
 * ---------------------------------------------------------------------- */
#if defined(__GNUC__)
#define WSP_DEPRECATED(use) __attribute__((deprecated("use " use)))
#else
#define WSP_DEPRECATED(use)
#endif

typedef wsp_netmap_probe_config_t wsp_probe_config_t WSP_DEPRECATED("wsp_netmap_probe_config_t");

WSP_DEPRECATED("wsp_netmap_probe_config_init")
static inline int wsp_probe_config_init(wsp_netmap_probe_config_t *cfg) {
  return wsp_netmap_probe_config_init(cfg);
}
WSP_DEPRECATED("wsp_striped_send")
static inline int wsp_send_striped(wsp_comm_t *comm, const void *buf, size_t bytes, int dest,
                                   int tag) {
  return wsp_striped_send(comm, buf, bytes, dest, tag);
}
WSP_DEPRECATED("wsp_striped_recv")
static inline int wsp_recv_striped(wsp_comm_t *comm, void *buf, size_t bytes, int source, int tag) {
  return wsp_striped_recv(comm, buf, bytes, source, tag);
}
WSP_DEPRECATED("wsp_striped_isend")
static inline int wsp_isend_striped(wsp_comm_t *comm, const void *buf, size_t bytes, int dest,
                                    int tag, wsp_striped_request_t **req) {
  return wsp_striped_isend(comm, buf, bytes, dest, tag, req);
}
WSP_DEPRECATED("wsp_striped_irecv")
static inline int wsp_irecv_striped(wsp_comm_t *comm, void *buf, size_t bytes, int source, int tag,
                                    wsp_striped_request_t **req) {
  return wsp_striped_irecv(comm, buf, bytes, source, tag, req);
}
WSP_DEPRECATED("wsp_version")
static inline const char *wsp_version_string(void) { return wsp_version(); }

#ifdef __cplusplus
}
#endif
#endif /* WIRESPEED_H */
