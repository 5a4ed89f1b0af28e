"""The Chroma index of a process, kept in step with what the other processes wrote to the ledger: the one process
that holds the embedded store, or every process on a Chroma server.

Several agent processes share one data directory (chats in several terminals, ``agent memories ...`` beside
them). Only one of them may have the embedded Chroma store open (``agent.locking``): whoever opens memory first
holds it until it ends, and the others write their memories and vectors to the ledger only
(``agent.adapters.ledger_vectors``). So the holder's Chroma index lacks what they wrote and still has what they
forgot. Before each search, ``HeldIndex`` compares the ledger's change mark (one cheap read) and, only when it
moved, catches up with the ids whose copies changed since (``Ledger.vector_changes``: a turn after a write reads
what was written, not every id): the vectors the ledger has and the index lacks are put in (from the ledger's
copies, without embedding anything), and the ones whose memory another process forgot are scrambled and deleted
from Chroma's files. A memory written in another terminal is therefore found at this process's next turn, and a
forgotten one is not, and leaves Chroma's files then.

The index holds nothing the ledger does not: every vector reaches the ledger before Chroma (``MirroredIndex``), and
a forget deletes from Chroma first, so comparing the ids of the two tells exactly what to add and what to drop.

On a Chroma server (the shared deployment) the same catch-up heals what no single open can: a memory whose vector
reached the ledger but not the server (the server stopped or killed while a chat wrote it, on any machine) is put
into the server's index by the next search of any chat open on that ledger, from the ledger's copy. The ids this
process knows in the server's collection are those it read at its first catch-up and those it wrote since; what
other machines wrote there since is put in once more from the same copy, which changes nothing. A vector this
process cannot write to Chroma (the server away) is not a failed write: the memory and its vector are in the
ledger, the source of truth, and the next catch-up puts it into the index.

In a chat (``group_writes``, which ``open_memory`` sets for the chat's memory thread) a write does not wait for
Chroma (issue 22: Chroma's upsert was a third of one ``remember`` at 10,000 memories, and
grows with the store). ``upsert`` writes the vectors' copies to the ledger, durable before it returns, and keeps the
vectors pending; they reach Chroma together (one upsert, a group commit) when ``GROUP`` of them are pending, when the
chat's memory thread has a moment between turns (``flush``), before anything that reads Chroma whole (a compare of
every id, the counts, a piece of a sweep, a saved mark), and when the store closes. Until then a search consults them:
``query`` ranks the pending vectors beside Chroma's hits, so the next turn's recall sees a memory just written. A
forget takes its ids out of the pending ones before it deletes them from Chroma, so nothing pending can put a
forgotten vector back. A kill loses only what was pending, which the ledger holds: the next open's catch-up from its
mark (or its compare) puts those vectors back from the copies, as it does for any write Chroma lost. Every other
process (``agent memories add``, the MCP server) has no thread to flush between calls and no close to flush at, so
its writes reach Chroma before they return, as before (a group of one).
"""

from __future__ import annotations

import logging
import math
import operator
from collections.abc import Sequence

from agent.adapters.chroma_index import ChromaIndex, similarity_from_distance
from agent.adapters.mirrored_index import MirroredIndex, Sweep
from agent.adapters.written_ids import WrittenIds
from agent.domain import VectorChanges
from agent.errors import DiskFull, MemoryUnavailable, StoreCorrupt
from agent.ports import IndexHit, Ledger

log = logging.getLogger(__name__)

# How many changes of the ledger's vector copies a saved mark may lag behind when a catch-up moved nothing into or
# out of Chroma (this process's own writes): an open resumes from an older mark by reading those few ids again,
# while saving it after every write cost 7 ms of a 35 ms ``remember`` at 10,000 memories (a file replaced while
# Chroma's own HNSW save is in flight).
MARK_LAG = 256
# How many vectors written may wait for Chroma (``HeldIndex.flush``) before the write that reaches this many puts them
# all in at once: as many as Chroma's HNSW segment takes between two saves (``chroma_index.SAVE_EVERY``).
GROUP = 64


def _away(index: ChromaIndex, exc: MemoryUnavailable) -> bool:
    """Whether a Chroma server merely did not answer: a full disk or a damaged store is not mended by waiting, and
    an embedded store that refuses a write (a full disk, a file it may not write) is this machine's to mend."""
    return index.remote and not isinstance(exc, StoreCorrupt | DiskFull)


