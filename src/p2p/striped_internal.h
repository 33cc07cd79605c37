/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Striped point-to-point: the engine's state, shared by its files.
 *
 *   lane.c       TCP sockets: this rank's addresses, listeners, connects
 *                and accepts, socket options, the frame header's encoding.
 *   secure.c     the cryptography (OpenSSL): key agreement, proofs, sealing.
 *   handshake.c  a pair's lanes coming up: connects and proofs on the
 *                lower rank, the listener and the greetings on the higher.
 *   engine.c     the progress loop, one pass over every lane;
 *   engine_pair.c  a pair's queues and failure, the receiver-driven
 *                matching, the probe that chooses the number of lanes;
 *   engine_in.c  frames in, each checked against the lane and the state;
 *   engine_out.c frames out: chunks to whichever lane is free, the endgame.
 *   striped.c    the public calls: argument checks, the choice between lanes
 *                and MPI, the pair's set-up over MPI, requests, test and wait.
 *
 * How a pair comes up (docs/p2p.md has the user's view, "Security" what it
 * protects). At the first striped message of at least p2p_min bytes between
 * two ranks, the lower rank sends the higher one, over MPI, a fresh X25519
 * public key, its addresses and what identifies its host; the higher rank
 * opens listeners on the addresses a peer of that host can use (loopback
 * and container bridges only to a peer on the same host) and answers with
 * its own key, those addresses and ports. Both derive the pair's keys
 * (secure.c). The lower rank connects the lanes; each is proven in both
 * directions by a challenge-response and counts as up when the higher
 * rank acknowledges it (handshake.c). The lower rank then tells the higher
 * one over MPI whether every lane came up: both use the lanes, or, if any
 * step failed (no address, a refused or silent port, a stranger answering,
 * the 15-s deadline), both send every message of the pair through MPI,
 * with one warning. The higher rank's listeners close as soon as no pair
 * is being set up.
 *
 * How a message moves. A receive sends a CTS frame (tag, size, receive
 * id) to the sender; the sender matches CTS frames in the receiver's
 * posting order against its sends of the same tag in its own posting
 * order, which is MPI's non-overtaking rule for one pair. The matched send
 * cuts the message into chunks and gives the next chunk to a lane whenever
 * the kernel reports that lane writable; the socket option
 * TCP_NOTSENT_LOWAT keeps that report back until the lane's unsent backlog
 * is small, so a slow lane takes fewer chunks instead of a fixed share.
 * DATA frames carry (receive id, offset, length), and the receiver reads
 * each straight into the user's buffer. When all bytes are in, it answers
 * DONE and the send completes: a striped send is synchronous.
 *
 * Lane 0 of a pair carries only control frames (CTS, DONE, the probe's),
 * so that they never wait behind a chunk; data goes on lanes 1..k. Once
 * every chunk of a send is handed out, a free lane may copy a chunk that
 * a much slower lane has not delivered yet (the endgame, engine_out.c); the
 * receiver keeps the first copy of each chunk and drops the other.
 *
 * Every frame read is checked against the state it may arrive in and every
 * length against its bound (engine_in.c, wsp__on_header); one that fails them
 * fails the pair.
 */
#ifndef WSP_STRIPED_INTERNAL_H
#define WSP_STRIPED_INTERNAL_H

#include "wsp_internal.h"

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct pollfd;

/* The most lanes one pair may have (WSP_P2P_LANES, WSP_P2P_MAX_LANES). */
#define WSP__LANES_MAX WSP_STRIPED_LANES_MAX
/* This rank's addresses offered to a peer. */
#define WSP__ADDRS_MAX 8
/* Bytes of one probe frame; discarded payload is read in pieces of
 * WSP__SCRATCH bytes. */
#define WSP__PROBE_FRAME (64 * 1024)
/* The slices of a probe phase's window (wsp__probe_rate), and the
 * shortest slice worth a rate of its own (seconds). */
#define WSP__PROBE_SLICES 8
#define WSP__PROBE_SLICE_MIN 0.005
/* The longest round trip a PEND frame may report (60 s, in microseconds):
 * longer is no path a lane runs over. */
#define WSP__PROBE_RTT_MAX_US 60000000u
/* The segment size the model takes where no lane can tell its own:
 * Ethernet's 1500 bytes less the IPv4 and TCP headers and TCP's
 * timestamps. */
#define WSP__MSS_DEFAULT 1448
#define WSP__SCRATCH (256 * 1024)
/* CTS frames a sender keeps unmatched, and so receives on lanes a rank
 * may have in flight from one peer (a post beyond it is refused). */
#define WSP__CTS_MAX 65536
/* The largest chunk a DATA frame may carry (cfg.p2p_chunk's bound). */
#define WSP__CHUNK_MAX ((size_t)INT_MAX)
/* The largest chunk of a sealed lane: its frames are sealed whole into a
 * buffer of the lane's. */
#define WSP__SEALED_CHUNK_MAX ((size_t)4 << 20)
/* The shortest chunk: a transfer too short for a chunk of its own size on
 * every lane is cut into one chunk per lane, none under this
 * (wsp__stripe_chunk), so k lanes all carry a part of a transfer from
 * k x this many bytes. */
#define WSP__STRIPE_CHUNK_MIN ((size_t)4096)
/* The lower rank's lanes must be up within this time of the start of the
 * connects, else the pair goes through MPI. */
#define WSP__CONNECT_SECONDS 15.0
/* An accepted connection has this long to send its HELLO, and a greeted
 * one the connect deadline to prove itself. */
#define WSP__HELLO_SECONDS 2.0

/* ---- cryptography (secure.c) ---- */
enum {
  WSP__KEY = 32,       /* X25519 keys, HMAC and AES-256 keys */
  WSP__MAC = 32,       /* HMAC-SHA256 */
  WSP__CHALLENGE = 32, /* a handshake's fresh random challenge */
  WSP__TAG = 16,       /* AES-GCM's tag */
  WSP__HOST_ID = 16    /* what identifies a host and network namespace */
};
/* The pair's keys: auth proves a lane's ends; up seals what the lower
 * rank sends, down what the higher rank sends. */
typedef struct wsp__keys {
  unsigned char auth[WSP__KEY], up[WSP__KEY], down[WSP__KEY];
} wsp__keys_t;
/* One direction of one lane's sealing: a cipher context and the number of
 * the next record (the nonce). */
typedef struct wsp__seal {
  void *ctx;
  uint64_t seq;
  uint32_t lane;
  int encrypt;
} wsp__seal_t;

/* 0, or -1 when the system has no randomness to give. */
int wsp__sec_random(void *buf, size_t n);
/* A fresh X25519 key pair: the private half (opaque), NULL on failure. */
void *wsp__sec_keypair(unsigned char pub[WSP__KEY]);
void wsp__sec_keyfree(void *priv);
/* The pair's keys from this rank's private key and the peer's public key;
 * -1 when the peer's key is not a usable one. */
int wsp__sec_derive(void *priv, const unsigned char peer_pub[WSP__KEY], int rank, int peer,
                    const unsigned char my_pub[WSP__KEY], wsp__keys_t *out);
void wsp__sec_cleanse(void *p, size_t n);
/* The first WSP__HOST_ID bytes of SHA-256 of p. */
void wsp__sec_digest(const void *p, size_t n, unsigned char out[WSP__HOST_ID]);
/* A handshake proof: role 'A' the acceptor's, 'C' the connector's. */
void wsp__sec_proof(const wsp__keys_t *k, char role, int lower, int higher, uint32_t lane,
                    uint32_t nlanes, const unsigned char nc[WSP__CHALLENGE],
                    const unsigned char na[WSP__CHALLENGE], unsigned char out[WSP__MAC]);
/* 1 when a and b are equal (constant time), and a is not all zeros. */
int wsp__sec_equal(const unsigned char *a, const unsigned char *b, size_t n);
int wsp__seal_init(wsp__seal_t *s, const unsigned char key[WSP__KEY], uint32_t lane,
                   int encrypt);
void wsp__seal_free(wsp__seal_t *s);
/* Seals n bytes of in into out (which may be in) and gives the tag. */
int wsp__seal(wsp__seal_t *s, const unsigned char *in, unsigned char *out, size_t n,
              unsigned char tag[WSP__TAG]);
/* Opening a record: begin, the bytes in place as they arrive, the tag. */
int wsp__open_begin(wsp__seal_t *s);
int wsp__open_update(wsp__seal_t *s, unsigned char *buf, size_t n);
int wsp__open_finish(wsp__seal_t *s, const unsigned char tag[WSP__TAG]);

/* Statuses travel negated (ERR frames, the set-up's status and verdict);
 * a value above this is no status of ours. */
#define WSP__STATUS_MAX 1000u
/* The name of a status sent negated by a peer, or "an unknown status". */
const char *wsp__peer_status_name(uint32_t negated);

/* ---- frames ---- */
/* The lanes' integers: little-endian on the wire whatever the hosts are,
 * at any alignment (frame headers, the handshake's and the seals' fields). */
static inline void wsp__le32_put(unsigned char *p, uint32_t v) {
  for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (8 * i));
}
static inline void wsp__le64_put(unsigned char *p, uint64_t v) {
  for (int i = 0; i < 8; i++) p[i] = (unsigned char)(v >> (8 * i));
}
static inline uint32_t wsp__le32_get(const unsigned char *p) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; i--) v = (v << 8) | p[i];
  return v;
}
static inline uint64_t wsp__le64_get(const unsigned char *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; i--) v = (v << 8) | p[i];
  return v;
}

