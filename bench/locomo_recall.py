"""Recall of the agent's memory on LoCoMo: ``python bench/locomo_recall.py --data PATH [--embedder local|openai]
[--json]``.

Each conversation gets a fresh store in a temp directory. Every turn goes through the agent's own write path
(``MemoryService.observe``, gate included) as the user statement ``(session date) Speaker: text``, with its
``dia_id`` in the record's ``extra`` and the turn before it (the line it answers) as keyword context. Every
question goes through the agent's own read path: ``MemoryService.search`` with no threshold for the ranking that
recall@k measures, ``MemoryService.recall`` with the default k, threshold and token budget for what the model
would really be given. Side by side, on one store that keeps every turn (gate off): keyword only (BM25), dense
only, and the agent's fused retriever, so the table also shows what the gate costs. Search latency is the time
of ``recall`` per question (embed the question, fused search, block, ledger touch), the read path of one turn.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make ``bench`` importable from the project root
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agent.adapters.chroma_index import ChromaIndex, forget_clients, open_client
from agent.adapters.ledger import SqliteLedger
from agent.config import load_settings
from agent.errors import AgentError
from agent.memory.policy import FusionWeights, MemoryPolicy
from agent.memory.service import MemoryService
from agent.ports import Embedder
from agent.tokens import count_tokens
from agent.wiring import build_embedder
from bench import locomo, machine
from bench.locomo import Conversation, Question

USER = "locomo"
KS = (5, 10, 25)
SESSION_KS = (1, 3, 5)


@dataclass(frozen=True)
class Variant:
    """One column of the comparison: a retriever and whether the gate ran on the write path."""

    name: str
    label: str
    gate: bool
    weights: FusionWeights


def variants() -> list[Variant]:
    agent = FusionWeights()
    return [
        Variant("agent", "agent, gate on", True, agent),
        Variant("agent_no_gate", "agent, gate off", False, agent),
        Variant("bm25", "bm25 only, gate off", False, FusionWeights(dense=0.0, keyword=1.0)),
        Variant("dense", "dense only, gate off", False, FusionWeights(dense=1.0, keyword=0.0)),
    ]


@dataclass(frozen=True)
class Answer:
    """What the read path did for one question."""

    category: int
    evidence: tuple[str, ...]
    ranked: tuple[str, ...]
    injected: tuple[str, ...]
    block_tokens: int
    search_ms: float


@dataclass
class Store:
    """One conversation written through the agent's write path: which turns the gate kept, and the parts of the
    store that read-path services are built on."""

    ledger: SqliteLedger
    index: ChromaIndex
    kept: set[str] = field(default_factory=set)
    write_s: float = 0.0


def build_store(conv: Conversation, root: Path, embedder: Embedder, gate: bool) -> Store:
    """Write every turn of ``conv`` to a new store under ``root`` through ``MemoryService.observe``."""
    root.mkdir(parents=True, exist_ok=True)
    ledger = SqliteLedger(root / "ledger.sqlite3")
    index = ChromaIndex(open_client(root / "chroma", None), USER, str(root / "chroma"))
    writer = MemoryService(ledger, index, embedder, USER, MemoryPolicy(gate=gate))
    store = Store(ledger, index)
    previous: dict[int, str] = {}
    start = time.perf_counter()
    for number, turn in enumerate(conv.turns):
        extra = {"dia_id": turn.dia_id}
        if turn.session in previous:
            extra["context"] = previous[turn.session]
        report = writer.observe(
            turn.statement, session=f"session_{turn.session}", turn=number, when=turn.when.timestamp(), extra=extra
        )
        previous[turn.session] = f"{turn.speaker}: {turn.text}"
        if report.stored:
            store.kept.add(turn.dia_id)
    store.write_s = time.perf_counter() - start
    return store


def ask(service: MemoryService, questions: Iterable[Question], depth: int, prefix: str) -> list[Answer]:
    """Each question through the read path; every dia_id gets ``prefix`` so ids stay unique across conversations."""
    answers = []
    for q in questions:
        start = time.perf_counter()
        recall = service.recall(q.question)
        elapsed = (time.perf_counter() - start) * 1000
        ranked = service.search(q.question, k=depth, threshold=None)
        answers.append(
            Answer(
                category=q.category,
                evidence=tuple(prefix + e for e in q.evidence),
                ranked=tuple(prefix + m.record.extra["dia_id"] for m in ranked),
                injected=tuple(prefix + m.record.extra["dia_id"] for m in recall.block.memories),
                block_tokens=recall.block.tokens,
                search_ms=elapsed,
            )
        )
    return answers


def summarise(answers: Sequence[Answer], kept: set[str], turns: int, stored: int) -> dict[str, Any]:
    """The figures of one group of questions. ``kept`` holds the evidence-eligible turns the gate kept (ids made
    unique per conversation by the caller), ``turns``/``stored`` count the turns seen and stored."""
    if not answers:
        return {"questions": 0}
    out: dict[str, Any] = {}
    for k in KS:
        out[f"turn_recall@{k}"] = mean(locomo.recall_at(a.ranked, a.evidence, k) for a in answers)
    for k in SESSION_KS:
        out[f"session_recall@{k}"] = mean(
            locomo.recall_at(
                locomo.sessions_ranked(a.ranked), list(dict.fromkeys(map(locomo.session_of, a.evidence))), k
            )
            for a in answers
        )
    out["injected_recall"] = mean(locomo.share_found(a.injected, a.evidence) for a in answers)
    evidence = {e for a in answers for e in a.evidence}
    out["store_rate"] = stored / turns if turns else 0.0
    out["evidence_kept"] = len(evidence & kept) / len(evidence)
    tokens = [a.block_tokens for a in answers]
    times = [a.search_ms for a in answers]
    out["block_tokens_p50"] = locomo.percentile(tokens, 50)
    out["block_tokens_p95"] = locomo.percentile(tokens, 95)
    out["block_tokens_mean"] = mean(tokens)
    out["search_ms_p50"] = locomo.percentile(times, 50)
    out["search_ms_p95"] = locomo.percentile(times, 95)
    out["questions"] = len(answers)
    return out


def mean(values: Iterable[float]) -> float:
    items = list(values)
    return sum(items) / len(items) if items else 0.0


def report(answers: Sequence[Answer], kept: set[str], turns: int, stored: int) -> dict[str, Any]:
    """All questions, each category, and categories 1-4 (the ones published comparisons use)."""
    out = summarise(answers, kept, turns, stored)
    out["by_category"] = {
        str(c): summarise([a for a in answers if a.category == c], kept, turns, stored) for c in locomo.CATEGORIES
    }
    out["categories_1_4"] = summarise([a for a in answers if a.category != 5], kept, turns, stored)
    return out


def run(conversations: Sequence[Conversation], embedder: Embedder, log: Any) -> dict[str, Any]:
    """Every variant over every conversation; evidence ids are prefixed with the sample id to stay unique."""
    results: dict[str, list[Answer]] = {v.name: [] for v in variants()}
    kept: dict[bool, set[str]] = {True: set(), False: set()}
    stored = {True: 0, False: 0}
    turns = 0
    conversation_tokens: list[int] = []
    depth = max(KS)
    for conv in conversations:
        turns += len(conv.turns)
        conversation_tokens.append(count_tokens("\n".join(t.statement for t in conv.turns)))
        prefix = f"{conv.sample_id}/"
        for gate in (True, False):
            with tempfile.TemporaryDirectory(prefix="locomo-") as tmp:
                store = build_store(conv, Path(tmp), embedder, gate)
                kept[gate] |= {prefix + d for d in store.kept}
                stored[gate] += len(store.kept)
                log(f"{conv.sample_id}: gate {'on' if gate else 'off'}: stored {len(store.kept)}/{len(conv.turns)} "
                    f"turns in {store.write_s:.1f} s")
                for v in variants():
                    if v.gate != gate:
                        continue
                    service = MemoryService(store.ledger, store.index, embedder, USER, MemoryPolicy(weights=v.weights))
                    results[v.name] += ask(service, conv.questions, depth, prefix)
                store.ledger.close()
            forget_clients()
    out: dict[str, Any] = {
        v.name: report(results[v.name], kept[v.gate], turns, stored[v.gate]) for v in variants()
    }
    out["tokens"] = {
        "conversation_tokens_mean": mean(conversation_tokens),
        "block_tokens_mean": out["agent"]["block_tokens_mean"],
        "ratio": out["agent"]["block_tokens_mean"] / mean(conversation_tokens),
    }
    return out


COLUMNS = (
    ("R@5", "turn_recall@5", "{:.3f}"),
    ("R@10", "turn_recall@10", "{:.3f}"),
    ("R@25", "turn_recall@25", "{:.3f}"),
    ("inj", "injected_recall", "{:.3f}"),
    ("S@1", "session_recall@1", "{:.3f}"),
    ("S@3", "session_recall@3", "{:.3f}"),
    ("S@5", "session_recall@5", "{:.3f}"),
    ("store", "store_rate", "{:.3f}"),
    ("ev.kept", "evidence_kept", "{:.3f}"),
    ("tok p50", "block_tokens_p50", "{:.0f}"),
    ("tok p95", "block_tokens_p95", "{:.0f}"),
    ("ms p50", "search_ms_p50", "{:.1f}"),
    ("ms p95", "search_ms_p95", "{:.1f}"),
    ("n", "questions", "{:d}"),
)


def groups(result: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """(title, figures) of every question group of one variant's result, in table order."""
    out = [("all questions", result), ("categories 1-4", result["categories_1_4"])]
    out += [(f"category {c} ({name})", result["by_category"][str(c)]) for c, name in locomo.CATEGORIES.items()]
    return out


