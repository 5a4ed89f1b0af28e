"""``VectorIndex`` over the ledger's own float32 copies of the vectors: the index of every process that does not
hold the embedded Chroma store.

Why: Chroma's embedded store keeps its HNSW index in the memory of the process that opened it, and two processes
writing one directory silently lose records (measured with chromadb 1.5.9), so only one process at a time may have
it open (``agent.adapters.index_holder``). Every other agent process on the data directory (a chat in a second terminal,
``agent memories ...`` beside a chat) writes its vectors to the ledger only, which SQLite shares safely between
processes, and searches them by brute force: one matrix product over every vector of the user, exact, and a few
milliseconds at 10,000 memories (``bench/terminals.py``).

The matrix is read once and then kept in step with the ledger incrementally: before each search the ledger's
change mark is compared (one cheap read), and only when it moved are the row numbers of the vector copies read
again, the rows that went dropped (a forget in any process) and the new ones read. So a memory another terminal
wrote is found at the next search, and a forgotten one is not, without reading 10,000 vectors every turn.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np
import numpy.typing as npt

from agent.domain import VectorSpace
from agent.ports import ChangeFeed, IndexHit, VectorCopies

Matrix = npt.NDArray[np.float32]


class Copies(VectorCopies, ChangeFeed, Protocol):
    """The two ports of the ledger this index reads: the vector copies, and what moved in them."""


class LedgerVectors:
    """The user's vector copies in the ledger, searched in memory with numpy.

    The rows live at the start of a buffer with room to grow, so a memory written elsewhere is one row copied in,
    not the whole matrix copied anew (which at 10,000 memories cost more than the search itself); only a delete
    moves rows, to close the gap."""

    def __init__(self, ledger: Copies, user: str) -> None:
        self._ledger = ledger
        self._user = user
        self._mark: tuple[int, int] | None = None
        self._rowids: list[int] = []
        self._ids: list[str] = []
        self._rows: Matrix = np.zeros((0, 0), dtype=np.float32)

    def space(self) -> VectorSpace | None:
        return self._ledger.vector_space(self._user)

    def claim(self, space: VectorSpace) -> None:
        self._ledger.claim_vectors(self._user, space)

    def upsert(self, ids: Sequence[str], vectors: Sequence[Sequence[float]]) -> None:
        self._ledger.put_vectors(self._user, ids, vectors)

    def query(self, vector: Sequence[float], k: int) -> list[IndexHit]:
        self.refresh()
        size = len(self._ids)
        if k <= 0 or not size:
            return []
        probe = np.asarray(vector, dtype=np.float32)
        if probe.shape[0] != self._rows.shape[1]:
            return []  # another space: ``MemoryService.check_space`` refuses such a store before any search
        # einsum, not ``@``: OpenBLAS spreads a matrix-vector product over threads that spin against each other on
        # a busy machine (18 ms against 1.2 ms on one thread, measured); einsum's own loop stays on one core.
        scores = np.einsum("ij,j->i", self._rows[:size], probe / max(float(np.linalg.norm(probe)), 1e-12))
        top = np.argpartition(-scores, k - 1)[:k] if k < size else np.arange(size)
        best = top[np.argsort(-scores[top], kind="stable")]
        return [IndexHit(id=self._ids[i], similarity=float(scores[i])) for i in best]

    def vectors(self, ids: Sequence[str]) -> dict[str, list[float]]:
        return self._ledger.stored_vectors(self._user, ids)

    def delete(self, ids: Sequence[str]) -> None:
        """Nothing to do here: the ledger deletes a memory's vector copy with the memory, in one transaction."""

    def count(self) -> int:
        return len(self._ledger.vector_ids(self._user))

    def reset(self) -> None:
        self._ledger.drop_vectors(self._user)

    def warm_up(self) -> None:
        """Read every vector now (a chat calls this while it opens), so its first search does not wait for it."""
        self.refresh()

    def refresh(self) -> None:
        """Bring the rows in step with the ledger, if anything was committed to it since the last look."""
        mark = self._ledger.change_mark()
        if mark == self._mark:
            return
        current = self._ledger.vector_rowids(self._user)
        wanted = set(current)
        if len(wanted) < len(self._rowids) or not wanted.issuperset(self._rowids):
            keep = [at for at, rowid in enumerate(self._rowids) if rowid in wanted]
            self._rows[: len(keep)] = self._rows[keep]
            self._rowids = [self._rowids[at] for at in keep]
            self._ids = [self._ids[at] for at in keep]
        known = set(self._rowids)
        added = self._ledger.vector_rows(self._user, [rowid for rowid in current if rowid not in known])
        if added:
            self._append(added)
        self._mark = mark

    def _append(self, added: Sequence[tuple[int, str, bytes]]) -> None:
        block = np.vstack([np.frombuffer(blob, dtype=np.float32) for _, _, blob in added])
        block /= np.maximum(np.linalg.norm(block, axis=1, keepdims=True), 1e-12)
        if self._rows.shape[1] != block.shape[1]:  # the first rows, or the vectors moved to another space
            self._rows, self._rowids, self._ids = np.zeros((0, block.shape[1]), np.float32), [], []
        size, needed = len(self._ids), len(self._ids) + len(added)
        if needed > self._rows.shape[0]:
            grown = np.zeros((max(needed, 2 * self._rows.shape[0], 1024), block.shape[1]), np.float32)
            grown[:size] = self._rows[:size]
            self._rows = grown
        self._rows[size:needed] = block
        self._rowids += [rowid for rowid, _, _ in added]
        self._ids += [mid for _, mid, _ in added]
