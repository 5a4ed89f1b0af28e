"""Memories as the tests build them, and the stores they seed with them: one place that knows how a record's id,
hash and source follow from its text, so a test says only what it is about (the text, the user, the kind, when)."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

from agent.adapters.ledger import SqliteLedger
from agent.domain import MemoryKind, MemoryRecord, VectorSpace, content_hash, memory_id
from agent.memory.service import MemoryService
from agent.ports import MemoryStore, VectorCopies

#: The two users of the contract suites: one whose memories a test writes, one that must never see them.
USER, OTHER = "alice", "bob"


def record(text: str, user: str = USER, *, kind: MemoryKind = "turn", session: str = "s", turn: int = 1,
           at: float | None = None, **more: Any) -> MemoryRecord:
    """A memory of ``text`` for ``user`` as the store derives one: its id from the user and the text, its hash from
    the text, the text its own source; created and last seen ``at`` (now when not given). ``more`` sets any other
    field, or replaces a derived one (a ``source`` the text was drawn from, say)."""
    when = time.time() if at is None else at
    made = MemoryRecord(id=memory_id(user, text), text=text, kind=kind, user=user, session=session, turn=turn,
                        created_at=when, last_seen=when, content_hash=content_hash(text), source=text)
    return dataclasses.replace(made, **more) if more else made


def add_all(memory: MemoryService, texts: Sequence[str]) -> dict[str, str]:
    """Store ``texts`` as explicit memories in one write (one transaction, one embedding batch); returns id -> text.
    Tests that need a store, not a sequence of writes, seed it this way."""
    now = time.time()
    written = memory.write([record(text, memory.user, kind="explicit", session="test", turn=0, at=now)
                            for text in texts])
    return {r.id: r.text for r in written}


class _Ledger(MemoryStore, VectorCopies, Protocol):
    """What a seed writes to: the memories and the copies of their vectors."""


def seed_ledger(ledger: _Ledger, user: str, texts: Sequence[str], vectors: Sequence[Sequence[float]],
                space: VectorSpace, *, session: str = "seed") -> list[MemoryRecord]:
    """Explicit memories of ``texts`` in ``ledger``, with ``vectors`` as their copies in ``space``, and no index: as
    a process without the index writes them."""
    now = time.time()
    records = [record(text, user, kind="explicit", session=session, turn=0, at=now) for text in texts]
    ledger.put(records)
    ledger.claim_vectors(user, space)
    ledger.put_vectors(user, [r.id for r in records], vectors)
    return records


def seed_data_dir(data: Path, user: str, texts: Sequence[str], vectors: Sequence[Sequence[float]],
                  space: VectorSpace) -> dict[str, str]:
    """A data directory whose ledger holds ``texts`` with their vectors, and no index: as after ``chroma/`` was
    lost. Returns id -> text."""
    data.mkdir(mode=0o700, parents=True, exist_ok=True)
    ledger = SqliteLedger(data / "ledger.sqlite3")
    try:
        return {r.id: r.text for r in seed_ledger(ledger, user, texts, vectors, space)}
    finally:
        ledger.close()
