"""Which attribute of the user a sentence speaks to, decided by meaning rather than by the shape of the sentence.

A pattern reads "I live in Porto" and misses "Porto is home these days", "started at a bakery in October" or
"coeliac here": people say one fact in more shapes than any list of patterns holds. The local embedding model
places sentences about one attribute near each other whatever their shape, so each attribute has labelled example
sentences (``attributes.json`` beside this file, many phrasings each: the value first, no subject, terse, long
titles, changes), and "none" has sentences near an attribute in words that say nothing of the user's own value
(questions, plans, other people's facts). A softmax head over the embeddings is trained on them when the examples
are embedded (a linear layer, 150 full-batch Adam steps, classes weighted by their size: seconds, once per process
and embedder); a sentence gets the attribute the head gives ``PROBABILITY`` or more, unless "none" is likelier;
otherwise the answer is "unknown" (None). Reading the value once the attribute is known is
``agent.memory.values``' job.

Why a head and not the nearest examples: in five-fold cross-validation over the 2,238 labelled sentences (written by
three writers who had not seen the rules; ``python bench/attributes_cv.py``), the head named the attribute of 74% of
the attribute sentences, gave a wrong one to 9%, kept 57% of the "none" near misses unknown and gave 91% of the
safety sentences a safety attribute; the three nearest examples' mean, the rule before (0.42, 0.03 ahead of "none"),
named 57%, gave a wrong one to 10%, kept 56% unknown and 78% of the safety sentences. The head learns which
directions of the embedding tell attributes apart, where the nearest examples answer to whatever words a sentence
shares with them. Another embedder has no calibrated head here and reads profile facts by the patterns alone. A
sentence is classified with the vector the write computes anyway (``MemoryService``), in well under a millisecond
for a turn.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from agent.errors import EmbeddingError
from agent.ports import Embedder

if TYPE_CHECKING:  # numpy is imported where the examples are embedded: `agent config` imports the profile, this too
    import numpy as np
    import numpy.typing as npt

EXAMPLES = Path(__file__).with_name("attributes.json")
NONE = "none"
# Per embedder kind: the probability the head must give an attribute.
PROBABILITY = {"local": 0.5}
# What the medical safety attributes together need, when no attribute alone is likely enough and none but "none" is
# likelier than they are: "peanuts can kill me, literally" is an allergy at 0.23, an intolerance at 0.12 and "none" at
# 0.55 ("red bull addict, 3 a day", a drink at 0.33 and a medication at 0.28, is no medication). A safety fact missed
# is the one memory a user cannot afford to lose: in cross-validation (bench/attributes_cv.py) 91% of the safety
# sentences got a safety attribute with the pooling, 78% with the nearest examples before it; a sentence given one
# wrongly costs a line in the profile's safety section.
SAFETY_MASS = 0.3
# How likely another attribute must be to count among a reading's alternatives.
ALTERNATIVE = 0.05
# How likely an attribute must be, among a sentence's three likeliest, for two memories to be about it: the old and the
# new line of an update share one so in 126 of the 201 updates of the dev sets, two facts that both hold in 62 of 134
# pairs (bench/memory_truth_*.json), and a stated change tells them apart (``agent.memory.truth``).
LIKELY = 0.3
# The head's training: cosine similarities are small numbers, so it sees them ten times larger (a temperature);
# full-batch Adam steps at this rate converge on 2,200 sentences, and the weight decay keeps a class of a few dozen
# examples from being learnt word by word.
SCALE = 10.0
STEPS = 150
RATE = 0.05
DECAY = 1e-3
# What reaches every request in the profile's safety lines, however it was said (attributes and profile keys).
SAFETY = frozenset({"allergy", "intolerance", "condition", "medication", "pregnancy", "disability", "diet",
                    "avoids"})
# The attributes pooled: the medical ones. A diet is read by its word ("vegan", "halal"), and a sentence near a
# diet without one is a taste ("my favourite food is sushi"), not a restriction.
_POOLED = SAFETY - {"diet", "avoids"}
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
    """The attribute a sentence speaks to and the probability the head gave it; ``pooled`` when no attribute was
    likely enough alone and the safety attributes together were (``SAFETY_MASS``)."""

    attribute: str
    score: float
    pooled: bool = False
    # The other attributes the head found likely too (``ALTERNATIVE`` or more), likeliest first: "Sporting is my
    # club now" is a sport at 0.84 and a team at 0.06, and what changed is the team the user held.
    alternatives: tuple[str, ...] = ()


def examples(path: Path = EXAMPLES) -> dict[str, list[str]]:
    """The labelled sentences, attribute by attribute, "none" included."""
    data = json.loads(path.read_text(encoding="utf-8"))
    return {**data["attributes"], NONE: data[NONE]}


@dataclass(frozen=True)
class Head:
    """A trained softmax layer: ``weights`` (dimensions by classes) and ``bias``, the classes named by ``names``."""

    weights: npt.NDArray[np.float32]
    bias: npt.NDArray[np.float32]
    names: tuple[str, ...]

    def probabilities(self, vectors: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
        return _softmax((vectors * SCALE) @ self.weights + self.bias)


def _softmax(logits: npt.NDArray[np.floating[Any]]) -> npt.NDArray[np.float32]:
    import numpy as np

    exp = np.exp(logits - logits.max(axis=1, keepdims=True))
    return np.asarray(exp / exp.sum(axis=1, keepdims=True), dtype=np.float32)


def train(vectors: npt.NDArray[np.float32], labels: Sequence[int], names: Sequence[str]) -> Head:
    """The softmax head fitted to the labelled ``vectors`` (cross-entropy, each class weighted by the inverse of its
    size so that 30 examples of a bank count as much as 300 of "none"; Adam, deterministic: zeros to start, the full
    batch at every step)."""
    import numpy as np

    classes = len(names)
    target = np.eye(classes, dtype=np.float32)[np.asarray(labels)]
    counts = np.bincount(np.asarray(labels), minlength=classes).astype(np.float32)
    weight = (len(labels) / (classes * np.maximum(counts, 1)))[np.asarray(labels)][:, None] / len(labels)
    scaled = np.asarray(vectors, dtype=np.float32) * SCALE
    scaled_t = np.ascontiguousarray(scaled.T)
    weights = np.zeros((scaled.shape[1], classes), np.float32)
    bias = np.zeros(classes, np.float32)
    moments = [np.zeros_like(weights), np.zeros_like(weights), np.zeros_like(bias), np.zeros_like(bias)]
    for step in range(1, STEPS + 1):
        error = (_softmax(scaled @ weights + bias) - target) * weight
        for param, grad, first, second in ((weights, scaled_t @ error + DECAY * weights, *moments[:2]),
                                           (bias, error.sum(axis=0), *moments[2:])):
            first *= 0.9
            first += 0.1 * grad
            second *= 0.999
            second += 0.001 * grad * grad
            param -= RATE * (first / (1 - 0.9**step)) / (np.sqrt(second / (1 - 0.999**step)) + 1e-8)
    return Head(weights, bias, tuple(names))


class HeadStore(Protocol):
    """Where a trained head is kept between processes (``agent.adapters.head_files``), by a key that names the
    embedder, the examples and the training: embedding 2,200 examples and training takes seconds, loading a head
    milliseconds. A head that cannot be loaded is None, and is trained again."""

    def load(self, key: str) -> Head | None: ...

    def save(self, key: str, head: Head) -> None: ...


class Attributes:
    """The attribute classifier over one embedder; ``classify`` takes the sentences' vectors."""

    def __init__(self, embedder: Embedder, probability: float, labelled: dict[str, list[str]] | None = None,
                 heads: HeadStore | None = None) -> None:
        self._embedder = embedder
        self.probability = probability
        self._labelled = labelled if labelled is not None else examples()
        self.heads = heads
        self._head: Head | None = None
        self._lock = threading.Lock()

    def key(self) -> str:
        """What the head is a function of: the embedder's model, the examples and the training's constants."""
        named = [self._embedder.name, self._embedder.model, self._labelled, SCALE, STEPS, RATE, DECAY]
        return hashlib.sha256(json.dumps(named, sort_keys=True).encode()).hexdigest()

    def _trained(self) -> Head:
        """The head: kept from an earlier process, or trained on the examples' vectors the first time it is needed
        (and kept for the next)."""
        import numpy as np

        with self._lock:
            if self._head is None:
                key = self.key()
                self._head = self.heads.load(key) if self.heads is not None else None
                if self._head is None or self._head.names != tuple(self._labelled):
                    names = list(self._labelled)
                    texts = [text for group in self._labelled.values() for text in group]
                    labels = [row for row, group in enumerate(self._labelled.values()) for _ in group]
                    vectors = np.asarray(self._embedder.embed(texts), dtype=np.float32)
                    self._head = train(vectors, labels, names)
                    if self.heads is not None:
                        self.heads.save(key, self._head)
            return self._head

    def use(self, head: Head) -> None:
        """Classify with ``head``, trained elsewhere (a cross-validation's fold), instead of the examples."""
        with self._lock:
            self._head = head

    def warm_up(self) -> None:
        """Embed the examples and train the head now (2,200 sentences: seconds on a loaded machine), so the first
        write does not."""
        self._trained()

    def classify(self, vectors: Sequence[Sequence[float]]) -> list[Reading | None]:
        """The attribute each vector's sentence speaks to, or None when no attribute is likely enough."""
        if not vectors:
            return []
        import numpy as np

        head = self._trained()
        safety = [column for column, name in enumerate(head.names) if name in _POOLED]
        out: list[Reading | None] = []
        for row in head.probabilities(np.asarray(vectors, dtype=np.float32)):
            best = int(np.argmax(row))
            name, score = head.names[best], float(row[best])
            others = tuple(head.names[c] for c in np.argsort(-row) if head.names[c] not in (name, NONE)
                           and row[c] >= ALTERNATIVE)
            if name != NONE and score >= self.probability:
                out.append(Reading(name, score, alternatives=others))
            elif safety and (name == NONE or name in SAFETY) and float(row[safety].sum()) >= SAFETY_MASS:
                likeliest = max(safety, key=lambda column: row[column])
                out.append(Reading(head.names[likeliest], float(row[safety].sum()), pooled=True,
                                   alternatives=tuple(a for a in others if a != head.names[likeliest])))
            else:
                out.append(None)
        return out

    def probabilities_of(self, name: str, vectors: Sequence[Sequence[float]]) -> list[float]:
        """The probability the head gives class ``name`` for each vector's sentence."""
        if not vectors:
            return []
        import numpy as np

        head = self._trained()
        column = head.names.index(name)
        return [float(p) for p in head.probabilities(np.asarray(vectors, dtype=np.float32))[:, column]]

    def likely(self, vectors: Sequence[Sequence[float]]) -> list[frozenset[str]]:
        """The attributes each vector's sentence likely speaks to: of the head's three likeliest, those it gives
        ``LIKELY`` or more ("none" aside). Looser than ``classify``: a fact said in passing ("the flat's tiny but
        it's mine") is seldom likely enough for ``classify`` to name, and is still about the home."""
        if not vectors:
            return []
        import numpy as np

        head = self._trained()
        return [frozenset(head.names[c] for c in np.argsort(-row)[:3] if row[c] >= LIKELY and head.names[c] != NONE)
                for row in head.probabilities(np.asarray(vectors, dtype=np.float32))]


_SHARED: dict[tuple[str, str], Attributes] = {}
_SHARED_LOCK = threading.Lock()


def for_embedder(embedder: Embedder, heads: HeadStore | None = None) -> Attributes | None:
    """The classifier of ``embedder``'s kind, shared by the services of one process (the examples are embedded
    once), or None for a kind without a calibrated head; ``heads`` keeps its head between processes."""
    probability = PROBABILITY.get(embedder.name)
    if probability is None:
        return None
    key = (embedder.name, embedder.model)
    with _SHARED_LOCK:
        if key not in _SHARED:
            _SHARED[key] = Attributes(embedder, probability)
        if heads is not None and _SHARED[key].heads is None:
            _SHARED[key].heads = heads
        return _SHARED[key]


def sure(read: Meaning, probability: float) -> Meaning:
    """``read`` answering only for the sentences whose attribute it gives ``probability`` or more on its own: a
    safety reading pooled across attributes (``SAFETY_MASS``) is a reason to keep a statement's safety line, not
    evidence that a line states anything."""

    def sure_of(sentences: Sequence[str]) -> list[Reading | None]:
        return [r if r is not None and not r.pooled and r.score >= probability else None for r in read(sentences)]

    return sure_of


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
