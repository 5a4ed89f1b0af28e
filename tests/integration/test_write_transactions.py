"""One memory per call is one transaction of the SQLite ledger (issue 22): the sightings a recall left, the memory,
its vector copy and the links of what it replaces commit together (``SqliteLedger.together``), where each was a
commit (an fsync of the log) of its own. The block ends as the writes would have one by one: a write that completed
is committed even if what follows it raises, one that failed is undone alone, and the vector reaches Chroma only
after the ledger committed its copy."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace

import pytest

from agent import wiring
from agent.adapters.chroma_index import ChromaIndex, forget_clients
from agent.adapters.ledger import SqliteLedger
from agent.config import load_settings
from agent.errors import MemoryUnavailable
from agent.memory.service import MemoryService
from tests.builders import add_all, record
from tests.helpers_store import ShaEmbedder, index_of, ledger_of, open_fake_memory, text_for, vectors_of


@contextmanager
def begun(ledger: SqliteLedger) -> Iterator[list[str]]:
    """The transactions begun on ``ledger``'s connection inside the block."""
    seen: list[str] = []
    ledger._db.set_trace_callback(seen.append)  # noqa: SLF001  (the statements the file is sent)
    try:
        yield seen
    finally:
        ledger._db.set_trace_callback(None)  # noqa: SLF001
        seen[:] = [s for s in seen if s == "BEGIN IMMEDIATE"]


def chat_memory() -> MemoryService:
    return wiring.open_memory(load_settings(), ShaEmbedder(), group_writes=True)


def test_a_remember_after_a_recall_is_one_transaction_with_its_sightings_and_vector_copy() -> None:
    memory = chat_memory()
    stored = add_all(memory, [text_for("kept", n) for n in range(5)])
    seen = [m.record for m in memory.recall(text_for("kept", 1)).block.memories]  # written with the next write
    assert seen
    ledger = ledger_of(memory)
    with begun(ledger) as transactions:
        written = memory.add(text_for("new", 1))
    assert len(transactions) == 1
    other = SqliteLedger(ledger.path)
    assert other.get(memory.user, [written.id]) and other.stored_vectors(memory.user, [written.id])
    now = other.get(memory.user, list(stored))
    assert all(now[r.id].last_seen > r.created_at for r in seen)
    other.close()
    memory.close()
    forget_clients()


def test_a_remember_that_replaces_a_fact_writes_memory_copy_and_links_in_one_transaction() -> None:
    memory = chat_memory()
    boston = memory.add("I live in Boston").id
    ledger = ledger_of(memory)
    with begun(ledger) as transactions:
        report = memory.remember("I live in Berlin")
    assert report.superseded == (boston,)
    assert len(transactions) == 1
    other = SqliteLedger(ledger.path)
    assert other.get(memory.user, [boston])[boston].superseded_by == report.stored[0].id
    other.close()
    memory.close()
    forget_clients()


def test_a_write_that_completed_is_committed_when_the_block_raises_and_a_failed_one_is_undone_alone() -> None:
    memory = open_fake_memory()
    ledger = ledger_of(memory)
    kept, failed = record(text_for("kept", 1), memory.user), record(text_for("failed", 2), memory.user)
    with pytest.raises(RuntimeError), ledger.together():
        ledger.put([kept])
        with pytest.raises(ZeroDivisionError), ledger._tx() as db:  # noqa: SLF001  (a write that fails half-way)
            db.execute("UPDATE memories SET source = 'changed' WHERE id = ?", (kept.id,))
            raise ZeroDivisionError
        with pytest.raises(MemoryUnavailable):
            ledger.put([failed, replace(failed, id=kept.id, kind=None)])  # type: ignore[arg-type]
        raise RuntimeError("the caller's code after the writes")
    other = SqliteLedger(ledger.path)
    assert other.get(memory.user, [kept.id, failed.id]) == {kept.id: kept}
    assert ledger.count(memory.user) == other.count(memory.user) == 1
    other.close()
    memory.close()
    forget_clients()


def test_a_vector_reaches_chroma_only_once_the_ledger_committed_its_copy(monkeypatch: pytest.MonkeyPatch) -> None:
    memory = open_fake_memory()  # a command's: each vector into Chroma in the call
    memory.add(text_for("first", 0))
    calls: list[list[str]] = []
    real = ChromaIndex.upsert
    ledger, other = ledger_of(memory), SqliteLedger(ledger_of(memory).path)

    def recorded(self: ChromaIndex, ids: Sequence[str], vectors: Sequence[Sequence[float]]) -> None:
        assert other.stored_vectors(memory.user, list(ids)).keys() == set(ids), "Chroma before the ledger's commit"
        calls.append(list(ids))
        real(self, ids, vectors)

    monkeypatch.setattr(ChromaIndex, "upsert", recorded)
    written = memory.add(text_for("new", 1)).id
    assert calls == [[written]]
    with ledger.together():
        vectors_of(memory).upsert(["late"], ShaEmbedder().embed(["late"]))
        assert calls == [[written]]
    assert calls == [[written], ["late"]]
    assert index_of(memory).held(["late"]) == {"late"}
    other.close()
    memory.close()
    forget_clients()
