/*
 * Calibration of the α-β-γ model (model.h).
 *
 * When: wsp_comm_create, unless the configuration gives all three of
 * alpha, beta and gamma. How: ranks pair up across the communicator, i with i + floor(p/2) (so that on
 * a block-mapped multi-host job the pairs cross hosts, the links collectives
 * mostly use). alpha is half the round trip of an 8-byte ping-pong. beta
 * comes from a stream: the lower rank sends a window of 8 messages of
 * 64 KiB back to back and the other answers with 8 bytes when all have
 * arrived; beta = (time - 2 alpha) / 512 KiB; beta_x the same with both
 * sides sending their window at once. (Not a single 64 KiB ping-pong: on
 * shaped TCP links one message after an idle pause does not reach the link
 * rate, so it overestimated beta several times over; collectives stream.)
 * alpha_node and beta_node are the same ping-pong and stream between
 * ranks 2i and 2i+1 of each node (when nodes hold two ranks or more).
 * gamma times MPI_Reduce_local(MPI_SUM) over 64 KiB of doubles. Each
 * figure is the best of a few repetitions on a rank, and then the largest
 * over all ranks: the slowest pair bounds a collective. gap (LogGP's g)
 * is the time between small messages arriving back to back: the lower
 * rank sends a window of 16 messages of 8 bytes at once and the other
 * answers when all have arrived, gap = (time - 2 alpha) / 15; it is what
 * each further message costs a root that has all its messages in flight
 * (linear gather and scatter), where the latencies overlap. The whole
 * calibration costs about 210 small messages (most of them in the gap's
 * windows, which take about 11 round trips) and 32 large ones per rank.
 */
#include "model.h"

#include "../core/measure.h"
#include "../core/tags.h"
#include "../core/wsp_internal.h"

#include <math.h>
#include <stdlib.h>

enum { WSP__CAL_SMALL = 8, WSP__CAL_LARGE = 65536, WSP__CAL_WINDOW = 8,
       WSP__CAL_GAP_WINDOW = 16, WSP__CAL_REPS_SMALL = 10, WSP__CAL_REPS_LARGE = 3 };
_Static_assert((int)WSP__CAL_GAP_WINDOW <= (int)WSP__MEASURE_WINDOW_MAX &&
                   WSP__CAL_WINDOW <= WSP__CAL_GAP_WINDOW,
               "a stream holds the largest window");
_Static_assert(WSP__CAL_REPS_LARGE <= WSP__CAL_REPS_SMALL, "the samples arrays hold every rep");

/* The best of reps round trips (measure.h). */
static int wsp__pingpong(wsp_comm_t *comm, int peer, char *buf, int bytes, int reps,
                         double *best) {
  double t[WSP__CAL_REPS_SMALL];
  int rc = wsp__measure_pingpong(comm, peer, WSP__TAG_CALIBRATE, buf, bytes, reps, t);
  *best = wsp__measure_min(t, reps);
  return rc;
}

/* The best of reps streams (measure.h). */
static int wsp__stream(wsp_comm_t *comm, int peer, char *buf, int bytes, int window,
                       int reps, int both, double *best) {
  double t[WSP__CAL_REPS_SMALL];
  int rc = wsp__measure_stream(comm, peer, WSP__TAG_CALIBRATE, buf, bytes, window, reps,
                               both, t);
  *best = wsp__measure_min(t, reps);
  return rc;
}

