"""The memory ledger: one SQLite file that is the source of truth for memory text and metadata.

Every memory is written here before its vector reaches Chroma, so a lost or damaged Chroma directory is rebuilt
from this file (``agent memories rebuild``). It also holds the keyword index (FTS5, Porter stemming) that the
hybrid retriever fuses with the dense ranking; Chroma's local mode has no keyword index. The index has two
columns, the memory's text and the context it was written with, and BM25 weighs a match in the text higher.

The file's format is its ``user_version``: a format 1 file (one indexed column) or 2 (no profile facts, supersede
links or restatements) is migrated in place when opened, in one transaction; a newer format than this code reads
is refused. Format 3 keeps, per memory, the profile facts it states, the memory that superseded it and when, and
the quotes that restated it; a partial index holds the few memories that state profile facts, so the profile is
read on every turn without a scan. Format 4 adds ``vector_log``, the ids of the vector copies as they change (a
trigger writes it), from which a view of the ledger catches up with what changed instead of reading every id.

Forget means gone: ``secure_delete`` zeroes freed pages, the FTS index is merged after a delete so no segment
keeps the deleted terms, and after a delete the write-ahead log is checkpointed into the file and truncated
(``_erase``), so neither the log nor the file keeps the old pages. A forget the user asks for is also recorded here,
in the same transaction that deletes the memories (``record_forget``): the texts still to be erased from the session
files and the history stay in the ``forgets`` table until ``agent.forget`` has scrubbed them everywhere, so a kill in
the middle is finished by the next start; dropping the record zeroes it like any deleted row, and is refused (the
record stays) while the log cannot be emptied. The table is created by the first forget: older versions ignore it.
So is ``forgotten``, where each forget leaves for good a keyed digest of its texts (``forgotten_digest``), by which
a turn that waited in the spool while the forget was made is never written back (``agent.spool``).

Several processes share the file (chats in several terminals, ``agent memories ...`` beside them), so it runs in
WAL mode: a reader never waits for a writer nor a writer for a reader, and writers, whom SQLite serialises, hold
their transaction for the few statements of one write (milliseconds). A writer that finds another's transaction
waits for it at most ``BUSY_WAIT`` seconds, then fails with one line and writes nothing; what it was writing stays
with its caller (the command's argument, the chat's turn).

It also keeps a float32 copy of every memory's vector: Chroma's HNSW files are torn by a kill in the middle of
their persistence (measured with chromadb 1.5.9), and this copy rebuilds the index in seconds without embedding
anything again. Forget deletes the copy with the memory.

This class never repairs, replaces or deletes the file: a damaged one, a lock held too long and a newer format each
raise their own error naming the path, and the caller moves a damaged file aside.
"""

from __future__ import annotations

import json
import os
import secrets
import sqlite3
import threading
import uuid
from array import array
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import replace
from pathlib import Path
from typing import Any

from agent.adapters import disk
from agent.adapters.sql_codec import (
    TEXT_WEIGHT,
    change_from_row,
    change_json,
    facts_json,
    floats,
    forgotten_digest,
    quotes_json,
    row_to_record,
    search_context,
    unlinked,
    unstated,
)
from agent.domain import (
    CHANGES_KEPT,
    Change,
    ForgetRecord,
    Links,
    Machine,
    MemoryRecord,
    Quote,
    StatedFact,
    VectorChanges,
    VectorSpace,
)
from agent.errors import MemoryUnavailable, StoreCorrupt, StoreLocked
from agent.memory.text import content_words

SCHEMA_VERSION = 4
BUSY_WAIT = 2.0  # the longest any agent process waits for another's write transaction
# Opening waits longer, once: two agents started together on a new or older file take turns to create or migrate it
# and switch it to WAL, each step a transaction of its own, and a loaded machine can pause the first one past 2 s.
OPEN_WAIT = 30.0
# keyword_search sorts this many index rows per wanted hit before it filters by user.
KEYWORD_OVERFETCH = 4
# keyword_search counts a word's matches up to this many; a word matching more is a common one (``_bounded_match``).
COMMON_WORD = 1000
# How many changes of vector copies ``vector_log`` keeps: a view of the ledger further behind compares every id once.
VECTOR_LOG_KEPT = 10_000
_COLUMNS = (
    "id, text, kind, user, session, turn, created_at, last_seen, content_hash, source, extra, facts, "
    "superseded_by, superseded_at, restated"
)
# The columns format 3 added, as ``ALTER TABLE`` adds them to an older file.
_FORMAT_3_COLUMNS = (
    "facts TEXT NOT NULL DEFAULT '[]'",
    "superseded_by TEXT NOT NULL DEFAULT ''",
    "superseded_at REAL NOT NULL DEFAULT 0",
    "restated TEXT NOT NULL DEFAULT '[]'",
)

# Format 3. Statement by statement: ``executescript`` would commit the transaction a migration runs in.
# A kept chat turn counts its session's memories of the last day (the write cap): without this the count walked every
# memory of the user (1.0 ms at 10,000, ten times that at 100,000; 0.003 ms with it). Not part of a format: a file of
# any format gets it at its next open (``_add_indexes``), and an older version reads the file as before.
_SESSION_INDEX = "CREATE INDEX IF NOT EXISTS memories_session ON memories (user, session, created_at)"

