"""Driving the real ``agent`` process in tests: through pipes, or in a pseudo-terminal, against the fake OpenAI
server (``tests.fake_openai``). For what needs a process of its own (a terminal, signals, locks between processes,
rlimits); everything else runs the same command in-process with ``tests.cli_harness.invoke``, at a fraction of the
cost."""

from __future__ import annotations

import codecs
import fcntl
import json
import os
import pty
import re
import select
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

from tests.fake_openai import FakeOpenAI


def agent_env(fake: FakeOpenAI, **extra: str) -> dict[str, str]:
    """The environment of a chat against ``fake`` with the local embedder, plus ``extra``."""
    return {**os.environ, "OPENAI_BASE_URL": fake.url, "AGENT_EMBEDDER": "local", **extra}


def agent(env: dict[str, str], *args: str, stdin: str | bytes = "") -> subprocess.CompletedProcess[str]:
    """Run ``agent ARGS`` with ``stdin`` piped in (bytes go in as they are) and its output captured as text."""
    data = stdin if isinstance(stdin, bytes) else stdin.encode()
    result = subprocess.run([sys.executable, "-m", "agent", *args], input=data, capture_output=True, timeout=300,
                            env=env)
    return subprocess.CompletedProcess(result.args, result.returncode, result.stdout.decode("utf-8", "replace"),
                                       result.stderr.decode("utf-8", "replace"))


def wait_for_text(fd: int, text: bytes, timeout: float = 120.0) -> None:
    """Wait until the file open as ``fd`` (a child's stdout or stderr) holds ``text``; fail only if it does not after
    a generous ``timeout``, so only a child that never writes it fails, however loaded the machine."""
    deadline = time.monotonic() + timeout
    while text not in os.pread(fd, 1 << 24, 0):
        if time.monotonic() > deadline:
            raise AssertionError(f"no {text!r} in {timeout} s")
        time.sleep(0.01)


_CSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def screen_text(output: str) -> str:
    """Terminal output as the words on screen: colour and cursor sequences dropped, wrapped lines joined."""
    return " ".join(_CSI.sub("", output).split())


def session_file(tmp_path: Path, name: str) -> dict[str, object]:
    data: dict[str, object] = json.loads((tmp_path / "data" / "sessions" / f"{name}.json").read_text())
    return data


class Terminal:
    """The agent in a pseudo-terminal: what it printed so far, keys to type, and a wait for some output."""

    def __init__(self, env: dict[str, str], *args: str, columns: int = 100) -> None:
        argv = [sys.executable, "-m", "agent", *args]
        child_env = {**env, "TERM": "xterm", "PROMPT_TOOLKIT_NO_CPR": "1"}
        size = struct.pack("HHHH", 40, columns, 0, 0)
        self.pid, self.fd = pty.fork()
        if self.pid == 0:  # the child: the pty is its controlling terminal, so Ctrl-C becomes SIGINT
            # The size is set here, before the agent starts: set by the parent after the fork, it raced the agent's
            # first look at its terminal (a 0x0 pty, read as 80 columns) on a machine loaded enough.
            fcntl.ioctl(0, termios.TIOCSWINSZ, size)
            os.execve(sys.executable, argv, child_env)
        self.output = ""
        self.seen = 0
        self.exit_code: int | None = None
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")

    def __enter__(self) -> Terminal:
        return self

    def __exit__(self, *exc: object) -> None:
        """Never leave the child behind, whatever the test did."""
        if self.exit_code is None:
            os.kill(self.pid, 9)
            os.waitpid(self.pid, 0)
            os.close(self.fd)

    def expect(self, pattern: str, timeout: float = 120.0) -> str:
        """Wait for ``pattern`` in the output after the previous match (like pexpect); return what led to it."""
        deadline = time.monotonic() + timeout
        start = self.seen
        while (match := re.search(pattern, self.output[start:])) is None:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AssertionError(f"no {pattern!r} in the terminal output:\n{self.output[start:]}")
            if select.select([self.fd], [], [], remaining)[0] and not self._read():
                break  # the child has gone
        if match is None:
            raise AssertionError(f"the agent exited before {pattern!r}:\n{self.output[start:]}")
        self.seen = start + match.end()
        return self.output[start : self.seen]

    def type(self, keys: str | bytes) -> None:
        data = keys if isinstance(keys, bytes) else keys.encode()
        while data:  # a long paste does not fit the pty's buffer in one write
            _, writable, _ = select.select([], [self.fd], [], 30)
            assert writable, "the agent stopped reading its terminal"
            data = data[os.write(self.fd, data[:4096]):]
            self._drain()

    def _read(self) -> bool:
        """Add what the agent printed to ``output``; False once the child has gone."""
        try:
            chunk = os.read(self.fd, 65536)
        except OSError:
            return False
        self.output += self._decoder.decode(chunk)
        return bool(chunk)

    def _drain(self) -> None:
        """Read what the agent printed so far, so it never blocks on a full terminal while we type."""
        while select.select([self.fd], [], [], 0)[0] and self._read():
            pass

    def wait(self, timeout: float = 120.0) -> int:
        """Wait for the agent to exit and return its exit code."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if select.select([self.fd], [], [], 0.05)[0]:
                self._read()
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self._drain()
                os.close(self.fd)
                self.exit_code = os.waitstatus_to_exitcode(status)
                return self.exit_code
        raise AssertionError(f"the agent did not exit:\n{self.output[-2000:]}")
