# SPDX-License-Identifier: BSD-3-Clause
"""wirespeed.Shuffle: the all-pairs shuffle with request and response handlers in Python.

Every rank posts requests to any rank; the destination's `on_requests` answers them and the
requester's `on_responses` gets each request back with its response. The engine (C) batches,
paces and bounds memory exactly as for C callers (docs/shuffle.md). Python is called once per
group of up to 128 requests or responses of one peer, not once per request
(wsp_shuffle_open_batched), so the cost of entering Python is spread over the group:

    def on_requests(source, requests):      # list of memoryview -> list of responses
        return [table[bytes(r)] for r in requests]

    def on_responses(dest, requests, responses):
        for q, r in zip(requests, responses):
            store(bytes(q), bytes(r))

    with comm.shuffle(on_requests, on_responses) as sh:
        for key in keys:
            sh.post(owner(key), key)
    print(sh.stats["requests_posted"])

The memoryviews a handler gets are valid during the call only (they are released after it;
copy with bytes() to keep one). on_requests returns one response per request, each a
bytes-like object or None for an empty response; the engine copies them while serving goes
on, and the Python layer keeps them alive until then. on_responses may post follow-up
requests. An exception in a handler fails the shuffle: close() raises HandlerError on that
rank, chained to the exception, and RemoteError on the others; nobody hangs.
"""
from __future__ import annotations

import ctypes
from ctypes import byref, c_double, c_size_t, c_void_p
from typing import Any, Callable, Dict, List, Optional, Sequence

import numpy as np
from mpi4py import MPI

from . import _lib
from .errors import Error, HandlerError, argument, check, error, status

lib = _lib.lib

OnRequests = Callable[[int, List[memoryview]], Sequence[Any]]
OnResponses = Callable[[int, List[memoryview], List[memoryview]], None]

_ERR_AGAIN = status("WSP_ERR_AGAIN")
# Keyword -> (config field, how a value is read). Sizes and rates also take text ("64M").
_SIZE, _RATE, _SECONDS, _MODE, _BOOL = "size", "rate", "seconds", "mode", "bool"
_CONFIG = {
    "batch_bytes": ("batch_bytes", _SIZE), "batch_delay": ("batch_delay", _SECONDS),
    "peer_window": ("peer_window", _SIZE), "window": ("window", _SIZE),
    "memory": ("mem_limit", _SIZE), "mode": ("mode", _MODE), "rate": ("rate", _RATE),
    "progress_thread": ("progress_thread", _BOOL), "piece_bytes": ("piece_bytes", _SIZE),
}
_MODES = {"adaptive": 0, "fixed": 1}
# Open shuffles: the engine holds their handlers (ctypes callbacks) until close, so they must
# live that long even if the program drops its last reference.
_OPEN: set = set()


def _config(settings: Dict[str, Any]) -> _lib.ShuffleConfig:
    cfg = _lib.ShuffleConfig()
    check(lib.wsp_shuffle_config_init(byref(cfg)))
    check(lib.wsp_shuffle_config_from_env(byref(cfg)))
    for key, value in settings.items():
        if key not in _CONFIG:
            raise argument(f"Shuffle: unknown setting {key!r} (one of {', '.join(_CONFIG)})")
        field, kind = _CONFIG[key]
        if kind == _SIZE and isinstance(value, str):
            size = c_size_t()
            check(lib.wsp_parse_size(value.encode(), byref(size)))
            value = size.value
        elif kind == _RATE and isinstance(value, str):
            rate = c_double()
            check(lib.wsp_parse_rate(value.encode(), byref(rate)))
            value, cfg.mode = rate.value, _MODES["fixed"]
        elif kind == _RATE:
            cfg.mode = _MODES["fixed"]
        elif kind == _MODE:
            if value not in _MODES:
                raise argument(f"Shuffle: mode = {value!r} is not 'adaptive' or 'fixed'")
            value = _MODES[value]
        try:
            setattr(cfg, field, int(value) if kind in (_SIZE, _BOOL, _MODE) else float(value))
        except (TypeError, ValueError, OverflowError):
            raise argument(f"Shuffle: {key} = {value!r} is not a valid "
                           f"{'size' if kind == _SIZE else 'number'}") from None
    return cfg


