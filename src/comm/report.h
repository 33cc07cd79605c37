/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The job's report, for the PMPI shim (src/shim/shim.c; report.c says how
 * the figures add up across communicators, docs/report.md what they mean).
 * A job table is wsp__report_job_size() doubles, zeroed by its owner;
 * rank 0 emits it after the owner has summed it over MPI_COMM_WORLD
 * (MPI_SUM, MPI_DOUBLE).
 */
#ifndef WSP_REPORT_H
#define WSP_REPORT_H

#include <jansson.h>
#include <stddef.h>

#include "wirespeed.h"

size_t wsp__report_job_size(void);

/* Gives comm (made without cfg.report, so that the ranks need not agree on
 * it) rows of this rank's own for wsp__report_fold. 0, or -1 when memory
 * ran out (then it has none, and folds nothing). */
int wsp__report_attach(wsp_comm_t *comm);

/* Adds comm's own rows (this rank's, not gathered) to job and turns the
 * communicator's report off, so that wsp_comm_free gathers nothing. 1 when
 * comm had a report, else 0. */
int wsp__report_fold(wsp_comm_t *comm, double *job);

/* Rank 0: prints the job's table to stderr (dest "1"), then more_text, or
 * writes it with more_json's object as "shim" to the file dest. p is the
 * job's size, life the seconds the report covers. 0, or -1 when the file
 * could not be written or memory ran out. */
int wsp__report_job_emit(const double *job, int p, double life, const char *dest,
                         void (*more_text)(void *arg), json_t *(*more_json)(void *arg), void *arg);

#endif
