"""The write gate on labelled chat lines: ``python bench/gate_eval.py [--data FILE ...] [--errors] [--json]``.

Each line of a data file is a JSON object ``{"text", "label", "category"}``: ``label`` is ``disclose`` when the line
tells something about the user (a fact, preference, plan, relationship, health or diet, a name to be called by, an
update) and ``not`` when it does not (questions and requests that disclose nothing, remarks about the conversation,
small talk, code, pasted errors, statements about the world, injection attempts). The gate's ``keep`` is scored
against it: recall of disclosures (kept / disclosures) and precision (disclosures among the kept), overall and per
category, with the lines it gets wrong. Three files ship with it: ``gate_dev.jsonl``, the set the rules were tuned
on; ``gate_heldout.jsonl``, written separately in another style by the engineer who wrote the rules (its errors
have been seen, so it is no longer an unseen figure); and ``gate_heldout_b.jsonl``, written by someone who had never
seen the gate, scored once and never tuned on: its figures are the honest estimate of how the gate does on lines
nobody has seen (bench/RESULTS.md, section 5). The decision time per line is printed too.

``--product`` scores what the product keeps instead of the gate alone: each line is observed by a
``MemoryService`` with the real local embedder on a temp store (a user of its own per line), so a line the gate
drops but whose meaning states a profile fact, and a one-off order the preferences read, count as the chat counts
them.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make ``bench`` importable from the project root
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agent.memory.gate import GateDecision, decide
from agent.memory.refusal import refusal
from bench import machine

HERE = Path(__file__).resolve().parent
FILES = (HERE / "gate_dev.jsonl", HERE / "gate_heldout.jsonl", HERE / "gate_heldout_b.jsonl")


@dataclass(frozen=True)
class Line:
    text: str
    disclose: bool
    category: str


@dataclass(frozen=True)
class Score:
    """The gate's figures on one file."""

    name: str
    lines: int
    disclosures: int
    kept: int
    true_kept: int
    recall: float
    precision: float
    us_per_line: float
    us_p50: float
    us_p99: float
    us_max: float
    per_category: dict[str, dict[str, int]]
    errors: list[dict[str, str]]


def load(path: Path) -> list[Line]:
    rows = [json.loads(raw) for raw in path.read_text(encoding="utf-8").splitlines() if raw.strip()]
    return [Line(r["text"], r["label"] == "disclose", r["category"]) for r in rows]


def _timed(text: str) -> tuple[GateDecision, float]:
    """The decision on one line and its time in microseconds, the best of three (a shared machine's scheduler adds
    noise to one run, never speed)."""
    best = float("inf")
    for _ in range(3):
        refusal.cache_clear()  # each run judges the line anew: a cached refusal is no measure of the gate
        start = time.perf_counter()
        decision = decide(text)
        best = min(best, time.perf_counter() - start)
    return decision, best * 1e6


def _observed(root: Path) -> Callable[[str], tuple[GateDecision, float]]:
    """The product's decision on a line: what ``MemoryService.observe`` keeps of it, and its time in microseconds."""
    from agent.adapters.local_embedder import LocalEmbedder
    from bench.memory_truth import Store

    store = Store(root, LocalEmbedder())
    seen = 0

    def observe(text: str) -> tuple[GateDecision, float]:
        nonlocal seen
        seen += 1
        service, _ = store.service(f"line{seen}")
        start = time.perf_counter()
        report = service.observe(text, session="s", turn=1)
        took = (time.perf_counter() - start) * 1e6
        kept = report.decision.keep and bool(report.stored or report.restated)
        return GateDecision(kept, report.skipped_reason or report.decision.reason, text=report.decision.text), took

    return observe


def score(name: str, lines: list[Line], judge: Callable[[str], tuple[GateDecision, float]] = _timed) -> Score:
    timed = [judge(line.text) for line in lines]
    decisions = [decision for decision, _ in timed]
    times = sorted(us for _, us in timed)
    per_category: dict[str, dict[str, int]] = defaultdict(lambda: {"lines": 0, "errors": 0})
    errors = []
    for line, decision in zip(lines, decisions, strict=True):
        per_category[line.category]["lines"] += 1
        if decision.keep != line.disclose:
            per_category[line.category]["errors"] += 1
            errors.append({"category": line.category, "text": line.text, "expected": "keep" if line.disclose
                           else "drop", "reason": decision.reason, "kept": decision.text})
    disclosures = sum(line.disclose for line in lines)
    kept = sum(d.keep for d in decisions)
    true_kept = sum(d.keep and line.disclose for line, d in zip(lines, decisions, strict=True))
    return Score(name, len(lines), disclosures, kept, true_kept, true_kept / disclosures if disclosures else 1.0,
                 true_kept / kept if kept else 1.0, sum(times) / len(times), times[len(times) // 2],
                 times[min(len(times) - 1, int(len(times) * 0.99))], times[-1], dict(per_category), errors)


def report(s: Score, show_errors: bool) -> str:
    out = [f"{s.name}: {s.lines} lines, {s.disclosures} disclosures, kept {s.kept}: recall {s.recall:.3f}, "
           f"precision {s.precision:.3f}; us per line: mean {s.us_per_line:.0f}, p50 {s.us_p50:.0f}, "
           f"p99 {s.us_p99:.0f}, max {s.us_max:.0f}"]
    wrong = {c: v for c, v in sorted(s.per_category.items()) if v["errors"]}
    out.append("  errors per category: " + (", ".join(f"{c} {v['errors']}/{v['lines']}" for c, v in wrong.items())
                                             or "none"))
    if show_errors:
        out += [f"  [{e['category']}] expected {e['expected']}: {e['text']!r} ({e['reason']})" for e in s.errors]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, nargs="+", default=list(FILES))
    parser.add_argument("--errors", action="store_true", help="print every line the gate gets wrong (with --json, "
                        "list them; without it the JSON holds the figures only, so a set written blind is scored "
                        "without its lines being read)")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--product", action="store_true", help="score what MemoryService.observe keeps")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as root:
        judge = _observed(Path(root)) if args.product else _timed
        scores = [score(path.name, load(path), judge) for path in args.data]
    if args.json:
        # The lines it gets wrong only when asked: a set written blind is scored without its lines on the screen.
        files = [vars(s) if args.errors else {k: v for k, v in vars(s).items() if k != "errors"} for s in scores]
        payload: dict[str, Any] = {"machine": machine.describe(), "files": files}
        print(json.dumps(payload, indent=2))
        return 0
    print(f"machine: {machine.line()}")
    for s in scores:
        print(report(s, args.errors))
    return 0


if __name__ == "__main__":
    sys.exit(main())
