"""The index kept in step with the ledger: every vector copied to the ledger first, the index reconciled with it at
every open, and a damaged embedded index set aside.

The ledger is the source of truth; the index can always be rebuilt from it. Chroma's HNSW files are torn by a kill
in the middle of their persistence (measured with chromadb 1.5.9: a truncated ``index_metadata.pickle`` after a
SIGKILL during writes), so every vector is also kept in the ledger (``MirroredIndex``), and ``reconcile`` runs at
every open: it restores what the index lacks from those copies, in seconds and without the embedder, and drops
vectors whose memory is gone (a kill between the two halves of a forget). It catches up from the mark the index was
saved at when it can, and otherwise compares every id in pieces (``Sweep``), which a chat runs between turns. Only
memories without a stored vector (written before the copies existed, or after an embedder switch) need embedding: a
handful is embedded at once; more wait for an explicit ``agent memories rebuild``, because re-embedding thousands of
memories takes minutes, or API calls. A damaged index is never deleted at once: it is moved aside
(``agent.files.move_aside``) until the fresh one is whole.
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
# How many ids one piece of a compare of every id reads of each side (``Sweep``): at 100,000 memories, 50 pieces.
SWEEP_PAGE = 2_000
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
    lost). A compare left for later (``reconcile`` with ``defer``) answers nothing restored, and not whole yet."""

    restored: int
    whole: bool
    recent: int = 0


class Reconcilable(Protocol):
    """What ``reconcile`` needs of the index it restores (``HeldIndex`` is one): a ``MirroredIndex`` that can be
    caught up from a saved mark (``resume``), compared in pieces from a mark (``begin``, ``catch_up``, ``end``)."""

    chroma: ChromaIndex

    def resume(self) -> tuple[int, int] | None: ...

    def begin(self, sweep: Sweep, copies_mark: tuple[int, int]) -> None: ...

    def catch_up(self) -> None: ...

    def end(self) -> None: ...

    def space(self) -> VectorSpace | None: ...

    def claim(self, space: VectorSpace) -> None: ...

    def upsert(self, ids: Sequence[str], vectors: Sequence[Sequence[float]]) -> None: ...


def reconcile(
    ledger: Ledger, index: Reconcilable, embedder: Embedder, user: str, notify: Notify, defer: bool = False
) -> Reconciled:
    """Make ``user``'s index hold the ledger's memories and nothing else, and the ledger a copy of each vector, as
    far as it can be done now; anything left undone is told through ``notify`` in one line. The caller says what
    was restored: it knows whether the index was just set aside.

    An embedded index saved in step with the ledger at a mark it still reaches is caught up from there
    (``HeldIndex.resume``): an open reads what changed since the last one, not every id. Otherwise every id of
    both is compared (``Sweep``), a page at a time: here, before this returns, or with ``defer`` (a chat, which
    runs the pieces on its memory thread between turns) later, the open reading no id at all. The index adapter
    cuts every call into batches Chroma accepts, so a store of any size is restored at once."""
    _agree_on_space(ledger, index.chroma, user)
    resumed = index.resume()
    if resumed is not None:
        restored, dropped = resumed
        if dropped:
            notify(_dropped(dropped))
        return Reconciled(restored, True)
    sweep = Sweep(ledger, index, embedder, user, notify, tell_restored=defer)
    index.begin(sweep, ledger.vector_changes(user, None, listing=False).mark)
    if defer:
        return Reconciled(0, False)
    while sweep.step():
        pass
    assert sweep.result is not None
    return sweep.result


