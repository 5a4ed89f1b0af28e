"""Issue 9 item 5: eviction past the capacity is a handful at a time and always said; a bulk eviction is the
user's decision, through `agent memories evict`.

Before, a 50,000-memory store opened with the default capacity (10,000) lost 40,000 memories to the first chat
write, without a word. Now a write evicts what it pushes past the capacity (as many as it added, plus at most
``EVICTION_SLACK``), each eviction is reported, and a store further over than that refuses new memories with one
line naming the command that evicts and the setting that avoids it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent.adapters.chroma_index import forget_clients
from agent.adapters.local_embedder import LocalEmbedder
from agent.errors import OverCapacity
from agent.memory.policy import MemoryPolicy
from agent.memory.service import EVICTION_SLACK, MemoryService
from tests.builders import add_all
from tests.chat_fakes import ScriptedChat
from tests.cli_harness import invoke
from tests.helpers_store import ledger_of, open_fake_memory, open_memory_with, stores_of, text_for
from tests.repl_harness import build_chat, memory_service, run_lines


def store_of(n: int, capacity: int, monkeypatch: pytest.MonkeyPatch) -> MemoryService:
    """A real store of ``n`` memories written at a capacity that keeps them all, reopened at ``capacity``."""
    monkeypatch.setenv("AGENT_MEMORY_CAPACITY", str(n))
    add_all(open_fake_memory(), [text_for("old", i) for i in range(n)])
    forget_clients()
    monkeypatch.setenv("AGENT_MEMORY_CAPACITY", str(capacity))
    return open_fake_memory()


def test_one_new_memory_at_capacity_evicts_the_least_recently_seen_and_says_which(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory = store_of(5, 5, monkeypatch)
    first = memory.least_recently_seen(1)[0]
    report = memory.remember("I keep bees on my roof in Lisbon")
    assert [r.text for r in report.stored] == ["I keep bees on my roof in Lisbon"]
    assert report.evicted == (first,)
    assert memory.count() == memory.indexed() == 5


def test_a_store_a_handful_over_is_brought_back_by_the_next_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory = store_of(5 + EVICTION_SLACK, 5, monkeypatch)
    report = memory.remember("I keep bees on my roof in Lisbon")
    assert len(report.evicted) == 1 + EVICTION_SLACK
    assert memory.count() == memory.indexed() == 5


def test_a_store_far_over_its_capacity_refuses_new_memories_and_evicts_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory = store_of(20, 5, monkeypatch)
    before = sorted(ledger_of(memory).ids(memory.user))

    with pytest.raises(OverCapacity) as refused:
        memory.remember("I keep bees on my roof in Lisbon")
    line = str(refused.value)
    assert "\n" not in line
    assert "20 memories, 15 over its capacity of 5" in line
    assert "`agent memories evict --to 5`" in line and "AGENT_MEMORY_CAPACITY to 20 or more" in line

    turn = memory.observe("I moved to Porto last spring with my two cats", session="chat", turn=1)
    assert turn.stored == () and "agent memories evict --to 5" in turn.skipped_reason
    again = memory.remember(text_for("old", 3))
    assert again.evicted == () and [r.text for r in again.stored] == [text_for("old", 3)], "a restatement refreshes"
    assert sorted(ledger_of(memory).ids(memory.user)) == before
    assert memory.indexed() == 20


def test_a_write_that_is_not_a_new_memory_never_evicts_in_bulk(tmp_path: Path) -> None:
    """``write`` (the scrub's rewrite, a benchmark) on a store far over: the store is left as it is."""
    memory = memory_service(tmp_path / "mem")
    add_all(memory, [text_for("old", i) for i in range(12)])
    small = MemoryService(*stores_of(memory), memory.embedder, memory.user, MemoryPolicy(capacity=4))
    add_all(small, [text_for("new", 0)])
    assert small.count() == 13


def test_the_chat_says_which_memory_a_write_evicted(tmp_path: Path) -> None:
    def full_store() -> MemoryService:
        memory = memory_service(tmp_path / "mem")
        add_all(memory, [text_for("old", 0)])
        return MemoryService(*stores_of(memory), memory.embedder, memory.user, MemoryPolicy(capacity=1))

    done = run_lines(build_chat(tmp_path, ScriptedChat("Lovely."), memory=full_store),
                     "I keep bees on my roof in Lisbon")
    assert "remembered: I keep bees on my roof in Lisbon" in done.log
    assert f"evicted (the least recently seen, past the memory capacity): {text_for('old', 0)}" in done.log


def test_agent_memories_add_refuses_past_capacity_and_evict_yes_does_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, local_embedder: LocalEmbedder
) -> None:
    """The issue's case from outside: a store of 30 opened with a capacity of 10 (the whole command, in-process)."""
    monkeypatch.setenv("AGENT_MEMORY_CAPACITY", "30")
    add_all(open_memory_with(local_embedder), [text_for("old", i) for i in range(30)])
    forget_clients()
    env = {"AGENT_EMBEDDER": "local", "AGENT_MEMORY_CAPACITY": "10"}

    refused = invoke("memories", "add", "I also keep a tortoise called Speedy", env=env)
    assert refused.returncode == 1 and refused.stdout == ""
    [line] = refused.stderr.splitlines()
    assert line.startswith("agent: Not remembered: the store holds 30 memories, 20 over its capacity of 10")
    assert "`agent memories evict --to 10`" in line and "AGENT_MEMORY_CAPACITY to 30 or more" in line

    listed = invoke("memories", "evict", "--json", env=env)
    assert listed.returncode == 0, listed.stderr
    going = json.loads(listed.stdout)
    assert [m["text"] for m in going] == [text_for("old", i) for i in range(20)], "least recently seen first"
    assert "nothing was evicted: run `agent memories evict --to 10 --yes`" in listed.stderr
    kept = json.loads(invoke("memories", "list", "--json", env=env).stdout)
    assert len(kept) == 30, "neither the refused add nor the listing evicted anything"

    evicted = invoke("memories", "evict", "--yes", env=env)
    assert evicted.returncode == 0, evicted.stderr
    assert "evicted 20 memories, the least recently seen" in evicted.stdout and "10 remain" in evicted.stdout
    added = invoke("memories", "add", "I also keep a tortoise called Speedy", env=env)
    assert added.returncode == 0, added.stderr
    remembered, evicted_line = added.stdout.splitlines()
    assert remembered.startswith("remembered ") and remembered.endswith(": I also keep a tortoise called Speedy")
    assert evicted_line.startswith("evicted ") and evicted_line.endswith(f"past the capacity): {text_for('old', 20)}")
    remaining = json.loads(invoke("memories", "list", "--json", env=env).stdout)
    assert len(remaining) == 10 and "I also keep a tortoise called Speedy" in [m["text"] for m in remaining]
