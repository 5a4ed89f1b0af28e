"""An import embeds its first calls while its first reading judges the rest of the file (``transfer._Ahead``,
issue 22): on a thread, exactly the calls the writes would make (the same texts in the same calls, so the same
vectors), only for memories the store does not hold, and a call that failed there is embedded by the write."""

from __future__ import annotations

import io
import json
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import BinaryIO, cast

import pytest

from agent.adapters.ledger import SqliteLedger
from agent.domain import memory_id
from agent.memory import transfer
from agent.memory.policy import MemoryPolicy
from agent.memory.service import MemoryService
from tests.builders import record
from tests.fakes import InMemoryIndex, WordHashEmbedder

N = 1_100
SMALL = 256  # the import's call in these tests: the file is five calls, the last one short


class ThreadNotingEmbedder(WordHashEmbedder):
    """The word-hash fake, noting the thread of each call; ``fail_ahead`` calls on the import's thread raise."""

    dimension = 8

    def __init__(self, fail_ahead: int = 0) -> None:
        super().__init__()
        self.threads: list[str] = []
        self._fail_ahead = fail_ahead

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        name = threading.current_thread().name
        if name.startswith("import-ahead") and self._fail_ahead:
            self._fail_ahead -= 1
            raise RuntimeError("the embedder failed")
        self.threads.append(name)
        return [vector[: self.dimension] for vector in super().embed(texts)]


def text(n: int) -> str:
    return f"I keep note {n} about the Garden"  # canonical: the export's is spelled with a no-break space


def export(n: int = N) -> BinaryIO:
    return io.BytesIO("".join(json.dumps({"text": text(at).replace(" ", "\u00a0", 1), "created_at": 1.7e9 + at}) + "\n"
                              for at in range(n)).encode())


def service_on(tmp_path: Path, embedder: WordHashEmbedder, name: str = "ledger") -> MemoryService:
    return MemoryService(SqliteLedger(tmp_path / f"{name}.sqlite3"), InMemoryIndex(), embedder, "me",
                         MemoryPolicy(capacity=N + 10))


def run_import(service: MemoryService, tmp_path: Path, stream: BinaryIO) -> transfer.ImportReport:
    with (tmp_path / "scratch").open("w+b") as scratch:
        return transfer.import_stream(service, stream, "the file", scratch, SMALL)


def test_the_first_calls_are_embedded_ahead_as_the_writes_would_and_store_the_same_vectors(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ahead = ThreadNotingEmbedder()
    service = service_on(tmp_path, ahead)
    assert run_import(service, tmp_path, export()).new == N
    assert [name.startswith("import-ahead") for name in ahead.threads] == [True] * transfer.AHEAD + [False] * (
        5 - transfer.AHEAD)
    monkeypatch.setattr(transfer, "AHEAD", 0)
    alone = ThreadNotingEmbedder()
    other = service_on(tmp_path, alone, "other")
    run_import(other, tmp_path, export())
    assert not any(name.startswith("import-ahead") for name in alone.threads)
    assert ahead.calls == alone.calls, "the same texts in the same calls"
    assert ahead.calls[0][:2] == [text(0), text(1)], "the texts as stored"
    ids = [memory_id("me", text(at)) for at in range(N)]
    assert service._index.vectors(ids) == other._index.vectors(ids)
    assert service._ledger.stored_vectors("me", ids) == other._ledger.stored_vectors("me", ids)


def test_a_call_with_a_memory_the_store_holds_is_left_to_the_write(tmp_path: Path) -> None:
    embedder = ThreadNotingEmbedder()
    service = service_on(tmp_path, embedder)
    service.write([record(text(SMALL + 3), user="me")])  # in the second call
    embedder.threads.clear()
    report = run_import(service, tmp_path, export())
    assert (report.new, report.refreshed) == (N - 1, 1)
    assert [name.startswith("import-ahead") for name in embedder.threads][:2] == [True, False]
    assert service.indexed() == N


def test_a_call_that_failed_ahead_is_embedded_by_its_write(tmp_path: Path) -> None:
    embedder = ThreadNotingEmbedder(fail_ahead=1)
    service = service_on(tmp_path, embedder)
    assert run_import(service, tmp_path, export()).new == N
    assert service.indexed() == N
    assert [name.startswith("import-ahead") for name in embedder.threads][:2] == [True, False]
    assert len(embedder.calls) == 5


def test_a_file_refused_after_calls_went_ahead_writes_nothing(tmp_path: Path) -> None:
    embedder = ThreadNotingEmbedder()
    service = service_on(tmp_path, embedder)
    lines = export().getvalue() + b"not json\n"
    with pytest.raises(Exception, match="line 1101 is not a memory"):
        run_import(service, tmp_path, cast(BinaryIO, io.BytesIO(lines)))
    assert service.count() == 0 and service.indexed() == 0
