"""Calibrate the injection threshold of an embedder on LoCoMo: ``python bench/calibrate.py --data PATH
[--embedder local|openai] [--json]``.

Method: each conversation is written to its own store through the agent's write path (gate on). Every question is
then asked, through ``MemoryService.search`` with the default k and a candidate threshold, of its own store and of
every other conversation's store. A question asked of a stranger's store should come back empty (nothing in it is
about that question), while on its own store the evidence should still reach the block. For each threshold the
script reports the share of foreign questions that still get a memory (leak), the injected recall on the own store
and the share of own questions that come back empty. The chosen value is the lowest threshold whose leak is at most
``--leak`` (default 5%): lower thresholds inject noise into strangers' prompts, higher ones only lose own recall.
The three sentences of the chat issue are scored too, as a check the chosen value must pass.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make ``bench`` importable from the project root
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agent.adapters.chroma_index import forget_clients
from agent.errors import AgentError
from agent.memory.policy import MemoryPolicy
from agent.memory.retriever import dot
from agent.memory.service import MemoryService
from agent.ports import Embedder
from bench import locomo, machine
from bench.locomo_recall import USER, build_store, mean, prepare

THRESHOLDS = tuple(round(0.15 + 0.025 * i, 3) for i in range(15))
# (probe, memory, must the memory be injected?) from the chat issue: a snack question must bring back the
# allergy and leave the move to Berlin out.
CHAT_CHECKS = (
    ("Any snack ideas?", "I can't eat peanuts, they make my throat swell", True),
    ("Can you suggest a snack for this afternoon?", "I can't eat peanuts, they make my throat swell", True),
    ("Any snack ideas?", "I am moving to Berlin next month", False),
)


def sweep(conversations: Sequence[locomo.Conversation], embedder: Embedder, k: int) -> list[dict[str, float]]:
    """Per threshold: foreign leak, own injected recall and own empty share, over every (question, store) pair."""
    with tempfile.TemporaryDirectory(prefix="calibrate-") as tmp:
        stores = [build_store(c, Path(tmp) / str(i), embedder, gate=True) for i, c in enumerate(conversations)]
        rows = []
        for threshold in THRESHOLDS:
            leak: list[float] = []
            recall: list[float] = []
            empty: list[float] = []
            for i, conv in enumerate(conversations):
                for j, store in enumerate(stores):
                    service = MemoryService(store.ledger, store.index, embedder, USER, MemoryPolicy(k=k))
                    for q in conv.questions:
                        found = service.search(q.question, k=k, threshold=threshold)
                        if i != j:
                            leak.append(1.0 if found else 0.0)
                            continue
                        recall.append(locomo.share_found([m.record.extra["dia_id"] for m in found], q.evidence))
                        empty.append(0.0 if found else 1.0)
            rows.append({"threshold": threshold, "foreign_leak": mean(leak), "own_injected_recall": mean(recall),
                         "own_empty": mean(empty)})
        for store in stores:
            store.ledger.close()
        forget_clients()
    return rows


def chat_checks(embedder: Embedder) -> list[dict[str, Any]]:
    texts = sorted({t for probe, memory, _ in CHAT_CHECKS for t in (probe, memory)})
    vectors = dict(zip(texts, embedder.embed(texts), strict=True))
    return [{"probe": p, "memory": m, "similarity": dot(vectors[p], vectors[m]), "wanted": w}
            for p, m, w in CHAT_CHECKS]


def choose(rows: Sequence[dict[str, float]], max_leak: float) -> float:
    """The lowest threshold whose foreign leak is at most ``max_leak`` (the highest swept if none is)."""
    return next((r["threshold"] for r in rows if r["foreign_leak"] <= max_leak), rows[-1]["threshold"])


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--embedder", choices=("local", "openai"), default="local")
    parser.add_argument("--leak", type=float, default=0.05, help="highest acceptable share of foreign questions "
                                                                 "that still get a memory")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    conversations, embedder = prepare(args.data, args.embedder)
    if len(conversations) < 2:
        parser.error("calibration needs at least two conversations (questions are asked of a stranger's store)")
    try:
        rows = sweep(conversations, embedder, MemoryPolicy().k)
    except AgentError as exc:
        raise SystemExit(f"error: {exc}") from exc
    checks = chat_checks(embedder)
    chosen = choose(rows, args.leak)
    result = {"embedder": args.embedder, "max_leak": args.leak, "chosen": chosen, "sweep": rows,
              "chat_checks": checks, "machine": machine.describe()}
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    print(f"machine: {machine.line()}")
    print("| threshold | foreign leak | own injected recall | own empty |\n|---|---|---|---|")
    for r in rows:
        print(f"| {r['threshold']:.3f} | {r['foreign_leak']:.3f} | {r['own_injected_recall']:.3f} | "
              f"{r['own_empty']:.3f} |")
    print(f"\nlowest threshold with foreign leak <= {args.leak:.0%}: {chosen:.3f}")
    for c in checks:
        verdict = "ok" if (c["similarity"] >= chosen) == c["wanted"] else "FAILS"
        print(f"chat check: {c['probe']!r} vs {c['memory']!r}: {c['similarity']:.3f} "
              f"({'must pass' if c['wanted'] else 'must stay out'}: {verdict} at {chosen:.3f})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
