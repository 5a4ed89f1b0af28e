"""The README's transcripts are what the agent prints: ``bench/readme_transcripts.py`` makes them again (real agent
processes against the fake OpenAI server, on a fixed clock) and this fails on any difference."""

from __future__ import annotations

import difflib

import pytest

from bench.readme_transcripts import README, marked, spliced, transcripts


@pytest.mark.slow
def test_every_transcript_in_the_readme_is_what_the_agent_prints() -> None:
    readme = README.read_text()
    made = transcripts()
    assert marked(readme) == set(made), "a marker of README.md without a transcript, or one the README lacks"
    again = spliced(readme, made)
    drift = "".join(difflib.unified_diff(readme.splitlines(True), again.splitlines(True), "README.md", "agent"))
    assert again == readme, f"README.md drifted; run python -m bench.readme_transcripts:\n{drift}"


def test_a_marked_transcript_is_replaced_whole_and_an_unknown_one_is_an_error() -> None:
    readme = "a\n<!-- transcript x -->\n```\nold\nlines\n```\n<!-- /transcript -->\nb\n"
    assert spliced(readme, {"x": "$ agent\nnew\n"}) == (
        "a\n<!-- transcript x -->\n```\n$ agent\nnew\n```\n<!-- /transcript -->\nb\n")
    assert marked(readme) == {"x"}
    with pytest.raises(KeyError):
        spliced(readme, {})
