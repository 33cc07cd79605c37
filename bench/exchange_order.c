/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * exchange_order: does it matter, for one large pairwise exchange, whether
 * each rank posts its receive or its send first?
 *
 * Plain MPI, no wirespeed: every rank exchanges one message with the partner
 * at distance d (rank XOR d), for d = 1, 2, 4, ... < p, with the message
 * halving at each distance (n/2, n/4, ...) as in the reduce-scatter of
 * Rabenseifner's allreduce. Each exchange is timed between two barriers; the
 * slowest rank's time counts. The two orders alternate inside every
 * repetition so that both see the same lab state:
 *   recv-first: MPI_Irecv then MPI_Isend (what MPI_Sendrecv does),
 *   send-first: MPI_Isend then MPI_Irecv.
 * Rank 0 prints the median rate per order and distance, the ratio of the two
 * and, with --link-mbit, the rate per direction as a fraction of the link.
 * On netlab (shaped TCP, both Open MPI 4.1 and MPICH 4.0) recv-first ran at
 * about half the link per direction and send-first markedly faster; this
 * is why wirespeed's exchanges post the send first (docs/results/coll.md,
 * "Exchanges ran at about half speed").
 *
 * Build: mpicc -O2 -o exchange_order bench/exchange_order.c
 * Usage: exchange_order [--bytes N] [--reps R] [--link-mbit M] [--json FILE]
 *                       [--label TEXT]
 * Needs a power-of-two number of ranks (every rank has a partner at every d).
 */
#define _POSIX_C_SOURCE 200809L /* nanosleep (patient.h) */
#include <mpi.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../tools/common/patient.h"

enum { ORDERS = 2, MAX_STEPS = 30 };
static const char *const order_name[ORDERS] = {"recv-first", "send-first"};
static int me; /* this rank: only rank 0 reports argument errors */

static void usage(FILE *f) {
  fprintf(f,
          "usage: exchange_order [--bytes N] [--reps R] [--link-mbit M] "
          "[--json FILE] [--label TEXT]\n"
          "  --bytes N      message at distance 1 is N/2 bytes, halving per "
          "step (default 16777216)\n"
          "  --reps R       repetitions of both orders (default 3)\n"
          "  --link-mbit M  print rates as a fraction of an M Mbit/s link\n"
          "  --json FILE    append one JSON line per order and step\n"
          "  --label TEXT   label of the JSON lines (default exchange-order)\n"
          "Needs a power-of-two number of ranks.\n");
}

