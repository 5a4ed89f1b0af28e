"""The memory service the truth tests talk to (a pytest plugin, registered in ``conftest.py``): the real local
embedder over a SQLite ledger and an in-memory index, for one user, whose clock moves an hour per write, so each
line is said after the one before it."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest

from agent.adapters.ledger import SqliteLedger
from agent.adapters.local_embedder import LocalEmbedder
from agent.memory.service import MemoryPolicy, MemoryService
from tests.fakes import InMemoryIndex

START = datetime(2026, 12, 1, 10, 0).timestamp()


@pytest.fixture
def memory(tmp_path: Path, local_embedder: LocalEmbedder) -> Iterator[MemoryService]:
    ticks = iter(range(10_000))
    ledger = SqliteLedger(tmp_path / "ledger.sqlite3")
    service = MemoryService(ledger, InMemoryIndex(), local_embedder, "alice", MemoryPolicy(),
                            clock=lambda: START + 3600 * next(ticks))
    yield service
    ledger.close()


def say(memory: MemoryService, *lines: str) -> None:
    """Observe each line as a session of its own."""
    for n, line in enumerate(lines):
        memory.observe(line, session=f"s{n}", turn=1)
