# SPDX-License-Identifier: BSD-3-Clause
"""wirespeed for mpi4py and NumPy.

    from mpi4py import MPI
    import numpy as np
    import wirespeed

    with wirespeed.Comm(MPI.COMM_WORLD) as comm:
        total = comm.allreduce(np.arange(4.0), op=MPI.SUM)
        got = comm.sparse_exchange({(comm.rank + 1) % comm.size: b"hello"})

The reference is docs/python.md in the repository. The first use of a name below loads
libwirespeed (built or found when the package was installed) and checks that it was built for
the MPI that mpi4py runs on; the commands wirespeed-lab and wirespeed-report need neither.
"""
from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

# Public name -> the module that defines it (loaded on first use, PEP 562).
_NAMES = {
    "Comm": "comm", "COLLECTIVES": "comm", "algorithms": "comm", "Shuffle": "shuffle",
    "Error": "errors", "ArgumentError": "errors", "RemoteError": "errors",
    "MismatchError": "errors", "HandlerError": "errors", "TimeoutError": "errors",
    "BUILD_INFO": "_lib", "FLAVOR": "_lib", "LIBRARY_PATH": "_lib", "__version__": "_lib",
}
__all__ = sorted(_NAMES)

if TYPE_CHECKING:
    from ._lib import BUILD_INFO, FLAVOR, LIBRARY_PATH, __version__  # noqa: F401
    from .comm import COLLECTIVES, Comm, algorithms  # noqa: F401
    from .shuffle import Shuffle  # noqa: F401
    from .errors import (ArgumentError, Error, HandlerError, MismatchError,  # noqa: F401
                         RemoteError, TimeoutError)


def __getattr__(name: str) -> Any:
    module = _NAMES.get(name)
    if module is None:
        raise AttributeError(f"module 'wirespeed' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(list(globals()) + __all__)
