"""The ledger's ports (``agent.ports``: ``MemoryStore``, ``ForgetJournal``, ``MachineRegistry``, ``VectorCopies``,
``ChangeFeed``, and ``Ledger`` their union), every method of each run against both backends: the SQLite file and a
real PostgreSQL (``tests.pg_server``).

Each test opens the ledger through ``open_ledger``; opening it twice gives two connections to one store, which is
what two processes (or two machines, for PostgreSQL) see. The PostgreSQL runs are marked ``slow``: they need the
server binaries of the ``servers`` extra."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from agent.adapters.chroma_index import ChromaIndex, open_client
from agent.adapters.index_holder import HeldIndex
from agent.adapters.ledger import SqliteLedger
from agent.adapters.ledger_vectors import LedgerVectors
from agent.domain import Change, Links, Quote, StatedFact, Touched, memory_id
from tests.builders import OTHER, USER, record
from tests.helpers_store import SHA_SPACE, ShaEmbedder

Opener = Callable[[], Any]


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.slow)])
def open_ledger(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Opener]:
    """Opens a connection to this test's one store; every connection opened is closed at the end."""
    opened: list[Any] = []
    if request.param == "sqlite":
        make: Opener = lambda: SqliteLedger(tmp_path / "ledger.sqlite3")  # noqa: E731
    else:
        from agent.adapters.postgres_ledger import PostgresLedger

        url = request.getfixturevalue("pg_url")
        make = lambda: PostgresLedger(url)  # noqa: E731

    def opener() -> Any:
        opened.append(make())
        return opened[-1]

    yield opener
    for ledger in opened:
        ledger.close()


def test_a_memory_comes_back_as_it_was_put_with_its_facts_quotes_and_extra(open_ledger: Opener) -> None:
    ledger = open_ledger()
    quote = Quote("I moved to Boston again", "s2", 4, 123.5)
    fact = StatedFact("city", "Boston", "")
    memory = record("I live in Boston", extra={"context": "where do you live?", "dia_id": "D1:2"},
                    facts=(fact,), restated=(quote,), kind="explicit")
    ledger.put([memory])
    assert ledger.get(USER, [memory.id]) == {memory.id: memory}
    assert ledger.all(USER) == [memory]
    assert ledger.get(USER, []) == {} and ledger.get(USER, ["nope"]) == {}


def test_pages_give_all_in_its_order_a_page_at_a_time_without_another_users_or_a_deleted_one(
        open_ledger: Opener) -> None:
    ledger = open_ledger()
    texts = [f"I planted row {n} of the garden" for n in range(30)]
    ledger.put([record(texts[n], at=1000.0 + n) for n in (29, 3, 17, *range(30))])  # created in another order
    ledger.put([record("a memory of someone else", OTHER, at=1.0)])
    pages = ledger.pages(USER, 8)
    first = next(pages)
    open_ledger().delete(USER, [memory_id(USER, texts[12])])  # another connection, between two pages
    rest = list(pages)
    assert [len(first), *map(len, rest)] == [8, 7, 8, 6]
    assert [r.text for page in [first, *rest] for r in page] == [t for n, t in enumerate(texts) if n != 12]
    assert [r for page in ledger.pages(USER, 100) for r in page] == ledger.all(USER)
    assert list(ledger.pages("nobody", 8)) == []


def test_putting_a_memory_again_keeps_its_creation_and_takes_the_later_sighting(open_ledger: Opener) -> None:
    ledger = open_ledger()
    first = record("I walk the dog", at=100.0)
    ledger.put([first])
    ledger.put([record("I walk the dog", at=200.0)])
    ledger.put([record("I walk the dog", at=150.0)])
    again = ledger.get(USER, [first.id])[first.id]
    assert (again.created_at, again.last_seen) == (100.0, 200.0)
    assert ledger.count(USER) == 1


def test_count_by_session_leaves_out_explicit_memories_and_older_ones(open_ledger: Opener) -> None:
    ledger = open_ledger()
    ledger.put([record("a turn fact", at=100.0), record("a later turn fact", at=200.0),
                record("an explicit one", at=200.0, kind="explicit"), record("elsewhere", at=200.0, session="x")])
    assert ledger.count(USER) == 4
    assert ledger.count(USER, "s") == 2
    assert ledger.count(USER, "s", since=150.0) == 1


