"""Shared helpers of the store reliability tests, and the child processes they start.

A child runs as ``python -m tests.helpers_store ROLE ARGS...`` with the settings in its environment; it opens memory
through ``agent.wiring.open_memory`` exactly as the agent does, with a sha256 fake embedder in place of the
model (the store mechanics are under test, not meaning, and a child then starts in well under a second).
"""

from __future__ import annotations

import hashlib
import math
import os
import re
import resource
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from agent import wiring
from agent.adapters.chroma_index import ChromaIndex
from agent.adapters.ledger import SqliteLedger
from agent.adapters.mirrored_index import MirroredIndex
from agent.config import load_settings
from agent.errors import AgentError
from agent.memory.service import MemoryService
from agent.ports import Embedder, Ledger, Notify, VectorIndex
from tests.warm_agent import WarmProcess, shared

PROJECT_ROOT = Path(__file__).resolve().parent.parent
T = TypeVar("T")


class ShaEmbedder:
    """sha256 of the text spread into 64 floats: every text its own direction, so a query with a stored text finds
    that memory first among thousands (a word-hash fake collides at that scale)."""

    name = "sha"
    model = "sha256-64"
    dimension = 64

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        out = []
        for text in texts:
            raw = b"".join(hashlib.sha256(f"{i}:{text}".encode()).digest() for i in range(2))
            vec = [b - 127.5 for b in raw]
            norm = math.sqrt(sum(x * x for x in vec))
            out.append([x / norm for x in vec])
        return out


# The vector space a ledger records for ``ShaEmbedder``: (name, model, dimension).
SHA_SPACE = (ShaEmbedder.name, ShaEmbedder.model, ShaEmbedder.dimension)


def open_memory_with(embedder: Embedder, notify: Notify | None = None) -> MemoryService:
    """``open_memory`` as the agent calls it, with ``embedder`` in place of the one the settings would build."""
    assert os.environ.get("AGENT_DATA_DIR"), "tests keep their data in a temp dir, never in agent_memory_db/"
    return wiring.open_memory(load_settings(), embedder, notify=notify)


def open_fake_memory(notify: Notify | None = None) -> MemoryService:
    return open_memory_with(ShaEmbedder(), notify)


def stores_of(memory: MemoryService) -> tuple[Ledger, VectorIndex]:
    """The ledger and the vector index a service keeps private, for a test that looks below the service (what a
    crash or a forget left in each, a keyword index, another user's journal) or builds another service over them
    (another policy, extractor or embedder). The one place a test reads them: the app never does."""
    return memory._ledger, memory._index


def ledger_of(memory: MemoryService) -> SqliteLedger:
    """The service's ledger, a SQLite one (``stores_of``)."""
    ledger = stores_of(memory)[0]
    assert isinstance(ledger, SqliteLedger)
    return ledger


def vectors_of(memory: MemoryService) -> VectorIndex:
    """The service's vector index as the service holds it (``stores_of``)."""
    return stores_of(memory)[1]


def index_of(memory: MemoryService) -> ChromaIndex:
    """The Chroma index inside the service's mirrored one (``stores_of``)."""
    index = vectors_of(memory)
    assert isinstance(index, MirroredIndex)
    return index.chroma


def text_for(tag: str, n: int) -> str:
    """A memory text whose content words are unique to (tag, n), so a self-query finds exactly it."""
    return f"I keep note {tag}q{n}x about the {tag}w{n}z"


def returns_within(seconds: float, call: Callable[[], T]) -> T:
    """``call()``'s value (or its exception), failing the test if it has not returned after ``seconds``.

    For a call that must not wait on something that never answers (a lock held until the test ends, a stopped
    server): ``seconds`` is tens of times what the call takes, so a loaded machine never trips it and only a wait
    without a bound does. Never a claim about speed; figures of that kind belong in bench/."""
    value: list[T] = []
    error: list[BaseException] = []

    def run() -> None:
        try:
            value.append(call())
        except BaseException as exc:  # handed over to the test's thread
            error.append(exc)

    worker = threading.Thread(target=run, name="bounded-call", daemon=True)
    worker.start()
    worker.join(seconds)
    if worker.is_alive():
        raise AssertionError(f"the call was still waiting after {seconds} s: it waits without a bound")
    if error:
        raise error[0]
    return value[0]


