"""``bench/terminals.py`` runs end to end on a tiny store and reports every figure of both designs."""

from __future__ import annotations

import random
from pathlib import Path

from agent.adapters.chroma_index import forget_clients
from bench.terminals import measure


def test_the_benchmark_measures_both_designs_on_a_small_store(tmp_path: Path) -> None:
    figures = measure(tmp_path / "bench", 50, 2, random.Random(1))
    forget_clients()
    assert len(figures) == 8 and all(value >= 0 for value in figures.values())
    assert {name.split(" ")[0] for name in figures} == {"A", "B"}
