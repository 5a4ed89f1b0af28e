"""Keyword search on SQLite ranks a bounded number of rows, as on PostgreSQL (issue 22): FTS5 scores every row a
query matches before it sorts, so a word in thousands of memories cost most of a turn at 100,000. A word matching
``COMMON_WORD`` rows or more is common: the rare words alone find the memories while they match enough, and
otherwise every word ranks among the newest ``COMMON_WORD`` rows any of them matches."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent.adapters import ledger as sqlite_ledger
from agent.adapters.ledger import SqliteLedger
from agent.domain import memory_id
from tests.builders import USER, record


@pytest.fixture
def ledger(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> SqliteLedger:
    monkeypatch.setattr(sqlite_ledger, "COMMON_WORD", 5)
    return SqliteLedger(tmp_path / "ledger.sqlite3")


def test_the_rare_word_finds_the_memories_while_it_matches_enough(ledger: SqliteLedger) -> None:
    old_gardens = [record(f"garden garden garden, the old garden {n}") for n in range(3)]
    gardens = [record(f"the garden needs work number {n}") for n in range(12)]
    herons = [record(f"a heron stood by the river {n}") for n in range(3)]
    ledger.put([*old_gardens, *gardens, *herons])
    hits = [mid for mid, _ in ledger.keyword_search(USER, "heron garden", 3)]
    assert set(hits) == {r.id for r in herons}, "three heron memories: the common word adds none"
    ledger.close()


def test_only_common_words_rank_among_their_newest_matches(ledger: SqliteLedger) -> None:
    old_gardens = [record(f"garden garden garden, the old garden {n}") for n in range(3)]
    gardens = [record(f"the garden needs work number {n}") for n in range(12)]
    ledger.put(old_gardens)
    ledger.put(gardens)
    hits = [mid for mid, _ in ledger.keyword_search(USER, "garden", 3)]
    assert len(hits) == 3 and set(hits) <= {r.id for r in gardens[-5:]}, "the old ones lie outside the window"
    both = [mid for mid, _ in ledger.keyword_search(USER, "garden old", 10)]
    assert set(both[:3]) == {r.id for r in old_gardens}, "the rare word, matching fewer than k, still finds its own"
    ledger.close()


def test_a_store_without_a_common_word_ranks_every_match(tmp_path: Path) -> None:
    ledger = SqliteLedger(tmp_path / "ledger.sqlite3")
    texts = [f"the garden needs work number {n}" for n in range(12)] + ["garden garden garden, an old garden"]
    ledger.put([record(t) for t in texts])
    assert ledger.keyword_search(USER, "garden", 1)[0][0] == memory_id(USER, texts[-1])
    ledger.close()
