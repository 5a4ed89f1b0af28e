"""Plain data shared by every layer: messages, memory records and scored memories."""

from __future__ import annotations

import hashlib
import re
import unicodedata
from dataclasses import dataclass, field
from typing import Literal

Role = Literal["system", "user", "assistant"]
MemoryKind = Literal["turn", "fact", "explicit"]


@dataclass(frozen=True)
class Message:
    """One chat message as the model sees it."""

    role: Role
    content: str


@dataclass(frozen=True)
class Quote:
    """The user's words of a later turn that said again what a memory says: kept in the memory's provenance."""

    text: str
    session: str
    turn: int
    at: float


@dataclass(frozen=True)
class StatedFact:
    """A profile fact a memory states (``agent.memory.profile``); ``superseded_by`` is the id of the memory that
    replaced this value while the memory itself stays current for its other facts."""

    key: str
    value: str
    superseded_by: str = ""


@dataclass(frozen=True)
class MemoryRecord:
    """One long-term memory with its provenance.

    ``text`` is what is embedded and injected; ``source`` is the user's words it came from (equal to ``text``
    for a stored turn, the turn an extracted fact was drawn from otherwise). ``extra`` carries caller metadata
    (the benchmark keeps LoCoMo's ``dia_id`` there); it never holds secrets.

    ``facts`` are the profile facts the memory states. A memory
    replaced by a later one has ``superseded_by`` set to that memory's id and ``superseded_at`` to when; it stays
    in the store, out of the prompt, until restored or forgotten. ``restated`` holds the later quotes that said
    the same thing again (``agent.memory.truth``).
    """

    id: str
    text: str
    kind: MemoryKind
    user: str
    session: str
    turn: int
    created_at: float
    last_seen: float
    content_hash: str
    source: str
    extra: dict[str, str] = field(default_factory=dict)
    facts: tuple[StatedFact, ...] = ()
    superseded_by: str = ""
    superseded_at: float = 0.0
    restated: tuple[Quote, ...] = ()

    @property
    def current(self) -> bool:
        return not self.superseded_by

    def quotes(self) -> list[str]:
        """Every piece of the user's words this memory holds: its text, its source and each restatement."""
        return [self.text, self.source, *(quote.text for quote in self.restated)]


@dataclass(frozen=True)
class ScoredMemory:
    """A memory as retrieval returns it: ``similarity`` is the embedder's cosine similarity to the probe,
    ``score`` the fused ranking score (dense and keyword) that ordered it."""

    record: MemoryRecord
    similarity: float
    score: float


_SPACES = re.compile(r"\s+")


def normalise_text(text: str) -> str:
    """The form two statements share when they say the same thing: NFKC, case-folded, spaces collapsed."""
    return _SPACES.sub(" ", unicodedata.normalize("NFKC", text)).strip().casefold()


def content_hash(text: str) -> str:
    """sha256 of the normalised text, used to skip already-stored content before paying to embed it."""
    return hashlib.sha256(normalise_text(text).encode("utf-8")).hexdigest()


def memory_id(user: str, text: str) -> str:
    """The id of a memory derives from its user and normalised text, so the same statement is stored once."""
    return hashlib.sha256(f"{user}\x00{normalise_text(text)}".encode()).hexdigest()[:32]
