"""What loading the local embedding model costs each start, once its conversion is cached: the CPU and wall time
of a fresh ``LocalEmbedder``'s ``warm_up`` (the digest looked up, the tokenizer and the session opened), beside
the one-time conversion and the hashing of the 23 MB source that each load no longer pays (``local_model``).

    python bench/model_load.py [--loads 10]

Prints the figures and the machine. The cache is a temp dir: nothing here touches ``~/.cache/agent``.
"""

from __future__ import annotations

import argparse
import hashlib
import resource
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make ``bench`` importable from the project root
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agent.adapters.local_embedder import LocalEmbedder, default_model_files
from bench import machine


def cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def costs(call: Callable[[], object]) -> tuple[float, float]:
    """(CPU seconds of this process, wall seconds) of ``call``: the conversion's child is not in the CPU figure."""
    cpu, wall = cpu_s(), time.perf_counter()
    call()
    return cpu_s() - cpu, time.perf_counter() - wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--loads", type=int, default=10)
    args = parser.parse_args()
    source = default_model_files()[0]
    with tempfile.TemporaryDirectory() as tmp:
        cache = Path(tmp) / "agent"
        _, converting = costs(LocalEmbedder(cache_dir=cache).warm_up)
        loads = [costs(LocalEmbedder(cache_dir=cache).warm_up) for _ in range(args.loads)]
    hashing, _ = costs(lambda: hashlib.sha256(source.read_bytes()).hexdigest())
    cpu, wall = (statistics.median(figures) * 1000 for figures in zip(*loads, strict=True))
    print(f"first load, converting the packaged model: {converting:.1f} s")
    print(f"each later load (median of {args.loads}): {cpu:.0f} ms of CPU, {wall:.0f} ms wall")
    size_mb = source.stat().st_size / 1e6
    print(f"hashing the {size_mb:.0f} MB source, which a load no longer does: {hashing * 1000:.0f} ms of CPU")
    print(f"machine: {machine.line()}")


if __name__ == "__main__":
    main()
