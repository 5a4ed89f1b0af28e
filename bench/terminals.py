"""What several agent processes on one data directory cost per turn: ``python bench/terminals.py [--size 10000]
[--turns 20] [--json]``.

The embedded Chroma store may be open in one process only (``agent.locking``). Two designs were measured, on a
store of ``--size`` memories with 384-dimension vectors (the local embedder's space), while "another terminal"
(a second ledger connection, which SQLite treats exactly as another process) writes one memory before each turn:

- **A, one holder** (what the agent does): the first process holds the index for its lifetime. Timed: the holder's
  search with the catch-up that puts the other's memory into Chroma first (``HeldIndex``); a non-holder's search by
  brute force over the ledger's vector copies (``LedgerVectors``), its first search (reading every vector) and a
  later one that reads only what changed; and a non-holder's write (ledger only).
- **B, the lock for each use**: a process takes the lock and opens the embedded store for every search and every
  write, then closes it and lets go, since a store kept open would not see the others' writes. Timed: open +
  search + close, and open + write + close.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make ``bench`` importable from the project root
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agent import locking
from agent.adapters.chroma_index import ChromaIndex, close_client, forget_clients, open_client
from agent.adapters.index_holder import HeldIndex
from agent.adapters.ledger import SqliteLedger
from agent.adapters.ledger_vectors import LedgerVectors
from agent.adapters.local_embedder import DIMENSION, MODEL_NAME
from agent.app.data_dir import DataPaths
from agent.config import load_settings
from agent.domain import MemoryRecord, content_hash, memory_id
from agent.wiring import open_memory
from bench import machine
from bench.index_restore import USER, seed
from tests.helpers_store import vectors_of


class SpaceOnly:
    """The local embedder's space without its model: nothing here embeds, the vectors are made up."""

    name = "local"
    model = MODEL_NAME
    dimension = DIMENSION

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        raise AssertionError("the benchmark never embeds")


def unit(rng: random.Random) -> list[float]:
    vec = [rng.gauss(0.0, 1.0) for _ in range(DIMENSION)]
    norm = sum(x * x for x in vec) ** 0.5
    return [x / norm for x in vec]


def write_one(ledger: SqliteLedger, tag: str, rng: random.Random) -> None:
    """One memory and its vector copy, as a non-holder writes it."""
    text = f"another terminal's memory {tag}"
    now = time.time()
    mid = memory_id(USER, text)
    ledger.put([MemoryRecord(id=mid, text=text, kind="explicit", user=USER, session="bench", turn=0, created_at=now,
                             last_seen=now, content_hash=content_hash(text), source=text)])
    ledger.put_vectors(USER, [mid], [unit(rng)])


def median_ms(turns: int, before: Callable[[int], None], timed: Callable[[], Any]) -> float:
    times = []
    for n in range(turns):
        before(n)
        start = time.perf_counter()
        timed()
        times.append((time.perf_counter() - start) * 1000)
    return round(statistics.median(times), 2)


def measure(root: Path, size: int, turns: int, rng: random.Random) -> dict[str, float]:
    seed(root, size, rng)
    paths = DataPaths(root)
    settings = load_settings({"data_dir": root, "memory_capacity": size * 2, "embedder": "local"})
    other = SqliteLedger(paths.ledger)
    figures: dict[str, float] = {}
    probe = unit(rng)

    holder = open_memory(settings, SpaceOnly())  # opens, reconciles: the index now holds the whole ledger
    held = vectors_of(holder)  # the holder's index itself, timed below the service
    assert isinstance(held, HeldIndex)
    held.query(probe, 5)
    figures["A holder: search, nothing new"] = median_ms(turns, lambda n: None, lambda: held.query(probe, 5))
    figures["A holder: catch up 1 new + search"] = median_ms(
        turns, lambda n: write_one(other, f"h{n}", rng), lambda: held.query(probe, 5))

    reader = LedgerVectors(SqliteLedger(paths.ledger), USER)
    start = time.perf_counter()
    reader.query(probe, 5)
    figures["A non-holder: first search (reads every vector)"] = round((time.perf_counter() - start) * 1000, 2)
    figures["A non-holder: search, nothing new"] = median_ms(turns, lambda n: None, lambda: reader.query(probe, 5))
    figures["A non-holder: refresh 1 new + search"] = median_ms(
        turns, lambda n: write_one(other, f"r{n}", rng), lambda: reader.query(probe, 5))
    figures["A non-holder: write 1 (ledger only)"] = median_ms(
        turns, lambda n: None, lambda: write_one(other, f"w{time.perf_counter_ns()}", rng))
    holder.close()
    forget_clients()

    def open_use_close(use: Callable[[ChromaIndex], Any]) -> None:
        locking.acquire(paths.chroma, 2.0)
        try:
            use(ChromaIndex(open_client(paths.chroma, None), USER, str(paths.chroma)))
        finally:
            close_client(paths.chroma)
            locking.release(paths.chroma)

    figures["B open + search + close"] = median_ms(
        turns, lambda n: None, lambda: open_use_close(lambda index: index.query(probe, 5)))
    figures["B open + write 1 + close"] = median_ms(
        turns, lambda n: None, lambda: open_use_close(lambda index: index.upsert([f"b{time.perf_counter_ns()}"],
                                                                                  [unit(rng)])))
    other.close()
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--turns", type=int, default=20)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        figures = measure(Path(tmp) / "data", args.size, args.turns, random.Random(7))
    report = {"machine": machine.describe(), "size": args.size, "turns": args.turns, "median_ms": figures}
    if args.json:
        print(json.dumps(report, indent=2))
        return
    print(f"machine: {report['machine']}")
    print(f"{args.size} memories x {DIMENSION} dimensions, median of {args.turns} turns:")
    for name, value in figures.items():
        print(f"  {name:<50} {value:>9.2f} ms")


if __name__ == "__main__":
    main()