class HeldIndex(MirroredIndex):
    """``MirroredIndex`` that catches up with the ledger before each search."""

    def __init__(self, chroma: ChromaIndex, ledger: Ledger, user: str) -> None:
        super().__init__(chroma, ledger, user)
        self._mark: tuple[int, int] | None = None
        self._copies_mark: tuple[int, int] | None = None  # of the ledger's vector copies (``vector_changes``)
        self._saved_mark: tuple[int, int] | None = None  # the copies' mark last saved beside the index
        self._indexed: set[str] | None = None  # the ids in Chroma, once a catch-up compared every id
        self._written = WrittenIds()  # the ids this process put into Chroma since the last catch-up
        self._sweep: Sweep | None = None  # a compare of every id under way (``reconcile``), in pieces
        # Vectors written, copied to the ledger, not yet in Chroma (``flush``), by id; and the ids a flush could not
        # put in (a server away), which the next catch-up puts in from the ledger's copies.
        self._pending: dict[str, list[float]] = {}
        self._lacking: set[str] = set()
        self._norms: dict[str, float] = {}  # each pending vector's length
        self.group = 1  # how many vectors written reach Chroma together: ``GROUP`` in a chat (``group_writes``)

    def query(self, vector: Sequence[float], k: int) -> list[IndexHit]:
        """Chroma's nearest, with the vectors still pending ranked beside them (one written a moment ago is found by
        the next turn without waiting for Chroma's upsert); a pending vector replaces Chroma's older one of its id."""
        self.catch_up()
        if not self._pending:
            return super().query(vector, k)
        hits = [hit for hit in super().query(vector, k + len(self._pending)) if hit.id not in self._pending]
        length = _norm(vector)
        hits += [IndexHit(mid, _similarity(vector, kept, length * self._norms[mid]))
                 for mid, kept in self._pending.items()]
        return sorted(hits, key=lambda hit: -hit.similarity)[:k]

    def upsert(self, ids: Sequence[str], vectors: Sequence[Sequence[float]]) -> None:
        """Keep the vectors in the ledger (durable when this returns), and pending for Chroma until ``group`` of them
        wait or ``flush`` is called: the caller's write costs the ledger's transaction, not Chroma's. Inside a write
        the ledger makes one transaction (``together``), they are held once it commits: a flush never puts into
        Chroma a vector whose copy the ledger could still undo."""
        self._ledger.put_vectors(self._user, ids, vectors)
        self._ledger.after_commit(lambda: self._hold(ids, vectors))

    def _hold(self, ids: Sequence[str], vectors: Sequence[Sequence[float]]) -> None:
        # Vectors that go into Chroma at once (a write of ``group`` or more: every write of a process that does not
        # group them, a bulk write's 2,048) are not copied, nor their lengths computed, for the searches that will
        # never rank them while pending: an import's copies were 25 MB of floats a call.
        at_once = len(self._pending) + len(ids) >= self.group
        for mid, v in zip(ids, vectors, strict=True):
            if at_once:
                self._pending[mid] = v  # type: ignore[assignment]  # flushed before anything reads it
                continue
            self._pending[mid] = kept = [float(x) for x in v]
            self._norms[mid] = _norm(kept)
        self._written.update(ids)
        self._lacking.difference_update(ids)
        if self._indexed is not None:
            self._indexed.update(ids)
        if len(self._pending) >= self.group:
            self.flush()

    def group_writes(self) -> None:
        """Let up to ``GROUP`` vectors written wait for Chroma: for a process that calls ``flush`` when it has time
        (a chat's memory thread, between turns) and when it closes (``MemoryService.close``)."""
        self.group = GROUP

    def pending(self) -> int:
        """How many vectors written wait for Chroma."""
        return len(self._pending)

    def flush(self) -> None:
        """Put the pending vectors into Chroma, in one upsert; a Chroma server that does not answer leaves them for
        the next catch-up, from the ledger's copies (a full disk, a damaged store or an embedded store raises, and
        the next catch-up tries them again)."""
        if not self._pending:
            return
        pending, self._pending = self._pending, {}
        self._norms = {}
        try:
            self.chroma.upsert(list(pending), list(pending.values()))
        except MemoryUnavailable as exc:
            self._lacking.update(pending)
            self._written.difference_update(pending)
            if self._indexed is not None:
                self._indexed.difference_update(pending)
            self._mark = None  # the next search catches up, and puts them in
            if not _away(self.chroma, exc):
                raise
            log.debug("index: %d vectors kept in the ledger only for now: %s", len(pending), exc)
            return
        if self.chroma.remote:
            self._drop_forgotten_meanwhile(list(pending))

    def count(self) -> int:
        self.flush()
        return super().count()

    def vectors(self, ids: Sequence[str]) -> dict[str, list[float]]:
        """The vectors of ``ids``, the pending ones first, then from the ledger's copies when Chroma does not answer:
        a write of a memory already stored reads them, and must not fail for an index the next catch-up mends
        anyway."""
        found = {mid: self._pending[mid] for mid in ids if mid in self._pending}
        rest = [mid for mid in ids if mid not in found]
        if not rest:
            return found
        try:
            return found | super().vectors(rest)
        except MemoryUnavailable as exc:
            if not _away(self.chroma, exc):
                raise
            return found | self._ledger.stored_vectors(self._user, rest)

    def delete(self, ids: Sequence[str]) -> None:
        """Out of the pending vectors first, then out of Chroma: a forget leaves nothing a later flush puts back."""
        self._discard(ids)
        super().delete(ids)
        self._written.difference_update(ids)
        if self._indexed is not None:
            self._indexed.difference_update(ids)

    def reset(self) -> None:
        self._pending.clear()
        self._norms.clear()
        self._lacking.clear()
        super().reset()
        self._indexed = set()

    def _discard(self, ids: Sequence[str]) -> None:
        for mid in ids:
            self._pending.pop(mid, None)
            self._norms.pop(mid, None)
            self._lacking.discard(mid)

    def begin(self, sweep: Sweep, copies_mark: tuple[int, int]) -> None:
        """A compare of every id (``sweep``) begins against ``copies_mark``, the mark of the ledger's copies read
        before its first page: until it ends, catch-ups follow the changes since that mark, save no mark, and leave
        what only the whole compare can tell (a count that differs after a forget) to it."""
        self._sweep, self._copies_mark, self._mark = sweep, copies_mark, None

    def end(self) -> None:
        """The compare ended (``Sweep``): caught up to the mark of the last catch-up, which is saved now."""
        self._sweep = None
        if self._copies_mark is not None:
            self._save_mark(self._copies_mark)

    def sweep(self) -> bool:
        """One piece of the compare of every id left for later (a chat's memory thread runs it between turns);
        True while pieces remain."""
        if self._sweep is None:
            return False
        self.flush()  # a piece reads Chroma's ids and counts
        return self._sweep.step()

    def resume(self) -> tuple[int, int] | None:
        """Catch up from the mark saved with the embedded index at its last catch-up, when the ledger's record of
        changes still reaches it and the counts then agree (as many vectors in Chroma as memories in the ledger):
        how many vectors it put in and how many it dropped. None when the index must be compared whole
        (``reconcile``): no mark saved, a log trimmed past it, or counts that differ (a kill between a forget's two
        halves, or a forget another process made: its ids are not in the ledger's record)."""
        saved = self.chroma.ledger_mark()
        if saved is None:
            return None
        mark = self._ledger.change_mark()
        changes = self._ledger.vector_changes(self._user, saved, listing=False)
        if changes.whole:
            return None
        done = self._catch_up_with(changes)
        if not self._counts_agree():
            return None
        self._mark, self._copies_mark = mark, changes.mark
        self._save_mark(changes.mark)
        return done

    def warm_up(self) -> None:
        """Read the index's ids and catch up now (a chat calls this while it opens), not at the first search."""
        self.catch_up()

    def _drop_forgotten_meanwhile(self, ids: list[str]) -> None:
        """On a server another machine's forget deletes the vector from Chroma, then the memory from the ledger: a
        vector this process read from the ledger in between and put back would outlive the forget. The ones whose
        memory has left the ledger by now are deleted again; one that leaves it later moves the change mark, and the
        next catch-up drops it (as does the next open's ``reconcile``)."""
        forgotten = sorted(set(ids) - set(self._ledger.stored_vectors(self._user, ids)))
        if forgotten:
            self.chroma.delete(forgotten)
            if self._indexed is not None:
                self._indexed.difference_update(forgotten)

    def catch_up(self) -> None:
        """Put into Chroma the vectors other processes wrote to the ledger, and drop the ones they forgot: only the
        ids the ledger says changed since the last catch-up (``Ledger.vector_changes``), or, when it cannot say,
        every id compared with Chroma's."""
        mark = self._ledger.change_mark()
        if mark == self._mark:
            return
        sweep = self._sweep
        changes = self._ledger.vector_changes(self._user, self._copies_mark, listing=sweep is None)
        if sweep is not None:
            if changes.whole:  # the record no longer reaches the sweep's mark: it begins again from this one
                sweep.restart()
            else:
                self._catch_up_with(changes)
            self._mark, self._copies_mark = mark, changes.mark
            return
        added, dropped = self._catch_up_with(changes)
        if changes.forgot and not self._counts_agree():
            changes = self._ledger.vector_changes(self._user, None)
            more, fewer = self._catch_up_with(changes)
            added, dropped = added + more, dropped + fewer
        saved = self._saved_mark
        if changes.mark != saved and (added or dropped or changes.whole or changes.forgot or saved is None
                                      or changes.mark[1] - saved[1] >= MARK_LAG):
            self._save_mark(changes.mark)
        self._mark, self._copies_mark = mark, changes.mark

    def _counts_agree(self) -> bool:
        """Whether Chroma holds as many vectors as the ledger memories, once caught up with the ledger's record of
        changes: it then holds every memory's (each addition is in the record), so it holds nothing else either,
        and a forget since the mark (whose ids the record does not keep) left no vector behind. Two counts, where
        comparing every id read 100,000 of each at 100,000 memories (1.9 s for Chroma's alone)."""
        self.flush()
        return self.chroma.count() == self._ledger.count(self._user)

    def _save_mark(self, mark: tuple[int, int]) -> None:
        """The mark says Chroma holds every copy up to it: what is pending goes in first."""
        self.flush()
        self.chroma.save_ledger_mark(mark)
        self._saved_mark = mark

    def _catch_up_with(self, changes: VectorChanges) -> tuple[int, int]:
        """Bring Chroma in step with ``changes``; returns how many vectors it put in and dropped. A change this
        process made itself is in Chroma already."""
        if changes.whole:
            self.flush()  # Chroma's ids are compared with the ledger's: the pending ones are put in first
            if self._indexed is None:
                self._indexed = self.chroma.ids()
            copies = set(changes.ids)
            gone = sorted(self._indexed - copies)
            found = self._ledger.stored_vectors(self._user, sorted(copies - self._indexed))
        else:
            # This process's own writes are looked at too: one another process deleted since may leave no trace
            # in the changes (on PostgreSQL a row that came and went between two reads).
            written = self._written.ids()
            changed = sorted({*changes.ids, *written, *self._lacking})
            present = self._ledger.stored_vectors(self._user, changed)
            unsure = [mid for mid in changed if mid not in written]
            # Which of them Chroma holds: known since the last compare, or else asked (an open resuming from a mark).
            known = self._indexed if self._indexed is not None else self.chroma.held(unsure)
            gone = [mid for mid in changed if mid not in present and (mid in known or mid in written)]
            found = {mid: present[mid] for mid in unsure if mid in present and mid not in known}
        self._written.clear()
        self._lacking.clear()
        if gone:
            self._discard(gone)
            self.chroma.delete(gone)
            if self._indexed is not None:
                self._indexed.difference_update(gone)
        if found:
            self.chroma.upsert(list(found), list(found.values()))
            if self._indexed is not None:
                self._indexed.update(found)
            if self.chroma.remote:
                self._drop_forgotten_meanwhile(list(found))
        if gone or found:
            log.debug("index: caught up with the ledger, %d added and %d dropped", len(found), len(gone))
        return len(found), len(gone)


def _similarity(probe: Sequence[float], vector: Sequence[float], norms: float) -> float:
    """Cosine similarity as Chroma's ``query`` gives it (``similarity_from_distance`` of its cosine distance);
    ``norms``: the product of the two vectors' lengths."""
    return similarity_from_distance(1.0 - sum(map(operator.mul, probe, vector)) / norms) if norms else 0.0


def _norm(vector: Sequence[float]) -> float:
    return math.sqrt(sum(map(operator.mul, vector, vector)))