_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS memories (
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
        search_context TEXT NOT NULL DEFAULT '',
        facts TEXT NOT NULL DEFAULT '[]',
        superseded_by TEXT NOT NULL DEFAULT '',
        superseded_at REAL NOT NULL DEFAULT 0,
        restated TEXT NOT NULL DEFAULT '[]',
        UNIQUE (user, id)
    )""",
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    """CREATE TABLE IF NOT EXISTS vectors (
        rowid INTEGER PRIMARY KEY,
        user TEXT NOT NULL,
        id TEXT NOT NULL,
        vector BLOB NOT NULL,
        UNIQUE (user, id)
    )""",
    # Format 4: the id of each vector copy written or deleted, in the order it was (``vector_changes``), so a view of
    # the ledger reads what changed since it last looked, not every id. The newest ``VECTOR_LOG_KEPT`` are kept.
    # A forget leaves none of its ids here (``record_forget``): they derive from the text.
    """CREATE TABLE IF NOT EXISTS vector_log (
        seq INTEGER PRIMARY KEY AUTOINCREMENT, user TEXT NOT NULL, id TEXT NOT NULL
    )""",
    "CREATE INDEX IF NOT EXISTS vector_log_id ON vector_log (user, id)",
    """CREATE TRIGGER IF NOT EXISTS vectors_ai AFTER INSERT ON vectors BEGIN
        INSERT INTO vector_log (user, id) VALUES (new.user, new.id);
    END""",
    """CREATE TRIGGER IF NOT EXISTS vectors_ad AFTER DELETE ON vectors BEGIN
        INSERT INTO vector_log (user, id) VALUES (old.user, old.id);
    END""",
    "CREATE INDEX IF NOT EXISTS memories_seen ON memories (user, last_seen)",
    "CREATE INDEX IF NOT EXISTS memories_profile ON memories (user) WHERE facts != '[]'",
    _SESSION_INDEX,
    # External content: the index keeps terms, not text, and reads its columns from ``memories`` by name.
    """CREATE VIRTUAL TABLE IF NOT EXISTS memories_fts USING fts5(
        text, search_context, content='memories', content_rowid='rowid', tokenize='porter unicode61'
    )""",
    """CREATE TRIGGER IF NOT EXISTS memories_ai AFTER INSERT ON memories BEGIN
        INSERT INTO memories_fts (rowid, text, search_context) VALUES (new.rowid, new.text, new.search_context);
    END""",
    """CREATE TRIGGER IF NOT EXISTS memories_ad AFTER DELETE ON memories BEGIN
        INSERT INTO memories_fts (memories_fts, rowid, text, search_context)
            VALUES ('delete', old.rowid, old.text, old.search_context);
    END""",
    """CREATE TRIGGER IF NOT EXISTS memories_au AFTER UPDATE OF text, search_context ON memories BEGIN
        INSERT INTO memories_fts (memories_fts, rowid, text, search_context)
            VALUES ('delete', old.rowid, old.text, old.search_context);
        INSERT INTO memories_fts (rowid, text, search_context) VALUES (new.rowid, new.text, new.search_context);
    END""",
)

# Forgets under way (``record_forget``): made by the first forget, in its transaction, so no format change.
_FORGETS = """CREATE TABLE IF NOT EXISTS forgets (
    key INTEGER PRIMARY KEY, user TEXT NOT NULL, ids TEXT NOT NULL, texts TEXT NOT NULL
)"""
# What every forget leaves for good (``forgotten_digest``): made by the first forget too.
_FORGOTTEN = """CREATE TABLE IF NOT EXISTS forgotten (
    user TEXT NOT NULL, digest TEXT NOT NULL, mark INTEGER NOT NULL, PRIMARY KEY (user, digest)
)"""

# What each turn's write did, for ``/undo`` (``put`` and ``restate`` given a change): made by the first write that
# keeps one, so no format change either. The body is the change as JSON (``change_json``): memory ids and their links,
# no memory text but the quote a restatement added, which is the restated memory's own.
_CHANGES = (
    """CREATE TABLE IF NOT EXISTS turn_changes (
        key INTEGER PRIMARY KEY, user TEXT NOT NULL, session TEXT NOT NULL, turn INTEGER NOT NULL,
        said TEXT NOT NULL, body TEXT NOT NULL
    )""",
    "CREATE INDEX IF NOT EXISTS turn_changes_user ON turn_changes (user)",
)

# Format 1 indexed one column, ``search_text`` (text + "\n" + context). Its index, triggers and column go; the
# rows stay, their context is read again from ``extra`` and the index is built anew, all in one transaction.
_FROM_FORMAT_1 = (
    "DROP TRIGGER IF EXISTS memories_ai",
    "DROP TRIGGER IF EXISTS memories_ad",
    "DROP TRIGGER IF EXISTS memories_au",
    "DROP TABLE IF EXISTS memories_fts",
    "ALTER TABLE memories ADD COLUMN search_context TEXT NOT NULL DEFAULT ''",
)


def rank_config() -> str:
    """FTS5's persistent ``rank``: every ``ORDER BY rank`` query ranks with these column weights."""
    return f"bm25({float(TEXT_WEIGHT)!r}, 1.0)"


def _classify(path: Path, exc: sqlite3.DatabaseError, doing: str = "opened") -> MemoryUnavailable:
    """The agent's error for a SQLite failure: a lock held too long, a full disk, damage, or anything else (no
    permission), each with the ledger's path."""
    text = str(exc)
    then = "Nothing was saved: free some space, then try again." if doing == "written" else disk.AT_OPEN
    full = disk.full(exc, path.parent, f"The memory ledger {path} could not be {doing}", then)
    if full is not None:
        return full
    if "locked" in text or "busy" in text:
        return StoreLocked(
            f"The memory ledger {path} stayed locked by another process for over "
            f"{OPEN_WAIT if doing == 'opened' else BUSY_WAIT:g} s"
            f"{', so nothing was written' if doing == 'written' else ''}: try again (if it lasts, end that "
            f"process: see `fuser {path}`)."
        )
    if type(exc) is sqlite3.DatabaseError or "malformed" in text or "not a database" in text:
        return StoreCorrupt(f"The memory ledger {path} is damaged ({text}).", path=path)
    return MemoryUnavailable(f"The memory ledger {path} could not be {doing} ({text}).")


def _delete(db: sqlite3.Connection, user: str, ids: Sequence[str]) -> int:
    deleted = sum(db.execute("DELETE FROM memories WHERE user = ? AND id = ?", (user, i)).rowcount for i in ids)
    db.executemany("DELETE FROM vectors WHERE user = ? AND id = ?", [(user, i) for i in ids])
    db.execute("INSERT INTO memories_fts (memories_fts) VALUES ('optimize')")
    _trim_log(db)
    return deleted


def _trim_log(db: sqlite3.Connection) -> None:
    """Keep the newest ``VECTOR_LOG_KEPT`` changes of ``vector_log``, in the transaction that made more."""
    db.execute("DELETE FROM vector_log WHERE seq <= (SELECT max(seq) FROM vector_log) - ?", (VECTOR_LOG_KEPT,))


def _unlog(db: sqlite3.Connection, user: str, ids: Sequence[str]) -> None:
    """Take a forget's ids out of ``vector_log`` and leave in their place a change without an id, which tells every
    view of the ledger that a forget took ids it cannot name (``vector_changes``: ``forgot``): an id is a digest of
    its memory's text."""
    db.executemany("DELETE FROM vector_log WHERE user = ? AND id = ?", [(user, i) for i in ids])
    db.execute("INSERT INTO vector_log (user, id) VALUES (?, '')", (user,))