enum {
  WSP__FRAME_HDR = 40,          /* bytes of an encoded header */
  WSP__INFLIGHT = 64,           /* chunks a lane remembers until delivered */
  WSP__FRAME_MAGIC = 0x32505357 /* "WSP2" */
};
typedef enum wsp__ftype {
  /* The handshake (handshake.c), never sealed. */
  WSP__F_HELLO = 1, /* connector: aux lane, id lanes, off rank; payload its challenge */
  WSP__F_CHAL,      /* acceptor: aux lane; payload its challenge and proof */
  WSP__F_PROOF,     /* connector: aux lane; payload its proof */
  WSP__F_ACK,       /* acceptor: aux lane; the lane is up */
  /* The lanes' traffic (engine_in.c, engine_out.c). */
  WSP__F_CTS,    /* receiver: aux tag, id receive id, off size, len sequence */
  WSP__F_DATA,   /* sender: id receive id, off offset, len payload, aux chunk size */
  WSP__F_DONE,   /* receiver: id receive id, all bytes are in */
  WSP__F_PGO,    /* probe, measurer: id phase, aux lanes to stream on */
  WSP__F_PDATA,  /* probe, streamer: len payload bytes (discarded) */
  WSP__F_PSTOP,  /* probe, measurer: id phase, stop streaming */
  WSP__F_PEND,   /* probe, streamer, on each lane used: id phase, aux/off/len its TCP figures */
  WSP__F_RESULT, /* probe, measurer: aux lanes, id threshold, off/len rates */
  WSP__F_ERR,    /* either end: aux -status, the pair is unusable */
  WSP__F_BYE,    /* either end, last on each lane: the communicator is freed */
  WSP__F_COUNT
} wsp__ftype_t;

