/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * WSP_CHECK: the ranks compare a collective's arguments before it runs.
 *
 * Like MPI, wirespeed takes a collective whose ranks pass different counts,
 * types, ops or roots as erroneous, and then anything may happen: a rank
 * waits for a message that never comes, or a buffer is overrun. With
 * cfg.check (WSP_CHECK=1) each public collective first describes what it
 * was given, in a few integers every rank should share:
 *   - the collective and the root (-1 where there is none);
 *   - the op, as its index among MPI's predefined ops (a user-defined op
 *     is "user": its handle means nothing on another rank);
 *   - the type signature of the data one rank contributes or receives (the
 *     whole message for bcast, reduce and allreduce, one rank's block for
 *     the others, from the arguments that are significant on that rank),
 *     as a number of basic elements and a hash of their sequence. MPI
 *     requires equal signatures, not equal types: 4 x MPI_DOUBLE and one
 *     contiguous type of 4 doubles match, 8 x MPI_INT and 4 x MPI_DOUBLE do
 *     not;
 *   - whether the rank refuses its own arguments (an invalid type or root).
 * One allreduce of each value and its negation under MPI_MIN gives every
 * rank the least and the largest (non-blocking, waited for with the
 * back-off); where they differ, an allgather (only
 * then) finds the first rank that differs from rank 0 and in what, and
 * every rank returns WSP_ERR_MISMATCH naming it (WSP_ERR_ARG, as without
 * the check, where every rank refuses the same root or type). No rank has sent anything of
 * the collective yet, so nothing waits and the communicator stays usable.
 * The cost is that one small allreduce per call (docs/results/coll.md).
 *
 * The signature hash. A type's signature is the sequence of basic types it
 * holds; the hash of a sequence s of n elements is the polynomial
 * sum s_i x^(n-1-i) modulo 2^61 - 1, which composes: the hash of a
 * concatenation A.B is h(A) x^|B| + h(B), and of k copies of A follows by
 * doubling. So each combiner (contiguous, vector, indexed, struct,
 * subarray, ...) maps to repeats and concatenations of its inner types,
 * read with MPI_Type_get_contents; a combiner without a rule here (darray,
 * the Fortran parameterised types) counts as one element of its own
 * kind and size, which still matches itself on every rank.
 */
#include "coll_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#define WSP__SIG_MOD ((UINT64_C(1) << 61) - 1)
#define WSP__SIG_X UINT64_C(1000003)
enum { WSP__SIG_DEPTH = 16, WSP__CHECK_N = 6 };

typedef struct {
  uint64_t h;   /* hash, < 2^61 - 1 */
  uint64_t len; /* basic elements (saturating far above any real count) */
} wsp__sig_t;

static uint64_t wsp__mulmod(uint64_t a, uint64_t b) {
  unsigned __int128 p = (unsigned __int128)a * b;
  uint64_t lo = (uint64_t)(p & WSP__SIG_MOD), hi = (uint64_t)(p >> 61);
  uint64_t r = lo + hi;
  return r >= WSP__SIG_MOD ? r - WSP__SIG_MOD : r;
}

static uint64_t wsp__powmod(uint64_t e) {
  uint64_t r = 1, b = WSP__SIG_X;
  for (; e; e >>= 1, b = wsp__mulmod(b, b))
    if (e & 1) r = wsp__mulmod(r, b);
  return r;
}

static wsp__sig_t wsp__sig_cat(wsp__sig_t a, wsp__sig_t b) {
  uint64_t h = wsp__mulmod(a.h, wsp__powmod(b.len)) + b.h;
  wsp__sig_t r = {h >= WSP__SIG_MOD ? h - WSP__SIG_MOD : h, a.len + b.len};
  return r;
}

static wsp__sig_t wsp__sig_rep(wsp__sig_t a, uint64_t k) {
  wsp__sig_t r = {0, 0};
  for (; k; k >>= 1, a = wsp__sig_cat(a, a))
    if (k & 1) r = wsp__sig_cat(r, a);
  return r;
}

/* A basic type: its index among MPI's predefined types (the same on every
 * rank of one MPI), or its size past them for one this table lacks. */
static wsp__sig_t wsp__sig_named(MPI_Datatype t) {
  static const MPI_Datatype known[] = {
      MPI_CHAR, MPI_SIGNED_CHAR, MPI_UNSIGNED_CHAR, MPI_BYTE, MPI_WCHAR, MPI_SHORT,
      MPI_UNSIGNED_SHORT, MPI_INT, MPI_UNSIGNED, MPI_LONG, MPI_UNSIGNED_LONG,
      MPI_LONG_LONG, MPI_UNSIGNED_LONG_LONG, MPI_FLOAT, MPI_DOUBLE, MPI_LONG_DOUBLE,
      MPI_INT8_T, MPI_INT16_T, MPI_INT32_T, MPI_INT64_T, MPI_UINT8_T, MPI_UINT16_T,
      MPI_UINT32_T, MPI_UINT64_T, MPI_C_BOOL, MPI_C_FLOAT_COMPLEX, MPI_C_DOUBLE_COMPLEX,
      MPI_AINT, MPI_OFFSET, MPI_COUNT, MPI_PACKED, MPI_FLOAT_INT, MPI_DOUBLE_INT,
      MPI_LONG_INT, MPI_2INT, MPI_SHORT_INT, MPI_LONG_DOUBLE_INT};
  uint64_t id = 0;
  for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
    if (t == known[i]) id = i + 1;
  if (id == 0) {
    int size = 0;
    if (MPI_Type_size(t, &size) != MPI_SUCCESS) size = 0;
    id = 1000 + (uint64_t)size;
  }
  wsp__sig_t r = {id, 1};
  return r;
}

