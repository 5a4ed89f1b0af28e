"""What only the PostgreSQL ledger has: versioned migrations, the user predicate in every statement, the tables
rewritten after a forget so the data directory keeps no byte of the text, and one line for every way the server
fails. Each test runs against a real server (``tests.pg_server``): a fresh database of the shared cluster, or a
cluster of its own when it stops or kills the server."""

from __future__ import annotations

import os
import re
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from agent.adapters import postgres_ledger
from agent.adapters.postgres_ledger import SCHEMA_VERSION, PostgresLedger
from agent.domain import Change, Links, Quote, StatedFact, Touched
from agent.errors import MemoryUnavailable, StoreLocked
from tests.builders import USER, record
from tests.helpers_store import SHA_SPACE, ShaEmbedder
from tests.pg_server import Cluster, database_files, holding

pytestmark = pytest.mark.slow
psycopg = pytest.importorskip("psycopg")


@pytest.fixture
def ledger(pg_url: str) -> Iterator[PostgresLedger]:
    opened = PostgresLedger(pg_url)
    yield opened
    opened.close()


def one_line(exc: BaseException) -> str:
    text = str(exc)
    assert "\n" not in text and text.endswith("."), text
    return text


# -- migrations ------------------------------------------------------------------------------------------------


EVERY_VERSION = list(range(1, SCHEMA_VERSION + 1))  # each migration, recorded as it was applied


def versions(url: str) -> list[int]:
    with psycopg.connect(url) as conn:
        return [row[0] for row in conn.execute("SELECT version FROM schema_version ORDER BY version")]


def test_a_new_database_gets_the_schema_once_and_a_second_open_changes_nothing(pg_url: str) -> None:
    PostgresLedger(pg_url).close()
    assert versions(pg_url) == EVERY_VERSION
    again = PostgresLedger(pg_url)
    again.put([record("still here")])
    again.close()
    assert versions(pg_url) == EVERY_VERSION
    assert PostgresLedger(pg_url).count(USER) == 1


def test_agents_opening_a_new_database_together_migrate_it_once(pg_url: str) -> None:
    failures: list[BaseException] = []
    start = threading.Barrier(4)

    def open_one() -> None:
        try:
            start.wait(timeout=60)
            PostgresLedger(pg_url).close()
        except BaseException as exc:  # reported below, with the others
            failures.append(exc)

    threads = [threading.Thread(target=open_one) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert failures == [] and not any(thread.is_alive() for thread in threads)
    assert versions(pg_url) == EVERY_VERSION


def test_a_newer_schema_is_refused_in_one_line_and_left_as_it_is(pg_url: str) -> None:
    PostgresLedger(pg_url).close()
    with psycopg.connect(pg_url) as conn:
        conn.execute("INSERT INTO schema_version (version) VALUES (%s)", (SCHEMA_VERSION + 7,))
    with pytest.raises(MemoryUnavailable) as refused:
        PostgresLedger(pg_url)
    assert "newer version of agent" in one_line(refused.value) and "upgrade agent" in str(refused.value)
    assert versions(pg_url) == [*EVERY_VERSION, SCHEMA_VERSION + 7]
    deadline = time.monotonic() + 60  # and the refused ledger left no connection open (its backend ends soon after)
    with psycopg.connect(pg_url, autocommit=True) as conn:
        while conn.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                           "AND application_name = 'agent'").fetchone()[0]:
            if time.monotonic() > deadline:
                pytest.fail("the refused ledger kept its connection")
            time.sleep(0.05)


