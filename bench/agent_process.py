"""The real ``agent`` on a pseudo-terminal, for figures only the product's own process can give: how soon its
first prompt shows, and how much memory it holds with a store of a given size after answering a few lines.

The model server is an unreachable local port (``AGENT_MAX_RETRIES=0``), so a turn runs recall, sends its request,
reports the refused connection in one line and shows the prompt again: everything but the model's reply. The model
cache (``XDG_CACHE_HOME``) is the caller's, so the int8 embedding model is the one already converted.
"""

from __future__ import annotations

import os
import pty
import select
import shutil
import signal
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from agent.adapters.local_model import default_cache_dir

PROJECT = Path(__file__).resolve().parent.parent
PROMPT_MARK = "›".encode()


def agent_command() -> str:
    agent = PROJECT / ".venv" / "bin" / "agent"
    return str(agent if agent.exists() else Path(sys.executable).parent / "agent")


class AgentOnPty:
    """``agent`` started on a pseudo-terminal in a temporary HOME; ``data_dir`` and ``user`` pick its store."""

    def __init__(self, data_dir: Path | None = None, user: str = "default", model_dir: Path | None = None,
                 settings: dict[str, str] | None = None) -> None:
        self.home = tempfile.mkdtemp(prefix="agent-pty-")
        env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI", "AGENT_"))}
        env.update(HOME=self.home, AGENT_DATA_DIR=str(data_dir or Path(self.home) / "data"), AGENT_USER=user,
                   TERM="xterm", OPENAI_BASE_URL="http://127.0.0.1:9/v1", OPENAI_API_KEY="unused-offline",
                   AGENT_MAX_RETRIES="0", XDG_CACHE_HOME=str(default_cache_dir().parent), **(settings or {}))
        if model_dir is not None:
            env["AGENT_LOCAL_MODEL_DIR"] = str(model_dir)
        self.started = time.perf_counter()
        self.pid, self.fd = pty.fork()
        if self.pid == 0:  # the child: become agent
            os.chdir(self.home)
            os.execve(agent_command(), ["agent"], env)

    def wait_for_prompt(self, after: bytes = b"", timeout: float = 15.0) -> float | None:
        """Seconds since start when the next prompt showed (after ``after``, if given: the redrawn line of the
        input holds a prompt mark too), or None if it did not within ``timeout``."""
        return self.wait_for(PROMPT_MARK, after, timeout)

    def wait_for(self, shown: bytes, after: bytes = b"", timeout: float = 15.0) -> float | None:
        """Seconds since start when ``shown`` appeared (after ``after``, if given), or None if it did not within
        ``timeout``."""
        seen, until = b"", time.perf_counter() + timeout
        while time.perf_counter() < until:
            ready, _, _ = select.select([self.fd], [], [], 0.02)
            if not ready:
                continue
            try:
                chunk = os.read(self.fd, 4096)
            except OSError:
                return None
            if not chunk:
                return None
            seen += chunk
            if b"\x1b[6n" in chunk:  # answer prompt_toolkit's cursor-position request as a terminal would
                os.write(self.fd, b"\x1b[1;1R")
            if after in seen and shown in seen[seen.index(after) + len(after):]:
                return time.perf_counter() - self.started
        return None

    def send(self, line: str) -> None:
        os.write(self.fd, f"{line}\r".encode())

    def memory_mb(self) -> tuple[float, float]:
        """(resident now, resident at its peak) in MB, from ``/proc``."""
        fields = {}
        for entry in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            name, _, value = entry.partition(":")
            if name in ("VmRSS", "VmHWM"):
                fields[name] = int(value.split()[0]) / 1024
        return fields["VmRSS"], fields["VmHWM"]

    def close(self) -> None:
        os.kill(self.pid, signal.SIGKILL)
        os.waitpid(self.pid, 0)
        os.close(self.fd)
        shutil.rmtree(self.home, ignore_errors=True)


def startup_s(runs: int = 3) -> float | None:
    """Median seconds from spawning ``agent`` (fresh data directory) to its first prompt; None if it never shows."""
    found = []
    for _ in range(runs):
        agent = AgentOnPty()
        try:
            shown = agent.wait_for_prompt()
        finally:
            agent.close()
        if shown is not None:
            found.append(shown)
    return sorted(found)[len(found) // 2] if found else None


def first_turn_s(data_dir: Path, user: str, line: str, settings: dict[str, str] | None = None,
                 timeout: float = 300.0) -> dict[str, float]:
    """Seconds from spawning ``agent`` on the store in ``data_dir`` to its first prompt, and to the answer to the
    first line, typed as soon as that prompt shows: the answer follows the turn's recall, which waits for the store
    to open and the model to load (the answer is the line saying the model server cannot be reached, see the module
    docstring; the next prompt waits for the write's receipt too, which waits for the examples' warm-up)."""
    agent = AgentOnPty(data_dir, user, settings=settings)
    try:
        prompt = agent.wait_for_prompt(timeout=timeout)
        if prompt is None:
            raise RuntimeError("agent showed no prompt")
        agent.send(line)
        turn = agent.wait_for(b"Cannot reach the model server", timeout=timeout)
        if turn is None:
            raise RuntimeError(f"agent did not come back after {line!r}")
    finally:
        agent.close()
    return {"first_prompt_s": prompt, "first_turn_s": turn}


def resident_mb(data_dir: Path, user: str, lines: Sequence[str], model_dir: Path | None = None) -> dict[str, float]:
    """The memory of ``agent`` on the store in ``data_dir`` after it has answered ``lines`` (each recalls)."""
    agent = AgentOnPty(data_dir, user, model_dir)
    try:
        if agent.wait_for_prompt() is None:
            raise RuntimeError("agent showed no prompt")
        time.sleep(2.0)  # the store opens and the model loads in the background: let them finish
        for line in lines:
            agent.send(line)
            if agent.wait_for_prompt(after=b"Cannot reach the model server") is None:
                raise RuntimeError(f"agent did not come back after {line!r}")
        now, peak = agent.memory_mb()
    finally:
        agent.close()
    return {"rss_mb": now, "peak_rss_mb": peak}