int wsp__model_calibrate(wsp_comm_t *comm, wsp_model_t *out) {
  int rc = WSP_OK, p = comm->size, me = comm->rank;
  double local[8] = {0, 0, 0, 0, 0, 0, 0, 0}, global[8];
  char *buf = calloc(1 + WSP__CAL_WINDOW, WSP__CAL_LARGE);
  double *red = calloc(WSP__CAL_LARGE / sizeof(double), sizeof(double) * 2);
  /* Everybody learns of a local allocation failure before any pair starts
   * (a rank that skipped its ping-pong would leave its partner waiting). */
  rc = wsp__agree_alloc(comm, comm->mpi, buf == NULL || red == NULL, "model calibration");
  if (rc != WSP_OK) goto out;
  /* Pairing: i <-> i + h with h = floor(p/2); the last rank of an odd p
   * sits out (its figures are 0 and do not count in the maximum). */
  int h = p / 2, peer = -1;
  if (h > 0) {
    if (me < h) peer = me + h;
    else if (me < 2 * h) peer = me - h;
  }
  if (peer >= 0) {
    double ts, tl;
    if ((rc = wsp__pingpong(comm, peer, buf, WSP__CAL_SMALL, WSP__CAL_REPS_SMALL, &ts)))
      goto out;
    double tx, tg;
    if ((rc = wsp__stream(comm, peer, buf, WSP__CAL_LARGE, WSP__CAL_WINDOW,
                          WSP__CAL_REPS_LARGE, 0, &tl)) ||
        (rc = wsp__stream(comm, peer, buf, WSP__CAL_LARGE, WSP__CAL_WINDOW,
                          WSP__CAL_REPS_LARGE, 1, &tx)) ||
        (rc = wsp__stream(comm, peer, buf, WSP__CAL_SMALL, WSP__CAL_GAP_WINDOW,
                          WSP__CAL_REPS_SMALL, 0, &tg)))
      goto out;
    local[0] = ts / 2;
    /* Negative when the window was faster than the best ping-pong (noise);
     * the floor below applies. */
    local[7] = (tg - ts) / (WSP__CAL_GAP_WINDOW - 1);
    local[1] = (tl - ts) / ((double)WSP__CAL_WINDOW * WSP__CAL_LARGE);
    /* The exchange has no acknowledgement: subtract one way only. */
    local[4] = (tx - ts / 2) / ((double)WSP__CAL_WINDOW * WSP__CAL_LARGE);
  }
  /* Inside nodes (shared memory): local ranks 2i and 2i+1 pair up. */
  wsp_comm_t *node = comm->topo.local;
  if (node && node->size >= 2 && (node->rank ^ 1) < node->size) {
    double ts, tl;
    int npeer = node->rank ^ 1;
    if ((rc = wsp__pingpong(node, npeer, buf, WSP__CAL_SMALL, WSP__CAL_REPS_SMALL, &ts)) ||
        (rc = wsp__stream(node, npeer, buf, WSP__CAL_LARGE, WSP__CAL_WINDOW,
                          WSP__CAL_REPS_LARGE, 0, &tl)))
      goto out;
    local[5] = ts / 2;
    local[6] = (tl - ts) / ((double)WSP__CAL_WINDOW * WSP__CAL_LARGE);
  }
  {
    size_t n = WSP__CAL_LARGE / sizeof(double);
    double best = INFINITY;
    for (int i = 0; i < 4; i++) {
      double t0 = MPI_Wtime();
      WSP__MPI_GOTO(comm, MPI_Reduce_local(red, red + n, (int)n, MPI_DOUBLE, MPI_SUM), rc, out);
      double t = MPI_Wtime() - t0;
      if (t < best) best = t;
    }
    local[2] = best / WSP__CAL_LARGE;
  }
  /* local[3] is unused (it once carried the allocation failure, agreed on
   * above now). */
  WSP__MPI_GOTO(comm, MPI_Allreduce(local, global, 8, MPI_DOUBLE, MPI_MAX, comm->mpi), rc, out);
  /* Floors keep the model meaningful when a timer cannot resolve a term
   * (shared memory, simulated computation). */
  out->alpha = fmax(global[0], 1e-7);
  out->beta = fmax(global[1], 1e-12);
  out->gamma = fmax(global[2], 1e-13);
  out->beta_x = fmax(global[4], out->beta);
  /* Back-to-back messages cannot take longer apart than one alone. */
  out->gap = fmin(fmax(global[7], 1e-8), out->alpha);
  /* No node holds a pair: the node figures are the network's. */
  out->alpha_node = global[5] > 0 ? fmax(global[5], 1e-7) : out->alpha;
  out->beta_node = global[6] > 0 ? fmax(global[6], 1e-12) : out->beta;
  out->calibrated = 1;
out:
  free(buf);
  free(red);
  return rc;
}
