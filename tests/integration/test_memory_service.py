"""The memory engine: one suite run against the in-memory index and against Chroma on a temp path, plus the
claims about meaning, made with the real local model."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from agent.adapters.chroma_index import ChromaIndex, collection_name, open_client, similarity_from_distance
from agent.adapters.ledger import SqliteLedger
from agent.adapters.local_embedder import LocalEmbedder
from agent.errors import EmbedderMismatch
from agent.memory.context import FOOTER, HEADER
from agent.memory.policy import MemoryPolicy
from agent.memory.service import MemoryService
from agent.ports import Embedder, VectorIndex
from agent.tokens import count_tokens
from tests.fakes import InMemoryIndex, WordHashEmbedder
from tests.helpers_store import ledger_of

PEANUTS = "I can't eat peanuts, they make my throat swell"
POLLEN = "Allergy season in Boston is brutal in April"
COFFEE = "My favourite coffee is a flat white"
BERLIN = "I am moving to Berlin next month"

IndexFactory = Callable[[Path], VectorIndex]


def chroma_index(root: Path) -> VectorIndex:
    return ChromaIndex(open_client(root / "chroma", None), "alice", str(root / "chroma"))


def memory_index(root: Path) -> VectorIndex:
    return InMemoryIndex()


@pytest.fixture(params=[memory_index, chroma_index], ids=["in-memory", "chroma"])
def make_index(request: pytest.FixtureRequest) -> IndexFactory:
    factory: IndexFactory = request.param
    return factory


def service(root: Path, index: VectorIndex, embedder: Embedder, **policy: object) -> MemoryService:
    root.mkdir(parents=True, exist_ok=True)
    return MemoryService(SqliteLedger(root / "ledger.sqlite3"), index, embedder, "alice", MemoryPolicy(**policy))  # type: ignore[arg-type]


def test_similarity_is_one_minus_cosine_distance() -> None:
    # Chroma's cosine distance is 1 - cos: identical vectors are at 0, orthogonal ones at 1, opposite at 2.
    assert similarity_from_distance(0.0) == 1.0
    assert similarity_from_distance(1.0) == 0.0
    assert similarity_from_distance(2.0) == -1.0


def test_chroma_distances_agree_with_the_dot_product(tmp_path: Path, local_embedder: LocalEmbedder) -> None:
    index = chroma_index(tmp_path)
    vectors = local_embedder.embed([PEANUTS, POLLEN])
    index.claim(("local", local_embedder.model, local_embedder.dimension))
    index.upsert(["p", "a"], vectors)
    probe = local_embedder.embed(["which foods am I allergic to?"])[0]
    hits = {h.id: h.similarity for h in index.query(probe, 2)}
    for key, vec in zip(["p", "a"], vectors, strict=True):
        assert hits[key] == pytest.approx(sum(x * y for x, y in zip(probe, vec, strict=True)), abs=1e-3)


def test_allergy_question_ranks_the_peanut_sentence_first(tmp_path: Path, local_embedder: LocalEmbedder) -> None:
    memory = service(tmp_path, chroma_index(tmp_path), local_embedder)
    for text in (POLLEN, COFFEE, PEANUTS):
        memory.add(text)
    ranked = memory.search("which foods am I allergic to?", k=3)
    assert [m.record.text for m in ranked][0] == PEANUTS
    assert ranked[0].similarity > ranked[1].similarity or ranked[0].score > ranked[1].score


def test_unrelated_query_returns_nothing(tmp_path: Path, local_embedder: LocalEmbedder) -> None:
    memory = service(tmp_path, chroma_index(tmp_path), local_embedder)
    for text in (PEANUTS, POLLEN, COFFEE):
        memory.add(text)
    assert memory.search("How do I configure a reverse proxy for a web server?", k=5, threshold=memory.threshold) == []
    recall = memory.recall("How do I configure a reverse proxy for a web server?")
    # No memory clears the threshold; the profile (what the user stated about themselves) comes on every turn.
    assert recall.block.memories == () and "<memory_notes>" not in recall.block.text


def test_snack_question_recalls_peanuts_and_keeps_berlin_out(tmp_path: Path, local_embedder: LocalEmbedder) -> None:
    memory = service(tmp_path, chroma_index(tmp_path), local_embedder)
    memory.add(PEANUTS)
    memory.add(BERLIN)
    block = memory.recall("Any snack ideas?").block
    assert PEANUTS in block.text
    assert BERLIN not in block.text


def test_asking_for_more_neighbours_than_stored_returns_all(tmp_path: Path, make_index: IndexFactory) -> None:
    memory = service(tmp_path, make_index(tmp_path), WordHashEmbedder())
    for text in (PEANUTS, POLLEN, COFFEE):
        memory.add(text)
    assert len(memory.search("peanuts coffee allergy", k=10)) == 3


def test_storing_the_same_turns_twice_keeps_the_count(tmp_path: Path, make_index: IndexFactory) -> None:
    embedder = WordHashEmbedder()
    memory = service(tmp_path, make_index(tmp_path), embedder)
    turns = [PEANUTS, COFFEE, BERLIN, "My sister Ana lives in Lisbon with her two cats"]
    for round_ in range(2):
        for n, text in enumerate(turns):
            memory.observe(text, session="s", turn=n + round_ * 10)
    assert memory.count() == len(turns)
    assert memory.indexed() == len(turns)
    embedded = [t for call in embedder.calls for t in call]
    stored = [r.text for r in memory.list()]  # "next month" is stored as the month it meant
    assert sorted(embedded) == sorted(stored), "a statement stored before is not embedded again"


def test_restating_a_memory_refreshes_last_seen(tmp_path: Path, make_index: IndexFactory) -> None:
    clock = iter([100.0, 200.0])
    memory = service(tmp_path, make_index(tmp_path), WordHashEmbedder())
    memory._clock = lambda: next(clock)
    memory.add(PEANUTS)
    memory.add("  i can't eat PEANUTS,   they make my throat swell ")
    [record] = memory.list()
    assert (record.created_at, record.last_seen) == (100.0, 200.0)


def test_capacity_evicts_least_recently_seen(tmp_path: Path, make_index: IndexFactory) -> None:
    ticks = iter(range(1, 100))
    memory = service(tmp_path, make_index(tmp_path), WordHashEmbedder(), capacity=3)
    memory._clock = lambda: float(next(ticks))
    for text in (PEANUTS, POLLEN, COFFEE):
        memory.add(text)
    memory.add(PEANUTS)  # seen again: now the freshest
    memory.add(BERLIN)
    assert sorted(r.source for r in memory.list()) == sorted([PEANUTS, COFFEE, BERLIN])
    assert memory.indexed() == 3


def test_block_of_a_large_store_stays_within_budget(tmp_path: Path) -> None:
    """A claim about the budget, not about meaning: the word-hash fake embeds the 500 memories."""
    memory = service(tmp_path, chroma_index(tmp_path), WordHashEmbedder(), k=500, threshold=-1.0)
    statements = [
        f"On day {n} I told you that my favourite {thing} is the {colour} one from the market in {city}"
        for n, (thing, colour, city) in enumerate(
            (t, c, p)
            for t in ("mug", "scarf", "bike", "lamp", "kite")
            for c in ("red", "blue", "green", "amber", "violet")
            for p in ("Porto", "Oslo", "Kyoto", "Lima")
        )
    ]
    statements = (statements * 5)[:500]
    statements = [f"{s} (note {i})" for i, s in enumerate(statements)]
    records = [memory._record(s, "turn", session="s", turn=i, when=i, source=s) for i, s in enumerate(statements)]
    memory.write(records)
    assert memory.count() == 500
    block = memory.recall("what is my favourite scarf?").block
    assert len(block.memories) > 5
    assert count_tokens(block.text) <= 800
    assert block.text.startswith(HEADER) and block.text.endswith(FOOTER)


def test_the_embedder_recorded_by_the_store_is_enforced(tmp_path: Path) -> None:
    index = InMemoryIndex()
    memory = service(tmp_path, index, WordHashEmbedder())
    memory.add(PEANUTS)
    other = WordHashEmbedder()
    other.model = "word-hash-v2"  # type: ignore[misc]
    switched = MemoryService(ledger_of(memory), index, other, "alice")
    with pytest.raises(EmbedderMismatch) as caught:
        switched.add(COFFEE)
    assert "agent memories reindex --embedder fake" in str(caught.value)
    assert "word-hash-256" in str(caught.value) and "word-hash-v2" in str(caught.value)
    assert index.count() == 1


def test_users_have_separate_collections() -> None:
    assert collection_name("alice") != collection_name("Alice")
    assert collection_name("../weird name/$$") .startswith("mem-weird-name-")
    assert collection_name("") != collection_name("-")


def test_the_write_cap_of_a_session_holds_across_runs(tmp_path: Path) -> None:
    ledger = SqliteLedger(tmp_path / "ledger.sqlite3")
    index = InMemoryIndex()
    first = MemoryService(ledger, index, WordHashEmbedder(), "alice", MemoryPolicy(writes_per_session=2))
    for n, text in enumerate((PEANUTS, COFFEE, BERLIN)):
        first.observe(text, session="s", turn=n)
    assert first.count() == 2
    resumed = MemoryService(ledger, index, WordHashEmbedder(), "alice", MemoryPolicy(writes_per_session=2))
    report = resumed.observe("My sister Ana lives in Lisbon with her two cats", session="s", turn=3)
    assert report.stored == () and "cap of 2" in report.skipped_reason
    assert resumed.observe("My sister Ana lives in Lisbon with her two cats", session="t", turn=0).stored


def test_recall_notes_last_seen_and_writes_it_after_the_reply(tmp_path: Path, make_index: IndexFactory) -> None:
    ticks = iter([10.0, 20.0, 30.0, 40.0])
    memory = service(tmp_path, make_index(tmp_path), WordHashEmbedder(), threshold=0.1)
    memory._clock = lambda: next(ticks)
    memory.add(PEANUTS)
    assert memory.recall("peanuts make my throat swell").block.memories
    assert memory.list()[0].last_seen == 10.0, "nothing is written on the way to the reply"
    memory.add(COFFEE)  # the next write, after the reply, records it
    assert {r.text: r.last_seen for r in memory.list()}[PEANUTS] == 20.0
    memory.recall("peanuts make my throat swell")
    memory.flush_seen()
    assert {r.text: r.last_seen for r in memory.list()}[PEANUTS] == 40.0
