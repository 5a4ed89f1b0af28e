"""What no memory may hold, on labelled lines: ``python bench/refusal_eval.py [--data FILE] [--errors] [--json]``.

``refusal_labelled.jsonl`` holds one JSON object a line, ``{"text", "refuse", "category"}``: ``refuse`` is the class
the line must be refused as (``secret``, ``id``, ``link``, ``instruction``) or ``none`` when it must pass (phone
numbers, dosages, years, versions, addresses, a credential named without its value, sentences that lost a space
after a full stop, file names, long ordinary tokens). Written by the engineer who wrote the rules (so its figures are
dev figures, not an unseen estimate), with variants in other characters: fullwidth, zero-width and no-break spaces,
Cyrillic lookalikes, tag characters, Arabic-Indic digits.

Printed: recall per class (refused, and refused for the right reason), precision of refusing at all, and the
false-positive rate on the gate's labelled chat lines (``gate_*.jsonl``): disclosures that are refused and no longer
kept, now and with the refusal of ``--old`` (the gate before this module, read from git), so a new rule that costs
a disclosure shows. Then the time of one refusal per line, cold (no cache), old and new, on the same lines, and the
one-off cost of loading the secret detector and the suffix list.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make ``bench`` importable from the project root
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agent.memory import credentials, links, refusal
from agent.memory.gate import decide
from bench import machine
from bench.locomo_ablation import old_gate

HERE = Path(__file__).resolve().parent
LABELLED = HERE / "refusal_labelled.jsonl"
GATE_FILES = (HERE / "gate_dev.jsonl", HERE / "gate_heldout.jsonl", HERE / "gate_heldout_b.jsonl")
# The refusal before it had a module of its own: the last commit of main before the canonical text and the
# maintained detectors.
OLD = "2cf2d66:agent/memory/gate.py"
CLASSES = {refusal.SECRET_REFUSAL: "secret", refusal.ID_NUMBER_REFUSAL: "id", refusal.LINK_REFUSAL: "link",
           refusal.INSTRUCTION_REFUSAL: "instruction"}


def classify(reason: str | None) -> str:
    """The class of a refusal's reason ("hides text ... that an instruction ..." is the hidden text's class)."""
    if reason is None:
        return "none"
    for text, name in CLASSES.items():
        if reason == text or text.split(":")[0] in reason:
            return name
    return "other"


def old_refusal(spec: str) -> Callable[[str], str | None]:
    """``refusal`` of the gate module at ``spec`` (``REV:PATH``), loaded from git as a module of its own."""
    found: Callable[[str], str | None] = old_gate(spec).refusal
    return found


def per_line_us(check: Callable[[str], object], texts: list[str]) -> dict[str, float]:
    """Microseconds of one ``check`` per text, the best of three runs per text (a shared machine adds noise, never
    speed): mean, p50, p99 and max."""
    times = []
    for text in texts:
        best = float("inf")
        for _ in range(3):
            start = time.perf_counter()
            check(text)
            best = min(best, time.perf_counter() - start)
        times.append(best * 1e6)
    times.sort()
    return {"mean": sum(times) / len(times), "p50": times[len(times) // 2],
            "p99": times[min(len(times) - 1, int(len(times) * 0.99))], "max": times[-1]}


def load(path: Path) -> list[dict[str, str]]:
    return [json.loads(raw) for raw in path.read_text(encoding="utf-8").splitlines() if raw.strip()]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=LABELLED)
    parser.add_argument("--old", default=OLD, help=f"REV:PATH of the gate to compare with (default {OLD})")
    parser.add_argument("--errors", action="store_true", help="print every line refused wrongly or let through "
                        "(with --json, list them; without it the JSON holds the figures only)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)

    start = time.perf_counter()
    credentials.machine_secret("x" * 20)  # the first line that needs detect-secrets loads it
    links.is_public_suffix("example.com")
    loading_ms = (time.perf_counter() - start) * 1e3

    fresh: Callable[[str], str | None] = refusal.refusal.__wrapped__  # uncached: every line judged anew
    rows = load(args.data)
    got = [classify(fresh(row["text"])) for row in rows]
    wanted = Counter(row["refuse"] for row in rows)
    right = Counter(row["refuse"] for row, g in zip(rows, got, strict=True) if g == row["refuse"])
    refused_at_all = Counter(row["refuse"] for row, g in zip(rows, got, strict=True) if g != "none")
    refused = sum(g != "none" for g in got)
    should = sum(row["refuse"] != "none" for row in rows)
    true_refused = sum(g != "none" and row["refuse"] != "none" for row, g in zip(rows, got, strict=True))
    errors = [{"text": row["text"], "expected": row["refuse"], "got": g, "category": row["category"]}
              for row, g in zip(rows, got, strict=True) if (g == "none") != (row["refuse"] == "none")
              or (g != row["refuse"] and row["refuse"] != "none")]

    old = old_refusal(args.old)
    before = [row["refuse"] != "none" and old(row["text"]) is not None for row in rows]
    gate_lines = [row for path in GATE_FILES for row in load(path)]
    disclosures = [row["text"] for row in gate_lines if row["label"] == "disclose"]
    lost_now = [t for t in disclosures if fresh(t) is not None and not decide(t).keep]
    lost_before = [t for t in disclosures if old(t) is not None]
    texts = [row["text"] for row in gate_lines]
    timing = {"new": per_line_us(fresh, texts), "old": per_line_us(old, texts)}

    result: dict[str, Any] = {
        "machine": machine.describe(), "file": args.data.name, "lines": len(rows),
        "recall": {c: {"lines": wanted[c], "refused": refused_at_all[c], "as_class": right[c]}
                   for c in sorted(wanted) if c != "none"},
        "passed_as_they_must": right["none"], "must_pass": wanted["none"],
        "refusal_recall": true_refused / should if should else 1.0,
        "refusal_recall_old": sum(before) / should if should else 1.0,
        "passed_old": sum(row["refuse"] == "none" and old(row["text"]) is None for row in rows),
        "refusal_precision": true_refused / refused if refused else 1.0,
        "gate_disclosures": len(disclosures), "gate_disclosures_refused_now": lost_now,
        "gate_disclosures_refused_before": len(lost_before), "us_per_line": timing, "loading_ms": loading_ms,
        # The lines only when asked: a set written blind is scored without its lines being read.
        "wrong": len(errors), **({"errors": errors} if args.errors else {}),
    }
    if args.json:
        print(json.dumps(result, indent=2, ensure_ascii=False))
        return 0
    print(f"machine: {machine.line()}")
    print(f"{args.data.name}: {len(rows)} lines, {should} to refuse: recall {result['refusal_recall']:.3f}, "
          f"precision {result['refusal_precision']:.3f}; passed {right['none']}/{wanted['none']} that must pass")
    for name, figures in result["recall"].items():
        print(f"  {name}: {figures['refused']}/{figures['lines']} refused, {figures['as_class']} as {name}")
    print(f"  the old rules ({args.old}): recall {result['refusal_recall_old']:.3f}, passed {result['passed_old']}/"
          f"{wanted['none']} that must pass")
    print(f"gate files: {len(disclosures)} disclosures, refused and no longer kept: {len(lost_now)} now, "
          f"{len(lost_before)} refused by the old rules")
    for t in lost_now:
        print(f"  refused disclosure: {t!r}")
    for name, figures in timing.items():
        print(f"refusal us per line ({name}, {len(texts)} gate lines, cold): mean {figures['mean']:.0f}, "
              f"p50 {figures['p50']:.0f}, p99 {figures['p99']:.0f}, max {figures['max']:.0f}")
    print(f"loading detect-secrets and the Public Suffix List once: {loading_ms:.0f} ms")
    if args.errors:
        for e in errors:
            print(f"  [{e['category']}] expected {e['expected']}, got {e['got']}: {e['text']!r}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