def test_count_of_current_memories_leaves_out_the_replaced_ones_seen_by_another_connection(
        open_ledger: Opener) -> None:
    """What the toolbar counts: the memories ``/memories`` lists, not the ones a later memory replaced."""
    mine, other = open_ledger(), open_ledger()
    old, new = record("I live in Boston", at=100.0), record("I live in Denver", at=200.0)
    mine.put([old, new, record("I play the cello", at=150.0)])
    assert (mine.count(USER), mine.count(USER, current=True)) == (3, 3)
    other.supersede(USER, [old.id], new.id, 200.0)
    assert (mine.count(USER), mine.count(USER, current=True)) == (3, 2)
    assert mine.count(OTHER, current=True) == 0


def test_the_count_follows_every_write_of_this_connection_and_of_another(open_ledger: Opener) -> None:
    """The count a write asks twice (room, eviction) is kept between writes on SQLite: whatever wrote last, this
    connection (a new memory, one said again, a sighting, a vector, a delete, a forget) or another, it is the
    number of memories held."""
    mine, other = open_ledger(), open_ledger()
    a, b, c = record("alpha note"), record("beta note"), record("gamma note")
    steps: list[tuple[Callable[[], object], int]] = [
        (lambda: mine.put([a, b]), 2),
        (lambda: mine.put([a, c]), 3),  # a again: one new
        (lambda: mine.put([record("delta", user=OTHER)]), 3),
        (lambda: mine.touch(USER, [a.id], time.time() + 5), 3),
        (lambda: mine.claim_vectors(USER, SHA_SPACE), 3),
        (lambda: mine.put_vectors(USER, [a.id], [[0.1] * ShaEmbedder.dimension]), 3),
        (lambda: other.put([record("epsilon note")]), 4),
        (lambda: mine.put([record("zeta note")]), 5),
        (lambda: mine.delete(USER, [b.id]), 4),
        (lambda: other.delete(USER, [c.id]), 3),
        (lambda: mine.record_forget(USER, [a.id], [a.text]), 2),
        (lambda: mine.put([b]), 3),
    ]
    for step, held in steps:
        step()
        assert (mine.count(USER), other.count(USER)) == (held, held)
    assert mine.count(OTHER) == 1


def test_a_write_after_a_write_reads_the_count_from_what_it_wrote(tmp_path: Path) -> None:
    """SQLite's count(*) reads every row of the user; a chat's writes (a sighting, the memory, its vector) carry
    the count they read before instead of reading it again."""
    ledger = SqliteLedger(tmp_path / "ledger.sqlite3")
    try:
        ledger.put([record("alpha note")])
        ledger.count(USER)
        statements: list[str] = []
        ledger._db.set_trace_callback(statements.append)
        for n in range(3):
            ledger.touch(USER, [memory_id(USER, "alpha note")], time.time() + n)
            ledger.put([record(f"note {n}")])
            assert ledger.count(USER) == 2 + n
        ledger._db.set_trace_callback(None)
        whole = [s for s in statements if s.startswith("SELECT count(*) FROM memories") and " id IN " not in s]
        assert statements and not whole
    finally:
        ledger.close()


def test_touch_oldest_and_recent_follow_the_last_sighting(open_ledger: Opener) -> None:
    ledger = open_ledger()
    a, b, c = (record(t, at=at) for t, at in (("alpha", 100.0), ("beta", 200.0), ("gamma", 300.0)))
    ledger.put([a, b, c])
    assert ledger.oldest(USER, 2) == [a.id, b.id]
    ledger.touch(USER, [a.id], 400.0)
    ledger.touch(USER, [c.id], 50.0)  # never moves back
    assert ledger.oldest(USER, 3) == [b.id, c.id, a.id]
    assert [r.id for r in ledger.recent(USER, 2)] == [a.id, c.id]


def test_supersede_and_set_facts_and_the_profile_seen_by_another_connection(open_ledger: Opener) -> None:
    mine, other = open_ledger(), open_ledger()
    old = record("I live in Boston", facts=(StatedFact("city", "Boston", ""),), at=100.0)
    new = record("I live in Denver", facts=(StatedFact("city", "Denver", ""),), at=200.0)
    mine.put([old, record("no facts here", at=150.0)])
    assert [r.id for r in mine.profiled(USER)] == [old.id]
    other.put([new])
    other.supersede(USER, [old.id], new.id, 200.0)
    other.set_facts(USER, old.id, (StatedFact("city", "Boston", new.id),))
    profile = mine.profiled(USER)  # cached until the change mark moved: it moved
    assert [r.id for r in profile] == [old.id, new.id]
    assert profile[0].superseded_by == new.id and profile[0].superseded_at == 200.0
    assert profile[0].facts == (StatedFact("city", "Boston", new.id),)
    assert [r.id for r in mine.recent(USER, 5)] == [new.id, record("no facts here").id]
    mine.supersede(USER, [old.id], "", 0.0)
    assert mine.get(USER, [old.id])[old.id].current


