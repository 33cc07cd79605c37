# SPDX-License-Identifier: BSD-3-Clause
"""wirespeed.Comm against mpi4py's own calls, under mpirun at any number of ranks.

Data is integer-valued (also in float and complex arrays), so every sum is exact whatever the
order an algorithm reduces in, and results must equal mpi4py's bit for bit.
"""
import numpy as np
import pytest
from mpi4py import MPI

import wirespeed

WORLD = MPI.COMM_WORLD
DTYPES = [np.int32, np.int64, np.float32, np.float64, np.complex64, np.complex128]
# Sizes in elements: one element, an odd few, and enough to take the large-message algorithms.
COUNTS = [1, 7, 40_000]


def data(dtype, count, rank, salt=0, low=-50, high=50):
    rng = np.random.default_rng(1000 * rank + 7 * count + salt)
    a = rng.integers(low, high, size=count).astype(dtype)
    if np.issubdtype(dtype, np.complexfloating):
        a = a + 1j * rng.integers(low, high, size=count).astype(dtype)
    return a


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("count", COUNTS)
def test_allreduce_sum(comm, agree, dtype, count):
    a = data(dtype, count, comm.rank)
    ref = np.empty_like(a)
    WORLD.Allreduce(a, ref, op=MPI.SUM)
    got = comm.allreduce(a, op=MPI.SUM)
    agree(got.dtype == a.dtype and np.array_equal(got, ref), f"{dtype.__name__} x {count}")


@pytest.mark.parametrize("op", [MPI.MAX, MPI.MIN, MPI.PROD, MPI.BAND, MPI.BOR, MPI.BXOR])
def test_allreduce_ops(comm, agree, op):
    a = data(np.int64, 1000, comm.rank, low=1, high=4)
    ref = np.empty_like(a)
    WORLD.Allreduce(a, ref, op=op)
    out = np.zeros_like(a)
    got = comm.allreduce(a, out, op=op)
    agree(got is out and np.array_equal(out, ref), op.Get_name() if hasattr(op, "Get_name")
          else str(op))


@pytest.mark.parametrize("form", ["IN_PLACE", "same object"])
def test_allreduce_in_place(comm, agree, form):
    a = data(np.float64, 5000, comm.rank)
    ref = np.empty_like(a)
    WORLD.Allreduce(a, ref)
    b = a.copy()
    got = comm.allreduce(MPI.IN_PLACE if form == "IN_PLACE" else b, b)
    agree(got is b and np.array_equal(b, ref), form)


def test_allreduce_user_op(comm, agree):
    # A non-commutative op written in Python: MPI's rank order must hold.
    def first_nonzero(inbuf, inoutbuf, datatype):
        x = np.frombuffer(inbuf, dtype=np.int32)
        y = np.frombuffer(inoutbuf, dtype=np.int32)
        y[:] = np.where(x != 0, x, y)

    op = MPI.Op.Create(first_nonzero, commute=False)
    try:
        a = np.where(np.arange(64) % (comm.rank + 2) == 0, comm.rank + 1, 0).astype(np.int32)
        ref = np.empty_like(a)
        WORLD.Allreduce(a, ref, op=op)
        got = comm.allreduce(a, op=op)
        agree(np.array_equal(got, ref))
    finally:
        op.Free()


@pytest.mark.parametrize("dtype", DTYPES)
def test_reduce(comm, agree, dtype):
    root = comm.size - 1
    a = data(dtype, 3000, comm.rank)
    ref = np.empty_like(a) if comm.rank == root else None
    WORLD.Reduce(a, ref, op=MPI.SUM, root=root)
    got = comm.reduce(a, op=MPI.SUM, root=root)
    if comm.rank == root:
        agree(np.array_equal(got, ref))
    else:
        agree(got is None, "a non-root got a result")
    # In place at the root.
    b = a.copy()
    got = comm.reduce(MPI.IN_PLACE if comm.rank == root else a, b if comm.rank == root else None,
                      root=root)
    agree(comm.rank != root or np.array_equal(b, ref), "in place")


