"""``agent`` as a real process with its stdin a pipe kept open, for tests whose behaviour is about processes (several
terminals on one data directory, several machines on one database): lines go in one at a time, its output is read
as it comes, and every wait is a generous timeout that only a hang trips. Each process is forked from the warm
helper (``tests.warm_agent``)."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import threading
from collections.abc import Callable, Mapping

from tests.warm_agent import WarmAgent, shared

WAIT = 600.0  # only a hang gets near it


class PipedAgent:
    """``agent ARGS`` with its stdin a pipe kept open; its output read as it comes, line by line, to the end."""

    def __init__(self, env: Mapping[str, str], *args: str, warm: WarmAgent | None = None) -> None:
        (in_r, in_w), (out_r, out_w), (err_r, err_w) = os.pipe(), os.pipe(), os.pipe()
        self.warm, self.args = warm or shared(), args
        self.pid: int | None = self.warm.start(args, env, [in_r, out_w, err_w])
        for end in (in_r, out_w, err_w):
            os.close(end)
        self._stdin = open(in_w, "w", encoding="utf-8")  # noqa: SIM115  (closed by finish, or when it ends)
        self.out: list[str] = []
        self.err: list[str] = []
        self.code: int | None = None
        self._changed = threading.Condition()
        self._readers = [threading.Thread(target=self._read, args=(end, lines), daemon=True)
                         for end, lines in ((out_r, self.out), (err_r, self.err))]
        for reader in self._readers:
            reader.start()

    def _read(self, end: int, lines: list[str]) -> None:
        with open(end, encoding="utf-8", errors="replace") as stream:
            for line in stream:
                with self._changed:
                    lines.append(line.rstrip("\n"))
                    self._changed.notify_all()
        with self._changed:
            self._changed.notify_all()

    @property
    def ended(self) -> bool:
        """Both its streams are closed: it has exited (or been killed)."""
        return not any(reader.is_alive() for reader in self._readers)

    def say(self, *lines: str) -> None:
        try:
            self._stdin.write("".join(f"{line}\n" for line in lines))
            self._stdin.flush()
        except BrokenPipeError:  # killed meanwhile: what it read before is all it got
            pass

    def wait_until(self, done: Callable[[], bool]) -> None:
        """Until ``done()`` holds for what it printed; fails if it ends first, or only after a hang's ``WAIT``."""
        with self._changed:
            self._changed.wait_for(lambda: done() or self.ended, WAIT)
        assert done(), f"agent {' '.join(self.args)} ended or hung before it did it:\n" + "\n".join(self.err[-20:])

    def finish(self) -> int:
        """Close its stdin (the end of input ends a chat) and wait for it to end; its exit code."""
        with contextlib.suppress(BrokenPipeError):
            self._stdin.close()
        for reader in self._readers:
            reader.join(WAIT)
        if self.pid is not None:
            self.code, self.pid = self.warm.wait(self.pid, WAIT), None
        assert self.code is not None
        return self.code

    def send(self, signum: int) -> None:
        """Signal it while it runs. One that has ended is never signalled; one that exited a moment ago (its pipes
        close before the readers see it) is gone, and its pid is not taken again before the kernel has handed out
        every other (32,768 of them) meanwhile."""
        if self.pid is not None and not self.ended:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signum)

    def kill(self) -> int:
        """SIGKILL while it runs, then everything it printed before is read; its exit code."""
        self.send(signal.SIGKILL)
        return self.finish()

    def acks(self, pattern: re.Pattern[str], lines: list[str]) -> set[str]:
        """The first group of each of ``lines`` that ``pattern`` matches."""
        return {m.group(1) for m in map(pattern.match, lines) if m}


class PipedChat(PipedAgent):
    """``agent --lines -s NAME``, told its lines through the pipe; the fake server answers every turn "Noted."."""

    def __init__(self, env: Mapping[str, str], name: str) -> None:
        super().__init__(env, "--lines", "-s", name)

    def wait_replies(self, count: int) -> None:
        """Until the chat has answered ``count`` turns in all."""
        self.wait_until(lambda: self.out.count("Noted.") >= count)

    def remembered(self) -> list[str]:
        return [line.removeprefix("remembered: ") for line in self.err if line.startswith("remembered: ")]

    def close(self) -> int:
        return self.finish()


def run(env: Mapping[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """``agent ARGS`` to its end, as a process of its own, its output captured."""
    return shared().run(env, *args)
