"""An exclusive lock on a store directory, held by the one process that has the embedded Chroma store open.

Why a lock at all: Chroma's embedded store keeps its HNSW index in the memory of each process that opens it and
persists it from there, so two processes writing one directory silently lose records (measured with chromadb
1.5.9). The lock is taken before Chroma opens the directory and held until the store is closed (in practice until
the process ends, as Chroma itself keeps the store open that long). Whoever opens memory only tries it
(``try_acquire``, never a wait): the process that gets it holds the index (``agent.adapters.index_holder``),
every other one works from the ledger alone (``agent.adapters.ledger_vectors``). Only the commands that rebuild the
index wait for it, briefly (``acquire``), and stop with a message naming the holder.

Why ``fcntl.flock`` rather than the ``filelock`` package: the kernel drops the lock when its holder dies, even by
SIGKILL, so a stale lock file never blocks anyone; the lock file is opened with ``O_NOFOLLOW``, so a symlink planted
at its path cannot redirect the pid written into it; and the holder's pid goes into the message of whoever waits.
A lock belongs to a process: every open of the same store in one process shares it.
"""

from __future__ import annotations

import errno
import fcntl
import os
import threading
import time
from pathlib import Path

from agent.errors import MemoryUnavailable, StoreLocked

_POLL = 0.05
_held: dict[Path, int] = {}
_mutex = threading.Lock()


def lock_path(store: Path) -> Path:
    """The lock file of ``store``: beside it, so it stays put when a damaged store is moved aside."""
    return store.with_name(f"{store.name}.lock")


def holder(store: Path) -> str:
    """The pid written in the lock file of ``store`` (by whoever last held it), or "" when there is none."""
    try:
        fd = os.open(lock_path(store), os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return ""
    try:
        return _holder(fd)
    finally:
        os.close(fd)


def _holder(fd: int) -> str:
    try:
        text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
    except OSError:
        return ""
    return text if text.isdigit() else ""


def try_acquire(store: Path) -> bool:
    """Hold the lock of ``store`` if no other process does, without waiting; whether this process holds it now."""
    try:
        acquire(store, 0.0)
    except StoreLocked:
        return False
    return True


def acquire(store: Path, wait: float) -> None:
    """Hold the lock of ``store`` for this process, waiting at most ``wait`` seconds; idempotent in one process.

    Raises ``StoreLocked`` naming the holder's pid when another process keeps it, and ``MemoryUnavailable`` when the
    lock file cannot be opened (a symlink planted at its path, a read-only directory)."""
    path = lock_path(store).absolute()
    with _mutex:
        if path in _held:
            return
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise MemoryUnavailable(f"{path} is a symbolic link, not the agent's lock file: remove it.") from exc
            raise MemoryUnavailable(f"The lock file {path} cannot be opened ({exc.strerror}).") from exc
        deadline = time.monotonic() + wait
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    pid = _holder(fd)
                    os.close(fd)
                    who = f"Another agent process (pid {pid})" if pid else "Another agent process"
                    hung = f" (if it hangs: kill {pid})" if pid else ""
                    raise StoreLocked(
                        f"{who} holds the memory index in {store.parent}, which this command rebuilds: close it"
                        f"{hung}, then run the command again."
                    ) from None
                time.sleep(_POLL)
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode("ascii"), 0)
        _held[path] = fd


def release(store: Path) -> None:
    """Let go of the lock of ``store`` if this process holds it (after the store is closed)."""
    with _mutex:
        fd = _held.pop(lock_path(store).absolute(), None)
        if fd is not None:
            os.close(fd)
