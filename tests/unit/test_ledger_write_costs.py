"""What a kept chat turn reads of the SQLite ledger does not grow with the store (issue 22): the write cap's count of
the session's memories of the last day walks that session's rows (``memories_session``), not every memory of the
user, and a memory put with its turn's change (``/undo``'s) keeps the user's count, so the eviction's check after
it reads no count(*) over every row."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from agent.adapters.ledger import SqliteLedger
from agent.domain import Change, Links, Quote, StatedFact
from tests.builders import record
from tests.unit.test_ledger_vectors import _steps

USER = "default"


def filled(path: Path, size: int) -> SqliteLedger:
    ledger = SqliteLedger(path)
    ledger.put([record(f"note {n}", USER, session=f"old{n % 7}") for n in range(size)])
    return ledger


def test_the_write_caps_count_costs_the_sessions_rows_not_the_store(tmp_path: Path) -> None:
    costs = []
    for size in (50, 3000):
        ledger = filled(tmp_path / f"ledger-{size}.sqlite3", size)
        ledger.put([record(f"turn {n}", USER, session="chat") for n in range(3)])
        assert ledger.count(USER, "chat", since=0.0) == 3
        costs.append(_steps(ledger, ledger.count, USER, "chat", 0.0))
        ledger.close()
    assert costs[1] <= costs[0] + 2, f"VM steps (hundreds) at 50 and 3,000 memories: {costs}"


def test_a_file_made_before_the_index_gets_it_at_its_next_open_and_counts_the_same(tmp_path: Path) -> None:
    path = tmp_path / "ledger.sqlite3"
    filled(path, 20).close()
    raw = sqlite3.connect(path)
    raw.execute("DROP INDEX memories_session")
    raw.commit()
    raw.close()
    ledger = SqliteLedger(path)
    names = {row[0] for row in ledger._read("SELECT name FROM sqlite_master WHERE type = 'index'")}  # noqa: SLF001
    assert "memories_session" in names
    assert ledger.count(USER, "old3", since=0.0) == 3
    ledger.close()


def test_a_memory_put_with_its_turns_change_keeps_the_count_without_reading_every_row(tmp_path: Path) -> None:
    ledger = filled(tmp_path / "ledger.sqlite3", 40)
    assert ledger.count(USER) == 40
    seen: list[str] = []
    ledger._db.set_trace_callback(seen.append)  # noqa: SLF001  (the statements the file is sent)
    new, again = record("a new turn", USER, session="chat"), record("note 3", USER, session="chat")
    ledger.put([new, again], Change("chat", 1, "h", (new.id,), ()))
    assert ledger.count(USER) == 41
    ledger._db.set_trace_callback(None)  # noqa: SLF001
    assert not [s for s in seen if s == f"SELECT count(*) FROM memories WHERE user = '{USER}'"]
    other = SqliteLedger(tmp_path / "ledger.sqlite3")
    assert other.count(USER) == 41 and len(ledger.changes(USER)) == 1
    other.close()
    ledger.close()


def test_links_supersedes_facts_and_restatements_keep_the_count(tmp_path: Path) -> None:
    """None of them adds or removes a memory: the write after a ``remember`` that replaced a fact read count(*) over
    every row again (2.8 ms at 100,000 memories)."""
    ledger = filled(tmp_path / "ledger.sqlite3", 40)
    assert ledger.count(USER) == 40
    old, new = record("note 1", USER), record("note 2", USER)
    seen: list[str] = []
    ledger._db.set_trace_callback(seen.append)  # noqa: SLF001  (the statements the file is sent)
    ledger.set_links(USER, {old.id: Links(new.id, 1.0, ())})
    ledger.supersede(USER, [old.id], "", 0.0)
    ledger.set_facts(USER, old.id, (StatedFact("home", "Porto"),))
    ledger.restate(USER, new.id, Quote("note 2", "s", 2, 2.0))
    assert ledger.count(USER) == 40
    ledger._db.set_trace_callback(None)  # noqa: SLF001
    assert not [s for s in seen if s == f"SELECT count(*) FROM memories WHERE user = '{USER}'"]
    ledger.close()
