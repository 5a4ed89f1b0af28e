"""How long a start takes to restore a lost index from the ledger: ``python bench/index_restore.py [--sizes 20000]
[--json]``.

For each size, a ledger of that many memories with their 384-dimension vectors (the local embedder's space; unit
vectors in directions of their own, since restoring copies vectors and never embeds) and no ``chroma/`` directory,
as after the index was lost; then ``open_memory`` as the agent calls it, which reconciles the index with the ledger
and writes every vector back into Chroma in batches of the client's maximum. Timed: that open, and a second open of
the restored store (nothing to restore: the cost of an ordinary start's reconcile).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make ``bench`` importable from the project root
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agent.adapters.chroma_index import forget_clients
from agent.adapters.ledger import SqliteLedger
from agent.adapters.local_embedder import DIMENSION, MODEL_NAME
from agent.app.data_dir import ensure_data_dir
from agent.config import load_settings
from agent.domain import MemoryRecord, content_hash, memory_id
from agent.wiring import open_memory
from bench import machine

USER = "default"


def seed(root: Path, size: int, rng: random.Random) -> None:
    paths = ensure_data_dir(root)
    now = time.time()
    texts = [f"I keep note {n} about the thing numbered {n}" for n in range(size)]
    records = [MemoryRecord(id=memory_id(USER, t), text=t, kind="explicit", user=USER, session="bench", turn=0,
                            created_at=now, last_seen=now, content_hash=content_hash(t), source=t) for t in texts]
    vectors = []
    for _ in range(size):
        vec = [rng.gauss(0.0, 1.0) for _ in range(DIMENSION)]
        norm = sum(x * x for x in vec) ** 0.5
        vectors.append([x / norm for x in vec])
    ledger = SqliteLedger(paths.ledger)
    try:
        ledger.put(records)
        ledger.claim_vectors(USER, ("local", MODEL_NAME, DIMENSION))
        ledger.put_vectors(USER, [r.id for r in records], vectors)
    finally:
        ledger.close()


def timed_open(root: Path, size: int) -> tuple[float, int, list[str]]:
    settings = load_settings({"data_dir": root, "memory_capacity": size, "embedder": "local"})
    notices: list[str] = []
    start = time.perf_counter()
    service = open_memory(settings, notify=notices.append)
    elapsed = time.perf_counter() - start
    indexed = service.indexed()
    service.close()
    forget_clients()
    return elapsed, indexed, notices


def measure(size: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="agent-restore-") as tmp:
        root = Path(tmp) / "data"
        seed(root, size, random.Random(size))
        restore_s, indexed, notices = timed_open(root, size)
        again_s, _, _ = timed_open(root, size)
    return {"memories": size, "indexed": indexed, "restore_s": round(restore_s, 2), "next_open_s": round(again_s, 2),
            "notices": notices}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[20_000])
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    results = [measure(size) for size in args.sizes]
    if args.json:
        print(json.dumps({"machine": machine.describe(), "results": results}, indent=2))
        return
    print(machine.line())
    for row in results:
        print(f"{row['memories']:>7,} memories: index restored from the ledger in {row['restore_s']:.1f} s "
              f"({row['indexed']:,} indexed); the next open {row['next_open_s']:.2f} s")


if __name__ == "__main__":
    main()