def test_a_restatement_joins_the_provenance_and_its_words_find_the_memory(open_ledger: Opener) -> None:
    ledger = open_ledger()
    memory = record("My sister plays the violin", at=100.0)
    ledger.put([memory])
    quote = Quote("my sibling is a fiddler in an orchestra", "s2", 3, 300.0)
    ledger.restate(USER, memory.id, quote)
    ledger.restate(USER, "missing", quote)  # nothing to restate: nothing happens
    again = ledger.get(USER, [memory.id])[memory.id]
    assert again.restated == (quote,) and again.last_seen == 300.0
    assert [hit[0] for hit in ledger.keyword_search(USER, "orchestra fiddler", 5)] == [memory.id]


def test_set_links_rewrites_several_memories_at_once_and_replaced_by_finds_what_a_memory_replaced(
    open_ledger: Opener,
) -> None:
    mine, other = open_ledger(), open_ledger()
    boston = record("I live in Boston", facts=(StatedFact("home", "Boston", ""),), at=100.0)
    berlin = record("I moved to Berlin", facts=(StatedFact("home", "Berlin", ""),), at=200.0)
    corrected = record("my sister is Anna", at=150.0)
    mine.put([boston, berlin, corrected])
    mine.set_links(USER, {boston.id: Links(berlin.id, 200.0, (StatedFact("home", "Boston", berlin.id),)),
                          corrected.id: Links(berlin.id, 250.0, ()), "missing": Links("", 0.0, ())})
    assert sorted(r.id for r in other.replaced_by(USER, [berlin.id, "nothing"])) == sorted([boston.id, corrected.id])
    assert Links.of(other.get(USER, [boston.id])[boston.id]) == Links(berlin.id, 200.0,
                                                                      (StatedFact("home", "Boston", berlin.id),))
    assert [r.id for r in other.profiled(USER) if not r.current] == [boston.id]
    mine.set_links(USER, {boston.id: Links("", 123.0, (StatedFact("home", "Boston", ""),))})
    assert Links.of(other.get(USER, [boston.id])[boston.id]) == Links("", 0.0, (StatedFact("home", "Boston", ""),))
    assert other.replaced_by(USER, []) == [] and other.replaced_by(OTHER, [berlin.id]) == []


def test_unstate_takes_one_quote_out_of_the_provenance_and_the_keyword_index(open_ledger: Opener) -> None:
    ledger = open_ledger()
    memory = record("My sister plays the violin", at=100.0)
    ledger.put([memory])
    kept, taken = Quote("my sibling is in an orchestra", "s2", 3, 300.0), Quote("she fiddles daily", "s3", 1, 400.0)
    ledger.restate(USER, memory.id, kept)
    ledger.restate(USER, memory.id, taken)
    ledger.unstate(USER, memory.id, taken)
    ledger.unstate(USER, memory.id, taken)  # gone already: nothing happens
    ledger.unstate(USER, "missing", kept)
    assert open_ledger().get(USER, [memory.id])[memory.id].restated == (kept,)
    assert ledger.keyword_search(USER, "fiddles daily", 5) == []
    assert [hit[0] for hit in ledger.keyword_search(USER, "orchestra", 5)] == [memory.id]


