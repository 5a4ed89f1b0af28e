"""Opening the embedded store reads what changed since it was last open, not every id (issue 22): the index saves
the mark of the ledger's vector copies it is in step with, and the next open catches up from it when the ledger's
record of changes still reaches it and the counts then agree; otherwise it compares every id, a page at a time
(``mirrored_index.Sweep``; a chat leaves that for between turns: ``test_open_sweep.py``). Either way the first
turn's catch-up does not compare again."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from agent.adapters.chroma_index import ChromaIndex, forget_clients
from agent.adapters.index_holder import HeldIndex
from agent.adapters.ledger import SqliteLedger
from agent.domain import memory_id
from agent.memory.service import MemoryService
from tests.builders import add_all, record
from tests.helpers_store import ShaEmbedder, index_of, ledger_of, open_fake_memory, text_for


def closed(memory: MemoryService) -> Path:
    path = ledger_of(memory).path
    memory.close()
    forget_clients()
    return path


def no_whole_read(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ChromaIndex, "ids", lambda self: pytest.fail("every id of the index read"))
    monkeypatch.setattr(SqliteLedger, "ids", lambda self, user: pytest.fail("every memory id read"))
    monkeypatch.setattr(SqliteLedger, "vector_ids", lambda self, user: pytest.fail("every vector id read"))


def test_an_open_catches_up_with_what_another_process_wrote_and_evicted_since_without_reading_every_id(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    memory = open_fake_memory()
    ids = list(add_all(memory, [text_for("kept", n) for n in range(30)]))
    memory.warm_up_index()
    path = closed(memory)
    other = SqliteLedger(path)  # a process without the index: it writes the ledger and its copies only
    news = text_for("news", 1)
    now = time.time()
    other.put([record(news, memory.user, kind="explicit", session="other", turn=0, at=now)])
    other.put_vectors(memory.user, [memory_id(memory.user, news)], ShaEmbedder().embed([news]))
    other.delete(memory.user, [ids[0]])  # an eviction there
    other.close()
    with monkeypatch.context() as patch:
        no_whole_read(patch)
        notices: list[str] = []
        memory = open_fake_memory(notices.append)
        memory.warm_up_index()
        held = index_of(memory)
        assert memory.search(news, k=1)[0].record.text == news
        assert ids[0] not in held.vectors([ids[0]])
        assert held.count() == 30
    closed(memory)


def test_an_open_after_a_forget_or_with_counts_that_disagree_compares_every_id(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    memory = open_fake_memory()
    ids = list(add_all(memory, [text_for("kept", n) for n in range(10)]))
    memory.warm_up_index()
    path = closed(memory)
    other = SqliteLedger(path)
    other.record_forget(memory.user, [ids[1]], [text_for("kept", 1)])
    other.close()
    read: list[int] = []
    real_begin = HeldIndex.begin
    monkeypatch.setattr(HeldIndex, "begin", lambda self, *a: read.append(1) or real_begin(self, *a))
    memory = open_fake_memory()
    assert read == [1] and index_of(memory).count() == 9
    memory.warm_up_index()
    assert read == [1], "the first catch-up does not compare again"
    path = closed(memory)
    other = SqliteLedger(path)  # half an eviction: the memory left the ledger, its vector stays in the index
    with other._tx() as db:  # noqa: SLF001  (the file as a kill between the two halves leaves it)
        db.execute("DELETE FROM memories WHERE id = ?", (ids[2],))
    other.close()
    memory = open_fake_memory()
    assert read == [1, 1] and index_of(memory).count() == 8
    closed(memory)


def test_an_open_after_a_kill_puts_back_from_the_ledger_what_this_process_wrote_since_the_saved_mark(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The mark is not saved after each of this process's own writes (``MARK_LAG``): an index that lost some of
    them (HNSW not saved when the process was killed) resumes from the older mark and gets them back from the
    ledger's copies, without comparing every id."""
    memory = open_fake_memory()
    add_all(memory, [text_for("kept", n) for n in range(10)])
    memory.warm_up_index()
    written = []
    for n in range(5):
        written.append(memory.add(text_for("new", n)).id)
        memory.search(text_for("new", n), k=1)  # a turn after each write catches up with it
    index_of(memory).delete(written[:2])  # what a kill before Chroma's save loses
    path = closed(memory)
    with monkeypatch.context() as patch:
        no_whole_read(patch)
        memory = open_fake_memory()
        memory.warm_up_index()
        held = index_of(memory)
        assert set(held.vectors(written)) == set(written)
        assert held.count() == 15
    assert SqliteLedger(path).count(memory.user) == 15
    closed(memory)


def test_a_forget_is_caught_up_with_by_counting_not_by_reading_every_id(monkeypatch: pytest.MonkeyPatch) -> None:
    """A forget takes its ids out of the ledger's record of changes (they derive from the text), so the index
    cannot be told which went. The holder's own forget left Chroma as the ledger, which the two counts show: its
    next turn and the next open read no id list (at 100,000 memories that compare took 1.9 s in Chroma alone)."""
    memory = open_fake_memory()
    texts = [text_for("kept", n) for n in range(10)]
    ids = list(add_all(memory, texts))
    memory.warm_up_index()
    with monkeypatch.context() as patch:
        no_whole_read(patch)
        memory.record_forget([ids[3]], [texts[3]])  # as agent.forget does: the ledger, then the index
        memory.drop_vectors([ids[3]])
        assert [hit.record.id for hit in memory.search(texts[3], k=10)].count(ids[3]) == 0
        assert index_of(memory).count() == 9
    closed(memory)
    with monkeypatch.context() as patch:
        no_whole_read(patch)
        memory = open_fake_memory()
        memory.warm_up_index()
        assert index_of(memory).count() == 9
    closed(memory)


def test_a_forget_another_process_made_is_caught_up_with_by_comparing_every_id(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Another process's forget leaves the holder's Chroma with a vector the ledger no longer has: the counts
    differ, so the next turn compares every id and drops it."""
    memory = open_fake_memory()
    texts = [text_for("kept", n) for n in range(10)]
    ids = list(add_all(memory, texts))
    memory.warm_up_index()
    closed(memory)
    memory = open_fake_memory()  # resumed from the saved mark: Chroma's ids were not read
    memory.warm_up_index()
    other = SqliteLedger(ledger_of(memory).path)
    other.record_forget(memory.user, [ids[4]], [texts[4]])
    other.close()
    read: list[int] = []
    real_ids = ChromaIndex.ids
    monkeypatch.setattr(ChromaIndex, "ids", lambda self: read.append(1) or real_ids(self))
    memory.search(texts[0], k=1)
    held = index_of(memory)
    assert read == [1] and held.count() == 9 and ids[4] not in held.vectors([ids[4]])
    closed(memory)
