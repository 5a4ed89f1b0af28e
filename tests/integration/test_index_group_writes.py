"""A chat's write does not wait for Chroma (issue 22): its vectors reach the ledger in the call and Chroma in a group
(``HeldIndex.group_writes``), flushed between turns, at ``GROUP`` pending, before a compare, a count or a saved mark,
and at close. What waits is consulted by the next search, leaves with a forget, and is not lost by a kill: the
ledger's copy puts it back at the next open."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from agent import wiring
from agent.adapters.chroma_index import ChromaIndex, forget_clients
from agent.adapters.index_holder import GROUP, HeldIndex
from agent.adapters.ledger import SqliteLedger
from agent.config import load_settings
from agent.memory.service import MemoryService
from tests.builders import add_all
from tests.helpers_store import ShaEmbedder, index_of, ledger_of, text_for, vectors_of


def open_chat_memory() -> MemoryService:
    """``open_memory`` as a chat's memory thread calls it."""
    return wiring.open_memory(load_settings(), ShaEmbedder(), group_writes=True)


def held_of(memory: MemoryService) -> HeldIndex:
    index = vectors_of(memory)
    assert isinstance(index, HeldIndex)
    return index


def upserts(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """The ids of each call of Chroma's upsert from now on."""
    calls: list[list[str]] = []
    real = ChromaIndex.upsert

    def recorded(self: ChromaIndex, ids: Sequence[str], vectors: Sequence[Sequence[float]]) -> None:
        calls.append(list(ids))
        real(self, ids, vectors)

    monkeypatch.setattr(ChromaIndex, "upsert", recorded)
    return calls


def closed(memory: MemoryService) -> Path:
    path = ledger_of(memory).path
    memory.close()
    forget_clients()
    return path


def test_a_write_is_in_the_ledger_at_once_and_found_by_the_next_search_before_chroma_has_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    memory = open_chat_memory()
    add_all(memory, [text_for("kept", n) for n in range(5)])
    memory.flush_index()
    calls = upserts(monkeypatch)
    note = text_for("new", 1)
    written = memory.add(note).id
    assert calls == []
    assert ledger_of(memory).stored_vectors(memory.user, [written])
    assert written not in index_of(memory).held([written])
    assert memory.search(note, k=1)[0].record.id == written
    assert calls == []
    assert memory.writes_pending()
    memory.flush_index()
    assert calls == [[written]]
    assert index_of(memory).held([written]) == {written}
    assert memory.search(note, k=1)[0].record.id == written
    closed(memory)


def test_the_write_that_makes_a_group_puts_the_whole_group_in_one_upsert(monkeypatch: pytest.MonkeyPatch) -> None:
    memory = open_chat_memory()
    calls = upserts(monkeypatch)
    ids = [memory.add(text_for("note", n)).id for n in range(GROUP)]
    assert calls == [ids]
    assert not memory.writes_pending()
    closed(memory)


def test_a_forget_takes_a_pending_vector_out_and_no_flush_puts_it_back(monkeypatch: pytest.MonkeyPatch) -> None:
    memory = open_chat_memory()
    add_all(memory, [text_for("kept", n) for n in range(3)])
    memory.flush_index()
    calls = upserts(monkeypatch)
    secret, other = memory.add(text_for("secret", 1)).id, memory.add(text_for("other", 2)).id
    memory.forget([secret])
    assert secret not in {hit.record.id for hit in memory.search(text_for("secret", 1), k=5)}
    memory.add(text_for("after", 3))
    memory.drop_vectors([other])  # as ``agent.forget`` does, after the ledger's delete
    memory.flush_index()
    assert all(secret not in call and other not in call for call in calls)
    assert index_of(memory).held([secret, other]) == set()
    closed(memory)


def test_a_kill_before_the_flush_loses_nothing_the_next_open_puts_it_back_from_the_ledger(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    memory = open_chat_memory()
    add_all(memory, [text_for("kept", n) for n in range(10)])
    memory.warm_up_index()
    memory.flush_index()
    written = [memory.add(text_for("new", n)).id for n in range(3)]
    assert held_of(memory).pending() == 3
    path = ledger_of(memory).path
    forget_clients()  # a kill: Chroma closed, the pending vectors never written to it, the service not closed
    with monkeypatch.context() as patch:
        patch.setattr(ChromaIndex, "ids", lambda self: pytest.fail("every id of the index read"))
        patch.setattr(SqliteLedger, "vector_ids", lambda self, user: pytest.fail("every vector id read"))
        memory = open_chat_memory()
        memory.warm_up_index()
        assert index_of(memory).held(written) == set(written)
        assert memory.indexed() == 13
    assert SqliteLedger(path).count(memory.user) == 13
    closed(memory)


def test_a_close_flushes_and_a_process_that_does_not_group_writes_waits_for_chroma(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    memory = open_chat_memory()
    written = memory.add(text_for("note", 1)).id
    memory.close()
    assert index_of(memory).held([written]) == {written}
    forget_clients()
    memory = wiring.open_memory(load_settings(), ShaEmbedder())  # a command: ``agent memories add``
    assert index_of(memory).held([written]) == {written}
    calls = upserts(monkeypatch)
    other = memory.add(text_for("note", 2)).id
    assert calls == [[other]] and not memory.writes_pending()
    closed(memory)
