"""A piped ``agent`` chat as a real process, for tests whose behaviour is about processes on several data
directories or machines (``tests/test_rel_shared.py``): lines go in one at a time, its output is read as it comes,
and every wait is a generous timeout that only a hang trips."""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Callable

WAIT = 600.0  # only a hang gets near it


class PipedChat:
    """``agent -s NAME`` with its stdin kept open: lines go in one at a time, its output is read as it comes."""

    def __init__(self, env: dict[str, str], name: str) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "agent", "-s", name], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        self.out: list[str] = []
        self.err: list[str] = []
        self._changed = threading.Condition()
        self._readers = [threading.Thread(target=self._read, args=(stream, lines), daemon=True)
                         for stream, lines in ((self.proc.stdout, self.out), (self.proc.stderr, self.err))]
        for reader in self._readers:
            reader.start()

    def _read(self, stream: object, lines: list[str]) -> None:
        for line in stream:  # type: ignore[attr-defined]
            with self._changed:
                lines.append(line.rstrip("\n"))
                self._changed.notify_all()

    def say(self, *lines: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write("".join(f"{line}\n" for line in lines))
        self.proc.stdin.flush()

    def wait_until(self, done: Callable[[], bool]) -> None:
        """Until ``done()`` holds for what the chat printed, or it exits."""
        with self._changed:
            self._changed.wait_for(lambda: done() or self.proc.poll() is not None, WAIT)
        assert done(), "\n".join(self.err[-20:])

    def wait_replies(self, count: int) -> None:
        """Until the chat has answered ``count`` turns in all (the fake answers every turn "Noted.")."""
        self.wait_until(lambda: self.out.count("Noted.") >= count)

    def remembered(self) -> list[str]:
        return [line.removeprefix("remembered: ") for line in self.err if line.startswith("remembered: ")]

    def close(self) -> int:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        return self.proc.wait(WAIT)

    def kill(self) -> None:
        """SIGKILL, then everything it printed before is read."""
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        for reader in self._readers:
            reader.join(WAIT)


def run(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "agent", *args], capture_output=True, text=True, env=env,
                          timeout=WAIT)