static void wsp__sig_free(MPI_Datatype t) {
  int ni, na, nt, comb;
  if (MPI_Type_get_envelope(t, &ni, &na, &nt, &comb) == MPI_SUCCESS &&
      comb != MPI_COMBINER_NAMED)
    MPI_Type_free(&t);
}

/* The signature of one element of t; *ok = 0 where MPI cannot describe t. */
static wsp__sig_t wsp__sig_type(MPI_Datatype t, int depth, int *ok) {
  wsp__sig_t r = {0, 0};
  int ni, na, nt, comb;
  if (depth > WSP__SIG_DEPTH || MPI_Type_get_envelope(t, &ni, &na, &nt, &comb) != MPI_SUCCESS) {
    *ok = 0;
    return r;
  }
  if (comb == MPI_COMBINER_NAMED) return wsp__sig_named(t);
  int *ints = malloc(sizeof(int) * (size_t)(ni > 0 ? ni : 1));
  MPI_Aint *addrs = malloc(sizeof(MPI_Aint) * (size_t)(na > 0 ? na : 1));
  MPI_Datatype *types = malloc(sizeof(MPI_Datatype) * (size_t)(nt > 0 ? nt : 1));
  if (ints == NULL || addrs == NULL || types == NULL ||
      MPI_Type_get_contents(t, ni, na, nt, ints, addrs, types) != MPI_SUCCESS) {
    free(ints), free(addrs), free(types);
    *ok = 0;
    return r;
  }
  uint64_t k = 1;
  int repeat = 1; /* the signature is k copies of types[0]'s */
  switch (comb) {
  case MPI_COMBINER_DUP:
  case MPI_COMBINER_RESIZED:
    break;
  case MPI_COMBINER_CONTIGUOUS:
    k = (uint64_t)ints[0];
    break;
  case MPI_COMBINER_VECTOR:
  case MPI_COMBINER_HVECTOR:
  case MPI_COMBINER_INDEXED_BLOCK:
  case MPI_COMBINER_HINDEXED_BLOCK:
    k = (uint64_t)ints[0] * (uint64_t)ints[1];
    break;
  case MPI_COMBINER_INDEXED:
  case MPI_COMBINER_HINDEXED:
    k = 0;
    for (int i = 0; i < ints[0]; i++) k += (uint64_t)ints[1 + i];
    break;
  case MPI_COMBINER_SUBARRAY:
    for (int i = 0; i < ints[0]; i++) k *= (uint64_t)ints[1 + ints[0] + i];
    break;
  case MPI_COMBINER_STRUCT:
    repeat = 0;
    for (int i = 0; i < ints[0] && *ok; i++)
      r = wsp__sig_cat(r, wsp__sig_rep(wsp__sig_type(types[i], depth + 1, ok),
                                       (uint64_t)ints[1 + i]));
    break;
  default: {
    /* No rule (darray, Fortran parameterised types): one element of a
     * kind of its own. */
    int size = 0;
    if (MPI_Type_size(t, &size) != MPI_SUCCESS) *ok = 0;
    r.h = 100000 + (uint64_t)comb * 65536 + (uint64_t)size % 65536;
    r.len = 1;
    repeat = 0;
    break;
  }
  }
  if (repeat && nt > 0) r = wsp__sig_rep(wsp__sig_type(types[0], depth + 1, ok), k);
  for (int i = 0; i < nt; i++) wsp__sig_free(types[i]);
  free(ints), free(addrs), free(types);
  return r;
}

/* MPI's predefined ops by index; a user-defined op is 100. */
static int64_t wsp__op_id(MPI_Op op) {
  static const MPI_Op known[] = {MPI_MAX, MPI_MIN, MPI_SUM,  MPI_PROD,   MPI_LAND,
                                 MPI_BAND, MPI_LOR, MPI_BOR,  MPI_LXOR,   MPI_BXOR,
                                 MPI_MINLOC, MPI_MAXLOC, MPI_REPLACE, MPI_NO_OP};
  if (op == MPI_OP_NULL) return 0;
  for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
    if (op == known[i]) return (int64_t)i + 1;
  return 100;
}

static const char *wsp__op_text(int64_t id, char *buf, size_t n) {
  static const char *const names[] = {"no op",    "MPI_MAX",    "MPI_MIN",    "MPI_SUM",
                                      "MPI_PROD", "MPI_LAND",   "MPI_BAND",   "MPI_LOR",
                                      "MPI_BOR",  "MPI_LXOR",   "MPI_BXOR",   "MPI_MINLOC",
                                      "MPI_MAXLOC", "MPI_REPLACE", "MPI_NO_OP"};
  if (id >= 0 && id < (int64_t)(sizeof names / sizeof names[0])) return names[id];
  snprintf(buf, n, "a user-defined op");
  return buf;
}

