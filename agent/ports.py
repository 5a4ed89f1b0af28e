"""The Protocols between the pure core and the edges. Each contract is in its docstring; tests hold fakes.

Nothing here imports openai, chromadb or a terminal library: adapters implement these.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from agent.domain import (
    Change,
    ForgetRecord,
    Links,
    Machine,
    MemoryRecord,
    Message,
    Quote,
    StatedFact,
    VectorChanges,
    VectorSpace,
)

# Tells the user one line about something the code put right, or could not, on its own (a restored index, a
# forget finished): the CLI prints it on stderr, a chat in its transcript.
Notify = Callable[[str], None]


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


@runtime_checkable
class WarmsUp(Protocol):
    """An embedder or index that can load now what its first use would wait for (a model, a shared store's
    vectors): the memory thread calls it while the user types."""

    def warm_up(self) -> None: ...


@runtime_checkable
class Sweeps(Protocol):
    """An index whose compare with the ledger was left for later (``HeldIndex`` opened in a chat with no saved mark
    to resume from): ``sweep`` does one bounded piece of it, True while pieces remain. The chat's memory thread
    calls it between turns, so the open does not read every id."""

    def sweep(self) -> bool: ...


@runtime_checkable
class Flushes(Protocol):
    """An index whose writes wait for a group commit (``HeldIndex``: the vectors in the ledger at once, in Chroma
    later): ``pending`` says how many wait, ``flush`` puts them in. Searches consult what waits, so a flush is never
    needed for a search to see a write; the chat's memory thread flushes between turns, and a close flushes."""

    def pending(self) -> int: ...

    def flush(self) -> None: ...


class VectorIndex(Protocol):
    """A per-user nearest-neighbour index over memory ids (cosine space). Holds ids and vectors, never text.

    ``space`` is the ``VectorSpace`` it was built with, or None for an empty new index.
    ``query`` returns at most ``k`` hits, best first, and never more than the index holds.
    Every method raises ``MemoryUnavailable`` (or a subclass) when the index cannot be used.
    """

    def space(self) -> VectorSpace | None: ...

    def claim(self, space: VectorSpace) -> None: ...

    def upsert(self, ids: Sequence[str], vectors: Sequence[Sequence[float]]) -> None: ...

    def query(self, vector: Sequence[float], k: int) -> list[IndexHit]: ...

    def vectors(self, ids: Sequence[str]) -> dict[str, list[float]]: ...

    def delete(self, ids: Sequence[str]) -> None: ...

    def count(self) -> int: ...

    def reset(self) -> None: ...


