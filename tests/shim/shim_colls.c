/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * An MPI program that knows nothing of wirespeed: the shim's C test. It
 * calls the collectives the shim intercepts on MPI_COMM_WORLD, on a
 * split and on duplicates made and freed in a loop, with several counts,
 * predefined and derived datatypes, a user-defined non-commutative op and
 * MPI_IN_PLACE, and checks every result against values it computes
 * itself from the inputs (each rank's data is a function of its rank and
 * the index). It leaves communicators unfreed for MPI_Finalize.
 *   shim_colls [--big N] [--pairs-first] [--ranks P]
 * N is the largest count (default 40000). --pairs-first makes the first
 * collectives of the program run on a split into pairs of ranks ({0, 1},
 * {2, 3}, ...), before any on MPI_COMM_WORLD. --ranks P counts a failure
 * on each rank whose MPI_COMM_WORLD does not have P ranks: a launcher
 * whose ranks could not reach each other (srun with the wrong --mpi
 * plugin) starts P singletons, each of which passes its own checks.
 * Exit status 0 when every check passed on every rank.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;

static void fail(MPI_Comm comm, const char *what, int n, long i, double got, double want) {
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (failures++ < 10)
    fprintf(stderr, "rank %d: %s (n %d): element %ld is %g, want %g\n", rank, what, n, i, got,
            want);
  (void)comm;
}

/* Rank r's element i: small integers, so that sums are exact in doubles. */
static double val(int r, long i) { return (double)((r * 7 + i * 3) % 101); }

/* A non-commutative op on pairs (a, b): (a1, b1) o (a2, b2) = (a1 + b1.a2,
 * b1.b2) over integers mod 1009, the composition of affine maps. */
static void affine(void *in, void *inout, int *len, MPI_Datatype *type) {
  (void)type;
  int *x = in, *y = inout;
  for (int k = 0; k < *len; k++) {
    int a = (x[2 * k] + x[2 * k + 1] * y[2 * k]) % 1009;
    int b = (x[2 * k + 1] * y[2 * k + 1]) % 1009;
    y[2 * k] = a, y[2 * k + 1] = b;
  }
}

