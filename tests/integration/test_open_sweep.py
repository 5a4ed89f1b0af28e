"""A chat's open with no saved mark to resume from (a store from before the mark, or one whose mark the ledger's record
of changes no longer reaches, as after an import of over 10,000) reads no id list: the compare of every id is left
to the chat's memory thread, a page at a time between turns (``mirrored_index.Sweep``, issue 22: nothing on the way
to the first prompt reads every id). Meanwhile a memory the index lacks is found by keyword search and never twice,
a vector whose memory is gone answers no search, and what other processes write and forget is caught up with; the
mark is saved once the last piece ends, so the next open resumes, and a chat closed in the middle compares again."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from agent import wiring
from agent.adapters import mirrored_index
from agent.adapters.chroma_index import LEDGER_MARK, ChromaIndex, forget_clients
from agent.adapters.ledger import SqliteLedger
from agent.config import load_settings
from agent.domain import memory_id
from agent.memory.service import MemoryService
from agent.ports import Notify
from tests.builders import add_all, record
from tests.helpers_store import ShaEmbedder, index_of, ledger_of, open_fake_memory, text_for

PAGE = 4  # ids a piece reads of each side
SIZE = 30


@pytest.fixture(autouse=True)
def small_pages(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(mirrored_index, "SWEEP_PAGE", PAGE)


@pytest.fixture
def pages(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[tuple[str, str, int]]]:
    """Every page of ids read, of either side: (side, where it began, its size); no whole list may be read."""
    read: list[tuple[str, str, int]] = []
    ledger_page, chroma_page = SqliteLedger.id_page, ChromaIndex.id_page
    monkeypatch.setattr(SqliteLedger, "id_page", lambda self, user, after, size: (
        read.append(("ledger", after, size)), ledger_page(self, user, after, size))[1])
    monkeypatch.setattr(ChromaIndex, "id_page", lambda self, offset, size: (
        read.append(("chroma", str(offset), size)), chroma_page(self, offset, size))[1])
    monkeypatch.setattr(ChromaIndex, "ids", lambda self: pytest.fail("every id of the index read"))
    monkeypatch.setattr(SqliteLedger, "ids", lambda self, user: pytest.fail("every memory id read"))
    monkeypatch.setattr(SqliteLedger, "vector_ids", lambda self, user: pytest.fail("every vector id read"))
    yield read


def chat_open(notify: Notify | None = None) -> MemoryService:
    """The memory as a chat opens it (its memory thread runs the pieces: here the test does)."""
    memory = wiring.open_memory(load_settings(), ShaEmbedder(), notify=notify, sweep_later=True)
    memory.warm_up_index()
    return memory


def marks() -> list[Path]:
    return sorted((load_settings().data_dir / "chroma").glob(f"{LEDGER_MARK}-*"))


def closed(memory: MemoryService) -> Path:
    path = ledger_of(memory).path
    memory.close()
    forget_clients()
    return path


def unmarked(memory: MemoryService) -> Path:
    """Close ``memory`` and remove the mark its index was saved at: the next open cannot resume."""
    path = closed(memory)
    for mark in marks():
        mark.unlink()
    return path


def seeded(n: int = SIZE) -> tuple[MemoryService, dict[str, str]]:
    memory = open_fake_memory()
    written = add_all(memory, [text_for("kept", i) for i in range(n)])
    memory.warm_up_index()
    return memory, written


def sweep_all(memory: MemoryService, most: int) -> int:
    """Run the pieces to the end; how many there were (a sweep must end within ``most``)."""
    done = 1
    while memory.sweep_index():
        done += 1
        assert done <= most, "the compare does not end"
    return done


def found(memory: MemoryService, text: str) -> list[str]:
    return [hit.record.id for hit in memory.search(text, k=5)]


def test_the_open_reads_no_page_and_the_pieces_each_read_one_and_end(pages: list[tuple[str, str, int]]) -> None:
    memory, written = seeded()
    unmarked(memory)
    pages.clear()
    memory = chat_open()
    assert pages == [], "the open read ids"
    probe = text_for("kept", 7)
    assert found(memory, probe)[0] == memory_id(memory.user, probe)
    assert memory.sweep_index() and marks() == [], "no mark saved before the compare ends"
    assert len(pages) == 1
    pieces = 1 + sweep_all(memory, most=SIZE // PAGE + 4)
    ledger_pages = [after for side, after, _ in pages if side == "ledger"]
    assert all(size == PAGE for _, _, size in pages) and len(pages) <= pieces
    assert ledger_pages == sorted(ledger_pages) and len(ledger_pages) == SIZE // PAGE + 1  # every id, in id order
    assert [side for side, _, _ in pages].count("chroma") == 0, "the counts agree: Chroma's ids are not read"
    assert len(marks()) == 1
    closed(memory)
    pages.clear()
    memory = chat_open()  # resumed from the mark the last piece saved
    assert not memory.sweep_index() and pages == []
    assert index_of(memory).count() == SIZE
    closed(memory)


def test_a_gap_found_in_a_later_piece_is_repaired_and_meanwhile_nothing_is_lost_twice_found_or_forgotten_returned(
    pages: list[tuple[str, str, int]],
) -> None:
    memory, written = seeded()
    ids = sorted(written)
    gap, orphan = ids[-3:], ids[0]  # the gap in the last page in id order; the orphan in the first
    index_of(memory).delete(gap)  # what a kill before Chroma's save loses
    path = unmarked(memory)
    other = SqliteLedger(path)  # half a forget: the memory left the ledger, its vector stays in the index
    with other._tx() as db:  # noqa: SLF001  (the file as a kill between the two halves leaves it)
        db.execute("DELETE FROM memories WHERE id = ?", (orphan,))
    other.close()
    notices: list[str] = []
    pages.clear()
    memory = chat_open(notices.append)
    held = index_of(memory)
    assert orphan in held.held([orphan]) and not held.held(gap)
    assert orphan not in found(memory, written[orphan]), "a vector whose memory is gone answers no search"
    lacking = written[gap[0]]
    assert found(memory, lacking).count(gap[0]) == 1, "found by its words meanwhile, once"
    repaired_at = []
    piece = 1
    while memory.sweep_index():
        piece += 1
        if held.held(gap) and not repaired_at:
            repaired_at.append(piece)
        assert orphan not in found(memory, written[orphan])
    assert repaired_at and repaired_at[0] >= (SIZE - 3) // PAGE, "the gap is repaired by the piece that reads it"
    assert set(held.held(gap)) == set(gap) and not held.held([orphan])
    assert held.count() == SIZE - 1 == ledger_of(memory).count(memory.user)
    assert found(memory, lacking).count(gap[0]) == 1
    assert any("lacked 3 of 29" in notice for notice in notices) and any("Dropped 1" in notice for notice in notices)
    assert [side for side, _, _ in pages].count("chroma") >= 1, "Chroma held more: its ids were read, in pages"
    closed(memory)


def test_what_another_process_writes_and_forgets_between_two_pieces_is_caught_up_with(
    pages: list[tuple[str, str, int]],
) -> None:
    memory, written = seeded()
    path = unmarked(memory)
    memory = chat_open()
    assert memory.sweep_index() and memory.sweep_index()
    other = SqliteLedger(path)  # a process without the index: it writes the ledger and its copies only
    news = text_for("news", 1)
    other.put([record(news, memory.user, kind="explicit", session="other", turn=0)])
    other.put_vectors(memory.user, [memory_id(memory.user, news)], ShaEmbedder().embed([news]))
    gone = sorted(written)[-1]  # in a page still to come
    other.record_forget(memory.user, [gone], [written[gone]])
    other.close()
    assert found(memory, news)[0] == memory_id(memory.user, news)
    assert gone not in found(memory, written[gone])
    sweep_all(memory, most=2 * (SIZE // PAGE + 2) + 2)  # both sides: Chroma holds more than the ledger
    held = index_of(memory)
    assert not held.held([gone]), "the forgotten vector left the index"
    assert held.count() == SIZE == ledger_of(memory).count(memory.user)
    assert len(marks()) == 1
    closed(memory)


def test_a_chat_closed_in_the_middle_saves_no_mark_and_the_next_open_compares_again(
    pages: list[tuple[str, str, int]],
) -> None:
    memory, _ = seeded()
    unmarked(memory)
    memory = chat_open()
    assert memory.sweep_index()
    closed(memory)
    assert marks() == []
    memory = chat_open()
    assert memory.sweep_index(), "the compare begins again"
    sweep_all(memory, most=SIZE // PAGE + 4)
    assert len(marks()) == 1
    closed(memory)


def test_an_open_that_is_not_a_chat_compares_every_id_a_page_at_a_time_before_it_returns(
    pages: list[tuple[str, str, int]],
) -> None:
    memory, written = seeded()
    index_of(memory).delete(sorted(written)[:2])
    unmarked(memory)
    notices: list[str] = []
    pages.clear()
    memory = open_fake_memory(notices.append)
    assert len([p for p in pages if p[0] == "ledger"]) == SIZE // PAGE + 1 and all(p[2] == PAGE for p in pages)
    assert not memory.sweep_index() and index_of(memory).count() == SIZE and len(marks()) == 1
    assert any("lacked 2 of 30" in notice for notice in notices)
    closed(memory)


def test_a_record_trimmed_past_the_mark_between_two_pieces_begins_the_compare_again(
    pages: list[tuple[str, str, int]], monkeypatch: pytest.MonkeyPatch
) -> None:
    from agent.adapters import ledger as sqlite_ledger

    memory, _ = seeded()
    path = unmarked(memory)
    memory = chat_open()
    assert memory.sweep_index() and memory.sweep_index()
    monkeypatch.setattr(sqlite_ledger, "VECTOR_LOG_KEPT", 5)
    other = SqliteLedger(path)  # an import elsewhere: more changes than the record keeps
    news = [text_for("news", n) for n in range(8)]
    other.put([record(text, memory.user, kind="explicit", session="other", turn=0) for text in news])
    other.put_vectors(memory.user, [memory_id(memory.user, text) for text in news], ShaEmbedder().embed(news))
    other.close()
    pages.clear()
    memory.search(news[0], k=1)  # its catch-up finds the record trimmed past the mark
    assert memory.sweep_index() and pages[0] == ("ledger", "", PAGE), "begun again from the first id"
    sweep_all(memory, most=SIZE // PAGE + 8)
    assert index_of(memory).count() == SIZE + 8 == ledger_of(memory).count(memory.user)
    assert found(memory, news[5])[0] == memory_id(memory.user, news[5])
    assert len(marks()) == 1
    closed(memory)
