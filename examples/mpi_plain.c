/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A plain MPI program that knows nothing of wirespeed: MPI_Allreduce and
 * MPI_Bcast of 4 MiB each, every result checked. It is here for the PMPI
 * shim (docs/shim.md), which gives such a program wirespeed's collectives
 * without a change to its code or its build: the shim's MPI_Allreduce and
 * MPI_Bcast come before the MPI library's, run wirespeed's algorithm for
 * calls of 64 KiB or more (WSP_SHIM_MIN), and hand the rest to the MPI.
 *
 * Build:  mpicc mpi_plain.c -o mpi_plain          (no wirespeed flags needed)
 * Run as it is:        mpirun -np 4 ./mpi_plain
 * Run under the shim:  wsp-run mpirun -np 4 ./mpi_plain
 * See what it did:     WSP_SHIM_REPORT=1 wsp-run mpirun -np 4 ./mpi_plain
 * With the report on, rank 0 prints at MPI_Finalize, per collective, the
 * calls seen, how many wirespeed ran and with which algorithm. wsp-run adds
 * the preload (LD_PRELOAD of libwirespeed_pmpi.so) the launcher's way.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static void check(int rc, const char *what) {
  if (rc != MPI_SUCCESS) {
    char text[MPI_MAX_ERROR_STRING];
    int len;
    MPI_Error_string(rc, text, &len);
    fprintf(stderr, "%s: %s\n", what, text);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
}

static void expect(int ok, int rank, const char *what, int i) {
  if (!ok) {
    fprintf(stderr, "mpi_plain: rank %d: %s: element %d is wrong\n", rank, what, i);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  /* Errors come back as codes instead of ending the job, so that they can
   * be printed (the shim reports its own failures the same way). */
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  const int n = (4 << 20) / (int)sizeof(double); /* 4 MiB */
  double *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
  if (a == NULL || b == NULL) {
    fprintf(stderr, "rank %d: out of memory\n", rank);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }

  /* Allreduce: small integers, so the sum is exact in any order. */
  for (int i = 0; i < n; i++) a[i] = rank + i % 100;
  check(MPI_Allreduce(a, b, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD), "MPI_Allreduce");
  for (int i = 0; i < n; i++)
    expect(b[i] == size * (size - 1) / 2.0 + (double)size * (i % 100), rank, "allreduce", i);

  /* Bcast from the last rank: everybody ends with its values. */
  int root = size - 1;
  for (int i = 0; i < n; i++) a[i] = rank == root ? 0.5 * i + root : -1.0;
  check(MPI_Bcast(a, n, MPI_DOUBLE, root, MPI_COMM_WORLD), "MPI_Bcast");
  for (int i = 0; i < n; i++) expect(a[i] == 0.5 * i + root, rank, "bcast", i);

  if (rank == 0)
    printf("mpi_plain: ok, allreduce and bcast of %d bytes on %d ranks\n", n * (int)sizeof(double),
           size);
  free(a);
  free(b);
  MPI_Finalize();
  return 0;
}