typedef struct wsp__frame {
  uint32_t type, aux;
  uint64_t id, off, len;
} wsp__frame_t;

void wsp__frame_encode(const wsp__frame_t *f, unsigned char out[WSP__FRAME_HDR]);
/* 0 when the bytes are a frame header of a known type, -1 otherwise. */
int wsp__frame_decode(const unsigned char in[WSP__FRAME_HDR], wsp__frame_t *f);
/* Whether frames of this type carry `len` bytes of payload after the
 * header (for the others len is a field of its own). */
int wsp__frame_has_payload(uint32_t type);

/* Each frame type's fields by name. The header's fields aux, id, off and
 * len mean different things per type (the list above); the code makes and
 * reads frames only through these, so that one place says which is which.
 * len is the payload's length on the frames that carry one. The readers
 * return the raw field: the receiver checks it against its bound before
 * use (engine_in.c, handshake.c). */
static inline wsp__frame_t wsp__frame_hello(int lane, int lanes, int rank) {
  return (wsp__frame_t){.type = WSP__F_HELLO,
                        .aux = (uint32_t)lane,
                        .id = (uint64_t)lanes,
                        .off = (uint64_t)rank,
                        .len = WSP__CHALLENGE};
}
static inline wsp__frame_t wsp__frame_chal(int lane) {
  return (wsp__frame_t){
      .type = WSP__F_CHAL, .aux = (uint32_t)lane, .len = WSP__CHALLENGE + WSP__MAC};
}
static inline wsp__frame_t wsp__frame_proof(int lane) {
  return (wsp__frame_t){.type = WSP__F_PROOF, .aux = (uint32_t)lane, .len = WSP__MAC};
}
static inline wsp__frame_t wsp__frame_ack(int lane) {
  return (wsp__frame_t){.type = WSP__F_ACK, .aux = (uint32_t)lane};
}
/* HELLO, CHAL, PROOF, ACK: the lane the connection is to be. */
static inline uint32_t wsp__frame_lane(const wsp__frame_t *f) { return f->aux; }
/* HELLO: the connector's rank (the pair's lanes it names are checked by
 * comparing the whole header with wsp__frame_hello's). */
static inline uint64_t wsp__hello_rank(const wsp__frame_t *f) { return f->off; }

/* CTS: receive rid of `size` bytes with `tag` is posted; seq numbers the
 * CTS frames of a pair from 0. */
typedef struct wsp__cts_fields {
  uint64_t rid, size, seq;
  uint32_t tag;
} wsp__cts_fields_t;
static inline wsp__frame_t wsp__frame_cts(wsp__cts_fields_t c) {
  return (wsp__frame_t){.type = WSP__F_CTS, .aux = c.tag, .id = c.rid, .off = c.size, .len = c.seq};
}
static inline wsp__cts_fields_t wsp__cts_of(const wsp__frame_t *f) {
  return (wsp__cts_fields_t){.rid = f->id, .size = f->off, .seq = f->len, .tag = f->aux};
}
/* DATA: `len` bytes at offset `off` of receive rid, cut in chunks of
 * `chunk` bytes. DONE: every byte of receive rid is in. */
static inline wsp__frame_t wsp__frame_data(uint64_t rid, uint64_t off, uint64_t len, size_t chunk) {
  return (wsp__frame_t){
      .type = WSP__F_DATA, .aux = (uint32_t)chunk, .id = rid, .off = off, .len = len};
}
static inline wsp__frame_t wsp__frame_done(uint64_t rid) {
  return (wsp__frame_t){.type = WSP__F_DONE, .id = rid};
}
/* DATA, DONE: the receive. */
static inline uint64_t wsp__frame_rid(const wsp__frame_t *f) { return f->id; }
static inline uint64_t wsp__data_off(const wsp__frame_t *f) { return f->off; }
static inline uint32_t wsp__data_chunk(const wsp__frame_t *f) { return f->aux; }

/* The probe: PGO starts phase 1 or 2 on `lanes` lanes; PSTOP stops it;
 * each lane streamed on ends with PEND; PDATA is its stream. */
static inline wsp__frame_t wsp__frame_pgo(int phase, int lanes) {
  return (wsp__frame_t){.type = WSP__F_PGO, .id = (uint64_t)phase, .aux = (uint32_t)lanes};
}
static inline wsp__frame_t wsp__frame_pstop(int phase) {
  return (wsp__frame_t){.type = WSP__F_PSTOP, .id = (uint64_t)phase};
}
/* PEND: what the streamer's kernel says of the lane over the phase
 * (wsp__tcpstat): its smallest round trip in microseconds (0: unknown),
 * the segments it sent and the loss episodes among them, and whether it
 * is still in its first slow start (1) or not (0). */
