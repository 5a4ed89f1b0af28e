"""The index kept in step with the ledger: every vector copied to the ledger first, the index reconciled with it at
every open, and a damaged embedded index set aside.

The ledger is the source of truth; the index can always be rebuilt from it. Chroma's HNSW files are torn by a kill
in the middle of their persistence (measured with chromadb 1.5.9: a truncated ``index_metadata.pickle`` after a
SIGKILL during writes), so every vector is also kept in the ledger (``MirroredIndex``), and ``reconcile`` runs at
every open: it restores what the index lacks from those copies, in seconds and without the embedder, and drops
vectors whose memory is gone (a kill between the two halves of a forget). Only memories without a stored vector
(written before the copies existed, or after an embedder switch) need embedding: a handful is embedded at once;
more wait for an explicit ``agent memories rebuild``, because re-embedding thousands of memories takes minutes, or
API calls. A damaged index is never deleted at once: it is moved aside (``agent.files.move_aside``) until the
fresh one is whole.
"""

from __future__ import annotations

import logging
import shutil
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from agent import locking
from agent.adapters.chroma_index import LOCK_WAIT, ChromaIndex, close_client
from agent.domain import VectorSpace
from agent.errors import EmbeddingError, Remedy
from agent.files import move_aside
from agent.memory.service import space_of
from agent.ports import Embedder, IndexHit, Ledger, Notify

log = logging.getLogger(__name__)

RECONCILE_LIMIT = 64
# How long a memory another machine wrote may lack its vector in a Chroma server's index without being news: that
# machine writes the ledger first and the server second, a moment later (or up to the server's deadline when the
# server is slow). Generous, because saying nothing costs nothing: the memory is restored either way.
IN_FLIGHT = 300.0


def set_aside_index(chroma_dir: Path) -> Path:
    """Close the embedded store of ``chroma_dir`` in this process and move it aside, holding its lock meanwhile so
    no other process opens it half-moved. At most one index is kept set aside: an older one goes first (an index is
    derived from the ledger, and each copy can weigh hundreds of MB), and ``drop_set_aside_indexes`` removes the
    last once the index is whole again. A damaged ledger moved aside is never removed: it holds text."""
    locking.acquire(chroma_dir, LOCK_WAIT)
    try:
        close_client(chroma_dir)
        drop_set_aside_indexes(chroma_dir)
        return move_aside(chroma_dir)
    finally:
        locking.release(chroma_dir)


def set_aside_indexes(chroma_dir: Path) -> list[Path]:
    return sorted(p for p in chroma_dir.parent.glob(f"{chroma_dir.name}.corrupt-*") if p.is_dir())


def drop_set_aside_indexes(chroma_dir: Path) -> list[Path]:
    """Remove the damaged indexes set aside beside ``chroma_dir``; returns them."""
    dropped = set_aside_indexes(chroma_dir)
    for path in dropped:
        shutil.rmtree(path, ignore_errors=True)
    return dropped


class MirroredIndex:
    """``VectorIndex`` on Chroma that keeps each vector, and the space they share, in the ledger first.

    The ledger's record of the space is the one that counts: after a damaged index is set aside, the fresh one
    has none, and the store must still refuse another embedder's vectors."""

    def __init__(self, chroma: ChromaIndex, ledger: Ledger, user: str) -> None:
        self.chroma = chroma
        self._ledger = ledger
        self._user = user

    def space(self) -> VectorSpace | None:
        return self._ledger.vector_space(self._user) or self.chroma.space()

    def claim(self, space: VectorSpace) -> None:
        self._ledger.claim_vectors(self._user, space)
        self.chroma.claim(space)

    def upsert(self, ids: Sequence[str], vectors: Sequence[Sequence[float]]) -> None:
        self._ledger.put_vectors(self._user, ids, vectors)
        self.chroma.upsert(ids, vectors)

    def query(self, vector: Sequence[float], k: int) -> list[IndexHit]:
        return self.chroma.query(vector, k)

    def vectors(self, ids: Sequence[str]) -> dict[str, list[float]]:
        return self.chroma.vectors(ids)

    def delete(self, ids: Sequence[str]) -> None:
        """Remove from Chroma; the ledger's copies go with the memories (``Ledger.delete``)."""
        self.chroma.delete(ids)

    def count(self) -> int:
        return self.chroma.count()

    def reset(self) -> None:
        self.chroma.reset()


def _agree_on_space(ledger: Ledger, chroma: ChromaIndex, user: str) -> None:
    """Give the ledger's copies and the Chroma collection the same space: a store from before the copies has it in
    Chroma only (the ledger takes it over), a fresh collection after damage has none (it takes the ledger's)."""
    kept, indexed = ledger.vector_space(user), chroma.space()
    if indexed is not None and kept != indexed:
        ledger.claim_vectors(user, indexed)
    elif indexed is None and kept is not None:
        chroma.claim(kept)


