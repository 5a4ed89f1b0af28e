"""The ledger's file format: the keyword index's two columns (text and context, the text weighted higher), and the
in-place migration of a format 1 file, which indexed both in one column."""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from agent.adapters import ledger as ledger_module
from agent.adapters.ledger import SCHEMA_VERSION, SqliteLedger, rank_config
from agent.domain import MemoryRecord, memory_id
from tests import builders

USER = "u"

# The format 1 schema, as agent wrote it (agent/adapters/ledger.py before format 2): one FTS5 column, search_text,
# holding the text, a newline and the context.
V1_SCHEMA = """
CREATE TABLE IF NOT EXISTS memories (
    rowid INTEGER PRIMARY KEY,
    user TEXT NOT NULL,
    id TEXT NOT NULL,
    text TEXT NOT NULL,
    kind TEXT NOT NULL,
    session TEXT NOT NULL,
    turn INTEGER NOT NULL,
    created_at REAL NOT NULL,
    last_seen REAL NOT NULL,
    content_hash TEXT NOT NULL,
    source TEXT NOT NULL,
    extra TEXT NOT NULL DEFAULT '{}',
    search_text TEXT NOT NULL,
    UNIQUE (user, id)
);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS vectors (
    rowid INTEGER PRIMARY KEY,
    user TEXT NOT NULL,
    id TEXT NOT NULL,
    vector BLOB NOT NULL,
    UNIQUE (user, id)
);
CREATE INDEX IF NOT EXISTS memories_seen ON memories (user, last_seen);
CREATE VIRTUAL TABLE IF NOT EXISTS memories_fts USING fts5(
    search_text, content='memories', content_rowid='rowid', tokenize='porter unicode61'
);
CREATE TRIGGER IF NOT EXISTS memories_ai AFTER INSERT ON memories BEGIN
    INSERT INTO memories_fts (rowid, search_text) VALUES (new.rowid, new.search_text);
END;
CREATE TRIGGER IF NOT EXISTS memories_ad AFTER DELETE ON memories BEGIN
    INSERT INTO memories_fts (memories_fts, rowid, search_text) VALUES ('delete', old.rowid, old.search_text);
END;
CREATE TRIGGER IF NOT EXISTS memories_au AFTER UPDATE OF search_text ON memories BEGIN
    INSERT INTO memories_fts (memories_fts, rowid, search_text) VALUES ('delete', old.rowid, old.search_text);
    INSERT INTO memories_fts (rowid, search_text) VALUES (new.rowid, new.search_text);
END;
"""

# Same length, same words: only which column "dog" is in tells them apart.
IN_TEXT = ("I walk the dog", "Speaker: how was your day today")
IN_CONTEXT = ("I walk every day", "Speaker: how is the dog today")
FILLER = [(f"I water the plants on floor {n}", f"Speaker: what happened to the {thing}")
          for n, thing in enumerate(["piano", "violin", "kettle drum", "garden", "lamp", "sofa", "rug", "clock"])]
CANARY_TEXT = ("My locker code is Zq81xlocker", "Speaker: what is your Qv55wombat code")


def record(text: str, context: str = "", user: str = USER, turn: int = 0) -> MemoryRecord:
    extra: dict[str, object] = {"dia_id": f"D1:{turn}"}
    if context:
        extra["context"] = context
    return builders.record(text, user, turn=turn, extra=extra)


def write_v1(path: Path, records: list[MemoryRecord]) -> None:
    """A format 1 ledger holding ``records``, a vector and the store id, written as agent wrote it then."""
    db = sqlite3.connect(path)
    db.executescript(V1_SCHEMA)
    db.execute("PRAGMA user_version = 1")
    db.executemany(
        """INSERT INTO memories (id, text, kind, user, session, turn, created_at, last_seen, content_hash, source,
           extra, search_text) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)""",
        [(r.id, r.text, r.kind, r.user, r.session, r.turn, r.created_at, r.last_seen, r.content_hash, r.source,
          json.dumps(r.extra), f"{r.text}\n{r.extra['context']}" if r.extra.get("context") else r.text)
         for r in records],
    )
    db.execute("INSERT INTO vectors (user, id, vector) VALUES (?, ?, ?)", (USER, records[0].id, b"\x00\x00\x80\x3f"))
    db.execute("INSERT INTO meta (key, value) VALUES ('store_id', 'abc123')")
    db.commit()
    db.close()