def table(results: dict[str, Any]) -> str:
    """One markdown table per question group, a row per variant."""
    per_variant = [(v.label, groups(results[v.name])) for v in variants()]
    lines = []
    for g, (title, _) in enumerate(per_variant[0][1]):
        lines += [f"\n{title}", "| retriever | " + " | ".join(c[0] for c in COLUMNS) + " |",
                  "|---" * (len(COLUMNS) + 1) + "|"]
        for label, rows in per_variant:
            row = rows[g][1]
            if row.get("questions"):
                lines.append(f"| {label} | " + " | ".join(fmt.format(row[key]) for _, key, fmt in COLUMNS) + " |")
    return "\n".join(lines)


def prepare(data: Path, embedder: str) -> tuple[list[Conversation], Embedder]:
    """The conversations of ``data`` and the embedder called ``embedder``; one line and exit status 1 when either
    cannot be had (no file, not LoCoMo JSON, no endpoint for openai)."""
    try:
        conversations = locomo.load(data)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise SystemExit(f"error: {data} cannot be read as LoCoMo JSON: {exc}") from exc
    if not conversations:
        raise SystemExit(f"error: {data} holds no conversation")
    try:
        return conversations, build_embedder(embedder, load_settings())
    except AgentError as exc:
        raise SystemExit(f"error: {exc}") from exc


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, required=True, help="a file in LoCoMo's JSON format")
    parser.add_argument("--embedder", choices=("local", "openai"), default="local")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of tables")
    args = parser.parse_args(argv)

    conversations, embedder = prepare(args.data, args.embedder)
    fixes = locomo.EvidenceFixes()
    for conv in conversations:
        fixes.add(conv.fixes)

    def log(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    started = time.perf_counter()
    try:
        results = run(conversations, embedder, log)
    except AgentError as exc:
        raise SystemExit(f"error: {exc}") from exc
    results["machine"] = machine.describe()
    results["data"] = {
        "file": args.data.name,
        "conversations": len(conversations),
        "turns": sum(len(c.turns) for c in conversations),
        "questions": sum(len(c.questions) for c in conversations),
        "by_category": {str(c): n for c, n in sorted(locomo.categories_of(q for c in conversations
                                                                          for q in c.questions).items())},
        "evidence_fixes": vars(fixes),
        "embedder": f"{embedder.name} ({embedder.model})",
        "run_s": round(time.perf_counter() - started, 1),
    }
    if args.json:
        print(json.dumps(results, indent=2))
        return 0
    data, tokens = results["data"], results["tokens"]
    print(f"machine: {machine.line()}")
    print(f"data: {data['file']}: {data['conversations']} conversations, {data['turns']} turns, "
          f"{data['questions']} questions {data['by_category']}; evidence fixes {data['evidence_fixes']}; "
          f"embedder {data['embedder']}; run {data['run_s']} s")
    print(table(results))
    print(f"\ntokens: memory block mean {tokens['block_tokens_mean']:.0f} per question against "
          f"{tokens['conversation_tokens_mean']:.0f} for the whole conversation: ratio {tokens['ratio']:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
