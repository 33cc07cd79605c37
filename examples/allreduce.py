#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""wirespeed from Python: the sum of a NumPy array over every rank.

wirespeed.Comm wraps an mpi4py communicator (creating it is collective, as in
C); its allreduce takes NumPy arrays, picks the MPI datatype from the element
type, and lets the cost model choose the algorithm. Every rank checks the
result against the same sum computed with NumPy alone, and rank 0 prints
"allreduce.py: ok, ...". Errors are exceptions (wirespeed.Error and its
subclasses), which end the job through MPI_Abort below.

Install the package (docs/python.md):  pip install ./python
Run:  mpirun -np 3 python3 allreduce.py
"""
import sys

import numpy as np
from mpi4py import MPI

import wirespeed


def main() -> None:
    n = 1 << 20  # 8 MiB of float64
    with wirespeed.Comm(MPI.COMM_WORLD) as comm:
        rank, size = comm.rank, comm.size
        # Small integers: exact sums in any order, so == is the right test.
        mine = (np.arange(n) % 1000 + rank).astype(np.float64)
        total = comm.allreduce(mine, op=MPI.SUM)  # a new array, like mine
        want = sum((np.arange(n) % 1000 + r).astype(np.float64) for r in range(size))
        if not np.array_equal(total, want):
            bad = int(np.flatnonzero(total != want)[0])
            raise SystemExit(f"allreduce.py: rank {rank}: element {bad} is {total[bad]}, "
                             f"expected {want[bad]}")
        alg = comm.select("allreduce", mine.nbytes)  # what auto runs for this size
        if rank == 0:
            print(f"allreduce.py: ok, {n} float64 on {size} ranks, algorithm {alg}")


if __name__ == "__main__":
    try:
        main()
    except (wirespeed.Error, SystemExit) as e:
        # One rank failing alone would leave the others waiting: end them all.
        print(e, file=sys.stderr, flush=True)
        MPI.COMM_WORLD.Abort(1)