typedef struct wsp__pend_fields {
  uint32_t rtt_us, segs, losses;
  uint64_t slow_start;
} wsp__pend_fields_t;
static inline wsp__frame_t wsp__frame_pend(int phase, wsp__pend_fields_t p) {
  return (wsp__frame_t){.type = WSP__F_PEND,
                        .id = (uint64_t)phase,
                        .aux = p.rtt_us,
                        .off = (uint64_t)p.losses << 32 | p.segs,
                        .len = p.slow_start};
}
static inline wsp__pend_fields_t wsp__pend_of(const wsp__frame_t *f) {
  return (wsp__pend_fields_t){.rtt_us = f->aux,
                              .segs = (uint32_t)f->off,
                              .losses = (uint32_t)(f->off >> 32),
                              .slow_start = f->len};
}
static inline wsp__frame_t wsp__frame_pdata(void) {
  return (wsp__frame_t){.type = WSP__F_PDATA, .len = WSP__PROBE_FRAME};
}
/* PGO, PSTOP, PEND: the phase; PGO: the lanes to stream on. */
static inline uint64_t wsp__probe_phase_of(const wsp__frame_t *f) { return f->id; }
static inline uint32_t wsp__pgo_lanes(const wsp__frame_t *f) { return f->aux; }
/* RESULT: the probe's choice (lanes, smallest message striped) and its
 * rates, bytes/s as the bits of doubles. */
typedef struct wsp__result_fields {
  uint32_t lanes;
  uint64_t threshold;
  double rate1, ratek;
} wsp__result_fields_t;
static inline wsp__frame_t wsp__frame_result(wsp__result_fields_t r) {
  wsp__frame_t f = {.type = WSP__F_RESULT, .aux = r.lanes, .id = r.threshold};
  memcpy(&f.off, &r.rate1, sizeof f.off);
  memcpy(&f.len, &r.ratek, sizeof f.len);
  return f;
}
static inline wsp__result_fields_t wsp__result_of(const wsp__frame_t *f) {
  wsp__result_fields_t r = {.lanes = f->aux, .threshold = f->id};
  memcpy(&r.rate1, &f->off, sizeof r.rate1);
  memcpy(&r.ratek, &f->len, sizeof r.ratek);
  return r;
}
/* ERR: the status that failed the pair (negated: WSP_ERR_* < 0), and BYE. */
static inline wsp__frame_t wsp__frame_err(int status) {
  return (wsp__frame_t){.type = WSP__F_ERR, .aux = (uint32_t)(-status)};
}
static inline uint32_t wsp__err_negated(const wsp__frame_t *f) { return f->aux; }
static inline wsp__frame_t wsp__frame_bye(void) { return (wsp__frame_t){.type = WSP__F_BYE}; }
/* Whether two headers are the same in every field (a handshake's frames
 * must be exactly what their maker makes; unused fields are 0). */
static inline int wsp__frame_equal(const wsp__frame_t *a, const wsp__frame_t *b) {
  return a->type == b->type && a->aux == b->aux && a->id == b->id && a->off == b->off &&
         a->len == b->len;
}

/* ---- requests ---- */
typedef enum wsp__req_path {
  WSP__PATH_UNDECIDED = 0, /* waits for the pair's set-up */
  WSP__PATH_MPI,           /* an MPI request on the p2p communicator */
  WSP__PATH_LANES
} wsp__req_path_t;

struct wsp_striped_request {
  struct wsp__stripe *st; /* NULL once the communicator was freed under it */
  struct wsp__pair *pair; /* NULL for the MPI path to self */
  int is_send, peer, tag;
  void *buf;
  size_t size;
  wsp__req_path_t path;
  MPI_Request mreq;
  int done, status;
  char why[160]; /* why it failed, kept with it (the pair may be gone) */
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
  /* A transfer of the collectives' transport (xport.c): called once when
   * the request is done, with the transport's own state. */
  void (*on_done)(struct wsp_striped_request *r);
  void *xfer;
  /* MPI freed the transport's request before the engine finished this
   * one: nobody reaps it, so the transport's next pass does once it is
   * done, or the communicator's free. */
  int orphan;
  /* Every request of the communicator not yet reaped, so that freeing the
   * communicator can let go of them. */
  struct wsp_striped_request *all_prev, *all_next;
  /* A send the report counts (the user's, with a report on): 1, and when
   * it was posted. */
  int counted;
  double t0;
};
typedef struct wsp_striped_request wsp__sreq_t;

/* ---- lanes ---- */
typedef enum wsp__hs {
  WSP__HS_UP = 0,     /* proven and acknowledged: frames flow */
  WSP__HS_CONNECTING, /* the lower rank's connect is in progress */
  WSP__HS_HELLO,      /* HELLO sent, the acceptor's CHAL awaited */
  WSP__HS_PROOF       /* PROOF sent, the acceptor's ACK awaited */
} wsp__hs_t;

/* The largest handshake frame (CHAL: its challenge and proof). */
#define WSP__HS_BUF (WSP__FRAME_HDR + WSP__CHALLENGE + WSP__MAC)