def test_changes_are_kept_with_their_write_per_user_bounded_and_dropped_by_key(
    open_ledger: Opener, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agent.adapters import ledger as sqlite_ledger
    from agent.adapters import postgres_ledger

    for module in (sqlite_ledger, postgres_ledger):
        monkeypatch.setattr(module, "CHANGES_KEPT", 3)
    mine, other = open_ledger(), open_ledger()
    assert mine.changes(USER) == []
    mine.drop_changes(USER, [1])  # nothing recorded yet: nothing happens
    facts = (StatedFact("home", "Boston", "b" * 32), StatedFact("allergy", "cats", "", "extractor"))
    touched = (Touched("a" * 32, Links("", 0.0, facts), Links("b" * 32, 5.5, facts)),
               Touched("c" * 32, quote=Quote("I am allergic to cats, really", "s", 2, 7.25)))
    for turn in range(1, 5):
        made = record(f"memory of turn {turn}")
        mine.put([made], Change("s", turn, "h", (made.id,), touched if turn == 2 else ()))
    restated = record("I am allergic to cats")
    other.put([restated, record("theirs", user=OTHER)])
    other.restate(OTHER, record("theirs", user=OTHER).id, Quote("q", "t", 1, 1.0), Change("t", 1, "h", ("d" * 32,)))
    kept = other.changes(USER)
    assert [(c.session, c.turn, c.created) for c in kept] == [
        ("s", turn, (record(f"memory of turn {turn}").id,)) for turn in (2, 3, 4)], "the newest three"
    assert kept[0].touched == touched and kept[0].said == "h"
    assert kept[0].names() == {record("memory of turn 2").id, "a" * 32, "b" * 32, "c" * 32}
    other.drop_changes(USER, [kept[0].key, kept[2].key])
    assert [c.turn for c in mine.changes(USER)] == [3]
    mine.drop_changes(USER, [c.key for c in mine.changes(OTHER)])  # another user's keys: nothing happens
    assert [(c.session, c.created) for c in mine.changes(OTHER)] == [("t", ("d" * 32,))]
    mine.restate(USER, restated.id, Quote("cats, really", "s", 5, 9.0), Change("s", 5, "h", (), touched[1:]))
    assert mine.changes(USER)[-1].touched == touched[1:], "kept with a restatement too"


def test_keyword_search_stems_ranks_the_text_above_the_context_and_needs_a_content_word(open_ledger: Opener) -> None:
    ledger = open_ledger()
    in_text = record("I love hiking in the mountains")
    in_context = record("Weekends are for the outdoors", extra={"context": "do you like hiking?"})
    ledger.put([in_context, in_text, record("Nothing to do with it")])
    hits = ledger.keyword_search(USER, "hikes", 5)
    assert [hit[0] for hit in hits] == [in_text.id, in_context.id]
    assert hits[0][1] > hits[1][1] > 0
    assert ledger.keyword_search(USER, "the and of", 5) == []
    assert ledger.keyword_search(USER, "hiking", 0) == []
    assert len(ledger.keyword_search(USER, "hiking", 1)) == 1
    assert ledger.keyword_search(USER, "it's \"quoted\" (odd) -symbols* & | !", 5) == []


def test_set_contexts_rewrites_what_the_keyword_index_finds(open_ledger: Opener) -> None:
    ledger = open_ledger()
    memory = record("Weekends are for the outdoors", extra={"context": "do you like hiking?", "dia_id": "D1:1"})
    ledger.put([memory])
    ledger.set_contexts(USER, {memory.id: "any plans for sailing?", "missing": "ignored"})
    assert ledger.keyword_search(USER, "hiking", 5) == []
    assert [hit[0] for hit in ledger.keyword_search(USER, "sailing", 5)] == [memory.id]
    assert ledger.get(USER, [memory.id])[memory.id].extra == {"context": "any plans for sailing?", "dia_id": "D1:1"}


def test_delete_and_a_recorded_forget_take_the_memory_and_its_vector(open_ledger: Opener) -> None:
    ledger = open_ledger()
    a, b, c = record("alpha note"), record("beta note"), record("gamma note")
    ledger.put([a, b, c])
    ledger.claim_vectors(USER, SHA_SPACE)
    ledger.put_vectors(USER, [a.id, b.id, c.id], ShaEmbedder().embed(["alpha", "beta", "gamma"]))
    assert ledger.delete(USER, [a.id, "missing"]) == 1
    key, deleted = ledger.record_forget(USER, [b.id], ["beta note"])
    assert deleted == 1
    assert ledger.ids(USER) == [c.id] and ledger.vector_ids(USER) == [c.id]
    assert [(r.key, r.user, r.ids, r.texts) for r in open_ledger().pending_forgets()] == [
        (key, USER, (b.id,), ("beta note",))]
    ledger.acknowledge_forget(key, "")
    assert ledger.pending_forgets() == []
    assert ledger.keyword_search(USER, "beta alpha", 5) == []


def test_a_forget_is_counted_and_its_words_recognised_after_its_record_is_gone(
    open_ledger: Opener,
) -> None:
    """Issue 19 §1: a turn kept on some machine's spool while a forget was made must never be written back, also once
    every machine finished that forget and its record (the texts) left the ledger. The ledger keeps a keyed digest
    of each forgotten text under the count of forgets so far: a turn said before the forget was known is
    recognised, one said after it is the user's again."""
    ledger, other = open_ledger(), open_ledger()
    memory = record("My locker code is qzvxkw 4417")
    ledger.put([memory])
    before = ledger.forget_mark()
    key, _ = ledger.record_forget(USER, [memory.id], [memory.text, "the words it came from"])
    ledger.acknowledge_forget(key, "")
    assert ledger.pending_forgets() == [] and other.forget_mark() == before + 1, "counted, whoever reads it"
    said = "  my LOCKER code is qzvxkw   4417 "  # the same words in the fold of a memory's id
    assert other.forgotten_since(USER, [said, "I like tea"], before) == [said]
    assert other.forgotten_since(USER, ["the words it came from"], before) == ["the words it came from"]
    assert other.forgotten_since(USER, [said], before + 1) == [], "said once the forget was known: the user's own"
    assert other.forgotten_since(OTHER, [said], before) == [], "another user's words are not this one's"
    ledger.record_forget(USER, [], [memory.text])  # forgotten once more: counted from the later forget
    assert other.forgotten_since(USER, [said], before + 1) == [said]
    assert ledger.forget_mark() == before + 2


def test_a_forgotten_memorys_id_leaves_every_memory_it_superseded_and_their_facts(open_ledger: Opener) -> None:
    """Issue 19 §12: an id derives from its text, and confirms a guessed sentence: after a forget no other memory
    names it, neither as the memory that replaced it nor as the one that replaced one of its facts."""
    ledger = open_ledger()
    boston = record("I live in Boston", facts=(StatedFact("home", "Boston", ""),))
    job = record("I live in Boston and work at Acme",
                 facts=(StatedFact("home", "Boston", ""), StatedFact("job", "Acme", "")))
    berlin = record("I moved to Berlin", facts=(StatedFact("home", "Berlin", ""),))
    ledger.put([boston, job, berlin])
    ledger.supersede(USER, [boston.id], berlin.id, 5.0)
    ledger.set_facts(USER, job.id, (StatedFact("home", "Boston", berlin.id), StatedFact("job", "Acme", "")))
    ledger.record_forget(USER, [berlin.id], [berlin.text])
    kept = open_ledger().get(USER, [boston.id, job.id])
    assert (kept[boston.id].superseded_by, kept[boston.id].superseded_at) == ("", 0.0), "current again"
    assert kept[job.id].facts == job.facts, "its fact is current again"
    assert berlin.id not in repr(open_ledger().all(USER))


def test_vector_copies_keep_their_space_order_and_row_numbers(open_ledger: Opener) -> None:
    ledger = open_ledger()
    assert ledger.vector_space(USER) is None
    ledger.claim_vectors(USER, SHA_SPACE)
    assert ledger.vector_space(USER) == SHA_SPACE
    vectors = ShaEmbedder().embed(["one", "two", "three"])
    ledger.put_vectors(USER, ["1", "2", "3"], vectors)
    stored = ledger.stored_vectors(USER, ["1", "3", "9"])
    assert set(stored) == {"1", "3"} and stored["3"] == pytest.approx(vectors[2], abs=1e-6)
    before = ledger.vector_rowids(USER)
    ledger.put_vectors(USER, ["1"], [vectors[1]])  # rewritten: a new row number, last in the order
    after = ledger.vector_rowids(USER)
    assert len(after) == 3 and set(after) != set(before)
    assert [mid for mid, _ in ledger.latest_vectors(USER, 2)] == ["1", "3"]
    rows = ledger.vector_rows(USER, after)
    assert sorted(mid for _, mid, _ in rows) == ["1", "2", "3"]
    ledger.claim_vectors(USER, SHA_SPACE)  # the same space: nothing dropped
    assert sorted(ledger.vector_ids(USER)) == ["1", "2", "3"]
    ledger.claim_vectors(USER, ("other", "model", 3))
    assert ledger.vector_ids(USER) == [] and ledger.vector_space(USER) == ("other", "model", 3)
    ledger.claim_vectors(USER, SHA_SPACE)
    ledger.put_vectors(USER, ["1"], [vectors[0]])
    ledger.drop_vectors(USER)
    assert ledger.vector_ids(USER) == []


def test_the_ledger_vector_index_finds_what_another_connection_wrote_and_drops_what_it_forgot(
    open_ledger: Opener,
) -> None:
    mine, other = open_ledger(), open_ledger()
    index = LedgerVectors(mine, USER)
    texts = [f"note {n}" for n in range(12)]
    other.put([record(t) for t in texts])
    other.claim_vectors(USER, SHA_SPACE)
    other.put_vectors(USER, [memory_id(USER, t) for t in texts], ShaEmbedder().embed(texts))
    probe = ShaEmbedder().embed(["note 7"])[0]
    assert index.query(probe, 1)[0].id == memory_id(USER, "note 7")
    other.delete(USER, [memory_id(USER, "note 7")])
    assert memory_id(USER, "note 7") not in [hit.id for hit in index.query(probe, 12)]
    assert len(index.query(probe, 50)) == 11


def test_the_change_mark_moves_with_every_commit_of_any_connection_and_only_then(open_ledger: Opener) -> None:
    mine, other = open_ledger(), open_ledger()
    start = mine.change_mark()
    assert mine.change_mark() == start
    mine.get(USER, ["x"]), mine.keyword_search(USER, "word", 3), mine.all(USER)
    assert mine.change_mark() == start, "reads move nothing"
    other.put([record("written elsewhere")])
    moved = mine.change_mark()
    assert moved != start
    mine.touch(USER, [record("written elsewhere").id], time.time())
    assert mine.change_mark() != moved


def test_the_store_id_is_made_once_and_the_same_for_every_connection(open_ledger: Opener) -> None:
    first = open_ledger().store_id()
    assert len(first) == 32 and open_ledger().store_id() == first


def test_another_users_memories_are_invisible_through_every_read(open_ledger: Opener) -> None:
    ledger = open_ledger()
    memory = record("My secret pin is under the mat", user=OTHER, facts=(StatedFact("pin", "mat", ""),))
    ledger.put([memory])
    ledger.claim_vectors(OTHER, SHA_SPACE)
    ledger.put_vectors(OTHER, [memory.id], ShaEmbedder().embed([memory.text]))
    rowids = ledger.vector_rowids(OTHER)
    assert ledger.get(USER, [memory.id]) == {}
    assert ledger.all(USER) == [] and ledger.ids(USER) == [] and ledger.count(USER) == 0
    assert ledger.count(USER, "s") == 0 and ledger.oldest(USER, 5) == [] and ledger.recent(USER, 5) == []
    assert ledger.profiled(USER) == [] and ledger.keyword_search(USER, "secret pin mat", 5) == []
    assert ledger.vector_space(USER) is None and ledger.vector_ids(USER) == [] and ledger.vector_rowids(USER) == []
    assert ledger.vector_rows(USER, rowids) == [] and ledger.stored_vectors(USER, [memory.id]) == {}
    assert ledger.latest_vectors(USER, 5) == []
    assert LedgerVectors(ledger, USER).query(ShaEmbedder().embed([memory.text])[0], 5) == []
    # and no write of USER's reaches OTHER's memory
    ledger.touch(USER, [memory.id], 9e9)
    ledger.supersede(USER, [memory.id], "x", 1.0)
    ledger.set_facts(USER, memory.id, ())
    ledger.restate(USER, memory.id, Quote("q", "s", 1, 9e9))
    ledger.set_contexts(USER, {memory.id: "changed"})
    ledger.set_links(USER, {memory.id: Links("x", 1.0, ())})
    ledger.unstate(USER, memory.id, Quote("q", "s", 1, 9e9))
    assert ledger.replaced_by(USER, [memory.id]) == [] and ledger.changes(USER) == []
    assert ledger.delete(USER, [memory.id]) == 0 and ledger.record_forget(USER, [memory.id], [])[1] == 0
    ledger.drop_vectors(USER)
    ledger.claim_vectors(USER, ("other", "model", 3))
    assert ledger.get(OTHER, [memory.id]) == {memory.id: memory}
    assert ledger.vector_ids(OTHER) == [memory.id] and ledger.vector_space(OTHER) == SHA_SPACE


def test_the_index_holder_catches_up_with_what_another_connection_wrote_and_forgot(
    open_ledger: Opener, tmp_path: Path
) -> None:
    mine, other = open_ledger(), open_ledger()
    chroma = ChromaIndex(open_client(tmp_path / "chroma", None), USER, str(tmp_path / "chroma"))
    chroma.claim(SHA_SPACE)
    held = HeldIndex(chroma, mine, USER)
    texts = ["note a", "note b"]
    other.put([record(t) for t in texts])
    other.claim_vectors(USER, SHA_SPACE)
    other.put_vectors(USER, [memory_id(USER, t) for t in texts], ShaEmbedder().embed(texts))
    a, b = (memory_id(USER, t) for t in texts)
    assert held.query(ShaEmbedder().embed(["note b"])[0], 1)[0].id == b
    assert chroma.ids() == {a, b}
    other.delete(USER, [a])
    assert a not in {hit.id for hit in held.query(ShaEmbedder().embed(["note a"])[0], 5)}
    assert chroma.ids() == {b}


def test_vector_changes_name_what_was_written_since_a_mark_and_every_id_when_they_cannot(
    open_ledger: Opener,
) -> None:
    mine, other = open_ledger(), open_ledger()
    other.claim_vectors(USER, SHA_SPACE)
    first = mine.vector_changes(USER, None)
    assert first.whole and first.ids == []
    other.put_vectors(USER, ["1", "2", "3"], ShaEmbedder().embed(["one", "two", "three"]))
    written = mine.vector_changes(USER, first.mark)
    assert not written.whole and sorted(written.ids) == ["1", "2", "3"]
    other.put_vectors(OTHER, ["9"], ShaEmbedder().embed(["nine"]))
    quiet = mine.vector_changes(USER, written.mark)
    assert not quiet.whole and quiet.ids == [], "another user's write is none of this user's changes"
    other.put_vectors(USER, ["2"], ShaEmbedder().embed(["two again"]))
    rewritten = mine.vector_changes(USER, quiet.mark)
    assert not rewritten.whole and rewritten.ids == ["2"]
    other.delete(USER, ["2"])
    evicted = mine.vector_changes(USER, rewritten.mark)
    assert ("2" in evicted.ids) if not evicted.whole else sorted(evicted.ids) == ["1", "3"]
    other.record_forget(USER, ["1"], ["one"])
    forgotten = mine.vector_changes(USER, evicted.mark)
    assert (sorted(forgotten.ids) == ["3"]) if forgotten.whole else (forgotten.forgot and forgotten.ids == [])


def test_without_listing_a_whole_answer_is_its_mark_alone(open_ledger: Opener) -> None:
    ledger = open_ledger()
    ledger.claim_vectors(USER, SHA_SPACE)
    ledger.put_vectors(USER, ["1", "2"], ShaEmbedder().embed(["one", "two"]))
    listed, unlisted = ledger.vector_changes(USER, None), ledger.vector_changes(USER, None, listing=False)
    assert listed.whole and sorted(listed.ids) == ["1", "2"]
    assert unlisted.whole and unlisted.ids == [] and unlisted.mark == listed.mark
    ledger.put_vectors(USER, ["3"], ShaEmbedder().embed(["three"]))
    assert ledger.vector_changes(USER, unlisted.mark, listing=False).ids == ["3"], "changes since a mark, listed"


def test_id_pages_walk_a_users_memories_in_id_order_each_saying_whether_it_has_a_vector_copy(
    open_ledger: Opener,
) -> None:
    ledger, other = open_ledger(), open_ledger()
    memories = [record(f"memory {n}") for n in range(7)]
    ledger.put([*memories, record("theirs", user=OTHER)])
    ledger.claim_vectors(USER, SHA_SPACE)
    copied = sorted(m.id for m in memories)[::2]
    ledger.put_vectors(USER, copied, ShaEmbedder().embed(copied))
    walked, after = [], ""
    while True:
        page = ledger.id_page(USER, after, 3)
        assert len(page) <= 3
        walked.extend(page)
        if len(page) < 3:
            break
        after = page[-1][0]
        if len(walked) == 3:
            other.delete(USER, [sorted(m.id for m in memories)[0]])  # a page already read: the walk goes on
    assert walked == [(mid, mid in copied) for mid in sorted(m.id for m in memories)]
    assert ledger.id_page("nobody", "", 3) == []


def test_the_vector_log_keeps_no_forgotten_id_and_a_mark_it_no_longer_reaches_reads_every_id(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sqlite3
    from contextlib import closing

    from agent.adapters import ledger as sqlite_ledger

    path = tmp_path / "ledger.sqlite3"
    ledger = SqliteLedger(path)
    ledger.claim_vectors(USER, SHA_SPACE)
    ledger.put([record("my secret")])
    secret = memory_id(USER, "my secret")
    ledger.put_vectors(USER, [secret, "b"], ShaEmbedder().embed(["my secret", "b"]))
    ledger.record_forget(USER, [secret], ["my secret"])
    with closing(sqlite3.connect(path)) as db:
        assert db.execute("SELECT count(*) FROM vector_log WHERE id = ?", (secret,)).fetchone()[0] == 0
    mark = ledger.vector_changes(USER, None).mark
    monkeypatch.setattr(sqlite_ledger, "VECTOR_LOG_KEPT", 3)
    ledger.put_vectors(USER, ["c", "d", "e", "f"], ShaEmbedder().embed(["c", "d", "e", "f"]))
    behind = ledger.vector_changes(USER, mark)
    assert behind.whole and sorted(behind.ids) == ["b", "c", "d", "e", "f"]
    with closing(sqlite3.connect(path)) as db:
        assert db.execute("SELECT count(*) FROM vector_log").fetchone()[0] == 3
    ledger.close()


def test_the_turn_after_a_write_catches_up_with_what_was_written_not_with_every_id(
    open_ledger: Opener, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    mine, other = open_ledger(), open_ledger()
    chroma = ChromaIndex(open_client(tmp_path / "chroma", None), USER, str(tmp_path / "chroma"))
    chroma.claim(SHA_SPACE)
    held = HeldIndex(chroma, mine, USER)
    mine.claim_vectors(USER, SHA_SPACE)
    texts = [f"note {n}" for n in range(20)]
    held.upsert([memory_id(USER, t) for t in texts], ShaEmbedder().embed(texts))
    held.warm_up()
    upserted: list[list[str]] = []
    real_upsert = chroma.upsert
    monkeypatch.setattr(chroma, "upsert", lambda ids, vectors: upserted.append(list(ids)) or real_upsert(ids, vectors))
    monkeypatch.setattr(chroma, "ids", lambda: pytest.fail("Chroma's ids read again"))
    monkeypatch.setattr(mine, "vector_ids", lambda user: pytest.fail("every id read after a write"))
    held.upsert([memory_id(USER, "mine")], ShaEmbedder().embed(["mine"]))
    held.catch_up()
    assert upserted == [[memory_id(USER, "mine")]], "this process's own write is not put in twice"
    other.put_vectors(USER, [memory_id(USER, "theirs")], ShaEmbedder().embed(["theirs"]))
    assert held.query(ShaEmbedder().embed(["theirs"])[0], 1)[0].id == memory_id(USER, "theirs")
    assert upserted[1:] == [[memory_id(USER, "theirs")]]
    held.upsert([memory_id(USER, "evicted there")], ShaEmbedder().embed(["evicted there"]))
    other.delete(USER, [memory_id(USER, "evicted there")])
    held.catch_up()
    assert memory_id(USER, "evicted there") not in chroma.vectors([memory_id(USER, "evicted there")]), \
        "this process's own write, deleted by another before the next catch-up, leaves Chroma too"


def test_a_registered_machine_is_waited_for_by_its_users_forgets_until_it_is_retired(open_ledger: Opener) -> None:
    """The ``MachineRegistry`` port: a shared ledger lists the machines of a user, and a forget waits for each;
    the SQLite file is one machine's own and registers none, so its forgets wait for no machine."""
    ledger = open_ledger()
    ledger.register_machine("m1", USER, "laptop")
    memory = record("my locker code is 4411")
    ledger.put([memory])
    ledger.record_forget(USER, [memory.id], [memory.text])
    if isinstance(ledger, SqliteLedger):
        assert (ledger.machines(USER), ledger.retire_machine(USER, "m1")) == ([], False)
        return
    assert [(m.id, m.name, m.waiting) for m in ledger.machines(USER)] == [("m1", "laptop", 1)]
    assert ledger.machines(OTHER) == [] and len(ledger.pending_forgets("m1")) == 1
    assert ledger.retire_machine(USER, "m1") is True
    assert (ledger.machines(USER), ledger.pending_forgets("m1"), ledger.pending_forgets()) == ([], [], [])
    assert ledger.retire_machine(USER, "m1") is False


def test_writes_made_together_are_all_there_when_the_block_ends_and_what_follows_the_commit_runs_then(
    open_ledger: Opener,
) -> None:
    """``MemoryStore.together`` and ``ChangeFeed.after_commit``: whether a backend makes the block one transaction
    (SQLite) or keeps each write's own (PostgreSQL), another connection sees every write once the block ended, a
    write that completed stays when the block raises, and what follows the commit runs after the last write."""
    ledger, other = open_ledger(), open_ledger()
    first, second = record("note one"), record("note two")
    ran: list[dict[str, object]] = []
    with pytest.raises(RuntimeError), ledger.together():
        ledger.put([first])
        ledger.claim_vectors(USER, SHA_SPACE)
        ledger.put_vectors(USER, [first.id], ShaEmbedder().embed(["note one"]))
        raise RuntimeError("what the caller did after the writes")
    with ledger.together():
        ledger.put([second])
        ledger.after_commit(lambda: ran.append(other.get(USER, [second.id])))  # sees the write when it runs
    assert ran == [{second.id: second}]
    assert other.get(USER, [first.id, second.id]) == {first.id: first, second.id: second}
    assert set(other.stored_vectors(USER, [first.id])) == {first.id}
    assert ledger.count(USER) == other.count(USER) == 2
    later: list[int] = []
    ledger.after_commit(lambda: later.append(1))  # outside a block: at once
    assert later == [1]
