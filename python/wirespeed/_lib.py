# SPDX-License-Identifier: BSD-3-Clause
"""Loading libwirespeed and describing its functions to ctypes.

The library is the one setup.py found or built (wirespeed/_build.py says which), or the file
named by WIRESPEED_LIBRARY. It must be built for the MPI that mpi4py runs on: MPI handles are
passed as they are (a pointer under Open MPI, an int under MPICH), so a mismatch is refused at
import with both names, before any call could misread a handle.
"""
from __future__ import annotations

import ctypes
import os
from ctypes import POINTER, c_char_p, c_double, c_int, c_size_t, c_void_p

from mpi4py import MPI

try:
    from . import _build
except ImportError:  # a source tree that setup.py has not built
    _build = None  # type: ignore[assignment]


class LibraryError(ImportError):
    """libwirespeed could not be found or does not fit mpi4py's MPI."""


def _path() -> str:
    env = os.environ.get("WIRESPEED_LIBRARY")
    if env:
        return env
    if _build is not None and _build.LIBRARY:
        return _build.LIBRARY
    bundled = os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib", "libwirespeed.so")
    if _build is None and not os.path.exists(bundled):
        raise LibraryError("wirespeed: no libwirespeed here: install the package with pip "
                           "(pip install ./python) or set WIRESPEED_LIBRARY")
    return bundled


def _mpi_of_mpi4py() -> str:
    text = MPI.Get_library_version()
    if text.startswith("Open MPI"):
        return "openmpi"
    if "MPICH" in text:
        return "mpich"
    return "other"


LIBRARY_PATH = _path()
try:
    lib = ctypes.CDLL(LIBRARY_PATH)
except OSError as e:
    raise LibraryError(f"wirespeed: cannot load {LIBRARY_PATH}: {e}") from e

lib.wsp_build_info.restype = c_char_p
BUILD_INFO: str = lib.wsp_build_info().decode()
FLAVOR = next((w.split()[1].rstrip(",") for w in map(str.strip, BUILD_INFO.split(";"))
               if w.startswith("MPI ")), "other")
if FLAVOR in ("openmpi", "mpich") and FLAVOR != _mpi_of_mpi4py():
    raise LibraryError(
        f"wirespeed: {LIBRARY_PATH} is built for {FLAVOR}, but mpi4py runs on "
        f"{MPI.Get_library_version().splitlines()[0]!r}: build the package for the same MPI "
        "(MPICC=... pip install ./python) or point mpi4py at the library's MPI")

lib.wsp_version.restype = c_char_p
__version__: str = lib.wsp_version().decode()

# An MPI handle as C sees it: MPI_Comm, MPI_Datatype and MPI_Op have one size in each MPI.
Handle = c_void_p if MPI._sizeof(MPI.Comm) == ctypes.sizeof(c_void_p) else c_int


def handle(obj) -> int:
    """The C handle of an mpi4py object (Comm, Datatype, Op), as ctypes takes it."""
    h = obj.handle if hasattr(obj, "handle") else MPI._handleof(obj)
    if Handle is c_int and h >= 1 << 31:
        h -= 1 << 32
    return h


class Send(ctypes.Structure):
    _fields_ = [("peer", c_int), ("data", c_void_p), ("bytes", c_size_t)]


class Recv(ctypes.Structure):
    _fields_ = [("source", c_int), ("bytes", c_size_t), ("data", c_void_p)]


class RecvSet(ctypes.Structure):
    _fields_ = [("count", c_size_t), ("msgs", POINTER(Recv)), ("alg", c_int),
                ("wsp__storage", c_void_p)]


class AlgInfo(ctypes.Structure):
    _fields_ = [("name", c_char_p), ("desc", c_char_p), ("cost", c_char_p)]


class Model(ctypes.Structure):
    _fields_ = [("alpha", c_double), ("beta", c_double), ("gamma", c_double),
                ("beta_x", c_double), ("alpha_node", c_double), ("beta_node", c_double),
                ("gap", c_double), ("calibrated", c_int), ("eager", c_size_t),
                ("eager_node", c_size_t), ("alpha_wan", c_double), ("beta_wan", c_double),
                ("beta_wan_link", c_double), ("lanes_min", c_size_t), ("eager_from", c_int),
                ("lanes_drain", c_double)]


class ShuffleConfig(ctypes.Structure):
    _fields_ = [("batch_bytes", c_size_t), ("batch_delay", c_double),
                ("peer_window", c_size_t), ("window", c_size_t), ("mem_limit", c_size_t),
                ("mode", c_int), ("rate", c_double), ("progress_thread", c_int),
                ("piece_bytes", c_size_t)]


_U64 = ctypes.c_uint64


class ShuffleStats(ctypes.Structure):
    _fields_ = [("requests_posted", _U64), ("requests_served", _U64),
                ("responses_handled", _U64), ("request_bytes", _U64),
                ("response_bytes_sent", _U64), ("response_bytes_received", _U64),
                ("batches_sent", _U64), ("chunks_sent", _U64), ("chunks_in_pieces", _U64),
                ("piece_bytes", c_size_t), ("post_waits", _U64),
                ("post_wait_seconds", c_double), ("mem_limit", c_size_t),
                ("mem_current", c_size_t), ("mem_peak", c_size_t),
                ("peak_backlog", c_size_t), ("peak_inflight", c_size_t),
                ("peak_intake", c_size_t), ("peak_resp_out", c_size_t),
                ("peak_resp_in", c_size_t), ("max_request", c_size_t),
                ("max_response", c_size_t), ("rate", c_double), ("rate_min", c_double),
                ("rate_max", c_double), ("rtt_min_per_byte", c_double), ("srtt", c_double),
                ("inflight", c_double), ("global_requests_posted", _U64),
                ("global_requests_served", _U64), ("nomem_waits", _U64),
                ("chunks_on_lanes", _U64)]