typedef struct wsp__lane {
  int fd;
  wsp__hs_t hs;
  /* The lower rank's handshake: its challenge, the bytes read so far. */
  unsigned char nc[WSP__CHALLENGE];
  unsigned char hsbuf[WSP__HS_BUF];
  size_t hsgot;
  /* Sealing (WSP_P2P_ENCRYPT): each direction's context; frames are
   * sealed into obuf. */
  int sealed;
  wsp__seal_t tx, rx;
  unsigned char *obuf;
  size_t obuf_cap;
  /* Output: the frame being written (header, then payload). */
  unsigned char ohdr[WSP__FRAME_HDR + WSP__TAG];
  size_t ohdr_len, ohdr_done;
  const unsigned char *opay;
  size_t opay_len, opay_done;
  int obusy;
  /* The send whose chunk is being written (DATA frames), and whether the
   * rest of the payload comes from zeros (the send completed meanwhile:
   * its buffer is the user's again; the receiver drops that copy). A
   * sealed lane writes from its own buffer and never needs the zeros. */
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
  /* The probe's watch of this lane's loss (streamer; engine_out.c):
   * whether it has begun this phase, whether the lane was in its first
   * slow start when last looked at, its segments sent (from segs0), its
   * retransmissions seen, its loss episodes and when the last began. */
  int watched, was_slow;
  uint32_t segs0, segs, retrans, losses;
  double loss_t;
  int pend_seen;    /* the probe's PEND came in on this lane (this phase) */
  int bye_pending, bye_sent, bye_seen;
  /* Input: the frame being read (header, payload, then a sealed
   * payload's tag). */
  unsigned char ihdr[WSP__FRAME_HDR + WSP__TAG];
  size_t ihdr_got;
  wsp__frame_t in;
  unsigned char *ipay; /* NULL: discard */
  size_t ipay_left;
  wsp__sreq_t *ireq; /* the receive the payload belongs to */
  int ireading;      /* header done, payload pending */
  unsigned char itag[WSP__TAG];
  size_t itag_got;
  int itag_reading; /* a sealed payload is in, its tag pending */
  uint64_t bytes_out, bytes_in;
  /* The socket's TCP_NOTSENT_LOWAT when it is not the engine's (0: it is
   * wsp__stripe_t.lowat): a send of small chunks lowers it (engine_out.c). */
  size_t lowat;
} wsp__lane_t;

/* ---- pairs ---- */
typedef enum wsp__pair_state {
  WSP__PAIR_NONE = 0,
  WSP__PAIR_XCHG,    /* keys and addresses being exchanged over MPI */
  WSP__PAIR_CONNECT, /* lanes being connected and proven */
  WSP__PAIR_PROBE,   /* the probe is choosing k */
  WSP__PAIR_READY,   /* lanes up, or (fallback) every message through MPI */
  WSP__PAIR_FAILED
} wsp__pair_state_t;

/* What a rank tells a peer before they connect (over MPI, as bytes: the
 * two ranks run the same build). Every field is checked on arrival. */
enum { WSP__STRIPE_VERSION = 2 };
typedef struct wsp__pair_info {
  uint32_t version;
  uint32_t status; /* 0, or -WSP_ERR_*: this rank cannot use lanes */
  uint32_t lanes;  /* connections of the pair: the control lane and k */
  uint32_t encrypt;
  uint32_t freed; /* the higher rank freed its communicator before it answered */
  uint32_t naddr;
  uint32_t addr[WSP__ADDRS_MAX]; /* IPv4, network order */
  uint16_t port[WSP__ADDRS_MAX]; /* the higher rank's listener on each */
  uint8_t local[WSP__ADDRS_MAX]; /* 1: reaches only its own host */
  unsigned char host[WSP__HOST_ID];
  unsigned char pub[WSP__KEY]; /* this set-up's X25519 public key */
} wsp__pair_info_t;

typedef struct wsp__pair {
  int peer;
  wsp__pair_state_t state;
  int lower; /* this rank is the lower of the two: it connects and streams */
  wsp__pair_info_t mine, theirs;
  MPI_Request xreq[2]; /* the exchange: [0] the send of mine, [1] the receive */
  /* The lower rank's verdict on the lanes (0: all up, else -status; [1]
   * 1: the lower rank freed its communicator during the set-up), sent to
   * the higher rank over MPI. */
  MPI_Request vreq;
  uint32_t verdict[2];
  void *priv; /* this set-up's private key, until the keys are derived */
  wsp__keys_t keys;
  int same_host; /* the peer runs on this host (and network namespace) */
  /* The higher rank: the peer's addresses a lane may come from. */
  uint32_t src[WSP__ADDRS_MAX];
  int nsrc;
  /* Connecting (lower rank): the address being tried, the deadline. */
  int addr_idx;
  double connect_deadline;
  double connect_at; /* tests only: connects wait until then (0: not) */
  int retries;       /* lanes the current address closed before their ACK */
  int fallback; /* the lanes could not be set up: everything through MPI */
  int nlanes;   /* connections: the control lane and the data lanes */
  int nconn;    /* lanes up */
  int k;        /* data lanes used: lane[1..k] */
  size_t threshold; /* smallest message on lanes; SIZE_MAX: none */
  double rate1, ratek, rtt, loss;
  int ramping;
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
  size_t nrecvs;
  uint64_t next_rid, cts_seq;
  /* Control frames waiting for a free lane. */
  wsp__frame_t *ctl;
  size_t nctl, ctl_cap;
  /* The probe (engine_pair.c). */
  struct {
    int phase, lanes, streaming, stopped, ends;
    double t_go, t_first, t_win, bytes_win;
    int in_window;
    /* The window's bytes by WSP__PROBE_SLICES slices of dt seconds each
     * (wsp__probe_rate). */
    double slice[WSP__PROBE_SLICES], dt;
    /* The streamer's TCP figures (PEND), per phase: segments sent and
     * loss episodes among them, lanes still in their first slow start
     * (measurer); the smallest round trip of any lane (microseconds, 0:
     * none known; both ends, wsp__probe_rtt_seen). */
    uint64_t segs[2], losses[2];
    int slow[2];
    uint32_t rtt_us;
  } probe;
  int error;     /* the status that failed the pair */
  char why[160]; /* and why, for every request that fails with it */
} wsp__pair_t;

/* A round trip a PEND frame carried (microseconds, 0: unknown): both ends
 * keep the smallest, the streamer of those it sends and the measurer of
 * those it gets, so that both know the same path's round trip. */
static inline void wsp__probe_rtt_seen(wsp__pair_t *pr, uint32_t us) {
  if (us > 0 && (pr->probe.rtt_us == 0 || us < pr->probe.rtt_us)) pr->probe.rtt_us = us;
}

