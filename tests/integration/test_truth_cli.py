"""`agent memories list --history`, `profile` and `restore` as a user runs them, the ``agent`` command run in
this process (``tests.cli_harness``) on a temp data directory, memories seeded with the real local model."""

from __future__ import annotations

import json

import pytest

from agent.adapters.chroma_index import forget_clients
from agent.config import load_settings
from agent.wiring import open_memory
from tests.cli_harness import invoke as agent

pytestmark = pytest.mark.usefixtures("model_cache")


def seed(*lines: str) -> None:
    memory = open_memory(load_settings())
    for n, line in enumerate(lines):
        memory.observe(line, session=f"s{n}", turn=1)
    forget_clients()


def test_list_hides_what_was_replaced_history_shows_it_and_profile_lists_both_values() -> None:
    seed("I live in Boston, in a small flat near the river.", "Big news: I moved to Berlin last month!")
    table = agent("memories", "list")
    assert table.returncode == 0, table.stderr
    assert "Berlin" in table.stdout and "Boston" not in table.stdout
    assert "1 replaced by later ones: `agent memories list --history` shows them" in table.stdout
    history = agent("memories", "list", "--history")
    assert "Boston" in history.stdout and "replaced" in history.stdout
    profile = json.loads(agent("memories", "profile", "--json").stdout)
    assert [(p["kind"], p["key"], p["value"], p["superseded_by"] is None) for p in profile] == [
        ("profile", "home", "Berlin", True), ("profile", "home", "Boston", False)]


def test_restore_names_what_it_restored_and_refuses_an_id_that_is_not_replaced() -> None:
    seed("I live in Boston", "I moved to Berlin")
    rows = {row["text"]: row for row in json.loads(agent("memories", "list", "--json").stdout)}
    wrong = agent("memories", "restore", rows["I moved to Berlin"]["id"][:8])
    assert wrong.returncode == 1 and "matches no replaced memory" in wrong.stderr
    assert len(wrong.stderr.strip().splitlines()) == 1
    done = agent("memories", "restore", rows["I live in Boston"]["id"][:8])
    assert done.returncode == 0 and "restored" in done.stdout and "I live in Boston" in done.stdout
    after = {row["text"]: row for row in json.loads(agent("memories", "list", "--json").stdout)}
    assert after["I live in Boston"]["superseded_by"] is None
    assert after["I moved to Berlin"]["superseded_by"] == rows["I live in Boston"]["id"]
