# SPDX-License-Identifier: BSD-3-Clause
"""wirespeed.Comm: the library's communicator on an mpi4py communicator.

Buffers are any object with the buffer protocol (NumPy arrays, bytearray, memoryview, ...).
They must be C-contiguous: a non-contiguous array is refused with ArgumentError rather than
copied behind the caller's back (np.ascontiguousarray makes the copy when that is wanted).
Reductions take the MPI datatype from the buffer's element type (int8..int64, the unsigned
types, float32, float64, long double, complex64, complex128, bool); data movement (bcast,
gather, scatter, allgather, alltoall) moves bytes, so any element type, structured ones too,
works there. Sizes are checked against each other before anything is sent; results that the
caller did not provide are allocated as NumPy arrays.

As in MPI, arguments that differ between ranks are the program's error; a size refused on one
rank only raises there (with WSP_CHECK=1 the C library compares the ranks' arguments of the
calls that reach it). The sparse exchange is the exception: there a refused argument on one
rank raises ArgumentError there and RemoteError everywhere else, as in C.
"""
from __future__ import annotations

import ctypes
from ctypes import byref, c_double, c_int, c_void_p
from typing import TYPE_CHECKING, Any, Dict, List, Mapping, Optional, Tuple, Union

import numpy as np
from mpi4py import MPI

from . import _lib
from .errors import argument, check

if TYPE_CHECKING:
    from .shuffle import Shuffle

lib = _lib.lib
_handle = _lib.handle
_IN_PLACE = _lib.IN_PLACE
_BYTE = _handle(MPI.BYTE)

# Element format (the buffer protocol's, as NumPy gives it) -> MPI datatype, for reductions.
_REDUCE_TYPES = {
    "b": MPI.SIGNED_CHAR, "B": MPI.UNSIGNED_CHAR, "h": MPI.SHORT, "H": MPI.UNSIGNED_SHORT,
    "i": MPI.INT, "I": MPI.UNSIGNED, "l": MPI.LONG, "L": MPI.UNSIGNED_LONG,
    "q": MPI.LONG_LONG, "Q": MPI.UNSIGNED_LONG_LONG, "f": MPI.FLOAT, "d": MPI.DOUBLE,
    "g": MPI.LONG_DOUBLE, "Zf": MPI.C_FLOAT_COMPLEX, "Zd": MPI.C_DOUBLE_COMPLEX,
    "Zg": MPI.C_LONG_DOUBLE_COMPLEX, "?": MPI.C_BOOL,
}
_TYPE_HANDLES = {f: _handle(t) for f, t in _REDUCE_TYPES.items()}
_TYPE_HANDLES.update({"@" + f: h for f, h in _TYPE_HANDLES.items()})

COLLECTIVES = ("bcast", "reduce", "allreduce", "gather", "scatter", "allgather", "alltoall")


def _view(obj: Any, fn: str, what: str, writable: bool = False) -> memoryview:
    """A buffer argument as a memoryview, checked: C-contiguous, writable when it is written."""
    try:
        mv = memoryview(obj)
    except TypeError:
        raise argument(f"{fn}: {what} is a {type(obj).__name__}, not a buffer "
                       "(a NumPy array, bytearray, memoryview, ...)") from None
    if not mv.c_contiguous:
        raise argument(f"{fn}: {what} is not C-contiguous (pass np.ascontiguousarray(...) "
                       "to copy it)")
    if writable and mv.readonly:
        raise argument(f"{fn}: {what} is read-only")
    return mv


_address = MPI.buffer if hasattr(MPI, "buffer") else MPI.memory


def _addr(mv: memoryview) -> Optional[int]:
    """The address of a checked view's memory (None when it is empty)."""
    return _address(mv).address if mv.nbytes else None


def _reduce_type(b: memoryview, fn: str, what: str) -> int:
    h = _TYPE_HANDLES.get(b.format)
    if h is None:
        raise argument(f"{fn}: {what} has elements of format {b.format!r}, which has no MPI "
                       "datatype for a reduction here (use a native-byte-order array of "
                       "int8..int64, uint8..uint64, float32, float64, complex64, complex128 or "
                       "bool)")
    return h


