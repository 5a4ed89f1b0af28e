"""Checklist cases 2 and 3: a second process on the same data directory, and a lock held by a hung process.

The embedded store belongs to one process at a time (``agent.locking``): any other stops within a second with a
message that says what to do, writes nothing, and nothing already stored is lost. A lock held by a process that
hangs never makes the agent hang: every wait is bounded and ends in a message naming what holds it. The holders are
processes of their own; the second agent is this test's process (``tests.cli_harness``), or agents started
together.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path

import pytest

from agent.adapters import chroma_files, ledger
from agent.adapters.chroma_index import forget_clients
from agent.errors import StoreLocked
from tests.cli_harness import invoke
from tests.helpers_store import open_fake_memory, returns_within, spawn, text_for, wait_for_line


@contextmanager
def holder(*args: str) -> Iterator[subprocess.Popen[str]]:
    """A child that opens memory as a chat does and keeps it until the block ends."""
    proc = spawn("hold", *args)
    try:
        wait_for_line(proc, "ready")
        yield proc
    finally:
        proc.send_signal(signal.SIGCONT)
        proc.kill()
        proc.communicate()


@contextmanager
def sqlite_holder(path: Path) -> Iterator[None]:
    """Another program keeping ``path`` locked with ``BEGIN EXCLUSIVE``, as a hung ``sqlite3`` shell would."""
    code = ("import sqlite3, sys, time; db = sqlite3.connect(sys.argv[1], isolation_level=None); "
            "db.execute('BEGIN EXCLUSIVE'); print('ready', flush=True); time.sleep(120)")
    proc = subprocess.Popen([sys.executable, "-c", code, str(path)], stdout=subprocess.PIPE, text=True)
    try:
        wait_for_line(proc, "ready")  # type: ignore[arg-type]
        yield
    finally:
        proc.kill()
        proc.communicate()


@pytest.mark.slow
def test_a_second_agent_stops_at_once_with_what_to_do_and_writes_nothing(tmp_path: Path) -> None:
    memory = open_fake_memory()
    kept = memory.add(text_for("kept", 0))
    forget_clients()
    with holder() as chat:
        for args in (("memories", "add", "I was refused"), ("memories", "list")):
            # This process is the second agent; the holder keeps the store until the block ends, so a wait fails.
            refused = returns_within(60, partial(invoke, *args))
            assert refused.returncode == 1
            line = refused.stderr.strip()
            assert "\n" not in line and "Traceback" not in line
            assert f"Another agent process (pid {chat.pid}) is using the memory store" in line
            assert "AGENT_CHROMA_URL" in line and "/memories" in line
    assert [m.id for m in open_fake_memory().list()] == [kept.id], "the first memory is intact, the refused absent"


@pytest.mark.slow
def test_agents_started_together_each_save_or_refuse_and_none_hangs(tmp_path: Path) -> None:
    texts = [f"My neighbour number {n} plays the cello on Sundays" for n in range(3)]
    procs = [
        subprocess.Popen([sys.executable, "-m", "agent", "memories", "add", text], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
        for text in texts
    ]
    results = [proc.communicate(timeout=90) for proc in procs]
    saved = []
    for text, proc, (_out, err) in zip(texts, procs, results, strict=True):
        if proc.returncode == 0:
            saved.append(text)
        else:
            assert proc.returncode == 1 and "is using the memory store" in err, err
    assert saved, "one of them got the store"
    listed = json.loads(invoke("memories", "list", "--json").stdout)
    assert sorted(m["text"] for m in listed) == sorted(saved)


@pytest.mark.slow
def test_a_hung_agent_holding_the_store_is_named_not_waited_for(tmp_path: Path) -> None:
    with holder() as chat:
        chat.send_signal(signal.SIGSTOP)  # it holds the store until the block ends
        with pytest.raises(StoreLocked, match=rf"pid {chat.pid}\).*kill {chat.pid}"):
            returns_within(60, open_fake_memory)


@pytest.mark.slow
def test_a_program_holding_chroma_sqlite_locked_delays_the_start_a_bounded_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    open_fake_memory().add(text_for("kept", 0))
    forget_clients()
    monkeypatch.setattr(chroma_files, "SQLITE_WAIT", 1.0)
    with sqlite_holder(tmp_path / "data" / "chroma" / "chroma.sqlite3"):
        with pytest.raises(StoreLocked, match=r"chroma\.sqlite3 locked for over 1 s: end it"):
            returns_within(60, open_fake_memory)
    assert open_fake_memory().count() == 1, "once the lock is gone the store opens with its memory"


@pytest.mark.slow
def test_a_program_holding_the_ledger_locked_delays_the_start_a_bounded_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    open_fake_memory().add(text_for("kept", 0))
    forget_clients()
    monkeypatch.setattr(ledger, "BUSY_WAIT", 1.0)
    with sqlite_holder(tmp_path / "data" / "ledger.sqlite3"):
        with pytest.raises(StoreLocked, match=r"ledger\.sqlite3 stayed locked by another process for over 1 s"):
            returns_within(60, open_fake_memory)
    assert not list((tmp_path / "data").glob("ledger.sqlite3.corrupt-*")), "a locked ledger is not taken for damaged"
    assert open_fake_memory().count() == 1