def child_env(**extra: str) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(PROJECT_ROOT), **extra}
    return env


def spawn(role: str, *args: str, env: dict[str, str] | None = None, umask: int | None = None) -> WarmProcess:
    """``python -m tests.helpers_store ROLE ARGS``, forked from the warm helper (``tests.warm_agent``)."""
    return WarmProcess("tests.helpers_store", (role, *args), env or child_env(), umask)


def wait_for_line(proc: WarmProcess | subprocess.Popen[str], expected: str, timeout: float = 120.0) -> None:
    """Read the child's stdout until a line equal to ``expected``; fail with its stderr if it exits first."""
    read_until(proc, re.escape(expected), timeout)


def read_until(proc: WarmProcess | subprocess.Popen[str], pattern: str, timeout: float = 120.0) -> re.Match[str]:
    """Read the child's stdout until a line matching ``pattern`` whole, and return the match."""
    assert proc.stdout is not None
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if match := re.fullmatch(pattern, line.strip()):
            return match
        if not line and proc.poll() is not None:
            stderr = proc.stderr.read() if proc.stderr else ""
            raise AssertionError(f"child exited with {proc.returncode} before {pattern!r}: {stderr}")
    raise AssertionError(f"child said no {pattern!r} within {timeout} s")


class Forker:
    """Children forked from one warm process (the ``forker`` role): a test that kills many short-lived writers
    would otherwise spend a fresh interpreter's second or more of imports on each. ``start`` forks a child running
    a role and returns its pid once the child says ``ready``; ``reaped`` waits until the forker has collected it."""

    def __init__(self) -> None:
        # One thread only, so the fork copies no thread's half-held lock: numpy's BLAS starts none with this.
        self.proc = spawn("forker", env=child_env(OPENBLAS_NUM_THREADS="1"))
        wait_for_line(self.proc, "ready")

    def start(self, role: str, *args: str) -> int:
        assert self.proc.stdin is not None
        self.proc.stdin.write(" ".join((role, *args)) + "\n")
        self.proc.stdin.flush()
        pid = int(read_until(self.proc, r"child (\d+)").group(1))
        if read_until(self.proc, rf"ready|reaped {pid}").group() != "ready":
            self.proc.kill()  # the children's stderr is the forker's, which ends only with it
            _, stderr = self.proc.communicate()
            raise AssertionError(f"the forked {role} died before it was ready: {stderr}")
        return pid

    def reaped(self, pid: int) -> None:
        wait_for_line(self.proc, f"reaped {pid}")

    def close(self) -> None:
        self.proc.kill()
        self.proc.communicate()


