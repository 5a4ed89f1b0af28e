"""What crash-safe forget costs: the scrub of N session files, and the check every start makes for a forget cut
short, with nothing to finish, on a ledger of M memories.

    python bench/forget_cost.py [--sessions 300] [--memories 10000]

Prints the figures and the machine. Nothing here touches a real data directory: everything is in a temp dir.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make ``bench`` importable from the project root
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agent import wiring
from agent.adapters.ledger import SqliteLedger
from agent.app.data_dir import DataPaths
from agent.app.maintenance import finish_forgets
from agent.config import load_settings
from agent.conversation import Turn
from agent.domain import MemoryRecord, content_hash, memory_id
from agent.forget import Forgotten, scrub_sessions
from agent.sessions import Session, SessionStore
from bench import machine

SECRET = "I hide my spare key under the CANARY-Zq81x flowerpot"


def scrub_seconds(root: Path, sessions: int) -> float:
    store = SessionStore(root / "sessions")
    for n in range(sessions):
        store.save(Session(f"s{n:04d}", 1.0, 2.0, [Turn("hello there", "Hi."), Turn(SECRET, f"Noted: {SECRET}."),
                                                   Turn("What is the capital of Peru?", "Lima.")]))
    start = time.perf_counter()
    report = scrub_sessions(store, Forgotten([SECRET]))
    elapsed = time.perf_counter() - start
    assert len(report.rewritten) == sessions
    return elapsed


def idle_check_ms(root: Path, memories: int, runs: int = 5) -> list[float]:
    ledger = SqliteLedger(root / "ledger.sqlite3")
    texts = [f"fact number {n} about my life" for n in range(memories)]
    records = [MemoryRecord(memory_id("me", t), t, "turn", "me", "s", n, 1.0, 1.0, content_hash(t), t)
               for n, t in enumerate(texts)]
    ledger.put(records)
    ledger.put_vectors("me", [r.id for r in records], [[random.random() for _ in range(384)] for _ in records])
    ledger.close()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        finish_forgets(wiring, load_settings(environ={"AGENT_DATA_DIR": str(root)}), DataPaths(root), print)
        times.append((time.perf_counter() - start) * 1000)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=300)
    parser.add_argument("--memories", type=int, default=10_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        scrub = scrub_seconds(Path(tmp), args.sessions)
        checks = idle_check_ms(Path(tmp), args.memories)
    print(f"scrub of {args.sessions} session files: {scrub:.2f} s ({scrub / args.sessions * 1000:.1f} ms per file)")
    print(f"start-up check for a forget cut short, nothing pending, {args.memories:,} memories: "
          f"median {statistics.median(checks):.1f} ms (of {len(checks)})")
    print(f"machine: {machine.line()}")


if __name__ == "__main__":
    main()
