"""The Protocols between the pure core and the edges. Each contract is in its docstring; tests hold fakes.

Nothing here imports openai, chromadb or a terminal library: adapters implement these.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from agent.domain import ForgetRecord, MemoryRecord, Message, Quote, StatedFact


class Embedder(Protocol):
    """Turns texts into unit-length vectors.

    ``name`` is the embedder kind (``local``, ``openai``), ``model`` the model it runs and ``dimension`` the
    vector length; the three identify a vector space, and vectors of two spaces are never compared.
    ``embed`` returns one vector per text, in order, each L2-normalised; it raises ``EmbeddingError``.
    """

    @property
    def name(self) -> str: ...

    @property
    def model(self) -> str: ...

    @property
    def dimension(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> list[list[float]]: ...


@dataclass(frozen=True)
class IndexHit:
    """A vector-index hit: the memory id and its cosine similarity to the probe (1 is identical)."""

    id: str
    similarity: float


class VectorIndex(Protocol):
    """A per-user nearest-neighbour index over memory ids (cosine space). Holds ids and vectors, never text.

    ``space`` is the (embedder name, model, dimension) it was built with, or None for an empty new index.
    ``query`` returns at most ``k`` hits, best first, and never more than the index holds.
    Every method raises ``MemoryUnavailable`` (or a subclass) when the index cannot be used.
    """

    def space(self) -> tuple[str, str, int] | None: ...

    def claim(self, space: tuple[str, str, int]) -> None: ...

    def upsert(self, ids: Sequence[str], vectors: Sequence[Sequence[float]]) -> None: ...

    def query(self, vector: Sequence[float], k: int) -> list[IndexHit]: ...

    def vectors(self, ids: Sequence[str]) -> dict[str, list[float]]: ...

    def delete(self, ids: Sequence[str]) -> None: ...

    def count(self) -> int: ...

    def reset(self) -> None: ...


class Ledger(Protocol):
    """The durable source of truth for memory text and metadata, written before the index.

    ``count`` with a session counts the memories that session's turns produced (explicit ones aside), created at
    ``since`` or later.
    ``keyword_search`` ranks the user's memories by a keyword score (higher is better) for the hybrid retriever.
    ``delete`` must leave no byte of the deleted text in the ledger's files. ``record_forget`` deletes as
    ``delete`` does and, in the same transaction, keeps a ``ForgetRecord`` of the texts still to be erased elsewhere
    until ``drop_forget`` (which leaves no byte of it either); ``set_contexts`` rewrites memories' keyword context
    in place.
    ``profiled`` returns the memories that state profile facts (current and superseded) without a scan;
    ``recent`` the current memories seen last; ``supersede`` marks memories replaced by another (``by`` empty: current
    again); ``set_facts`` rewrites a memory's profile facts; ``restate`` adds a later quote to a memory's provenance.
    """

    def put(self, records: Sequence[MemoryRecord]) -> None: ...

    def get(self, user: str, ids: Sequence[str]) -> dict[str, MemoryRecord]: ...

    def all(self, user: str) -> list[MemoryRecord]: ...

    def count(self, user: str, session: str | None = None, since: float = float("-inf")) -> int: ...

    def touch(self, user: str, ids: Sequence[str], when: float) -> None: ...

    def delete(self, user: str, ids: Sequence[str]) -> int: ...

    def record_forget(self, user: str, ids: Sequence[str], texts: Sequence[str]) -> tuple[int, int]: ...

    def pending_forgets(self) -> list[ForgetRecord]: ...

    def drop_forget(self, key: int) -> None: ...

    def set_contexts(self, user: str, contexts: Mapping[str, str]) -> None: ...

    def oldest(self, user: str, n: int) -> list[str]: ...

    def keyword_search(self, user: str, query: str, k: int) -> list[tuple[str, float]]: ...

    def profiled(self, user: str) -> list[MemoryRecord]: ...

    def recent(self, user: str, n: int) -> list[MemoryRecord]: ...

    def supersede(self, user: str, ids: Sequence[str], by: str, when: float) -> None: ...

    def set_facts(self, user: str, memory: str, facts: Sequence[StatedFact]) -> None: ...

    def restate(self, user: str, memory: str, quote: Quote) -> None: ...


@dataclass(frozen=True)
class ChatChunk:
    """One piece of a streamed reply: text, or the closing facts (finish reason and token usage)."""

    text: str = ""
    finish_reason: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None


class ChatModel(Protocol):
    """Streams a reply to a list of messages. Raises ``ChatError`` subclasses; a stream that stops without a
    finish reason simply ends, and the caller treats the reply as truncated."""

    def stream(self, messages: Sequence[Message], model: str) -> Iterator[ChatChunk]: ...
