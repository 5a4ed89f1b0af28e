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

The threshold is calibrated for the local model only, on 60 labelled sentences that are not among the examples (40
about an attribute, 20 about none): 0.42 with a margin of 0.03 named 51 of 60 rightly, missed 4 of the 40 (no
attribute, so the patterns alone read them) and gave an attribute to 5 of the 20 (most then yield no value, or are
questions or another person's facts that ``agent.memory.profile`` sets aside). Another embedder has no threshold
here and reads profile facts by the patterns alone. The examples are embedded once per process and embedder, on
the first write that needs them, never on the reply's path; a sentence is classified with the vector the write
computes anyway (``MemoryService``), in 0.2 ms for a turn.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from agent.errors import EmbeddingError
from agent.ports import Embedder

if TYPE_CHECKING:  # numpy is imported where the examples are embedded: `agent config` imports the profile, this too
    import numpy as np
    import numpy.typing as npt

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
# Attributes no rule reads a value of: a sport, a gym, a bank, how the user works. Their value is the user's own
# words (``agent.memory.values``); several may hold at once, and a change said in words retires the ones before.
OPEN = frozenset({"sport", "gym", "team", "instrument", "hobby", "drink", "work pattern", "education", "bank",
                  "provider", "religion", "software", "appearance", "child's school", "doctor", "streaming",
                  "home type"})
# Attributes with several values at once (two sports; a bike to the station, then a train) whose values a change
# said in words retires ("switched to swimming", "cycling to the office now").
CHANGING = OPEN | {"commute"}

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
        self._names: list[str] = []
        self._table: npt.NDArray[np.intp] | None = None
        self._lock = threading.Lock()

    def _examples(self) -> tuple[npt.NDArray[np.float32], list[str], npt.NDArray[np.intp]]:
        """The examples' vectors as columns (contiguous: a product with a few rows then costs 0.1 ms, where the
        transposed view of rows took 2 to 10 ms on a loaded machine), the labels, and each label's columns as a row
        of a table (padded with the index of a column of -inf), so one partition finds every label's nearest."""
        import numpy as np

        with self._lock:
            if self._matrix is None or self._table is None:
                texts = [text for group in self._labelled.values() for text in group]
                vectors = np.asarray(self._embedder.embed(texts), dtype=np.float32)
                self._matrix = np.ascontiguousarray(vectors.T)
                self._names = list(self._labelled)
                width = max(len(group) for group in self._labelled.values())
                self._table = np.full((len(self._names), width), len(texts), dtype=np.intp)
                start = 0
                for row, group in enumerate(self._labelled.values()):
                    self._table[row, : len(group)] = np.arange(start, start + len(group))
                    start += len(group)
            return self._matrix, self._names, self._table

    def warm_up(self) -> None:
        """Embed the examples now (1,600 sentences: seconds on a loaded machine), so the first write does not."""
        self._examples()

    def classify(self, vectors: Sequence[Sequence[float]]) -> list[Reading | None]:
        """The attribute each vector's sentence speaks to, or None when no attribute is close enough."""
        if not vectors:
            return []
        import numpy as np

        matrix, names, table = self._examples()
        similarities = np.asarray(vectors, dtype=np.float32) @ matrix
        padded = np.concatenate([similarities, np.full((len(similarities), 1), -np.inf, np.float32)], axis=1)
        nearest = -np.partition(-padded[:, table], NEAREST - 1, axis=2)[:, :, :NEAREST]
        means = nearest.mean(axis=2)
        none = names.index(NONE) if NONE in names else None
        out: list[Reading | None] = []
        for row in means:
            against = float(row[none]) if none is not None else 0.0
            if none is not None:
                row[none] = -np.inf
            best = int(np.argmax(row))
            score = float(row[best])
            good = score >= self.threshold and score >= against + MARGIN
            out.append(Reading(names[best], score) if good else None)
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
