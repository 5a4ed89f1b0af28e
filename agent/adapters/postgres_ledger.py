"""The memory ledger on a PostgreSQL server: ``SqliteLedger``'s contract for memory shared by several machines.

Why: the SQLite ledger is one file on one machine, so two machines pointed at one Chroma server could share ids and
vectors but never the text. On a server every machine (and every user of a small team) reads and writes one ledger:
text, metadata, provenance, history, profile facts, forget records, the vector copies and the keyword index.

Construct it with a libpq URL, ``PostgresLedger("postgresql://user:password@host:5432/dbname")``: it connects at
once (``connect_timeout`` seconds at most), creates or migrates the schema, and raises ``MemoryUnavailable`` with
one line naming the server (never the password) when it cannot. The database must exist; the role needs to create
tables in it (the first start) and to own them (``VACUUM FULL``).

- One user's rows are never visible to another: every statement on a user's rows carries ``owner = %s``
  (``owner``, not ``user``, which PostgreSQL reads as ``current_user`` when left unquoted). The statements that do
  not are the few that are about the ledger itself: its id, its change mark, its schema, and the forget records,
  which ``agent.forget`` finishes for every user (as with SQLite).
- Schema migrations are versioned in ``schema_version``: a newer database than this code knows is refused in one
  line; an older one is migrated forward in one transaction, under an advisory lock so that two agents starting
  together do not both migrate.
- The keyword index is PostgreSQL's full-text search ('english': Snowball stemming), a stored ``tsvector`` of the
  text (weight A) and the writer's context (weight B) under a GIN index, ranked by ``ts_rank`` with the text
  weighted ``TEXT_WEIGHT`` times the context, as the SQLite ledger's BM25 does, and each word by its BM25 IDF.
- The vector copies are float32 ``bytea``, searched by brute force in the agent (``agent.adapters.ledger_vectors``).
- The change mark is one counter row that every write transaction bumps first, so it moves exactly when something
  was committed, whoever committed it, and reading it is one primary-key lookup. Bumping it first also makes write
  transactions take their turn as SQLite's ``BEGIN IMMEDIATE`` does, so a read-modify-write (``restate``) never
  loses another one's change.

Forget on the server: the rows are deleted and then the tables are rewritten with ``VACUUM FULL`` (outside a
transaction), because PostgreSQL's delete only marks a row dead, and after a plain ``VACUUM`` the text was still
found in the database's files (``tests/test_pg_ledger.py`` reads them after the rewrite). A rewrite copies the table
and locks it meanwhile, so memories and vectors are split into PARTITIONS tables by a hash of the user: a forget
or an eviction rewrites the user's own partition, and blocks only the users who share it, for that moment. The
write-ahead log and backups are not rewritten. What the server may still hold, as the README says it:

    With the PostgreSQL ledger a forget deletes the memory's rows and rewrites their tables (VACUUM FULL), so no
    live table or index file of the database holds its text afterwards. The server's write-ahead log still does
    until those segments are overwritten: a checkpoint (every 5 minutes by default) recycles them, but a recycled
    segment keeps its bytes until later writes fill it again (min_wal_size, 80 MB by default, is kept for reuse),
    which on a quiet server may take long, and longer still when wal_keep_size, a replication slot or WAL
    archiving holds them. Base backups, WAL archives and replicas keep the text for as long as they are kept, and
    the disk blocks of the table files the rewrite replaced until the file system reuses them: erasing those is
    the database operator's job.

Errors: a server that refuses the connection, rejects the credentials, lacks the database, or goes away in the
middle of a statement is one ``MemoryUnavailable`` line saying what happened and what to do; the connection is then
dropped and the next call connects again, so memory heals when the server is back.
"""

from __future__ import annotations

import json
import threading
import uuid
from array import array
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import psycopg
from psycopg import conninfo, errors
from psycopg.rows import dict_row

from agent.adapters.ledger import TEXT_WEIGHT, facts_json, floats, quotes_json, row_to_record, search_context
from agent.domain import CONTEXT, ForgetRecord, MemoryRecord, Quote, StatedFact, VectorSpace
from agent.errors import ConfigError, MemoryUnavailable, StoreAway, StoreLocked
from agent.memory.text import content_words

