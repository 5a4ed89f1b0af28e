"""The LoCoMo harness on a tiny synthetic file in LoCoMo's format: evidence repair, statements, recall arithmetic,
and one end-to-end run through the agent's own write and read paths (word-hash embedder, real ledger and Chroma)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench import locomo
from bench.locomo_recall import main, run
from tests.fakes import WordHashEmbedder
from tests.locomo_sample import SAMPLE

pytestmark = pytest.mark.usefixtures("model_cache")


@pytest.fixture
def data_file(tmp_path: Path) -> Path:
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps([SAMPLE]))
    return path


def test_load_repairs_evidence_and_counts_every_fix(data_file: Path) -> None:
    (conv,) = locomo.load(data_file)
    assert [t.dia_id for t in conv.turns] == ["D1:1", "D1:2", "D1:3", "D2:1", "D2:2"]
    assert [q.evidence for q in conv.questions] == [("D1:2",), ("D1:3", "D2:2"), ("D2:1",)]
    assert vars(conv.fixes) == {"split": 1, "normalised": 1, "dropped": 1, "questions_skipped": 1}


@pytest.mark.parametrize(
    ("raw", "expected"),
    [(["D:1:3"], ("D1:3",)), (["D1:03 D2:2"], ("D1:3", "D2:2")), (["D2:2", "D2:2"], ("D2:2",)), (["x"], ())],
)
def test_parse_evidence_normalises_ids(raw: list[str], expected: tuple[str, ...]) -> None:
    assert locomo.parse_evidence(raw, {"D1:3", "D2:2"}, locomo.EvidenceFixes()) == expected


def test_statement_has_session_date_speaker_and_caption(data_file: Path) -> None:
    (conv,) = locomo.load(data_file)
    assert conv.turns[1].statement == "(8 May 2023) Bo: I adopted a greyhound called Comet last week."
    assert conv.turns[2].statement.endswith("[shares a photo: a photo of a clay bowl]")


def test_recall_at_k_is_the_share_of_evidence_in_the_top_k() -> None:
    ranked = ["D1:1", "D1:2", "D2:5", "D3:1"]
    assert locomo.recall_at(ranked, ["D1:2", "D3:1"], 2) == 0.5
    assert locomo.recall_at(ranked, ["D1:2", "D3:1"], 4) == 1.0
    assert locomo.recall_at(ranked, ["D9:9"], 25) == 0.0


def test_sessions_ranked_by_first_appearance() -> None:
    assert locomo.sessions_ranked(["D2:4", "D1:1", "D2:1", "D3:3"]) == ["D2", "D1", "D3"]


def test_percentile_interpolates() -> None:
    assert locomo.percentile([1.0, 2.0, 3.0, 4.0], 50) == 2.5
    assert locomo.percentile([], 95) == 0.0


def test_run_end_to_end_reports_every_variant(data_file: Path) -> None:
    results = run(locomo.load(data_file), WordHashEmbedder(), lambda _: None)
    assert {"agent", "agent_no_gate", "bm25", "dense"} <= results.keys()
    agent, bm25 = results["agent"], results["bm25"]
    for key in ("turn_recall@5", "turn_recall@10", "turn_recall@25", "session_recall@1", "session_recall@3",
                "session_recall@5", "injected_recall", "store_rate", "evidence_kept", "block_tokens_p50",
                "search_ms_p50", "search_ms_p95", "questions"):
        assert key in agent
    assert agent["questions"] == 3
    # Gate off stores every turn; the gate drops the greeting, which no question needs.
    assert bm25["store_rate"] == 1.0 and agent["store_rate"] == 0.8 and agent["evidence_kept"] == 1.0
    # Five memories fit in the top 25: every evidence turn is found.
    assert bm25["turn_recall@25"] == 1.0
    assert results["tokens"]["conversation_tokens_mean"] > 0


def test_json_output_has_the_issue_keys(data_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--data", str(data_file), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert {"agent", "bm25", "dense"} <= out.keys()
    assert out["agent"]["questions"] == 3 and "by_category" in out["agent"]
    assert out["data"]["evidence_fixes"]["questions_skipped"] == 1