@pytest.mark.parametrize("count", COUNTS)
def test_bcast(comm, agree, count):
    root = comm.size // 2
    a = data(np.complex128, count, comm.rank)
    ref = a.copy()
    WORLD.Bcast(ref, root=root)
    got = comm.bcast(a, root=root)
    agree(got is a and np.array_equal(a, ref))


@pytest.mark.parametrize("dtype", [np.int32, np.float64, np.complex64])
def test_gather_scatter(comm, agree, dtype):
    root = 0
    a = data(dtype, 999, comm.rank)
    ref = np.empty((comm.size, 999), dtype) if comm.rank == root else None
    WORLD.Gather(a, ref, root=root)
    got = comm.gather(a, root=root)
    agree(np.array_equal(got, ref) if comm.rank == root else got is None, "gather")

    whole = data(dtype, comm.size * 333, 99)          # the same on every rank
    want = np.empty(333, dtype)
    WORLD.Scatter(whole, want, root=root)
    out = np.empty(333, dtype)
    comm.scatter(whole if comm.rank == root else None, out, root=root)
    agree(np.array_equal(out, want), "scatter")


@pytest.mark.parametrize("count", COUNTS)
def test_allgather(comm, agree, count):
    a = data(np.int64, count, comm.rank)
    ref = np.empty((comm.size, count), np.int64)
    WORLD.Allgather(a, ref)
    agree(np.array_equal(comm.allgather(a), ref), "allgather")
    b = np.zeros((comm.size, count), np.int64)
    b[comm.rank] = a
    comm.allgather(MPI.IN_PLACE, b)
    agree(np.array_equal(b, ref), "in place")


@pytest.mark.parametrize("count", [1, 5, 4096])
def test_alltoall(comm, agree, count):
    a = data(np.float32, comm.size * count, comm.rank)
    ref = np.empty_like(a)
    WORLD.Alltoall(a, ref)
    agree(np.array_equal(comm.alltoall(a), ref), "alltoall")
    b = a.copy()
    comm.alltoall(MPI.IN_PLACE, b)
    agree(np.array_equal(b, ref), "in place")


def test_bytes_objects(comm, agree):
    # Any buffer: bytes at the root of a bcast, bytearray elsewhere; uint8 sums.
    buf = bytearray(b"wirespeed" if comm.rank == 0 else bytes(9))
    comm.bcast(buf, root=0)
    agree(bytes(buf) == b"wirespeed", "bcast into a bytearray")
    src = bytes([comm.rank % 7]) * 16
    ref = bytearray(16)
    WORLD.Allreduce(src, ref)
    got = comm.allreduce(src, bytearray(16))
    agree(got == ref, "allreduce of bytes")


