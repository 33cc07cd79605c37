/*
 * Striped point-to-point: the engine's state, shared by its three files.
 *
 *   lane.c     TCP sockets: this rank's addresses, the listener, connects
 *              and accepts, socket options, the frame header's encoding.
 *   engine.c   the progress loop: frames in and out of every lane, chunks
 *              to whichever lane is free, the receiver-driven matching, the
 *              probe that chooses the number of lanes.
 *   striped.c  the public calls: argument checks, the choice between lanes
 *              and MPI, the pair set-up over MPI, requests, test and wait.
 *
 * How a message moves (docs/p2p.md has the user's view). Every pair of
 * ranks that stripes gets its own set of TCP connections ("lanes"), made at
 * the first striped call between them. A receive sends a CTS frame (tag,
 * size, receive id) to the sender; the sender matches CTS frames in the
 * receiver's posting order against its sends of the same tag in its own
 * posting order, which is MPI's non-overtaking rule for one pair. The
 * matched send cuts the message into chunks and gives the next chunk to a
 * lane whenever the kernel reports that lane writable; the socket option
 * TCP_NOTSENT_LOWAT keeps that report back until the lane's unsent backlog
 * is small, so a slow lane takes fewer chunks instead of a fixed share.
 * DATA frames carry (receive id, offset, length), and the receiver reads
 * each straight into the user's buffer. When all bytes are in, it answers
 * DONE and the send completes: a striped send is synchronous.
 *
 * Lane 0 of a pair carries only control frames (CTS, DONE, the probe's),
 * so that they never wait behind a chunk; data goes on lanes 1..k. Once
 * every chunk of a send is handed out, a free lane may copy a chunk that
 * a much slower lane has not delivered yet (the endgame, engine.c); the
 * receiver keeps the first copy of each chunk and drops the other.
 */
#ifndef WSP_STRIPED_INTERNAL_H
#define WSP_STRIPED_INTERNAL_H

#include "wsp_internal.h"

#include <stddef.h>
#include <stdint.h>

struct pollfd;

/* The most lanes one pair may have (WSP_P2P_LANES, WSP_P2P_MAX_LANES). */
#define WSP__LANES_MAX 64
/* This rank's addresses offered to a peer. */
#define WSP__ADDRS_MAX 8
/* Bytes of one probe frame; discarded payload is read in pieces of
 * WSP__SCRATCH bytes. */
#define WSP__PROBE_FRAME (64 * 1024)
#define WSP__SCRATCH (256 * 1024)

/* ---- frames ---- */
enum {
  WSP__FRAME_HDR = 40,          /* bytes of an encoded header */
  WSP__INFLIGHT = 64,           /* chunks a lane remembers until delivered */
  WSP__FRAME_MAGIC = 0x31505357 /* "WSP1" */
};
typedef enum wsp__ftype {
  WSP__F_HELLO = 1, /* first frame of a connection: aux lane, id nonce, off rank */
  WSP__F_CTS,       /* receiver: aux tag, id receive id, off size, len sequence */
  WSP__F_DATA,      /* sender: id receive id, off offset, len payload, aux chunk size */
  WSP__F_DONE,      /* receiver: id receive id, all bytes are in */
  WSP__F_PGO,       /* probe, measurer: id phase, aux lanes to stream on */
  WSP__F_PDATA,     /* probe, streamer: len payload bytes (discarded) */
  WSP__F_PSTOP,     /* probe, measurer: id phase, stop streaming */
  WSP__F_PEND,      /* probe, streamer, on each lane used: id phase */
  WSP__F_RESULT,    /* probe, measurer: aux lanes, id threshold, off/len rates */
  WSP__F_ERR,       /* either end: aux -status, the pair is unusable */
  WSP__F_BYE,       /* either end, last on each lane: the communicator is freed */
  WSP__F_COUNT
} wsp__ftype_t;

typedef struct wsp__frame {
  uint32_t type, aux;
  uint64_t id, off, len;
} wsp__frame_t;

void wsp__frame_encode(const wsp__frame_t *f, unsigned char out[WSP__FRAME_HDR]);
/* 0 when the bytes are a frame header of a known type, -1 otherwise. */
int wsp__frame_decode(const unsigned char in[WSP__FRAME_HDR], wsp__frame_t *f);

/* ---- requests ---- */
typedef enum wsp__req_path {
  WSP__PATH_UNDECIDED = 0, /* waits for the pair's set-up */
  WSP__PATH_MPI,           /* an MPI request on the p2p communicator */
  WSP__PATH_LANES
} wsp__req_path_t;