/* ---- one communicator's state ---- */
typedef struct wsp__stripe {
  wsp_comm_t *comm;
  /* The least threshold a pair's probe may choose; 0: wsp__p2p_min. The
   * collectives' transport lowers it so that its probe reports where lanes
   * start to pay, and sets its own threshold from that (xport.c). */
  size_t probe_floor;
  MPI_Comm p2p; /* the user's tags live here: a duplicate of comm->mpi */
  /* The higher rank's listeners, one per address offered, open only while
   * a pair is being set up (handshake.c). */
  struct wsp__listener {
    int fd;
    uint32_t addr;
    uint16_t port;
  } lst[WSP__ADDRS_MAX];
  int nlst;
  /* This rank's addresses (lane.c) and its host, found once. */
  int addrs_known, naddr;
  uint32_t addr[WSP__ADDRS_MAX];
  uint8_t addr_local[WSP__ADDRS_MAX];
  unsigned char host[WSP__HOST_ID];
  /* Accepted connections not yet proven: waiting for their HELLO, then
   * (CHAL sent) for their PROOF. */
  struct wsp__greet {
    int fd;
    int proving; /* CHAL sent */
    uint32_t src;
    int rank;
    uint32_t lane;
    unsigned char nc[WSP__CHALLENGE], na[WSP__CHALLENGE];
    unsigned char buf[WSP__HS_BUF];
    size_t got;
    double since;
  } *greet;
  size_t ngreet, greet_cap;
  /* Connections dropped without becoming a lane (strangers, failed proofs,
   * over the cap, late): counted, the first one logged as a warning. */
  uint64_t refused;
  /* The collectives' transport only (xport.c): the receive of another
   * rank's notice that a lane failed (MPI_REQUEST_NULL: none posted), its
   * buffer, and this rank's notice (the failed pair). */
  MPI_Request notice;
  int notice_in[2], notice_out[2];
  wsp__pair_t **pair; /* by peer rank; NULL until used */
  int live;           /* requests not yet completed */
  wsp__sreq_t *reqs;  /* requests not yet reaped */
  unsigned char *scratch; /* where discarded payload goes */
  const unsigned char *zeros; /* the probe's payload */
  char *ifaces; /* WSP_P2P_IF, copied */
  size_t lowat; /* TCP_NOTSENT_LOWAT of a lane, at most (wsp__lane_t.lowat) */
  /* Tests only (WSP_P2P_FAULT_RESET=BYTES): the lane that is about to
   * start a data frame after its pair's lanes have sent this many bytes is
   * reset as a broken connection would be (once); 0: never. */
  uint64_t fault_reset_after;
  /* Tests only (WSP_P2P_FAULT_POLL=BYTES): the first progress pass after
   * this rank's lanes have received this many bytes fails as a failed
   * poll would (once); 0: never. */
  uint64_t fault_poll;
  /* Tests only (WSP_P2P_FAULT_SETUP_MS=MS): the lower rank waits this long
   * before it connects, so that a test can meet the listener. */
  double fault_setup_delay;
  /* Tests only (WSP_P2P_PROBE_FIGURES=R1,RK,RTT[,LOSS[,RAMPING]]): auto
   * chooses from these figures (one lane's rate and all lanes' rate in
   * bytes/s, the round trip in seconds, the share of segments lost, one
   * lane in slow start) instead of those its probe measured, so that a test
   * knows what it must choose; the probe still runs. probe_as[0] = 0:
   * the measured figures. */
  double probe_as[5];
  /* Tests only (WSP_P2P_ENDGAME=always): the endgame copies every chunk it
   * can, whatever the lanes' rates, so that copies and late copies are
   * exercised on any machine. */
  int endgame_always;
  int broken; /* a progress pass failed: the lanes are gone, MPI remains */
  /* wsp__stripe_close runs: nothing is in flight any more, so a pair that
   * fails now (a peer that closed first and exited) is no news. */
  int closing;
  /* The poll set, kept between passes. */
  struct pollfd *pfd;
  int *pfd_owner;
  size_t pfd_cap;
} wsp__stripe_t;

/* striped.c */
int wsp__stripe_create(wsp_comm_t *comm);
int wsp__stripe_free(wsp_comm_t *comm);
/* Advances a pair's exchange over MPI (keys, addresses, the verdict). */
void wsp__pair_advance(wsp__stripe_t *st, wsp__pair_t *pr);
/* The pair's lanes could not be set up: both ends send everything through
 * MPI from now on (the lower rank decides and tells the higher one). */