if TYPE_CHECKING:
    from agent.ports import Ledger

LOCK_WAIT = 5.0  # seconds a statement waits for another transaction's lock, like the SQLite ledger's BUSY_WAIT
VACUUM_WAIT = 60.0  # VACUUM FULL waits for every reader of the table to finish
# A server that vanished from the network (no reset, no answer) is given up on after this long, in a statement as
# between them (with the keepalives of ``_connection``), instead of TCP's own retries of about 15 minutes.
TCP_TIMEOUT_MS = 30_000
MIGRATION_LOCK = 0x6167656E74  # pg_advisory_xact_lock key of the schema migration ("agent")

_RECORD = (
    "id, text, kind, owner AS user, session, turn, created_at, last_seen, content_hash, source, extra, facts, "
    "superseded_by, superseded_at, restated"
)

# The memories and vectors tables are split by a hash of the user into PARTITIONS tables each, so the rewrite after
# a forget or an eviction (``_vacuum``) copies and locks the user's own partition, not every user's rows.
PARTITIONS = 16


def _partitioned(table: str, columns: str) -> tuple[str, ...]:
    """A table split by ``owner`` into PARTITIONS partitions ``<table>_<n>``, its row numbers from a sequence (an
    identity column on a partitioned table needs PostgreSQL 17; a sequence works on every supported release)."""
    return (
        f"CREATE SEQUENCE {table}_rowid",
        f"""CREATE TABLE {table} (rowid bigint NOT NULL DEFAULT nextval('{table}_rowid'), {columns},
            PRIMARY KEY (owner, rowid), UNIQUE (owner, id)) PARTITION BY HASH (owner)""",
        f"ALTER SEQUENCE {table}_rowid OWNED BY {table}.rowid",
        *(f"CREATE TABLE {table}_{n} PARTITION OF {table} FOR VALUES WITH (MODULUS {PARTITIONS}, REMAINDER {n})"
          for n in range(PARTITIONS)),
    )


# Version 1. Each migration runs in the transaction that records it in schema_version.
_MIGRATIONS: tuple[tuple[int, tuple[str, ...]], ...] = (
    (1, (
        "CREATE TABLE ledger_meta (key text PRIMARY KEY, value text NOT NULL)",
        "CREATE TABLE changes (one boolean PRIMARY KEY DEFAULT true CHECK (one), mark bigint NOT NULL)",
        "INSERT INTO changes (mark) VALUES (0)",
        *_partitioned("memories", """owner text NOT NULL,
            id text NOT NULL,
            text text NOT NULL,
            kind text NOT NULL,
            session text NOT NULL,
            turn integer NOT NULL,
            created_at double precision NOT NULL,
            last_seen double precision NOT NULL,
            content_hash text NOT NULL,
            source text NOT NULL,
            extra text NOT NULL DEFAULT '{}',
            search_context text NOT NULL DEFAULT '',
            facts text NOT NULL DEFAULT '[]',
            superseded_by text NOT NULL DEFAULT '',
            superseded_at double precision NOT NULL DEFAULT 0,
            restated text NOT NULL DEFAULT '[]',
            search tsvector GENERATED ALWAYS AS (
                setweight(to_tsvector('english', text), 'A') || setweight(to_tsvector('english', search_context), 'B')
            ) STORED"""),
        "CREATE INDEX memories_seen ON memories (owner, last_seen)",
        "CREATE INDEX memories_profile ON memories (owner) WHERE facts <> '[]'",
        "CREATE INDEX memories_search ON memories USING gin (search)",
        *_partitioned("vectors", "owner text NOT NULL, id text NOT NULL, vector bytea NOT NULL"),
        """CREATE TABLE vector_spaces (
            owner text PRIMARY KEY, embedder text NOT NULL, model text NOT NULL, dimension integer NOT NULL
        )""",
        """CREATE TABLE forgets (
            key bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, owner text NOT NULL, ids text NOT NULL,
            texts text NOT NULL
        )""",
    )),
)
SCHEMA_VERSION = _MIGRATIONS[-1][0]
# ts_rank's weights are {D, C, B, A}: the text (A) counts TEXT_WEIGHT times the context (B).
_RANK_WEIGHTS = [0.0, 0.0, 1.0 / TEXT_WEIGHT, 1.0]


