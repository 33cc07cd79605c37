# SPDX-License-Identifier: BSD-3-Clause
"""The shim under mpi4py and NumPy: a Python program that knows nothing of
wirespeed calls Allreduce (plain and in place), Bcast, Reduce, Allgather,
Gather, Scatter and Alltoall on NumPy arrays of 20000 doubles (above the
shim's auto threshold) and of int32, and checks each result against NumPy's
own arithmetic on the inputs every rank can compute. Exit status 1 on a
wrong result (rank 0: on any rank's)."""
import sys

import numpy as np
from mpi4py import MPI

comm = MPI.COMM_WORLD
rank, p = comm.Get_rank(), comm.Get_size()
n = 20000
failures = 0


def val(r, dtype=np.float64):
    i = np.arange(n)
    return ((r * 7 + i * 3) % 101).astype(dtype)


def check(what, got, want):
    global failures
    if not np.array_equal(got, want):
        failures += 1
        bad = np.flatnonzero(got != want)[:3]
        print(f"rank {rank}: {what}: elements {bad} are {got[bad]}, want {want[bad]}",
              file=sys.stderr)


for dtype, mpitype in ((np.float64, MPI.DOUBLE), (np.int32, MPI.INT)):
    total = sum(val(s, dtype) for s in range(p))
    a, b = val(rank, dtype), np.empty(n, dtype)
    comm.Allreduce([a, mpitype], [b, mpitype], op=MPI.SUM)
    check(f"Allreduce {dtype.__name__}", b, total)
    comm.Allreduce(MPI.IN_PLACE, [a, mpitype], op=MPI.SUM)
    check(f"Allreduce in place {dtype.__name__}", a, total)

root = 1 % p
a = val(root) if rank == root else np.full(n, -1.0)
comm.Bcast(a, root=root)
check("Bcast", a, val(root))

a, b = val(rank), np.zeros(n)
comm.Reduce(a, b if rank == root else None, op=MPI.MAX, root=root)
if rank == root:
    check("Reduce max", b, np.max([val(s) for s in range(p)], axis=0))

g = np.empty(n * p)
comm.Allgather(val(rank + 2), g)
check("Allgather", g, np.concatenate([val(s + 2) for s in range(p)]))

g = np.empty(n * p) if rank == root else None
comm.Gather(val(rank + 3), g, root=root)
if rank == root:
    check("Gather", g, np.concatenate([val(s + 3) for s in range(p)]))

b = np.empty(n)
comm.Scatter(np.concatenate([val(s + 4) for s in range(p)]) if rank == root else None, b,
             root=root)
check("Scatter", b, val(rank + 4))

# Alltoall: rank r's block for rank s is val(10 r + s).
recv = np.empty(n * p)
comm.Alltoall(np.concatenate([val(10 * rank + s) for s in range(p)]), recv)
check("Alltoall", recv, np.concatenate([val(10 * s + rank) for s in range(p)]))

# The verdict: every rank's failures, summed at rank 0 by point-to-point
# messages. A collective would be one more call the shim takes (mpi4py's
# allreduce of an object ends in MPI_Bcast), and one that returned without
# writing would report none. The other ranks end with their own count.
if rank == 0:
    total = failures + sum(comm.recv(source=s, tag=0) for s in range(1, p))
    print(f"shim_py: {total} failures")
else:
    comm.send(failures, dest=0, tag=0)
    total = failures
sys.exit(1 if total else 0)
