"""The two indexes of several processes on one data directory, in-process: ``LedgerVectors`` (a process that does
not hold Chroma searches the ledger's vector copies) and ``HeldIndex`` (the holder catches Chroma up with the
ledger). A second ``SqliteLedger`` connection stands in for another process: SQLite tells the two apart the same
way (``data_version``). The holder over a real embedded Chroma is tests/integration/test_index_holder.py."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from agent.adapters.ledger import SqliteLedger
from agent.adapters.ledger_vectors import LedgerVectors
from tests.builders import seed_ledger
from tests.helpers_store import SHA_SPACE, ShaEmbedder

USER = "default"


def write(ledger: SqliteLedger, *texts: str) -> list[str]:
    """Memories and their vector copies, as a process without the index writes them."""
    return [r.id for r in seed_ledger(ledger, USER, texts, ShaEmbedder().embed(texts), SHA_SPACE, session="t")]


def probe(text: str) -> list[float]:
    return ShaEmbedder().embed([text])[0]


@pytest.fixture
def two(tmp_path: Path) -> tuple[SqliteLedger, SqliteLedger]:
    path = tmp_path / "ledger.sqlite3"
    return SqliteLedger(path), SqliteLedger(path)


def test_a_search_ranks_by_cosine_and_returns_at_most_k(two: tuple[SqliteLedger, SqliteLedger]) -> None:
    mine, _ = two
    ids = write(mine, *(f"note {n}" for n in range(20)))
    index = LedgerVectors(mine, USER)
    hits = index.query(probe("note 7"), 3)
    assert [hit.id for hit in hits][0] == ids[7] and hits[0].similarity == pytest.approx(1.0, abs=1e-5)
    assert len(hits) == 3 and hits[0].similarity >= hits[1].similarity >= hits[2].similarity
    assert len(index.query(probe("note 7"), 50)) == 20
    assert index.query(probe("note 7"), 0) == []


def test_what_another_process_writes_and_forgets_is_seen_at_the_next_search(
    two: tuple[SqliteLedger, SqliteLedger]
) -> None:
    mine, other = two
    write(mine, "note a")
    index = LedgerVectors(mine, USER)
    assert len(index.query(probe("note b"), 5)) == 1
    [b] = write(other, "note b")
    assert index.query(probe("note b"), 1)[0].id == b
    other.delete(USER, [b])
    assert b not in {hit.id for hit in index.query(probe("note b"), 5)}
    [c] = write(other, "note c")
    other.put_vectors(USER, [c], [probe("note c")])  # rewritten: a new row, read once
    assert [hit.id for hit in index.query(probe("note c"), 5)].count(c) == 1


def test_nothing_is_read_again_while_the_ledger_is_unchanged(
    two: tuple[SqliteLedger, SqliteLedger], monkeypatch: pytest.MonkeyPatch
) -> None:
    mine, other = two
    write(mine, "note a", "note b")
    index = LedgerVectors(mine, USER)
    index.query(probe("note a"), 1)
    reads: list[str] = []
    monkeypatch.setattr(mine, "vector_rowids", lambda user: reads.append(user) or [])
    index.query(probe("note a"), 1)
    assert reads == []
    monkeypatch.undo()
    write(other, "note c")
    monkeypatch.setattr(mine, "vector_rows", lambda user, rowids: reads.append(str(len(rowids))) or [])
    index.query(probe("note a"), 1)
    assert reads == ["1"], "only the new vector is read"


def test_a_warm_up_reads_the_vectors_before_the_first_search(
    two: tuple[SqliteLedger, SqliteLedger], monkeypatch: pytest.MonkeyPatch
) -> None:
    mine, _ = two
    [a] = write(mine, "note a")
    index = LedgerVectors(mine, USER)
    index.warm_up()
    monkeypatch.setattr(mine, "vector_rowids", lambda user: pytest.fail("read again at the first search"))
    assert index.query(probe("note a"), 1)[0].id == a


def test_a_ledger_another_process_creates_at_the_same_moment_is_opened_not_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two agents started together on a new data directory: both see no ledger, one creates it first, and the other's
    exclusive create fails. Before, that one said "cannot be created (File exists)" and ran without memory."""
    path = tmp_path / "ledger.sqlite3"
    first = SqliteLedger(path)
    seen = Path.exists
    monkeypatch.setattr(Path, "exists", lambda self: False if self == path else seen(self))
    second = SqliteLedger(path)  # it too saw no file, then found the other's
    write(first, "I keep bees in Lisbon")
    assert [r.text for r in second.all(USER)] == ["I keep bees in Lisbon"]
    first.close()
    second.close()


def _steps(ledger: SqliteLedger, read: Callable[..., object], *args: object) -> int:
    """How many SQLite VM steps (in hundreds) ``read(*args)`` takes on ``ledger``."""
    counted = [0]

    def count() -> int:
        counted[0] += 1
        return 0

    ledger._db.set_progress_handler(count, 100)  # noqa: SLF001  (the cost of one statement, as SQLite counts it)
    try:
        read(*args)
    finally:
        ledger._db.set_progress_handler(None, 100)  # noqa: SLF001
    return counted[0]


def test_what_changed_since_a_mark_costs_the_changes_not_the_log(tmp_path: Path) -> None:
    """A turn after a write reads the change feed: its cost is what was written since the mark, not the log's
    length (a scan of the whole log of 10,000 changes was 10.8 ms of every such turn)."""
    costs = []
    for size in (50, 3000):
        ledger = SqliteLedger(tmp_path / f"ledger-{size}.sqlite3")
        write(ledger, *(f"note {n}" for n in range(size)))
        mark = ledger.vector_changes(USER, None).mark
        new = write(ledger, "one more note")
        changes = ledger.vector_changes(USER, mark)
        assert (changes.ids, changes.whole) == (new, False)
        costs.append(_steps(ledger, ledger.vector_changes, USER, mark))
        ledger.close()
    assert costs[1] <= costs[0] + 2, f"VM steps (hundreds) at 50 and 3,000 changes in the log: {costs}"


def test_the_vectors_written_last_are_read_without_sorting_every_row(tmp_path: Path) -> None:
    """The open's health probe reads the last vectors written: its cost does not grow with the store (it sorted
    every row of the user, 90 ms at 100,000 memories)."""
    costs = []
    for size in (50, 3000):
        ledger = SqliteLedger(tmp_path / f"ledger-{size}.sqlite3")
        ids = write(ledger, *(f"note {n}" for n in range(size)))
        assert [mid for mid, _ in ledger.latest_vectors(USER, 3)] == ids[::-1][:3]
        costs.append(_steps(ledger, ledger.latest_vectors, USER, 3))
        ledger.close()
    assert costs[1] <= costs[0] + 2, f"VM steps (hundreds) at 50 and 3,000 vectors: {costs}"
