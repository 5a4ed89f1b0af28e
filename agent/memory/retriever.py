"""The read path: the current user turn is the probe; a dense and a keyword ranking are fused into one.

Dense similarity alone misses names and rare words; BM25 alone misses paraphrase. Each side proposes candidates
and the fused score of their normalised scores orders them. A candidate only the keyword side found lies below
every dense candidate in similarity, so its dense share is 0 and its vector is not needed to rank it: the true
cosine similarity is computed (from the ledger's copy of its vector) only for the few that make the top k. The
similarity, not the fused score, is what the injection threshold is compared with, so the threshold keeps the
meaning the embedder gives it.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from agent.domain import MemoryRecord, ScoredMemory
from agent.memory.policy import FusionWeights
from agent.ports import Embedder, Ledger, VectorIndex


def dot(a: Sequence[float], b: Sequence[float]) -> float:
    return float(np.dot(np.asarray(a, dtype=np.float32), np.asarray(b, dtype=np.float32)))


def fuse(
    similarities: dict[str, float], keyword_scores: dict[str, float], weights: FusionWeights
) -> list[tuple[str, float]]:
    """Fused scores of every candidate of either side, best first (ties by id, so the order is stable).

    Similarities of the dense candidates are min-max normalised among themselves; a keyword-only candidate scored
    below all of them and gets 0 from the dense side. Keyword scores are divided by the best keyword score, so a
    candidate the keyword side did not find gets 0 from it."""
    candidates = similarities.keys() | keyword_scores.keys()
    if not candidates:
        return []
    low, high = min(similarities.values(), default=0.0), max(similarities.values(), default=0.0)
    span = high - low or 1.0
    best_keyword = max(keyword_scores.values(), default=0.0) or 1.0
    fused = {
        mid: weights.dense * ((similarities[mid] - low) / span if mid in similarities else 0.0)
        + weights.keyword * keyword_scores.get(mid, 0.0) / best_keyword
        for mid in candidates
    }
    return sorted(fused.items(), key=lambda item: (-item[1], item[0]))


def by_recency(
    ranked: Sequence[tuple[str, float]], records: dict[str, MemoryRecord], weight: float
) -> list[tuple[str, float]]:
    """``ranked`` with each score raised by up to ``weight`` for how recent its memory is among them, best first."""
    times = [records[mid].created_at for mid, _ in ranked if mid in records]
    if not times or not weight:
        return list(ranked)
    oldest, span = min(times), (max(times) - min(times)) or 1.0
    raised = [
        (mid, score + weight * (records[mid].created_at - oldest) / span if mid in records else score)
        for mid, score in ranked
    ]
    return sorted(raised, key=lambda item: (-item[1], item[0]))


# How many replacements a chain is followed through.
_CHAIN = 8


class Retriever:
    """Ranks one user's memories for a probe; no threshold here (see ``MemoryService.recall``)."""

    def __init__(
        self, embedder: Embedder, index: VectorIndex, ledger: Ledger, user: str, weights: FusionWeights | None = None
    ) -> None:
        self._embedder = embedder
        self._index = index
        self._ledger = ledger
        self._user = user
        self.weights = weights or FusionWeights()

    def rank(self, probe: str, k: int, past: bool = False) -> list[ScoredMemory]:
        """The top ``k`` current memories for ``probe`` (fewer when the store holds fewer), best first: a replaced
        memory ranked stands for the one that replaced it (``_successors``). ``past`` ranks superseded memories as
        themselves (a question about the past)."""
        if k <= 0 or not probe.strip():
            return []
        n = max(k, self.weights.candidates)
        vector = self._embedder.embed([probe])[0]
        hits = self._index.query(vector, n) if self.weights.dense else []
        similarities = {hit.id: hit.similarity for hit in hits}
        keyword_scores = dict(self._ledger.keyword_search(self._user, probe, n)) if self.weights.keyword else {}
        ranked = fuse(similarities, keyword_scores, self.weights)[: 2 * k]
        records = self._ledger.get(self._user, [mid for mid, _ in ranked])
        reached: dict[str, float] = {}
        if not past:
            ranked, records, reached = self._successors(ranked, records, similarities)
        kept = [(mid, score) for mid, score in ranked if mid in records]
        ranked = by_recency(kept, records, self.weights.recency)[:k]
        missing = [mid for mid, _ in ranked if mid not in similarities]
        if missing:
            stored = self.vectors(missing)
            if stored:
                cosines = np.asarray(list(stored.values()), dtype=np.float32) @ np.asarray(vector, dtype=np.float32)
                similarities.update(zip(stored, cosines.tolist(), strict=True))
        return [
            ScoredMemory(record=records[mid], similarity=max(similarities[mid], reached.get(mid, -1.0)), score=score)
            for mid, score in ranked
            if mid in records and mid in similarities
        ]

    def _successors(self, ranked: list[tuple[str, float]], records: dict[str, MemoryRecord],
                    similarities: dict[str, float]) -> tuple[list[tuple[str, float]], dict[str, MemoryRecord],
                                                              dict[str, float]]:
        """The ranking with each replaced memory in it standing for the current memory that replaced it (followed
        to the end of the chain), at its place and its similarity: "easy songs for my instrument" is near "learning
        drums in the garage", which "drumkit's gone, ukulele now" replaced, and the question is the replacement's
        to answer however far its own words are from it. A replacement ranked already keeps its own place."""
        current = {mid: record for mid, record in records.items() if record.current}
        out: list[tuple[str, float]] = []
        placed: set[str] = set()
        reached: dict[str, float] = {}
        for mid, score in ranked:
            record = records.get(mid)
            if record is None:
                continue
            if not record.current:
                successor = self._current_successor(record)
                if successor is None:
                    continue
                current[successor.id] = successor
                reached[successor.id] = max(reached.get(successor.id, -1.0), similarities.get(mid, -1.0))
                mid = successor.id
            if mid not in placed:
                placed.add(mid)
                out.append((mid, score))
        return out, current, reached

    def _current_successor(self, record: MemoryRecord) -> MemoryRecord | None:
        """The current memory at the end of ``record``'s chain of replacements, or None (a loop, a forgotten one)."""
        seen = {record.id}
        while record.superseded_by and record.superseded_by not in seen and len(seen) <= _CHAIN:
            seen.add(record.superseded_by)
            found = self._ledger.get(self._user, [record.superseded_by]).get(record.superseded_by)
            if found is None:
                return None
            if found.current:
                return found
            record = found
        return None

    def vectors(self, ids: Sequence[str]) -> dict[str, list[float]]:
        """The vectors of ``ids``, from the ledger's copies where it has them (one local read, where the index may
        be a server: 5 ms of HTTP per turn on a Chroma server at 10,000 memories) and from the index otherwise (a
        store from before the copies)."""
        found = self._ledger.stored_vectors(self._user, ids)
        lacking = [mid for mid in ids if mid not in found]
        return found | self._index.vectors(lacking) if lacking else found
