/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The PMPI shim (docs/shim.md): what the generated wrappers (gen.py, from
 * colls.list) share. Nothing here is part of wirespeed's API; the shim
 * library exports only the MPI_* functions it defines.
 */
#ifndef WSP_SHIM_H
#define WSP_SHIM_H

#include <mpi.h>
#include <stdatomic.h>
#include <stddef.h>

#include "wirespeed.h"

#define WSP__SHIM_API __attribute__((visibility("default")))

/* The shim's thread-local variables live in the static TLS block: the
 * library is preloaded or linked, so it is there at start-up, and every
 * intercepted call reads them (the general model would call
 * __tls_get_addr each time). */
#if defined(__GNUC__)
#define WSP__SHIM_TLS _Thread_local __attribute__((tls_model("initial-exec")))
#else
#define WSP__SHIM_TLS _Thread_local
#endif

/* Set while wirespeed runs on this thread: its own MPI calls go to the
 * MPI's PMPI_ functions. */
extern WSP__SHIM_TLS int wsp__shim_inside;

/* ---- the next definitions (docs/shim.md, "With a profiler") ----
 * One intercepted call X: the definitions past the shim in the dynamic
 * linker's order, resolved at the first use (wsp__shim_sym). */
typedef void (*wsp__shim_fn_t)(void);
typedef struct wsp__shim_sym {
  const char *name; /* "Allreduce": MPI_Allreduce and PMPI_Allreduce */
  atomic_int ready;
  wsp__shim_fn_t next; /* dlsym(RTLD_NEXT, "MPI_X"): a tool's, or the MPI's */
  wsp__shim_fn_t real; /* dlsym(RTLD_NEXT, "PMPI_X"): the MPI's own */
  /* The objects that hold next and real (their dladdr bases). */
  const void *next_base, *real_base;
  /* next is not the MPI's own MPI_X: a tool sits between the shim and the
   * MPI. */
  int tool_after;
} wsp__shim_sym_t;
#define WSP__SHIM_SYM(name)                                                                        \
  { name, 0, NULL, NULL, NULL, NULL, 0 }

void wsp__shim_resolve(wsp__shim_sym_t *s);
/* s, resolved: one acquire load once it is. */
static inline const wsp__shim_sym_t *wsp__shim_sym(wsp__shim_sym_t *s) {
  if (!atomic_load_explicit(&s->ready, memory_order_acquire)) wsp__shim_resolve(s);
  return s;
}

/* Where the shim's PMPI_X sends a call, by who called it (ret: the return
 * address): WSP__SHIM_TO_SHIM for a tool that defines MPI_X itself (it
 * wraps the program's call: the shim's logic runs it),
 * WSP__SHIM_TO_NEXT for such a tool that sits before the shim while
 * another sits after it (which then sees the call too, and calls PMPI_X
 * again), WSP__SHIM_TO_MPI for anyone else: the program's own PMPI_ calls,
 * the MPI's internals, the shim and wirespeed. Cached per call site. */
enum { WSP__SHIM_TO_MPI, WSP__SHIM_TO_SHIM, WSP__SHIM_TO_NEXT };
int wsp__shim_caller(const wsp__shim_sym_t *s, const void *ret);

/* The MPI's own functions, past the shim and any tool (gen.py). */
int wsp__shim_real_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                             MPI_Op op, MPI_Comm comm);
int wsp__shim_real_Finalize(void);

/* wsp__shim_end's answer when the MPI's own call must run with the same
 * arguments: wirespeed refused one of them on every rank before any
 * traffic, so the MPI reports it with its own error class. Not an MPI
 * error code (those are >= 0). */
#define WSP__SHIM_FALLBACK (-1)

/* One call that wirespeed runs. */
typedef struct wsp__shim_call {
  wsp_comm_t *w;
  MPI_Comm comm;
  wsp_coll_t coll;
  double t0; /* MPI_Wtime at the start, when the report is on */
} wsp__shim_call_t;

