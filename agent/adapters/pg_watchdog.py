"""A client-side bound on each exchange with a PostgreSQL server: a frozen server is given up on, not waited for.

Why: a server that is stopped but not gone (SIGSTOP, a paused VM, storage that hangs) keeps its TCP connections
open: its kernel still acknowledges every packet, so neither TCP keepalives nor ``tcp_user_timeout`` ever fire, and
``statement_timeout`` is the server's own clock, stopped with it. psycopg then waits for the reply for ever (its
issue #1371 shows the same half-open connection defeating even a task cancel of the async API). A cancel request is
no way out either: it is a new connection to the same frozen server. What always ends the wait is to shut the
socket down from another thread: psycopg's wait for the reply returns at once with an error, the connection is
broken, and the ledger drops it and connects again at its next call (``connect_timeout`` bounds that attempt).

One thread per ledger watches the one exchange in flight (the ledger's lock lets one through at a time); arming
and disarming it is a lock and a notify, a few microseconds per statement.
"""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager


class Watchdog:
    """Shuts down the socket of an exchange still running when its bound runs out."""

    def __init__(self, name: str) -> None:
        self._name = name
        self._wake = threading.Condition()
        self._armed: tuple[int, float] | None = None  # the socket's descriptor and the deadline
        self._fired = False
        self._closed = False
        self._thread: threading.Thread | None = None

    @contextmanager
    def bound(self, fd: int, seconds: float) -> Iterator[None]:
        """Watch the exchange on socket ``fd`` that the block runs; ``fired`` says afterwards whether it was cut.
        The descriptor must stay open until the block ends: the shut-down happens under the same lock as the
        disarming, so it never reaches a descriptor reused by something else."""
        with self._wake:
            self._closed = False
            if self._thread is None or not self._thread.is_alive():  # the first exchange, or one after ``close``
                self._thread = threading.Thread(target=self._watch, name=f"watchdog-{self._name}", daemon=True)
                self._thread.start()
            self._armed, self._fired = (fd, time.monotonic() + seconds), False
            self._wake.notify()
        try:
            yield
        finally:
            with self._wake:
                self._armed = None

    @property
    def fired(self) -> bool:
        """Whether the last exchange ran out of time (its socket is shut down: the connection is broken)."""
        return self._fired

    def close(self) -> None:
        """End the thread (the next exchange starts another)."""
        with self._wake:
            self._closed = True
            self._wake.notify()

    def _watch(self) -> None:
        with self._wake:
            while not self._closed:
                if self._armed is None:
                    self._wake.wait()
                    continue
                fd, deadline = self._armed
                left = deadline - time.monotonic()
                if left > 0:
                    self._wake.wait(left)
                    continue
                _shut_down(fd)
                self._armed, self._fired = None, True


def _shut_down(fd: int) -> None:
    """Shut the socket ``fd`` down in both directions, through a duplicate of the descriptor (closing that one leaves
    the connection's own descriptor to its owner, psycopg)."""
    try:
        with socket.socket(fileno=os.dup(fd)) as sock:
            sock.shutdown(socket.SHUT_RDWR)
    except OSError:  # already closed or reset by the other end: the exchange ends by itself
        return