def sample() -> list[MemoryRecord]:
    pairs = [IN_TEXT, IN_CONTEXT, *FILLER, CANARY_TEXT, ("No context here about the kettle", "")]
    return [record(text, context, turn=n) for n, (text, context) in enumerate(pairs)]


def scores(ledger: SqliteLedger, query: str, k: int = 10) -> dict[str, float]:
    return dict(ledger.keyword_search(USER, query, k))


def file_format(path: Path) -> tuple[int, set[str]]:
    with closing(sqlite3.connect(path)) as db:
        version = int(db.execute("PRAGMA user_version").fetchone()[0])
        columns = {row[1] for row in db.execute("PRAGMA table_info(memories)")}
    return version, columns


def test_the_text_weighs_more_than_its_context() -> None:
    assert ledger_module.TEXT_WEIGHT > 1.0
    assert rank_config() == f"bm25({ledger_module.TEXT_WEIGHT!r}, 1.0)"


def test_a_memory_whose_text_matches_ranks_above_one_whose_context_matches(tmp_path: Path) -> None:
    ledger = SqliteLedger(tmp_path / "ledger.sqlite3")
    ledger.put(sample())
    found = scores(ledger, "the dog")
    text_hit, context_hit = memory_id(USER, IN_TEXT[0]), memory_id(USER, IN_CONTEXT[0])
    assert list(found)[:2] == [text_hit, context_hit]
    assert found[text_hit] > found[context_hit] > 0
    ledger.close()


def test_the_exact_query_for_a_crowded_index_ranks_with_the_same_weights(tmp_path: Path) -> None:
    ledger = SqliteLedger(tmp_path / "ledger.sqlite3")
    ledger.put(sample())
    fast = scores(ledger, "dog", 2)
    # Other users' rows fill the first cut, so the exact query over the user's rows answers.
    ledger.put([record(f"dog dog {n}", user="crowd", turn=n) for n in range(40)])
    exact = scores(ledger, "dog", 2)
    text_hit, context_hit = memory_id(USER, IN_TEXT[0]), memory_id(USER, IN_CONTEXT[0])
    assert list(fast) == list(exact) == [text_hit, context_hit]
    assert exact[text_hit] > exact[context_hit]
    ledger.close()


def test_a_new_ledger_is_the_latest_format_with_two_indexed_columns(tmp_path: Path) -> None:
    path = tmp_path / "ledger.sqlite3"
    SqliteLedger(path).close()
    version, columns = file_format(path)
    assert version == SCHEMA_VERSION == 4
    assert "search_context" in columns and "search_text" not in columns
    with closing(sqlite3.connect(path)) as db:
        assert db.execute("SELECT v FROM memories_fts_config WHERE k = 'rank'").fetchone()[0] == rank_config()


def test_a_format_1_ledger_is_migrated_in_place_losing_nothing(tmp_path: Path) -> None:
    path = tmp_path / "ledger.sqlite3"
    records = sample()
    write_v1(path, records)

    ledger = SqliteLedger(path)
    assert {r.id: r for r in ledger.all(USER)} == {r.id: r for r in records}
    assert ledger.stored_vectors(USER, [records[0].id]) == {records[0].id: [1.0]}
    assert ledger.store_id() == "abc123"
    assert list(scores(ledger, "kettle")) == [records[-1].id, records[4].id]  # a word of the text, then of a context
    assert list(scores(ledger, "violin")) == [records[3].id]  # a word of the context only
    found = scores(ledger, "the dog")
    text_hit, context_hit = memory_id(USER, IN_TEXT[0]), memory_id(USER, IN_CONTEXT[0])
    assert list(found)[:2] == [text_hit, context_hit] and found[text_hit] > found[context_hit]
    ledger.close()

    version, columns = file_format(path)
    assert version == SCHEMA_VERSION and "search_context" in columns and "search_text" not in columns
    with closing(sqlite3.connect(path)) as db:
        contexts = dict(db.execute("SELECT id, search_context FROM memories").fetchall())
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        db.execute("INSERT INTO memories_fts (memories_fts, rank) VALUES ('integrity-check', 1)")  # raises if not
    assert contexts == {r.id: r.extra.get("context", "") for r in records}

    again = SqliteLedger(path)  # a second open changes nothing
    assert {r.id: r for r in again.all(USER)} == {r.id: r for r in records}
    assert list(scores(again, "the dog"))[:2] == [text_hit, context_hit]
    again.put([record("A new dog arrived", "Speaker: any news", turn=99)])
    assert memory_id(USER, "A new dog arrived") in scores(again, "dog")
    again.close()


