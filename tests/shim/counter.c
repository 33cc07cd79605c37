/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A counting interposer, the smallest profiler built the PMPI way: it
 * defines MPI_X for the collectives the shim takes, for the calls
 * wirespeed makes itself (MPI_Comm_dup, point-to-point) and for
 * MPI_Finalize, counts each call and hands it to PMPI_X. At MPI_Finalize
 * rank 0 prints its counts ("NAME: MPI_X N", NAME the COUNTER_NAME it was
 * built with), before PMPI_Finalize. Preloaded beside the shim, before or
 * after it (docs/shim.md, "With a profiler"), its counts must be the
 * program's own calls: every collective the program calls, none of
 * wirespeed's.
 *
 * Each wrapper counts after PMPI_X returns, as a profiler that times the
 * call does, and the file is built without sibling calls: a wrapper that
 * ended in a jump to PMPI_X would leave the program's return address to
 * the shim (docs/shim.md says why that matters).
 */
#include <mpi.h>
#include <stdatomic.h>
#include <stdio.h>

#ifndef COUNTER_NAME
#define COUNTER_NAME "counter"
#endif

/* X(name, the MPI function) */
#define COUNTED(X)                                                                                 \
  X(Bcast, "MPI_Bcast")                                                                            \
  X(Reduce, "MPI_Reduce")                                                                          \
  X(Allreduce, "MPI_Allreduce")                                                                    \
  X(Gather, "MPI_Gather")                                                                          \
  X(Scatter, "MPI_Scatter")                                                                        \
  X(Allgather, "MPI_Allgather")                                                                    \
  X(Alltoall, "MPI_Alltoall")                                                                      \
  X(Alltoallv, "MPI_Alltoallv")                                                                    \
  X(Allgatherv, "MPI_Allgatherv")                                                                  \
  X(Reduce_scatter, "MPI_Reduce_scatter")                                                          \
  X(Reduce_scatter_block, "MPI_Reduce_scatter_block")                                              \
  X(Barrier, "MPI_Barrier")                                                                        \
  X(Comm_dup, "MPI_Comm_dup")                                                                      \
  X(Isend, "MPI_Isend")                                                                            \
  X(Irecv, "MPI_Irecv")                                                                            \
  X(Send, "MPI_Send")                                                                              \
  X(Recv, "MPI_Recv")

#define ENUM(n, s) C_##n,
enum { COUNTED(ENUM) C_N };
#define NAME(n, s) s,
static const char *const names[C_N] = {COUNTED(NAME)};
/* Static: two counters built from this file keep counts of their own. */
static atomic_ulong counter_calls[C_N];

#define COUNT(n) atomic_fetch_add(&counter_calls[C_##n], 1)
/* Defines MPI_n(params) as a counted call of PMPI_n(args). */
#define WRAP(n, params, args)                                                                      \
  int MPI_##n params;                                                                              \
  int MPI_##n params {                                                                             \
    int rc = PMPI_##n args;                                                                        \
    COUNT(n);                                                                                      \
    return rc;                                                                                     \
  }

WRAP(Bcast, (void *b, int n, MPI_Datatype t, int root, MPI_Comm c), (b, n, t, root, c))
WRAP(Reduce, (const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, int root, MPI_Comm c),
     (s, r, n, t, op, root, c))
WRAP(Allreduce, (const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, MPI_Comm c),
     (s, r, n, t, op, c))
WRAP(Gather,
     (const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt, int root,
      MPI_Comm c),
     (s, sn, st, r, rn, rt, root, c))
WRAP(Scatter,
     (const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt, int root,
      MPI_Comm c),
     (s, sn, st, r, rn, rt, root, c))
WRAP(Allgather,
     (const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt, MPI_Comm c),
     (s, sn, st, r, rn, rt, c))
WRAP(Alltoall,
     (const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt, MPI_Comm c),
     (s, sn, st, r, rn, rt, c))
WRAP(Alltoallv,
     (const void *s, const int sn[], const int sd[], MPI_Datatype st, void *r, const int rn[],
      const int rd[], MPI_Datatype rt, MPI_Comm c),
     (s, sn, sd, st, r, rn, rd, rt, c))
WRAP(Allgatherv,
     (const void *s, int sn, MPI_Datatype st, void *r, const int rn[], const int rd[],
      MPI_Datatype rt, MPI_Comm c),
     (s, sn, st, r, rn, rd, rt, c))
WRAP(Reduce_scatter,
     (const void *s, void *r, const int rn[], MPI_Datatype t, MPI_Op op, MPI_Comm c),
     (s, r, rn, t, op, c))
WRAP(Reduce_scatter_block, (const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, MPI_Comm c),
     (s, r, n, t, op, c))
WRAP(Barrier, (MPI_Comm c), (c))
WRAP(Comm_dup, (MPI_Comm c, MPI_Comm *d), (c, d))
WRAP(Isend, (const void *b, int n, MPI_Datatype t, int to, int tag, MPI_Comm c, MPI_Request *rq),
     (b, n, t, to, tag, c, rq))
WRAP(Irecv, (void *b, int n, MPI_Datatype t, int from, int tag, MPI_Comm c, MPI_Request *rq),
     (b, n, t, from, tag, c, rq))
WRAP(Send, (const void *b, int n, MPI_Datatype t, int to, int tag, MPI_Comm c),
     (b, n, t, to, tag, c))
WRAP(Recv, (void *b, int n, MPI_Datatype t, int from, int tag, MPI_Comm c, MPI_Status *st),
     (b, n, t, from, tag, c, st))

int MPI_Finalize(void);
int MPI_Finalize(void) {
  int rank = 0;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
    for (int i = 0; i < C_N; i++)
      printf("%s: %s %lu\n", COUNTER_NAME, names[i], atomic_load(&counter_calls[i]));
    fflush(stdout);
  }
  int rc = PMPI_Finalize();
  return rc;
}