def _like(template: Any, shape: Tuple[int, ...]) -> np.ndarray:
    a = np.asarray(template)
    return np.empty(shape, dtype=a.dtype)


class Comm:
    """wirespeed's communicator over an mpi4py communicator (collective to create and free).

    Creating one duplicates `comm` for wirespeed's traffic and calibrates the cost model, which
    takes a few milliseconds to a second. Settings come from the WSP_* environment variables
    (docs/env.md). Free it with `free()` (collective) or use it as a context manager.
    """

    def __init__(self, comm: MPI.Comm = MPI.COMM_WORLD):
        if not isinstance(comm, MPI.Comm) or comm == MPI.COMM_NULL:
            raise argument(f"Comm: comm is {comm!r}, not an mpi4py communicator")
        if comm.Is_inter():
            raise argument("Comm: comm is an intercommunicator (wirespeed takes "
                           "intracommunicators)")
        self._c = c_void_p()
        check(lib.wsp_comm_create(_handle(comm), None, byref(self._c)))
        self.mpi_comm: MPI.Comm = comm
        r, s = c_int(), c_int()
        lib.wsp_comm_rank(self._c, byref(r))
        lib.wsp_comm_size(self._c, byref(s))
        self.rank: int = r.value
        self.size: int = s.value

    # -- life cycle ---------------------------------------------------------------------------
    def free(self) -> None:
        """Frees the communicator (collective). Later calls raise ArgumentError."""
        if self._c:
            check(lib.wsp_comm_free(byref(self._c)))

    def __enter__(self) -> "Comm":
        return self

    def __exit__(self, *exc) -> None:
        self.free()

    def _ptr(self, fn: str) -> c_void_p:
        if not self._c:
            raise argument(f"{fn}: the communicator has been freed")
        return self._c

    # -- collectives --------------------------------------------------------------------------
    def bcast(self, buf: Any, root: int = 0) -> Any:
        """Broadcasts `buf` from `root` into every rank's `buf` (same size everywhere); returns
        buf."""
        c = self._ptr("bcast")
        b = _view(buf, "bcast", "buf", writable=self.rank != root)
        check(lib.wsp_bcast(c, _addr(b), b.nbytes, _BYTE, root))
        return buf

    def allreduce(self, sendbuf: Any, recvbuf: Any = None, op: MPI.Op = MPI.SUM) -> Any:
        """recvbuf = op over every rank's sendbuf, on every rank; returns recvbuf.

        recvbuf=None allocates it like sendbuf. In place: allreduce(MPI.IN_PLACE, buf), or the
        same object as both buffers."""
        c = self._ptr("allreduce")
        if sendbuf is MPI.IN_PLACE or sendbuf is recvbuf:
            r = _view(recvbuf, "allreduce", "recvbuf", True)
            t = _reduce_type(r, "allreduce", "recvbuf")
            check(lib.wsp_allreduce(c, _IN_PLACE, _addr(r), r.nbytes // r.itemsize, t,
                                    _handle(op)))
            return recvbuf
        s = _view(sendbuf, "allreduce", "sendbuf", False)
        t = _reduce_type(s, "allreduce", "sendbuf")
        if recvbuf is None:
            recvbuf = np.empty_like(np.asarray(sendbuf))
        r = _view(recvbuf, "allreduce", "recvbuf", True)
        _same(s, r, "allreduce")
        check(lib.wsp_allreduce(c, _addr(s), _addr(r), s.nbytes // s.itemsize, t, _handle(op)))
        return recvbuf

    def reduce(self, sendbuf: Any, recvbuf: Any = None, op: MPI.Op = MPI.SUM,
               root: int = 0) -> Any:
        """op over every rank's sendbuf into root's recvbuf; returns recvbuf at the root (None
        elsewhere). recvbuf=None at the root allocates it; MPI.IN_PLACE as sendbuf at the root
        reduces into recvbuf."""
        c = self._ptr("reduce")
        _root(root, self.size, "reduce")
        at_root = self.rank == root
        if at_root and (sendbuf is MPI.IN_PLACE or sendbuf is recvbuf):
            r = _view(recvbuf, "reduce", "recvbuf", True)
            t = _reduce_type(r, "reduce", "recvbuf")
            check(lib.wsp_reduce(c, _IN_PLACE, _addr(r), r.nbytes // r.itemsize, t,
                                 _handle(op), root))
            return recvbuf
        s = _view(sendbuf, "reduce", "sendbuf", False)
        t = _reduce_type(s, "reduce", "sendbuf")
        raddr = None
        if at_root:
            if recvbuf is None:
                recvbuf = np.empty_like(np.asarray(sendbuf))
            r = _view(recvbuf, "reduce", "recvbuf", True)
            _same(s, r, "reduce")
            raddr = _addr(r)
        check(lib.wsp_reduce(c, _addr(s), raddr, s.nbytes // s.itemsize, t, _handle(op),
                             root))
        return recvbuf if at_root else None

    def gather(self, sendbuf: Any, recvbuf: Any = None, root: int = 0) -> Any:
        """Every rank's sendbuf, in rank order, into root's recvbuf (size × sendbuf's bytes);
        returns recvbuf at the root, None elsewhere. recvbuf=None at the root allocates an
        array of shape (size, *sendbuf.shape)."""
        c = self._ptr("gather")
        _root(root, self.size, "gather")
        at_root = self.rank == root
        s = _view(sendbuf, "gather", "sendbuf", False)
        raddr = None
        if at_root:
            if recvbuf is None:
                recvbuf = _like(sendbuf, (self.size,) + np.shape(sendbuf))
            r = _view(recvbuf, "gather", "recvbuf", True)
            _blocks(r, s.nbytes, self.size, "gather", "recvbuf", "sendbuf")
            raddr = _addr(r)
        check(lib.wsp_gather(c, _addr(s), s.nbytes, _BYTE, raddr, s.nbytes, _BYTE, root))
        return recvbuf if at_root else None

    def scatter(self, sendbuf: Any, recvbuf: Any, root: int = 0) -> Any:
        """Block i of root's sendbuf (size blocks of recvbuf's bytes) into rank i's recvbuf;
        returns recvbuf. sendbuf is only read at the root (pass None elsewhere)."""
        c = self._ptr("scatter")
        _root(root, self.size, "scatter")
        if recvbuf is None:
            raise argument("scatter: recvbuf is None (every rank passes the buffer its block "
                           "goes to)")
        r = _view(recvbuf, "scatter", "recvbuf", True)
        saddr = None
        if self.rank == root:
            s = _view(sendbuf, "scatter", "sendbuf", False)
            _blocks(s, r.nbytes, self.size, "scatter", "sendbuf", "recvbuf")
            saddr = _addr(s)
        check(lib.wsp_scatter(c, saddr, r.nbytes, _BYTE, _addr(r), r.nbytes, _BYTE, root))
        return recvbuf

    def allgather(self, sendbuf: Any, recvbuf: Any = None) -> Any:
        """Every rank's sendbuf, in rank order, into every rank's recvbuf; returns recvbuf.
        recvbuf=None allocates an array of shape (size, *sendbuf.shape); in place:
        allgather(MPI.IN_PLACE, recvbuf) with this rank's block already at its place."""
        c = self._ptr("allgather")
        if sendbuf is MPI.IN_PLACE:
            return self._in_place_blocks("allgather", lib.wsp_allgather, recvbuf)
        s = _view(sendbuf, "allgather", "sendbuf", False)
        if recvbuf is None:
            recvbuf = _like(sendbuf, (self.size,) + np.shape(sendbuf))
        r = _view(recvbuf, "allgather", "recvbuf", True)
        _blocks(r, s.nbytes, self.size, "allgather", "recvbuf", "sendbuf")
        check(lib.wsp_allgather(c, _addr(s), s.nbytes, _BYTE, _addr(r), s.nbytes, _BYTE))
        return recvbuf

    def alltoall(self, sendbuf: Any, recvbuf: Any = None) -> Any:
        """Block j of every rank i's sendbuf (size equal blocks) to block i of rank j's recvbuf;
        returns recvbuf. recvbuf=None allocates one like sendbuf; in place:
        alltoall(MPI.IN_PLACE, recvbuf)."""
        c = self._ptr("alltoall")
        if sendbuf is MPI.IN_PLACE:
            return self._in_place_blocks("alltoall", lib.wsp_alltoall, recvbuf)
        s = _view(sendbuf, "alltoall", "sendbuf", False)
        _blocks(s, None, self.size, "alltoall", "sendbuf", None)
        if recvbuf is None:
            recvbuf = np.empty_like(np.asarray(sendbuf))
        r = _view(recvbuf, "alltoall", "recvbuf", True)
        if r.nbytes != s.nbytes:
            raise argument(f"alltoall: recvbuf has {r.nbytes} bytes, sendbuf {s.nbytes} (they "
                           "must be equal)")
        n = s.nbytes // self.size
        check(lib.wsp_alltoall(c, _addr(s), n, _BYTE, _addr(r), n, _BYTE))
        return recvbuf

    def _in_place_blocks(self, fn: str, call, recvbuf: Any) -> Any:
        """allgather or alltoall in place: recvbuf holds size blocks, this rank's in place."""
        r = _view(recvbuf, fn, "recvbuf", True)
        _blocks(r, None, self.size, fn, "recvbuf", None)
        check(call(self._c, _IN_PLACE, 0, _BYTE, _addr(r), r.nbytes // self.size, _BYTE))
        return recvbuf

    # -- sparse exchange ----------------------------------------------------------------------
    def sparse_exchange(self, sends: Mapping[int, Any],
                        alg: Optional[str] = None) -> Dict[int, memoryview]:
        """Sends sends[peer] to each peer and returns {source: message} of everything sent to
        this rank, by ascending source (collective: every rank calls, maybe with {}).

        The messages are read-only memoryviews of bytes over memory that lives as long as any
        of them; np.frombuffer(m, dtype) reads them as arrays. alg forces "nbx", "pex" or
        "alltoallv" (every rank the same); None uses the communicator's setting (default auto).
        A refused argument on one rank raises ArgumentError there and RemoteError on the
        others, with nothing delivered."""
        c = self._ptr("sparse_exchange")
        problem = None
        try:
            items = list(sends.items())
        except AttributeError:
            items, problem = [], (f"sparse_exchange: sends is a {type(sends).__name__}, not a "
                                  "mapping {peer: buffer}")
        arr = (_lib.Send * max(len(items), 1))()
        keep = []
        for i, (peer, data) in enumerate(items):
            try:
                if isinstance(peer, bool) or not isinstance(peer, (int, np.integer)):
                    raise argument(f"sparse_exchange: peer {peer!r} is not a rank number")
                b = _view(data, "sparse_exchange", f"sends[{peer}]", False)
                keep.append(b)
                arr[i].peer, arr[i].data, arr[i].bytes = int(peer), _addr(b), b.nbytes
            except Exception as e:  # noqa: BLE001  (the C call below agrees on the failure)
                problem = problem or str(e).removeprefix("WSP_ERR_ARG: ")
                arr[i].peer, arr[i].data, arr[i].bytes = -1, None, 0
        if problem is not None:
            # Let the library agree on the failure: an invalid peer makes this rank return
            # WSP_ERR_ARG and every other WSP_ERR_REMOTE, with nothing sent.
            arr[0].peer, arr[0].data, arr[0].bytes = -1, None, 0
            items = items or [(-1, b"")]
        got = _lib.RecvSet()
        if alg is None:
            rc = lib.wsp_sparse_exchange(c, arr, len(items), byref(got))
        else:
            a = c_int()
            check(lib.wsp_sparse_alg_from_name(alg.encode(), byref(a)))
            rc = lib.wsp_sparse_exchange_alg(c, a.value, arr, len(items), byref(got))
        if problem is not None:
            if rc == 0:
                lib.wsp_recvset_free(byref(got))
            raise argument(problem)
        check(rc)
        return _RecvSet(got).messages()

    # -- the shuffle --------------------------------------------------------------------------
    def shuffle(self, on_requests, on_responses, **settings: Any) -> "Shuffle":
        """Opens an all-pairs shuffle (collective): wirespeed.Shuffle(self, ...)."""
        from .shuffle import Shuffle
        return Shuffle(self, on_requests, on_responses, **settings)

    # -- the model ----------------------------------------------------------------------------
    def predict(self, coll: str, nbytes: int, alg: Optional[str] = None,
                commutative: bool = True) -> Union[Optional[float], Dict[str, Optional[float]]]:
        """Predicted seconds of a collective on `nbytes` (per rank's block for gather, scatter,
        allgather and alltoall) under the communicator's model: of algorithm `alg`, or of every
        algorithm as {name: seconds} when alg is None. None where an algorithm's preconditions
        do not hold."""
        c, k = self._ptr("predict"), _coll(coll)
        names = [alg] if alg is not None else algorithms(coll)
        out = {}
        for name in names:
            a, s = c_int(), c_double()
            check(lib.wsp_coll_alg_from_name(k, name.encode(), byref(a)))
            check(lib.wsp_coll_predict(c, k, a.value, int(nbytes), int(bool(commutative)),
                                       byref(s)))
            out[name] = None if s.value < 0 else s.value
        return out[alg] if alg is not None else out

    def select(self, coll: str, nbytes: int, commutative: bool = True) -> str:
        """The algorithm auto runs for this collective and size (rules file, then model)."""
        c, k, a = self._ptr("select"), _coll(coll), c_int()
        check(lib.wsp_coll_select(c, k, int(nbytes), int(bool(commutative)), byref(a)))
        return lib.wsp_coll_alg_info(k, a.value).contents.name.decode()

    def set_algorithm(self, coll: str, alg: str) -> None:
        """Runs `coll` with algorithm `alg` ("auto" to let the model choose) from now on
        (collective; every rank passes the same)."""
        c, k, a = self._ptr("set_algorithm"), _coll(coll), c_int()
        check(lib.wsp_coll_alg_from_name(k, alg.encode(), byref(a)))
        check(lib.wsp_coll_set_alg(c, k, a.value))

    @property
    def model(self) -> Dict[str, float]:
        """The α-β-γ model's parameters (seconds, seconds per byte; docs/coll.md)."""
        m = _lib.Model()
        check(lib.wsp_comm_model(self._ptr("model"), byref(m)))
        return {f[0]: getattr(m, f[0]) for f in _lib.Model._fields_}


def algorithms(coll: str) -> List[str]:
    """The names of a collective's algorithms, in the library's table order."""
    k = _coll(coll)
    return [lib.wsp_coll_alg_info(k, i).contents.name.decode()
            for i in range(lib.wsp_coll_alg_count(k))]


def _coll(name: str) -> int:
    k = c_int()
    if not isinstance(name, str) or lib.wsp_coll_from_name(name.encode(), byref(k)) != 0:
        raise argument(f"coll = {name!r} is not one of {', '.join(COLLECTIVES)}")
    return k.value


def _same(s: memoryview, r: memoryview, fn: str) -> None:
    if r.nbytes != s.nbytes or r.format != s.format:
        raise argument(f"{fn}: recvbuf ({r.nbytes} bytes of {r.format!r}) does not match "
                       f"sendbuf ({s.nbytes} bytes of {s.format!r})")


def _blocks(b: memoryview, block: Optional[int], size: int, fn: str, what: str,
            other: Optional[str]) -> None:
    if block is not None and b.nbytes != size * block:
        raise argument(f"{fn}: {what} has {b.nbytes} bytes, but {size} ranks × {block} bytes of "
                       f"{other} need {size * block}")
    if block is None and b.nbytes % size:
        raise argument(f"{fn}: {what} has {b.nbytes} bytes, not a multiple of the {size} ranks")


def _root(root: int, size: int, fn: str) -> None:
    if isinstance(root, bool) or not isinstance(root, (int, np.integer)) or \
            not 0 <= root < size:
        raise argument(f"{fn}: root = {root!r} is out of range [0, {size})")


class _RecvSet:
    """Owns a wsp_recvset_t; the memoryviews it hands out keep it alive."""

    def __init__(self, got: _lib.RecvSet):
        self.got = got

    def messages(self) -> Dict[int, memoryview]:
        out = {}
        for i in range(self.got.count):
            m = self.got.msgs[i]
            if m.bytes == 0:
                out[m.source] = memoryview(b"")
                continue
            arr = (ctypes.c_char * m.bytes).from_address(m.data)
            arr._owner = self
            out[m.source] = memoryview(arr).cast("B").toreadonly()
        return out

    def __del__(self):
        lib.wsp_recvset_free(byref(self.got))
