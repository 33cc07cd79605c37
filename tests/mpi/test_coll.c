/*
 * Collectives against native MPI. For one collective (or all), every
 * algorithm of its table plus auto is run over
 *   datatypes  MPI_INT, MPI_DOUBLE (integer values, so sums are exact in any
 *              order), a derived contiguous type of two unsigned ints, and
 *              for data movement a non-contiguous vector type (holes must
 *              stay untouched) and a gap-free type holding its two ints in
 *              reverse order, sent with that type and received as MPI_INT;
 *   ops        MPI_SUM, MPI_MAX, and a user-defined non-commutative op
 *              (composition of affine maps x -> a.x + b mod 2^32 on the
 *              two-unsigned type), so rank order matters;
 *   counts     0, 1, 7 (odd), and a count past the eager limit (~100 KB);
 *   roots      0, p-1 and p/2; MPI_IN_PLACE wherever MPI allows it;
 * and the output is compared byte for byte with what the MPI library's own
 * collective produces on MPI_COMM_WORLD from the same inputs.
 *
 * With --map, a network map is attached first (wsp_comm_set_netmap) and
 * only `aware` and auto run (unless --alg says otherwise): `probe` measures
 * one, `random` makes one of seeded random latencies and bandwidths per
 * pair of nodes (and a 4 KiB eager limit, so that the small counts get
 * eager trees and the large one rendezvous trees), whose trees take every
 * shape, unlike those of a uniform machine; `uniform` makes one of the same
 * figures for every pair, on which bcast and reduce send their large count
 * along a path in segments (checked, at three ranks or more). Without a
 * map, `aware` falls back to binomial.
 *
 * usage: test_coll [--coll NAME] [--alg NAME] [--quick] [--big-bytes B]
 *                  [--map probe|random|uniform]
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wirespeed.h"
#include "../../src/netmap/netmap.h"
#include "../../src/coll/aware.h"

static int rank, size;
static long failures, cases;
static const char *map_mode; /* --map */

#define FAIL(...)                                                           \
  do {                                                                      \
    if (failures++ < 20) {                                                  \
      fprintf(stderr, "FAIL rank %d: ", rank);                              \
      fprintf(stderr, __VA_ARGS__);                                         \
      fprintf(stderr, "\n");                                                \
    }                                                                       \
  } while (0)

/* ---- the non-commutative op: affine maps composed in rank order ---- */
typedef struct {
  uint32_t a, b;
} affine_t;

/* inout = in o inout, "apply in's map first, then inout's". */
static void affine_op(void *in, void *inout, int *len, MPI_Datatype *dt) {
  (void)dt;
  affine_t *x = in, *y = inout;
  for (int i = 0; i < *len; i++) {
    uint32_t a = x[i].a * y[i].a, b = x[i].b * y[i].a + y[i].b;
    y[i].a = a;
    y[i].b = b;
  }
}

typedef struct {
  const char *name;
  MPI_Datatype type;
  size_t size;   /* bytes of data per element */
  size_t extent; /* bytes of buffer per element */
  int movement_only;
  /* The receive side's type and count multiplier: differs from the send
   * side for "perm" (a type storing its two ints in reverse order, received
   * as plain ints), where only the element order tells right from wrong. */
  MPI_Datatype rtype;
  int rmul;
} dtype_t;

typedef struct {
  const char *name;
  MPI_Op op;
  int dtype; /* index into the dtype table it applies to; -1: int and double */
} op_t;

static dtype_t dtypes[5];
static int ndtypes;
static op_t ops[3];
static MPI_Op affine;

/* Whether the MPI library's datatype engine moves the "perm" type right:
 * three elements sent to self and received as six ints must come out with
 * each pair swapped, and MPI_Pack must give the same bytes. SimGrid 3.32
 * gets count > 1 wrong (it gives 1 0 1 1 2 2 for 0 1 2 3 4 5); the perm
 * cases then test the library's bug, not wirespeed, and are skipped. Every
 * rank runs the same probe; the result is agreed so that all skip alike. */
