"""What keeps the PostgreSQL ledger cheap on the reply path without changing what it answers (issue 11 §2): the
keyword search that does not rank every matching row, the keyword index that takes inserts at once, the vector
copies kept in step without reading them all, an open that writes nothing, and an eviction that rewrites no
table (a forget still does). Real server (``tests.pg_server``), a fresh database per test."""

from __future__ import annotations

from array import array
from collections.abc import Iterator

import pytest

from agent.adapters import postgres_ledger
from agent.adapters.postgres_ledger import PostgresLedger
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


def test_every_partition_of_the_keyword_index_takes_inserts_at_once(ledger: PostgresLedger) -> None:
    rows = ledger._read("SELECT c.relname, c.reloptions FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid "
                        "WHERE i.inhparent = 'memories_search'::regclass")
    assert len(rows) == postgres_ledger.PARTITIONS
    assert all("fastupdate=off" in (row["reloptions"] or []) for row in rows), rows


def test_a_common_word_weighs_in_but_the_rare_word_decides(ledger: PostgresLedger,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(postgres_ledger, "COMMON_WORD", 5)  # "garden" is in 12 memories: a common word
    gardens = [record(f"the garden needs work number {n}", at=1000.0 + n) for n in range(12)]
    both = record("the heron visited the garden pond", at=900.0)
    heron = record("a heron stood by the river", at=800.0)
    ledger.put([*gardens, both, heron])
    hits = [mid for mid, _ in ledger.keyword_search(USER, "heron garden", 10)]
    assert hits[:2] == [both.id, heron.id], "the rare word finds them, the common one orders them"
    assert set(hits[2:]) <= {r.id for r in gardens}, "and fills the rest, the rarer words finding fewer than k"
    alone = [mid for mid, _ in ledger.keyword_search(USER, "garden", 3)]
    assert len(alone) == 3 and set(alone) <= {r.id for r in [*gardens, both]}
    assert ledger.keyword_search(USER, "ocelot", 3) == [], "a word no memory has finds nothing"


def test_the_vector_copies_follow_rewrites_deletions_and_a_row_committed_after_a_higher_numbered_one(
    ledger: PostgresLedger, pg_url: str
) -> None:
    ledger.claim_vectors(USER, SHA_SPACE)
    first, late, early = (record(text) for text in ("first", "committed late", "committed early"))
    ledger.put_vectors(USER, [first.id], ShaEmbedder().embed([first.text]))
    assert ledger.vector_ids(USER) == [first.id]
    blob = array("f", ShaEmbedder().embed(["x"])[0]).tobytes()
    insert = "INSERT INTO vectors (owner, id, vector) VALUES (%s, %s, %s)"
    # A writer that takes its row number before another's and commits after it (the ledger's own writers take
    # their turn on the change mark first, so only a writer outside that order does this): still caught.
    with psycopg.connect(pg_url) as slow, psycopg.connect(pg_url, autocommit=True) as quick:
        with slow.transaction():
            slow.execute(insert, (USER, late.id, blob))
            with quick.transaction():
                quick.execute(insert, (USER, early.id, blob))
                quick.execute("UPDATE changes SET mark = mark + 1")
            assert sorted(ledger.vector_ids(USER)) == sorted([first.id, early.id])
            slow.execute("UPDATE changes SET mark = mark + 1")
    assert sorted(ledger.vector_ids(USER)) == sorted([first.id, early.id, late.id])
    ledger.put_vectors(USER, [first.id], ShaEmbedder().embed(["rewritten"]))  # a new row number, the same id
    other = PostgresLedger(pg_url)
    other.delete(USER, [early.id])  # a forget on another machine
    other.close()
    assert sorted(ledger.vector_ids(USER)) == sorted([first.id, late.id])
    with psycopg.connect(pg_url) as check:
        rowids = [row[0] for row in check.execute("SELECT rowid FROM vectors WHERE owner = %s", (USER,))]
    assert sorted(ledger.vector_rowids(USER)) == sorted(rowids)


def test_opening_a_ledger_again_writes_nothing(ledger: PostgresLedger, pg_url: str) -> None:
    made = ledger.store_id()
    mark = ledger.change_mark()
    again = PostgresLedger(pg_url)
    assert again.store_id() == made and again.change_mark() == mark == ledger.change_mark()
    again.close()


def test_an_eviction_rewrites_no_table_and_the_next_forget_leaves_none_of_it(pg_cluster: Cluster) -> None:
    url = pg_cluster.new_database()
    ledger = PostgresLedger(url)
    evicted = record("my old locker code is qxvbnmzt")
    forgotten = record("the spare key is under the mat")
    ledger.put([evicted, forgotten, *(record(f"an ordinary memory {n}") for n in range(20))])

    def files() -> dict[str, int]:
        rows = ledger._read("SELECT relname, relfilenode FROM pg_class WHERE relname ~ '^(memories|vectors)_[0-9]+$'")
        return {row["relname"]: int(row["relfilenode"]) for row in rows}

    before = files()
    assert ledger.delete(USER, [evicted.id]) == 1
    assert files() == before, "no table rewritten by an eviction"
    assert ledger.get(USER, [evicted.id]) == {} and ledger.keyword_search(USER, "qxvbnmzt", 5) == []
    key, _ = ledger.record_forget(USER, [forgotten.id], [forgotten.text])
    ledger.acknowledge_forget(key, "")  # no machine registered: the first one drops it
    assert files() != before
    found = database_files(pg_cluster, url)
    assert holding(found, b"qxvbnmzt") == [] and holding(found, b"spare key is under") == []
    assert ledger.count(USER) == 20
    ledger.close()
