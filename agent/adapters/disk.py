"""Telling a full disk from a damaged store.

Why: a write that fails for want of room reaches the agent in many shapes, and most of them read like damage. The
OS says ENOSPC (no space), EDQUOT (quota) or EFBIG (a file may not grow: a size limit); SQLite turns the first into
SQLITE_FULL ("database or disk is full") and the last into an I/O error ("disk I/O error", code 778), and Chroma
wraps either in its own exception. Taken for damage, a full disk had its index moved aside at every start (twenty
copies, 284 MB), each start making the disk fuller. So an error that says "full" is a full disk, and an I/O error
is one when a small test write in the same directory fails the same way; nothing is moved aside for it.
"""

from __future__ import annotations

import errno
import os
import shutil
import sqlite3
import tempfile
from pathlib import Path

from agent.errors import DiskFull

FULL_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})
_FULL_WORDS = ("database or disk is full", "no space left on device", "disk quota exceeded", "file too large")
_IO_WORDS = ("disk i/o error", "input/output error")
_SQLITE_FULL = 13
_SQLITE_IOERR = 10
# A start writes less than this before it is of use (Chroma's catalogue, a journal, the sidecar).
PROBE_BYTES = 256 * 1024


def _chain(exc: BaseException) -> list[BaseException]:
    seen: list[BaseException] = []
    at: BaseException | None = exc
    while at is not None and at not in seen:
        seen.append(at)
        at = at.__cause__ or at.__context__
    return seen


def _reason(exc: BaseException) -> str | None:
    """The words of the first error in ``exc``'s chain that says there is no room, or None."""
    for error in _chain(exc):
        if isinstance(error, OSError) and error.errno in FULL_ERRNOS:
            return error.strerror or os.strerror(error.errno)
        if isinstance(error, sqlite3.Error) and getattr(error, "sqlite_errorcode", None) == _SQLITE_FULL:
            return "database or disk is full"
        text = str(error).lower()
        for words in _FULL_WORDS:
            if words in text:
                return words[0].upper() + words[1:]
    return None


def _io_error(exc: BaseException) -> bool:
    for error in _chain(exc):
        code = getattr(error, "sqlite_errorcode", None)
        if (isinstance(code, int) and code & 0xFF == _SQLITE_IOERR) or any(w in str(error).lower() for w in _IO_WORDS):
            return True
    return False


def no_room(directory: Path) -> str | None:
    """Why ``directory`` cannot take a small write now (no space, quota, a file size limit), or None if it can:
    a test file of ``PROBE_BYTES`` is written, synced and removed. Other failures (permissions) are not room."""
    try:
        fd, name = tempfile.mkstemp(prefix=".agent-room-", dir=directory)
    except OSError as exc:
        return exc.strerror if exc.errno in FULL_ERRNOS else None
    try:
        view = memoryview(bytes(PROBE_BYTES))
        while view:
            view = view[os.write(fd, view):]
        os.fsync(fd)
    except OSError as exc:
        return exc.strerror if exc.errno in FULL_ERRNOS else None
    finally:
        os.close(fd)
        os.unlink(name)
    return None


AT_OPEN = "Memory is off in this run, and nothing was moved aside: free some space, then start again."


def full(exc: BaseException, directory: Path, what: str, then: str = AT_OPEN) -> DiskFull | None:
    """``DiskFull`` for the failure ``exc`` met writing in ``directory`` if it came from a full disk, else None.
    ``what`` says what could not be done ("The memory index ... cannot be opened"), ``then`` what it means now."""
    reason = _reason(exc) or (no_room(directory) if _io_error(exc) else None)
    if reason is None:
        return None
    return DiskFull(f"{what}: the disk holding {directory} is full ({reason}; {_free(directory)} free). {then}",
                    directory)


def _free(directory: Path) -> str:
    try:
        free = float(shutil.disk_usage(directory).free)
    except OSError:
        return "unknown"
    if free < 1024:
        return f"{free:.0f} bytes"
    units = ["KB", "MB", "GB", "TB"]
    free /= 1024
    while free >= 1024 and len(units) > 1:
        free /= 1024
        units.pop(0)
    return f"{free:.1f} {units[0]}"