static void check_colls(MPI_Comm comm, int n, const char *where) {
  int p, r;
  MPI_Comm_size(comm, &p);
  MPI_Comm_rank(comm, &r);
  int root = (n + 1) % p;
  char what[128];
  double *a = malloc((size_t)n * p * sizeof *a + 8), *b = malloc((size_t)n * p * sizeof *b + 8);

  /* bcast */
  for (long i = 0; i < n; i++) a[i] = r == root ? val(root, i) : -1;
  MPI_Bcast(a, n, MPI_DOUBLE, root, comm);
  snprintf(what, sizeof what, "%s bcast", where);
  for (long i = 0; i < n; i++)
    if (a[i] != val(root, i)) fail(comm, what, n, i, a[i], val(root, i));

  /* allreduce, sum and max, then in place */
  for (long i = 0; i < n; i++) a[i] = val(r, i);
  MPI_Allreduce(a, b, n, MPI_DOUBLE, MPI_SUM, comm);
  snprintf(what, sizeof what, "%s allreduce sum", where);
  for (long i = 0; i < n; i++) {
    double want = 0;
    for (int s = 0; s < p; s++) want += val(s, i);
    if (b[i] != want) fail(comm, what, n, i, b[i], want);
  }
  MPI_Allreduce(MPI_IN_PLACE, a, n, MPI_DOUBLE, MPI_MAX, comm);
  snprintf(what, sizeof what, "%s allreduce max in place", where);
  for (long i = 0; i < n; i++) {
    double want = 0;
    for (int s = 0; s < p; s++) want = val(s, i) > want ? val(s, i) : want;
    if (a[i] != want) fail(comm, what, n, i, a[i], want);
  }

  /* reduce to root, with ints */
  int *ia = malloc((size_t)n * 2 * sizeof *ia + 8), *ib = malloc((size_t)n * 2 * sizeof *ib + 8);
  for (long i = 0; i < n; i++) ia[i] = (int)val(r, i);
  MPI_Reduce(ia, ib, n, MPI_INT, MPI_SUM, root, comm);
  snprintf(what, sizeof what, "%s reduce", where);
  if (r == root)
    for (long i = 0; i < n; i++) {
      int want = 0;
      for (int s = 0; s < p; s++) want += (int)val(s, i);
      if (ib[i] != want) fail(comm, what, n, i, ib[i], want);
    }

  /* a non-commutative user op on a derived type (two ints): rank order */
  MPI_Datatype pair;
  MPI_Type_contiguous(2, MPI_INT, &pair);
  MPI_Type_commit(&pair);
  MPI_Op op;
  MPI_Op_create(affine, 0, &op);
  for (long i = 0; i < n; i++) ia[2 * i] = (int)val(r, i), ia[2 * i + 1] = 1 + (r + (int)i) % 5;
  MPI_Allreduce(ia, ib, n, pair, op, comm);
  snprintf(what, sizeof what, "%s allreduce non-commutative", where);
  for (long i = 0; i < n; i++) {
    /* (x_0 o x_1 o ... o x_{p-1}): fold from the right. */
    int wa = (int)val(p - 1, i), wb = 1 + (p - 1 + (int)i) % 5;
    for (int s = p - 2; s >= 0; s--) {
      int xa = (int)val(s, i), xb = 1 + (s + (int)i) % 5;
      int na = (xa + xb * wa) % 1009, nb = (xb * wb) % 1009;
      wa = na, wb = nb;
    }
    if (ib[2 * i] != wa || ib[2 * i + 1] != wb) fail(comm, what, n, i, ib[2 * i], wa);
  }
  MPI_Op_free(&op);
  MPI_Type_free(&pair);

  /* gather (then in place at the root), scatter, allgather, alltoall:
   * blocks of n doubles, and a vector type with holes for allgather */
  for (long i = 0; i < n; i++) a[i] = val(r, i);
  MPI_Gather(a, n, MPI_DOUBLE, b, n, MPI_DOUBLE, root, comm);
  snprintf(what, sizeof what, "%s gather", where);
  if (r == root)
    for (int s = 0; s < p; s++)
      for (long i = 0; i < n; i++)
        if (b[(long)s * n + i] != val(s, i)) fail(comm, what, n, i, b[(long)s * n + i], val(s, i));
  if (r == root) {
    for (int s = 0; s < p; s++)
      for (long i = 0; i < n; i++) b[(long)s * n + i] = s == r ? val(s, i) : -1;
    MPI_Gather(MPI_IN_PLACE, n, MPI_DOUBLE, b, n, MPI_DOUBLE, root, comm);
    snprintf(what, sizeof what, "%s gather in place", where);
    for (int s = 0; s < p; s++)
      for (long i = 0; i < n; i++)
        if (b[(long)s * n + i] != val(s, i)) fail(comm, what, n, i, b[(long)s * n + i], val(s, i));
  } else {
    MPI_Gather(a, n, MPI_DOUBLE, NULL, 0, MPI_DOUBLE, root, comm);
  }

  if (r == root)
    for (int s = 0; s < p; s++)
      for (long i = 0; i < n; i++) b[(long)s * n + i] = val(s + 1, i);
  MPI_Scatter(b, n, MPI_DOUBLE, a, n, MPI_DOUBLE, root, comm);
  snprintf(what, sizeof what, "%s scatter", where);
  for (long i = 0; i < n; i++)
    if (a[i] != val(r + 1, i)) fail(comm, what, n, i, a[i], val(r + 1, i));

  for (long i = 0; i < n; i++) a[i] = val(r, i);
  MPI_Allgather(a, n, MPI_DOUBLE, b, n, MPI_DOUBLE, comm);
  snprintf(what, sizeof what, "%s allgather", where);
  for (int s = 0; s < p; s++)
    for (long i = 0; i < n; i++)
      if (b[(long)s * n + i] != val(s, i)) fail(comm, what, n, i, b[(long)s * n + i], val(s, i));

  /* allgather of every other double: a vector type with holes */
  if (n >= 2) {
    MPI_Datatype every2;
    MPI_Type_vector(n / 2, 1, 2, MPI_DOUBLE, &every2);
    MPI_Type_commit(&every2);
    for (long i = 0; i < n; i++) a[i] = val(r, i);
    MPI_Allgather(a, 1, every2, b, n / 2, MPI_DOUBLE, comm);
    snprintf(what, sizeof what, "%s allgather vector", where);
    for (int s = 0; s < p; s++)
      for (long i = 0; i < n / 2; i++)
        if (b[(long)s * (n / 2) + i] != val(s, 2 * i))
          fail(comm, what, n, i, b[(long)s * (n / 2) + i], val(s, 2 * i));
    MPI_Type_free(&every2);
  }

  /* MPI_BOTTOM with types of absolute addresses: an allgather whose
   * receive buffer is MPI_BOTTOM on every rank, then a bcast where only
   * the root passes MPI_BOTTOM. (Not a reduction: Open MPI defines its
   * predefined ops on predefined types only.) */
  {
    MPI_Datatype base = MPI_DOUBLE, blk_t, blk_r, abs_t;
    MPI_Aint addr;
    int len = n;
    for (long i = 0; i < n; i++) a[i] = val(r + 5, i);
    for (long i = 0; i < (long)n * p; i++) b[i] = -1;
    /* One rank's block at b's address; resized to n doubles, so that
     * rank s's block lands at b + s.n. */
    MPI_Get_address(b, &addr);
    MPI_Type_create_struct(1, &len, &addr, &base, &blk_t);
    MPI_Type_create_resized(blk_t, addr, (MPI_Aint)n * (MPI_Aint)sizeof(double), &blk_r);
    MPI_Type_commit(&blk_r);
    MPI_Allgather(a, n, MPI_DOUBLE, MPI_BOTTOM, 1, blk_r, comm);
    snprintf(what, sizeof what, "%s allgather into MPI_BOTTOM", where);
    for (int s = 0; s < p; s++)
      for (long i = 0; i < n; i++)
        if (b[(long)s * n + i] != val(s + 5, i))
          fail(comm, what, n, i, b[(long)s * n + i], val(s + 5, i));
    MPI_Type_free(&blk_r);
    MPI_Type_free(&blk_t);
    MPI_Get_address(a, &addr);
    MPI_Type_create_struct(1, &len, &addr, &base, &abs_t);
    MPI_Type_commit(&abs_t);
    for (long i = 0; i < n; i++) a[i] = r == root ? val(root + 3, i) : -1;
    if (r == root)
      MPI_Bcast(MPI_BOTTOM, 1, abs_t, root, comm);
    else
      MPI_Bcast(a, n, MPI_DOUBLE, root, comm);
    snprintf(what, sizeof what, "%s bcast MPI_BOTTOM at the root", where);
    for (long i = 0; i < n; i++)
      if (a[i] != val(root + 3, i)) fail(comm, what, n, i, a[i], val(root + 3, i));
    MPI_Type_free(&abs_t);
  }

  long m = n / p + 1;
  double *c = malloc((size_t)m * p * sizeof *c), *d = malloc((size_t)m * p * sizeof *d);
  for (int s = 0; s < p; s++)
    for (long i = 0; i < m; i++) c[s * m + i] = val(r * p + s, i);
  MPI_Alltoall(c, (int)m, MPI_DOUBLE, d, (int)m, MPI_DOUBLE, comm);
  snprintf(what, sizeof what, "%s alltoall", where);
  for (int s = 0; s < p; s++)
    for (long i = 0; i < m; i++)
      if (d[s * m + i] != val(s * p + r, i)) fail(comm, what, n, i, d[s * m + i], val(s * p + r, i));
  free(c), free(d);

  /* alltoallv: rank r sends ((r + s) % 3).m elements to rank s (a third
   * of the blocks empty), its send blocks laid out in reverse rank order. */
  int *v = malloc(4 * (size_t)p * sizeof *v), *sc = v, *sd = v + p, *rc = v + 2 * p,
      *rd = v + 3 * p, at = 0, at2 = 0;
  for (int s = p - 1; s >= 0; s--) sc[s] = (int)((r + s) % 3 * m), sd[s] = at, at += sc[s];
  for (int s = 0; s < p; s++) rc[s] = (int)((s + r) % 3 * m), rd[s] = at2, at2 += rc[s];
  c = malloc((size_t)at * sizeof *c + 8), d = malloc((size_t)at2 * sizeof *d + 8);
  for (int s = 0; s < p; s++)
    for (long i = 0; i < sc[s]; i++) c[sd[s] + i] = val(r * p + s, i);
  MPI_Alltoallv(c, sc, sd, MPI_DOUBLE, d, rc, rd, MPI_DOUBLE, comm);
  snprintf(what, sizeof what, "%s alltoallv", where);
  for (int s = 0; s < p; s++)
    for (long i = 0; i < rc[s]; i++)
      if (d[rd[s] + i] != val(s * p + r, i))
        fail(comm, what, n, i, d[rd[s] + i], val(s * p + r, i));
  free(c), free(d);

  /* allgatherv: rank s's block is (s % 3).m/2 elements (m for the last),
   * laid out in reverse rank order; then the same in place. */
  at = 0;
  for (int s = p - 1; s >= 0; s--)
    rc[s] = s == p - 1 ? (int)m : (int)(s % 3 * m / 2), rd[s] = at, at += rc[s];
  for (int inplace = 0; inplace <= 1; inplace++) {
    for (long i = 0; i < at; i++) b[i] = -1;
    for (long i = 0; i < rc[r]; i++) a[i] = val(r + 11, i), b[rd[r] + i] = inplace ? a[i] : -1;
    MPI_Allgatherv(inplace ? MPI_IN_PLACE : a, rc[r], MPI_DOUBLE, b, rc, rd, MPI_DOUBLE, comm);
    snprintf(what, sizeof what, "%s allgatherv%s", where, inplace ? " in place" : "");
    for (int s = 0; s < p; s++)
      for (long i = 0; i < rc[s]; i++)
        if (b[rd[s] + i] != val(s + 11, i)) fail(comm, what, n, i, b[rd[s] + i], val(s + 11, i));
  }

  /* reduce_scatter of sums, rank s getting ((s + 1) % 3).m/2 elements
   * (some none); then reduce_scatter_block of m/2 each, in place. */
  at = 0;
  for (int s = 0; s < p; s++) rc[s] = (int)((s + 1) % 3 * m / 2), rd[s] = at, at += rc[s];
  for (long i = 0; i < at; i++) a[i] = val(r + 3, i);
  MPI_Reduce_scatter(a, b, rc, MPI_DOUBLE, MPI_SUM, comm);
  snprintf(what, sizeof what, "%s reduce_scatter", where);
  for (long i = 0; i < rc[r]; i++) {
    double want = 0;
    for (int s = 0; s < p; s++) want += val(s + 3, rd[r] + i);
    if (b[i] != want) fail(comm, what, n, i, b[i], want);
  }
  long h = m / 2;
  for (long i = 0; i < h * p; i++) b[i] = val(r + 4, i);
  MPI_Reduce_scatter_block(MPI_IN_PLACE, b, (int)h, MPI_DOUBLE, MPI_SUM, comm);
  snprintf(what, sizeof what, "%s reduce_scatter_block in place", where);
  for (long i = 0; i < h; i++) {
    double want = 0;
    for (int s = 0; s < p; s++) want += val(s + 4, r * h + i);
    if (b[i] != want) fail(comm, what, n, i, b[i], want);
  }
  free(v), free(ia), free(ib), free(a), free(b);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int big = 40000, pairs_first = 0, want_ranks = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--big") && i + 1 < argc) {
      big = atoi(argv[++i]);
    } else if (!strcmp(argv[i], "--pairs-first")) {
      pairs_first = 1;
    } else if (!strcmp(argv[i], "--ranks") && i + 1 < argc && atoi(argv[i + 1]) > 0) {
      want_ranks = atoi(argv[++i]);
    } else {
      fprintf(stderr, "usage: shim_colls [--big N] [--pairs-first] [--ranks P]\n");
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
  }
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (want_ranks && size != want_ranks) {
    fprintf(stderr, "rank %d: MPI_COMM_WORLD has %d ranks, want %d\n", rank, size, want_ranks);
    failures++;
  }
  if (pairs_first) {
    /* Pairs of ranks: the program's first collectives, small and large,
     * none on MPI_COMM_WORLD before them. */
    MPI_Comm pair;
    MPI_Comm_split(MPI_COMM_WORLD, rank / 2, rank, &pair);
    check_colls(pair, 7, "pair");
    check_colls(pair, big, "pair");
    MPI_Comm_free(&pair);
  }
  int counts[] = {1, 7, 1000, big};
  for (int k = 0; k < 4; k++) check_colls(MPI_COMM_WORLD, counts[k], "world");
  /* A split: even and odd ranks. */
  MPI_Comm half;
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &half);
  check_colls(half, big, "split");
  /* Duplicates made and freed: each gets its own cached state. */
  for (int k = 0; k < 4; k++) {
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    check_colls(dup, k % 2 ? big : 1000, "dup");
    MPI_Comm_free(&dup);
  }
  /* `half` and a fresh duplicate stay cached for MPI_Finalize. */
  MPI_Comm kept;
  MPI_Comm_dup(MPI_COMM_WORLD, &kept);
  check_colls(kept, big, "kept");
  /* The verdict goes past the shim (PMPI_Allreduce): through it, it would
   * be one more call under test, and an allreduce that returned success
   * without writing would report no failures. */
  int all = 0;
  PMPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf("shim_colls: %d failures\n", all);
  MPI_Finalize();
  return all ? 1 : 0;
}
