/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Every message tag wirespeed uses, in one place, so that two parts of the
 * library can never pick the same one by accident.
 *
 * All of them are on wirespeed's private duplicate of the user's
 * communicator (wsp_comm_t.mpi), except the shuffle's, which has a
 * duplicate of its own per open shuffle. Parts that may run back to back on
 * the same communicator (two sparse rounds, a collective after a sparse
 * round) are kept apart by their tags; overlapping rounds of one part by
 * the part's own protocol (the sparse round's parity bit, for instance).
 */
#ifndef WSP_TAGS_H
#define WSP_TAGS_H

enum {
  /* The agreement (src/core/agree.c): reports up a tree, the verdict down. */
  WSP__TAG_AGREE = 0x5a00,
  /* The model's calibration (src/model), during
   * wsp_comm_create only. */
  WSP__TAG_CALIBRATE = 0x5b00,
  /* The network map's probe (src/netmap): round trips and streams, and
   * the eager-limit search's data and verdicts. */
  WSP__TAG_PROBE = 0x5b10,
  WSP__TAG_PROBE_EAGER = 0x5b11,
  WSP__TAG_PROBE_VERDICT = 0x5b12,
  /* Striped point-to-point (src/p2p): a pair's address exchange. The
   * striped messages that go through MPI use the user's tags on a
   * communicator of their own (wsp__stripe_t.p2p). */
  WSP__TAG_STRIPE_SETUP = 0x5b20,
  /* The collectives' transport (src/p2p/xport.c), on its communicator:
   * a rank's notice that a lane failed under a transfer. */
  WSP__TAG_LANE_FAULT = 0x5b21,
  /* Collectives: WSP__TAG_COLL + the wsp_coll_t (src/coll). */
  WSP__TAG_COLL = 0x5c00,
  /* The multi-site bcast and allreduce: whether a pair's crossings over
   * lanes arrived (src/coll/coll_sites.c, wsp__wan_finish). */
  WSP__TAG_SITES_LANES = 0x5c40,
  /* The multi-site pipelined broadcast (bcast sites_chain): chain c on
   * WSP__TAG_SITES_CHAIN + c, c < WSP__SITES_CHAIN_MAX. */
  WSP__TAG_SITES_CHAIN = 0x5d00,
  WSP__SITES_CHAIN_MAX = 0x100,
  /* Sparse exchange (src/exchange/sparse*.c); pairs by round parity. */
  WSP__TAG_SPARSE_EVEN = 0x5e00, /* rounds with an even round number */
  WSP__TAG_SPARSE_ODD = 0x5e01,
  WSP__TAG_SPARSE_TAIL_EVEN = 0x5e02, /* alltoallv: parts past the int limit */
  WSP__TAG_SPARSE_TAIL_ODD = 0x5e03,
  WSP__TAG_SPARSE_SUM_EVEN = 0x5e04, /* nbx: the consensus sum */
  WSP__TAG_SPARSE_SUM_ODD = 0x5e05,
  WSP__TAG_SPARSE_REPORT_EVEN = 0x5e06, /* auto: the timing report */
  WSP__TAG_SPARSE_REPORT_ODD = 0x5e07,
  /* A message that goes over the lanes (src/exchange/sparse.c): its size,
   * announced through MPI where the receivers probe, and its bytes, which
   * the receiver then asks for from that rank (exact). */
  WSP__TAG_SPARSE_ANNOUNCE_EVEN = 0x5e08,
  WSP__TAG_SPARSE_ANNOUNCE_ODD = 0x5e09,
  WSP__TAG_SPARSE_LANES_EVEN = 0x5e0a,
  WSP__TAG_SPARSE_LANES_ODD = 0x5e0b,
  /* The shuffle, on its own communicator (src/exchange/shuffle*.c). */
  WSP__TAG_SHUFFLE_REQ = 1,
  WSP__TAG_SHUFFLE_RESP = 2,
  WSP__TAG_SHUFFLE_DONE = 3,  /* the termination sum */
  WSP__TAG_SHUFFLE_CHECK = 4, /* the sum of requests served, after it */
  /* A response chunk over the shuffle's lanes: its announcement goes with
   * WSP__TAG_SHUFFLE_RESP, where the requester probes, and its bytes with
   * this tag, which the requester then asks for from that rank (exact). */
  WSP__TAG_SHUFFLE_LANES = 0x5f00,
};

/* The tag of one collective. */
#define WSP__COLL_TAG(coll) (WSP__TAG_COLL + (int)(coll))
/* Whether the receives of messages with this tag always name their source
 * and give the sent size (no probe, no wildcard): the collectives', and
 * the sparse exchange's and the shuffle's announced messages, whose
 * transfers may then go over the lanes (src/p2p/xport.c). */
static inline int wsp__tag_exact(int tag) {
  return (tag >= WSP__TAG_COLL && tag < WSP__TAG_SITES_LANES) ||
         tag == WSP__TAG_SPARSE_LANES_EVEN || tag == WSP__TAG_SPARSE_LANES_ODD ||
         tag == WSP__TAG_SHUFFLE_LANES;
}

#endif