def test_a_migration_that_fails_leaves_the_format_1_file_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "ledger.sqlite3"
    records = sample()
    write_v1(path, records)
    before = path.read_bytes()

    def fails() -> str:
        raise RuntimeError("killed in the middle")

    monkeypatch.setattr(ledger_module, "rank_config", fails)  # the migration's last step but one
    with pytest.raises(RuntimeError, match="killed"):
        SqliteLedger(path)
    assert path.read_bytes() == before
    assert not path.with_name(path.name + "-journal").exists()

    monkeypatch.undo()
    ledger = SqliteLedger(path)
    assert len(ledger.all(USER)) == len(records)
    assert file_format(path)[0] == SCHEMA_VERSION
    ledger.close()


def test_a_changed_weight_is_written_to_the_index_at_the_next_open(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "ledger.sqlite3"
    monkeypatch.setattr(ledger_module, "TEXT_WEIGHT", 1.0)
    SqliteLedger(path).close()
    monkeypatch.undo()
    ledger = SqliteLedger(path)
    ledger.put(sample())
    found = scores(ledger, "the dog")
    assert found[memory_id(USER, IN_TEXT[0])] > found[memory_id(USER, IN_CONTEXT[0])]
    ledger.close()


@pytest.mark.parametrize("migrated", [True, False], ids=["migrated", "new"])
def test_forgetting_a_memory_leaves_no_byte_of_its_text_or_context(tmp_path: Path, migrated: bool) -> None:
    (tmp_path / "data").mkdir()
    path = tmp_path / "data" / "ledger.sqlite3"
    records = sample()
    needles = (b"zq81x", b"qv55wombat")
    if migrated:
        write_v1(path, records)
        assert all(n in path.read_bytes().lower() for n in needles)
    ledger = SqliteLedger(path)
    if not migrated:
        ledger.put(records)
    canary = memory_id(USER, CANARY_TEXT[0])
    assert list(scores(ledger, "Qv55wombat")) == [canary] and list(scores(ledger, "Zq81xlocker")) == [canary]
    assert ledger.delete(USER, [canary]) == 1
    ledger.close()
    leftovers = [f"{p.name}: {n!r}" for p in path.parent.iterdir() for n in needles if n in p.read_bytes().lower()]
    assert leftovers == []


def test_a_format_3_ledger_gains_the_vector_log_and_reads_its_changes_from_then_on(tmp_path: Path) -> None:
    path = tmp_path / "ledger.sqlite3"
    ledger = SqliteLedger(path)
    ledger.put(sample())
    ledger.put_vectors(USER, [r.id for r in sample()], [[1.0, 0.0]] * len(sample()))
    ledger.close()
    with closing(sqlite3.connect(path)) as db:  # the file as format 3 left it: no log, no triggers
        db.executescript("DROP TRIGGER vectors_ai; DROP TRIGGER vectors_ad; DROP TABLE vector_log; "
                         "PRAGMA user_version = 3;")
    ledger = SqliteLedger(path)
    assert file_format(path)[0] == SCHEMA_VERSION == 4
    first = ledger.vector_changes(USER, None)
    assert first.whole and sorted(first.ids) == sorted(r.id for r in sample())
    ledger.put_vectors(USER, ["new"], [[0.0, 1.0]])
    later = ledger.vector_changes(USER, first.mark)
    assert not later.whole and later.ids == ["new"]
    assert len(ledger.all(USER)) == len(sample())
    ledger.close()