void wsp__pair_fallback(wsp__stripe_t *st, wsp__pair_t *pr, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* lane.c */
/* A listening socket on addr (any port); the fd, or -1 (errno set). */
int wsp__lane_listen(uint32_t addr, uint16_t *port);
/* This rank's IPv4 addresses and whether each reaches only this host. */
int wsp__lane_addrs(wsp__stripe_t *st);
/* What identifies this host and network namespace (two ranks with equal
 * ids reach each other over loopback). */
void wsp__lane_host_id(unsigned char id[WSP__HOST_ID]);
/* The addresses of `addr` (with their `local` flags) that a peer may use:
 * all of them for a peer on this host; otherwise those that reach beyond
 * this host and that the peer does not have itself (an address on both
 * hosts is each host's own, such as a container bridge). */
int wsp__lane_usable(const uint32_t *addr, const uint8_t *local, int n, int same_host,
                     const uint32_t *peer_addr, int peer_n, uint32_t *out, uint8_t *out_local);
/* Starts a non-blocking connect to addr:port from source `from` (0: the
 * system's choice); the fd, or -1 (errno set). */
int wsp__lane_connect(uint32_t addr, uint16_t port, uint32_t from);
/* The source address the system would use towards addr (0: unknown). */
uint32_t wsp__lane_route_source(uint32_t addr);
/* 1 connected, 0 still in progress, -1 failed (errno set). */
int wsp__lane_connected(int fd);
/* Accepts one connection (close-on-exec, non-blocking); its source. */
int wsp__lane_accept(int lfd, uint32_t *src);
/* Ends the sending side (FIN after what is queued). */
void wsp__lane_shutdown(int fd);
void wsp__lane_options(int fd, size_t lowat);
/* Lane l's unsent mark: its own (wsp__lane_t.lowat), else the engine's. */
size_t wsp__lane_mark(const wsp__lane_t *l, size_t engine);
/* Sets l's mark to `chunk`, never above the engine's (0: the engine's),
 * unless it is already so. A lane takes its next chunk once less than one
 * chunk of the current send waits unsent in it: with the small chunks of a
 * pipeline's segments a fixed mark would keep several segments queued on
 * each lane, and a new segment would wait behind them (docs/results/
 * p2p.md, "Segments over every lane"). */
void wsp__lane_follow(wsp__lane_t *l, size_t engine, size_t chunk);
/* Closes; `reset` makes the peer see a reset rather than an orderly end. */
void wsp__lane_close(int fd, int reset);
/* A lane with this fd, nothing in or out; `sealed` lanes are set up by
 * wsp__lane_seal. */
void wsp__lane_init(wsp__lane_t *l, int fd);
/* Sets up lane li's sealing from the pair's keys (the direction of each
 * key follows which end is the lower rank); 0 or -1. */
int wsp__lane_seal(wsp__lane_t *l, const wsp__keys_t *k, int lower, uint32_t li);
/* Closes the lane's socket and frees what it holds (its sealing). */
void wsp__lane_release(wsp__lane_t *l, int reset);

/* handshake.c */
/* The lower rank: starts the connects of every lane (after the exchange). */
void wsp__hs_connect(wsp__stripe_t *st, wsp__pair_t *pr);
/* The lower rank: lane li's socket reported an event during its handshake. */
void wsp__hs_lane_event(wsp__stripe_t *st, wsp__pair_t *pr, int li);
/* The lower rank: the lanes cannot come up. Closes them, sends the higher
 * rank the verdict (status) over MPI, and falls back to MPI. */
void wsp__hs_failed(wsp__stripe_t *st, wsp__pair_t *pr, int status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
/* The higher rank: listeners for the addresses in pr->mine (their ports
 * into it); addresses that cannot be listened on are dropped from it. */
int wsp__hs_listen(wsp__stripe_t *st, wsp__pair_t *pr);
/* Closes the listeners and pending greetings when no pair is being set up
 * by this rank as the higher one; drops the greetings of `rank` (-1: none). */
void wsp__hs_idle(wsp__stripe_t *st, int rank);
/* The higher rank: a listener is readable. */
void wsp__hs_accept(wsp__stripe_t *st, int lfd);
/* The higher rank: greeting g is readable; expired greetings. */
void wsp__hs_greet_event(wsp__stripe_t *st, size_t g);
void wsp__hs_expire(wsp__stripe_t *st, double now);
/* Whether some pair of st is being set up by this rank as the higher one. */
int wsp__hs_accepting(const wsp__stripe_t *st);

/* engine.c and the files it names */
/* One pass: polls every lane, the listeners and the greetings for at most
 * timeout_us microseconds (0: not at all), moves what can move, advances
 * set-ups. A failure here (a failed poll) fails every pair with lanes
 * (wsp__stripe_break). */
int wsp__stripe_progress(wsp__stripe_t *st, long timeout_us);
/* Every pair with lanes fails with status; later striped transfers of the
 * communicator go through MPI or fail at once. */
void wsp__stripe_break(wsp__stripe_t *st, int status, const char *why);
/* Fails the pair: every request on it completes with status, the peer is
 * told (best effort), its lanes are closed. */
void wsp__pair_fail(wsp__stripe_t *st, wsp__pair_t *pr, int status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
int wsp__pair_ctl(wsp__pair_t *pr, const wsp__frame_t *f);
/* Lets go of the MPI requests of the pair's set-up: receives are
 * cancelled, sends left to complete when the peer takes them. */
void wsp__pair_drop_setup(wsp__pair_t *pr);
/* Writes the control frames waiting (a DONE, say) onto the control lanes,
 * waiting up to `seconds` for room: a wait that completes a receive calls
 * it, so that the sender learns it even if this rank stops calling
 * wirespeed (goes into MPI_Barrier) right after. */
void wsp__stripe_flush(wsp__stripe_t *st, double seconds);
/* Before the communicator is freed: sends what is queued and a BYE on
 * every lane of every pair, then ends the sending side, so that the peer
 * reads every frame (a DONE, say) before it sees the end (at most
 * `seconds` in all). */
void wsp__stripe_close(wsp__stripe_t *st, double seconds);
/* A lanes-path request ready to start: a send waits for its CTS, a receive
 * sends one. */
void wsp__lanes_start(wsp__stripe_t *st, wsp__sreq_t *r);
/* Sets a request done with status (and, failed, why); st->live goes down;
 * a transport's request is told (on_done). */
void wsp__req_finish(wsp__stripe_t *st, wsp__sreq_t *r, int status, const char *why);
/* striped.c: posts a striped transfer as wsp_striped_isend/irecv do (fn
 * names the caller in errors), and frees a request that is done (its
 * status, with the message recorded for it). */
int wsp__striped_post(wsp_comm_t *comm, int is_send, void *buf, size_t bytes, int peer, int tag,
                      wsp_striped_request_t **out, const char *fn);
int wsp__striped_reap(wsp_striped_request_t **req, const char *fn);
/* Tests a request on the MPI path and finishes it when MPI has. */
void wsp__striped_test_mpi(wsp__sreq_t *r);
/* The pair's lanes are up: the probe, or READY when the lanes are forced. */
void wsp__pair_connected(wsp__stripe_t *st, wsp__pair_t *pr);
/* The pair's set-up reached READY (striped.c decides the waiting requests). */
void wsp__pair_ready(wsp__stripe_t *st, wsp__pair_t *pr);
/* Reads what lane li has (at most a budget per call). */
void wsp__lane_read(wsp__stripe_t *st, wsp__pair_t *pr, int li);
/* Queues frame f on lane l (sealed when the lane is), with payload. */
int wsp__lane_set(wsp__lane_t *l, const wsp__frame_t *f, const void *pay, size_t len);
/* Between the engine's files (engine.c says which does what). */
/* Unlinks r from the queue head..tail. */
void wsp__q_remove(wsp__sreq_t **head, wsp__sreq_t **tail, wsp__sreq_t *r);
/* The peer said BYE: waiting requests fail; with none the pair just ends. */
void wsp__pair_closed(wsp__stripe_t *st, wsp__pair_t *pr);
/* Matches sends, in posting order, with the earliest CTS of their tag. */
void wsp__pair_match(wsp__stripe_t *st, wsp__pair_t *pr);
/* Advances the pair's count of CTS frames seen in sequence. */
void wsp__pair_cts_seen(wsp__pair_t *pr);
/* What the kernel knows of a lane's TCP connection (tcpinfo.c): 0, or -1
 * when it cannot say (then *s is all 0). */
typedef struct wsp__tcpstat {
  uint32_t segs_out, retrans, min_rtt_us, srtt_us, mss;
  int slow_start;
} wsp__tcpstat_t;
int wsp__tcpstat(int fd, wsp__tcpstat_t *s);
/* The standing queue of the lanes to peer (s): the mean over every data
 * lane the probe opened of the kernel's smoothed round trip less its
 * least one; 0 when the kernel cannot say or no lanes are open. Read after
 * the probe, on the end that streamed, it is the queue the loaded lanes
 * built (the probe's last phase ran them all). */
double wsp__stripe_queue(const wsp_comm_t *comm, int peer);

/* The probe's streamed bytes arrived (n of them), and its phase's end. */
void wsp__probe_bytes(wsp__stripe_t *st, wsp__pair_t *pr, size_t n);
void wsp__probe_end(wsp__stripe_t *st, wsp__pair_t *pr);
/* Whether lane li has a frame to write; writes them (engine_out.c). */
int wsp__lane_has_work(const wsp__pair_t *pr, int li);
void wsp__lane_write(wsp__stripe_t *st, wsp__pair_t *pr, int li, int ctl_only);
/* Forgets the chunks TCP delivered on l and samples its rate. */
void wsp__lane_account(wsp__lane_t *l, double now, int always);
/* The path as the probe saw it: one lane's rate and all lanes' (bytes/s),
 * the round trip (s), the share of segments lost, the segment size, and
 * whether the one lane's rate is a ramp (its kernel still called it in its
 * first slow start, and the probe was too short for a ramp to fill the
 * path: wsp__stripe_ramping). */
typedef struct wsp__path {
  double rate1, ratek, rtt, loss, mss;
  int ramping;
} wsp__path_t;
/* The probe's choice (engine_pair.c says why): the lanes to use of
 * nlanes, and the smallest message striped (SIZE_MAX: none), never
 * below min. */
void wsp__stripe_choose(const wsp__path_t *p, int nlanes, size_t min, int *k, size_t *threshold);
/* The model under it: the rate one flow lasts at, and the time n bytes
 * take over k cold flows that together last at cap bytes/s. */
double wsp__stripe_one_flow(const wsp__path_t *p);
/* The loss rate to price from a probe's count of loss episodes among the
 * segments it sent: the most the count leaves possible (engine_pair.c). */
double wsp__stripe_loss(uint64_t episodes, uint64_t segs);
/* Whether the probe's one lane, `flagged` by its kernel as in slow start
 * at the end of its probe_s-second stream, measured a ramp (engine_pair.c
 * says why). */
int wsp__stripe_ramping(const wsp__path_t *p, int flagged, double probe_s);
double wsp__stripe_time(const wsp__path_t *p, int k, double cap, double n);
/* A probe phase's rate from its window: `bytes` over `span` seconds, and
 * the same bytes by n slices of dt seconds each; rtt is the path's round
 * trip (engine_pair.c says when the slices' median is taken). */
double wsp__probe_rate(const double *slice, int n, double dt, double bytes, double span,
                       double rtt);
/* The slice (0 to WSP__PROBE_SLICES - 1) of a read `since` seconds into
 * the window, whose slices last dt seconds: the last takes what comes
 * after the window's end, and without slices (dt <= 0) the first. */
int wsp__probe_slice_of(double since, double dt);
/* The chunk of a send of `size` bytes over k data lanes whose probe
 * measured ratek bytes/s together (0: not measured); `forced` is
 * WSP_P2P_CHUNK (0: choose), `sealed` whether the lanes are sealed. */
size_t wsp__stripe_chunk(size_t size, int k, double ratek, size_t forced, int sealed);

#endif
