/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Timing a pair of ranks: round trips and streams, the measurements that
 * the model's calibration (src/model/calibrate.c) and the network map's
 * probe (src/netmap) make. Both ranks of the pair call the same function
 * with each other as `peer`; the lower rank starts. Every wait tests and
 * backs off (src/core/backoff.c): blocking MPI calls spin in most MPIs, and
 * on shared cores the spinning ranks would inflate what is measured.
 */
#ifndef WSP_MEASURE_H
#define WSP_MEASURE_H

#include "wirespeed.h"

#include <stdint.h>

/* The most messages a stream keeps in flight. */
enum { WSP__MEASURE_WINDOW_MAX = 16 };

/* reps + 1 round trips of `bytes` bytes with `peer` on `tag`, the first a
 * warm-up; samples[i] gets the seconds of round trip i + 1 (reps entries).
 * buf holds `bytes` bytes. */
int wsp__measure_pingpong(const wsp_comm_t *comm, int peer, int tag, char *buf, int bytes,
                          int reps, double *samples);
/* reps + 1 streams, the first a warm-up: the lower rank sends `window`
 * messages of `bytes` back to back and the other answers with 8 bytes when
 * all have arrived (with `both`, each side sends its window to the other at
 * once and there is no answer); samples[i] gets the seconds of stream
 * i + 1. buf holds 1 + window messages; window <= WSP__MEASURE_WINDOW_MAX. */
int wsp__measure_stream(const wsp_comm_t *comm, int peer, int tag, char *buf, int bytes,
                        int window, int reps, int both, double *samples);
/* The MPI's eager limit on the path to `peer`: the largest size up to
 * which a send completes before its receive is posted. An eager send
 * completes at the sender alone; a rendezvous send waits for the
 * receiver's answer, so it cannot. The lower rank sends n bytes on `tag`
 * and watches the send for watch_s + per_byte * n seconds; then it sends
 * the verdict on `verdict_tag`, and only then does the higher rank post
 * the receive. n doubles from `from` until a send waits (or n passes
 * `max`), then the interval between the largest eager size and the
 * smallest rendezvous size is halved until it is no wider than `rel`
 * times the eager size (0: to the byte, below `from` too). *limit: the
 * largest eager size found (with rel > 0, 0 when the send of `from` bytes
 * already waited; the largest size tried when none waited up to `max`).
 * *sent (when not NULL) adds the bytes this rank sent. buf holds max
 * bytes. Both ranks call it with the same arguments. The verdict reads
 * the MPI's behaviour, not a setting, so it holds for any transport,
 * SimGrid's included; a send that completes late only lowers it. */
int wsp__measure_eager(const wsp_comm_t *comm, int peer, int tag, int verdict_tag, char *buf,
                       size_t from, size_t max, double rel, double watch_s, double per_byte,
                       size_t *limit, uint64_t *sent);
/* The smallest of n samples. */
double wsp__measure_min(const double *samples, int n);
/* Sorts v[0..n) ascending. */
void wsp__measure_sort(double *v, size_t n);
/* The median of v[0..n) (the mean of the two middle values for even n;
 * 0 when n <= 0), the library's one median. scratch holds n doubles and
 * gets v sorted; it may be v itself, which is then sorted in place. */
double wsp__measure_median(const double *v, int n, double *scratch);

#endif
