"""Ports for the servers a test starts, and for a server that is not there.

A server that takes its port on the command line (``chroma run``, the llama.cpp server) gets one the OS has just
handed out, but between that probe and the server's own bind another program may take it: eight test suites run at
once on a shared machine. The server then exits, or, worse, another one answers there and the test talks to it. So
a server is ready only once it listens on the port itself (its own socket in ``/proc/net/tcp``), and a start that
lost the port is tried again on another one.
"""

from __future__ import annotations

import os
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import IO

_LISTEN = "0A"


def free_port() -> int:
    """A port nothing listens on right now (the OS's choice): for a server that binds it itself."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


@contextmanager
def refused_port() -> Iterator[int]:
    """A port held, bound and never listening, for the whole block: a connection to it is refused, and no other
    program can start listening there meanwhile."""
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        yield held.getsockname()[1]


def listens(pid: int, port: int) -> bool:
    """Whether process ``pid`` itself holds a socket listening on ``port``."""
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table) as rows:
                next(rows)
                for row in rows:
                    fields = row.split()
                    if fields[3] == _LISTEN and int(fields[1].rsplit(":", 1)[1], 16) == port:
                        inodes.add(f"socket:[{fields[9]}]")
        except FileNotFoundError:
            continue
    if not inodes:
        return False
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except FileNotFoundError:
        return False
    for fd in fds:
        try:
            if os.readlink(f"/proc/{pid}/fd/{fd}") in inodes:
                return True
        except OSError:  # closed meanwhile
            continue
    return False


def serve(command: Callable[[int], list[str]], log: IO[bytes], timeout: float,
          tries: int = 5) -> tuple[subprocess.Popen[bytes], int]:
    """Start ``command(port)`` on a free port until a start listens there itself; its process and port. Fails only
    if no start listens within a generous ``timeout`` each, or ``tries`` starts in a row exit first."""
    for _ in range(tries):
        port = free_port()
        proc = subprocess.Popen(command(port), stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + timeout
        while proc.poll() is None and not listens(proc.pid, port):
            if time.monotonic() > deadline:
                proc.kill()
                proc.wait()
                raise AssertionError(f"{command(port)[0]} did not listen on port {port} within {timeout:.0f} s")
            time.sleep(0.05)
        if proc.poll() is None:
            return proc, port
        proc.wait()  # it exited: another program took the port first, or it failed (its log says which)
    raise AssertionError(f"{command(0)[0]} exited {tries} times before it listened")
