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
  not are the few that are about the ledger itself: its id, its change mark, its schema, and the forget records
  and the machines each still waits for, which ``agent.forget`` finishes for every user (as with SQLite).
- Schema migrations are versioned in ``schema_version``: a newer database than this code knows is refused in one
  line; an older one is migrated forward in one transaction, under an advisory lock so that two agents starting
  together do not both migrate.
- The keyword index is PostgreSQL's full-text search ('english': Snowball stemming), a stored ``tsvector`` of the
  text (weight A) and the writer's context (weight B) under a GIN index that takes each insert at once (no pending
  list: schema 3), ranked by ``ts_rank`` with the text weighted ``TEXT_WEIGHT`` times the context, as the SQLite
  ledger's BM25 does, and each word by its BM25 IDF, without ranking every match (``keyword_search``).
- The vector copies are float32 ``bytea``, searched by brute force in the agent (``agent.adapters.ledger_vectors``).
- The change mark is one counter row that every write transaction bumps first, so it moves exactly when something
  was committed, whoever committed it, and reading it is one primary-key lookup. Bumping it first also makes write
  transactions take their turn as SQLite's ``BEGIN IMMEDIATE`` does, so a read-modify-write (``restate``) never
  loses another one's change.

Forget on the server: the rows are deleted and then the tables are rewritten with ``VACUUM FULL`` (outside a
transaction), because PostgreSQL's delete only marks a row dead, and after a plain ``VACUUM`` the text was still
found in the database's files (``tests/system/test_pg_ledger.py`` reads them after the rewrite). A rewrite copies the
table and locks it meanwhile, so memories and vectors are split into PARTITIONS tables by a hash of the user: a forget
rewrites the user's own partition, and blocks only the users who share it, for that moment. An eviction (a write
past the capacity) is not a forget and rewrites nothing (``delete``): its rows' bytes stay in the partition's free
space until later writes reuse it or the user's next forget rewrites it. The changes kept for ``/undo``
(``turn_changes``) that name a forgotten memory are deleted with it, and their table rewritten too. The write-ahead
log and backups are not rewritten. What the server may still hold after a forget, as docs/machines.md says it:

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
dropped and the next call connects again, so memory heals when the server is back. Each new connection checks the
schema as the first one did (a database dropped and created again under its name is made ours again). What the
server or the driver refuses for the data itself (a NUL character, a number out of range) is ``MemoryRefused``,
never the server gone away: a turn that meets it must not wait to be written again. A server that is there but does
not answer (frozen) is given up on after the ledger's ``timeout``, measured by the client (``_bounded``), and left
alone for ``REST`` times as long, each call meanwhile failing at once with the same line.
"""

from __future__ import annotations

import json
import logging
import os
import secrets
import threading
import time
import uuid
from array import array
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, TypeVar, cast

import psycopg
from psycopg import conninfo, errors
from psycopg.rows import dict_row

from agent.adapters.pg_watchdog import Watchdog
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
    CONTEXT,
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
from agent.errors import AgentError, ConfigError, MemoryRefused, MemoryUnavailable, StoreAway, StoreLocked
from agent.memory.text import content_words

if TYPE_CHECKING:
    from agent.ports import Ledger

T = TypeVar("T")
log = logging.getLogger(__name__)

LOCK_WAIT = 5.0  # seconds a statement waits for another transaction's lock, like the SQLite ledger's BUSY_WAIT
# VACUUM FULL waits this long for the readers of a table to finish, and no longer: while its lock is queued every
# later statement on the table queues behind it, so it must give up before their LOCK_WAIT does (a session left idle
# in a transaction, by psql or any client not in autocommit, made a forget wait a minute per table and every other
# agent's reads of those memories fail meanwhile). Given up, the forget's record stays and the next start finishes.
VACUUM_WAIT = 2.0
TIMEOUT = 10.0  # seconds a connection attempt or an exchange may take (AGENT_DATABASE_TIMEOUT)
REST = 3  # a server that did not answer is tried again after this many times the timeout
# A server that vanished from the network (no reset, no answer) is given up on after this long, in a statement as
# between them (with the keepalives of ``_connection``), instead of TCP's own retries of about 15 minutes.
TCP_TIMEOUT_MS = 30_000
MIGRATION_LOCK = 0x6167656E74  # pg_advisory_xact_lock key of the schema migration ("agent")

_RECORD = (
    "id, text, kind, owner AS user, session, turn, created_at, last_seen, content_hash, source, extra, facts, "
    "superseded_by, superseded_at, restated"
)

# The memories and vectors tables are split by a hash of the user into PARTITIONS tables each, so the rewrite after
# a forget (``_vacuum``) copies and locks the user's own partition, not every user's rows.
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


# Each migration runs in the transaction that records it in schema_version.
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
    # A forget reaches every machine's files: the machines (data directories) that use the ledger for a user, and
    # per forget the machines that have not yet scrubbed their sessions and input history of its texts.
    (2, (
        """CREATE TABLE machines (
            owner text NOT NULL, id text NOT NULL, name text NOT NULL, last_seen double precision NOT NULL,
            PRIMARY KEY (owner, id)
        )""",
        "ALTER TABLE forgets ADD COLUMN made_at double precision NOT NULL DEFAULT extract(epoch FROM now())",
        """CREATE TABLE forget_waits (
            key bigint NOT NULL REFERENCES forgets (key) ON DELETE CASCADE, machine text NOT NULL,
            PRIMARY KEY (machine, key)
        )""",
        "CREATE INDEX forget_waits_key ON forget_waits (key)",
    )),
    # The keyword index takes each insert at once: with GIN's default fastupdate, inserts wait in a pending list
    # that every search reads through until a vacuum merges it, and a search at 10,000 memories took 34 ms
    # instead of 4 (bench/RESULTS.md, section 11). The list the older schema left is merged now.
    (3, (
        """DO $$ DECLARE part regclass; BEGIN
            FOR part IN SELECT inhrelid::regclass FROM pg_inherits WHERE inhparent = 'memories_search'::regclass LOOP
                EXECUTE format('ALTER INDEX %s SET (fastupdate = off)', part);
                PERFORM gin_clean_pending_list(part);
            END LOOP;
        END $$""",
    )),
    # What a forget keeps once its record is gone: a keyed digest of each forgotten text, under the count of forgets
    # recorded so far (``forgotten_digest``), so that a turn some machine kept while the forget was made is never
    # written back. The count and the key are rows of ledger_meta, made by the first forget.
    (4, (
        """CREATE TABLE forgotten (
            owner text NOT NULL, digest text NOT NULL, mark bigint NOT NULL, PRIMARY KEY (owner, digest)
        )""",
    )),
    # What each turn's write did, for /undo (``put`` and ``restate`` given a change): memory ids and links, as JSON.
    (5, (
        """CREATE TABLE turn_changes (
            key bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, owner text NOT NULL, session text NOT NULL,
            turn integer NOT NULL, said text NOT NULL, body text NOT NULL
        )""",
        "CREATE INDEX turn_changes_owner ON turn_changes (owner, key)",
    )),
)
SCHEMA_VERSION = _MIGRATIONS[-1][0]
# ts_rank's weights are {D, C, B, A}: the text (A) counts TEXT_WEIGHT times the context (B).
_RANK_WEIGHTS = [0.0, 0.0, 1.0 / TEXT_WEIGHT, 1.0]
# keyword_search counts a word's matches up to this many; a word matching more is a common one (see there).
COMMON_WORD = 1000


def where(url: str) -> str:
    """The server and database of ``url`` as the user's messages name them: never the password (nor libpq's reason
    for refusing the URL, which may quote a piece of it). Without a host libpq takes the local socket, or PGHOST."""
    try:
        parts = conninfo.conninfo_to_dict(url)
    except psycopg.ProgrammingError as exc:
        raise ConfigError("The memory database URL cannot be read by libpq: use "
                          "postgresql://user:password@host:port/dbname, with any @ : / # ? % in the user name or "
                          "password percent-encoded.") from exc
    host = parts.get("host") or os.environ.get("PGHOST") or "local socket"
    port, dbname = parts.get("port") or os.environ.get("PGPORT") or "5432", parts.get("dbname") or ""
    return f"{host}:{port}/{dbname}" if dbname else f"{host}:{port}"


def _searchable(text: str) -> str:
    """``text`` for the keyword index, which only searches it: without NUL characters, which PostgreSQL's text
    cannot hold (the end of a model's reply, kept as a memory's context, may have one)."""
    return text.replace("\x00", "")


def _first_line(exc: BaseException) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


@dataclass
class _Copies:
    """Row number -> memory id of one user's vector copies as last read (``PostgresLedger._copies``), with the
    count, sum and sum of squares of those row numbers kept as rows come and go. ``generation`` counts the reads
    of every row: between two, rows were only added (``vector_changes``)."""

    stamp: tuple[int, int]
    generation: int = 0
    rows: dict[int, str] = field(default_factory=dict)
    total: int = 0
    squares: int = 0

    def add(self, new: dict[int, str]) -> None:
        """Take ``new`` rows in; a rewritten vector's new row replaces its old one, which is gone from the table."""
        if not new:
            return
        rewritten = set(new.values())
        for rowid in [rowid for rowid, mid in self.rows.items() if mid in rewritten]:
            del self.rows[rowid]
            self.total, self.squares = self.total - rowid, self.squares - rowid * rowid
        self.rows.update(new)
        self.total += sum(new)
        self.squares += sum(rowid * rowid for rowid in new)