def _views(raw: np.ndarray, col: int, n: int) -> List[memoryview]:
    """Memoryviews of n (pointer, length) pairs in raw[:, col:col+2], which all lie in one
    buffer of the engine: slices of one view over the span they cover."""
    ptr, size = raw[:n, col], raw[:n, col + 1]
    used = size > 0
    if not used.any():
        return [memoryview(b"") for _ in range(n)]
    base = int(ptr[used].min())
    end = int((ptr[used] + size[used]).max())
    whole = memoryview((ctypes.c_char * (end - base)).from_address(base)).cast("B")
    whole = whole.toreadonly()
    offs = np.where(used, ptr - base, 0)
    return [whole[o:o + s] for o, s in zip(offs.tolist(), size.tolist())]


def _release(views: List[memoryview]) -> None:
    for v in views:
        try:
            v.release()
        except BufferError:  # the handler exported it (np.frombuffer); documented
            pass


class Shuffle:
    """An open shuffle on a wirespeed.Comm (collective to open and to close).

    Settings (also from the WSP_SHUFFLE_* environment variables, docs/env.md): memory
    (bound on the engine's buffers, bytes or "64M"), batch_bytes, batch_delay (seconds),
    peer_window, window, mode ("adaptive" or "fixed"), rate (bytes/s or "24mbit"; selects
    fixed mode), progress_thread, piece_bytes. Every rank passes the same.
    """

    def __init__(self, comm, on_requests: OnRequests, on_responses: OnResponses,
                 **settings: Any):
        if not callable(on_requests) or not callable(on_responses):
            raise argument("Shuffle: on_requests and on_responses must be callables")
        cfg = _config(settings)
        self._on_requests, self._on_responses = on_requests, on_responses
        self._keep: Any = None        # the responses the engine has yet to copy
        self._exc: Optional[BaseException] = None
        self._deferred: List[tuple] = []   # follow-ups refused for memory (WSP_ERR_AGAIN)
        self._in_handler = False
        self.calls = {"on_requests": 0, "on_responses": 0}
        # The ctypes callbacks must live as long as the shuffle.
        self._handlers = _lib.BatchHandlers(_lib.BatchHandler(self._requests_cb),
                                            _lib.BatchHandler(self._responses_cb))
        self._sh = c_void_p()
        self.stats: Dict[str, Any] = {}
        check(lib.wsp_shuffle_open_batched(comm._ptr("shuffle"), byref(cfg),
                                           byref(self._handlers), None, byref(self._sh)))
        _OPEN.add(self)

    # -- the handlers, called by the engine -------------------------------------------------
    def _requests_cb(self, _user, source, n, items) -> int:
        if self._exc is not None:
            return 1
        views: List[memoryview] = []
        try:
            self._in_handler = True
            self.calls["on_requests"] += 1
            raw = np.ctypeslib.as_array(ctypes.cast(items, ctypes.POINTER(ctypes.c_uint64)),
                                        shape=(n, 4))
            views = _views(raw, 0, n)
            out = self._on_requests(source, views)
            if out is None or len(out) != n:
                raise ValueError(f"on_requests returned {0 if out is None else len(out)} "
                                 f"responses for {n} requests")
            addr, size = [0] * n, [0] * n
            keep: List[Any] = [None] * n
            for i, r in enumerate(out):
                if r is None:
                    continue
                m = memoryview(r)
                if not m.c_contiguous:
                    raise ValueError(f"response {i} is not a contiguous buffer")
                if m.nbytes:
                    addr[i], size[i], keep[i] = MPI.buffer(m).address, m.nbytes, m
            raw[:, 2] = addr
            raw[:, 3] = size
            self._keep = keep
            return 0
        except BaseException as e:  # noqa: BLE001  (reported by close)
            self._exc = e
            return 1
        finally:
            _release(views)
            self._in_handler = False

    def _responses_cb(self, _user, dest, n, items) -> int:
        if self._exc is not None:
            return 1
        reqs: List[memoryview] = []
        resps: List[memoryview] = []
        try:
            self._in_handler = True
            self.calls["on_responses"] += 1
            raw = np.ctypeslib.as_array(ctypes.cast(items, ctypes.POINTER(ctypes.c_uint64)),
                                        shape=(n, 4))
            reqs, resps = _views(raw, 0, n), _views(raw, 2, n)
            if self._deferred:
                self._post_deferred()
            self._on_responses(dest, reqs, resps)
            return 0
        except BaseException as e:  # noqa: BLE001
            self._exc = e
            return 1
        finally:
            _release(reqs)
            _release(resps)
            self._in_handler = False

    # -- the caller's side ------------------------------------------------------------------
    def _handle(self, fn: str) -> c_void_p:
        if not self._sh:
            raise argument(f"Shuffle.{fn}: the shuffle has been freed")
        return self._sh

    def post(self, dest: int, data: Any = b"") -> None:
        """Posts a request (copied) to rank dest; may wait for room, serving meanwhile. From
        on_responses it never waits: a follow-up that finds no memory is posted again later."""
        sh = self._handle("post")
        m = memoryview(data)
        if not m.c_contiguous:
            raise argument("Shuffle.post: data is not C-contiguous")
        if not self._in_handler and self._deferred:
            self._post_deferred()
        rc = lib.wsp_shuffle_post(sh, int(dest), MPI.buffer(m).address if m.nbytes else None,
                                  m.nbytes)
        if rc == _ERR_AGAIN and self._in_handler:
            self._deferred.append((int(dest), bytes(m)))
            return
        self._raise(rc)

    def _post_deferred(self) -> None:
        pending, self._deferred = self._deferred, []
        for dest, data in pending:
            self.post(dest, data)

    def progress(self) -> None:
        """One pass: receive, serve, send what the bounds allow."""
        sh = self._handle("progress")
        if self._deferred:
            self._post_deferred()
        self._raise(lib.wsp_shuffle_progress(sh))

    def close(self) -> Dict[str, Any]:
        """Collective: returns once every request of every rank is answered and handled, with
        this rank's statistics (also in .stats; global_* fields are sums over all ranks)."""
        sh = self._handle("close")
        if self._deferred and self._exc is None:
            self._post_deferred()
        st = _lib.ShuffleStats()
        rc = lib.wsp_shuffle_close(sh, byref(st))
        _OPEN.discard(self)
        self.stats = {f[0]: getattr(st, f[0]) for f in _lib.ShuffleStats._fields_}
        self._keep = None
        self._raise(rc)
        if self._deferred:
            raise Error(_ERR_AGAIN, f"Shuffle.close: {len(self._deferred)} follow-up post(s) "
                                    "found no memory and could not be posted again before "
                                    "the shuffle ended (raise the memory setting)")
        return self.stats

    def free(self) -> None:
        """Frees a closed shuffle (local)."""
        if self._sh:
            check(lib.wsp_shuffle_free(byref(self._sh)))

    def __enter__(self) -> "Shuffle":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        # Closing is collective: after an exception on this rank, leave it to the caller.
        if exc_type is None:
            try:
                self.close()
            finally:
                # After a failed close the engine may refuse to free; that is left as it is.
                if self._sh:
                    lib.wsp_shuffle_free(byref(self._sh))

    def _raise(self, rc: int) -> None:
        if rc == 0:
            return
        e = error(rc)
        if self._exc is not None and isinstance(e, HandlerError):
            cause, self._exc = self._exc, None
            raise HandlerError(e.status, f"{e.args[0]}: {type(cause).__name__}: "
                                         f"{cause}") from cause
        raise e
