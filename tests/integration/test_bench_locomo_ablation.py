"""The LoCoMo ablation harness on the tiny synthetic file of ``tests.locomo_sample``: each variant
runs through the agent's write and read paths and leaves the product as it found it (word-hash embedder, real ledger and
Chroma). The ``oldgate`` variants read the gate from git history and are not run here."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent.adapters import ledger as ledger_module
from agent.memory import dates, gate, retriever
from bench import locomo, locomo_ablation
from bench.locomo_ablation import CachedEmbedder, answers, variants
from tests.fakes import WordHashEmbedder
from tests.locomo_sample import SAMPLE


@pytest.fixture
def conversation(tmp_path: Path) -> locomo.Conversation:
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps([SAMPLE]))
    return locomo.load(path)[0]


def test_every_variant_runs_and_puts_back_what_it_patched(conversation: locomo.Conversation) -> None:
    originals = (gate.decide, dates.resolve, retriever.by_recency, ledger_module.rank_config)
    embedder = CachedEmbedder(WordHashEmbedder())
    table = variants(lambda: pytest.fail("the old gate is read from git only by the oldgate variants"))
    for name, variant in table.items():
        if name.startswith("oldgate"):
            continue
        found = answers(conversation, embedder, variant)
        assert [a.category for a in found] == [4, 1, 2], name
        assert (gate.decide, dates.resolve, retriever.by_recency, ledger_module.rank_config) == originals, name
        assert not embedder.use_said, name


def test_gate_off_finds_every_evidence_turn_in_the_top_25(conversation: locomo.Conversation) -> None:
    found = answers(conversation, CachedEmbedder(WordHashEmbedder()), variants(lambda: pytest.fail())["gateoff"])
    assert all(locomo.recall_at(a.ranked, a.evidence, 25) == 1.0 for a in found)


def test_each_text_is_embedded_once_across_variants(conversation: locomo.Conversation) -> None:
    inner = WordHashEmbedder()
    embedder = CachedEmbedder(inner)
    table = variants(lambda: pytest.fail())
    answers(conversation, embedder, table["current"])
    first = [t for call in inner.calls for t in call]
    answers(conversation, embedder, table["d35"])
    embedded = [t for call in inner.calls for t in call]
    assert embedded == first and len(first) == len(set(first))


def test_an_unknown_variant_is_refused_with_the_list(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        locomo_ablation.main(["--data", str(tmp_path / "none.json"), "nosuch"])
    assert exit_.value.code == 2
    assert "no variant nosuch" in capsys.readouterr().err
