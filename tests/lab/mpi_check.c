/* SPDX-License-Identifier: BSD-3-Clause */
/* netlab MPI check: deterministic data from a seed, MPI_Allreduce + MPI_Alltoall,
 * prints one line of checksums from rank 0. The output depends only on (seed, count, np),
 * so a run on loopback and a run across netlab hosts must print the same line.
 *
 * usage: mpi_check SEED COUNT        (COUNT = doubles per rank pair in the alltoall)
 * Rank 0 also prints "bytes_per_pair <n>" so a caller can compute the bytes that must
 * cross host boundaries.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static uint64_t mix(uint64_t x) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return x;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    uint64_t seed = argc > 1 ? strtoull(argv[1], NULL, 10) : 1;
    long count = argc > 2 ? atol(argv[2]) : 1024;
    if (count < 1) count = 1;

    /* allreduce of integers (exact, order-independent) */
    long n = count * np;
    int64_t *a = malloc(sizeof(int64_t) * n), *r = malloc(sizeof(int64_t) * n);
    for (long i = 0; i < n; i++)
        a[i] = (int64_t)(mix(seed * 1000003ULL + (uint64_t)rank * 7919ULL + (uint64_t)i) % 1000000);
    MPI_Allreduce(a, r, (int)n, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);

    /* alltoall: block j of rank i goes to rank j */
    uint64_t *s = malloc(sizeof(uint64_t) * n), *d = malloc(sizeof(uint64_t) * n);
    for (long i = 0; i < n; i++)
        s[i] = mix(seed ^ ((uint64_t)rank << 40) ^ (uint64_t)i);
    MPI_Alltoall(s, (int)count, MPI_UINT64_T, d, (int)count, MPI_UINT64_T, MPI_COMM_WORLD);

    /* verify locally what we received, then checksum everything at rank 0 */
    long bad = 0;
    for (int src = 0; src < np; src++)
        for (long k = 0; k < count; k++)
            if (d[src * count + k] != mix(seed ^ ((uint64_t)src << 40) ^ (uint64_t)(rank * count + k)))
                bad++;
    uint64_t h_all = 0, h_a2a = 0;
    for (long i = 0; i < n; i++) {
        h_all = mix(h_all ^ (uint64_t)r[i]);
        h_a2a = h_a2a + mix(d[i] + (uint64_t)rank);
    }
    uint64_t h_a2a_sum = 0, h_all_max = 0, h_all_min = 0;
    long bad_sum = 0;
    MPI_Reduce(&h_a2a, &h_a2a_sum, 1, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(&h_all, &h_all_max, 1, MPI_UINT64_T, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&h_all, &h_all_min, 1, MPI_UINT64_T, MPI_MIN, 0, MPI_COMM_WORLD);
    MPI_Reduce(&bad, &bad_sum, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("np %d count %ld allreduce %016llx consistent %d alltoall %016llx bad %ld\n", np,
               count, (unsigned long long)h_all_max, h_all_max == h_all_min,
               (unsigned long long)h_a2a_sum, bad_sum);
        printf("bytes_per_pair %ld\n", count * (long)sizeof(uint64_t));
    }
    free(a); free(r); free(s); free(d);
    MPI_Finalize();
    return bad_sum != 0;
}