struct wsp_striped_request {
  struct wsp__stripe *st;
  struct wsp__pair *pair; /* NULL for the MPI path to self */
  int is_send, peer, tag;
  void *buf;
  size_t size;
  wsp__req_path_t path;
  MPI_Request mreq;
  int done, status;
  /* Lanes, send: the matched receive id, chunking, bytes handed to lanes. */
  int matched;
  uint64_t rid;
  size_t chunk, next_off;
  /* Lanes, receive: its id, the bytes received, and which chunks are in
   * (a chunk may come twice: the endgame re-sends chunks a slow lane still
   * holds; the first copy counts). */
  size_t got;
  unsigned char *have;
  struct wsp_striped_request *next; /* in the pair's queue it is on */
};
typedef struct wsp_striped_request wsp__sreq_t;

/* ---- lanes ---- */
typedef struct wsp__lane {
  int fd;
  /* Output: the frame being written (header, then payload). */
  unsigned char ohdr[WSP__FRAME_HDR];
  size_t ohdr_done;
  const unsigned char *opay;
  size_t opay_len, opay_done;
  int obusy;
  /* The send whose chunk is being written (DATA frames), and whether the
   * rest of the payload comes from zeros (the send completed meanwhile:
   * its buffer is the user's again; the receiver drops that copy). */
  struct wsp_striped_request *oreq;
  int ozero;
  /* Chunks written and maybe not yet delivered (acknowledged by TCP), in
   * the order written: the endgame's candidates. */
  struct wsp__inflight {
    struct wsp_striped_request *req;
    uint64_t end; /* bytes_out at the chunk's last byte */
    size_t off, len;
    int dup; /* re-sent on another lane, or is itself a re-send */
  } fl[WSP__INFLIGHT];
  int fl_head, fl_n;
  /* Delivery rate (bytes/s, smoothed) while the lane had data in flight. */
  double rate, rate_t;
  uint64_t rate_acked;
  int pend_pending; /* the probe's PEND must go out on this lane */
  int bye_pending, bye_sent, bye_seen;
  /* Input: the frame being read. */
  unsigned char ihdr[WSP__FRAME_HDR];
  size_t ihdr_got;
  wsp__frame_t in;
  unsigned char *ipay; /* NULL: discard */
  size_t ipay_left;
  wsp__sreq_t *ireq; /* the receive the payload belongs to */
  int ireading;      /* header done, payload pending */
  uint64_t bytes_out, bytes_in;
  int connecting; /* a connect in progress (the lower rank's lanes) */
} wsp__lane_t;

/* ---- pairs ---- */
typedef enum wsp__pair_state {
  WSP__PAIR_NONE = 0,
  WSP__PAIR_XCHG,    /* addresses being exchanged over MPI */
  WSP__PAIR_CONNECT, /* lanes being connected (lower rank) or accepted */
  WSP__PAIR_PROBE,   /* the probe is choosing k */
  WSP__PAIR_READY,
  WSP__PAIR_FAILED
} wsp__pair_state_t;

/* What a rank tells a peer before they connect (over MPI). */
typedef struct wsp__pair_info {
  uint32_t version, port, naddr, lanes;
  uint64_t nonce;
  uint32_t addr[WSP__ADDRS_MAX]; /* IPv4, network order */
} wsp__pair_info_t;

typedef struct wsp__pair {
  int peer;
  wsp__pair_state_t state;
  int lower; /* this rank is the lower of the two: it connects and streams */
  wsp__pair_info_t mine, theirs;
  MPI_Request xreq[2];
  /* Connecting (lower rank): the address being tried, the deadline. */
  int addr_idx;
  double connect_deadline;
  int nlanes;   /* connections opened: the control lane and the data lanes */
  int nconn;    /* lanes connected (and, accepting, greeted) */
  int k;        /* data lanes used: lane[1..k] */
  size_t threshold; /* smallest message on lanes; SIZE_MAX: none */
  double rate1, ratek, rtt;
  /* lane[0] carries control frames only (CTS, DONE, the probe's), so that
   * they never wait behind a chunk; lanes 1..k carry data. */
  wsp__lane_t lane[WSP__LANES_MAX + 1];
  /* Requests that wait for the set-up, in posting order (both kinds). */
  wsp__sreq_t *undecided, *undecided_tail;
  /* Send side: sends not yet matched (posting order), sends matched and
   * transferring, and CTS frames received but not yet matched. */
  wsp__sreq_t *sends, *sends_tail;
  wsp__sreq_t *active, *active_tail;
  struct wsp__cts {
    uint64_t rid, size, seq;
    int tag;
  } *cts;
  size_t ncts, cts_cap;
  uint64_t cts_next; /* the sequence number of the next CTS to match */
  /* Receive side: receives on lanes, in posting order. */
  wsp__sreq_t *recvs, *recvs_tail;
  uint64_t next_rid, cts_seq;
  /* Control frames waiting for a free lane. */
  wsp__frame_t *ctl;
  size_t nctl, ctl_cap;
  /* The probe (engine.c). */
  struct {
    int phase, lanes, streaming, ends;
    double t_go, t_first, t_win, bytes_win;
    int in_window;
  } probe;
  int error;     /* the status that failed the pair */
  char why[160]; /* and why, for every request that fails with it */
} wsp__pair_t;

