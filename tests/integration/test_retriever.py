"""The hybrid retriever: how the two rankings are fused, and that the ranking it returns carries true similarities."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from agent.adapters.ledger import SqliteLedger
from agent.memory.policy import FusionWeights
from agent.memory.retriever import Retriever, dot, fuse
from tests.builders import record
from tests.fakes import InMemoryIndex, WordHashEmbedder

USER = "u"


def test_fuse_normalises_each_side_and_breaks_ties_by_id() -> None:
    weights = FusionWeights(dense=0.5, keyword=0.5)
    fused = dict(fuse({"a": 0.9, "b": 0.5, "c": 0.1}, {"b": 4.0, "d": 2.0}, weights))
    assert fused["a"] == pytest.approx(0.5)  # best dense, no keyword
    assert fused["b"] == pytest.approx(0.5 * 0.5 + 0.5)  # middle dense, best keyword
    assert fused["c"] == pytest.approx(0.0)  # lowest dense candidate, no keyword
    assert fused["d"] == pytest.approx(0.25)  # keyword only: no dense share
    assert [mid for mid, _ in fuse({"y": 0.5, "x": 0.5}, {}, weights)] == ["x", "y"]


def test_fuse_with_one_side_off_orders_by_the_other() -> None:
    keyword_only = fuse({"a": 0.9}, {"b": 3.0, "c": 1.0}, FusionWeights(dense=0.0, keyword=1.0))
    assert [mid for mid, _ in keyword_only][:2] == ["b", "c"]
    assert fuse({}, {}, FusionWeights()) == []


@pytest.fixture
def retriever_parts(tmp_path: Path) -> tuple[SqliteLedger, InMemoryIndex, WordHashEmbedder]:
    ledger = SqliteLedger(tmp_path / "ledger.sqlite3")
    index = InMemoryIndex()
    embedder = WordHashEmbedder()
    texts = [f"I keep {n} bees in the garden" for n in range(60)] + [
        "My cousin Zephyrine plays the oboe",
        "I drink green tea every morning",
    ]
    now = time.time()
    records = [
        record(t, USER, turn=i, at=now) for i, t in enumerate(texts)
    ]
    ledger.put(records)
    index.upsert([r.id for r in records], embedder.embed(texts))
    return ledger, index, embedder


def test_a_keyword_only_hit_is_ranked_and_gets_its_true_similarity(
    retriever_parts: tuple[SqliteLedger, InMemoryIndex, WordHashEmbedder],
) -> None:
    ledger, index, embedder = retriever_parts
    # Few dense candidates, so the rare name is found by the keyword side alone.
    retriever = Retriever(embedder, index, ledger, USER, FusionWeights(dense=0.35, keyword=0.65, candidates=5))
    probe = "what does Zephyrine play"
    top = retriever.rank(probe, 3)
    assert top[0].record.text == "My cousin Zephyrine plays the oboe"
    expected = dot(embedder.embed([probe])[0], index.vectors([top[0].record.id])[top[0].record.id])
    assert top[0].similarity == pytest.approx(expected, abs=1e-6)
    ledger.close()


def test_rank_returns_at_most_k_and_nothing_for_an_empty_probe(
    retriever_parts: tuple[SqliteLedger, InMemoryIndex, WordHashEmbedder],
) -> None:
    ledger, index, embedder = retriever_parts
    retriever = Retriever(embedder, index, ledger, USER)
    assert len(retriever.rank("bees in the garden", 4)) == 4
    assert retriever.rank("   ", 4) == []
    assert retriever.rank("bees", 0) == []
    ledger.close()


def test_dense_only_and_keyword_only_retrievers(
    retriever_parts: tuple[SqliteLedger, InMemoryIndex, WordHashEmbedder],
) -> None:
    ledger, index, embedder = retriever_parts
    keyword = Retriever(embedder, index, ledger, USER, FusionWeights(dense=0.0, keyword=1.0))
    found = keyword.rank("green tea", 10)
    assert [m.record.text for m in found] == ["I drink green tea every morning"]
    dense = Retriever(embedder, index, ledger, USER, FusionWeights(dense=1.0, keyword=0.0))
    assert dense.rank("green tea morning", 1)[0].record.text == "I drink green tea every morning"
    ledger.close()


def _put(ledger: SqliteLedger, user: str, texts: list[str]) -> None:
    now = time.time()
    ledger.put([record(t, user, turn=i, at=now) for i, t in enumerate(texts)])


def test_keyword_search_finds_a_users_rows_when_other_users_crowd_the_index(tmp_path: Path) -> None:
    ledger = SqliteLedger(tmp_path / "ledger.sqlite3")
    _put(ledger, "crowd", [f"bees and honey number {n}" for n in range(100)])
    _put(ledger, "me", ["I keep bees on the roof", "I like tea"])
    hits = ledger.keyword_search("me", "bees honey", 5)
    assert [ledger.get("me", [mid])[mid].text for mid, _ in hits] == ["I keep bees on the roof"]
    ledger.close()


def test_keyword_search_ranks_best_first_and_stops_at_k(tmp_path: Path) -> None:
    ledger = SqliteLedger(tmp_path / "ledger.sqlite3")
    _put(ledger, USER, ["green tea", "green tea with green mint and tea", "black coffee"] +
         [f"tea note {n}" for n in range(30)])
    hits = ledger.keyword_search(USER, "green tea", 3)
    assert len(hits) == 3
    assert [score for _, score in hits] == sorted((score for _, score in hits), reverse=True)
    top = ledger.get(USER, [hits[0][0]])[hits[0][0]].text
    assert top.startswith("green tea")
    assert ledger.keyword_search(USER, "the and of", 3) == []  # stop-words only
    ledger.close()
