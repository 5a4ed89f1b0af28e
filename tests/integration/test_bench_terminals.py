"""``bench/terminals.py`` runs end to end on a tiny store and reports every figure of both designs."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from agent.adapters.chroma_index import forget_clients
from agent.memory import attributes
from bench.terminals import measure


def test_the_benchmark_measures_both_designs_on_a_small_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                                              ) -> None:
    """The benchmark's embedder takes the local one's name and never embeds: the classifier it gets is kept out of
    the process's shared ones (``attributes.for_embedder``), or a later test of this worker that embeds with the
    real local model would get it and fail in its first write."""
    monkeypatch.setattr(attributes, "_SHARED", {})
    figures = measure(tmp_path / "bench", 50, 2, random.Random(1))
    forget_clients()
    assert len(figures) == 8 and all(value >= 0 for value in figures.values())
    assert {name.split(" ")[0] for name in figures} == {"A", "B"}
