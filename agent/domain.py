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
class MemoryRecord:
    """One long-term memory with its provenance.

    ``text`` is what is embedded and injected; ``source`` is the user's words it came from (equal to ``text``
    for a stored turn, the turn an extracted fact was drawn from otherwise). ``extra`` carries caller metadata
    (the benchmark keeps LoCoMo's ``dia_id`` there); it never holds secrets.
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


@dataclass(frozen=True)
class ScoredMemory:
    """A memory as retrieval returns it: ``similarity`` is the embedder's cosine similarity to the probe,
    ``score`` the fused ranking score (dense and keyword) that ordered it."""

    record: MemoryRecord
    similarity: float
    score: float


@dataclass(frozen=True)
class ForgetRecord:
    """A forget under way, as the ledger keeps it until every other file is scrubbed: whose memories, their ids,
    and the texts (each memory's text and the words it came from) still to be erased from sessions and history."""

    key: int
    user: str
    ids: tuple[str, ...]
    texts: tuple[str, ...]


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
