"""A forget cut short by a kill or Ctrl-C is finished by the next start of the agent, whichever command it is.

Before, ``agent memories forget`` printed ``forgot 1 memories`` and took the memory out of the ledger before it
scrubbed the sessions: a kill during the scrub left the words in most of 300 session files, Ctrl-C left them too
(exit 130, silently), a retry said ``matches no memory``, and nothing ever finished the job. These tests signal the
real process where it says the memory is forgotten (held there by a full pipe, ``tests.full_pipe``, so the signal
lands there on any machine) and at random moments of the scrub, and read every file under the data directory raw
afterwards: what they find, not when the signal was sent, says where it landed.

The forgetting command is the real process (forked from a warm interpreter, ``tests.warm_agent``: it is the one
killed); the next start that finishes the job runs in-process (``tests.cli_harness``), as any command reads the
same store whether it is a process of its own or not."""

from __future__ import annotations

import contextlib
import os
import random
import select
import shutil
import signal
import tempfile
import time
from pathlib import Path

import pytest

from agent.adapters.ledger import SqliteLedger
from agent.conversation import Turn
from agent.domain import MemoryRecord, memory_id
from agent.sessions import Session, SessionStore
from tests import builders
from tests.cli_harness import invoke
from tests.e2e_helpers import agent_env, wait_for_text
from tests.fake_openai import FakeOpenAI
from tests.full_pipe import FullPipe, wait_blocked
from tests.warm_agent import WarmAgent

pytestmark = pytest.mark.usefixtures("model_cache")

SECRET = "I hide my spare key under the CANARY-Zq81x flowerpot"
CHESS = "I play chess with my brother every week"
NEEDLES = (b"canary", b"zq81x", b"flowerpot")
SESSIONS = 100  # the issue saw 300; 100 keep the scrub long enough that a kill soon after the line often lands in it


def leaks(root: Path) -> list[str]:
    """Every file under ``root`` whose raw bytes hold a needle, whatever its case."""
    return sorted(str(f.relative_to(root)) for f in root.rglob("*")
                  if f.is_file() and not f.is_symlink() and any(n in f.read_bytes().lower() for n in NEEDLES))


def record(text: str, context: str = "") -> MemoryRecord:
    return builders.record(text, "default", kind="explicit", session="cli", turn=0, at=1.0,
                           extra={"context": context} if context else {})


def seed(data: Path) -> str:
    """``SESSIONS`` sessions, the input history and another memory's reply context that hold the words; the memory
    itself in the ledger (the forgetting process embeds it when it opens the store). Returns its id prefix."""
    template = data.parent / "sessions-saved-once"  # saved through the store once, then copied: without the fsyncs
    if not template.is_dir():
        store = SessionStore(template, "default")
        for n in range(SESSIONS):
            store.save(Session(f"s{n:03d}", 1.0, 2.0, [Turn("hello there", "Hi."), Turn(SECRET, f"Noted: {SECRET}."),
                                                       Turn("What is the capital of Peru?", "Lima.")]))
    shutil.copytree(template, data / "sessions", dirs_exist_ok=True)
    (data / "history").write_text(f"\n# 2026-01-02 10:00:00.000000\n+{SECRET}\n")
    ledger = SqliteLedger(data / "ledger.sqlite3")
    try:
        ledger.put([record(SECRET), record(CHESS, context=f"Got it: {SECRET}.")])
    finally:
        ledger.close()
    return memory_id("default", SECRET)[:8]


def pending(data: Path) -> bool:
    """Whether the forgetting process left its record of the job behind (it drops it as its last step)."""
    ledger = SqliteLedger(data / "ledger.sqlite3")
    try:
        return bool(ledger.pending_forgets())
    finally:
        ledger.close()


FORGOT = f"forgot 1 memory: {SECRET}\n".encode()


