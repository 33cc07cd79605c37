/* SPDX-License-Identifier: BSD-3-Clause */
/* Recursive doubling for every p up to 70: executing every rank's schedule
 * step by step with FIFO channels, every rank ends with the sum of all
 * values, every message sent is received by the step that expects it, and
 * no rank waits for a message nobody sends (no deadlock). */
#include <stdlib.h>
#include <string.h>

#include "../../src/patterns/rdouble.h"
#include "check.h"

#define PMAX 70

/* One in-flight value per (src, dst); schedules never queue two. */
static int full[PMAX][PMAX];
static unsigned long long chan[PMAX][PMAX];

static void run(int p) {
  unsigned long long val[PMAX], expect = 0;
  int step[PMAX], sent[PMAX];
  for (int i = 0; i < p; i++) {
    val[i] = 1ull << (i % 60) | (unsigned long long)i * 1000003u;
    expect += val[i];
    step[i] = 0;
    sent[i] = 0;
  }
  memset(full, 0, sizeof full);
  for (int progress = 1; progress;) {
    progress = 0;
    for (int i = 0; i < p; i++) {
      wsp__rd_step_t s = wsp__rd_step(p, i, step[i]);
      if (s.action == WSP__RD_DONE) continue;
      CHECK(s.peer >= 0 && s.peer < p && s.peer != i, "p=%d rank %d peer %d", p, i, s.peer);
      int sends = s.action == WSP__RD_SEND || s.action == WSP__RD_EXCHANGE;
      int recvs = s.action != WSP__RD_SEND;
      if (sends && !sent[i]) {
        CHECK(!full[i][s.peer], "p=%d: two values queued %d->%d", p, i, s.peer);
        full[i][s.peer] = 1;
        chan[i][s.peer] = val[i];
        sent[i] = 1;
        progress = 1;
      }
      if (recvs) {
        if (!full[s.peer][i]) continue; /* wait */
        unsigned long long in = chan[s.peer][i];
        full[s.peer][i] = 0;
        val[i] = s.action == WSP__RD_RECV_RESULT ? in : val[i] + in;
      }
      step[i]++;
      sent[i] = 0;
      progress = 1;
    }
  }
  for (int i = 0; i < p; i++) {
    CHECK(step[i] == wsp__rd_nsteps(p, i), "p=%d rank %d stuck at step %d of %d",
          p, i, step[i], wsp__rd_nsteps(p, i));
    CHECK(val[i] == expect, "p=%d rank %d has the wrong sum", p, i);
    for (int j = 0; j < p; j++) CHECK(!full[i][j], "p=%d: leftover %d->%d", p, i, j);
  }
}

int main(void) {
  for (int p = 1; p <= PMAX; p++) run(p);
  /* Step counts: lg p for powers of two; lg p' + 2 for the odd helpers. */
  CHECK(wsp__rd_nsteps(64, 5) == 6, "p=64");
  CHECK(wsp__rd_nsteps(6, 0) == 2 && wsp__rd_nsteps(6, 1) == 4 && wsp__rd_nsteps(6, 5) == 2,
        "p=6 schedule lengths");
  CHECK(wsp__rd_step(8, 0, 99).action == WSP__RD_DONE, "past the end");
  return check_summary("test_patterns");
}
