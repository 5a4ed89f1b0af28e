"""Which attribute of the user a sentence speaks to, decided by meaning rather than by the shape of the sentence.

A pattern reads "I live in Porto" and misses "Porto is home these days", "started at a bakery in October" or
"coeliac here": people say one fact in more shapes than any list of patterns holds. The local embedding model
places sentences about one attribute near each other whatever their shape, so each attribute has labelled example
sentences (``attributes.json`` beside this file, many phrasings each: the value first, no subject, terse, long
titles, changes), and a sentence gets the attribute whose ``NEAREST`` closest examples are closest on average,
when that average clears the embedder's calibrated threshold and beats the examples of "none" (sentences near an
attribute in words that say nothing of the user's own value: questions, plans, other people's facts) by
``MARGIN``; otherwise the answer is "unknown" (None). Reading the value once the attribute is known is
``agent.memory.values``' job.

The threshold is calibrated for the local model only (on held-out phrasings, not the examples: 0.42 with a margin
of 0.03 named the attribute of 50 of 52 labelled sentences and of 2 of 20 sentences that state none, both then
caught by the speaker check of ``agent.memory.profile``); another embedder has no threshold here and reads profile
facts by the patterns alone. The examples are embedded once per process and embedder, on the first write that
needs them, never on the reply's path; a sentence is classified with a vector the write computes anyway.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from agent.errors import EmbeddingError
from agent.ports import Embedder

EXAMPLES = Path(__file__).with_name("attributes.json")
NONE = "none"
# Per embedder kind: the mean similarity of the nearest examples an attribute needs.
THRESHOLD = {"local": 0.42}
# How far the attribute must be ahead of the "none" examples.
MARGIN = 0.03
NEAREST = 3
# What reaches every request in the profile's safety lines, however it was said (attributes and profile keys).
SAFETY = frozenset({"allergy", "intolerance", "condition", "medication", "pregnancy", "disability", "diet",
                    "avoids"})

# A function from sentences to the attribute each speaks to (None: unknown), as ``agent.memory.profile`` takes it.
Meaning = Callable[[Sequence[str]], list["Reading | None"]]


@dataclass(frozen=True)
class Reading:
    """The attribute a sentence speaks to and how close its nearest examples were (mean cosine similarity)."""

    attribute: str
    score: float


def examples(path: Path = EXAMPLES) -> dict[str, list[str]]:
    """The labelled sentences, attribute by attribute, "none" included."""
    data = json.loads(path.read_text(encoding="utf-8"))
    return {**data["attributes"], NONE: data[NONE]}


class Attributes:
    """The nearest-examples classifier over one embedder; ``classify`` takes the sentences' vectors."""

    def __init__(self, embedder: Embedder, threshold: float, labelled: dict[str, list[str]] | None = None) -> None:
        self._embedder = embedder
        self.threshold = threshold
        self._labelled = labelled if labelled is not None else examples()
        self._matrix: npt.NDArray[np.float32] | None = None
        self._labels: list[str] = []
        self._lock = threading.Lock()

    def _examples(self) -> tuple[npt.NDArray[np.float32], list[str]]:
        with self._lock:
            if self._matrix is None:
                labels = [label for label, texts in self._labelled.items() for _ in texts]
                texts = [text for group in self._labelled.values() for text in group]
                self._matrix = np.asarray(self._embedder.embed(texts), dtype=np.float32)
                self._labels = labels
            return self._matrix, self._labels

    def classify(self, vectors: Sequence[Sequence[float]]) -> list[Reading | None]:
        """The attribute each vector's sentence speaks to, or None when no attribute is close enough."""
        if not vectors:
            return []
        matrix, labels = self._examples()
        similarities = np.asarray(vectors, dtype=np.float32) @ matrix.T
        names = sorted(set(labels))
        columns = {name: np.array([label == name for label in labels]) for name in names}
        out: list[Reading | None] = []
        for row in similarities:
            scores = {name: float(np.sort(row[mask])[::-1][:NEAREST].mean()) for name, mask in columns.items()}
            none = scores.pop(NONE, 0.0)
            best = max(scores, key=lambda name: scores[name])
            good = scores[best] >= self.threshold and scores[best] >= none + MARGIN
            out.append(Reading(best, scores[best]) if good else None)
        return out


_SHARED: dict[tuple[str, str], Attributes] = {}
_SHARED_LOCK = threading.Lock()


def for_embedder(embedder: Embedder) -> Attributes | None:
    """The classifier of ``embedder``'s kind, shared by the services of one process (the examples are embedded
    once), or None for a kind without a calibrated threshold."""
    threshold = THRESHOLD.get(embedder.name)
    if threshold is None:
        return None
    key = (embedder.name, embedder.model)
    with _SHARED_LOCK:
        if key not in _SHARED:
            _SHARED[key] = Attributes(embedder, threshold)
        return _SHARED[key]


def meaning(classifier: Attributes, vector_of: Callable[[Sequence[str]], list[list[float]]]) -> Meaning:
    """The ``Meaning`` of ``classifier``, embedding sentences through ``vector_of`` (which may hand back a vector the
    write computed already); an embedder that fails gives "unknown" for every sentence: the patterns still read."""

    def read(sentences: Sequence[str]) -> list[Reading | None]:
        if not sentences:
            return []
        try:
            return classifier.classify(vector_of(sentences))
        except EmbeddingError:
            return [None] * len(sentences)

    return read