class SqliteLedger:
    """``Ledger`` on a SQLite file (mode 0600), safe to share between threads and processes."""

    def __init__(self, path: Path, check: bool = True) -> None:
        """Open ``path``, creating it if absent. An existing file is checked whole (``quick_check``, every page:
        0.3 s at 100,000 memories) unless ``check`` is False: a look at a few rows (a start's unfinished forgets)
        does not pay that, and damage is reported by the memory's own open, which checks it."""
        self.path = path
        self._lock = threading.RLock()
        # Commits of this connection: with SQLite's data_version (commits of any other), the ledger's change mark.
        self._writes = 0
        # The profile memories are read on every turn: kept until the change mark moves.
        self._profiled: dict[str, tuple[tuple[int, int], list[MemoryRecord]]] = {}
        # Each user's number of memories at a change mark: a write asks it twice (room, eviction), and count(*)
        # reads every row of the user (2.7 ms at 10,000, 15 at 100,000). This connection's own writes that know
        # what they did to it carry it forward (``_tx``); any other commit makes it read again.
        self._counts: dict[str, tuple[tuple[int, int], int]] = {}
        # ``together``: whether one is open on this connection, whether its transaction began, and what waits for
        # its commit.
        self._together = False
        self._begun = False
        self._version = 0  # SQLite's data_version when that transaction began
        self._after: list[Callable[[], None]] = []
        fresh = not path.exists()
        try:
            if fresh:
                try:
                    os.close(os.open(path, os.O_CREAT | os.O_WRONLY | os.O_EXCL | os.O_NOFOLLOW, 0o600))
                except FileExistsError:
                    if os.path.islink(path):  # a link planted there is never followed
                        raise
                    fresh = False  # another agent process, starting at the same moment, created it first
            self._db = sqlite3.connect(path, timeout=OPEN_WAIT, check_same_thread=False, isolation_level=None)
        except OSError as exc:
            what = f"The memory ledger {path} cannot be created"
            raise disk.full(exc, path.parent, what) or MemoryUnavailable(f"{what} ({exc.strerror}).") from exc
        except sqlite3.DatabaseError as exc:
            raise _classify(path, exc) from exc
        try:
            self._db.row_factory = sqlite3.Row
            self._db.execute("PRAGMA secure_delete = ON")
            self._db.execute("PRAGMA synchronous = FULL")
            if not fresh and check:
                checked = self._db.execute("PRAGMA quick_check").fetchone()[0]
                if checked != "ok":
                    raise sqlite3.DatabaseError(checked)
            if self._format() != SCHEMA_VERSION or self._rank() != rank_config():
                with self._tx() as db:
                    self._prepare(db)
            # After a migration, which leaves a file it fails on as it was; persistent, a no-op once the file has it.
            self._db.execute("PRAGMA journal_mode = WAL")
            self._db.execute(f"PRAGMA busy_timeout = {int(BUSY_WAIT * 1000)}")  # from here on, every write's wait
            if check:
                self._add_indexes()
        except BaseException as exc:
            self._db.close()
            if isinstance(exc, sqlite3.DatabaseError):
                raise _classify(path, exc) from exc
            raise

    def _add_indexes(self) -> None:
        """The indexes that came after the file's format (``_SESSION_INDEX``), made once: a file that has them reads
        one row of the schema at each open. A file this process may not write now (read-only, full, held too long by
        another writer) opens without it: its writes report that, and a later open makes it."""
        if self._db.execute("SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = 'memories_session'"
                            ).fetchone() is None:
            with suppress(MemoryUnavailable), self._tx() as db:
                db.execute(_SESSION_INDEX)

    def _format(self) -> int:
        """The file's format (``user_version``); a newer one than this code reads is refused, never downgraded."""
        written_by = int(self._db.execute("PRAGMA user_version").fetchone()[0])
        if written_by > SCHEMA_VERSION:
            raise MemoryUnavailable(
                f"The memory ledger {self.path} was written by a newer version of agent (format {written_by}, this "
                f"one reads {SCHEMA_VERSION}): upgrade agent to use it."
            )
        return written_by

    def _rank(self) -> str | None:
        row = self._db.execute("SELECT v FROM memories_fts_config WHERE k = 'rank'").fetchone()
        return None if row is None else str(row[0])

    def _prepare(self, db: sqlite3.Connection) -> None:
        """Create the tables, or migrate a format 1 file in place, and set the index's column weights: in one
        transaction, checked again inside it, since another process may have done it meanwhile."""
        self._format()
        columns = {row[1] for row in db.execute("PRAGMA table_info(memories)")}
        migrate = "search_text" in columns
        if columns and "facts" not in columns:  # format 1 or 2: the rows stay as they are, current, with no facts
            for column in _FORMAT_3_COLUMNS:
                db.execute(f"ALTER TABLE memories ADD COLUMN {column}")
        if migrate:
            for statement in _FROM_FORMAT_1:
                db.execute(statement)
            rows = db.execute("SELECT rowid, extra FROM memories").fetchall()
            contexts = ((str(context), rowid) for rowid, extra in rows if (context := json.loads(extra).get("context")))
            db.executemany("UPDATE memories SET search_context = ? WHERE rowid = ?", contexts)
            # Zeroed by secure_delete like every freed byte: the text and context stay in their own columns.
            db.execute("ALTER TABLE memories DROP COLUMN search_text")
        for statement in _SCHEMA:
            db.execute(statement)
        if migrate:
            db.execute("INSERT INTO memories_fts (memories_fts) VALUES ('rebuild')")
        db.execute("INSERT INTO memories_fts (memories_fts, rank) VALUES ('rank', ?)", (rank_config(),))
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")

    def store_id(self) -> str:
        """A random id of this ledger, made once: it keeps its collections apart from others' on a shared server."""
        with self._tx() as db:
            row = db.execute("SELECT value FROM meta WHERE key = 'store_id'").fetchone()
            if row is not None:
                return str(row[0])
            made = uuid.uuid4().hex
            db.execute("INSERT INTO meta (key, value) VALUES ('store_id', ?)", (made,))
            return made

    @contextmanager
    def _tx(self, counts: dict[str, int] | None = None) -> Iterator[sqlite3.Connection]:
        """One write transaction. On a failure the error that caused it is the one reported: SQLite rolls back by
        itself after some (a full disk), and the ROLLBACK that followed used to replace the cause with "cannot
        rollback - no transaction is active".

        ``counts``, when given, is how the transaction changes users' numbers of memories (a user it does not name:
        unchanged), filled in by the caller before the transaction ends: a count kept from just before it then
        holds after it. Without it every kept count is dropped. A write that adds or removes no memory (a sighting,
        a link, a restatement) gives it empty: the write after a supersede read count(*) over every row again
        otherwise (2.8 ms of a ``remember`` at 100,000 memories).

        Inside ``together`` it is a step of that one transaction (a savepoint: a step that fails is undone alone),
        which this connection reads as done when the step ends (its change mark moves, its counts follow)."""
        with self._lock:
            if self._together:
                with self._step(counts) as db:
                    yield db
                return
            try:
                self._db.execute("BEGIN IMMEDIATE")
                try:
                    # Read inside the transaction: no other connection commits between this and our commit.
                    before = (int(self._db.execute("PRAGMA data_version").fetchone()[0]), self._writes)
                    yield self._db
                    self._db.execute("COMMIT")
                    self._done(before, counts)
                except BaseException:
                    if self._db.in_transaction:
                        with suppress(sqlite3.Error):
                            self._db.execute("ROLLBACK")
                    raise
            except sqlite3.DatabaseError as exc:
                raise _classify(self.path, exc, "written") from exc

    def _done(self, before: tuple[int, int], counts: dict[str, int] | None) -> None:
        """A transaction (or a step of ``together``) ended: the change mark moves, and the kept counts follow
        ``counts`` (see ``_tx``)."""
        self._writes += 1
        kept, self._counts = self._counts, {}
        if counts is not None:
            self._counts = {user: ((before[0], self._writes), n + counts.get(user, 0))
                            for user, (mark, n) in kept.items() if mark == before}

    @contextmanager
    def _step(self, counts: dict[str, int] | None) -> Iterator[sqlite3.Connection]:
        """One step of ``together``'s transaction, which the first step begins."""
        try:
            if not self._begun:
                self._db.execute("BEGIN IMMEDIATE")
                self._begun = True
                # No other connection commits until ours does: read once, it holds for every step.
                self._version = int(self._db.execute("PRAGMA data_version").fetchone()[0])
            self._db.execute("SAVEPOINT step")
            before = (self._version, self._writes)
            try:
                yield self._db
                self._db.execute("RELEASE step")
            except BaseException:
                if self._db.in_transaction:
                    with suppress(sqlite3.Error):
                        self._db.execute("ROLLBACK TO step")
                        self._db.execute("RELEASE step")
                raise
            self._done(before, counts)
        except sqlite3.DatabaseError as exc:
            raise _classify(self.path, exc, "written") from exc

    @contextmanager
    def together(self) -> Iterator[None]:
        """The writes made inside (each its own transaction otherwise) in one transaction, committed, durable, when
        the block ends: one commit where a ``remember`` made three (the sightings, the memory, its vector copy),
        each an fsync of the log. The block ends the way the writes would have one by one: one that completed is
        committed even when a later one, or the caller's code between them, raises; one that failed is undone alone.
        What is to follow the commit (``after_commit``) runs then. It holds this connection (and the file's write
        lock from the first write on): for the few statements of one write, never around an embedding. Nested, it
        is the outer one's."""
        with self._lock:
            if self._together:
                yield
                return
            self._together, self._begun, after = True, False, self._after
            try:
                yield
            finally:
                begun, self._together, self._begun, self._after = self._begun, False, False, []
                if begun and self._db.in_transaction:
                    try:
                        self._db.execute("COMMIT")
                    except sqlite3.DatabaseError as exc:
                        with suppress(sqlite3.Error):
                            self._db.execute("ROLLBACK")
                        self._writes += 1
                        self._counts = {}
                        raise _classify(self.path, exc, "written") from exc
                elif begun:  # SQLite undid the whole transaction itself (a full disk): what it held is gone
                    self._writes += 1
                    self._counts = {}
        for then in after:
            then()

    def after_commit(self, then: Callable[[], None]) -> None:
        """Run ``then`` once what this connection wrote is committed: now, or at the end of ``together`` (a vector
        reaches Chroma after its copy is in the ledger, so the index never holds what the ledger does not)."""
        with self._lock:
            if self._together:
                self._after.append(then)
                return
        then()

    def _erase(self) -> bool:
        """Checkpoint the write-ahead log into the file and truncate it, so the pages a delete zeroed replace the
        old ones in the file and no copy of those stays in the log; whether it was done. It waits (``BUSY_WAIT``)
        for the readers still using the log, which read for milliseconds; one that reads longer leaves it to the
        next delete or to the last connection's close, which checkpoints and removes the log."""
        with self._lock:
            try:
                busy = int(self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0])
            except sqlite3.DatabaseError as exc:
                raise _classify(self.path, exc, "written") from exc
            return busy == 0

    def change_mark(self) -> tuple[int, int]:
        """A value that differs after any transaction committed to the file since it was last read, by another
        process (SQLite's ``data_version``, one cheap read) or through this connection (counted here): whoever
        keeps a view of the ledger (``ledger_vectors``, ``index_holder``) compares it before
        each search and refreshes only when it moved."""
        with self._lock:
            try:
                version = int(self._db.execute("PRAGMA data_version").fetchone()[0])
            except sqlite3.DatabaseError as exc:
                raise _classify(self.path, exc, "read") from exc
            return version, self._writes

    def _read(self, sql: str, params: Sequence[Any] = ()) -> list[sqlite3.Row]:
        with self._lock:
            try:
                return list(self._db.execute(sql, params))
            except sqlite3.DatabaseError as exc:
                raise _classify(self.path, exc, "read") from exc

    def put(self, records: Sequence[MemoryRecord], change: Change | None = None) -> None:
        """Insert new memories; an existing (user, id) keeps its created_at and gets the newer last_seen. A
        ``change`` is kept in the same transaction (``_keep``)."""
        if not records:
            return
        counts: dict[str, int] = {}  # a change kept beside them (``_keep``) adds no memory
        with self._tx(counts) as db:
            if change is not None:
                self._keep(db, records[0].user, change)
            counts.update(self._new_rows(db, records))
            db.executemany(
                f"""INSERT INTO memories ({_COLUMNS}, search_context) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)
                ON CONFLICT (user, id) DO UPDATE SET last_seen = max(last_seen, excluded.last_seen)""",
                [
                    (r.id, r.text, r.kind, r.user, r.session, r.turn, r.created_at, r.last_seen,
                     r.content_hash, r.source, json.dumps(r.extra, ensure_ascii=False),
                     facts_json(r.facts), r.superseded_by, r.superseded_at,
                     quotes_json(r.restated), search_context(r))
                    for r in records
                ],
            )

    def _new_rows(self, db: sqlite3.Connection, records: Sequence[MemoryRecord]) -> dict[str, int]:
        """How many of ``records`` each of their users does not hold yet, for the users whose count is kept."""
        new: dict[str, int] = {}
        for user in {r.user for r in records} & self._counts.keys():
            ids = list({r.id for r in records if r.user == user})
            held = 0
            for start in range(0, len(ids), 500):
                chunk = ids[start : start + 500]
                held += int(db.execute(f"SELECT count(*) FROM memories WHERE user = ? AND id IN "
                                       f"({','.join('?' * len(chunk))})", [user, *chunk]).fetchone()[0])
            new[user] = len(ids) - held
        return new

    def get(self, user: str, ids: Sequence[str]) -> dict[str, MemoryRecord]:
        found: dict[str, MemoryRecord] = {}
        for start in range(0, len(ids), 500):
            chunk = list(ids[start : start + 500])
            marks = ",".join("?" * len(chunk))
            rows = self._read(f"SELECT {_COLUMNS} FROM memories WHERE user = ? AND id IN ({marks})", [user, *chunk])
            found.update((row["id"], row_to_record(row)) for row in rows)
        return found

    def all(self, user: str) -> list[MemoryRecord]:
        rows = self._read(f"SELECT {_COLUMNS} FROM memories WHERE user = ? ORDER BY created_at, rowid", [user])
        return [row_to_record(row) for row in rows]

    def pages(self, user: str, size: int) -> Iterator[list[MemoryRecord]]:
        keys = [row[0] for row in self._read("SELECT rowid FROM memories WHERE user = ? ORDER BY created_at, rowid",
                                             [user])]
        for start in range(0, len(keys), size):
            page = keys[start : start + size]
            found: dict[int, MemoryRecord] = {}
            for at in range(0, len(page), 500):
                chunk = page[at : at + 500]
                rows = self._read(f"SELECT rowid, {_COLUMNS} FROM memories WHERE user = ? AND rowid IN "
                                  f"({','.join('?' * len(chunk))})", [user, *chunk])
                found.update((row["rowid"], row_to_record(row)) for row in rows)
            yield [found[key] for key in page if key in found]

    def ids(self, user: str) -> list[str]:
        return [row[0] for row in self._read("SELECT id FROM memories WHERE user = ?", [user])]

    def count(self, user: str, session: str | None = None, since: float = float("-inf"), current: bool = False
              ) -> int:
        if session is None and not current:
            with self._lock:
                mark, kept = self.change_mark(), self._counts.get(user)
                if kept is not None and kept[0] == mark:
                    return kept[1]
                n = int(self._read("SELECT count(*) FROM memories WHERE user = ?", [user])[0][0])
                self._counts[user] = (mark, n)
                return n
        if session is None:
            return int(self._read("SELECT count(*) FROM memories WHERE user = ? AND superseded_by = ''",
                                  [user])[0][0])
        sql = ("SELECT count(*) FROM memories WHERE user = ? AND session = ? AND kind != 'explicit' "
               "AND created_at >= ?")
        return int(self._read(sql, [user, session, since])[0][0])

    def touch(self, user: str, ids: Sequence[str], when: float) -> None:
        if not ids:
            return
        with self._tx(counts={}) as db:
            db.executemany(
                "UPDATE memories SET last_seen = max(last_seen, ?) WHERE user = ? AND id = ?",
                [(when, user, i) for i in ids],
            )

    def profiled(self, user: str) -> list[MemoryRecord]:
        """The memories that state profile facts, current and superseded, oldest first (the partial index), read
        again only after a write."""
        with self._lock:
            stamp = self.change_mark()
            cached = self._profiled.get(user)
            if cached is not None and cached[0] == stamp:
                return list(cached[1])
        rows = self._read(
            f"SELECT {_COLUMNS} FROM memories INDEXED BY memories_profile WHERE user = ? AND facts != '[]' "
            "ORDER BY created_at, rowid",
            [user],
        )
        records = [row_to_record(row) for row in rows]
        with self._lock:
            self._profiled[user] = (stamp, records)
        return list(records)

    def recent(self, user: str, n: int) -> list[MemoryRecord]:
        """The ``n`` current memories seen last (said, restated or recalled), newest first."""
        rows = self._read(
            f"SELECT {_COLUMNS} FROM memories WHERE user = ? AND superseded_by = '' ORDER BY last_seen DESC, "
            "rowid DESC LIMIT ?",
            [user, n],
        )
        return [row_to_record(row) for row in rows]

    def supersede(self, user: str, ids: Sequence[str], by: str, when: float) -> None:
        """Mark ``ids`` replaced by memory ``by`` at ``when``; an empty ``by`` makes them current again."""
        if not ids:
            return
        with self._tx(counts={}) as db:
            db.executemany(
                "UPDATE memories SET superseded_by = ?, superseded_at = ? WHERE user = ? AND id = ?",
                [(by, when if by else 0.0, user, i) for i in ids],
            )

    def set_facts(self, user: str, memory: str, facts: Sequence[StatedFact]) -> None:
        """Rewrite the profile facts of ``memory`` (a value of it replaced by a later memory)."""
        with self._tx(counts={}) as db:
            db.execute("UPDATE memories SET facts = ? WHERE user = ? AND id = ?", (facts_json(facts), user, memory))

    def restate(self, user: str, memory: str, quote: Quote, change: Change | None = None) -> None:
        """Add ``quote`` to the provenance of ``memory`` and to its keyword context; its ``last_seen`` moves on. A
        ``change`` is kept in the same transaction (``_keep``)."""
        with self._tx(counts={}) as db:
            if change is not None:
                self._keep(db, user, change)
            row = db.execute(
                f"SELECT {_COLUMNS} FROM memories WHERE user = ? AND id = ?", (user, memory)
            ).fetchone()
            if row is None:
                return
            record = row_to_record(row)
            restated = (*record.restated, quote)
            db.execute(
                "UPDATE memories SET restated = ?, search_context = ?, last_seen = max(last_seen, ?) "
                "WHERE user = ? AND id = ?",
                (quotes_json(restated), search_context(replace(record, restated=restated)), quote.at, user, memory),
            )

    def replaced_by(self, user: str, ids: Sequence[str]) -> list[MemoryRecord]:
        """The memories superseded by one of ``ids``."""
        found: list[MemoryRecord] = []
        for start in range(0, len(ids), 500):
            chunk = list(ids[start : start + 500])
            marks = ",".join("?" * len(chunk))
            rows = self._read(f"SELECT {_COLUMNS} FROM memories WHERE user = ? AND superseded_by IN ({marks})",
                              [user, *chunk])
            found += [row_to_record(row) for row in rows]
        return found

    def set_links(self, user: str, links: Mapping[str, Links]) -> None:
        """Rewrite the supersede link and the profile facts of each memory of ``links``, in one transaction."""
        if not links:
            return
        with self._tx(counts={}) as db:
            db.executemany(
                "UPDATE memories SET superseded_by = ?, superseded_at = ?, facts = ? WHERE user = ? AND id = ?",
                [(link.superseded_by, link.superseded_at if link.superseded_by else 0.0, facts_json(link.facts),
                  user, memory) for memory, link in links.items()],
            )

    def unstate(self, user: str, memory: str, quote: Quote) -> None:
        """Take ``quote`` out of the provenance of ``memory`` and out of its keyword context: zeroed like a delete."""
        with self._tx() as db:
            row = db.execute(f"SELECT {_COLUMNS} FROM memories WHERE user = ? AND id = ?", (user, memory)).fetchone()
            if row is None:
                return
            left = unstated(row_to_record(row), quote)
            if left is None:
                return
            db.execute("UPDATE memories SET restated = ?, search_context = ? WHERE user = ? AND id = ?",
                       (quotes_json(left.restated), search_context(left), user, memory))
            db.execute("INSERT INTO memories_fts (memories_fts) VALUES ('optimize')")
        self._erase()

    # -- what each turn's write did, for /undo -----------------------------------------------------------------

    @staticmethod
    def _keep(db: sqlite3.Connection, user: str, change: Change) -> None:
        """Keep ``change``, and only the ``CHANGES_KEPT`` newest of ``user``'s."""
        for statement in _CHANGES:
            db.execute(statement)
        db.execute("INSERT INTO turn_changes (user, session, turn, said, body) VALUES (?, ?, ?, ?, ?)",
                   (user, change.session, change.turn, change.said, change_json(change)))
        db.execute("DELETE FROM turn_changes WHERE user = ? AND key NOT IN "
                   "(SELECT key FROM turn_changes WHERE user = ? ORDER BY key DESC LIMIT ?)",
                   (user, user, CHANGES_KEPT))

    def changes(self, user: str) -> list[Change]:
        if not self._read("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'turn_changes'"):
            return []
        rows = self._read("SELECT key, session, turn, said, body FROM turn_changes WHERE user = ? ORDER BY key",
                          [user])
        return [change_from_row(*row) for row in rows]

    def drop_changes(self, user: str, keys: Sequence[int]) -> None:
        """Delete changes, leaving no byte of them (they name memories being forgotten)."""
        if not keys:
            return
        with self._tx() as db:
            for statement in _CHANGES:
                db.execute(statement)
            db.executemany("DELETE FROM turn_changes WHERE user = ? AND key = ?", [(user, key) for key in keys])
        self._erase()

    def delete(self, user: str, ids: Sequence[str]) -> int:
        """Delete memories and leave no byte of their text in the file: zeroed pages, FTS segments merged."""
        if not ids:
            return 0
        with self._tx() as db:
            deleted = _delete(db, user, ids)
        self._erase()
        return deleted

    # -- forgets under way: the texts still to be erased elsewhere, until they are ---------------------------

    def record_forget(self, user: str, ids: Sequence[str], texts: Sequence[str]) -> tuple[int, int]:
        """Delete memories as ``delete`` does and, in the same transaction, record the forget (``ids`` and the
        ``texts`` to erase from the other files); returns the record's key and how many memories existed."""
        with self._tx() as db:
            db.execute(_FORGETS)
            key = db.execute("INSERT INTO forgets (user, ids, texts) VALUES (?, ?, ?)",
                             (user, json.dumps(list(ids)), json.dumps(list(texts), ensure_ascii=False))).lastrowid
            assert key is not None
            self._keep_forgotten(db, user, texts)
            self._unlink(db, user, ids)
            deleted = _delete(db, user, ids)
            _unlog(db, user, ids)
        self._erase()
        return key, deleted

    def _keep_forgotten(self, db: sqlite3.Connection, user: str, texts: Sequence[str]) -> None:
        """Count this forget (``forget_mark``) and keep a digest of each of its texts under that count."""
        db.execute(_FORGOTTEN)
        row = db.execute("SELECT value FROM meta WHERE key = 'forget_mark'").fetchone()
        mark = (0 if row is None else int(row[0])) + 1
        db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('forget_mark', ?)", (str(mark),))
        db.execute("INSERT OR IGNORE INTO meta (key, value) VALUES ('forget_key', ?)", (secrets.token_hex(32),))
        secret = bytes.fromhex(str(db.execute("SELECT value FROM meta WHERE key = 'forget_key'").fetchone()[0]))
        db.executemany("INSERT OR REPLACE INTO forgotten (user, digest, mark) VALUES (?, ?, ?)",
                       [(user, digest, mark) for digest in {forgotten_digest(secret, t) for t in texts if t.strip()}])

    @staticmethod
    def _unlink(db: sqlite3.Connection, user: str, ids: Sequence[str]) -> None:
        """No memory keeps a forgotten one's id (derived from its text) as the one that superseded it, or one of its
        facts: those are current again, as they were before it (``agent.memory.truth``)."""
        gone = set(ids)
        for start in range(0, len(ids), 500):
            chunk = list(ids[start : start + 500])
            marks = ",".join("?" * len(chunk))
            db.execute(f"UPDATE memories SET superseded_by = '', superseded_at = 0 WHERE user = ? "
                       f"AND superseded_by IN ({marks})", [user, *chunk])
        rows = db.execute("SELECT id, facts FROM memories INDEXED BY memories_profile WHERE user = ? AND facts != '[]'",
                          (user,)).fetchall()
        db.executemany("UPDATE memories SET facts = ? WHERE user = ? AND id = ?",
                       [(facts, user, row[0]) for row in rows if (facts := unlinked(row[1], gone)) is not None])

    def forget_mark(self) -> int:
        """How many forgets this ledger has recorded, ever: a count that only grows."""
        rows = self._read("SELECT value FROM meta WHERE key = 'forget_mark'")
        return int(rows[0][0]) if rows else 0

    def forgotten_since(self, user: str, texts: Sequence[str], mark: int) -> list[str]:
        """Those of ``texts`` that a forget of ``user``'s recorded after the ``mark``-th one names (its memory's text,
        the words it came from, a restatement), by their digest (``forgotten_digest``)."""
        if not texts or not self._read("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'forgotten'"):
            return []
        rows = self._read("SELECT value FROM meta WHERE key = 'forget_key'")
        if not rows:
            return []
        key = bytes.fromhex(str(rows[0][0]))
        wanted = {text: forgotten_digest(key, text) for text in texts}
        marks = ",".join("?" * len(wanted))
        found = {row[0] for row in self._read(
            f"SELECT digest FROM forgotten WHERE user = ? AND mark > ? AND digest IN ({marks})",
            [user, mark, *wanted.values()])}
        return [text for text, digest in wanted.items() if digest in found]

    def pending_forgets(self, machine: str | None = None) -> list[ForgetRecord]:
        """Every recorded forget not yet dropped, of every user, oldest first: this file is one machine's own, so
        each is this machine's to finish, whichever ``machine`` asks."""
        if not self._read("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'forgets'"):
            return []
        rows = self._read("SELECT key, user, ids, texts FROM forgets ORDER BY key")
        return [ForgetRecord(int(row[0]), str(row[1]), tuple(json.loads(row[2])), tuple(json.loads(row[3])))
                for row in rows]

    def acknowledge_forget(self, key: int, machine: str) -> None:
        """The forget ``key`` is done (on the one machine there is): its record goes, zeroed like every deleted
        row. Refused (``StoreLocked``, the record stays for the next start) while the log still holds pages of what
        was forgotten: another process kept reading the ledger for over ``BUSY_WAIT`` seconds."""
        if not self._erase():
            raise StoreLocked(f"The memory ledger {self.path} is being read by another process, so its write-ahead "
                              "log still holds what was forgotten: the next start of agent erases it.")
        with self._tx() as db:
            db.execute(_FORGETS)
            db.execute("DELETE FROM forgets WHERE key = ?", (key,))
        self._erase()

    # -- machines: this file is in one data directory, so it has one, which no forget needs to wait for --------

    def register_machine(self, machine: str, user: str, name: str) -> None:
        """Nothing to record: every process on this file is on this machine."""

    def machines(self, user: str) -> list[Machine]:
        return []

    def retire_machine(self, user: str, machine: str) -> bool:
        return False

    def set_contexts(self, user: str, contexts: Mapping[str, str]) -> None:
        """Replace the keyword context of memories (``extra['context']`` and its indexed column) in place: their
        text, dates and vectors stay; the old context's bytes are zeroed and the FTS segments merged."""
        if not contexts:
            return
        with self._tx() as db:
            for memory_id, context in contexts.items():
                row = db.execute("SELECT extra FROM memories WHERE user = ? AND id = ?", (user, memory_id)).fetchone()
                if row is None:
                    continue
                extra = {**json.loads(row[0]), "context": context}
                db.execute("UPDATE memories SET extra = ?, search_context = ? WHERE user = ? AND id = ?",
                           (json.dumps(extra, ensure_ascii=False), context, user, memory_id))
            db.execute("INSERT INTO memories_fts (memories_fts) VALUES ('optimize')")
        self._erase()

    # -- the copy of each vector, from which a damaged index is rebuilt without embedding again --------------

    def vector_space(self, user: str) -> VectorSpace | None:
        """(embedder, model, dimension) of ``user``'s stored vectors, or None before the first."""
        rows = self._read("SELECT value FROM meta WHERE key = ?", [f"space:{user}"])
        if not rows:
            return None
        name, model, dimension = json.loads(rows[0][0])
        return VectorSpace(str(name), str(model), int(dimension))

    def claim_vectors(self, user: str, space: VectorSpace) -> None:
        """Record the space of ``user``'s vectors; switching to another space drops the vectors of the old one."""
        with self._tx() as db:
            row = db.execute("SELECT value FROM meta WHERE key = ?", (f"space:{user}",)).fetchone()
            if row is not None and tuple(json.loads(row[0])) == tuple(space):
                return
            db.execute("DELETE FROM vectors WHERE user = ?", (user,))
            _trim_log(db)
            db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (f"space:{user}", json.dumps(space)))

    def put_vectors(self, user: str, ids: Sequence[str], vectors: Sequence[Sequence[float]]) -> None:
        """Keep a float32 copy of each vector; a rewritten vector moves to the end of the ``latest_vectors`` order."""
        if not ids:
            return
        with self._tx(counts={}) as db:
            db.executemany(
                "INSERT OR REPLACE INTO vectors (user, id, vector) VALUES (?, ?, ?)",
                [(user, i, array("f", v).tobytes()) for i, v in zip(ids, vectors, strict=True)],
            )
            _trim_log(db)

    def drop_vectors(self, user: str) -> None:
        """Drop every copy of ``user``'s vectors (their memories stay): the ledger-only index's ``reset``."""
        with self._tx() as db:
            db.execute("DELETE FROM vectors WHERE user = ?", (user,))
            _trim_log(db)

    def vector_changes(self, user: str, since: tuple[int, int] | None, listing: bool = True) -> VectorChanges:
        """The ids of ``user``'s vector copies written or deleted since ``since`` (a mark this returned before), from
        ``vector_log`` in one statement, so one snapshot: what a turn costs after a write is what was written. A
        forget's ids left the log, and the change without an id it left in their place is told as ``forgot``. Every
        id instead (``whole``) without a mark, and when the log no longer reaches back to the mark (trimmed past it,
        or another file); without ``listing`` that answer carries the mark alone (a caller comparing in pages).

        Planned so that it reads the changes since the mark, not the whole log: ``min`` and ``max`` in separate
        subqueries (together in one they scan every row), and the rows walked by ``seq`` (``+l.user`` keeps SQLite
        off the ``(user, id)`` index, through which it read all of the user's rows to keep those past the mark).
        Measured on a full log of 10,000 changes: 10.8 ms a call before, 0.02 ms after, on every turn after a
        write."""
        if since is not None:
            rows = self._read(
                """SELECT b.lo, b.hi, l.id
                   FROM (SELECT (SELECT min(seq) FROM vector_log) AS lo, (SELECT max(seq) FROM vector_log) AS hi) AS b
                   LEFT JOIN vector_log AS l ON l.seq > ? AND +l.user = ? ORDER BY l.seq""",
                [since[1], user],
            )
            low, high = rows[0][0], rows[0][1] or 0
            ids = list(dict.fromkeys(str(row[2]) for row in rows if row[2] is not None))
            if high >= since[1] and (low is None or low <= since[1] + 1):
                return VectorChanges((0, high), [mid for mid in ids if mid], False, "" in ids)
        high = int(self._read("SELECT coalesce(max(seq), 0) FROM vector_log")[0][0])
        return VectorChanges((0, high), self.vector_ids(user) if listing else [], True)

    def id_page(self, user: str, after: str, size: int) -> list[tuple[str, bool]]:
        """At most ``size`` of ``user``'s memory ids past ``after`` in id order, each with whether it has a vector
        copy: one walk of the ``(user, id)`` index, however large the store."""
        rows = self._read("""SELECT m.id, EXISTS (SELECT 1 FROM vectors AS v WHERE v.user = m.user AND v.id = m.id)
                             FROM memories AS m WHERE m.user = ? AND m.id > ? ORDER BY m.id LIMIT ?""",
                          [user, after, size])
        return [(str(row[0]), bool(row[1])) for row in rows]

    def vector_rowids(self, user: str) -> list[int]:
        """The row numbers of ``user``'s vector copies: a rewritten vector gets a new one, so comparing two lists
        tells what was added, replaced and deleted without reading a vector."""
        return [int(row[0]) for row in self._read("SELECT rowid FROM vectors WHERE user = ?", [user])]

    def vector_rows(self, user: str, rowids: Sequence[int]) -> list[tuple[int, str, bytes]]:
        """(row number, memory id, float32 bytes) of ``user``'s vector copies at ``rowids`` that still exist."""
        found: list[tuple[int, str, bytes]] = []
        for start in range(0, len(rowids), 500):
            chunk = list(rowids[start : start + 500])
            marks = ",".join("?" * len(chunk))
            rows = self._read(f"SELECT rowid, id, vector FROM vectors WHERE user = ? AND rowid IN ({marks})",
                              [user, *chunk])
            found.extend((int(row[0]), str(row[1]), bytes(row[2])) for row in rows)
        return found

    def vector_ids(self, user: str) -> list[str]:
        return [row[0] for row in self._read("SELECT id FROM vectors WHERE user = ?", [user])]

    def stored_vectors(self, user: str, ids: Sequence[str]) -> dict[str, list[float]]:
        found: dict[str, list[float]] = {}
        for start in range(0, len(ids), 500):
            chunk = list(ids[start : start + 500])
            marks = ",".join("?" * len(chunk))
            rows = self._read(f"SELECT id, vector FROM vectors WHERE user = ? AND id IN ({marks})", [user, *chunk])
            found.update((row[0], floats(row[1])) for row in rows)
        return found

    def latest_vectors(self, user: str, n: int) -> list[tuple[str, list[float]]]:
        """The ``n`` vectors written last: a kill in the middle of an index write tears those first. Read newest
        first by row number (``+user`` keeps SQLite off the ``(user, id)`` index, through which it sorted every row
        of the user: 90 ms of each open at 100,000 memories, now 0.1)."""
        rows = self._read("SELECT id, vector FROM vectors WHERE +user = ? ORDER BY rowid DESC LIMIT ?", [user, n])
        return [(row[0], floats(row[1])) for row in rows]

    def oldest(self, user: str, n: int) -> list[str]:
        rows = self._read("SELECT id FROM memories WHERE user = ? ORDER BY last_seen, rowid LIMIT ?", [user, n])
        return [row[0] for row in rows]

    def keyword_search(self, user: str, query: str, k: int) -> list[tuple[str, float]]:
        """BM25 over the user's memories for the query's content words (any of them); higher score is better. Both
        queries order by the index's ``rank``, which carries the column weights (``rank_config``).

        The best matches of the whole index are taken first and then kept if they are the user's: sorting only
        index rows, without a join per match, halves the time at 100,000 memories (14 -> 8 ms). When other users'
        rows crowd the user's out of that first cut, the exact query over the user's rows answers instead.

        Bounded as on PostgreSQL (``_bounded_match``): FTS5 scores every row a query matches before it sorts, and
        a word in thousands of memories made that most of a turn at 100,000 (issue 22)."""
        terms = sorted(set(content_words(query)))
        if not terms or k <= 0:
            return []
        cut = min(KEYWORD_OVERFETCH * k, 10_000)  # well under SQLite's limit of bound parameters
        queries = self._bounded_match(terms, k)
        ranks: dict[int, float] = {}  # FTS5's rank is minus the score: a row two queries rank keeps the better
        crowded = False
        for match, floor in queries:
            best = self._read("SELECT rowid, rank FROM memories_fts WHERE memories_fts MATCH ? AND rowid >= ? "
                              "ORDER BY rank LIMIT ?", [match, floor, cut])
            crowded = crowded or len(best) == cut
            for rowid, rank in best:
                ranks[rowid] = min(float(rank), ranks.get(rowid, 0.0))
        marks = ",".join("?" * len(ranks))
        # By rowid alone: with "user = ?" in the query SQLite walks the user's index instead of 4k rowids.
        rows = self._read(f"SELECT rowid, id, user FROM memories WHERE rowid IN ({marks})", list(ranks))
        mine = [row for row in rows if row[2] == user]
        if len(mine) >= k or not crowded:
            return sorted(((row[1], -ranks[row[0]]) for row in mine), key=lambda hit: -hit[1])[:k]
        found: dict[str, float] = {}
        for match, floor in queries:
            for row in self._read(
                """SELECT m.id, memories_fts.rank FROM memories_fts
                   JOIN memories m ON m.rowid = memories_fts.rowid
                   WHERE memories_fts MATCH ? AND memories_fts.rowid >= ? AND m.user = ?
                   ORDER BY memories_fts.rank LIMIT ?""",
                [match, floor, user, k],
            ):
                found[row[0]] = max(-float(row[1]), found.get(row[0], 0.0))
        return sorted(found.items(), key=lambda hit: -hit[1])[:k]

    def _bounded_match(self, terms: Sequence[str], k: int) -> list[tuple[str, int]]:
        """The FTS5 queries of ``terms``, each with the lowest row it ranks from, so that together they rank at
        most about ``COMMON_WORD`` rows a word. Each word's matches are counted up to ``COMMON_WORD`` (a read of its
        index entries, 0.1 ms): the rare words are one query, over every row; when they match fewer than ``k``
        rows, every word is another, ranked among the ``COMMON_WORD`` newest rows any of them matches. Unlike on
        PostgreSQL, a common word adds nothing to the score of a memory only the rare words' query found: FTS5
        scores a chosen set of rows no faster than all of them. A store of fewer than ``COMMON_WORD`` memories has
        no common word, and is ranked exactly as before."""
        quoted = {term: '"' + term.replace('"', '""') + '"' for term in terms}
        counted = {term: int(self._read(f"SELECT count(*) FROM (SELECT 1 FROM memories_fts WHERE memories_fts "
                                        f"MATCH ? LIMIT {COMMON_WORD})", [quoted[term]])[0][0]) for term in terms}
        rare = [term for term in terms if counted[term] < COMMON_WORD]
        queries = [(" OR ".join(quoted[term] for term in rare), 0)] if rare else []
        if len(rare) == len(terms) or sum(counted[term] for term in rare) >= k:
            return queries
        match = " OR ".join(quoted.values())
        rows = self._read(f"SELECT min(rowid) FROM (SELECT rowid FROM memories_fts WHERE memories_fts MATCH ? "
                          f"ORDER BY rowid DESC LIMIT {COMMON_WORD})", [match])
        return [*queries, (match, int(rows[0][0] or 0))]

    def close(self) -> None:
        with self._lock:
            self._db.close()
