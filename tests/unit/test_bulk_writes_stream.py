"""Bulk writes hold a bounded part of what they write (issue 22): an import of a file read from a generator, and a
rebuild of the index from the ledger, never have more than a few batches of memories alive at once, and write the
same memories, with the same ids, in the same order, each with its own text's vector."""

from __future__ import annotations

import gc
import io
import json
import random
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import BinaryIO, cast

import pytest

from agent.adapters.ledger import SqliteLedger
from agent.domain import MemoryRecord, memory_id
from agent.memory import transfer
from agent.memory.policy import MemoryPolicy
from agent.memory.service import MemoryService
from tests.builders import record
from tests.fakes import InMemoryIndex, WordHashEmbedder

N = 1_500  # memories written: twice what a bounded writer may hold at once
HELD = 3 * transfer.BATCH  # the most a bulk write may have alive: a batch and its stored forms, and some


class WatchingEmbedder(WordHashEmbedder):
    """The word-hash fake, noting each batch's size and how many memories are alive when it is asked."""

    dimension = 8

    def __init__(self) -> None:
        super().__init__()
        self.alive: list[int] = []

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.alive.append(sum(isinstance(thing, MemoryRecord) for thing in gc.get_objects()))
        return [vector[: self.dimension] for vector in super().embed(texts)]


class LineSource(io.RawIOBase):
    """A file that is never whole: its lines are made by a generator as the reader asks for them."""

    def __init__(self, lines: Iterator[str]) -> None:
        self._lines = lines
        self.given = 0

    def readable(self) -> bool:
        return True

    def readline(self, size: int | None = -1) -> bytes:
        line = next(self._lines, "")
        self.given += bool(line)
        return line.encode()


def text(n: int) -> str:
    return f"I keep note {n} about the garden and the {random.Random(n).choice(['roses', 'beans', 'pond'])}"


def export_lines(n: int) -> Iterator[str]:
    for at in range(n):
        yield json.dumps({"id": f"theirs-{at}", "text": text(at), "kind": "explicit", "created_at": 1.7e9 + at}) + "\n"


def service_on(tmp_path: Path, embedder: WordHashEmbedder) -> MemoryService:
    return MemoryService(SqliteLedger(tmp_path / "ledger.sqlite3"), InMemoryIndex(), embedder, "me",
                         MemoryPolicy(capacity=N + 10))


def test_an_import_from_a_generator_holds_a_few_batches_and_keeps_the_file_order_ids_and_vectors(
        tmp_path: Path) -> None:
    embedder = WatchingEmbedder()
    service = service_on(tmp_path, embedder)
    source = LineSource(export_lines(N))
    with (tmp_path / "scratch").open("w+b") as scratch:
        report = transfer.import_stream(service, cast(BinaryIO, source), "the generator", scratch)
    assert (report.new, report.refreshed, report.refused_count, source.given) == (N, 0, 0, N)
    assert max(len(call) for call in embedder.calls) <= transfer.BATCH
    assert max(embedder.alive) <= HELD, f"{max(embedder.alive)} memories alive at once, of {N}"
    expected = [memory_id("me", text(at)) for at in range(N)]
    assert [t for call in embedder.calls for t in call] == [text(at) for at in range(N)], "embedded in file order"
    assert [r.id for r in service.list()] == expected
    assert service.indexed() == N
    vectors = service._index.vectors(expected[:: N // 20])
    assert vectors == {mid: WatchingEmbedder().embed([text(at)])[0]
                       for mid, at in zip(expected[:: N // 20], range(0, N, N // 20), strict=True)}


def test_a_rebuild_reads_the_ledger_a_group_at_a_time_in_its_order_with_the_same_batches(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    embedder = WatchingEmbedder()
    service = service_on(tmp_path, embedder)
    shuffled = random.Random(3).sample(range(N), N)  # written in one order, created in another
    ledger = cast(SqliteLedger, service._ledger)
    ledger.put([record(text(at), "me", kind="explicit", at=1.7e9 + at) for at in shuffled])
    listed = [r.text for r in service.list()]
    assert listed == [text(at) for at in range(N)]
    gc.collect()

    def whole(self: SqliteLedger, user: str) -> list[MemoryRecord]:
        raise AssertionError("a rebuild read every memory at once")

    monkeypatch.setattr(SqliteLedger, "all", whole)
    assert service.rebuild(batch=128, group=256) == N
    assert [t for call in embedder.calls for t in call] == listed, "in the ledger's order"
    groups = [range(at, min(at + 256, N)) for at in range(0, N, 256)]
    cuts = [len(group[at : at + 128]) for group in groups for at in range(0, len(group), 128)]
    assert [len(call) for call in embedder.calls] == cuts, "each group cut as when the whole list was read"
    assert max(embedder.alive) <= 2 * 256, f"{max(embedder.alive)} memories alive at once, of {N}"
    assert service.indexed() == N
    some = memory_id("me", text(7))
    assert service._index.vectors([some]) == {some: WatchingEmbedder().embed([text(7)])[0]}