static int perm_type_works(MPI_Datatype perm) {
  int src[6] = {0, 1, 2, 3, 4, 5}, want[6] = {1, 0, 3, 2, 5, 4};
  int got[6] = {-1, -1, -1, -1, -1, -1}, packed[6] = {-1, -1, -1, -1, -1, -1};
  MPI_Sendrecv(src, 3, perm, 0, 0, got, 6, MPI_INT, 0, 0, MPI_COMM_SELF,
               MPI_STATUS_IGNORE);
  int pos = 0;
  MPI_Pack(src, 3, perm, packed, (int)sizeof packed, &pos, MPI_COMM_SELF);
  int ok = memcmp(got, want, sizeof want) == 0 &&
           memcmp(packed, want, sizeof want) == 0 && pos == (int)sizeof want;
  int all = 0;
  MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return all;
}

static void make_types(void) {
  MPI_Datatype pair, vec;
  MPI_Type_contiguous(2, MPI_UNSIGNED, &pair);
  MPI_Type_commit(&pair);
  /* Two ints with a one-int hole between them, extent three ints. */
  MPI_Datatype v0;
  MPI_Type_vector(2, 1, 2, MPI_INT, &v0);
  MPI_Type_create_resized(v0, 0, 3 * sizeof(int), &vec);
  MPI_Type_free(&v0);
  MPI_Type_commit(&vec);
  MPI_Datatype perm;
  int displs[2] = {1, 0};
  MPI_Type_create_indexed_block(2, 1, displs, MPI_INT, &perm);
  MPI_Type_commit(&perm);
  dtypes[0] = (dtype_t){"int", MPI_INT, sizeof(int), sizeof(int), 0, MPI_INT, 1};
  dtypes[1] = (dtype_t){"double", MPI_DOUBLE, sizeof(double), sizeof(double), 0, MPI_DOUBLE, 1};
  dtypes[2] = (dtype_t){"pair", pair, 2 * sizeof(unsigned), 2 * sizeof(unsigned), 0, pair, 1};
  dtypes[3] = (dtype_t){"vector", vec, 2 * sizeof(int), 3 * sizeof(int), 1, vec, 1};
  dtypes[4] = (dtype_t){"perm", perm, 2 * sizeof(int), 2 * sizeof(int), 1, MPI_INT, 2};
  ndtypes = perm_type_works(perm) ? 5 : 4;
  if (ndtypes == 4 && rank == 0)
    printf("  (perm type skipped: this MPI library packs an out-of-order indexed type "
           "wrongly, so neither it nor wirespeed, which packs with it, can pass)\n");
  MPI_Op_create(affine_op, 0, &affine);
  ops[0] = (op_t){"sum", MPI_SUM, -1};
  ops[1] = (op_t){"max", MPI_MAX, -1};
  ops[2] = (op_t){"affine", affine, 2};
}

/* Deterministic input: element i of rank r's block `blk`. Hole bytes of the
 * vector type are a sentinel that no collective may change. */
static void fill(const dtype_t *d, void *buf, size_t count, int r, int blk,
                 unsigned salt) {
  unsigned char *b = buf;
  memset(b, 0xA5, count * d->extent);
  for (size_t i = 0; i < count; i++) {
    unsigned v = (unsigned)(r * 7919 + blk * 104729 + (int)(i % 100003) * 31 + (int)salt);
    unsigned char *e = b + i * d->extent;
    if (d->type == MPI_INT) {
      int x = (int)(v % 1000) - 500;
      memcpy(e, &x, sizeof x);
    } else if (d->type == MPI_DOUBLE) {
      double x = (double)((int)(v % 2000) - 1000);
      memcpy(e, &x, sizeof x);
    } else if (strcmp(d->name, "pair") == 0) {
      affine_t x = {v * 2654435761u | 1u, v * 40503u + 17u};
      memcpy(e, &x, sizeof x);
    } else if (strcmp(d->name, "perm") == 0) {
      int x[2] = {(int)v, (int)(v * 3u + 1u)};
      memcpy(e, x, sizeof x);
    } else { /* vector: ints at 0 and 2, hole at 1 */
      int x0 = (int)v, x2 = (int)(v ^ 0x5bd1e995u);
      memcpy(e, &x0, sizeof x0);
      memcpy(e + 2 * sizeof(int), &x2, sizeof x2);
    }
  }
}

/* The "perm" type's data as the receiver sees it (MPI_INT): each element's
 * two ints in type-map order, i.e. swapped in memory. Computed here rather
 * than taken from the MPI library: Open MPI 4.1.4's MPI_Alltoall gets this
 * mixed-type case wrong at 16 ranks (all of wirespeed's algorithms agree
 * with this independent reference there). */
