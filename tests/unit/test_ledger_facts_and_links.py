"""Ledger format 3: profile facts, supersede links and restatements per memory; a format 2 file migrates in place
in one transaction, and forget leaves no byte of a restated quote behind."""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from agent.adapters import ledger as ledger_module
from agent.adapters.ledger import SCHEMA_VERSION, SqliteLedger
from agent.domain import Quote, StatedFact, content_hash, memory_id
from tests.builders import USER, record

# The format 2 schema as agent wrote it (agent/adapters/ledger.py before format 3).
V2_SCHEMA = """
CREATE TABLE memories (
    rowid INTEGER PRIMARY KEY, user TEXT NOT NULL, id TEXT NOT NULL, text TEXT NOT NULL, kind TEXT NOT NULL,
    session TEXT NOT NULL, turn INTEGER NOT NULL, created_at REAL NOT NULL, last_seen REAL NOT NULL,
    content_hash TEXT NOT NULL, source TEXT NOT NULL, extra TEXT NOT NULL DEFAULT '{}',
    search_context TEXT NOT NULL DEFAULT '', UNIQUE (user, id)
);
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE vectors (rowid INTEGER PRIMARY KEY, user TEXT NOT NULL, id TEXT NOT NULL, vector BLOB NOT NULL,
    UNIQUE (user, id));
CREATE INDEX memories_seen ON memories (user, last_seen);
CREATE VIRTUAL TABLE memories_fts USING fts5(
    text, search_context, content='memories', content_rowid='rowid', tokenize='porter unicode61'
);
CREATE TRIGGER memories_ai AFTER INSERT ON memories BEGIN
    INSERT INTO memories_fts (rowid, text, search_context) VALUES (new.rowid, new.text, new.search_context);
END;
CREATE TRIGGER memories_ad AFTER DELETE ON memories BEGIN
    INSERT INTO memories_fts (memories_fts, rowid, text, search_context)
        VALUES ('delete', old.rowid, old.text, old.search_context);
END;
CREATE TRIGGER memories_au AFTER UPDATE OF text, search_context ON memories BEGIN
    INSERT INTO memories_fts (memories_fts, rowid, text, search_context)
        VALUES ('delete', old.rowid, old.text, old.search_context);
    INSERT INTO memories_fts (rowid, text, search_context) VALUES (new.rowid, new.text, new.search_context);
END;
INSERT INTO memories_fts (memories_fts, rank) VALUES ('rank', 'bm25(2.0, 1.0)');
"""
LATER = 4_000_000_000.0
TEXTS = ["I live in Boston", "I walk the dog every morning", "My sister plays the violin"]


def write_v2(path: Path) -> None:
    with closing(sqlite3.connect(path)) as db:
        db.executescript(V2_SCHEMA)
        db.execute("PRAGMA user_version = 2")
        for n, text in enumerate(TEXTS):
            db.execute(
                "INSERT INTO memories (id, text, kind, user, session, turn, created_at, last_seen, content_hash, "
                "source, extra) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                (memory_id(USER, text), text, "turn", USER, "s", n, 100.0 + n, 100.0 + n, content_hash(text), text,
                 json.dumps({"dia_id": f"D1:{n}"})),
            )
        db.commit()


def test_a_format_2_ledger_is_migrated_in_place_and_every_memory_is_current(tmp_path: Path) -> None:
    path = tmp_path / "ledger.sqlite3"
    write_v2(path)
    ledger = SqliteLedger(path)
    records = ledger.all(USER)
    assert [r.text for r in records] == TEXTS
    assert all(r.current and r.facts == () and r.restated == () for r in records)
    assert list(dict(ledger.keyword_search(USER, "violin", 5))) == [records[2].id]
    ledger.close()
    with closing(sqlite3.connect(path)) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_a_format_2_migration_that_fails_leaves_the_file_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "ledger.sqlite3"
    write_v2(path)
    before = path.read_bytes()

    def fails() -> str:
        raise RuntimeError("killed in the middle")

    monkeypatch.setattr(ledger_module, "rank_config", fails)
    with pytest.raises(RuntimeError, match="killed"):
        SqliteLedger(path)
    assert path.read_bytes() == before
    monkeypatch.undo()
    ledger = SqliteLedger(path)
    assert len(ledger.all(USER)) == len(TEXTS)
    ledger.close()


def test_facts_links_and_restatements_round_trip(tmp_path: Path) -> None:
    ledger = SqliteLedger(tmp_path / "ledger.sqlite3")
    boston = record("I live in Boston", facts=(StatedFact("home", "Boston"),))
    berlin = record("I moved to Berlin", facts=(StatedFact("home", "Berlin"),))
    dog = record("I walk the dog every morning")
    ledger.put([boston, berlin, dog])
    ledger.supersede(USER, [boston.id], berlin.id, 500.0)
    ledger.restate(USER, dog.id, Quote("Every morning I take the pup out", "s2", 4, LATER))
    got = ledger.get(USER, [boston.id, dog.id])
    assert (got[boston.id].superseded_by, got[boston.id].superseded_at) == (berlin.id, 500.0)
    assert got[dog.id].restated == (Quote("Every morning I take the pup out", "s2", 4, LATER),)
    assert got[dog.id].last_seen == LATER
    assert [r.id for r in ledger.profiled(USER)] == [boston.id, berlin.id]
    assert [r.id for r in ledger.recent(USER, 5)] == [dog.id, berlin.id]  # the superseded one is not current
    assert dog.id in dict(ledger.keyword_search(USER, "pup", 5))  # a restatement's words find its memory
    ledger.supersede(USER, [boston.id], "", 0.0)
    assert ledger.get(USER, [boston.id])[boston.id].current
    ledger.close()


def test_forget_leaves_no_byte_of_a_restated_quote(tmp_path: Path) -> None:
    path = tmp_path / "ledger.sqlite3"
    ledger = SqliteLedger(path)
    dog = record("I walk the dog every morning")
    ledger.put([dog, record("I live in Boston")])
    ledger.restate(USER, dog.id, Quote("Qx81canary walks my pup", "s2", 4, 600.0))
    log = path.with_name(f"{path.name}-wal")  # the latest writes are in the write-ahead log until a checkpoint
    assert b"Qx81canary" in path.read_bytes() + log.read_bytes()
    ledger.delete(USER, [dog.id])
    assert log.stat().st_size == 0, "the delete emptied the log"
    ledger.close()
    assert b"Qx81canary" not in path.read_bytes() and b"canary" not in path.read_bytes()


def test_the_profile_memories_are_read_again_after_another_process_writes(tmp_path: Path) -> None:
    path = tmp_path / "ledger.sqlite3"
    mine, other = SqliteLedger(path), SqliteLedger(path)  # two connections: what two processes see
    mine.put([record("I live in Boston", facts=(StatedFact("home", "Boston"),))])
    assert [r.text for r in mine.profiled(USER)] == ["I live in Boston"]
    other.put([record("I moved to Berlin", facts=(StatedFact("home", "Berlin"),))])
    assert [r.text for r in mine.profiled(USER)] == ["I live in Boston", "I moved to Berlin"]
    berlin = mine.profiled(USER)[1]
    other.supersede(USER, [berlin.id], "x", 1.0)
    assert not mine.profiled(USER)[1].current
    mine.delete(USER, [berlin.id])
    assert [r.text for r in other.profiled(USER)] == ["I live in Boston"]
    mine.close()
    other.close()
