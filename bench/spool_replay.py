"""What writing the turns kept in the spool costs the turn on which memory answers again, on the shared servers.

``MemoryWorker.recall`` writes up to ``REPLAY_BEFORE_RECALL`` waiting turns before that turn's recall,
on the reply path; this measures one such write (the gate, the embedding with the local model, the ledger's rows
and the Chroma server's vector) and the recall after ``n`` of them, against a PostgreSQL ledger and a Chroma server
(given, or started here on 127.0.0.1 as the tests start them: ``bench.shared_servers``). Each round spools ``n``
distinct statements, then times one recall that writes them first, against a recall with an empty spool.

    .venv/bin/python -m bench.spool_replay [--waiting 1 8 32] [--rounds 5] [--database-url URL --chroma-url URL]
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from agent.adapters.local_embedder import LocalEmbedder
from agent.app import memory_worker as chat
from agent.app.memory_worker import MemoryWorker
from agent.config import load_settings
from agent.spool import Spool, Spooled
from agent.wiring import open_memory
from bench import machine
from bench.latency import probes, sentences


def measure(database_url: str, chroma_url: str, waiting: Sequence[int], rounds: int) -> dict[int, list[float]]:
    """For each count in ``waiting``: per round, the ms one recall took beyond an empty-spool recall."""
    embedder = LocalEmbedder()
    embedder.warm_up()
    texts, asked = iter(sentences(sum(waiting) * rounds + 10)), probes(rounds * len(waiting) * 2 + 1)
    out: dict[int, list[float]] = {}
    with tempfile.TemporaryDirectory(prefix="bench-spool-") as scratch:
        os.environ.update(AGENT_DATA_DIR=str(Path(scratch) / "data"), AGENT_DATABASE_URL=database_url,
                          AGENT_CHROMA_URL=chroma_url)
        settings = load_settings()
        spool = Spool(Path(scratch) / "spool")
        worker = MemoryWorker(lambda: open_memory(settings, embedder), lambda outcome: None, spool=spool)
        chat.REPLAY_BEFORE_RECALL = max(waiting)  # every waiting turn goes before the recall, to be timed
        try:
            question = iter(asked)
            worker.recall(next(question))  # opened and warm
            for n in waiting:
                for _ in range(rounds):
                    started = time.perf_counter()
                    worker.recall(next(question))
                    empty = time.perf_counter() - started
                    for turn in range(n):
                        spool.add(Spooled(next(texts), "bench", turn, time.time()))
                    started = time.perf_counter()
                    worker.recall(next(question))
                    out.setdefault(n, []).append((time.perf_counter() - started - empty) * 1000)
                    assert not spool.has_waiting()
        finally:
            worker.close()
    return out


def main(argv: Sequence[str] | None = None) -> int:
    from bench.shared_servers import servers

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--waiting", type=int, nargs="+", default=[1, 8, 32])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--database-url")
    parser.add_argument("--chroma-url")
    args = parser.parse_args(argv)
    with servers(args.database_url, args.chroma_url) as (database_url, chroma_url, started):
        result = measure(database_url, chroma_url, args.waiting, args.rounds)
    origin = "started here on 127.0.0.1 (fsync off)" if started else "given"
    print(f"machine: {machine.line()}; servers: {origin}")
    print("| turns waiting | added to the recall, median ms | max ms | per turn, median ms |")
    print("|---|---|---|---|")
    for n, times in result.items():
        median = statistics.median(times)
        print(f"| {n} | {median:.0f} | {max(times):.0f} | {median / n:.1f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