class MemoryStore(Protocol):
    """The durable source of truth for memory text and metadata, written before the index; the memory service and
    the retriever use it.

    ``count`` with a session counts the memories that session's turns produced (explicit ones aside), created at
    ``since`` or later; ``current`` counts only the memories no later one replaced (what the chat shows).
    ``keyword_search`` ranks the user's memories by a keyword score (higher is better) for the hybrid retriever.
    ``delete`` removes memories (an eviction, not a forget: a ledger on a server may leave their bytes in its tables'
    free space, where rewriting the tables at every write past the capacity would cost too much), and each one's
    vector copy with it. ``set_contexts`` rewrites memories' keyword context in place.
    ``profiled`` returns the memories that state profile facts (current and superseded) without a scan;
    ``recent`` the current memories seen last; ``supersede`` marks memories replaced by another (``by`` empty: current
    again); ``set_facts`` rewrites a memory's profile facts; ``restate`` adds a later quote to a memory's provenance.
    ``replaced_by`` returns the memories superseded by one of ``ids``; ``set_links`` rewrites the links (supersede
    and facts) of several memories in one transaction; ``unstate`` takes a quote out of a memory's provenance and
    keyword index, leaving no byte of it, as ``delete`` leaves none.

    ``put`` and ``restate`` given a ``change`` keep what one turn's write did (``Change``) in the same transaction,
    and only the ``CHANGES_KEPT`` newest of the user's; ``changes`` returns them, oldest first, with their keys;
    ``drop_changes`` deletes some, leaving no byte of them.

    ``together`` makes the writes of a block one transaction where the ledger can (SQLite: one commit, one fsync,
    where a write made three), committed when the block ends as they would have been one by one (a write that
    completed stays even if a later one raised); a ledger whose writes cost round trips, not commits, keeps each.

    ``store_id`` is a random id made once per ledger, which keeps its collections apart from other ledgers' on a
    shared Chroma server. ``ids`` lists every memory id of ``user``; ``close`` releases the connection.

    ``pages`` gives what ``all`` returns, in its order, ``size`` memories at a time: each page is read when the
    caller asks for it, by keys read once at the start (a memory deleted meanwhile is left out, one put meanwhile is
    not in), so a bulk reader (a rebuild of the index) holds one page of texts, and no read stays open between pages.
    """

    def store_id(self) -> str: ...

    def close(self) -> None: ...

    def ids(self, user: str) -> list[str]: ...

    def put(self, records: Sequence[MemoryRecord], change: Change | None = None) -> None: ...

    def get(self, user: str, ids: Sequence[str]) -> dict[str, MemoryRecord]: ...

    def all(self, user: str) -> list[MemoryRecord]: ...

    def pages(self, user: str, size: int) -> Iterator[list[MemoryRecord]]: ...

    def count(self, user: str, session: str | None = None, since: float = float("-inf"), current: bool = False
              ) -> int: ...

    def touch(self, user: str, ids: Sequence[str], when: float) -> None: ...

    def delete(self, user: str, ids: Sequence[str]) -> int: ...

    def set_contexts(self, user: str, contexts: Mapping[str, str]) -> None: ...

    def oldest(self, user: str, n: int) -> list[str]: ...

    def keyword_search(self, user: str, query: str, k: int) -> list[tuple[str, float]]: ...

    def profiled(self, user: str) -> list[MemoryRecord]: ...

    def recent(self, user: str, n: int) -> list[MemoryRecord]: ...

    def supersede(self, user: str, ids: Sequence[str], by: str, when: float) -> None: ...

    def set_facts(self, user: str, memory: str, facts: Sequence[StatedFact]) -> None: ...

    def restate(self, user: str, memory: str, quote: Quote, change: Change | None = None) -> None: ...

    def replaced_by(self, user: str, ids: Sequence[str]) -> list[MemoryRecord]: ...

    def set_links(self, user: str, links: Mapping[str, Links]) -> None: ...

    def unstate(self, user: str, memory: str, quote: Quote) -> None: ...

    def changes(self, user: str) -> list[Change]: ...

    def drop_changes(self, user: str, keys: Sequence[int]) -> None: ...

    def together(self) -> AbstractContextManager[None]: ...


class ForgetJournal(Protocol):
    """What a forget leaves to finish elsewhere (``agent.forget`` and the spool's replay use it).

    ``record_forget`` deletes as ``MemoryStore.delete`` does and, in the same transaction, keeps a ``ForgetRecord``
    of the texts still to be erased elsewhere until every machine registered for the user then
    (``MachineRegistry``) has acknowledged it (``acknowledge_forget``): the last acknowledgement drops it, after which
    no byte of the memories nor of the record is left in the ledger's files, and a record no machine waits for goes
    with the first. ``pending_forgets`` are the records not yet dropped (of every user), or only those ``machine``
    has still to finish. A ledger that is one machine's own file (SQLite) registers no machine: its records wait for
    no one but the scrub of the process that finishes them. The same transaction clears the forgotten ids from the
    memories they had superseded (``superseded_by``, theirs and their facts': current again), and keeps for good a
    keyed digest of each text (``forgotten_digest``) under the count of forgets recorded so far (``forget_mark``,
    which only grows): ``forgotten_since`` says which of some texts a forget recorded after a given count names, so
    that a turn kept on a machine's spool while the forget was made is never written back (``agent.spool``).
    """

    def record_forget(self, user: str, ids: Sequence[str], texts: Sequence[str]) -> tuple[int, int]: ...

    def pending_forgets(self, machine: str | None = None) -> list[ForgetRecord]: ...

    def forget_mark(self) -> int: ...

    def forgotten_since(self, user: str, texts: Sequence[str], mark: int) -> list[str]: ...

    def acknowledge_forget(self, key: int, machine: str) -> None: ...


