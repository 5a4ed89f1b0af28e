"""A child process held still at a known point of its run, so a test signals it there and nowhere else.

A kill "right after the line" lands wherever the child happens to be by then: on a loaded machine it may have
finished the job and be about to exit. Instead the child's stdout is a pipe whose buffer is already full, so its
first write there (a flushed line such as ``forgot 1 memory: ...``) blocks until the test reads; the test waits
until the kernel says the child is blocked in that very write (``/proc/PID/syscall``), signals it, and reads the
pipe only once the signal has done its work (room in the pipe would let the write through before the signal is
taken). Whatever the load, the signal lands at that write.
"""

from __future__ import annotations

import os
import select
import time
from pathlib import Path

_WRITE = {"x86_64": 1, "aarch64": 64}  # the number of the write system call


class FullPipe:
    """A pipe whose buffer is full: give ``write_end`` to the child as a stream (and close this process's copy),
    ``wait_blocked``, signal it, and once the signal has done its work ``drain`` what it wrote after the filler."""

    def __init__(self) -> None:
        self.read_end, self.write_end = os.pipe()
        os.set_blocking(self.write_end, False)
        self._filler = 0
        for size in (65536, 1):  # pages first, then the bytes left in a partly filled page
            try:
                while True:
                    self._filler += os.write(self.write_end, b"\0" * size)
            except BlockingIOError:
                pass
        os.set_blocking(self.write_end, True)  # the child's write must wait, not fail with EAGAIN

    def drain(self, timeout: float = 120.0) -> bytes:
        """Everything the child wrote, read until its end of the pipe closes (it exited); fails only if the pipe
        stays open and silent for a generous ``timeout``."""
        data = b""
        with os.fdopen(self.read_end, "rb", buffering=0) as pipe:
            while select.select([pipe], [], [], timeout)[0]:
                chunk = pipe.read(65536)
                if not chunk:
                    return data[self._filler:]
                data += chunk
        raise AssertionError(f"the child kept its stdout open and wrote nothing for {timeout} s")


def wait_blocked(pid: int, fd: int, timeout: float = 120.0) -> None:
    """Return once process ``pid``'s main thread is blocked writing to its file descriptor ``fd``; fail only if it
    is not after a generous ``timeout`` (a child that never writes there, or is gone)."""
    number = _WRITE[os.uname().machine]
    deadline = time.monotonic() + timeout
    seen = ""
    while time.monotonic() < deadline:
        try:
            seen = Path(f"/proc/{pid}/syscall").read_text()
        except FileNotFoundError:
            raise AssertionError(f"process {pid} ended before it wrote to fd {fd}") from None
        if seen.split()[:2] == [str(number), hex(fd)]:
            return
        time.sleep(0.01)
    raise AssertionError(f"process {pid} was not blocked writing to fd {fd} after {timeout} s (last: {seen!r})")