class PostgresLedger:
    """``Ledger`` on a PostgreSQL database; one connection, shared by the threads of a process (a lock orders them).

    ``url`` is a libpq URL or conninfo string; ``timeout`` bounds, in seconds, each connection attempt and each
    exchange with the server (a statement, a transaction), on the client's clock (``agent.adapters.pg_watchdog``):
    a server that does not answer within it is given up on, in one line, and not tried again for ``REST`` times
    as long, so that a frozen server costs a chat one wait, not one per statement."""

    def __init__(self, url: str, *, timeout: float = TIMEOUT) -> None:
        self.url = url
        self.where = where(url)
        self._timeout = timeout
        self._lock = threading.RLock()
        self._conn: psycopg.Connection[dict[str, Any]] | None = None
        self._watchdog = Watchdog(self.where)
        self._gave_up: tuple[float, str] | None = None  # until when the server is not tried again, and why
        # What every turn reads (the profile memories, the count), kept until the change mark moves.
        self._unchanged: dict[tuple[str, str], tuple[tuple[int, int], Any]] = {}
        self._vector_copies: dict[str, _Copies] = {}
        self._epoch = 0  # the database's oid: a database dropped and created again under its name has another
        self._registered: dict[tuple[str, str], str] = {}  # (machine, user) -> name, registered again on a new one
        with self._lock:
            try:
                self._connection()
            except BaseException:
                self._drop()  # a schema this code cannot use: no connection left open behind the error
                raise

    # -- the connection, and every failure of it as one line -----------------------------------------------

    def _connection(self) -> psycopg.Connection[dict[str, Any]]:
        """The open connection, or a new one when there is none or the last one broke (the server went away);
        none while the server is rested after it did not answer (the same line again, at once)."""
        if self._conn is not None and not self._conn.closed and not self._conn.broken:
            return self._conn
        self._drop()
        if self._gave_up is not None:
            until, line = self._gave_up
            if time.monotonic() < until:
                raise StoreAway(line)
            self._gave_up = None
        try:
            conn = psycopg.connect(
                self.url, autocommit=True, row_factory=dict_row, connect_timeout=max(1, round(self._timeout)),
                application_name="agent", keepalives=1, keepalives_idle=10, keepalives_interval=5,
                keepalives_count=3, tcp_user_timeout=TCP_TIMEOUT_MS,
            )
        except psycopg.Error as exc:
            raise self._at_connect(exc) from exc
        self._conn = conn
        try:
            with self._bounded(conn):
                conn.execute(f"SET lock_timeout = '{int(self._lock_wait * 1000)}ms'")
        except psycopg.Error as exc:
            raise self._failed(exc, "opened") from exc
        try:
            self._renew(conn)
        except BaseException:
            self._drop()  # a schema this code cannot use: the next call checks again
            raise
        return conn

    def _renew(self, conn: psycopg.Connection[dict[str, Any]]) -> None:
        """Make a new connection's database ours, as every open does: it may not be the one the last connection
        had (a database dropped and created again under its name, mid-chat, had no tables, and every turn failed
        with ``relation "memories" does not exist`` until a restart). So the schema is checked (and made or
        migrated), what was kept from the old database forgotten (a new one's change mark starts again, and must not
        be taken for the old one's), and this process's machines registered in it again."""
        self._migrate(conn)
        self._unchanged.clear()
        self._vector_copies.clear()
        try:
            with self._bounded(conn):
                row = conn.execute("SELECT oid FROM pg_database WHERE datname = current_database()").fetchone()
                self._epoch = int(row["oid"]) if row is not None else 0
                for (machine, user), name in self._registered.items():
                    self._upsert_machine(conn, machine, user, name)
        except psycopg.Error as exc:
            raise self._failed(exc, "opened") from exc

    @property
    def _lock_wait(self) -> float:
        """How long a statement waits for another transaction's lock: within the bound, so that a lock held too
        long is said as such (``StoreLocked``), not as a server that does not answer."""
        return min(LOCK_WAIT, self._timeout / 2)

    @contextmanager
    def _bounded(self, conn: psycopg.Connection[dict[str, Any]], seconds: float | None = None) -> Iterator[None]:
        """Run the block's exchange with the server within ``seconds`` (the ledger's timeout), on the client's
        clock; cut at the bound, the connection is broken, and dropped even when the reply made it in time."""
        with self._watchdog.bound(conn.pgconn.socket, self._timeout if seconds is None else seconds):
            yield
        if self._watchdog.fired:
            self._drop()

    def _drop(self) -> None:
        if self._conn is not None:
            try:
                self._conn.close()
            finally:
                self._conn = None

    def _rest(self, line: str) -> StoreAway:
        """Give the server up for ``REST`` times the timeout, telling why in ``line``."""
        self._drop()
        self._gave_up = (time.monotonic() + REST * self._timeout, line)
        return StoreAway(line)

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
            return self._rest(f"The memory database {self.where} did not answer within {self._timeout:g} s: check "
                              f"that the server is up and reachable (memory tries it again in {REST * self._timeout:g} "
                              "s).")
        return StoreAway(f"The memory database {self.where} cannot be reached ({_first_line(exc)}).")

    def _failed(self, exc: psycopg.Error, doing: str) -> AgentError:
        """The agent's error for a failed statement; a broken connection is dropped, to be made anew next time."""
        if self._watchdog.fired:
            return self._rest(f"The memory database {self.where} did not answer within {self._timeout:g} s while "
                              f"memory was {doing}: memory tries it again in {REST * self._timeout:g} s, and works "
                              "again once the server answers.")
        connected = self._conn is not None and not self._conn.broken and not self._conn.closed
        if connected and isinstance(exc, psycopg.DataError | psycopg.IntegrityError):
            # Refused for what it holds (a NUL character, which PostgreSQL's text cannot hold; a number out of
            # range), whether by the driver or the server: not a server gone away, so a turn that meets it is
            # never kept to be written again, where it would stop every turn after it.
            if doing == "written":
                return MemoryRefused(f"The memory database {self.where} cannot store this ({_first_line(exc)}): "
                                     "nothing of it was saved.")
            return MemoryRefused(f"The memory database {self.where} refused this while memory was {doing} "
                                 f"({_first_line(exc)}).")
        if connected and isinstance(exc, errors.UndefinedTable | errors.UndefinedColumn):
            self._drop()  # the next call connects again, and checks the schema (``_renew``)
            return StoreAway(f"The memory database {self.where} lacks the agent's tables while memory was {doing} "
                             f"({_first_line(exc)}): memory checks its schema again at its next use.")
        if (not connected or exc.sqlstate is None
                or isinstance(exc, errors.AdminShutdown | errors.CrashShutdown | errors.CannotConnectNow)):
            self._drop()
            return StoreAway(f"The memory database {self.where} went away while memory was {doing} "
                             f"({_first_line(exc)}): memory works again once the server is back.")
        if isinstance(exc, errors.LockNotAvailable) and doing == "erased":
            return StoreLocked(f"The memory database {self.where} could not rewrite the forgotten memories' tables: "
                               f"another session kept a transaction open on them for over {self._vacuum_wait:g} s "
                               "(pg_stat_activity shows it); their text stays in the database until the next start "
                               "of agent rewrites them.")
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

    @property
    def _vacuum_wait(self) -> float:
        """How long a rewrite waits for the readers of a table: well under their own lock wait, since every reader
        that comes meanwhile queues behind it (AGENT_DATABASE_TIMEOUT under 4 s shortens both)."""
        return min(VACUUM_WAIT, self._lock_wait * 2 / 5)

    @contextmanager
    def _tx(self) -> Iterator[psycopg.Connection[dict[str, Any]]]:
        """One write transaction; it bumps the change mark first, so writers take their turn and readers see it."""
        with self._lock:
            try:
                conn = self._connection()
                with self._bounded(conn), conn.transaction():
                    conn.execute("UPDATE changes SET mark = mark + 1")
                    yield conn
            except psycopg.Error as exc:
                raise self._failed(exc, "written") from exc

    @contextmanager
    def together(self) -> Iterator[None]:
        """Each write inside stays its own transaction here: a write's round trips to the server, not a commit's
        fsync, are its cost, and one transaction held across them would make every other machine's writer wait."""
        yield

    def after_commit(self, then: Callable[[], None]) -> None:
        """Every write here has committed when it returns: ``then`` runs now."""
        then()

    def _read(self, sql: str, params: Sequence[Any] = (), prepare: bool | None = None) -> list[dict[str, Any]]:
        """The rows of one statement; ``prepare`` False plans it for its own parameters (psycopg otherwise prepares
        a statement run five times, and the server may then use one plan for every parameter)."""
        with self._lock:
            try:
                conn = self._connection()
                with self._bounded(conn):
                    return conn.execute(sql, params, prepare=prepare).fetchall()
            except psycopg.Error as exc:
                raise self._failed(exc, "read") from exc

    def _vacuum(self, tables: Sequence[str]) -> None:
        """Rewrite ``tables`` so no page keeps a deleted row's bytes (autocommit: VACUUM refuses a transaction)."""
        with self._lock:
            try:
                conn = self._connection()
                with self._bounded(conn, len(tables) * (self._vacuum_wait + self._timeout)):
                    conn.execute(f"SET lock_timeout = '{int(self._vacuum_wait * 1000)}ms'")
                    try:
                        for table in tables:
                            conn.execute(f"VACUUM FULL {table}")
                    finally:
                        if not conn.broken:
                            conn.execute(f"SET lock_timeout = '{int(self._lock_wait * 1000)}ms'")
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
            with self._bounded(conn):
                if self._version(conn) == SCHEMA_VERSION:
                    return
            with self._bounded(conn, self._vacuum_wait + self._timeout), conn.transaction():
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
                conn.execute("CREATE TABLE IF NOT EXISTS schema_version ("
                             "version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())")
                current = self._version(conn)
                for version, statements in _MIGRATIONS:
                    if version > current:
                        for statement in statements:
                            conn.execute(statement)
                        conn.execute("INSERT INTO schema_version (version) VALUES (%s)", (version,))
        except errors.DuplicateTable as exc:  # a table of ours that our schema_version does not account for
            raise ConfigError(f"The memory database {self.where} already holds tables of another application "
                              f"({_first_line(exc)}): give agent a database of its own (createdb agent) and "
                              "point the database URL at it.") from exc
        except psycopg.Error as exc:
            raise self._failed(exc, "opened") from exc

    # -- the ledger itself ---------------------------------------------------------------------------------

    def store_id(self) -> str:
        """A random id of this ledger, made once: it keeps its collections apart from others' on a shared server.
        Read first, and written only by the first open of a new database (the insert that loses a race to another
        agent's keeps the winner's): a write at every open would move the change mark, and every other machine's
        caches with it, once per start."""
        rows = self._read("SELECT value FROM ledger_meta WHERE key = 'store_id'")
        if rows:
            return str(rows[0]["value"])
        with self._tx() as db:
            made = uuid.uuid4().hex
            db.execute("INSERT INTO ledger_meta (key, value) VALUES ('store_id', %s) ON CONFLICT DO NOTHING", (made,))
            row = db.execute("SELECT value FROM ledger_meta WHERE key = 'store_id'").fetchone()
            assert row is not None
            return str(row["value"])

    def change_mark(self) -> tuple[int, int]:
        """A value that differs after any transaction committed to the database since it was last read, by any
        process on any machine: the counter every write transaction bumps, and the database's oid (a database
        dropped and created again starts its counter anew, and must not pass for the old one at the same count)."""
        rows = self._read("SELECT mark FROM changes")
        return int(rows[0]["mark"]), self._epoch

    # -- memories ------------------------------------------------------------------------------------------

    def put(self, records: Sequence[MemoryRecord], change: Change | None = None) -> None:
        """Insert new memories; an existing (user, id) keeps its created_at and gets the newer last_seen. A
        ``change`` is kept in the same transaction (``_keep``)."""
        if not records:
            return
        with self._tx() as db, db.cursor() as cursor:
            if change is not None:
                self._keep(db, records[0].user, change)
            cursor.executemany(
                """INSERT INTO memories (id, text, kind, owner, session, turn, created_at, last_seen, content_hash,
                       source, extra, facts, superseded_by, superseded_at, restated, search_context)
                   VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)
                   ON CONFLICT (owner, id)
                   DO UPDATE SET last_seen = greatest(memories.last_seen, excluded.last_seen)""",
                [
                    (r.id, r.text, r.kind, r.user, r.session, r.turn, r.created_at, r.last_seen, r.content_hash,
                     r.source, json.dumps(r.extra, ensure_ascii=False), facts_json(r.facts), r.superseded_by,
                     r.superseded_at, quotes_json(r.restated), _searchable(search_context(r)))
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

    def pages(self, user: str, size: int) -> Iterator[list[MemoryRecord]]:
        keys = [row["rowid"] for row in self._read(
            "SELECT rowid FROM memories WHERE owner = %s ORDER BY created_at, rowid", [user])]
        for start in range(0, len(keys), size):
            page = keys[start : start + size]
            rows = self._read(f"SELECT rowid, {_RECORD} FROM memories WHERE owner = %s AND rowid = ANY(%s)",
                              [user, page])
            found = {row["rowid"]: row_to_record(row) for row in rows}
            yield [found[key] for key in page if key in found]

    def ids(self, user: str) -> list[str]:
        return [row["id"] for row in self._read("SELECT id FROM memories WHERE owner = %s", [user])]

    def id_page(self, user: str, after: str, size: int) -> list[tuple[str, bool]]:
        rows = self._read("""SELECT id, EXISTS (SELECT 1 FROM vectors AS v WHERE v.owner = memories.owner
                                                  AND v.id = memories.id) AS copied
                             FROM memories WHERE owner = %s AND id > %s ORDER BY id LIMIT %s""", [user, after, size])
        return [(row["id"], bool(row["copied"])) for row in rows]

    def _until_changed(self, what: str, user: str, read: Callable[[], T]) -> T:
        """``read()``, kept until the change mark moves: one primary-key lookup instead of the statement (the mark is
        read first, so a commit in between is read again next time)."""
        with self._lock:
            stamp = self.change_mark()
            cached = self._unchanged.get((what, user))
            if cached is not None and cached[0] == stamp:
                return cast(T, cached[1])
            value = read()
            self._unchanged[(what, user)] = (stamp, value)
            return value

    def count(self, user: str, session: str | None = None, since: float = float("-inf"), current: bool = False
              ) -> int:
        """The user's memories (kept until the next write: a chat counts them after every turn), or those a
        session's turns produced since ``since``; ``current``: only those no later one replaced."""
        if session is None:
            live = " AND superseded_by = ''" if current else ""
            return self._until_changed("current" if current else "count", user, lambda: int(self._read(
                f"SELECT count(*) AS n FROM memories WHERE owner = %s{live}", [user])[0]["n"]))
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

        def read() -> list[MemoryRecord]:
            rows = self._read(
                f"SELECT {_RECORD} FROM memories WHERE owner = %s AND facts <> '[]' ORDER BY created_at, rowid",
                [user],
            )
            return [row_to_record(row) for row in rows]

        return list(self._until_changed("profiled", user, read))

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

    def restate(self, user: str, memory: str, quote: Quote, change: Change | None = None) -> None:
        """Add ``quote`` to the provenance of ``memory`` and to its keyword context; its ``last_seen`` moves on. A
        ``change`` is kept in the same transaction (``_keep``)."""
        with self._tx() as db:
            if change is not None:
                self._keep(db, user, change)
            row = db.execute(f"SELECT {_RECORD} FROM memories WHERE owner = %s AND id = %s", (user, memory)).fetchone()
            if row is None:
                return
            record = row_to_record(row)
            restated = (*record.restated, quote)
            db.execute(
                "UPDATE memories SET restated = %s, search_context = %s, last_seen = greatest(last_seen, %s) "
                "WHERE owner = %s AND id = %s",
                (quotes_json(restated), _searchable(search_context(replace(record, restated=restated))), quote.at,
                 user, memory),
            )

    def replaced_by(self, user: str, ids: Sequence[str]) -> list[MemoryRecord]:
        """The memories superseded by one of ``ids``."""
        if not ids:
            return []
        rows = self._read(f"SELECT {_RECORD} FROM memories WHERE owner = %s AND superseded_by = ANY(%s)",
                          [user, list(ids)])
        return [row_to_record(row) for row in rows]

    def set_links(self, user: str, links: Mapping[str, Links]) -> None:
        """Rewrite the supersede link and the profile facts of each memory of ``links``, in one transaction."""
        if not links:
            return
        with self._tx() as db, db.cursor() as cursor:
            cursor.executemany(
                "UPDATE memories SET superseded_by = %s, superseded_at = %s, facts = %s WHERE owner = %s AND id = %s",
                [(link.superseded_by, link.superseded_at if link.superseded_by else 0.0, facts_json(link.facts),
                  user, memory) for memory, link in links.items()],
            )

    def unstate(self, user: str, memory: str, quote: Quote) -> None:
        """Take ``quote`` out of the provenance of ``memory`` and out of its keyword context; the user's partition is
        rewritten so the old row's bytes go."""
        with self._tx() as db:
            row = db.execute(f"SELECT {_RECORD} FROM memories WHERE owner = %s AND id = %s", (user, memory)).fetchone()
            if row is None:
                return
            left = unstated(row_to_record(row), quote)
            if left is None:
                return
            db.execute("UPDATE memories SET restated = %s, search_context = %s WHERE owner = %s AND id = %s",
                       (quotes_json(left.restated), search_context(left), user, memory))
        self._vacuum(self._partitions(user, ("memories",)))

    # -- what each turn's write did, for /undo -------------------------------------------------------------

    @staticmethod
    def _keep(db: psycopg.Connection[dict[str, Any]], user: str, change: Change) -> None:
        """Keep ``change``, and only the ``CHANGES_KEPT`` newest of ``user``'s."""
        db.execute("INSERT INTO turn_changes (owner, session, turn, said, body) VALUES (%s, %s, %s, %s, %s)",
                   (user, change.session, change.turn, change.said, change_json(change)))
        db.execute("DELETE FROM turn_changes WHERE owner = %s AND key NOT IN "
                   "(SELECT key FROM turn_changes WHERE owner = %s ORDER BY key DESC LIMIT %s)",
                   (user, user, CHANGES_KEPT))

    def changes(self, user: str) -> list[Change]:
        rows = self._read("SELECT key, session, turn, said, body FROM turn_changes WHERE owner = %s ORDER BY key",
                          [user])
        return [change_from_row(int(row["key"]), str(row["session"]), int(row["turn"]), str(row["said"]),
                                str(row["body"])) for row in rows]

    def drop_changes(self, user: str, keys: Sequence[int]) -> None:
        """Delete changes (they name memories being forgotten), and rewrite their table so no byte of them stays. A
        rewrite that must give up (another transaction holds the table past ``VACUUM_WAIT``) does not stop the
        forget or the undo this is part of: the rewrite at the end of every forget (``_drop_forget``) takes them."""
        if not keys:
            return
        with self._tx() as db:
            dropped = db.execute("DELETE FROM turn_changes WHERE owner = %s AND key = ANY(%s)",
                                 (user, list(keys))).rowcount
        if dropped:
            try:
                self._vacuum(("turn_changes",))
            except MemoryUnavailable as exc:
                log.debug("the changes' table was not rewritten now: %s", exc)

    def oldest(self, user: str, n: int) -> list[str]:
        rows = self._read("SELECT id FROM memories WHERE owner = %s ORDER BY last_seen, rowid LIMIT %s", [user, n])
        return [row["id"] for row in rows]

    def keyword_search(self, user: str, query: str, k: int) -> list[tuple[str, float]]:
        """Full-text search over the user's memories for the query's content words (any of them); higher score is
        better. A memory scores, for each word it matches, ``ts_rank`` (text weighted above context) times the
        word's BM25 inverse document frequency among the user's memories: ``ts_rank`` alone has no IDF, so a common
        word counted as much as a rare one (keyword-only LoCoMo R@5 0.618, R@10 0.699; with IDF 0.632 and 0.737,
        SQLite's BM25 0.664 and 0.737: ``bench/ledger_keyword.py``).

        One statement, which does not rank every matching row: it counts each word's matches through the GIN index,
        each count stopping at ``COMMON_WORD``, and ranks the memories the rarer words match. A word with
        ``COMMON_WORD`` matches or more (a name in half of 10,000 memories: ranking its rows was most of the 60 ms
        this search took) is weighed as if it had exactly that many, an upper bound of its IDF, and adds to the score
        of the memories a rarer word found; it finds memories by itself only when the rarer words match fewer than
        ``k``, and then among its ``COMMON_WORD`` most recent matches. A store of fewer than ``COMMON_WORD`` memories
        is ranked exactly as before. Planned for each query's words, not once (a plan made for any word scanned the
        whole table for the rarest), and one round trip: on a loaded machine each waits for the server to be
        scheduled, and on a network for the network."""
        terms = sorted(set(content_words(query)))
        if not terms or k <= 0:
            return []
        rows = self._read(
            f"""WITH word AS MATERIALIZED (
                    SELECT q, (SELECT count(*) FROM (SELECT FROM memories WHERE owner = %s AND search @@ q
                                                     LIMIT {COMMON_WORD}) AS m) AS n
                    FROM (SELECT plainto_tsquery('english', term) AS q FROM unnest(%s::text[]) AS term) AS w),
                weight AS MATERIALIZED (
                    SELECT q, n, n < {COMMON_WORD} AS rare,
                           ln(1 + (greatest((SELECT count(*) FROM memories WHERE owner = %s), n) - n + 0.5)
                                  / (n + 0.5)) AS idf
                    FROM word WHERE n > 0),
                found AS MATERIALIZED (
                    SELECT DISTINCT ON (m.rowid) m.rowid, m.id, m.search
                    FROM weight CROSS JOIN LATERAL (
                        SELECT rowid, id, search FROM memories WHERE owner = %s AND search @@ weight.q) AS m
                    WHERE weight.rare
                    UNION ALL
                    (SELECT rowid, id, search FROM memories
                     WHERE owner = %s
                       AND search @@ ANY (ARRAY(SELECT q FROM weight WHERE NOT rare))
                       AND NOT search @@ ANY (ARRAY(SELECT q FROM weight WHERE rare))
                       AND (SELECT coalesce(sum(n), 0) FROM weight WHERE rare) < %s
                     ORDER BY rowid DESC LIMIT {COMMON_WORD}))
                SELECT id, sum(ts_rank(%s::real[], found.search, weight.q) * weight.idf) AS score
                FROM found JOIN weight ON found.search @@ weight.q
                GROUP BY id, rowid ORDER BY score DESC, rowid LIMIT %s""",
            [user, terms, user, user, user, k, _RANK_WEIGHTS, k], prepare=False,
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
                           (json.dumps(extra, ensure_ascii=False), _searchable(context), user, memory_id))
        self._vacuum(self._partitions(user, ("memories",)))

    # -- deleting, and the forgets under way ---------------------------------------------------------------

    @staticmethod
    def _delete(db: psycopg.Connection[dict[str, Any]], user: str, ids: Sequence[str]) -> int:
        deleted = db.execute("DELETE FROM memories WHERE owner = %s AND id = ANY(%s)", (user, list(ids))).rowcount
        db.execute("DELETE FROM vectors WHERE owner = %s AND id = ANY(%s)", (user, list(ids)))
        return deleted

    def delete(self, user: str, ids: Sequence[str]) -> int:
        """Delete memories and their vector copies: an eviction (past the capacity, or ``agent memories evict``),
        which is not a forget. The tables are not rewritten: a rewrite at every write past the capacity cost
        150-350 ms at 10,000 memories, and the rows' bytes stay in free space until later writes reuse it or the
        user's next forget rewrites the partition (``record_forget``: its last acknowledgement leaves none)."""
        if not ids:
            return 0
        with self._tx() as db:
            return self._delete(db, user, ids)

    def record_forget(self, user: str, ids: Sequence[str], texts: Sequence[str]) -> tuple[int, int]:
        """Delete memories as ``delete`` does and, in the same transaction, record the forget (``ids`` and the
        ``texts`` to erase from the other files) with the machines registered for ``user`` as the ones it waits
        for; returns the record's key and how many memories existed. The tables are rewritten when the record is
        dropped: until then the record holds the texts anyway, and one rewrite of each table instead of two halves
        the cost of a forget (220 against 470 ms at 10,000 memories on this machine)."""
        with self._tx() as db:
            row = db.execute("INSERT INTO forgets (owner, ids, texts) VALUES (%s, %s, %s) RETURNING key",
                             (user, json.dumps(list(ids)), json.dumps(list(texts), ensure_ascii=False))).fetchone()
            assert row is not None
            key = int(row["key"])
            db.execute("INSERT INTO forget_waits (key, machine) SELECT %s, id FROM machines WHERE owner = %s",
                       (key, user))
            self._keep_forgotten(db, user, texts)
            self._unlink(db, user, ids)
            return key, self._delete(db, user, ids)

    def _keep_forgotten(self, db: psycopg.Connection[dict[str, Any]], user: str, texts: Sequence[str]) -> None:
        """Count this forget (``forget_mark``) and keep a digest of each of its texts under that count."""
        row = db.execute("""INSERT INTO ledger_meta (key, value) VALUES ('forget_mark', '1')
                            ON CONFLICT (key) DO UPDATE SET value = (ledger_meta.value::bigint + 1)::text
                            RETURNING value""").fetchone()
        assert row is not None
        db.execute("INSERT INTO ledger_meta (key, value) VALUES ('forget_key', %s) ON CONFLICT DO NOTHING",
                   (secrets.token_hex(32),))
        made = db.execute("SELECT value FROM ledger_meta WHERE key = 'forget_key'").fetchone()
        assert made is not None
        secret = bytes.fromhex(str(made["value"]))
        with db.cursor() as cursor:
            cursor.executemany(
                """INSERT INTO forgotten (owner, digest, mark) VALUES (%s, %s, %s)
                   ON CONFLICT (owner, digest) DO UPDATE SET mark = excluded.mark""",
                [(user, digest, int(row["value"])) for digest in sorted({forgotten_digest(secret, t)
                                                                         for t in texts if t.strip()})])

    @staticmethod
    def _unlink(db: psycopg.Connection[dict[str, Any]], user: str, ids: Sequence[str]) -> None:
        """No memory keeps a forgotten one's id (derived from its text) as the one that superseded it, or one of its
        facts: those are current again, as they were before it."""
        db.execute("UPDATE memories SET superseded_by = '', superseded_at = 0 WHERE owner = %s "
                   "AND superseded_by = ANY(%s)", (user, list(ids)))
        gone = set(ids)
        rows = db.execute("SELECT id, facts FROM memories WHERE owner = %s AND facts <> '[]'", (user,)).fetchall()
        for row in rows:
            facts = unlinked(row["facts"], gone)
            if facts is not None:
                db.execute("UPDATE memories SET facts = %s WHERE owner = %s AND id = %s", (facts, user, row["id"]))

    def forget_mark(self) -> int:
        """How many forgets this ledger has recorded, ever: a count that only grows."""
        rows = self._read("SELECT value FROM ledger_meta WHERE key = 'forget_mark'")
        return int(rows[0]["value"]) if rows else 0

    def forgotten_since(self, user: str, texts: Sequence[str], mark: int) -> list[str]:
        """Those of ``texts`` that a forget of ``user``'s recorded after the ``mark``-th one names, by their digest
        (``forgotten_digest``)."""
        if not texts:
            return []
        rows = self._read("SELECT value FROM ledger_meta WHERE key = 'forget_key'")
        if not rows:
            return []
        key = bytes.fromhex(str(rows[0]["value"]))
        wanted = {text: forgotten_digest(key, text) for text in texts}
        found = {row["digest"] for row in self._read(
            "SELECT digest FROM forgotten WHERE owner = %s AND mark > %s AND digest = ANY(%s)",
            [user, mark, list(wanted.values())])}
        return [text for text, digest in wanted.items() if digest in found]

    def pending_forgets(self, machine: str | None = None) -> list[ForgetRecord]:
        """The recorded forgets not yet dropped, of every user, oldest first, each with the machines it waits for;
        with ``machine``, only those it has still to finish: waiting for it, or for no machine at all (recorded
        before the machines were, or left by a crash after the last acknowledgement)."""
        mine = "" if machine is None else (
            "WHERE EXISTS (SELECT 1 FROM forget_waits w WHERE w.key = f.key AND w.machine = %s) "
            "OR NOT EXISTS (SELECT 1 FROM forget_waits w WHERE w.key = f.key) ")
        rows = self._read(
            "SELECT f.key, f.owner, f.ids, f.texts, f.made_at, "
            "ARRAY(SELECT w.machine FROM forget_waits w WHERE w.key = f.key ORDER BY w.machine) AS waiting "
            f"FROM forgets f {mine}ORDER BY f.key",
            [] if machine is None else [machine],
        )
        return [ForgetRecord(int(row["key"]), str(row["owner"]), tuple(json.loads(row["ids"])),
                             tuple(json.loads(row["texts"])), float(row["made_at"]), tuple(row["waiting"]))
                for row in rows]

    def acknowledge_forget(self, key: int, machine: str) -> None:
        """``machine`` has scrubbed its files of the forget ``key``; the last machine it waited for drops it
        (``_drop_forget``). The record's row is locked first, so of two machines acknowledging at once the second
        sees the first's acknowledgement and drops the record."""
        with self._tx() as db:
            if db.execute("SELECT key FROM forgets WHERE key = %s FOR UPDATE", (key,)).fetchone() is None:
                return  # another machine dropped it
            db.execute("DELETE FROM forget_waits WHERE key = %s AND machine = %s", (key, machine))
            waiting = db.execute("SELECT machine FROM forget_waits WHERE key = %s LIMIT 1", (key,)).fetchone()
            db.execute("UPDATE machines SET last_seen = extract(epoch FROM now()) WHERE id = %s "
                       "AND owner = (SELECT owner FROM forgets WHERE key = %s)", (machine, key))
        if waiting is None:
            self._drop_forget(key)

    def _drop_forget(self, key: int) -> None:
        """The forget ``key`` is done everywhere: the memories' tables are rewritten first (so a failure keeps the
        record, and the next start tries again), then the record goes and its table is rewritten too."""
        owners = self._read("SELECT owner FROM forgets WHERE key = %s", [key])
        if not owners:
            return  # another agent finished it
        self._vacuum(self._partitions(owners[0]["owner"]))
        with self._tx() as db:
            db.execute("DELETE FROM forgets WHERE key = %s", (key,))
        self._vacuum(("forgets", "turn_changes"))

    # -- the machines that use the ledger ------------------------------------------------------------------

    def register_machine(self, machine: str, user: str, name: str) -> None:
        """``machine`` uses the ledger for ``user``: the forgets of ``user``'s memories made from now on wait for
        it, also in a database created again under the same name (every new connection registers it again).
        Outside the change mark, which tells the views of memories that something they show changed."""
        with self._lock:
            self._registered[(machine, user)] = name
            try:
                conn = self._connection()
                with self._bounded(conn):
                    self._upsert_machine(conn, machine, user, name)
            except psycopg.Error as exc:
                raise self._failed(exc, "written") from exc

    @staticmethod
    def _upsert_machine(conn: psycopg.Connection[dict[str, Any]], machine: str, user: str, name: str) -> None:
        conn.execute(
            """INSERT INTO machines (owner, id, name, last_seen) VALUES (%s, %s, %s, extract(epoch FROM now()))
               ON CONFLICT (owner, id) DO UPDATE SET name = excluded.name, last_seen = excluded.last_seen""",
            (user, machine, name))

    def machines(self, user: str) -> list[Machine]:
        """``user``'s machines, the one seen last first, each with how many of ``user``'s forgets wait for it."""
        rows = self._read(
            "SELECT m.id, m.name, m.last_seen, (SELECT count(*) FROM forget_waits w JOIN forgets f USING (key) "
            "WHERE w.machine = m.id AND f.owner = m.owner) AS waiting "
            "FROM machines m WHERE owner = %s ORDER BY m.last_seen DESC, m.id",
            [user],
        )
        return [Machine(str(row["id"]), str(row["name"]), float(row["last_seen"]), int(row["waiting"]))
                for row in rows]

    def retire_machine(self, user: str, machine: str) -> bool:
        """Forget ``machine`` for ``user``: no forget of theirs waits for it any more, and those that waited for it
        alone are dropped. Whether it was registered."""
        with self._tx() as db:
            known = db.execute("DELETE FROM machines WHERE owner = %s AND id = %s", (user, machine)).rowcount
            freed = db.execute("DELETE FROM forget_waits WHERE machine = %s AND key IN (SELECT key FROM forgets "
                               "WHERE owner = %s) RETURNING key", (machine, user)).fetchall()
        for row in freed:
            if not self._read("SELECT machine FROM forget_waits WHERE key = %s LIMIT 1", [row["key"]]):
                self._drop_forget(int(row["key"]))
        return bool(known)

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
        return list(self._copies(user))

    def _copies(self, user: str) -> dict[int, str]:
        """Row number -> memory id of ``user``'s vector copies, in row order, read whole once and then kept in step.

        Why: every process that searches the ledger's copies, or holds an index it catches up with them, compares
        these after each change of the mark, which every turn's write moves: reading 10,000 ids took 9-13 ms. So
        only the rows numbered past the last one known are read, in one statement with the count, sum and sum of
        squares of every row number, which must match those of the rows kept: a deletion (a forget on another
        machine) or a row committed after a higher-numbered one (a sequence hands numbers out before commit) makes
        them differ, and everything is read again."""
        with self._lock:
            stamp = self.change_mark()
            known = self._vector_copies.get(user)
            if known is not None and known.stamp == stamp:
                return known.rows
            kept = known or _Copies(stamp)
            rows = self._read(
                """SELECT s.n, s.total, s.squares, v.rowid, v.id
                   FROM (SELECT count(*) AS n, coalesce(sum(rowid), 0) AS total,
                                coalesce(sum(rowid::numeric * rowid), 0) AS squares
                         FROM vectors WHERE owner = %s) AS s
                   LEFT JOIN vectors AS v ON v.owner = %s AND v.rowid > %s ORDER BY v.rowid""",
                [user, user, next(reversed(kept.rows), 0)],
            )
            kept.add({int(row["rowid"]): str(row["id"]) for row in rows if row["rowid"] is not None})
            if (len(kept.rows), kept.total, kept.squares) != tuple(int(rows[0][k]) for k in ("n", "total", "squares")):
                kept = _Copies(stamp, kept.generation + 1)
                kept.add({int(row["rowid"]): str(row["id"]) for row in self._read(
                    "SELECT rowid, id FROM vectors WHERE owner = %s ORDER BY rowid", [user])})
            kept.stamp = stamp
            self._vector_copies[user] = kept
            return kept.rows

    def vector_rows(self, user: str, rowids: Sequence[int]) -> list[tuple[int, str, bytes]]:
        """(row number, memory id, float32 bytes) of ``user``'s vector copies at ``rowids`` that still exist."""
        if not rowids:
            return []
        rows = self._read("SELECT rowid, id, vector FROM vectors WHERE owner = %s AND rowid = ANY(%s)",
                          [user, list(rowids)])
        return [(int(row["rowid"]), str(row["id"]), bytes(row["vector"])) for row in rows]

    def vector_ids(self, user: str) -> list[str]:
        return list(self._copies(user).values())

    def vector_changes(self, user: str, since: tuple[int, int] | None, listing: bool = True) -> VectorChanges:
        """The ids of the rows numbered past ``since``'s highest (``_copies`` reads only those) while no row went
        since; every id once one did (a forget, an eviction), or without a mark (without ``listing``, the mark
        alone). The mark is (generation, highest row number)."""
        with self._lock:
            rows = self._copies(user)
            generation = self._vector_copies[user].generation
            mark = (generation, next(reversed(rows), 0))
            if since is None or since[0] != generation:
                return VectorChanges(mark, list(rows.values()) if listing else [], True)
            added: list[str] = []
            for rowid in reversed(rows):
                if rowid <= since[1]:
                    break
                added.append(rows[rowid])
            return VectorChanges(mark, added[::-1], False)

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
            self._watchdog.close()


if TYPE_CHECKING:  # mypy proves here that the class implements the port the rest of the agent is written against

    def _as_port(ledger: PostgresLedger) -> Ledger:
        return ledger
