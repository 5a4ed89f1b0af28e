"""The instruction patterns read the ``folded`` view, case-folded already, so they match case as written: without
``re.IGNORECASE`` (60% of their time, the largest part of judging a memory) each pattern decides every labelled line
of ``bench/`` as it did with it."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

from agent.memory import instructions

BENCH = Path(__file__).resolve().parents[2] / "bench"
ORDERS = (*instructions.PATTERNS, instructions._SENDING_ORDER)  # every pattern that reads ``instructions.read``


def strings(value: object) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings(item)


def labelled() -> list[str]:
    """Every text of the gate's, the refusals' and memory truth's labelled sets."""
    texts: set[str] = set()
    for path in sorted(BENCH.glob("*.jsonl")):
        texts |= {s for line in path.read_text(encoding="utf-8").splitlines() if line.strip()
                  for s in strings(json.loads(line))}
    for path in sorted(BENCH.glob("memory_truth*.json")):
        texts |= set(strings(json.loads(path.read_text(encoding="utf-8"))))
    return sorted(texts)


def test_the_patterns_ignore_no_case_as_their_text_has_none() -> None:
    assert all(not order.flags & re.IGNORECASE for order in ORDERS)


def test_each_pattern_decides_every_labelled_line_as_it_did_ignoring_case() -> None:
    texts = labelled()
    assert len(texts) > 2_000
    ignoring = [re.compile(order.pattern, order.flags | re.IGNORECASE) for order in ORDERS]
    seen = [instructions.read(text) for text in texts]
    differ = [(read, n) for read in seen
              for n, (order, old) in enumerate(zip(ORDERS, ignoring, strict=True))
              if bool(order.search(read)) != bool(old.search(read))]
    assert not differ, f"{len(differ)} decisions moved"
    assert sum(instructions.instruction(text) for text in texts) > 50
