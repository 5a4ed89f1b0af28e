"""The transcripts of the README and the manual (``docs/``) are what the agent prints:
``bench/readme_transcripts.py`` makes each again (real agent processes against the fake OpenAI server, on a fixed
clock; another process, a damaged index, a full disk or a real PostgreSQL where the case needs one) and this fails
on any difference. One test per transcript, so that xdist spreads them."""

from __future__ import annotations

import difflib
from collections import Counter

import pytest

from bench.readme_transcripts import (
    ON_A_DATABASE,
    ON_A_MODEL_SERVER,
    ROOT,
    cases,
    marked,
    page_of,
    pages,
    shown,
    spliced,
    transcript,
)

pytestmark = pytest.mark.usefixtures("model_cache")

# The doctor's transcript runs where the llama.cpp tests' server runs, so one worker of a parallel run starts it.
NAMES = [pytest.param(name, marks=[pytest.mark.xdist_group("servers_llama")] if name in ON_A_MODEL_SERVER else [])
         for name in sorted(cases())]


def test_every_marker_of_the_pages_has_a_transcript_and_every_transcript_one_marker() -> None:
    counted = Counter(name for page in pages() for name in marked(page.read_text()))
    assert set(counted) == set(cases())
    assert [name for name, times in counted.items() if times > 1] == []


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_the_transcript_on_its_page_is_what_the_agent_prints(name: str, request: pytest.FixtureRequest) -> None:
    """Each with what it needs, from the run's shared servers: a fresh database of its PostgreSQL cluster, its
    llama.cpp server."""
    database = request.getfixturevalue("pg_url") if name in ON_A_DATABASE else None
    model_server = request.getfixturevalue("gemma_server") if name in ON_A_MODEL_SERVER else None
    page = page_of(name)
    assert page is not None, f"no page marks the transcript {name}"
    made, there = transcript(name, database, model_server), shown(page.read_text(), name)
    where = str(page.relative_to(ROOT))
    drift = "".join(difflib.unified_diff(there.splitlines(True), made.splitlines(True), where, "agent"))
    assert made == there, f"{where}'s transcript {name} drifted; run python -m bench.readme_transcripts:\n{drift}"


def test_a_marked_transcript_is_replaced_whole_and_an_unknown_one_is_an_error() -> None:
    readme = "a\n<!-- transcript x -->\n```\nold\nlines\n```\n<!-- /transcript -->\nb\n"
    assert spliced(readme, {"x": "$ agent\nnew\n"}) == (
        "a\n<!-- transcript x -->\n```\n$ agent\nnew\n```\n<!-- /transcript -->\nb\n")
    assert marked(readme) == {"x"} and shown(readme, "x") == "old\nlines\n" and shown(readme, "y") == ""
    with pytest.raises(KeyError):
        spliced(readme, {})