class ShuffleItem(ctypes.Structure):
    _fields_ = [("req", c_void_p), ("req_bytes", c_size_t), ("resp", c_void_p),
                ("resp_bytes", c_size_t)]


# int (*)(void *user, int peer, size_t n, wsp_shuffle_item_t *items), both batched handlers.
BatchHandler = ctypes.CFUNCTYPE(c_int, c_void_p, c_int, c_size_t, POINTER(ShuffleItem))


class BatchHandlers(ctypes.Structure):
    _fields_ = [("on_requests", BatchHandler), ("on_responses", BatchHandler)]


P = c_void_p   # wsp_comm_t *, wsp_shuffle_t *, buffers
H = Handle
# name: (result, arguments). The one place the C signatures are written in Python.
_PROTOTYPES = {
    "wsp_strerror": (c_char_p, [c_int]),
    "wsp_err_name": (c_char_p, [c_int]),
    "wsp_last_error": (c_char_p, []),
    "wsp_version": (c_char_p, []),
    "wsp_comm_create": (c_int, [H, P, POINTER(P)]),
    "wsp_comm_free": (c_int, [POINTER(P)]),
    "wsp_comm_rank": (c_int, [P, POINTER(c_int)]),
    "wsp_comm_size": (c_int, [P, POINTER(c_int)]),
    "wsp_comm_model": (c_int, [P, POINTER(Model)]),
    "wsp_sparse_exchange": (c_int, [P, POINTER(Send), c_size_t, POINTER(RecvSet)]),
    "wsp_sparse_exchange_alg": (c_int, [P, c_int, POINTER(Send), c_size_t, POINTER(RecvSet)]),
    "wsp_recvset_free": (c_int, [POINTER(RecvSet)]),
    "wsp_sparse_alg_info": (POINTER(AlgInfo), [c_int]),
    "wsp_sparse_alg_from_name": (c_int, [c_char_p, POINTER(c_int)]),
    "wsp_bcast": (c_int, [P, P, c_size_t, H, c_int]),
    "wsp_reduce": (c_int, [P, P, P, c_size_t, H, H, c_int]),
    "wsp_allreduce": (c_int, [P, P, P, c_size_t, H, H]),
    "wsp_gather": (c_int, [P, P, c_size_t, H, P, c_size_t, H, c_int]),
    "wsp_scatter": (c_int, [P, P, c_size_t, H, P, c_size_t, H, c_int]),
    "wsp_allgather": (c_int, [P, P, c_size_t, H, P, c_size_t, H]),
    "wsp_alltoall": (c_int, [P, P, c_size_t, H, P, c_size_t, H]),
    "wsp_coll_name": (c_char_p, [c_int]),
    "wsp_coll_from_name": (c_int, [c_char_p, POINTER(c_int)]),
    "wsp_coll_alg_count": (c_int, [c_int]),
    "wsp_coll_alg_info": (POINTER(AlgInfo), [c_int, c_int]),
    "wsp_coll_alg_from_name": (c_int, [c_int, c_char_p, POINTER(c_int)]),
    "wsp_coll_set_alg": (c_int, [P, c_int, c_int]),
    "wsp_coll_predict": (c_int, [P, c_int, c_int, c_size_t, c_int, POINTER(c_double)]),
    "wsp_coll_select": (c_int, [P, c_int, c_size_t, c_int, POINTER(c_int)]),
    "wsp_parse_size": (c_int, [c_char_p, POINTER(c_size_t)]),
    "wsp_parse_rate": (c_int, [c_char_p, POINTER(c_double)]),
    "wsp_shuffle_config_init": (c_int, [POINTER(ShuffleConfig)]),
    "wsp_shuffle_config_from_env": (c_int, [POINTER(ShuffleConfig)]),
    "wsp_shuffle_open_batched": (c_int, [P, POINTER(ShuffleConfig), POINTER(BatchHandlers),
                                         P, POINTER(P)]),
    "wsp_shuffle_post": (c_int, [P, c_int, P, c_size_t]),
    "wsp_shuffle_progress": (c_int, [P]),
    "wsp_shuffle_close": (c_int, [P, POINTER(ShuffleStats)]),
    "wsp_shuffle_stats": (c_int, [P, POINTER(ShuffleStats)]),
    "wsp_shuffle_free": (c_int, [POINTER(P)]),
}
for _name, (_res, _args) in _PROTOTYPES.items():
    _f = getattr(lib, _name)
    _f.restype, _f.argtypes = _res, _args

# MPI_IN_PLACE as C sees it (Open MPI's is (void *) 1, MPICH's (void *) -1).
try:
    IN_PLACE = c_void_p(int(MPI.IN_PLACE)).value
except TypeError:
    IN_PLACE = 1 if FLAVOR == "openmpi" else c_void_p(-1).value
