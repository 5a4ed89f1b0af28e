"""Checklist cases 2 and 3: a second process on the same data directory, and a lock held by a hung process.

The embedded Chroma store belongs to one process at a time (``agent.locking``); every other process works from the
ledger alone (``agent.adapters.ledger_vectors``), so it reads and writes memory at once instead of being refused,
and nothing already stored is lost. A lock held by a process that hangs never makes the agent hang: memory is used
without waiting for it, the one command that must wait for the index (rebuild) names what holds it, and every
other wait is bounded and ends in a message naming what holds it.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from agent import wiring
from agent.adapters import chroma_files, ledger
from agent.adapters.chroma_index import forget_clients
from agent.config import load_settings
from agent.errors import StoreLocked
from tests.cli_harness import invoke
from tests.helpers_store import (
    ShaEmbedder,
    open_fake_memory,
    returns_within,
    run_agent,
    spawn,
    text_for,
    wait_for_line,
)
from tests.piped_chat import PipedAgent
from tests.warm_agent import WarmProcess

pytestmark = pytest.mark.usefixtures("model_cache")


@contextmanager
def holder(*args: str) -> Iterator[WarmProcess]:
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
        wait_for_line(proc, "ready")
        yield
    finally:
        proc.kill()
        proc.communicate()


@pytest.mark.slow
def test_a_second_agent_beside_a_holder_writes_and_reads_memory(tmp_path: Path) -> None:
    assert invoke("memories", "add", "My sister Ada lives in Lisbon").returncode == 0
    forget_clients()
    with holder("real"):
        added = run_agent("memories", "add", "My neighbour plays the cello on Sundays")
        assert added.returncode == 0, added.stderr
        listed = run_agent("memories", "list", "--json")
        assert listed.returncode == 0, listed.stderr
        found = run_agent("memories", "search", "who plays the cello", "--json")
    for result in (added, listed, found):
        assert "is using the memory store" not in result.stderr and "Traceback" not in result.stderr
    assert sorted(m["text"] for m in json.loads(listed.stdout)) == sorted(
        ["My sister Ada lives in Lisbon", "My neighbour plays the cello on Sundays"])
    assert json.loads(found.stdout)[0]["text"] == "My neighbour plays the cello on Sundays"


@pytest.mark.slow
def test_agents_started_together_all_save_and_none_hangs(tmp_path: Path) -> None:
    texts = [f"My neighbour number {n} plays the cello on Sundays" for n in range(3)]
    procs = [PipedAgent(dict(os.environ), "memories", "add", text) for text in texts]
    for proc in procs:
        assert proc.finish() == 0, proc.err
    listed = json.loads(invoke("memories", "list", "--json").stdout)
    assert sorted(m["text"] for m in listed) == sorted(texts)


@pytest.mark.slow
def test_a_hung_agent_holding_the_index_is_not_waited_for(tmp_path: Path) -> None:
    with holder() as chat:
        chat.send_signal(signal.SIGSTOP)  # it holds the index until the block ends
        memory = returns_within(60, open_fake_memory)
        written = memory.add(text_for("beside", 0))
        assert [hit.record.id for hit in memory.search(text_for("beside", 0), k=1)] == [written.id]
        with pytest.raises(StoreLocked, match=rf"pid {chat.pid}\).*kill {chat.pid}"):
            returns_within(60, lambda: wiring.open_memory(load_settings(), ShaEmbedder(), check=False))


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
def test_a_program_holding_the_ledger_locked_stops_no_start_nor_read_and_a_write_for_a_bounded_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The ledger runs in WAL mode: readers never wait for a writer. A writer waits ``BUSY_WAIT`` for another's
    transaction, then fails with one line, having written nothing."""
    kept = open_fake_memory().add(text_for("kept", 0))
    forget_clients()
    monkeypatch.setattr(ledger, "BUSY_WAIT", 1.0)
    with sqlite_holder(tmp_path / "data" / "ledger.sqlite3"):
        memory = returns_within(60, open_fake_memory)
        assert [hit.record.id for hit in returns_within(60, lambda: memory.search(text_for("kept", 0), k=1))] == [
            kept.id]
        with pytest.raises(StoreLocked, match=r"ledger\.sqlite3 stayed locked by another process for over 1 s, "
                                              r"so nothing was written: try again"):
            returns_within(60, lambda: memory.add(text_for("refused", 0)))
        forget_clients()
    assert not list((tmp_path / "data").glob("ledger.sqlite3.corrupt-*")), "a locked ledger is not taken for damaged"
    assert [m.text for m in open_fake_memory().list()] == [text_for("kept", 0)]
