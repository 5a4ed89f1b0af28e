"""Driving the real ``agent`` process in tests: through pipes, or in a pseudo-terminal, against the fake OpenAI
server (``tests.fake_openai``). For what needs a process of its own (a terminal, signals, locks between processes,
rlimits); everything else runs the same command in-process with ``tests.cli_harness.invoke``, at a fraction of the
cost. Each process is forked from one warm interpreter that has imported the agent once (``tests.warm_agent``), and
then runs the console script's ``main`` with its own environment, working directory and streams."""

from __future__ import annotations

import codecs
import fcntl
import json
import os
import re
import select
import signal
import struct
import subprocess
import termios
import time
from collections.abc import Mapping
from pathlib import Path

from tests.fake_openai import FakeOpenAI
from tests.warm_agent import shared


def agent_env(fake: FakeOpenAI, **extra: str) -> dict[str, str]:
    """The environment of a chat against ``fake`` with the local embedder, plus ``extra``."""
    return {**os.environ, "OPENAI_BASE_URL": fake.url, "AGENT_EMBEDDER": "local", **extra}


def env_for(fake: FakeOpenAI) -> dict[str, str]:
    """The fake's bag-of-words embeddings rate a question of two words under the default threshold: every match
    counts here, and the memory asked after is the top hit by its unique words. Wide output: no table row wraps."""
    return {**os.environ, "OPENAI_BASE_URL": fake.url, "OPENAI_API_KEY": "sk-test", "AGENT_EMBEDDER": "openai",
            "AGENT_MEMORY_THRESHOLD": "0", "COLUMNS": "400"}


def fact(writer: str, n: int) -> str:
    """A disclosure whose words belong to (writer, n) alone, so a search of its own words finds exactly it."""
    return f"My friend {writer}f{n}k lives in the town of {writer}t{n}q"


def question(text: str) -> str:
    """A turn the gate does not keep, asking after the two words that are ``text``'s alone."""
    own = [word for word in text.split() if any(c.isdigit() for c in word)]
    return f"Tell me about {' and '.join(own)}"


def prompt_for(fake: FakeOpenAI, line: str) -> str:
    """The system prompt of the chat request whose user turn was ``line``."""
    for request in fake.chat_requests:
        users = [m["content"] for m in request.body["messages"] if m["role"] == "user"]
        if users and users[-1] == line:
            return "\n".join(m["content"] for m in request.body["messages"] if m["role"] == "system")
    raise AssertionError(f"no chat request for {line!r}")


def agent(env: Mapping[str, str], *args: str, stdin: str | bytes = "") -> subprocess.CompletedProcess[str]:
    """Run ``agent ARGS`` as a process of its own (forked from the warm helper) with ``stdin`` piped in (bytes go in
    as they are) and its output captured as text."""
    return shared().run(env, *args, stdin=stdin)


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
    """The agent in a pseudo-terminal, forked from the warm helper (``tests.warm_agent``): the slave of a new pty
    is its controlling terminal, so Ctrl-C and a hang-up reach it as signals. What it printed so far, keys to type,
    a wait for some output; ``close`` hangs the terminal up."""

    def __init__(self, env: Mapping[str, str], *args: str, columns: int = 100) -> None:
        self.fd, slave = os.openpty()
        # The size is set before the agent starts: set after, it raced the agent's first look at its terminal (a
        # 0x0 pty, read as 80 columns) on a machine loaded enough.
        fcntl.ioctl(self.fd, termios.TIOCSWINSZ, struct.pack("HHHH", 40, columns, 0, 0))
        self._warm = shared()
        self.pid = self._warm.start(args, {**env, "TERM": "xterm", "PROMPT_TOOLKIT_NO_CPR": "1"}, [slave] * 3,
                                    terminal=True)
        os.close(slave)  # the child's copies alone hold it: closing the master hangs the terminal up
        self.output = ""
        self.seen = 0
        self.exit_code: int | None = None
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self._open = True

    def __enter__(self) -> Terminal:
        return self

    def __exit__(self, *exc: object) -> None:
        """Never leave the child behind, whatever the test did."""
        if self.exit_code is None:
            os.kill(self.pid, signal.SIGKILL)
            self.exit_code = self._warm.wait(self.pid)
        self.close()

    def close(self) -> None:
        """Close the master side (once): the kernel hangs the terminal up, SIGHUP, then reads and writes fail."""
        if self._open:
            self._open = False
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
        """Wait for the agent to exit, reading what it printed, and return its exit code."""
        deadline = time.monotonic() + timeout
        while (code := self._warm.poll(self.pid)) is None:
            if time.monotonic() > deadline:
                raise AssertionError(f"the agent did not exit:\n{self.output[-2000:]}")
            if self._open and select.select([self.fd], [], [], 0.05)[0]:
                self._read()
            elif not self._open:
                code = self._warm.wait(self.pid, max(0.0, deadline - time.monotonic()))
                break
        if self._open:
            self._drain()
        self.close()
        self.exit_code = code
        return code