/* Parses a positive integer option value; 0 on error. */
static int parse_u64(const char *opt, const char *v, unsigned long long *out) {
  char *end = NULL;
  errno = 0;
  unsigned long long x = v ? strtoull(v, &end, 10) : 0;
  if (v == NULL || *v == '\0' || *v == '-' || *end != '\0' || errno != 0 ||
      x == 0) {
    if (me == 0)
      fprintf(stderr, "exchange_order: %s needs a positive integer, got '%s'\n",
              opt, v ? v : "(nothing)");
    return 0;
  }
  *out = x;
  return 1;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

#define CHECK(call)                                                        \
  do {                                                                     \
    int rc_ = (call);                                                      \
    if (rc_ != MPI_SUCCESS) {                                              \
      fprintf(stderr, "exchange_order: %s failed (%d)\n", #call, rc_);     \
      MPI_Abort(MPI_COMM_WORLD, 1);                                        \
    }                                                                      \
  } while (0)

int main(int argc, char **argv) {
  CHECK(MPI_Init(&argc, &argv));
  int rank, p;
  CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  CHECK(MPI_Comm_size(MPI_COMM_WORLD, &p));
  me = rank;

  unsigned long long bytes = 16ull << 20, reps = 3, link_mbit = 0;
  const char *json = NULL, *label = "exchange-order";
  int ok = 1;
  for (int i = 1; i < argc && ok; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      if (rank == 0) usage(stdout);
      MPI_Finalize();
      return 0;
    } else if (!strcmp(a, "--bytes")) {
      ok = parse_u64(a, v, &bytes), i++;
    } else if (!strcmp(a, "--reps")) {
      ok = parse_u64(a, v, &reps), i++;
    } else if (!strcmp(a, "--link-mbit")) {
      ok = parse_u64(a, v, &link_mbit), i++;
    } else if (!strcmp(a, "--json") || !strcmp(a, "--label")) {
      if (v == NULL || *v == '\0') {
        if (rank == 0) fprintf(stderr, "exchange_order: %s needs a value\n", a);
        ok = 0;
      } else if (a[2] == 'j') {
        json = v;
      } else {
        label = v;
      }
      i++;
    } else {
      if (rank == 0) {
        fprintf(stderr, "exchange_order: unknown argument '%s'\n", a);
        usage(stderr);
      }
      ok = 0;
    }
  }
  if (ok && (p < 2 || (p & (p - 1)) != 0)) {
    if (rank == 0)
      fprintf(stderr,
              "exchange_order: needs a power-of-two number of ranks >= 2, "
              "got %d\n", p);
    ok = 0;
  }
  if (ok && (bytes / 2 > (unsigned long long)0x7fffffff || bytes < 2 ||
             reps > 1000)) {
    if (rank == 0)
      fprintf(stderr,
              "exchange_order: --bytes must be in [2, 2^32) and --reps at "
              "most 1000\n");
    ok = 0;
  }
  if (!ok) {
    MPI_Finalize();
    return 2;
  }

  int steps = 0;
  while ((1 << steps) < p && steps < MAX_STEPS) steps++;
  size_t half = (size_t)(bytes / 2);
  char *sb = malloc(half), *rb = malloc(half);
  double *rate = malloc(sizeof(double) * ORDERS * (size_t)steps * reps);
  int mem_ok = sb != NULL && rb != NULL && rate != NULL, all_ok = 0;
  CHECK(MPI_Allreduce(&mem_ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
  if (!all_ok) {
    if (!mem_ok) fprintf(stderr, "exchange_order: rank %d: out of memory\n", rank);
    free(sb), free(rb), free(rate);
    MPI_Finalize();
    return 1;
  }
  memset(sb, rank & 0xff, half);

  for (unsigned long long r = 0; r < reps; r++) {
    for (int o = 0; o < ORDERS; o++) {
      for (int k = 0; k < steps; k++) {
        int peer = rank ^ (1 << k);
        int m = (int)(half >> k);
        MPI_Request q[2];
        MPI_Status st[2]; /* not MPI_STATUSES_IGNORE: GCC 12 warns on MPICH's */
        CHECK(MPI_Barrier(MPI_COMM_WORLD));
        double t = MPI_Wtime();
        if (o == 0) {
          CHECK(MPI_Irecv(rb, m, MPI_BYTE, peer, k, MPI_COMM_WORLD, &q[0]));
          CHECK(MPI_Isend(sb, m, MPI_BYTE, peer, k, MPI_COMM_WORLD, &q[1]));
        } else {
          CHECK(MPI_Isend(sb, m, MPI_BYTE, peer, k, MPI_COMM_WORLD, &q[1]));
          CHECK(MPI_Irecv(rb, m, MPI_BYTE, peer, k, MPI_COMM_WORLD, &q[0]));
        }
        CHECK(MPI_Waitall(2, q, st));
        t = MPI_Wtime() - t;
        double mine = t; /* the pairs done first wait without spinning */
        CHECK(wsp_patient_max(&mine, &t, 1, MPI_COMM_WORLD));
        rate[((size_t)o * (size_t)steps + (size_t)k) * reps + r] =
            (double)m * 8.0 / t / 1e6;
      }
    }
  }

  if (rank == 0) {
    FILE *jf = NULL;
    if (json != NULL && (jf = fopen(json, "a")) == NULL)
      fprintf(stderr, "exchange_order: --json %s: %s\n", json, strerror(errno));
    printf("%-10s %6s %10s %14s %14s %8s", "distance", "p", "bytes",
           "recv-first", "send-first", "ratio");
    if (link_mbit) printf(" %8s %8s", "recv/B", "send/B");
    printf("   (Mbit/s per direction, median of %llu)\n", reps);
    for (int k = 0; k < steps; k++) {
      double med[ORDERS];
      for (int o = 0; o < ORDERS; o++) {
        med[o] = median(&rate[((size_t)o * (size_t)steps + (size_t)k) * reps],
                        (int)reps);
        if (jf)
          fprintf(jf,
                  "{\"bench\":\"exchange_order\",\"label\":\"%s\",\"p\":%d,"
                  "\"order\":\"%s\",\"distance\":%d,\"bytes\":%zu,\"reps\":%llu,"
                  "\"mbit_s_median\":%.3f}\n",
                  label, p, order_name[o], 1 << k, half >> k, reps, med[o]);
      }
      printf("%-10d %6d %10zu %14.1f %14.1f %8.2f", 1 << k, p, half >> k,
             med[0], med[1], med[1] / med[0]);
      if (link_mbit)
        printf(" %8.2f %8.2f", med[0] / (double)link_mbit,
               med[1] / (double)link_mbit);
      printf("\n");
    }
    if (jf) fclose(jf);
  }
  free(sb), free(rb), free(rate);
  CHECK(MPI_Finalize());
  return 0;
}
