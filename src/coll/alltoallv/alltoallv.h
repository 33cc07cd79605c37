/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the alltoallv algorithms share: one engine that differs only in how
 * it paces this rank's sends.
 *
 * In MPI_Alltoallv each rank knows its own row (what it sends to each
 * rank) and its own column (what it receives from each), never the
 * others'. So there is nothing every rank shares from which all could
 * choose the same algorithm, short of a collective on every call. Instead
 * the algorithms are built so that any mix of them is safe: each rank
 * first posts every receive it expects (the non-empty blocks of its
 * column), straight into recvbuf, before it waits for anything. A send
 * then always finds its receive posted or about to be, so no rank waits
 * in a cycle, whatever order or pace the others send in; and each rank
 * chooses its own pacing from its own row (src/coll/select.c, which the
 * alltoallv shape feeds with this rank's figures). Blocks of zero bytes
 * are neither sent nor received: the sender and the receiver each know
 * the block is empty from their own counts (MPI requires them to agree).
 *
 * The pacing: sends in an order (the pairwise schedule of
 * src/patterns/pairwise.h, or rotated r+1, r+2, ...), at most `window`
 * in flight; a new one is posted as soon as one completes.
 */
#ifndef WSP_COLL_ALLTOALLV_H
#define WSP_COLL_ALLTOALLV_H

#include "../coll_internal.h"

/* The most sends in flight of the linear algorithm (as alltoall's). */
enum { WSP__A2AV_WINDOW = 8 };

/* Runs alltoallv a with at most `window` sends in flight (INT_MAX: all),
 * in the pairwise order when `pairwise`, else rotated. */
int wsp__alltoallv_paced(wsp_comm_t *comm, const wsp__coll_args_t *a, int window, int pairwise);

#endif
