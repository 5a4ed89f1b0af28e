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
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from agent.adapters.chroma_index import ChromaIndex
from agent.adapters.mirrored_index import MirroredIndex, Sweep
from agent.domain import VectorChanges
from agent.errors import DiskFull, MemoryUnavailable, StoreCorrupt
from agent.ports import IndexHit, Ledger

log = logging.getLogger(__name__)

# How many changes of the ledger's vector copies a saved mark may lag behind when a catch-up moved nothing into or
# out of Chroma (this process's own writes): an open resumes from an older mark by reading those few ids again,
# while saving it after every write cost 7 ms of a 35 ms ``remember`` at 10,000 memories (a file replaced while
# Chroma's own HNSW save is in flight).
MARK_LAG = 256


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
        self._written: set[str] = set()  # the ids this process put into Chroma since the last catch-up
        self._sweep: Sweep | None = None  # a compare of every id under way (``reconcile``), in pieces

    def query(self, vector: Sequence[float], k: int) -> list[IndexHit]:
        self.catch_up()
        return super().query(vector, k)

    def upsert(self, ids: Sequence[str], vectors: Sequence[Sequence[float]]) -> None:
        """Keep the vectors in the ledger, then in Chroma; a Chroma server that does not answer leaves them for the
        next catch-up (a full disk, a damaged store or an embedded store still fails the write)."""
        self._ledger.put_vectors(self._user, ids, vectors)
        try:
            self.chroma.upsert(ids, vectors)
        except MemoryUnavailable as exc:
            if not _away(self.chroma, exc):
                raise
            log.debug("index: %d vectors kept in the ledger only for now: %s", len(ids), exc)
            self._mark = None  # the next search compares again, and finds them missing
            return
        self._written.update(ids)
        if self._indexed is not None:
            self._indexed.update(ids)

    def vectors(self, ids: Sequence[str]) -> dict[str, list[float]]:
        """The vectors of ``ids``, from the ledger's copies when Chroma does not answer: a write of a memory already
        stored reads them, and must not fail for an index the next catch-up mends anyway."""
        try:
            return super().vectors(ids)
        except MemoryUnavailable as exc:
            if not _away(self.chroma, exc):
                raise
            return self._ledger.stored_vectors(self._user, ids)

    def delete(self, ids: Sequence[str]) -> None:
        super().delete(ids)
        self._written.difference_update(ids)
        if self._indexed is not None:
            self._indexed.difference_update(ids)

    def reset(self) -> None:
        super().reset()
        self._indexed = set()

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
        return self._sweep is not None and self._sweep.step()

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
        return self.chroma.count() == self._ledger.count(self._user)

    def _save_mark(self, mark: tuple[int, int]) -> None:
        self.chroma.save_ledger_mark(mark)
        self._saved_mark = mark

    def _catch_up_with(self, changes: VectorChanges) -> tuple[int, int]:
        """Bring Chroma in step with ``changes``; returns how many vectors it put in and dropped. A change this
        process made itself is in Chroma already."""
        if changes.whole:
            if self._indexed is None:
                self._indexed = self.chroma.ids()
            copies = set(changes.ids)
            gone = sorted(self._indexed - copies)
            found = self._ledger.stored_vectors(self._user, sorted(copies - self._indexed))
        else:
            # This process's own writes are looked at too: one another process deleted since may leave no trace
            # in the changes (on PostgreSQL a row that came and went between two reads).
            changed = sorted({*changes.ids, *self._written})
            present = self._ledger.stored_vectors(self._user, changed)
            unsure = [mid for mid in changed if mid not in self._written]
            # Which of them Chroma holds: known since the last compare, or else asked (an open resuming from a mark).
            known = self._indexed if self._indexed is not None else self.chroma.held(unsure)
            gone = [mid for mid in changed if mid not in present and (mid in known or mid in self._written)]
            found = {mid: present[mid] for mid in unsure if mid in present and mid not in known}
        self._written.clear()
        if gone:
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