/* ---- one communicator's state ---- */
typedef struct wsp__stripe {
  wsp_comm_t *comm;
  MPI_Comm p2p; /* the user's tags live here: a duplicate of comm->mpi */
  int listen_fd;
  uint16_t port;
  uint64_t nonce;
  int naddr;
  uint32_t addr[WSP__ADDRS_MAX];
  /* Accepted connections not yet greeted (HELLO not read yet). */
  struct wsp__greet {
    int fd;
    unsigned char hdr[WSP__FRAME_HDR];
    size_t got;
    double since;
  } *greet;
  size_t ngreet, greet_cap;
  wsp__pair_t **pair; /* by peer rank; NULL until used */
  int live;           /* requests not yet completed */
  unsigned char *scratch; /* where discarded payload goes */
  const unsigned char *zeros; /* the probe's payload */
  char *ifaces; /* WSP_P2P_IF, copied */
  size_t lowat; /* TCP_NOTSENT_LOWAT of every lane */
  /* Tests only (WSP_P2P_FAULT_RESET=BYTES): the lane that is about to
   * start a data frame after its pair's lanes have sent this many bytes is
   * reset as a broken connection would be (once); 0: never. */
  uint64_t fault_reset_after;
  /* Tests only (WSP_P2P_ENDGAME=always): the endgame copies every chunk it
   * can, whatever the lanes' rates, so that copies and late copies are
   * exercised on any machine. */
  int endgame_always;
  /* The poll set, kept between passes. */
  struct pollfd *pfd;
  int *pfd_owner;
  size_t pfd_cap;
} wsp__stripe_t;

/* comm.c */
int wsp__stripe_create(wsp_comm_t *comm);
int wsp__stripe_free(wsp_comm_t *comm);

/* lane.c */
int wsp__lane_listen(wsp__stripe_t *st);
int wsp__lane_addrs(wsp__stripe_t *st);
/* Starts a non-blocking connect to addr:port; the fd, or -1 (errno set). */
int wsp__lane_connect(uint32_t addr, uint16_t port);
/* 1 connected, 0 still in progress, -1 failed (errno set). */
int wsp__lane_connected(int fd);
/* Ends the sending side (FIN after what is queued). */
void wsp__lane_shutdown(int fd);
void wsp__lane_options(int fd, size_t lowat);
/* Closes; `reset` makes the peer see a reset rather than an orderly end. */
void wsp__lane_close(int fd, int reset);
void wsp__lane_init(wsp__lane_t *l, int fd);

/* engine.c */
/* One pass: polls every lane, the listener and the greetings for at most
 * timeout_ms, moves what can move, advances set-ups. */
int wsp__stripe_progress(wsp__stripe_t *st, int timeout_ms);
/* Fails the pair: every request on it completes with status, the peer is
 * told (best effort), its lanes are closed. */
void wsp__pair_fail(wsp__stripe_t *st, wsp__pair_t *pr, int status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
int wsp__pair_ctl(wsp__pair_t *pr, const wsp__frame_t *f);
/* Writes the control frames waiting (a DONE, say) onto the control lanes,
 * waiting up to `seconds` for room: a wait that completes a receive calls
 * it, so that the sender learns it even if this rank stops calling
 * wirespeed (goes into MPI_Barrier) right after. */
void wsp__stripe_flush(wsp__stripe_t *st, double seconds);
/* Before the communicator is freed: sends what is queued and a BYE on
 * every lane, then ends the sending side, so that the peer reads every
 * frame (a DONE, say) before it sees the end (at most `seconds`). */
void wsp__pair_close(wsp__stripe_t *st, wsp__pair_t *pr, double seconds);
/* A lanes-path request ready to start: a send waits for its CTS, a receive
 * sends one. */
void wsp__lanes_start(wsp__stripe_t *st, wsp__sreq_t *r);
/* Sets a request done with status; st->live goes down. */
void wsp__req_finish(wsp__stripe_t *st, wsp__sreq_t *r, int status);
/* The pair's set-up reached READY (striped.c decides the waiting requests). */
void wsp__pair_ready(wsp__stripe_t *st, wsp__pair_t *pr);
double wsp__now(void);
/* The probe's choice (engine.c says why): from one lane's rate, all
 * nlanes lanes' rate (bytes/s) and the round trip (s), the lanes a message
 * uses and the smallest message striped (SIZE_MAX: none), never below min. */
void wsp__stripe_choose(double rate1, double ratek, double rtt, int nlanes, size_t min,
                        int *k, size_t *threshold);

#endif
