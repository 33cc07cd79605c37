# SPDX-License-Identifier: BSD-3-Clause
"""wirespeed's status codes as Python exceptions.

Every failed call raises an `Error` (or one of its subclasses) carrying the C library's status
(`status`, e.g. -1), its name (`name`, e.g. "WSP_ERR_ARG") and the message of
`wsp_last_error()`, which names the argument or the rank. Arguments that the Python layer
refuses before calling C (a non-contiguous array, a buffer of the wrong size) raise
`ArgumentError` with status WSP_ERR_ARG, as the C library would.
"""
from __future__ import annotations

import builtins

from . import _lib


class Error(Exception):
    """A wirespeed call failed."""

    status: int
    name: str

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status
        self.name = _lib.lib.wsp_err_name(status).decode()

    def __str__(self) -> str:
        return f"{self.name}: {self.args[0]}"


class ArgumentError(Error, ValueError):
    """WSP_ERR_ARG: an argument was refused before anything was sent."""


class RemoteError(Error):
    """WSP_ERR_REMOTE: another rank failed this collective; it was abandoned everywhere."""


class MismatchError(Error):
    """WSP_ERR_MISMATCH: the ranks passed different arguments (WSP_CHECK=1)."""


class HandlerError(Error):
    """WSP_ERR_HANDLER: a shuffle handler raised or returned an error."""


class TimeoutError(Error, builtins.TimeoutError):
    """WSP_ERR_TIMEOUT: no progress for WSP_TIMEOUT seconds; the communicator is unusable."""


# By the C table's names (the numbers live only there); other statuses raise Error itself.
_CLASSES = {"WSP_ERR_ARG": ArgumentError, "WSP_ERR_REMOTE": RemoteError,
            "WSP_ERR_HANDLER": HandlerError, "WSP_ERR_MISMATCH": MismatchError,
            "WSP_ERR_TIMEOUT": TimeoutError}


def status(name: str) -> int:
    """The number of a status, by its name in the C table ("WSP_ERR_AGAIN")."""
    return next(s for s in range(0, -64, -1) if _lib.lib.wsp_err_name(s) == name.encode())


ERR_ARG = status("WSP_ERR_ARG")


def error(status: int, message: str | None = None) -> Error:
    """The exception for a status, with wsp_last_error() as its message by default."""
    if message is None:
        text = _lib.lib.wsp_last_error()
        message = text.decode(errors="replace") if text else ""
        if not message:
            message = _lib.lib.wsp_strerror(status).decode()
    return _CLASSES.get(_lib.lib.wsp_err_name(status).decode(), Error)(status, message)


def check(status: int) -> None:
    """Raises the exception for a non-zero status."""
    if status != 0:
        raise error(status)


def argument(message: str) -> ArgumentError:
    """An ArgumentError made in Python (status WSP_ERR_ARG)."""
    return ArgumentError(ERR_ARG, message)