def where(url: str) -> str:
    """The server and database of ``url`` as the user's messages name them: never the password."""
    try:
        parts = conninfo.conninfo_to_dict(url)
    except psycopg.ProgrammingError as exc:
        raise ConfigError(f"The memory database URL cannot be read ({_first_line(exc)}): use "
                          "postgresql://user:password@host:port/dbname.") from exc
    host, port, dbname = parts.get("host") or "localhost", parts.get("port") or "5432", parts.get("dbname") or ""
    return f"{host}:{port}/{dbname}" if dbname else f"{host}:{port}"


def _first_line(exc: BaseException) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


class PostgresLedger:
    """``Ledger`` on a PostgreSQL database; one connection, shared by the threads of a process (a lock orders them).

    ``url`` is a libpq URL or conninfo string; ``connect_timeout`` bounds each connection attempt in seconds."""

    def __init__(self, url: str, *, connect_timeout: float = 10.0) -> None:
        self.url = url
        self.where = where(url)
        self._timeout = connect_timeout
        self._lock = threading.RLock()
        self._conn: psycopg.Connection[dict[str, Any]] | None = None
        # The profile memories are read on every turn: kept until the change mark moves.
        self._profiled: dict[str, tuple[tuple[int, int], list[MemoryRecord]]] = {}
        with self._lock:
            try:
                self._migrate(self._connection())
            except BaseException:
                self._drop()  # a schema this code cannot use: no connection left open behind the error
                raise

    # -- the connection, and every failure of it as one line -----------------------------------------------

    def _connection(self) -> psycopg.Connection[dict[str, Any]]:
        """The open connection, or a new one when there is none or the last one broke (the server went away)."""
        if self._conn is not None and not self._conn.closed and not self._conn.broken:
            return self._conn
        self._drop()
        try:
            self._conn = psycopg.connect(
                self.url, autocommit=True, row_factory=dict_row, connect_timeout=max(1, round(self._timeout)),
                application_name="agent", keepalives=1, keepalives_idle=10, keepalives_interval=5,
                keepalives_count=3, tcp_user_timeout=TCP_TIMEOUT_MS,
            )
            self._conn.execute(f"SET lock_timeout = '{int(LOCK_WAIT * 1000)}ms'")
        except psycopg.Error as exc:
            self._drop()
            raise self._at_connect(exc) from exc
        return self._conn

    def _drop(self) -> None:
        if self._conn is not None:
            try:
                self._conn.close()
            finally:
                self._conn = None

    def _at_connect(self, exc: psycopg.Error) -> MemoryUnavailable:
        text = str(exc)
        if "does not exist" in text and 'database "' in text:
            return MemoryUnavailable(f"The memory database {self.where} does not exist: create it (createdb), or "
                                     "point the database URL at one that does.")
        if "authentication failed" in text or "password" in text or ('role "' in text and "does not exist" in text):
            return StoreAway(f"The memory database {self.where} refused the user name or password: correct "
                             "them in the database URL.")
        if "Connection refused" in text:
            return StoreAway(f"The memory database {self.where} refused the connection: start PostgreSQL "
                             "there, or correct the host and port in the database URL.")
        if "timeout" in text:
            return StoreAway(f"The memory database {self.where} did not answer within {self._timeout:.0f} s: "
                             "check that the server is up and reachable.")
        return StoreAway(f"The memory database {self.where} cannot be reached ({_first_line(exc)}).")

    def _failed(self, exc: psycopg.Error, doing: str) -> MemoryUnavailable:
        """The agent's error for a failed statement; a broken connection is dropped, to be made anew next time."""
        if (self._conn is None or self._conn.broken or self._conn.closed or exc.sqlstate is None
                or isinstance(exc, errors.AdminShutdown | errors.CrashShutdown | errors.CannotConnectNow)):
            self._drop()
            return StoreAway(f"The memory database {self.where} went away while memory was {doing} "
                             f"({_first_line(exc)}): memory works again once the server is back.")
        if isinstance(exc, errors.LockNotAvailable):
            return StoreLocked(f"The memory database {self.where} stayed locked by another transaction while "
                               f"memory was {doing}: try again.")
        if isinstance(exc, errors.DiskFull):
            return MemoryUnavailable(f"The memory database {self.where} has no room left: nothing was saved; free "
                                     "space on the server, then try again.")
        if isinstance(exc, errors.InsufficientPrivilege):
            return MemoryUnavailable(f"The memory database {self.where} refused access ({_first_line(exc)}): the "
                                     "database user must own the agent's tables.")
        return MemoryUnavailable(f"The memory database {self.where} failed while memory was {doing} "
                                 f"({_first_line(exc)}).")

    @contextmanager
    def _tx(self) -> Iterator[psycopg.Connection[dict[str, Any]]]:
        """One write transaction; it bumps the change mark first, so writers take their turn and readers see it."""
        with self._lock:
            try:
                conn = self._connection()
                with conn.transaction():
                    conn.execute("UPDATE changes SET mark = mark + 1")
                    yield conn
            except psycopg.Error as exc:
                raise self._failed(exc, "written") from exc

    def _read(self, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        with self._lock:
            try:
                return self._connection().execute(sql, params).fetchall()
            except psycopg.Error as exc:
                raise self._failed(exc, "read") from exc

    def _vacuum(self, tables: Sequence[str]) -> None:
        """Rewrite ``tables`` so no page keeps a deleted row's bytes (autocommit: VACUUM refuses a transaction)."""
        with self._lock:
            try:
                conn = self._connection()
                conn.execute(f"SET lock_timeout = '{int(VACUUM_WAIT * 1000)}ms'")
                try:
                    for table in tables:
                        conn.execute(f"VACUUM FULL {table}")
                finally:
                    if not conn.broken:
                        conn.execute(f"SET lock_timeout = '{int(LOCK_WAIT * 1000)}ms'")
            except psycopg.Error as exc:
                raise self._failed(exc, "erased") from exc

    def _partitions(self, user: str, tables: Sequence[str] = ("memories", "vectors")) -> list[str]:
        """The partitions of ``tables`` that hold ``user``'s rows (the same remainder in each: one key, one hash)."""
        rows = self._read(
            "SELECT n FROM generate_series(0, %s) AS n WHERE satisfies_hash_partition('memories'::regclass, %s, n, "
            "%s::text)",
            [PARTITIONS - 1, PARTITIONS, user],
        )
        return [f"{table}_{int(rows[0]['n'])}" for table in tables]

    # -- the schema ----------------------------------------------------------------------------------------

    def _version(self, conn: psycopg.Connection[dict[str, Any]]) -> int:
        """The database's schema version (0: none yet); a newer one than this code knows is refused."""
        exists = conn.execute("SELECT to_regclass('schema_version') IS NOT NULL AS e").fetchone()
        if exists is None or not exists["e"]:
            return 0
        row = conn.execute("SELECT max(version) AS v FROM schema_version").fetchone()
        version = int(row["v"]) if row is not None and row["v"] is not None else 0
        if version > SCHEMA_VERSION:
            raise MemoryUnavailable(
                f"The memory database {self.where} was written by a newer version of agent (schema {version}, this "
                f"one reads {SCHEMA_VERSION}): upgrade agent to use it."
            )
        return version

    def _migrate(self, conn: psycopg.Connection[dict[str, Any]]) -> None:
        """Bring the schema to SCHEMA_VERSION in one transaction, checked again under the migration lock, since
        another agent may have done it meanwhile."""
        try:
            if self._version(conn) == SCHEMA_VERSION:
                return
            with conn.transaction():
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
                conn.execute("CREATE TABLE IF NOT EXISTS schema_version ("
                             "version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())")
                current = self._version(conn)
                for version, statements in _MIGRATIONS:
                    if version > current:
                        for statement in statements:
                            conn.execute(statement)
                        conn.execute("INSERT INTO schema_version (version) VALUES (%s)", (version,))
        except psycopg.Error as exc:
            raise self._failed(exc, "opened") from exc

    # -- the ledger itself ---------------------------------------------------------------------------------

    def store_id(self) -> str:
        """A random id of this ledger, made once: it keeps its collections apart from others' on a shared server."""
        with self._tx() as db:
            made = uuid.uuid4().hex
            db.execute("INSERT INTO ledger_meta (key, value) VALUES ('store_id', %s) ON CONFLICT DO NOTHING", (made,))
            row = db.execute("SELECT value FROM ledger_meta WHERE key = 'store_id'").fetchone()
            assert row is not None
            return str(row["value"])

    def change_mark(self) -> tuple[int, int]:
        """A value that differs after any transaction committed to the database since it was last read, by any
        process on any machine: the counter every write transaction bumps (the second half only matches the
        shape of ``SqliteLedger.change_mark``)."""
        rows = self._read("SELECT mark FROM changes")
        return int(rows[0]["mark"]), 0

    # -- memories ------------------------------------------------------------------------------------------

    def put(self, records: Sequence[MemoryRecord]) -> None:
        """Insert new memories; an existing (user, id) keeps its created_at and gets the newer last_seen."""
        if not records:
            return
        with self._tx() as db, db.cursor() as cursor:
            cursor.executemany(
                """INSERT INTO memories (id, text, kind, owner, session, turn, created_at, last_seen, content_hash,
                       source, extra, facts, superseded_by, superseded_at, restated, search_context)
                   VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)
                   ON CONFLICT (owner, id)
                   DO UPDATE SET last_seen = greatest(memories.last_seen, excluded.last_seen)""",
                [
                    (r.id, r.text, r.kind, r.user, r.session, r.turn, r.created_at, r.last_seen, r.content_hash,
                     r.source, json.dumps(r.extra, ensure_ascii=False), facts_json(r.facts), r.superseded_by,
                     r.superseded_at, quotes_json(r.restated), search_context(r))
                    for r in records
                ],
            )

    def get(self, user: str, ids: Sequence[str]) -> dict[str, MemoryRecord]:
        if not ids:
            return {}
        rows = self._read(f"SELECT {_RECORD} FROM memories WHERE owner = %s AND id = ANY(%s)", [user, list(ids)])
        return {row["id"]: row_to_record(row) for row in rows}

    def all(self, user: str) -> list[MemoryRecord]:
        rows = self._read(f"SELECT {_RECORD} FROM memories WHERE owner = %s ORDER BY created_at, rowid", [user])
        return [row_to_record(row) for row in rows]

    def ids(self, user: str) -> list[str]:
        return [row["id"] for row in self._read("SELECT id FROM memories WHERE owner = %s", [user])]

    def count(self, user: str, session: str | None = None, since: float = float("-inf")) -> int:
        if session is None:
            return int(self._read("SELECT count(*) AS n FROM memories WHERE owner = %s", [user])[0]["n"])
        sql = ("SELECT count(*) AS n FROM memories WHERE owner = %s AND session = %s AND kind <> 'explicit' "
               "AND created_at >= %s")
        return int(self._read(sql, [user, session, since])[0]["n"])

    def touch(self, user: str, ids: Sequence[str], when: float) -> None:
        if not ids:
            return
        with self._tx() as db:
            db.execute("UPDATE memories SET last_seen = greatest(last_seen, %s) WHERE owner = %s AND id = ANY(%s)",
                       (when, user, list(ids)))

    def profiled(self, user: str) -> list[MemoryRecord]:
        """The memories that state profile facts, current and superseded, oldest first (the partial index), read
        again only after a write."""
        with self._lock:
            stamp = self.change_mark()
            cached = self._profiled.get(user)
            if cached is not None and cached[0] == stamp:
                return list(cached[1])
            rows = self._read(
                f"SELECT {_RECORD} FROM memories WHERE owner = %s AND facts <> '[]' ORDER BY created_at, rowid",
                [user],
            )
            records = [row_to_record(row) for row in rows]
            self._profiled[user] = (stamp, records)
            return list(records)

    def recent(self, user: str, n: int) -> list[MemoryRecord]:
        """The ``n`` current memories seen last (said, restated or recalled), newest first."""
        rows = self._read(
            f"SELECT {_RECORD} FROM memories WHERE owner = %s AND superseded_by = '' "
            "ORDER BY last_seen DESC, rowid DESC LIMIT %s",
            [user, n],
        )
        return [row_to_record(row) for row in rows]

    def supersede(self, user: str, ids: Sequence[str], by: str, when: float) -> None:
        """Mark ``ids`` replaced by memory ``by`` at ``when``; an empty ``by`` makes them current again."""
        if not ids:
            return
        with self._tx() as db:
            db.execute("UPDATE memories SET superseded_by = %s, superseded_at = %s WHERE owner = %s AND id = ANY(%s)",
                       (by, when if by else 0.0, user, list(ids)))

    def set_facts(self, user: str, memory: str, facts: Sequence[StatedFact]) -> None:
        """Rewrite the profile facts of ``memory`` (a value of it replaced by a later memory)."""
        with self._tx() as db:
            db.execute("UPDATE memories SET facts = %s WHERE owner = %s AND id = %s", (facts_json(facts), user, memory))

    def restate(self, user: str, memory: str, quote: Quote) -> None:
        """Add ``quote`` to the provenance of ``memory`` and to its keyword context; its ``last_seen`` moves on."""
        with self._tx() as db:
            row = db.execute(f"SELECT {_RECORD} FROM memories WHERE owner = %s AND id = %s", (user, memory)).fetchone()
            if row is None:
                return
            record = row_to_record(row)
            restated = (*record.restated, quote)
            db.execute(
                "UPDATE memories SET restated = %s, search_context = %s, last_seen = greatest(last_seen, %s) "
                "WHERE owner = %s AND id = %s",
                (quotes_json(restated), search_context(replace(record, restated=restated)), quote.at, user, memory),
            )

    def oldest(self, user: str, n: int) -> list[str]:
        rows = self._read("SELECT id FROM memories WHERE owner = %s ORDER BY last_seen, rowid LIMIT %s", [user, n])
        return [row["id"] for row in rows]

    def keyword_search(self, user: str, query: str, k: int) -> list[tuple[str, float]]:
        """Full-text search over the user's memories for the query's content words (any of them); higher score is
        better. A memory scores, for each word it matches, ``ts_rank`` (text weighted above context) times the
        word's BM25 inverse document frequency among the user's memories: ``ts_rank`` alone has no IDF, so a common
        word counted as much as a rare one (keyword-only LoCoMo R@5 0.618, R@10 0.699; with IDF 0.632 and 0.737,
        SQLite's BM25 0.664 and 0.737: ``bench/ledger_keyword.py``). The memories matching any word are found by
        the GIN index first; the per-word ranks and counts are taken over those alone."""
        terms = sorted(set(content_words(query)))
        if not terms or k <= 0:
            return []
        any_word = " || ".join(["plainto_tsquery('english', %s)"] * len(terms))
        rows = self._read(
            f"""WITH word AS MATERIALIZED (
                    SELECT term, plainto_tsquery('english', term) AS q FROM unnest(%s::text[]) AS term),
                found AS MATERIALIZED (
                    SELECT rowid, id, search FROM memories WHERE owner = %s AND search @@ ({any_word})),
                hit AS MATERIALIZED (
                    SELECT found.rowid, found.id, word.term, ts_rank(%s::real[], found.search, word.q) AS rank
                    FROM found JOIN word ON found.search @@ word.q),
                idf AS MATERIALIZED (
                    SELECT term, ln(1 + ((SELECT count(*) FROM memories WHERE owner = %s) - count(*) + 0.5)
                                        / (count(*) + 0.5)) AS idf
                    FROM hit GROUP BY term)
                SELECT id, sum(rank * idf) AS score FROM hit JOIN idf USING (term)
                GROUP BY id, rowid ORDER BY score DESC, rowid LIMIT %s""",
            [terms, user, *terms, _RANK_WEIGHTS, user, k],
        )
        return [(row["id"], float(row["score"])) for row in rows]

    def set_contexts(self, user: str, contexts: Mapping[str, str]) -> None:
        """Replace the keyword context of memories (``extra['context']`` and its indexed column) in place: their
        text, dates and vectors stay; the table is rewritten so the old context's bytes go."""
        if not contexts:
            return
        with self._tx() as db:
            for memory_id, context in contexts.items():
                row = db.execute("SELECT extra FROM memories WHERE owner = %s AND id = %s",
                                 (user, memory_id)).fetchone()
                if row is None:
                    continue
                extra = {**json.loads(row["extra"]), CONTEXT: context}
                db.execute("UPDATE memories SET extra = %s, search_context = %s WHERE owner = %s AND id = %s",
                           (json.dumps(extra, ensure_ascii=False), context, user, memory_id))
        self._vacuum(self._partitions(user, ("memories",)))

    # -- deleting, and the forgets under way ---------------------------------------------------------------

    @staticmethod
    def _delete(db: psycopg.Connection[dict[str, Any]], user: str, ids: Sequence[str]) -> int:
        deleted = db.execute("DELETE FROM memories WHERE owner = %s AND id = ANY(%s)", (user, list(ids))).rowcount
        db.execute("DELETE FROM vectors WHERE owner = %s AND id = ANY(%s)", (user, list(ids)))
        return deleted

    def delete(self, user: str, ids: Sequence[str]) -> int:
        """Delete memories and their vector copies, then rewrite the tables so no page keeps their bytes."""
        if not ids:
            return 0
        with self._tx() as db:
            deleted = self._delete(db, user, ids)
        self._vacuum(self._partitions(user))
        return deleted

    def record_forget(self, user: str, ids: Sequence[str], texts: Sequence[str]) -> tuple[int, int]:
        """Delete memories as ``delete`` does and, in the same transaction, record the forget (``ids`` and the
        ``texts`` to erase from the other files); returns the record's key and how many memories existed. The
        tables are rewritten by ``drop_forget``: until then the record holds the texts anyway, and one rewrite
        of each table instead of two halves the cost of a forget (220 against 470 ms at 10,000 memories on
        this machine)."""
        with self._tx() as db:
            row = db.execute("INSERT INTO forgets (owner, ids, texts) VALUES (%s, %s, %s) RETURNING key",
                             (user, json.dumps(list(ids)), json.dumps(list(texts), ensure_ascii=False))).fetchone()
            assert row is not None
            return int(row["key"]), self._delete(db, user, ids)

    def pending_forgets(self) -> list[ForgetRecord]:
        """Every recorded forget not yet dropped, of every user, oldest first."""
        rows = self._read("SELECT key, owner, ids, texts FROM forgets ORDER BY key")
        return [ForgetRecord(int(row["key"]), str(row["owner"]), tuple(json.loads(row["ids"])),
                             tuple(json.loads(row["texts"]))) for row in rows]

    def drop_forget(self, key: int) -> None:
        """The forget ``key`` is done: the memories' tables are rewritten first (so a failure keeps the record, and
        the next start tries again), then the record goes and its table is rewritten too."""
        owners = self._read("SELECT owner FROM forgets WHERE key = %s", [key])
        if not owners:
            return  # another agent finished it
        self._vacuum(self._partitions(owners[0]["owner"]))
        with self._tx() as db:
            db.execute("DELETE FROM forgets WHERE key = %s", (key,))
        self._vacuum(("forgets",))

    # -- the copy of each vector ---------------------------------------------------------------------------

    def vector_space(self, user: str) -> VectorSpace | None:
        """(embedder, model, dimension) of ``user``'s stored vectors, or None before the first."""
        rows = self._read("SELECT embedder, model, dimension FROM vector_spaces WHERE owner = %s", [user])
        if not rows:
            return None
        return VectorSpace(str(rows[0]["embedder"]), str(rows[0]["model"]), int(rows[0]["dimension"]))

    def claim_vectors(self, user: str, space: VectorSpace) -> None:
        """Record the space of ``user``'s vectors; switching to another space drops the vectors of the old one."""
        with self._tx() as db:
            row = db.execute("SELECT embedder, model, dimension FROM vector_spaces WHERE owner = %s",
                             (user,)).fetchone()
            if row is not None and (row["embedder"], row["model"], row["dimension"]) == tuple(space):
                return
            db.execute("DELETE FROM vectors WHERE owner = %s", (user,))
            db.execute(
                """INSERT INTO vector_spaces (owner, embedder, model, dimension) VALUES (%s, %s, %s, %s)
                   ON CONFLICT (owner) DO UPDATE SET embedder = excluded.embedder, model = excluded.model,
                       dimension = excluded.dimension""",
                (user, *space),
            )

    def put_vectors(self, user: str, ids: Sequence[str], vectors: Sequence[Sequence[float]]) -> None:
        """Keep a float32 copy of each vector; a rewritten vector gets a new row number, at the end of the
        ``latest_vectors`` order (as SQLite's INSERT OR REPLACE gives it)."""
        if not ids:
            return
        blobs = [array("f", v).tobytes() for v in vectors]
        if len(blobs) != len(ids):
            raise ValueError(f"{len(ids)} ids but {len(blobs)} vectors")
        with self._tx() as db:
            db.execute("DELETE FROM vectors WHERE owner = %s AND id = ANY(%s)", (user, list(ids)))
            with db.cursor() as cursor:
                cursor.executemany("INSERT INTO vectors (owner, id, vector) VALUES (%s, %s, %s)",
                                   [(user, i, blob) for i, blob in zip(ids, blobs, strict=True)])

    def drop_vectors(self, user: str) -> None:
        """Drop every copy of ``user``'s vectors (their memories stay): the ledger-only index's ``reset``."""
        with self._tx() as db:
            db.execute("DELETE FROM vectors WHERE owner = %s", (user,))

    def vector_rowids(self, user: str) -> list[int]:
        """The row numbers of ``user``'s vector copies: a rewritten vector gets a new one, so comparing two lists
        tells what was added, replaced and deleted without reading a vector."""
        return [int(row["rowid"]) for row in self._read("SELECT rowid FROM vectors WHERE owner = %s", [user])]

    def vector_rows(self, user: str, rowids: Sequence[int]) -> list[tuple[int, str, bytes]]:
        """(row number, memory id, float32 bytes) of ``user``'s vector copies at ``rowids`` that still exist."""
        if not rowids:
            return []
        rows = self._read("SELECT rowid, id, vector FROM vectors WHERE owner = %s AND rowid = ANY(%s)",
                          [user, list(rowids)])
        return [(int(row["rowid"]), str(row["id"]), bytes(row["vector"])) for row in rows]

    def vector_ids(self, user: str) -> list[str]:
        return [row["id"] for row in self._read("SELECT id FROM vectors WHERE owner = %s", [user])]

    def stored_vectors(self, user: str, ids: Sequence[str]) -> dict[str, list[float]]:
        if not ids:
            return {}
        rows = self._read("SELECT id, vector FROM vectors WHERE owner = %s AND id = ANY(%s)", [user, list(ids)])
        return {row["id"]: floats(bytes(row["vector"])) for row in rows}

    def latest_vectors(self, user: str, n: int) -> list[tuple[str, list[float]]]:
        """The ``n`` vectors written last."""
        rows = self._read("SELECT id, vector FROM vectors WHERE owner = %s ORDER BY rowid DESC LIMIT %s", [user, n])
        return [(row["id"], floats(bytes(row["vector"]))) for row in rows]

    def close(self) -> None:
        with self._lock:
            self._drop()


if TYPE_CHECKING:  # mypy proves here that the class implements the port the rest of the agent is written against

    def _as_port(ledger: PostgresLedger) -> Ledger:
        return ledger