def test_a_migration_is_one_transaction_a_failed_one_leaves_nothing_and_the_next_open_applies_it(
    pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = PostgresLedger(pg_url)
    first.put([record("written at version 1")])
    first.close()
    broken = (SCHEMA_VERSION + 1, ("ALTER TABLE memories ADD COLUMN mood text NOT NULL DEFAULT ''",
                                   "ALTER TABLE no_such_table ADD COLUMN x int"))
    monkeypatch.setattr(postgres_ledger, "_MIGRATIONS", (*postgres_ledger._MIGRATIONS, broken))
    monkeypatch.setattr(postgres_ledger, "SCHEMA_VERSION", SCHEMA_VERSION + 1)
    with pytest.raises(MemoryUnavailable) as failed:
        PostgresLedger(pg_url)
    one_line(failed.value)
    with psycopg.connect(pg_url) as conn:
        columns = {row[0] for row in conn.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_name = 'memories'")}
    assert "mood" not in columns and versions(pg_url) == EVERY_VERSION
    fixed = (SCHEMA_VERSION + 1, ("ALTER TABLE memories ADD COLUMN mood text NOT NULL DEFAULT ''",))
    monkeypatch.setattr(postgres_ledger, "_MIGRATIONS", (*postgres_ledger._MIGRATIONS[:-1], fixed))
    migrated = PostgresLedger(pg_url)
    assert versions(pg_url) == [*EVERY_VERSION, SCHEMA_VERSION + 1]
    assert [r.text for r in migrated.all(USER)] == ["written at version 1"]
    migrated.close()


# -- one user's rows, never another's --------------------------------------------------------------------------

# The statements that are about the ledger itself, not a user's rows: each says why it needs no user.
LEDGER_WIDE = (
    r"UPDATE changes SET mark = mark \+ 1",  # the change mark, bumped by every write
    r"SELECT mark FROM changes",  # and read
    r"INSERT INTO ledger_meta .*'store_id'", r"SELECT value FROM ledger_meta WHERE key = 'store_id'",  # its id
    r"SELECT to_regclass\('schema_version'\)", r"SELECT max\(version\)",  # the schema
    r"SET lock_timeout", r"VACUUM FULL \w+",  # how long to wait; the rewrite after a forget
    r"SELECT f\.key, f\.owner, f\.ids, f\.texts\b.* FROM forgets f",  # every user's unfinished forgets (agent.forget)
    r"DELETE FROM forgets WHERE key = %s",  # the one finished
    r"SELECT owner FROM forgets WHERE key = %s",  # whose it was, to rewrite that user's partitions
    r"SELECT key FROM forgets WHERE key = %s FOR UPDATE",  # one forget acknowledged: its record locked
    r"forget_waits WHERE key = %s",  # by key: the machines a forget (whoever's) still waits for
    r"INSERT INTO forget_waits \(key, machine\) SELECT %s, id FROM machines WHERE owner = %s",  # the user's ones
    r"UPDATE machines SET last_seen = .* WHERE id = %s AND owner = \(SELECT owner FROM forgets",  # its owner's
    r"SELECT n FROM generate_series\(.*satisfies_hash_partition",  # which partition a user's rows are in: no row read
    r"ledger_meta .*'forget_(mark|key)'",  # the count of forgets recorded, and the key of their digests
    r"SELECT oid FROM pg_database WHERE datname = current_database\(\)",  # which database a connection reached
)
USER_TABLES = ("memories", "vectors", "vector_spaces", "forgets", "machines", "forget_waits", "forgotten",
               "turn_changes")


QUOTE = Quote("I am in Boston", "s", 2, 5.0)


def exercise_every_method(ledger: PostgresLedger) -> set[str]:
    """Call every public method of the ledger once with data to act on; returns their names."""
    memory = record("I live in Boston", facts=(StatedFact("city", "Boston", ""),), extra={"context": "where?"})
    ids = [memory.id]
    vectors = ShaEmbedder().embed([memory.text])

    def together() -> None:
        with ledger.together():
            ledger.touch(USER, ids, time.time())

    calls: dict[str, Callable[[], Any]] = {
        "put": lambda: ledger.put([memory], Change("s", 1, "h", tuple(ids))),
        "get": lambda: ledger.get(USER, ids),
        "all": lambda: ledger.all(USER),
        "ids": lambda: ledger.ids(USER),
        "count": lambda: (ledger.count(USER), ledger.count(USER, "s", 0.0)),
        "touch": lambda: ledger.touch(USER, ids, time.time()),
        "profiled": lambda: ledger.profiled(USER),
        "recent": lambda: ledger.recent(USER, 3),
        "supersede": lambda: ledger.supersede(USER, ids, "other", 1.0),
        "set_facts": lambda: ledger.set_facts(USER, memory.id, memory.facts),
        "restate": lambda: ledger.restate(USER, memory.id, Quote("I am in Boston", "s", 2, 5.0),
                                          Change("s", 2, "h", (), (Touched(memory.id, quote=QUOTE),))),
        "oldest": lambda: ledger.oldest(USER, 3),
        "pages": lambda: list(ledger.pages(USER, 2)),
        "keyword_search": lambda: ledger.keyword_search(USER, "Boston living", 3),
        "set_contexts": lambda: ledger.set_contexts(USER, {memory.id: "a new context"}),
        "vector_space": lambda: ledger.vector_space(USER),
        "claim_vectors": lambda: ledger.claim_vectors(USER, SHA_SPACE),
        "put_vectors": lambda: ledger.put_vectors(USER, ids, vectors),
        "vector_rowids": lambda: ledger.vector_rowids(USER),
        "vector_rows": lambda: ledger.vector_rows(USER, ledger.vector_rowids(USER)),
        "vector_ids": lambda: ledger.vector_ids(USER),
        "id_page": lambda: ledger.id_page(USER, "", 10),
        "stored_vectors": lambda: ledger.stored_vectors(USER, ids),
        "latest_vectors": lambda: ledger.latest_vectors(USER, 3),
        "vector_changes": lambda: ledger.vector_changes(USER, None),
        "store_id": ledger.store_id,
        "change_mark": ledger.change_mark,
        "after_commit": lambda: ledger.after_commit(ledger.change_mark),
        "together": lambda: together(),
        "record_forget": lambda: ledger.record_forget(USER, ids, [memory.text]),
        "forget_mark": ledger.forget_mark,
        "forgotten_since": lambda: ledger.forgotten_since(USER, [memory.text], 0),
        "pending_forgets": ledger.pending_forgets,
        "register_machine": lambda: ledger.register_machine("m1", USER, "laptop"),
        "machines": lambda: ledger.machines(USER),
        "acknowledge_forget": lambda: [ledger.acknowledge_forget(r.key, "m1") for r in ledger.pending_forgets("m1")],
        "retire_machine": lambda: ledger.retire_machine(USER, "m1"),
        "drop_vectors": lambda: ledger.drop_vectors(USER),
        "delete": lambda: (ledger.put([memory]), ledger.delete(USER, ids)),
        "replaced_by": lambda: ledger.replaced_by(USER, ids),
        "set_links": lambda: ledger.set_links(USER, {memory.id: Links("other", 1.0, memory.facts)}),
        "unstate": lambda: (ledger.put([memory]), ledger.restate(USER, memory.id, Quote("again", "s", 2, 5.0)),
                            ledger.unstate(USER, memory.id, Quote("again", "s", 2, 5.0))),
        "changes": lambda: ledger.changes(USER),
        "drop_changes": lambda: ledger.drop_changes(USER, [c.key for c in ledger.changes(USER)]),
    }
    for call in calls.values():
        call()
    return set(calls)


def test_every_statement_on_a_users_rows_names_the_user(ledger: PostgresLedger, monkeypatch: pytest.MonkeyPatch
                                                       ) -> None:
    seen: list[str] = []
    execute, executemany = psycopg.Cursor.execute, psycopg.Cursor.executemany
    monkeypatch.setattr(psycopg.Cursor, "execute", lambda self, query, *a, **k: (
        seen.append(str(query)), execute(self, query, *a, **k))[1])
    monkeypatch.setattr(psycopg.Cursor, "executemany", lambda self, query, *a, **k: (
        seen.append(str(query)), executemany(self, query, *a, **k))[1])
    called = exercise_every_method(ledger)
    public = {name for name in dir(PostgresLedger) if not name.startswith("_") and callable(getattr(ledger, name))}
    assert public - {"close"} == called, "a method this test does not try"
    statements = {" ".join(query.split()) for query in seen}
    unchecked = []
    for sql in sorted(statements):
        if any(re.search(pattern, sql) for pattern in LEDGER_WIDE):
            continue
        assert any(re.search(rf"\b{table}\b", sql) for table in USER_TABLES), f"a statement on no known table: {sql}"
        columns = re.match(r"INSERT INTO \w+ \(([^)]*)\)", sql)
        if columns is not None:
            assert re.search(r"\bowner\b", columns.group(1)), sql
        elif not re.search(r"\bWHERE owner = %s", sql):
            unchecked.append(sql)
    assert unchecked == [], "statements on users' rows without the user predicate"
    assert len(statements) > 30


# -- forget on the server ----------------------------------------------------------------------------------------

TOKEN = b"zqxjvkbw"  # a word no stemmer changes and no other row holds


def test_a_forget_leaves_no_byte_of_the_text_in_the_database_files(pg_cluster: Cluster) -> None:
    url = pg_cluster.new_database()
    ledger = PostgresLedger(url)
    secret = record(f"My locker code is {TOKEN.decode()} and nobody knows it", extra={"context": "what is it?"})
    context = record("The alarm is off on Sundays", extra={"context": f"ask {TOKEN.decode()}x about it"})
    long = record(f"{TOKEN.decode()}y " + " ".join(f"w{n:05d}" for n in range(900)))  # over 2 kB: TOAST
    others = [record(f"an ordinary memory {n}") for n in range(40)]
    ledger.put([secret, context, long, *others])
    ledger.claim_vectors(USER, SHA_SPACE)
    ledger.put_vectors(USER, [secret.id], ShaEmbedder().embed([secret.text]))
    ledger.touch(USER, [secret.id, context.id], time.time() + 5)  # dead row versions that hold the text too
    ledger.restate(USER, secret.id, Quote(f"again, {TOKEN.decode()}z", "s", 3, time.time()))
    assert holding(database_files(pg_cluster, url), TOKEN), "the scan must see the text while it is there"
    texts = [secret.text, context.text, long.text]
    key, count = ledger.record_forget(USER, [secret.id, context.id, long.id], texts)
    assert count == 3
    ledger.acknowledge_forget(key, "")
    files = database_files(pg_cluster, url)
    assert holding(files, TOKEN) == []
    assert holding(files, b"nobody knows it") == [] and holding(files, b"alarm is off") == []
    assert ledger.count(USER) == 40 and ledger.keyword_search(USER, "ordinary", 50)
    ledger.close()


def test_an_undo_leaves_no_byte_of_the_quote_it_takes_back_nor_of_the_changes_it_drops(pg_cluster: Cluster) -> None:
    url = pg_cluster.new_database()
    ledger = PostgresLedger(url)
    memory = record("I am allergic to peanuts")
    quote = Quote(f"peanuts, my doctor {TOKEN.decode()} says", "s", 2, time.time())
    ledger.put([memory, *(record(f"an ordinary memory {n}") for n in range(20))])
    gone = "0f" * 16  # the id of a memory the turn created, forgotten since
    ledger.restate(USER, memory.id, quote, Change("s", 2, "h", (gone,), (Touched(memory.id, quote=quote),)))
    assert holding(database_files(pg_cluster, url), TOKEN) and holding(database_files(pg_cluster, url), gone.encode())
    ledger.unstate(USER, memory.id, quote)
    ledger.drop_changes(USER, [c.key for c in ledger.changes(USER)])
    files = database_files(pg_cluster, url)
    assert holding(files, TOKEN) == [] and holding(files, gone.encode()) == []
    assert ledger.get(USER, [memory.id])[memory.id].restated == () and ledger.count(USER) == 21
    ledger.close()


def test_a_forget_rewrites_the_partition_of_its_user_and_leaves_the_others_alone(ledger: PostgresLedger) -> None:
    mine = ledger._partitions(USER)
    other = next(name for name in (f"user{n}" for n in range(1000)) if ledger._partitions(name) != mine)
    ledger.put([record("mine to forget"), record("a memory of someone else", user=other)])

    def files() -> dict[str, int]:
        rows = ledger._read("SELECT relname, relfilenode FROM pg_class WHERE relname ~ '^(memories|vectors)_[0-9]+$'")
        return {row["relname"]: int(row["relfilenode"]) for row in rows}

    before = files()
    key, _ = ledger.record_forget(USER, [record("mine to forget").id], ["mine to forget"])
    ledger.acknowledge_forget(key, "")
    after = files()
    assert {name for name in before if before[name] != after[name]} == set(mine)  # VACUUM FULL: new files
    assert [r.text for r in ledger.all(other)] == ["a memory of someone else"]


def test_a_forget_whose_tables_cannot_be_rewritten_keeps_its_record_to_be_finished_later(
    ledger: PostgresLedger, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory = record("I keep my spare key in the blue vase")
    ledger.put([memory])
    key, _ = ledger.record_forget(USER, [memory.id], [memory.text])
    monkeypatch.setattr(postgres_ledger, "VACUUM_WAIT", 1.0)
    with psycopg.connect(pg_url) as reader, reader.transaction():
        reader.execute("SELECT count(*) FROM memories")  # a reader still in its transaction: no rewrite now
        with pytest.raises(StoreLocked) as locked:
            ledger.acknowledge_forget(key, "")
    assert "could not rewrite the forgotten memories' tables" in one_line(locked.value)
    assert [r.key for r in ledger.pending_forgets()] == [key]
    ledger.acknowledge_forget(key, "")
    assert ledger.pending_forgets() == []


def test_agents_writing_at_once_lose_nothing(pg_url: str) -> None:
    ledgers = [PostgresLedger(pg_url) for _ in range(4)]
    shared = record("a memory every agent restates")
    ledgers[0].put([shared])
    failures: list[BaseException] = []
    start = threading.Barrier(len(ledgers))

    def write(n: int, ledger: PostgresLedger) -> None:
        try:
            start.wait(timeout=60)
            for i in range(25):
                memory = record(f"agent {n} fact {i}")
                ledger.put([memory])
                ledger.claim_vectors(USER, SHA_SPACE)
                ledger.put_vectors(USER, [memory.id], ShaEmbedder().embed([memory.text]))
                ledger.touch(USER, [memory.id], time.time())
                ledger.restate(USER, shared.id, Quote(f"from {n} {i}", "s", i, 1.0))
        except BaseException as exc:  # reported below
            failures.append(exc)

    threads = [threading.Thread(target=write, args=(n, ledger)) for n, ledger in enumerate(ledgers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    assert failures == [] and not any(thread.is_alive() for thread in threads)
    check = ledgers[0]
    written = [record(f"agent {n} fact {i}").id for n in range(4) for i in range(25)]
    assert sorted(check.ids(USER)) == sorted([*written, shared.id])
    assert sorted(check.vector_ids(USER)) == sorted(written)
    quotes = check.get(USER, [shared.id])[shared.id].restated  # no read-modify-write overwrote another one's
    assert sorted(q.text for q in quotes) == sorted(f"from {n} {i}" for n in range(4) for i in range(25))
    for ledger in ledgers:
        ledger.close()


# -- every failure of the server, one line -----------------------------------------------------------------------


def test_no_server_at_the_port_is_one_line_naming_it_without_the_password(pg_cluster: Cluster) -> None:
    import socket

    with socket.socket() as probe:  # a port nothing listens on: bound, never listening
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
        with pytest.raises(MemoryUnavailable) as refused:
            PostgresLedger(f"postgresql://agent:s3cret@127.0.0.1:{port}/memory")
    line = one_line(refused.value)
    assert f"127.0.0.1:{port}/memory refused the connection" in line and "s3cret" not in line


def test_a_missing_database_and_an_unknown_user_are_one_line_each(pg_cluster: Cluster) -> None:
    with pytest.raises(MemoryUnavailable) as missing:
        PostgresLedger(pg_cluster.url("no_such_db"))
    assert "no_such_db does not exist" in one_line(missing.value)
    with pytest.raises(MemoryUnavailable) as nobody:
        PostgresLedger(f"postgresql://nosuchrole:pw@127.0.0.1:{pg_cluster.port}/postgres")
    line = one_line(nobody.value)
    assert "refused the user name or password" in line and "pw@" not in line


def test_a_wrong_password_is_one_line_that_never_shows_it(own_cluster: Cluster) -> None:
    own_cluster.sql("CREATE ROLE agent LOGIN PASSWORD 'right-one'")
    hba = own_cluster.data / "pg_hba.conf"
    owner = hba.stat()
    hba.write_text("host all agent 127.0.0.1/32 scram-sha-256\n" + hba.read_text())  # first match wins
    os.chown(hba, owner.st_uid, owner.st_gid)
    own_cluster.sql("SELECT pg_reload_conf()")  # a signal: the server reads the file a moment later
    wrong = f"postgresql://agent:wrong-one@127.0.0.1:{own_cluster.port}/postgres"
    deadline = time.monotonic() + 60
    while True:
        try:
            psycopg.connect(wrong, connect_timeout=30).close()
        except psycopg.OperationalError:
            break
        if time.monotonic() > deadline:
            pytest.fail("the server never asked for the password")
        time.sleep(0.05)
    with pytest.raises(MemoryUnavailable) as refused:
        PostgresLedger(wrong)
    line = one_line(refused.value)
    assert "refused the user name or password" in line and "wrong-one" not in line


def test_a_url_that_does_not_parse_is_a_setting_error() -> None:
    from agent.errors import ConfigError

    with pytest.raises(ConfigError) as bad:
        PostgresLedger("postgresql://x y z")
    one_line(bad.value)


def test_a_url_without_a_host_is_named_by_the_local_socket_libpq_takes(monkeypatch: pytest.MonkeyPatch) -> None:
    from agent.adapters.postgres_ledger import where

    monkeypatch.delenv("PGHOST", raising=False)
    monkeypatch.delenv("PGPORT", raising=False)
    assert where("postgresql:///agent") == "local socket:5432/agent"
    assert where("postgresql://db.example:6543/agent") == "db.example:6543/agent"
    monkeypatch.setenv("PGHOST", "/run/postgresql")
    assert where("postgresql:///agent") == "/run/postgresql:5432/agent"


def test_a_database_holding_another_applications_memories_table_is_refused_and_left_as_it_was(pg_url: str) -> None:
    from agent.errors import ConfigError

    with psycopg.connect(pg_url, autocommit=True) as other:
        other.execute("CREATE TABLE memories (note text)")
        other.execute("INSERT INTO memories VALUES ('theirs')")
    with pytest.raises(ConfigError) as refused:
        PostgresLedger(pg_url)
    line = one_line(refused.value)
    assert "already holds tables of another application" in line and "a database of its own" in line
    with psycopg.connect(pg_url) as other:
        assert other.execute("SELECT note FROM memories").fetchall() == [("theirs",)]
        assert other.execute("SELECT to_regclass('schema_version')").fetchone() == (None,), "nothing of ours left"


def test_a_lock_held_too_long_by_another_transaction_is_one_line(ledger: PostgresLedger, pg_url: str) -> None:
    with psycopg.connect(pg_url) as other, other.transaction():
        other.execute("UPDATE changes SET mark = mark + 1")  # a writer that does not finish
        with pytest.raises(StoreLocked) as locked:
            ledger.put([record("waits, then gives up")])
    assert "locked by another transaction" in one_line(locked.value)
    ledger.put([record("goes in once the other one ended")])
    assert ledger.count(USER) == 1


def test_the_server_stopped_is_one_line_and_memory_heals_when_it_is_back(own_cluster: Cluster) -> None:
    url = own_cluster.new_database()
    ledger = PostgresLedger(url)
    ledger.put([record("before the outage")])
    own_cluster.stop("immediate")
    with pytest.raises(MemoryUnavailable) as gone:
        ledger.put([record("during the outage")])
    assert "went away" in one_line(gone.value) or "refused the connection" in str(gone.value)
    with pytest.raises(MemoryUnavailable) as still:
        ledger.all(USER)
    assert "refused the connection" in one_line(still.value)
    own_cluster.start()
    ledger.put([record("after the outage")])
    assert sorted(r.text for r in ledger.all(USER)) == ["after the outage", "before the outage"]
    ledger.close()


def test_a_connection_cut_in_the_middle_of_a_statement_is_one_line_and_the_next_call_reconnects(
    ledger: PostgresLedger, pg_url: str
) -> None:
    ledger.put([record("kept")])
    ledger._connection().execute("SET lock_timeout = 0")  # it waits until it is cut, however slow this machine is
    with psycopg.connect(pg_url, autocommit=True) as other, other.transaction():
        other.execute("UPDATE changes SET mark = mark + 1")  # the ledger's next write waits on this lock
        pid = ledger._connection().info.backend_pid
        failure: list[BaseException] = []

        def write() -> None:
            try:
                ledger.put([record("cut short")])
            except BaseException as exc:  # checked below
                failure.append(exc)

        writer = threading.Thread(target=write)
        writer.start()
        deadline = time.monotonic() + 60
        while not other.execute("SELECT 1 FROM pg_stat_activity WHERE pid = %s AND wait_event_type = 'Lock'",
                                (pid,)).fetchone():
            if time.monotonic() > deadline:
                pytest.fail("the ledger's write never waited on the lock")
            time.sleep(0.02)
        other.execute("SELECT pg_terminate_backend(%s)", (pid,))  # the server ends it mid-statement
        writer.join(timeout=60)
    assert len(failure) == 1 and isinstance(failure[0], MemoryUnavailable)
    assert "went away" in one_line(failure[0])
    assert [r.text for r in ledger.all(USER)] == ["kept"]  # nothing half-written, and connected again