def run_agent(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """The real ``agent`` command in a process of its own (forked from the warm helper, ``tests.warm_agent``), in
    this process's environment plus ``env``."""
    return shared().run({**os.environ, **(env or {})}, *args)


@dataclass(frozen=True)
class ChromaServer:
    url: str
    process: subprocess.Popen[bytes]


@contextmanager
def chroma_server(path: Path) -> Iterator[ChromaServer]:
    """A real ``chroma run`` on 127.0.0.1 and a port of its own (``tests.ports``), storing into ``path``; yields it
    once its heartbeat answers; always stops it."""
    import httpx

    from tests.ports import serve

    chroma = Path(sys.executable).with_name("chroma")
    log_path = path.parent / f"{path.name}.log"
    with log_path.open("wb") as log:
        proc, port = serve(lambda port: [str(chroma), "run", "--path", str(path), "--host", "127.0.0.1", "--port",
                                         str(port)], log, 120)
        url = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 120  # generous: fails only if it never answers
            while True:
                try:
                    if httpx.get(f"{url}/api/v2/heartbeat", timeout=5).status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError(f"chroma run did not come up: {log_path.read_text()}")
                time.sleep(0.1)
            yield ChromaServer(url, proc)
        finally:
            proc.kill()
            proc.wait()


# -- child roles ------------------------------------------------------------------------------------------


def _writer(ack: str, tag: str) -> None:
    """Add memories until killed; after each add returns, append its id to ``ack`` and fsync: an ack is a promise."""
    memory = open_fake_memory()
    fd = os.open(ack, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    print("ready", flush=True)
    n = 0
    while True:
        record = memory.add(text_for(tag, n))
        os.write(fd, f"{record.id} {tag} {n}\n".encode())
        os.fsync(fd)
        n += 1


def _hold(embedder: str = "sha") -> None:
    """Open memory (with the sha embedder, or the agent's own ones with ``real``) and keep it, as a chat does,
    until killed."""
    if embedder == "real":
        wiring.open_memory(load_settings())
    else:
        open_fake_memory()
    print("ready", flush=True)
    while True:
        time.sleep(60)


def _fill(limit: str, tag: str) -> None:
    """Add memories with files capped at ``limit`` bytes (RLIMIT_FSIZE, SIGXFSZ ignored) until a write fails;
    print each id that was reported saved, then the one line of the error."""
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    memory = open_fake_memory()
    resource.setrlimit(resource.RLIMIT_FSIZE, (int(limit), int(limit)))
    for n in range(100_000):
        try:
            record = memory.add(text_for(tag, n))
        except AgentError as exc:
            print(f"error {n} {exc}", flush=True)
            return
        print(f"saved {record.id}", flush=True)
    print("never failed", flush=True)


def _add(tag: str, count: str) -> None:
    """Add ``count`` memories and print each id once it is saved."""
    memory = open_fake_memory()
    for n in range(int(count)):
        print(f"saved {memory.add(text_for(tag, n)).id}", flush=True)


def _forker() -> None:
    """For each line ``ROLE ARGS...`` on stdin, fork a child that prints ``child PID`` and runs the role, and print
    ``reaped PID`` once it is gone. Everything a role imports is imported before the first fork, and a process with
    a second thread refuses to fork at all (a lock held by that thread would stay held in the child)."""
    import chromadb  # noqa: F401  (what the children would each import)

    threads = len(os.listdir("/proc/self/task"))
    if threads != 1:
        raise SystemExit(f"the forker runs {threads} threads: forking it is not safe")
    print("ready", flush=True)
    for line in sys.stdin:
        role, *args = line.split()
        pid = os.fork()
        if pid == 0:
            print(f"child {os.getpid()}", flush=True)
            try:
                ROLES[role](*args)
            finally:
                os._exit(1)
        os.waitpid(pid, 0)
        print(f"reaped {pid}", flush=True)


def _agent_killed_after_scramble(*args: str) -> None:
    """``agent ARGS``, killed (SIGKILL, by itself) the moment the index has overwritten the vectors it is deleting
    with noise, before it deletes them: the instant between the two stores of a delete."""
    from agent import cli

    scramble = ChromaIndex._scramble

    def then_killed(index: ChromaIndex, *given: object) -> object:
        scramble(index, *given)  # type: ignore[arg-type]
        os.kill(os.getpid(), signal.SIGKILL)
        raise AssertionError("not killed")

    ChromaIndex._scramble = then_killed  # type: ignore[method-assign,assignment]
    cli.main(list(args))


ROLES: dict[str, Callable[..., None]] = {
    "writer": _writer, "hold": _hold, "fill": _fill, "add": _add, "forker": _forker,
    "agent-killed-after-scramble": _agent_killed_after_scramble,
}

if __name__ == "__main__":
    ROLES[sys.argv[1]](*sys.argv[2:])
