"""bench/memory_truth.py: its labelled set is as large as the issue asks and well formed, and a small slice of it
runs through the library with the real local embedder and reports each measure."""

from __future__ import annotations

import json
from pathlib import Path

from agent.adapters.chroma_index import forget_clients
from agent.adapters.local_embedder import LocalEmbedder
from bench.memory_truth import DEFAULT_DATA, model_extraction, report, run_library
from tests.fake_openai import FakeOpenAI, Reply


def test_the_dev_set_has_what_the_issue_asks_for() -> None:
    data = json.loads(DEFAULT_DATA.read_text())
    assert len(data["updates"]) >= 60 and len(data["pairs"]) >= 30
    assert len(data["paraphrases"]) >= 15 and len(data["dates"]) >= 20
    for case in data["updates"]:
        assert {"old", "chatter", "new", "probe", "must", "must_not"} <= case.keys() and case["must"]
    assert all(len(group["lines"]) >= 3 for group in data["paraphrases"])
    ids = [case["id"] for section in ("updates", "pairs", "paraphrases", "dates") for case in data[section]]
    assert len(ids) == len(set(ids))


def test_a_slice_runs_through_the_library_and_reports_every_measure(
    tmp_path: Path, local_embedder: LocalEmbedder
) -> None:
    data = json.loads(DEFAULT_DATA.read_text())
    small = {section: data[section][:2] for section in ("updates", "pairs", "paraphrases", "dates")}
    small["safety"] = [{"id": "s1", "line": "I'm allergic to peanuts.", "chatter": ["What a week."],
                        "probes": ["Plan a weekend in Lisbon.", "Suggest a snack for the train."], "must": ["peanut"]}]
    small["preferences"] = [{"id": "r1", "line": "Answer in bullet points this time, please.", "standing": False,
                             "probes": ["Plan a weekend in Lisbon."], "must": ["bullet"]}]
    try:
        library = run_library(small, local_embedder, tmp_path / "lib")
    finally:
        forget_clients()
    assert library["updates"]["update_accuracy"] == 1.0  # Boston -> Berlin, Seattle -> Denver
    assert library["pairs"]["false_supersede_rate"] == 0.0
    assert library["dates"]["date_accuracy"] == 1.0
    assert library["safety"]["every_request"] == 1.0  # the profile carries the allergy to a far request
    assert library["preferences"]["one_off"] == 1 and library["preferences"]["standing"] == 0
    text = report({"data": "slice", "library": library, "seconds": 1.0})
    assert "update accuracy" in text and "false-supersede rate" in text and "duplicate rate" in text
    assert "safety fact in every far request" in text and "one-off order" in text


def test_with_a_server_the_models_supersede_is_measured_after_the_memorys_checks(
    tmp_path: Path, local_embedder: LocalEmbedder
) -> None:
    """``--base-url``: the extraction runs against the server (here the fake OpenAI server of the tests, which
    proposes that the turn replaces the listed memory m1, quoting the user's words), and the counts say so."""
    # Lines no rule of the memory reads as one attribute (a sport said as said would be replaced by the rules
    # before the model's proposal counted).
    data = {"updates": [{"id": "u1", "old": "my spare keys are with the neighbour",
                         "chatter": [], "new": "these days the spare key is with my sister",
                         "probe": "who has my spare key?", "must": ["sister"], "must_not": ["neighbour"]}]}
    with FakeOpenAI(fallback=Reply("supersede: m1 = the spare key is with my sister")) as fake:
        try:
            library = run_library(data, local_embedder, tmp_path / "lib", model_extraction(fake.url, "fake"))
        finally:
            forget_clients()
        assert fake.chat_requests[-1].body["model"] == "fake"
    assert library["extraction"]["superseded"] == 1 and library["extraction"]["failed"] == 0
    assert library["updates"]["update_accuracy"] == 1.0 and library["updates"]["linked"] == 1.0
