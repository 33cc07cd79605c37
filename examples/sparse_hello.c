/* SPDX-License-Identifier: BSD-3-Clause */
/* The README's example (tests/install builds it against an installed
 * wirespeed; keep the two identical). */
#include <stdio.h>
#include <wirespeed.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  wsp_comm_t *comm;
  if (wsp_comm_create(MPI_COMM_WORLD, NULL, &comm) != WSP_OK) {  /* NULL: defaults + WSP_* env */
    fprintf(stderr, "%s\n", wsp_last_error());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  int rank, size;
  wsp_comm_rank(comm, &rank);
  wsp_comm_size(comm, &size);

  /* Send one number to the next rank; receive whatever anybody sent us. */
  int value = 100 + rank;
  wsp_send_t sends[1] = {{.peer = (rank + 1) % size, .data = &value, .bytes = sizeof value}};
  wsp_recvset_t got;
  int rc = wsp_sparse_exchange(comm, sends, 1, &got);
  if (rc != WSP_OK) {
    fprintf(stderr, "%s: %s\n", wsp_err_name(rc), wsp_last_error());
  } else {
    for (size_t i = 0; i < got.count; i++)   /* ordered by source rank */
      printf("rank %d got %zu bytes from %d\n", rank, got.msgs[i].bytes, got.msgs[i].source);
    wsp_recvset_free(&got);
  }
  wsp_comm_free(&comm);
  MPI_Finalize();
  return rc == WSP_OK ? 0 : 1;  /* a failed exchange fails the program */
}
