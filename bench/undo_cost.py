"""What taking back exactly costs: the change each turn's write records for ``/undo`` (a row more in the write's
first transaction, off the reply's path), and what ``/undo`` and every forget read and write to put links back, on a
store of N memories with ``CHANGES_KEPT`` changes kept.

    python bench/undo_cost.py [--memories 10000] [--turns 200]

The turn write is ``MemoryService.observe`` with the local embedder, SQLite ledger and embedded Chroma, timed with
the change recorded and with recording switched off, turn by turn in alternation (so both see the same store and the
same load). Prints the figures and the machine. Everything is in a temp dir.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make ``bench`` importable from the project root
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agent.adapters.local_embedder import LocalEmbedder
from agent.app.data_dir import ensure_data_dir
from agent.domain import CHANGES_KEPT, Change
from bench import machine
from bench.latency import open_service, records, sentences


def ms(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {"p50": round(statistics.median(ordered), 2), "p95": round(ordered[int(0.95 * (len(ordered) - 1))], 2)}


def measure(memories: int, turns: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        paths = ensure_data_dir(Path(tmp) / "data")
        service, ledger, _ = open_service(paths, LocalEmbedder(), capacity=memories * 2)
        texts = sentences(memories + 2 * turns)
        for start in range(0, memories, 256):
            service.write(records(texts[start : min(start + 256, memories)], start))
        for n in range(CHANGES_KEPT):  # as many changes as are ever kept, each naming a memory
            ledger.put(records([texts[n]], n), Change("old", n, "h", (f"{n:032x}",)))
        put = ledger.put
        timed: dict[bool, list[float]] = {True: [], False: []}
        for n, text in enumerate(texts[memories:]):
            recording = n % 2 == 0
            ledger.put = put if recording else (lambda records, change=None: put(records))  # type: ignore
            start = time.perf_counter()  # a session per turn: the write cap of one session never holds one back
            report = service.observe(f"I remember that {text}", session=f"bench{n}", turn=1)
            timed[recording].append((time.perf_counter() - start) * 1000)
            assert report.stored, report.skipped_reason
        ledger.put = put  # type: ignore[method-assign]
        undo: list[float] = []
        found = []
        for n in range(0, turns, 2):  # the turns whose change was recorded
            line = f"I remember that {texts[memories + n]}"
            start = time.perf_counter()
            found.append(service.turn_writes(f"bench{n}", 1, line))
            undo.append((time.perf_counter() - start) * 1000)
            assert found[-1].changes, "the change of the turn is found"
        release: list[float] = []
        for writes in found:  # then each turn's memories forgotten (a memory a later turn restated drops its change)
            start = time.perf_counter()
            service.release(writes.created)
            release.append((time.perf_counter() - start) * 1000)
        scan: list[float] = []
        for n in range(1, turns, 20):  # a turn with no change kept for its session: found by provenance, a scan
            start = time.perf_counter()
            service.turn_writes(f"bench{n}", 1, f"I remember that {texts[memories + n]}")
            scan.append((time.perf_counter() - start) * 1000)
        ledger.close()
    return {"memories": memories, "changes_kept": CHANGES_KEPT, "turns": turns,
            "observe_ms_with_change": ms(timed[True]), "observe_ms_without": ms(timed[False]),
            "turn_writes_ms": ms(undo), "turn_writes_by_provenance_ms": ms(scan), "release_ms": ms(release)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--turns", type=int, default=200)
    args = parser.parse_args(argv)
    print(json.dumps({"machine": machine.describe(), **measure(args.memories, args.turns)}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
