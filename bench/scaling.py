"""How each cost of the memory grows with the store, on the path the product runs: ``python bench/scaling.py
[--sizes 1000 10000 100000] [--json]``.

At each size a store is built once with bulk writes (the ledger's memories and vector copies, the local int8
MiniLM's vectors, cached beside it under ``--cache``, by default a directory in the system's temporary one) and
copied afresh for each run, so a run measures and never waits for 100,000 embeddings again. On the copy:

- ``open_s``: ``open_memory`` and the index's ``warm_up`` on a store a chat opened and closed before, as a chat
  opens them (the health probe, ``reconcile``, the held index's first catch-up), the model loaded before, so it
  is the store's own cost;
- ``steady_ms``: a turn's ``recall`` (embed the probe, dense and keyword search, the block) with nothing written
  since the last turn;
- ``after_write_ms``: the same turn right after ``remember`` stored one memory, as a chat's turn follows the last
  one's write: the ledger's change mark moved, so the held index catches up before it searches;
- ``remember_ms``: that one write (``/remember``, ``agent memories add``: truth checks, ledger, embedding, index).

The ratio ``after_write_ms / steady_ms`` is what a write costs the next turn: 1.0 is a write that costs the next
turn nothing.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make ``bench`` importable from the project root
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np

from agent.adapters.chroma_index import forget_clients
from agent.adapters.ledger import SqliteLedger
from agent.adapters.local_embedder import LocalEmbedder
from agent.config import load_settings
from agent.memory.service import MemoryService, space_of
from agent.wiring import ensure_data_dir, open_memory
from bench import machine
from bench.latency import probes, records, sentences
from bench.locomo import percentile

USER = "scaling"
TURNS = 30  # timed turns of each kind at each size
EMBED_BATCH = 512


def cached_vectors(texts: Sequence[str], embedder: LocalEmbedder, cache: Path) -> np.ndarray:
    """The vectors of ``texts``, embedded once and kept in ``cache`` (the texts are the same at every run)."""
    path = cache / f"vectors-{len(texts)}.npy"
    if path.exists():
        return np.asarray(np.load(path), dtype=np.float32)
    done = np.asarray([v for at in range(0, len(texts), EMBED_BATCH)
                       for v in embedder.embed(texts[at : at + EMBED_BATCH])], dtype=np.float32)
    np.save(path, done)
    return done


def built_store(size: int, texts: Sequence[str], vectors: np.ndarray, embedder: LocalEmbedder, cache: Path) -> Path:
    """A data directory of ``size`` memories with their vector copies, its index restored by one open: built once."""
    root = cache / f"store-{size}"
    if (root / "built").exists():
        return root
    shutil.rmtree(root, ignore_errors=True)
    paths = ensure_data_dir(root / "data")
    ledger = SqliteLedger(paths.ledger)
    try:
        ledger.put(records(texts[:size], 0, USER))
        ledger.claim_vectors(USER, space_of(embedder))
        ledger.put_vectors(USER, [r.id for r in records(texts[:size], 0, USER)], vectors[:size].tolist())
    finally:
        ledger.close()
    service = open(root / "data", size, embedder)[0]
    close(service)
    (root / "built").touch()
    return root


def open(data: Path, size: int, embedder: LocalEmbedder) -> tuple[MemoryService, float]:
    settings = load_settings({"data_dir": data, "memory_capacity": size + 10 * TURNS, "embedder": "local",
                              "user": USER})
    started = time.perf_counter()
    service = open_memory(settings, embedder)
    service.index.warm_up()  # type: ignore[attr-defined]  # as a chat does while it opens: the first catch-up
    return service, time.perf_counter() - started


def close(service: MemoryService) -> None:
    service.ledger.close()
    forget_clients()


def settle(service: MemoryService, probe: str) -> None:
    """Write the sightings the last turns left (a write of its own) and catch up with it, untimed: the next turn
    follows nothing written (what this recall sees is written with the next write)."""
    service.flush_seen()
    service.recall(probe)


def measure(size: int, texts: Sequence[str], vectors: np.ndarray, embedder: LocalEmbedder, cache: Path,
            asked: Sequence[str]) -> dict[str, Any]:
    built = built_store(size, texts, vectors, embedder, cache)
    with tempfile.TemporaryDirectory(prefix="scaling-") as tmp:
        data = Path(tmp) / "data"
        shutil.copytree(built / "data", data)
        close(open(data, size, embedder)[0])  # the store as its last chat left it
        service, open_s = open(data, size, embedder)
        try:
            for probe in asked[:5]:
                service.recall(probe)
            steady, after, remember = [], [], []
            for n, probe in enumerate(asked[5 : 5 + TURNS]):
                settle(service, asked[0])
                started = time.perf_counter()
                service.recall(probe)
                steady.append((time.perf_counter() - started) * 1000)
                settle(service, asked[0])
                started = time.perf_counter()
                service.remember(f"Note {n} at size {size}: {texts[size + n]}", session="bench")
                remember.append((time.perf_counter() - started) * 1000)
                started = time.perf_counter()
                service.recall(probe)
                after.append((time.perf_counter() - started) * 1000)
        finally:
            close(service)
    return {
        "memories": size,
        "open_s": open_s,
        "steady_ms_p50": percentile(steady, 50),
        "after_write_ms_p50": percentile(after, 50),
        "after_write_ratio": percentile(after, 50) / percentile(steady, 50),
        "remember_ms_p50": percentile(remember, 50),
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 100_000])
    parser.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "agent-bench-scaling")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    args.cache.mkdir(parents=True, exist_ok=True)
    embedder = LocalEmbedder()
    embedder.warm_up()
    texts = sentences(max(args.sizes) + TURNS)
    vectors = cached_vectors(texts[: max(args.sizes)], embedder, args.cache)
    asked = probes(TURNS + 5)
    result: dict[str, Any] = {"machine": machine.describe()}
    for size in sorted(args.sizes):
        result[str(size)] = measure(size, texts, vectors, embedder, args.cache, asked)
        print(f"{size}: {json.dumps(result[str(size)])}", file=sys.stderr, flush=True)
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    print(f"machine: {machine.line()}")
    print("| figure | " + " | ".join(f"{size:,}" for size in sorted(args.sizes)) + " |")
    print("|---|" + "---|" * len(args.sizes))
    rows = (("open, to the first prompt's memory (s)", "open_s", "{:.2f}"),
            ("steady turn, recall p50 (ms)", "steady_ms_p50", "{:.1f}"),
            ("turn right after a write, recall p50 (ms)", "after_write_ms_p50", "{:.1f}"),
            ("turn after a write / steady turn", "after_write_ratio", "{:.2f}x"),
            ("one memory per call, remember p50 (ms)", "remember_ms_p50", "{:.1f}"))
    for label, key, shape in rows:
        print(f"| {label} | " + " | ".join(shape.format(result[str(s)][key]) for s in sorted(args.sizes)) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
