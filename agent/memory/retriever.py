"""The read path: the current user turn is the probe; a dense and a keyword ranking are fused into one.

Dense similarity alone misses names and rare words; BM25 alone misses paraphrase. Each side proposes
candidates, every candidate gets both scores (its true cosine similarity is read back from the index when only
the keyword side found it), and the fused score orders them. The similarity, not the fused score, is what the
injection threshold is compared with, so the threshold keeps the meaning the embedder gives it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from agent.domain import ScoredMemory
from agent.ports import Embedder, Ledger, VectorIndex


@dataclass(frozen=True)
class FusionWeights:
    """How the two rankings combine: ``dense`` and ``keyword`` weigh the normalised scores, ``candidates`` is
    how many each side proposes. A zero weight switches that side off (the benchmark's single-retriever columns).

    The keyword side weighs more because it carries names, rare words and the turn a memory answers; on LoCoMo
    (bench/RESULTS.md) every weight of dense from 0.3 to 0.4 beat 0.6 on both dev conversations alike."""

    dense: float = 0.35
    keyword: float = 0.65
    candidates: int = 50


def dot(a: Sequence[float], b: Sequence[float]) -> float:
    return float(sum(x * y for x, y in zip(a, b, strict=True)))


def fuse(
    similarities: dict[str, float], keyword_scores: dict[str, float], weights: FusionWeights
) -> list[tuple[str, float]]:
    """Fused scores, best first. Similarities are min-max normalised over the candidates; keyword scores are
    divided by the best keyword score, so a candidate the keyword side did not find gets 0 from it."""
    if not similarities:
        return []
    low, high = min(similarities.values()), max(similarities.values())
    span = high - low or 1.0
    best_keyword = max(keyword_scores.values(), default=0.0) or 1.0
    fused = {
        mid: weights.dense * (sim - low) / span + weights.keyword * keyword_scores.get(mid, 0.0) / best_keyword
        for mid, sim in similarities.items()
    }
    return sorted(fused.items(), key=lambda item: (-item[1], item[0]))


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

    def rank(self, probe: str, k: int) -> list[ScoredMemory]:
        """The top ``k`` memories for ``probe`` (fewer when the store holds fewer), best first."""
        if k <= 0 or not probe.strip():
            return []
        n = max(k, self.weights.candidates)
        vector = self._embedder.embed([probe])[0]
        hits = self._index.query(vector, n) if self.weights.dense else []
        similarities = {hit.id: hit.similarity for hit in hits}
        keyword_scores = dict(self._ledger.keyword_search(self._user, probe, n)) if self.weights.keyword else {}
        missing = [mid for mid in keyword_scores if mid not in similarities]
        if missing:
            for mid, stored in self._index.vectors(missing).items():
                similarities[mid] = dot(vector, stored)
        ranked = fuse(similarities, keyword_scores, self.weights)[:k]
        records = self._ledger.get(self._user, [mid for mid, _ in ranked])
        return [
            ScoredMemory(record=records[mid], similarity=similarities[mid], score=score)
            for mid, score in ranked
            if mid in records
        ]