def forget_cut_short(warm: WarmAgent, env: dict[str, str], prefix: str, how: signal.Signals,
                     delay: float | None) -> tuple[int, str]:
    """``agent memories forget PREFIX`` sent ``how`` where it says the memory is forgotten (which it says once the
    memory has left the ledger, just before it scrubs the other files); its exit code and stderr.

    ``delay`` None: its stdout is a full pipe, so it is held at that very line (``tests.full_pipe``) and the signal
    lands there whatever the load. A number: it is signalled that many seconds after the line was read, wherever it
    is by then (in the middle of the scrub, or done and about to exit: the files say which afterwards)."""
    held = FullPipe() if delay is None else None
    read_end, write_end = (held.read_end, held.write_end) if held else os.pipe()
    code: int | None = None
    with open(os.devnull) as nothing, tempfile.TemporaryFile() as err:
        pid = warm.start(["memories", "forget", prefix], env, [nothing.fileno(), write_end, err.fileno()])
        os.close(write_end)
        try:
            if held is not None:
                wait_blocked(pid, 1)
                os.kill(pid, how)
                # Nothing is read before the signal has done its work: room in the pipe would let the write
                # through first. A kill: it is gone. Ctrl-C: it gave up the write and said so (then, as it ends,
                # it writes the line out).
                if how == signal.SIGKILL:
                    code = warm.wait(pid)
                else:
                    wait_for_text(err.fileno(), b"agent: Interrupted")
                line = held.drain()
            else:
                with open(read_end, "rb") as stdout:
                    ready = select.select([stdout], [], [], 120)[0]  # generous: fails only if the agent hangs
                    line = stdout.readline() if ready else b"(nothing in 120 s)"
                    time.sleep(delay)
                    with contextlib.suppress(ProcessLookupError):  # it may have finished and been reaped
                        os.kill(pid, how)
        except BaseException:
            if code is None:
                with contextlib.suppress(ProcessLookupError):  # never leave it blocked on the pipe
                    os.kill(pid, signal.SIGKILL)
            raise
        finally:
            code = warm.wait(pid) if code is None else code
        stderr = os.pread(err.fileno(), 1 << 20, 0).decode()
    assert line == (b"" if held and how == signal.SIGKILL else FORGOT), (line, stderr)
    return code, stderr


@pytest.mark.slow
def test_a_forget_killed_during_its_scrub_is_finished_by_the_next_start_whichever_it_is(
    tmp_path: Path, warm_agent: WarmAgent
) -> None:
    data = tmp_path / "data"
    rng = random.Random(9)
    starts = [("sessions", "list"), ("memories", "list"), ("--lines", "-s", "next")]  # the chat, an empty script
    # each kind of start finishes a forget killed at its line, before it scrubbed anything; then kills at random
    # moments of the scrub (or after it: on a loaded machine it can end first), judged by the files they left
    rounds = [(start, None) for start in starts] + [(starts[n % 3], rng.uniform(0.0, 0.3)) for n in range(2)]
    with FakeOpenAI() as fake:
        env = agent_env(fake)
        for start_args, delay in rounds:
            prefix = seed(data)
            forget_cut_short(warm_agent, env, prefix, signal.SIGKILL, delay)
            cut_short = pending(data)  # a kill can land after the job was done, before the process exited
            left = leaks(data)
            if delay is None:
                assert cut_short and len([f for f in left if f.startswith("sessions/")]) == SESSIONS, left
            start = invoke(*start_args, env=env)
            assert start.returncode == 0, start.stderr
            told = [line for line in start.stderr.splitlines() if "forget that was cut short" in line]
            if cut_short:
                assert len(told) == 1 and "Finished a forget that was cut short (1 memory): " in told[0], told
                if any(not f.startswith("ledger.sqlite3") for f in left):
                    assert "their words were removed from" in told[0], told
            else:  # it finished (dropped its record) before the kill landed
                assert told == []
            assert leaks(data) == [], f"{start_args}, delay {delay}: the words are still there"
            again = invoke("sessions", "list", env=env)
            assert "cut short" not in again.stderr, "the record was dropped once the job was done"
    assert f"'{prefix}' matches no memory" in invoke("memories", "forget", prefix, env=env).stderr, "and it is gone"


@pytest.mark.slow
def test_ctrl_c_before_the_scrub_says_the_next_start_finishes_it_and_it_does(
    tmp_path: Path, warm_agent: WarmAgent
) -> None:
    data = tmp_path / "data"
    with FakeOpenAI() as fake:
        env = agent_env(fake)
        code, stderr = forget_cut_short(warm_agent, env, seed(data), signal.SIGINT, None)
        assert code == 130, stderr
        assert stderr.splitlines()[-1:] == [
            "agent: Interrupted: 1 memory is forgotten, but their words may still be in session files or the input "
            "history; the next start of agent removes them."], stderr
        assert pending(data) and leaks(data), "the interrupt stopped it before the scrub"
        start = invoke("sessions", "list", env=env)
        assert start.returncode == 0 and "Finished a forget that was cut short (1 memory)" in start.stderr
        assert leaks(data) == []
