"""The import's own CPU beyond the embedding, a figure the machine's load does not move much:
``python bench/bulk_overhead.py [--size 3000]``.

``agent memories import`` of ``bench.latency.sentences`` through the real wiring (the SQLite ledger, the held Chroma
index, the service's write), in-process, with a cheap 384-dimension embedder whose own CPU is taken out: what is left
is the CPU (every thread's) that parsing, judging, the ledger and Chroma cost a memory. ``bench/bulk.py`` measures
the whole against the real embedder's, whose own CPU moved by 20% between two runs of it in one run of the bench on
this loaded machine, so a change of a tenth of a millisecond a memory is seen here, not there. One import a process
(the embedded store is held by the process that opened it); to compare two commits, run this in a checkout of each,
in turn, a few times (``git archive COMMIT | tar -x -C DIR``, then ``cd DIR``).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make ``bench`` and this checkout's ``agent`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np

from bench import machine
from bench.bulk import texts_of, write_export


class TimedFake:
    """A 384-d vector per text from a generator seeded by its digest; the CPU it spends is counted, to be taken out."""

    name = "fake"
    model = "seeded-384"
    dimension = 384

    def __init__(self) -> None:
        self.cpu_s = 0.0

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        started = time.process_time()
        out = np.empty((len(texts), self.dimension), dtype=np.float32)
        for row, text in enumerate(texts):
            seed = int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest())
            out[row] = np.random.default_rng(seed).standard_normal(self.dimension)
        out /= np.linalg.norm(out, axis=1, keepdims=True)
        vectors: list[list[float]] = out.tolist()
        self.cpu_s += time.process_time() - started
        return vectors


def once(export: Path, size: int) -> float:
    """CPU milliseconds a memory of one import of ``export`` into a fresh data directory, the fake's own left out."""
    from agent import wiring
    from agent.app.transfer import import_export
    from agent.config import load_settings

    with tempfile.TemporaryDirectory(prefix="bench-overhead-") as data:
        os.environ.update(AGENT_DATA_DIR=data, AGENT_USER="bulk", AGENT_MEMORY_CAPACITY=str(size + 100))
        settings, fake = load_settings(), TimedFake()
        service = wiring.open_memory(settings, fake)
        try:
            started = time.process_time()
            with export.open("rb") as stream:
                report = import_export(service, stream, export.name, settings.data_dir)
            spent = time.process_time() - started - fake.cpu_s
        finally:
            service.close()
        assert report.new == size, report
    return 1000 * spent / size


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=3_000)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-overhead-") as tmp:
        export = Path(tmp) / "export.jsonl"
        write_export(texts_of(args.size, 0), export)
        figure = once(export, args.size)
    print(f"machine: {machine.line()}")
    print(json.dumps({"memories": args.size, "cpu_ms_a_memory": round(figure, 3),
                      "load_avg_1m_end": os.getloadavg()[0]}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