@pytest.mark.parametrize("round_", range(3))
def test_sparse_exchange(comm, agree, round_):
    rng = np.random.default_rng(31 * comm.rank + round_)
    peers = rng.choice(comm.size, size=min(comm.size, 1 + comm.size // 3), replace=False)
    sends = {int(p): rng.integers(0, 255, size=int(rng.integers(0, 3000)), dtype=np.uint8)
             for p in peers}
    # The reference: the same messages through mpi4py's alltoall.
    ref = WORLD.alltoall([bytes(sends[p]) if p in sends else None for p in range(comm.size)])
    want = {src: msg for src, msg in enumerate(ref) if msg is not None}
    got = comm.sparse_exchange(sends)
    ok = list(got) == sorted(want) and all(bytes(got[s]) == want[s] for s in want)
    agree(ok and all(m.readonly for m in got.values()), f"got {sorted(got)}, want {sorted(want)}")


@pytest.mark.parametrize("alg", ["nbx", "pex", "alltoallv"])
def test_sparse_exchange_alg(comm, agree, alg):
    right = (comm.rank + 1) % comm.size
    got = comm.sparse_exchange({right: np.full(10, comm.rank, np.int32)}, alg=alg)
    left = (comm.rank - 1) % comm.size
    msg = np.frombuffer(got[left], dtype=np.int32)
    agree(list(got) == [left] and np.array_equal(msg, np.full(10, left)), alg)


def test_sparse_exchange_bad_input_agreed(comm):
    # Rank 0 passes a non-contiguous array: it raises ArgumentError, the others RemoteError,
    # and nobody receives anything or hangs.
    right = (comm.rank + 1) % comm.size
    data_ = np.zeros((8, 8))[:, 1] if comm.rank == 0 else np.zeros(8)
    expect = wirespeed.ArgumentError if comm.rank == 0 else wirespeed.RemoteError
    with pytest.raises(expect) as e:
        comm.sparse_exchange({right: data_})
    if comm.rank == 0:
        assert "C-contiguous" in str(e.value) and e.value.name == "WSP_ERR_ARG"
    # The communicator is still usable.
    got = comm.sparse_exchange({right: b"x"})
    assert list(got) == [(comm.rank - 1) % comm.size]


def test_refused_arguments(comm):
    # Refused on every rank alike, before any traffic; the messages name the argument.
    cases = [
        (lambda: comm.allreduce(np.zeros((6, 6))[::2]), "sendbuf is not C-contiguous"),
        (lambda: comm.allreduce(np.zeros(4), np.zeros(5)), "recvbuf (40 bytes"),
        (lambda: comm.allreduce(np.zeros(4), np.zeros(4, np.float32)), "does not match"),
        (lambda: comm.allreduce(np.zeros(4), np.frombuffer(bytes(32))), "recvbuf is read-only"),
        (lambda: comm.allreduce(np.zeros(2, np.float16)), "format 'e'"),
        (lambda: comm.allreduce([1, 2, 3]), "sendbuf is a list, not a buffer"),
        (lambda: comm.bcast(np.zeros(3), root=comm.size), "root = "),
        (lambda: comm.gather(np.zeros(3), np.zeros(3 * comm.size + 1), root=comm.rank),
         "recvbuf has"),
        (lambda: comm.alltoall(np.zeros(comm.size * 2 + 1, np.int8)) if comm.size > 1 else
         comm.alltoall(np.zeros(4), np.zeros(3)), "alltoall: "),
        (lambda: comm.scatter(np.zeros(4), None), "recvbuf is None"),
        (lambda: comm.predict("allreducee", 8), "coll = 'allreducee'"),
    ]
    for call, words in cases:
        with pytest.raises(wirespeed.ArgumentError) as e:
            call()
        assert words in str(e.value), str(e.value)
        assert e.value.name == "WSP_ERR_ARG"


def test_library_errors_carry_status(comm):
    with pytest.raises(wirespeed.ArgumentError) as e:
        comm.set_algorithm("allreduce", "no_such_algorithm")
    assert e.value.name == "WSP_ERR_ARG" and "no_such_algorithm" in str(e.value)


def test_model(comm, agree):
    for coll in wirespeed.COLLECTIVES:
        names = wirespeed.algorithms(coll)
        for nbytes in (8, 1 << 16, 1 << 24):
            pred = comm.predict(coll, nbytes)
            chosen = comm.select(coll, nbytes)
            assert list(pred) == names and chosen in names
            assert pred[chosen] is not None or chosen == "native", (coll, nbytes, chosen)
            assert comm.predict(coll, nbytes, alg=chosen) == pred[chosen]
    m = comm.model
    assert m["alpha"] > 0 and m["beta"] > 0


def test_set_algorithm_runs_it(comm, agree):
    a = data(np.int64, 20_000, comm.rank)
    ref = np.empty_like(a)
    WORLD.Allreduce(a, ref)
    try:
        for alg in wirespeed.algorithms("allreduce"):
            comm.set_algorithm("allreduce", alg)
            agree(np.array_equal(comm.allreduce(a), ref), alg)
    finally:
        comm.set_algorithm("allreduce", "auto")


def test_freed_comm_refuses():
    c = wirespeed.Comm(MPI.COMM_WORLD)
    with c:
        assert c.size == WORLD.size and c.rank == WORLD.rank
    with pytest.raises(wirespeed.ArgumentError, match="has been freed"):
        c.allreduce(np.zeros(1))
    with pytest.raises(wirespeed.ArgumentError, match="not an mpi4py communicator"):
        wirespeed.Comm("world")