class MachineRegistry(Protocol):
    """The machines that share a ledger on a server, which every forget waits for (``ForgetJournal``).

    ``register_machine`` records one for a user, ``machines`` lists a user's machines, and ``retire_machine`` stops
    the forgets waiting for one that will not come back.
    """

    def register_machine(self, machine: str, user: str, name: str) -> None: ...

    def machines(self, user: str) -> list[Machine]: ...

    def retire_machine(self, user: str, machine: str) -> bool: ...


class VectorCopies(Protocol):
    """The ledger's copy of every vector, from which a damaged index is rebuilt without embedding again and which
    the processes that do not hold the embedded index search (``agent.adapters.ledger_vectors``).

    ``vector_space`` is the space of ``user``'s copies (None before the first), ``claim_vectors`` records it (another
    space drops the old copies), ``put_vectors`` keeps a copy per id (a rewritten one becomes the latest),
    ``drop_vectors`` drops every copy of ``user``; ``vector_ids`` and ``stored_vectors`` read them by id,
    ``id_page`` a page of ``user``'s memory ids past one in id order, each with whether it has a copy (a compare of
    the index with the ledger in pieces),
    ``latest_vectors`` the ``n`` written last (a kill mid-write tears those first). ``vector_rowids`` are the row
    numbers of ``user``'s copies, a new one for each rewrite, so two lists compared tell what changed without reading
    a vector, and ``vector_rows`` reads (row number, memory id, float32 bytes) of those of ``user``'s rows that
    still exist (every read of a user's rows names the user: on a shared server no other user's row can answer).
    ``MemoryStore.delete`` drops a memory's copy with it.
    """

    def vector_space(self, user: str) -> VectorSpace | None: ...

    def claim_vectors(self, user: str, space: VectorSpace) -> None: ...

    def put_vectors(self, user: str, ids: Sequence[str], vectors: Sequence[Sequence[float]]) -> None: ...

    def drop_vectors(self, user: str) -> None: ...

    def vector_ids(self, user: str) -> list[str]: ...

    def id_page(self, user: str, after: str, size: int) -> list[tuple[str, bool]]: ...

    def stored_vectors(self, user: str, ids: Sequence[str]) -> dict[str, list[float]]: ...

    def latest_vectors(self, user: str, n: int) -> list[tuple[str, list[float]]]: ...

    def vector_rowids(self, user: str) -> list[int]: ...

    def vector_rows(self, user: str, rowids: Sequence[int]) -> list[tuple[int, str, bytes]]: ...


class ChangeFeed(Protocol):
    """What moved in the ledger, for the views kept in step with it (the held index, the ledger's vector search).

    ``change_mark`` is a value that differs after any transaction committed since it was last read, by any process
    (one cheap read): a view of the ledger refreshes only when it moved. ``vector_changes`` tells which of ``user``'s
    vector copies changed since a mark it gave before (``VectorChanges``), or every id when it cannot tell (the mark
    alone without ``listing``: the caller compares in pages), so a view kept in step with the copies pays for what
    was written, not for the store. ``after_commit`` runs what must follow the commit of what was written
    (``MemoryStore.together``): now, or when that block commits.
    """

    def change_mark(self) -> tuple[int, int]: ...

    def after_commit(self, then: Callable[[], None]) -> None: ...

    def vector_changes(self, user: str, since: tuple[int, int] | None, listing: bool = True) -> VectorChanges: ...


class Ledger(MemoryStore, ForgetJournal, MachineRegistry, VectorCopies, ChangeFeed, Protocol):
    """Every port of the ledger in one, as each ledger adapter implements them and the composition root passes
    them on; a consumer that needs less takes the smaller port."""


@dataclass(frozen=True)
class ChatChunk:
    """One piece of a streamed reply: text, or the closing facts (finish reason and token usage)."""

    text: str = ""
    finish_reason: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None


@dataclass(frozen=True)
class RetryNotice:
    """A retry of a chat request about to happen: the ``attempt``-th of at most ``retries``, after ``delay``
    seconds, and why. A chat model tells each one before it waits, so the user sees why nothing comes yet."""

    attempt: int
    retries: int
    delay: float
    reason: str


class ChatModel(Protocol):
    """Streams a reply to a list of messages. Raises ``ChatError`` subclasses; a stream that stops without a
    finish reason simply ends, and the caller treats the reply as truncated."""

    def stream(self, messages: Sequence[Message], model: str) -> Iterator[ChatChunk]: ...