/* Whether the call goes straight to PMPI: the shim is off or this
 * collective is not chosen (WSP_SHIM, WSP_SHIM_COLLS), the call comes from
 * inside wirespeed on this thread (the re-entry guard), or comm is an
 * intercommunicator. Cheap: a few loads once the settings are read. */
int wsp__shim_pass(wsp_coll_t coll, MPI_Comm comm);
/* Whether wirespeed runs this call, from arguments every rank shares (the
 * mode, the collective, `bytes`), so that every rank of the call takes the
 * same path; makes comm's wsp_comm_t at its first use
 * (collective). On 1, c is filled and the guard is set until
 * wsp__shim_end. */
int wsp__shim_begin(wsp__shim_call_t *c, wsp_coll_t coll, MPI_Comm comm, size_t bytes);
/* Ends a call wirespeed ran with status rc: MPI_SUCCESS, WSP__SHIM_FALLBACK
 * (an argument refused; the wrapper then runs PMPI with the same
 * arguments), or an MPI error class raised on comm's error handler. */
int wsp__shim_end(wsp__shim_call_t *c, int rc);
/* Counts a fallback in the report and passes the MPI's status on. */
int wsp__shim_fallback(wsp__shim_call_t *c, int mpi_rc);

/* count elements of type in bytes (0 for a negative count or a null
 * type, which the MPI's own call then reports). */
size_t wsp__shim_bytes(MPI_Count count, MPI_Datatype type);
/* The bytes of one rank's block of a gather, scatter, allgather or
 * alltoall, the same on every rank (matching type signatures): the root
 * (root >= 0) and in-place calls count the second pair, the others the
 * first. */
size_t wsp__shim_block(MPI_Comm comm, int root, int in_place, MPI_Count count1,
                       MPI_Datatype type1, MPI_Count count2, MPI_Datatype type2);
/* ---- the vector forms (shim_v.c) ----
 * MPI's count and displacement arrays are ints, or for the _c forms
 * MPI_Count and MPI_Aint (`wide`, both 64 bits wide where wirespeed
 * builds). The wrappers turn them into size_t, moving the buffer down to
 * the smallest displacement where one is negative (which MPI allows). A
 * negative count is refused (WSP_ERR_ARG), so the MPI reports it.
 *
 * alltoallv has no size that every rank shares: each knows only its own
 * counts. So the shim never decides by size for it (WSP_SHIM_MIN does not
 * apply; its `bytes` is WSP__SHIM_ANY_SIZE) and every call wirespeed may
 * run, it runs; wirespeed's own alltoallv needs no agreement either
 * (docs/coll.md). allgatherv and reduce_scatter count the mean block of
 * the counts every rank passes alike. */
#define WSP__SHIM_ANY_SIZE ((size_t)-1)
size_t wsp__shim_vbytes(MPI_Comm comm, const void *counts, int wide, MPI_Datatype type);
int wsp__shim_alltoallv(wsp_comm_t *w, const void *sendbuf, const void *sendcounts,
                        const void *sdispls, MPI_Datatype sendtype, void *recvbuf,
                        const void *recvcounts, const void *rdispls, MPI_Datatype recvtype,
                        int wide);
int wsp__shim_allgatherv(wsp_comm_t *w, const void *sendbuf, MPI_Count sendcount,
                         MPI_Datatype sendtype, void *recvbuf, const void *recvcounts,
                         const void *displs, MPI_Datatype recvtype, int wide);
int wsp__shim_reduce_scatter(wsp_comm_t *w, const void *sendbuf, void *recvbuf,
                             const void *recvcounts, MPI_Datatype type, MPI_Op op, int wide);

/* A buffer passed from Fortran, with the MPI's Fortran sentinels
 * (MPI_IN_PLACE, MPI_BOTTOM) turned into C's (WSP_SHIM_FORTRAN builds). */
void *wsp__shim_fbuf(void *buf);

#endif
