/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Bad arguments under the shim: every rank passes the same bad root, op,
 * count (with --counts) or datatype, with MPI_ERRORS_RETURN on the communicator. Each
 * call is made twice, through PMPI_ (the MPI's own answer) and through
 * MPI_ (the shim's wrapper), and the two error classes must be equal and
 * not MPI_SUCCESS on every rank; nobody may hang. Exit status 0 when all
 * agree.
 */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

enum { N = 20000 };
static double a[N], b[N];

typedef int (*call_t)(int pmpi, MPI_Comm comm);

static int bcast_root(int pmpi, MPI_Comm c) {
  int p;
  MPI_Comm_size(c, &p);
  return pmpi ? PMPI_Bcast(a, N, MPI_DOUBLE, p, c) : MPI_Bcast(a, N, MPI_DOUBLE, p, c);
}
static int reduce_root(int pmpi, MPI_Comm c) {
  return pmpi ? PMPI_Reduce(a, b, N, MPI_DOUBLE, MPI_SUM, -2, c)
              : MPI_Reduce(a, b, N, MPI_DOUBLE, MPI_SUM, -2, c);
}
static int allreduce_op(int pmpi, MPI_Comm c) {
  return pmpi ? PMPI_Allreduce(a, b, N, MPI_DOUBLE, MPI_OP_NULL, c)
              : MPI_Allreduce(a, b, N, MPI_DOUBLE, MPI_OP_NULL, c);
}
static int allreduce_count(int pmpi, MPI_Comm c) {
  return pmpi ? PMPI_Allreduce(a, b, -5, MPI_DOUBLE, MPI_SUM, c)
              : MPI_Allreduce(a, b, -5, MPI_DOUBLE, MPI_SUM, c);
}
static int bcast_type(int pmpi, MPI_Comm c) {
  return pmpi ? PMPI_Bcast(a, N, MPI_DATATYPE_NULL, 0, c)
              : MPI_Bcast(a, N, MPI_DATATYPE_NULL, 0, c);
}
int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  /* Negative counts only with --counts: MPICH 4.0.2 does not check them
   * (its own call crashes, so there is no class to compare with). */
  int rank, bad = 0, counts = argc > 1 && !strcmp(argv[1], "--counts");
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  struct {
    const char *name;
    call_t call;
  } cases[] = {{"bcast root = p", bcast_root},         {"reduce root = -2", reduce_root},
               {"allreduce op null", allreduce_op},    {"allreduce count -5", allreduce_count},
               {"bcast type null", bcast_type}};
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    if (!counts && cases[k].call == allreduce_count) continue;
    int want = MPI_SUCCESS, got = MPI_SUCCESS;
    int rc = cases[k].call(1, MPI_COMM_WORLD);
    if (rc != MPI_SUCCESS) MPI_Error_class(rc, &want);
    rc = cases[k].call(0, MPI_COMM_WORLD);
    if (rc != MPI_SUCCESS) MPI_Error_class(rc, &got);
    int ok = want != MPI_SUCCESS && got == want;
    if (!ok) bad++;
    if (rank == 0 || !ok) {
      char w[MPI_MAX_ERROR_STRING], g[MPI_MAX_ERROR_STRING];
      int len;
      MPI_Error_string(want, w, &len);
      MPI_Error_string(got, g, &len);
      printf("rank %d: %-20s MPI's class %d (%s), through the shim %d (%s)%s\n", rank,
             cases[k].name, want, w, got, g, ok ? "" : "  MISMATCH");
    }
  }
  int all = 0;
  PMPI_Allreduce(&bad, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf("shim_errors: %d mismatches\n", all);
  MPI_Finalize();
  return all ? 1 : 0;
}
