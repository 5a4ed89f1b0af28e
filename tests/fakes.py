"""In-process fakes of the ports that behave: similarity from shared words, an index that really ranks."""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence

from agent.domain import VectorSpace
from agent.memory.text import content_words
from agent.ports import IndexHit


class WordHashEmbedder:
    """Bag of content words hashed into 256 dimensions: texts sharing words are similar, others are not.
    Meaningful enough for store mechanics; claims about meaning use the real local model instead."""

    name = "fake"
    model = "word-hash-256"
    dimension = 256

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.calls.append(list(texts))
        out = []
        for text in texts:
            vec = [0.0] * self.dimension
            for word in content_words(text) or ["<empty>"]:
                vec[int(hashlib.sha256(word.encode()).hexdigest(), 16) % self.dimension] += 1.0
            norm = math.sqrt(sum(x * x for x in vec))
            out.append([x / norm for x in vec])
        return out


class InMemoryIndex:
    """``VectorIndex`` as a dict, brute force cosine; the reference the Chroma adapter is tested against."""

    def __init__(self) -> None:
        self._vectors: dict[str, list[float]] = {}
        self._space: VectorSpace | None = None

    def space(self) -> VectorSpace | None:
        return self._space

    def claim(self, space: VectorSpace) -> None:
        self._space = space

    def upsert(self, ids: Sequence[str], vectors: Sequence[Sequence[float]]) -> None:
        self._vectors.update((i, list(v)) for i, v in zip(ids, vectors, strict=True))

    def query(self, vector: Sequence[float], k: int) -> list[IndexHit]:
        scored = [IndexHit(i, sum(a * b for a, b in zip(vector, v, strict=True))) for i, v in self._vectors.items()]
        return sorted(scored, key=lambda h: -h.similarity)[: max(k, 0)]

    def vectors(self, ids: Sequence[str]) -> dict[str, list[float]]:
        return {i: self._vectors[i] for i in ids if i in self._vectors}

    def delete(self, ids: Sequence[str]) -> None:
        for i in ids:
            self._vectors.pop(i, None)

    def count(self) -> int:
        return len(self._vectors)

    def reset(self) -> None:
        self._vectors.clear()
        self._space = None
