"""A forget on a shared PostgreSQL ledger waits for every machine of its user (``agent.forget``): the record stays
until each machine registered when it was made has acknowledged it, and the last acknowledgement drops it with no
byte left in the database's files. Real server (``tests.pg_server``), one fresh database per test; a "machine" here
is a machine id, the ledger's own view of one."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from agent.adapters import postgres_ledger
from agent.adapters.postgres_ledger import PostgresLedger
from tests.builders import OTHER, USER, record
from tests.pg_server import Cluster, database_files, holding

pytestmark = pytest.mark.slow
psycopg = pytest.importorskip("psycopg")

LAPTOP, DESKTOP, PHONE = "a" * 32, "b" * 32, "c" * 32
SECRET = "My locker code is qzvxkw 4417"


@pytest.fixture
def ledger(pg_url: str) -> Iterator[PostgresLedger]:
    opened = PostgresLedger(pg_url)
    yield opened
    opened.close()


def forgotten_on(ledger: PostgresLedger, *machines: str) -> int:
    """``SECRET`` remembered, ``machines`` registered for ``USER``, and then forgotten: the record's key."""
    memory = record(SECRET)
    ledger.put([memory])
    for machine in machines:
        ledger.register_machine(machine, USER, f"host-{machine[0]}")
    key, count = ledger.record_forget(USER, [memory.id], [SECRET])
    assert count == 1
    return key


def test_a_forget_waits_for_every_machine_registered_then_and_the_last_acknowledgement_drops_it(
    pg_cluster: Cluster,
) -> None:
    url = pg_cluster.new_database()
    ledger = PostgresLedger(url)
    try:
        key = forgotten_on(ledger, LAPTOP, DESKTOP)
        ledger.register_machine(PHONE, USER, "phone")  # registered after the forget: nothing of it to scrub
        [waiting] = ledger.pending_forgets()
        assert (waiting.key, waiting.waiting, waiting.texts) == (key, (LAPTOP, DESKTOP), (SECRET,))
        assert [r.key for r in ledger.pending_forgets(PHONE)] == []
        ledger.acknowledge_forget(key, LAPTOP)
        assert [r.key for r in ledger.pending_forgets(LAPTOP)] == [], "the laptop is done with it"
        assert [r.waiting for r in ledger.pending_forgets(DESKTOP)] == [(DESKTOP,)]
        assert {m.id: m.waiting for m in ledger.machines(USER)} == {LAPTOP: 0, DESKTOP: 1, PHONE: 0}
        assert holding(database_files(pg_cluster, url), b"qzvxkw"), "the record holds the text until the last one"
        ledger.acknowledge_forget(key, DESKTOP)
        assert ledger.pending_forgets() == []
        assert holding(database_files(pg_cluster, url), b"qzvxkw") == [], "no table or index file keeps it"
    finally:
        ledger.close()


def test_machines_and_their_waits_are_the_users_own(ledger: PostgresLedger) -> None:
    ledger.register_machine(LAPTOP, OTHER, "laptop")
    key = forgotten_on(ledger, DESKTOP)  # USER's forget: the other user's laptop has none of USER's words
    assert [m.id for m in ledger.machines(OTHER)] == [LAPTOP]
    assert [r.waiting for r in ledger.pending_forgets()] == [(DESKTOP,)]
    assert not ledger.retire_machine(OTHER, DESKTOP), "a user cannot retire another user's machine"
    assert [r.key for r in ledger.pending_forgets(DESKTOP)] == [key]


def test_retiring_a_machine_that_never_comes_back_drops_the_forgets_that_waited_for_it_alone(
    ledger: PostgresLedger,
) -> None:
    first = forgotten_on(ledger, LAPTOP, DESKTOP)
    ledger.acknowledge_forget(first, LAPTOP)
    second = ledger.record_forget(USER, [], ["another forgotten text"])[0]
    assert ledger.retire_machine(USER, DESKTOP)
    assert [(r.key, r.waiting) for r in ledger.pending_forgets()] == [(second, (LAPTOP,))]
    assert [m.id for m in ledger.machines(USER)] == [LAPTOP]
    assert not ledger.retire_machine(USER, DESKTOP), "retired already"


def test_two_machines_acknowledging_at_once_drop_the_record_once(pg_url: str) -> None:
    ledgers = [PostgresLedger(pg_url) for _ in range(2)]
    try:
        key = forgotten_on(ledgers[0], LAPTOP, DESKTOP)
        start = threading.Barrier(2)
        failures: list[BaseException] = []

        def acknowledge(ledger: PostgresLedger, machine: str) -> None:
            try:
                start.wait(timeout=60)
                ledger.acknowledge_forget(key, machine)
            except BaseException as exc:  # reported below
                failures.append(exc)

        threads = [threading.Thread(target=acknowledge, args=pair)
                   for pair in zip(ledgers, (LAPTOP, DESKTOP), strict=True)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=120)
        assert failures == [] and not any(thread.is_alive() for thread in threads)
        assert ledgers[0].pending_forgets() == [], "neither left it behind for the other"
    finally:
        for ledger in ledgers:
            ledger.close()


def test_a_record_no_machine_waits_for_is_finished_by_whichever_machine_starts(ledger: PostgresLedger) -> None:
    """A forget recorded before any machine registered (a database of schema 1), or left by a crash between the last
    acknowledgement and the drop: any machine's next start finishes it."""
    key = forgotten_on(ledger)
    assert [r.key for r in ledger.pending_forgets(PHONE)] == [key]
    ledger.acknowledge_forget(key, PHONE)
    assert ledger.pending_forgets() == []



def test_a_forget_recorded_at_schema_1_is_finished_by_the_first_machine_after_the_migration(
    pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(postgres_ledger, "_MIGRATIONS", postgres_ledger._MIGRATIONS[:1])
    monkeypatch.setattr(postgres_ledger, "SCHEMA_VERSION", 1)
    PostgresLedger(pg_url).close()
    with psycopg.connect(pg_url) as conn:  # a forget as schema 1 recorded it, its agent killed before it finished
        conn.execute("INSERT INTO forgets (owner, ids, texts) VALUES (%s, '[]', %s)", (USER, f'["{SECRET}"]'))
    monkeypatch.undo()
    ledger = PostgresLedger(pg_url)
    try:
        ledger.register_machine(LAPTOP, USER, "laptop")
        [waiting] = ledger.pending_forgets(LAPTOP)
        assert waiting.texts == (SECRET,) and waiting.waiting == () and waiting.made_at > 0
        ledger.acknowledge_forget(waiting.key, LAPTOP)
        assert ledger.pending_forgets() == []
    finally:
        ledger.close()