@dataclass(frozen=True)
class Reconciled:
    """What ``reconcile`` did: how many memories it put back into the index, whether the index now holds every
    memory of the ledger, and how many of those restored were written on a shared server less than ``IN_FLIGHT``
    seconds ago (most likely another machine's write still on its way to the server, not something the index
    lost)."""

    restored: int
    whole: bool
    recent: int = 0


class Reconcilable(Protocol):
    """What ``reconcile`` needs of the index it restores (``HeldIndex`` is one): a ``MirroredIndex`` that can be
    caught up from a saved mark (``resume``) and told what a full comparison read (``adopt``)."""

    chroma: ChromaIndex

    def resume(self) -> tuple[int, int] | None: ...

    def adopt(self, indexed: set[str], copies_mark: tuple[int, int]) -> None: ...

    def space(self) -> VectorSpace | None: ...

    def claim(self, space: VectorSpace) -> None: ...

    def upsert(self, ids: Sequence[str], vectors: Sequence[Sequence[float]]) -> None: ...


def reconcile(
    ledger: Ledger, index: Reconcilable, embedder: Embedder, user: str, notify: Notify
) -> Reconciled:
    """Make ``user``'s index hold the ledger's memories and nothing else, and the ledger a copy of each vector, as
    far as it can be done now; anything left undone is told through ``notify`` in one line. The caller says what
    was restored: it knows whether the index was just set aside.

    An embedded index saved in step with the ledger at a mark it still reaches is caught up from there
    (``HeldIndex.resume``): an open reads what changed since the last one, not every id. Otherwise every id of
    both is compared, and the index keeps what was read, so its first catch-up does not read them again. The index
    adapter cuts every call into batches Chroma accepts, so a store of any size is restored at once."""
    chroma = index.chroma
    _agree_on_space(ledger, chroma, user)
    resumed = index.resume()
    if resumed is not None:
        restored, dropped = resumed
        if dropped:
            notify(_dropped(dropped))
        return Reconciled(restored, True)
    # The index is read before the ledger: another process (another machine, on a shared ledger) writes a memory to
    # the ledger first and its vector second, so an id the index held before the ledger was read is in the ledger
    # unless it was forgotten. Read the other way round, a memory written in between would pass for an orphan and
    # lose its vector.
    indexed = chroma.ids()
    copied = ledger.vector_changes(user, None)  # the mark first: what changes after it, the first catch-up reads
    stored = set(ledger.ids(user))
    orphans = indexed - stored
    if orphans:
        notify(_dropped(len(orphans)))
        chroma.delete(sorted(orphans))
    uncopied = sorted((stored & indexed) - set(copied.ids))
    if uncopied:
        found = chroma.vectors(uncopied)
        ledger.put_vectors(user, list(found), list(found.values()))
    missing = sorted(stored - indexed)
    copies = ledger.stored_vectors(user, missing)
    if copies:
        chroma.upsert(list(copies), list(copies.values()))
        log.debug("index: restored %d vectors from the ledger", len(copies))
    index.adopt((indexed - orphans) | set(copies), copied.mark)
    if not missing:
        return Reconciled(0, True)
    recent = _recent(ledger, user, missing) if chroma.remote else 0
    unembedded = [mid for mid in missing if mid not in copies]
    if len(unembedded) > RECONCILE_LIMIT:
        notify(f"{len(unembedded)} of {len(stored)} memories have no vector in the index, so chat cannot recall "
               f"them: {Remedy.REBUILD}.")
        return Reconciled(len(copies), False, recent)
    if unembedded:
        records = ledger.get(user, unembedded)
        try:
            vectors = embedder.embed([records[mid].text for mid in unembedded])
        except EmbeddingError as exc:
            notify(f"{len(unembedded)} memories are not in the index yet and could not be embedded now ({exc}).")
            return Reconciled(len(copies), False, recent)
        if index.space() is None:
            index.claim(space_of(embedder))
        index.upsert(unembedded, vectors)
    return Reconciled(len(missing), True, recent)


def _dropped(n: int) -> str:
    return (f"Dropped {n} vectors from the index whose memory is not in the ledger (a forget or an eviction cut "
            "short, or a ledger replaced after damage).")


def _recent(ledger: Ledger, user: str, ids: list[str]) -> int:
    """How many of ``ids`` were written less than ``IN_FLIGHT`` seconds ago. Only a Chroma server has writers
    other than this process (an embedded store is held by one process at a time), so only there can a memory
    lack its vector because its writer has not reached the index yet."""
    since = time.time() - IN_FLIGHT
    return sum(record.created_at > since for record in ledger.get(user, ids).values()) if ids else 0