static void expect_perm(const dtype_t *d, void *buf, size_t count, int r, int blk,
                        unsigned salt) {
  fill(d, buf, count, r, blk, salt);
  int *x = buf;
  for (size_t i = 0; i < count; i++) {
    int t = x[2 * i];
    x[2 * i] = x[2 * i + 1];
    x[2 * i + 1] = t;
  }
}

static int compare(const char *what, const void *got, const void *want,
                   size_t bytes) {
  if (bytes == 0 || memcmp(got, want, bytes) == 0) return 0;
  const unsigned char *g = got, *w = want;
  size_t i = 0;
  while (g[i] == w[i]) i++;
  FAIL("%s: byte %zu of %zu differs (got 0x%02x, want 0x%02x)", what, i, bytes,
       g[i], w[i]);
  return 1;
}

static void *xmalloc(size_t n) {
  void *p = malloc(n ? n : 1);
  if (!p) {
    fprintf(stderr, "test_coll: out of memory\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  return p;
}

static void check_rc(const char *what, int rc) {
  if (rc != WSP_OK) FAIL("%s: %s: %s", what, wsp_err_name(rc), wsp_last_error());
}

/* One case. Returns nothing; failures are counted. */
static void run_case(wsp_comm_t *w, wsp_coll_t coll, const char *alg,
                     const dtype_t *d, const op_t *op, size_t count, int root,
                     int inplace) {
  char what[256];
  snprintf(what, sizeof what, "%s/%s type %s%s%s count %zu root %d%s",
           wsp_coll_name(coll), alg, d->name, op ? " op " : "",
           op ? op->name : "", count, root, inplace ? " in-place" : "");
  cases++;
  int p = size, me = rank;
  size_t ext = d->extent, blk = count * ext;
  int rc;
  unsigned salt = (unsigned)count * 3u + (unsigned)root;
  switch (coll) {
  case WSP_COLL_BCAST: {
    char *got = xmalloc(blk), *want = xmalloc(blk);
    if (me == root) fill(d, got, count, me, 0, salt);
    else fill(d, got, count, 999, 1, salt); /* garbage to overwrite */
    memcpy(want, got, blk);
    /* Mixed types: the root sends d->type, the others receive rtype. */
    MPI_Datatype bt = me == root ? d->type : d->rtype;
    size_t bc = me == root ? count : count * (size_t)d->rmul;
    if (d->rmul != 1 && me != root) expect_perm(d, want, count, root, 0, salt);
    else if (d->rmul == 1) MPI_Bcast(want, (int)bc, bt, root, MPI_COMM_WORLD);
    rc = wsp_bcast(w, got, bc, bt, root);
    check_rc(what, rc);
    if (rc == WSP_OK) compare(what, got, want, blk);
    free(got), free(want);
    break;
  }
  case WSP_COLL_REDUCE:
  case WSP_COLL_ALLREDUCE: {
    char *in = xmalloc(blk), *got = xmalloc(blk), *want = xmalloc(blk);
    fill(d, in, count, me, 0, salt);
    memset(got, 0x5a, blk);
    memset(want, 0x5a, blk);
    int out_here = coll == WSP_COLL_ALLREDUCE || me == root;
    int ip = inplace && out_here;
    if (coll == WSP_COLL_ALLREDUCE) {
      MPI_Allreduce(in, want, (int)count, d->type, op->op, MPI_COMM_WORLD);
      if (ip) memcpy(got, in, blk);
      rc = wsp_allreduce(w, ip ? MPI_IN_PLACE : in, got, count, d->type, op->op);
    } else {
      MPI_Reduce(in, want, (int)count, d->type, op->op, root, MPI_COMM_WORLD);
      if (ip) memcpy(got, in, blk);
      rc = wsp_reduce(w, ip ? MPI_IN_PLACE : in, out_here ? got : NULL, count,
                      d->type, op->op, root);
    }
    check_rc(what, rc);
    if (rc == WSP_OK && out_here) compare(what, got, want, blk);
    /* The input of a non-in-place call must not change. */
    if (!ip) {
      char *orig = xmalloc(blk);
      fill(d, orig, count, me, 0, salt);
      compare("input changed", in, orig, blk);
      free(orig);
    }
    free(in), free(got), free(want);
    break;
  }
  case WSP_COLL_GATHER:
  case WSP_COLL_ALLGATHER: {
    int all = coll == WSP_COLL_ALLGATHER;
    int out_here = all || me == root;
    char *in = xmalloc(blk), *got = xmalloc(blk * (size_t)p),
         *want = xmalloc(blk * (size_t)p);
    fill(d, in, count, me, 0, salt);
    memset(got, 0x5a, blk * (size_t)p);
    memset(want, 0x5a, blk * (size_t)p);
    int ip = inplace && out_here;
    /* In place, the own block's holes (vector type) hold the input's; the
     * reference gets the same so that whole buffers compare. */
    if (ip) memcpy(want + (size_t)me * blk, in, blk);
    int rcnt = (int)(count * (size_t)d->rmul);
    if (d->rmul != 1) {
      for (int i = 0; i < p; i++) expect_perm(d, want + (size_t)i * blk, count, i, 0, salt);
    } else if (all) {
      MPI_Allgather(in, (int)count, d->type, want, rcnt, d->rtype, MPI_COMM_WORLD);
    } else {
      MPI_Gather(in, (int)count, d->type, want, rcnt, d->rtype, root, MPI_COMM_WORLD);
    }
    if (ip) memcpy(got + (size_t)me * blk, in, blk);
    if (all)
      rc = wsp_allgather(w, ip ? MPI_IN_PLACE : in, count, d->type, got,
                         count * (size_t)d->rmul, d->rtype);
    else
      rc = wsp_gather(w, ip ? MPI_IN_PLACE : in, count, d->type,
                      out_here ? got : NULL, count * (size_t)d->rmul, d->rtype, root);
    check_rc(what, rc);
    if (rc == WSP_OK && out_here) compare(what, got, want, blk * (size_t)p);
    if (!ip) { /* the input must not change */
      char *orig = xmalloc(blk);
      fill(d, orig, count, me, 0, salt);
      compare("sendbuf changed", in, orig, blk);
      free(orig);
    }
    free(in), free(got), free(want);
    break;
  }
  case WSP_COLL_SCATTER: {
    char *src = xmalloc(blk * (size_t)p), *got = xmalloc(blk), *want = xmalloc(blk);
    for (int i = 0; i < p; i++) fill(d, src + (size_t)i * blk, count, me, i, salt);
    memset(got, 0x5a, blk);
    memset(want, 0x5a, blk);
    int ip = inplace && me == root;
    if (d->rmul != 1)
      expect_perm(d, want, count, root, me, salt);
    else
      MPI_Scatter(src, (int)count, d->type, want, (int)count, d->rtype, root, MPI_COMM_WORLD);
    if (ip) {
      rc = wsp_scatter(w, src, count, d->type, MPI_IN_PLACE, count, d->type, root);
      check_rc(what, rc);
      /* The root's block stays where it is, and nothing else changes. */
      char *orig = xmalloc(blk * (size_t)p);
      for (int i = 0; i < p; i++) fill(d, orig + (size_t)i * blk, count, me, i, salt);
      if (rc == WSP_OK) compare(what, src, orig, blk * (size_t)p);
      free(orig);
    } else {
      rc = wsp_scatter(w, me == root ? src : NULL, count, d->type, got,
                       count * (size_t)d->rmul, d->rtype, root);
      check_rc(what, rc);
      if (rc == WSP_OK) compare(what, got, want, blk);
      char *orig = xmalloc(blk * (size_t)p);
      for (int i = 0; i < p; i++) fill(d, orig + (size_t)i * blk, count, me, i, salt);
      compare("sendbuf changed", src, orig, blk * (size_t)p);
      free(orig);
    }
    free(src), free(got), free(want);
    break;
  }
  case WSP_COLL_ALLTOALL: {
    size_t all = blk * (size_t)p;
    char *in = xmalloc(all), *got = xmalloc(all), *want = xmalloc(all);
    for (int i = 0; i < p; i++) fill(d, in + (size_t)i * blk, count, me, i, salt);
    memset(got, 0x5a, all);
    memset(want, 0x5a, all);
    if (inplace) memcpy(want, in, all); /* same holes as the in-place buffer */
    if (d->rmul != 1)
      for (int i = 0; i < p; i++) expect_perm(d, want + (size_t)i * blk, count, i, me, salt);
    else
      MPI_Alltoall(in, (int)count, d->type, want, (int)count, d->rtype, MPI_COMM_WORLD);
    if (inplace) {
      memcpy(got, in, all);
      rc = wsp_alltoall(w, MPI_IN_PLACE, count, d->type, got, count, d->type);
    } else {
      rc = wsp_alltoall(w, in, count, d->type, got, count * (size_t)d->rmul, d->rtype);
    }
    check_rc(what, rc);
    if (rc == WSP_OK) compare(what, got, want, all);
    if (!inplace) {
      char *orig = xmalloc(all);
      for (int i = 0; i < p; i++) fill(d, orig + (size_t)i * blk, count, me, i, salt);
      compare("sendbuf changed", in, orig, all);
      free(orig);
    }
    free(in), free(got), free(want);
    break;
  }
  default:
    break;
  }
}

static int is_reduction(wsp_coll_t c) {
  return c == WSP_COLL_REDUCE || c == WSP_COLL_ALLREDUCE;
}
static int is_rooted(wsp_coll_t c) {
  return c == WSP_COLL_BCAST || c == WSP_COLL_REDUCE || c == WSP_COLL_GATHER ||
         c == WSP_COLL_SCATTER;
}

static void run_alg(wsp_comm_t *w, wsp_coll_t coll, int alg, int quick,
                    size_t big_bytes) {
  const char *name = alg == WSP_ALG_AUTO ? "auto" : wsp_coll_alg_info(coll, alg)->name;
  check_rc("wsp_coll_set_alg", wsp_coll_set_alg(w, coll, alg));
  /* Roots 0, p-1, p/2 and p/2+1 (the last makes a binomial subtree wrap
   * past rank p-1 at odd p). */
  int roots[4] = {0, size - 1, size / 2, (size / 2 + 1) % size};
  int nroots = is_rooted(coll) ? 4 : 1;
  long before = failures;
  for (int di = 0; di < ndtypes; di++) {
    const dtype_t *d = &dtypes[di];
    if (d->movement_only && is_reduction(coll)) continue;
    size_t counts[4] = {0, 1, 7, big_bytes / d->size + 3};
    int ncounts = quick ? 3 : 4;
    if (quick) counts[2] = big_bytes / d->size + 3;
    for (int oi = 0; oi < (is_reduction(coll) ? 3 : 1); oi++) {
      const op_t *op = is_reduction(coll) ? &ops[oi] : NULL;
      if (op && ((op->dtype == -1 && di > 1) || (op->dtype >= 0 && op->dtype != di)))
        continue;
      for (int ci = 0; ci < ncounts; ci++)
        for (int ri = 0; ri < nroots; ri++) {
          int dup = 0;
          for (int k = 0; k < ri; k++) dup |= roots[k] == roots[ri];
          if (dup) continue;
          /* In place has one type per buffer: not with mixed types. */
          int can_inplace = coll != WSP_COLL_BCAST && d->rmul == 1;
          for (int ip = 0; ip <= can_inplace; ip++)
            run_case(w, coll, name, d, op, counts[ci], roots[ri], ip);
        }
    }
  }
  /* With a map: which forms of the aware trees the cases ran (a tree sent
   * whole, a path in segments), from the trees built for this collective. */
  char forms[64] = "";
  if (w->aware) {
    int whole = 0, paths = 0;
    for (int e = 0; e < WSP__AWARE_CACHE; e++) {
      const wsp__aware_entry_t *en = &w->aware->entry[e];
      if (en->valid && en->coll == coll) en->seg ? paths++ : whole++;
    }
    snprintf(forms, sizeof forms, " (trees in the cache: %d whole, %d paths)", whole, paths);
    if (map_mode && !strcmp(map_mode, "uniform") && size >= 3 && !strcmp(name, "aware") &&
        (coll == WSP_COLL_BCAST || coll == WSP_COLL_REDUCE) && paths == 0)
      FAIL("%s aware on a uniform map: no path in segments was built", wsp_coll_name(coll));
  }
  long mine = failures - before, all = 0;
  MPI_Allreduce(&mine, &all, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0)
    printf("  %-9s %-20s %s%s\n", wsp_coll_name(coll), name, all ? "FAILED" : "ok", forms);
}

/* A map of seeded random figures per pair of nodes: latencies 1 to 300 us
 * and rates 1 to 1000 MB/s, both log-uniform, the same on every rank; or,
 * `uniform`, 20 us and 100 MB/s for every pair. */
static wsp_netmap_t *random_map(wsp_comm_t *w, int uniform) {
  wsp_topology_t topo;
  check_rc("wsp_comm_topology", wsp_comm_topology(w, &topo));
  wsp_netmap_t *m = wsp__netmap_new(size, topo.nodes);
  if (m == NULL || wsp__netmap_fill_shape(w, m) != WSP_OK) {
    fprintf(stderr, "random map: %s\n", m ? wsp_last_error() : "out of memory");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  uint64_t x = 0x9e3779b97f4a7c15u + (uint64_t)size;
  for (int a = 0; a < topo.nodes; a++)
    for (int b = a; b < topo.nodes; b++) {
      double u[2];
      for (int k = 0; k < 2; k++) { /* xorshift64*, in [0, 1) */
        x ^= x >> 12, x ^= x << 25, x ^= x >> 27;
        u[k] = (double)((x * 2685821657736338717u) >> 11) / 9007199254740992.0;
      }
      double lat = 1e-6 * pow(300, u[0]), inv = 1e-6 / pow(1000, u[1]);
      if (uniform) lat = 20e-6, inv = 1e-8;
      m->lat[a * topo.nodes + b] = m->lat[b * topo.nodes + a] = lat;
      m->inv_bw[a * topo.nodes + b] = m->inv_bw[b * topo.nodes + a] = inv;
    }
  m->eager_inter = m->eager_intra = 4096;
  m->reps = 1;
  return m;
}

static void attach_map(wsp_comm_t *w, const char *mode) {
  wsp_netmap_t *m = NULL;
  if (!strcmp(mode, "probe")) {
    wsp_probe_config_t c;
    check_rc("wsp_probe_config_init", wsp_probe_config_init(&c));
    c.reps = 1;
    c.stream_bytes = 16384;
    c.eager_limits = 0;
    check_rc("wsp_netmap_probe", wsp_netmap_probe(w, &c, &m));
  } else {
    m = random_map(w, !strcmp(mode, "uniform"));
  }
  check_rc("wsp_comm_set_netmap", wsp_comm_set_netmap(w, m));
  check_rc("wsp_netmap_free", wsp_netmap_free(&m));
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const char *only_coll = NULL, *only_alg = NULL, *map = NULL;
  int quick = 0;
  size_t big = 100000;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--coll") && i + 1 < argc) only_coll = argv[++i];
    else if (!strcmp(argv[i], "--alg") && i + 1 < argc) only_alg = argv[++i];
    else if (!strcmp(argv[i], "--quick")) quick = 1;
    else if (!strcmp(argv[i], "--big-bytes") && i + 1 < argc) big = strtoul(argv[++i], NULL, 10);
    else if (!strcmp(argv[i], "--map") && i + 1 < argc &&
             (!strcmp(argv[i + 1], "probe") || !strcmp(argv[i + 1], "random") ||
              !strcmp(argv[i + 1], "uniform")))
      map = map_mode = argv[++i];
    else {
      if (rank == 0)
        fprintf(stderr, "usage: test_coll [--coll NAME] [--alg NAME] [--quick] [--big-bytes B] "
                        "[--map probe|random|uniform]\n");
      MPI_Finalize();
      return 2;
    }
  }
  make_types();
  wsp_comm_t *w = NULL;
  int rc = wsp_comm_create(MPI_COMM_WORLD, NULL, &w);
  if (rc != WSP_OK) {
    fprintf(stderr, "wsp_comm_create: %s\n", wsp_last_error());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  if (map) attach_map(w, map);
  int ran = 0;
  for (int c = 0; c < WSP_COLL_COUNT; c++) {
    wsp_coll_t coll = (wsp_coll_t)c;
    if (only_coll && strcmp(only_coll, wsp_coll_name(coll))) continue;
    for (int a = WSP_ALG_AUTO; a < wsp_coll_alg_count(coll); a++) {
      const char *name = a == WSP_ALG_AUTO ? "auto" : wsp_coll_alg_info(coll, a)->name;
      if (only_alg && strcmp(only_alg, name)) continue;
      if (map && !only_alg && strcmp(name, "aware") && strcmp(name, "auto")) continue;
      run_alg(w, coll, a, quick, big);
      ran++;
    }
  }
  wsp_comm_free(&w);
  long all_fail = 0, all_cases = 0;
  MPI_Allreduce(&failures, &all_fail, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(&cases, &all_cases, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0)
    printf("test_coll: np %d, %d algorithms, %ld cases, %ld failures\n", size,
           ran, all_cases / size, all_fail);
  MPI_Op_free(&affine);
  MPI_Type_free(&dtypes[2].type);
  MPI_Type_free(&dtypes[3].type);
  MPI_Type_free(&dtypes[4].type);
  MPI_Finalize();
  return (all_fail || ran == 0) ? 1 : 0;
}
