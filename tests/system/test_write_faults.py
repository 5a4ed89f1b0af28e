"""Checklist cases 1 and 7: a kill -9 in the middle of memory writes, a full disk and a refused write.

The promise under test: a memory the agent reported as saved is there after any crash, and found by a query; a
write that failed was reported, left everything before it intact, and a retry stores it exactly once.
"""

from __future__ import annotations

import errno
import os
import random
import signal
import sqlite3
import time
from pathlib import Path

import pytest

from agent.adapters.chroma_index import forget_clients
from agent.errors import MemoryUnavailable
from agent.memory.service import MemoryService
from tests.helpers_store import Forker, ShaEmbedder, index_of, ledger_of, open_fake_memory, spawn, text_for, vectors_of

ROUNDS = 12


def assert_all_found(memory: MemoryService, acked: dict[str, str]) -> None:
    """Every acknowledged id is in the ledger and the index, and querying with its own text finds it first."""
    embedder = ShaEmbedder()
    stored = set(ledger_of(memory).ids(memory.user))
    assert set(acked) <= stored
    assert memory.indexed() == len(stored), "the index holds exactly the ledger's memories"
    for mid, text in acked.items():
        [top] = vectors_of(memory).query(embedder.embed([text])[0], 1)
        assert top.id == mid


@pytest.mark.slow
def test_kill_9_during_writes_loses_no_acknowledged_memory(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    seed = random.randrange(1 << 30)
    print(f"seed {seed}")
    rng = random.Random(seed)
    ack = tmp_path / "acks"
    acked: dict[str, str] = {}
    forker = Forker()
    try:
        for round_no in range(ROUNDS):
            writer = forker.start("writer", str(ack), f"r{round_no}")
            # a few writes acknowledged first (waited for: a loaded machine may take seconds over one), then the
            # kill at a random moment of the writes after them
            wait_for_acks(ack, len(acked) + rng.randint(1, 3))
            time.sleep(rng.uniform(0.0, 0.2))
            os.kill(writer, signal.SIGKILL)
            forker.reaped(writer)
            check_round(ack, acked)
    finally:
        forker.close()
    healed = [r.message for r in caplog.records if "is rebuilt from the ledger" in r.message]
    print(f"{len(acked)} acknowledged writes over {ROUNDS} kills; torn indexes rebuilt from the ledger: {len(healed)}")


def wait_for_acks(ack: Path, count: int, timeout: float = 120.0) -> None:
    """Wait until ``ack`` holds ``count`` acknowledgements; fail only if it does not after a generous ``timeout``."""
    deadline = time.monotonic() + timeout
    while not ack.exists() or len(ack.read_text().splitlines()) < count:
        if time.monotonic() > deadline:
            pytest.fail(f"the writer acknowledged fewer than {count} writes in {timeout} s")
        time.sleep(0.01)


def check_round(ack: Path, acked: dict[str, str]) -> None:
    """After a kill: every write acknowledged so far is stored and found; then the store is closed again."""
    for line in ack.read_text().splitlines():
        mid, tag, n = line.split()
        acked[mid] = text_for(tag, int(n))
    memory = open_fake_memory()
    assert_all_found(memory, acked)
    forget_clients()
    ledger_of(memory).close()


@pytest.mark.slow
def test_a_full_disk_is_reported_once_and_a_retry_stores_the_memory_once(tmp_path: Path) -> None:
    memory = open_fake_memory()
    memory.add(text_for("before", 0))
    forget_clients()
    ledger_of(memory).close()
    biggest = max(p.stat().st_size for p in (tmp_path / "data").rglob("*") if p.is_file())

    filler = spawn("fill", str(biggest + 8 * 1024), "fill")
    out, err = filler.communicate(timeout=120)
    assert filler.returncode == 0, err
    lines = out.splitlines()
    saved = [line.split()[1] for line in lines if line.startswith("saved ")]
    [failure] = [line for line in lines if line.startswith("error ")]
    assert lines[-1] == failure, "the failure ends the run: reported once, not retried in a loop"
    failed_at = int(failure.split()[1])
    assert failed_at == len(saved) and saved, "the disk filled after some writes"
    assert "could not be" in failure or "failed to" in failure

    with sqlite3.connect(tmp_path / "data" / "ledger.sqlite3") as db:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    memory = open_fake_memory()
    acked = {mid: text_for("fill", n) for n, mid in enumerate(saved)}
    acked[memory.add(text_for("before", 0)).id] = text_for("before", 0)
    assert_all_found(memory, acked)

    retried = memory.add(text_for("fill", failed_at))
    again = memory.add(text_for("fill", failed_at))
    assert retried.id == again.id
    assert ledger_of(memory).ids(memory.user).count(retried.id) == 1
    assert_all_found(memory, {**acked, retried.id: text_for("fill", failed_at)})


@pytest.mark.parametrize("error", [errno.ENOSPC, errno.EACCES], ids=["ENOSPC", "EACCES"])
def test_an_index_write_refused_by_the_os_is_reported_and_a_retry_indexes_once(tmp_path: Path, error: int) -> None:
    memory = open_fake_memory()
    kept = memory.add(text_for("kept", 0))
    collection = index_of(memory)._get(create=True)

    def refuse(**_: object) -> None:
        raise OSError(error, "refused by the test")

    with pytest.MonkeyPatch.context() as patch, pytest.raises(MemoryUnavailable, match="failed to save vectors"):
        patch.setattr(collection, "upsert", refuse)
        memory.add(text_for("new", 0))

    retried = memory.add(text_for("new", 0))
    assert memory.count() == 2 and memory.indexed() == 2
    assert [h.id for h in vectors_of(memory).query(ShaEmbedder().embed([text_for("new", 0)])[0], 1)] == [retried.id]
    assert kept.id in ledger_of(memory).ids(memory.user)


def test_a_ledger_that_refuses_writes_is_reported_and_nothing_is_half_written(tmp_path: Path) -> None:
    memory = open_fake_memory()
    memory.add(text_for("kept", 0))
    ledger_of(memory)._db.execute("PRAGMA query_only = ON")  # refuses writes as a read-only file does
    with pytest.raises(MemoryUnavailable, match="could not be written"):
        memory.add(text_for("new", 0))
    assert memory.count() == 1 and memory.indexed() == 1, "the vector was not written without its text"
    ledger_of(memory)._db.execute("PRAGMA query_only = OFF")
    memory.add(text_for("new", 0))
    assert memory.count() == 2 and memory.indexed() == 2