class Sweep:
    """The compare of every id of the ledger with the index's, cut into pieces of at most ``SWEEP_PAGE`` ids each
    (``step``), so that a store of 100,000 memories without a saved mark does not make its open read 100,000 ids
    of each (4.5-5.1 s before the first prompt, measured): a chat runs one piece at a time between turns.

    First the ledger's memory ids in id order (``Ledger.id_page``), each page looked up in Chroma: what Chroma
    lacks is put back from the ledger's copies, what it holds and the ledger has no copy of is copied to the
    ledger; the few with no vector anywhere are embedded after the last page. Then, with every memory of the
    ledger in Chroma, the two counts tell whether Chroma holds anything else; only then are its ids read, a page at
    a time in its own order, and those whose memory is gone dropped (scrambled, as a forget drops them), and the
    counts compared again. Meanwhile the index serves searches: the held index catches up with what changed since
    the mark ``begin`` took (other processes' writes, this one's own), and a search's hits go through the ledger (a
    vector whose memory is gone answers no hit), so a memory Chroma lacks is missing from dense search only until
    its page is swept, and keyword search finds it all along. The mark is saved only once the sweep has ended, so
    an open after a kill in the middle sweeps again.

    ``notify`` hears what the open would have said; with ``tell_restored`` (a sweep left for later) also how many
    memories it put back, which ``reconcile``'s caller says otherwise (it knows whether the index was set aside)."""

    def __init__(self, ledger: Ledger, index: Reconcilable, embedder: Embedder, user: str, notify: Notify,
                 tell_restored: bool) -> None:
        self._ledger, self._index, self._embedder, self._user = ledger, index, embedder, user
        self._notify, self._tell_restored = notify, tell_restored
        self._phase = "ledger"  # then "count", then "chroma" (and "count" again) while Chroma holds more
        self._after = ""  # the last ledger id swept
        self._offset = 0  # into Chroma's ids
        self._found = -1  # orphans the last pass over Chroma's ids dropped (-1: none made)
        self._restored: list[str] = []
        self._unembedded: list[str] = []
        self._dropped = 0
        self.result: Reconciled | None = None

    def restart(self) -> None:
        """Begin again: the held index could not follow the ledger's changes since its mark (its record trimmed)."""
        self._phase, self._after, self._offset, self._found = "ledger", "", 0, -1

    def step(self) -> bool:
        """Do one piece; True while pieces remain."""
        if self.result is not None:
            return False
        if self._phase == "ledger":
            self._ledger_page()
        elif self._phase == "chroma":
            self._chroma_page()
        else:
            self._count()
        return self.result is None

    def _ledger_page(self) -> None:
        chroma, ledger, user = self._index.chroma, self._ledger, self._user
        page = ledger.id_page(user, self._after, SWEEP_PAGE)
        ids = [mid for mid, _ in page]
        held = chroma.held(ids)
        uncopied = [mid for mid, copied in page if mid in held and not copied]
        if uncopied:
            found = chroma.vectors(uncopied)
            ledger.put_vectors(user, list(found), list(found.values()))
        missing = [mid for mid in ids if mid not in held]
        copies = ledger.stored_vectors(user, missing)
        if copies:
            chroma.upsert(list(copies), list(copies.values()))
            if chroma.remote:  # forgotten on another machine between the two reads: not put back
                gone = sorted(set(copies) - set(ledger.stored_vectors(user, list(copies))))
                chroma.delete(gone)
                copies = {mid: copies[mid] for mid in copies if mid not in gone}
            log.debug("index: restored %d vectors from the ledger", len(copies))
        self._restored.extend(copies)
        self._unembedded.extend(mid for mid in missing if mid not in copies)
        if len(ids) == SWEEP_PAGE:
            self._after = ids[-1]
            return
        self._phase = "count"
        if self._unembedded:
            self._embed_unembedded()

    def _embed_unembedded(self) -> None:
        """Embed the memories with no vector anywhere, if few (``RECONCILE_LIMIT``): more wait for a rebuild."""
        records = self._ledger.get(self._user, self._unembedded)
        self._unembedded = [mid for mid in self._unembedded if mid in records]
        if not self._unembedded:
            return
        if len(self._unembedded) > RECONCILE_LIMIT:
            self._notify(f"{len(self._unembedded)} of {self._ledger.count(self._user)} memories have no vector in "
                         f"the index, so chat cannot recall them: {Remedy.REBUILD}.")
            return
        try:
            vectors = self._embedder.embed([records[mid].text for mid in self._unembedded])
        except EmbeddingError as exc:
            self._notify(f"{len(self._unembedded)} memories are not in the index yet and could not be embedded now "
                         f"({exc}).")
            return
        if self._index.space() is None:
            self._index.claim(space_of(self._embedder))
        self._index.upsert(self._unembedded, vectors)
        self._restored.extend(self._unembedded)
        self._unembedded = []

    def _count(self) -> None:
        """Whether Chroma holds more than the ledger's memories (less those with no vector): a pass over its ids
        then, unless the last one found nothing to drop (a count that differs for another reason)."""
        self._index.catch_up()  # what changed since the mark, before the counts
        if self._phase != "count":  # the record no longer reached the mark: begun again (``restart``)
            return
        held, stored = self._index.chroma.count(), self._ledger.count(self._user)
        if held > stored - len(self._unembedded) and self._found != 0:
            self._phase, self._offset, self._found = "chroma", 0, 0
            return
        self._finish(whole=held == stored)

    def _chroma_page(self) -> None:
        chroma = self._index.chroma
        page = chroma.id_page(self._offset, SWEEP_PAGE)
        known = self._ledger.get(self._user, page)
        orphans = sorted(set(page) - set(known))
        if orphans:
            chroma.delete(orphans)
        self._dropped += len(orphans)
        self._found += len(orphans)
        self._offset += len(page) - len(orphans)  # the ids after a deleted one move up
        if len(page) < SWEEP_PAGE:
            self._phase = "count"

    def _finish(self, whole: bool) -> None:
        if self._dropped:
            self._notify(_dropped(self._dropped))
        restored = len(self._restored)
        recent = _recent(self._ledger, self._user, self._restored) if self._index.chroma.remote else 0
        self.result = Reconciled(restored, whole, recent)
        if self._tell_restored and restored:
            self._notify(lacked(restored, self._ledger.count(self._user)))
        self._index.end()


def lacked(restored: int, total: int) -> str:
    return f"The memory index lacked {restored} of {total} memories; they were restored from the ledger."


def _dropped(n: int) -> str:
    return (f"Dropped {n} vectors from the index whose memory is not in the ledger (a forget or an eviction cut "
            "short, or a ledger replaced after damage).")


def _recent(ledger: Ledger, user: str, ids: list[str]) -> int:
    """How many of ``ids`` were written less than ``IN_FLIGHT`` seconds ago. Only a Chroma server has writers
    other than this process (an embedded store is held by one process at a time), so only there can a memory
    lack its vector because its writer has not reached the index yet."""
    since = time.time() - IN_FLIGHT
    return sum(record.created_at > since for record in ledger.get(user, ids).values()) if ids else 0
