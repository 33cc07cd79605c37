/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The shim's Fortran sentinels under every name Open MPI may give them.
 * Open MPI's libmpi defines MPI_IN_PLACE and MPI_BOTTOM of Fortran as
 * common blocks named as its Fortran compiler mangles them: only one of
 * mpi_fortran_in_place, mpi_fortran_in_place_, mpi_fortran_in_place__ and
 * MPI_FORTRAN_IN_PLACE (Debian's, built with gfortran, has the second).
 * This program plays a Fortran program of an Open MPI built with another
 * compiler: it defines the other three names of each sentinel, as that
 * libmpi would, and calls the Fortran entry points that compiler would
 * call (mpi_allreduce, mpi_allreduce__, MPI_ALLREDUCE, ...), with each
 * name's address as the buffer:
 *   - an allreduce in place of 20000 doubles (MPI_IN_PLACE as sendbuf);
 *   - a bcast of 20000 doubles from MPI_BOTTOM with a type that holds the
 *     buffer's absolute address (MPI_Get_address).
 * Every result is checked against values the program computes itself.
 * It runs only with the shim in front of Open MPI's Fortran bindings
 * (force mode): Open MPI itself recognises only its own name.
 * Exit status 0 when every check passed on every rank.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

/* The sentinels, exported (the program is linked with ENABLE_EXPORTS)
 * so that the shim's references find them, as they would find libmpi's. */
int mpi_fortran_in_place, mpi_fortran_in_place__, MPI_FORTRAN_IN_PLACE;
int mpi_fortran_bottom, mpi_fortran_bottom__, MPI_FORTRAN_BOTTOM;

/* The Fortran entry points (the shim's, or Open MPI's without it). */
typedef void allreduce_f(void *, void *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *,
                         MPI_Fint *);
typedef void bcast_f(void *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *);
allreduce_f mpi_allreduce, mpi_allreduce__, MPI_ALLREDUCE;
bcast_f mpi_bcast, mpi_bcast__, MPI_BCAST;

enum { N = 20000 };

static double val(int r, long i) { return (double)((r * 7 + i * 3) % 101); }

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, p;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  static const struct {
    const char *name;
    int *in_place, *bottom;
    allreduce_f *allreduce;
    bcast_f *bcast;
  } mangling[3] = {
      {"plain (mpi_fortran_in_place)", &mpi_fortran_in_place, &mpi_fortran_bottom,
       mpi_allreduce, mpi_bcast},
      {"two underscores (mpi_fortran_in_place__)", &mpi_fortran_in_place__,
       &mpi_fortran_bottom__, mpi_allreduce__, mpi_bcast__},
      {"capitals (MPI_FORTRAN_IN_PLACE)", &MPI_FORTRAN_IN_PLACE, &MPI_FORTRAN_BOTTOM,
       MPI_ALLREDUCE, MPI_BCAST},
  };
  MPI_Fint comm = MPI_Comm_c2f(MPI_COMM_WORLD), dbl = MPI_Type_c2f(MPI_DOUBLE),
           sum = MPI_Op_c2f(MPI_SUM), n = N, one = 1, ierr = 0;
  double *a = malloc(N * sizeof *a);
  int failures = 0;
  for (int m = 0; m < 3; m++) {
    for (long i = 0; i < N; i++) a[i] = val(rank + m, i);
    mangling[m].allreduce(mangling[m].in_place, a, &n, &dbl, &sum, &comm, &ierr);
    int bad = ierr != MPI_SUCCESS;
    for (long i = 0; i < N && !bad; i++) {
      double want = 0;
      for (int s = 0; s < p; s++) want += val(s + m, i);
      bad = a[i] != want;
    }
    if (bad) fprintf(stderr, "rank %d: allreduce in place, %s: wrong\n", rank, mangling[m].name);
    failures += bad;

    /* The buffer's absolute address in the type, the buffer MPI_BOTTOM. */
    MPI_Fint root = (MPI_Fint)((m + 1) % p);
    for (long i = 0; i < N; i++) a[i] = rank == root ? val(100 + m, i) : -1;
    MPI_Aint at;
    MPI_Get_address(a, &at);
    int len = N;
    MPI_Datatype abs;
    MPI_Type_create_hindexed(1, &len, &at, MPI_DOUBLE, &abs);
    MPI_Type_commit(&abs);
    MPI_Fint absf = MPI_Type_c2f(abs);
    mangling[m].bcast(mangling[m].bottom, &one, &absf, &root, &comm, &ierr);
    MPI_Type_free(&abs);
    bad = ierr != MPI_SUCCESS;
    for (long i = 0; i < N && !bad; i++) bad = a[i] != val(100 + m, i);
    if (bad) fprintf(stderr, "rank %d: bcast from MPI_BOTTOM, %s: wrong\n", rank, mangling[m].name);
    failures += bad;
  }
  /* The verdict goes past the shim (PMPI_Allreduce), so that it does not
   * depend on a call under test. */
  int all = 0;
  PMPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf("shim_fsentinel: %d failures\n", all);
  free(a);
  MPI_Finalize();
  return all ? 1 : 0;
}
