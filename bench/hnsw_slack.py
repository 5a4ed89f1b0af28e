"""What zeroing the HNSW files' unused room costs at each write, delete, open and close
(``chroma_files.clear_slack``): on a store of N vectors whose room past the elements is clean (every call after the
first) and full of heap bytes (the first).
hnswlib writes that room only when it creates a segment, for 100 elements; a segment that grew past them has none.

    python bench/hnsw_slack.py [--vectors 5 10000]

Prints the figures and the machine. Nothing here touches a real data directory: everything is in a temp dir.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make ``bench`` importable from the project root
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agent.adapters import chroma_files
from agent.adapters.chroma_index import ChromaIndex, forget_clients, open_client
from bench import machine


def build(root: Path, vectors: int) -> None:
    index = ChromaIndex(open_client(root, None), "bench", str(root))
    ids = [f"m{n}" for n in range(vectors)]
    index.upsert(ids, [[random.random() for _ in range(384)] for _ in ids])
    forget_clients()


def dirty(root: Path) -> int:
    """Fill every segment's room past its last element with non-zero bytes; how many bytes that room holds."""
    room = 0
    for header in root.glob("*/header.bin"):
        for name, used in chroma_files.element_bytes(header).items():
            path = header.parent / name
            size = path.stat().st_size
            with open(path, "r+b") as f:
                f.seek(used)
                f.write(b"\x5a" * (size - used))
            room += size - used
    return room


def timed(call: Callable[[], object], runs: int = 5) -> list[float]:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        call()
        times.append((time.perf_counter() - start) * 1000)
    return times


def measure(root: Path, vectors: int) -> tuple[int, float, float]:
    """The room past the elements of a store of ``vectors``, and the milliseconds ``clear_slack`` takes on it when
    clean (median) and when full of heap bytes (once)."""
    build(root, vectors)
    clean = statistics.median(timed(lambda: chroma_files.clear_slack(root)))
    room = dirty(root)
    first = timed(lambda: chroma_files.clear_slack(root), runs=1)[0]
    return room, clean, first


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vectors", type=int, nargs="+", default=[5, 10_000])
    args = parser.parse_args()
    for vectors in args.vectors:
        with tempfile.TemporaryDirectory() as tmp:
            room, clean, first = measure(Path(tmp) / "chroma", vectors)
        print(f"{vectors:,} vectors, {room / 1e3:.0f} kB of room past the elements: clear_slack takes a median "
              f"{clean:.2f} ms when it is clean (every later write, delete, open and close), about "
              f"{first:.2f} ms when it holds heap bytes (once)")
    print(f"machine: {machine.line()}")


if __name__ == "__main__":
    main()