int wsp__coll_check(wsp_comm_t *comm, const char *fn, const wsp__check_args_t *c) {
  int ok = 1, size = 0;
  wsp__sig_t s = {0, 0};
  if (c->type == MPI_DATATYPE_NULL || MPI_Type_size(c->type, &size) != MPI_SUCCESS) ok = 0;
  if (ok) s = wsp__sig_rep(wsp__sig_type(c->type, 0, &ok), (uint64_t)c->count);
  int bad_root = c->root != -1 && (c->root < 0 || c->root >= comm->size);
  /* What this rank was given; v holds it and its negation. */
  int64_t mine[WSP__CHECK_N] = {c->coll,
                                c->root,
                                wsp__op_id(c->op),
                                ok ? (int64_t)(s.len > INT64_MAX / 2 ? INT64_MAX / 2 : s.len) : -1,
                                ok ? (int64_t)s.h : -1,
                                !ok || bad_root || c->refused};
  int64_t v[2 * WSP__CHECK_N];
  for (int i = 0; i < WSP__CHECK_N; i++) v[i] = mine[i], v[WSP__CHECK_N + i] = -mine[i];
  /* Non-blocking and waited for with the back-off, as wirespeed's own
   * waits: a blocking MPI_Allreduce spins in MPICH, which on shared cores
   * made the check cost far more than the call (docs/results/coll.md). */
  int rc = wsp__allreduce_wait(comm, v, 2 * WSP__CHECK_N, MPI_INT64_T, MPI_MIN);
  if (rc != WSP_OK) return rc;
  int same = 1;
  for (int i = 0; i < WSP__CHECK_N; i++) same &= v[i] == -v[WSP__CHECK_N + i];
  if (same && !mine[5]) return WSP_OK;
  if (same && c->refused) /* every rank refused its own: the caller says why */
    return WSP_ERR_ARG;
  if (same) /* every rank refuses the same root or type: say why, as without the check */
    return bad_root ? wsp__fail(comm, WSP_ERR_ARG, "%s: root = %d is out of range [0, %d)", fn,
                                c->root, comm->size)
                    : wsp__fail(comm, WSP_ERR_ARG, "%s: the datatype is not valid", fn);
  /* They differ: every rank's values, to name the first that differs. */
  int64_t *all = malloc(sizeof(int64_t) * WSP__CHECK_N * (size_t)comm->size);
  rc = wsp__agree_alloc(comm, all == NULL, fn);
  if (rc != WSP_OK) {
    free(all);
    return rc;
  }
  WSP__MPI_COLL_GOTO(comm, rc, gathered, Allgather, mine, WSP__CHECK_N, MPI_INT64_T, all,
                     WSP__CHECK_N, MPI_INT64_T, comm->mpi);
gathered:
  if (rc != WSP_OK) {
    free(all);
    return rc;
  }
  const int64_t *r0 = all, *x = all;
  int who = 0, what = -1;
  for (int r = 0; r < comm->size && what < 0; r++) {
    x = all + (size_t)r * WSP__CHECK_N;
    who = r;
    if (x[5]) what = 5;
    for (int i = 0; i < 5 && what < 0; i++)
      if (x[i] != r0[i]) what = i;
  }
  char a[64], b[64];
  switch (what) {
  case 0:
    rc = wsp__fail(comm, WSP_ERR_MISMATCH, "%s: WSP_CHECK: rank %d called %s where rank 0 called %s",
                   fn, who, wsp_coll_name((wsp_coll_t)x[0]), wsp_coll_name((wsp_coll_t)r0[0]));
    break;
  case 1:
    rc = wsp__fail(comm, WSP_ERR_MISMATCH,
                   "%s: WSP_CHECK: root differs: rank 0 passed %" PRId64 ", rank %d passed %" PRId64,
                   fn, r0[1], who, x[1]);
    break;
  case 2:
    rc = wsp__fail(comm, WSP_ERR_MISMATCH,
                   "%s: WSP_CHECK: op differs: rank 0 passed %s, rank %d passed %s", fn,
                   wsp__op_text(r0[2], a, sizeof a), who, wsp__op_text(x[2], b, sizeof b));
    break;
  case 3:
  case 4:
    rc = wsp__fail(comm, WSP_ERR_MISMATCH,
                   "%s: WSP_CHECK: count or datatype differs: rank 0's data holds %" PRId64
                   " basic elements, rank %d's %" PRId64 "%s",
                   fn, r0[3], who, x[3],
                   what == 4 ? ", of other types (the type signatures differ)" : "");
    break;
  default:
    rc = wsp__fail(comm, WSP_ERR_MISMATCH,
                   "%s: WSP_CHECK: rank %d refused its own arguments (a root out of range, "
                   "an invalid datatype, or for a vector form any of its own arguments)",
                   fn, who);
    break;
  }
  free(all);
  return rc;
}
