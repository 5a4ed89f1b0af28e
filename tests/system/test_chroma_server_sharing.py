"""Section 3 of issue 5: several agent processes share memory through a real Chroma server on 127.0.0.1.

The server holds ids and vectors only; the text stays in each data directory's ledger, which SQLite lets several
processes share. Tests start ``chroma run`` on a free port and always stop it.
"""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest

from agent.adapters import chroma_index
from agent.adapters.local_embedder import LocalEmbedder
from agent.errors import MemoryUnavailable
from agent.memory.service import MemoryService
from tests.cli_harness import invoke
from tests.helpers_store import (
    ShaEmbedder,
    chroma_server,
    index_of,
    ledger_of,
    open_fake_memory,
    open_memory_with,
    returns_within,
    spawn,
    text_for,
    vectors_of,
)

# One worker of a parallel run starts the module's Chroma server, not each (pyproject.toml: loadgroup).
pytestmark = pytest.mark.xdist_group("chroma_server_sharing")


def assert_recalls(memory: MemoryService, texts: list[str]) -> None:
    embedder = ShaEmbedder()
    by_text = {r.text: r.id for r in memory.list()}
    assert sorted(by_text) == sorted(texts)
    assert memory.indexed() == len(texts)
    for text in texts:
        assert vectors_of(memory).query(embedder.embed([text])[0], 1)[0].id == by_text[text]


@pytest.mark.slow
def test_two_agents_writing_at_once_through_the_server_lose_nothing(
    chroma_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENT_CHROMA_URL", chroma_url)
    writers = [spawn("add", tag, "25") for tag in ("left", "right")]
    outputs = [writer.communicate(timeout=120) for writer in writers]
    for writer, (out, err) in zip(writers, outputs, strict=True):
        assert writer.returncode == 0, err
        assert out.count("saved ") == 25
    assert_recalls(open_fake_memory(), [text_for(tag, n) for tag in ("left", "right") for n in range(25)])


def test_a_users_memories_are_invisible_to_another_user(chroma_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENT_CHROMA_URL", chroma_url)
    monkeypatch.setenv("AGENT_USER", "alice")
    alice = open_fake_memory()
    for n in range(3):
        alice.add(text_for("alice", n))
    monkeypatch.setenv("AGENT_USER", "bob")
    bob = open_fake_memory()
    bob.add(text_for("bob", 0))
    assert [r.text for r in bob.list()] == [text_for("bob", 0)]
    assert bob.indexed() == 1
    hits = vectors_of(bob).query(ShaEmbedder().embed([text_for("alice", 0)])[0], 10)
    assert [h.id for h in hits] == [bob.list()[0].id], "bob's index cannot even return alice's ids"
    assert [m.record.text for m in bob.search(text_for("alice", 0), 10)] == [text_for("bob", 0)]
    assert len(alice.list()) == alice.indexed() == 3


def test_the_user_flag_keeps_memories_apart_through_the_cli(
    chroma_url: str, monkeypatch: pytest.MonkeyPatch, local_embedder: LocalEmbedder
) -> None:
    monkeypatch.setenv("AGENT_CHROMA_URL", chroma_url)
    monkeypatch.setenv("AGENT_USER", "carol")
    open_memory_with(local_embedder).add("My locker number is 4417")
    theirs = invoke("--user", "dave", "memories", "search", "what is my locker number?", "--all", "--json")
    assert theirs.returncode == 0, theirs.stderr
    assert json.loads(theirs.stdout) == []
    mine = invoke("--user", "carol", "memories", "search", "what is my locker number?", "--all", "--json")
    assert [m["text"] for m in json.loads(mine.stdout)] == ["My locker number is 4417"]


def test_two_data_directories_on_one_server_keep_their_own_vectors(
    chroma_url: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("AGENT_CHROMA_URL", chroma_url)
    first = open_fake_memory()
    first.add(text_for("first", 0))
    monkeypatch.setenv("AGENT_DATA_DIR", str(tmp_path / "other-machine"))
    second = open_fake_memory()  # same user name, another ledger: reconciling must not drop the first one's vectors
    second.add(text_for("second", 0))
    assert index_of(first).ids() == {first.list()[0].id}
    assert index_of(second).ids() == {second.list()[0].id}


@pytest.mark.slow
def test_a_server_that_goes_away_mid_session_is_one_line_and_memory_comes_back_from_the_ledger(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with chroma_server(tmp_path / "server-a") as running:
        url = running.url
        monkeypatch.setenv("AGENT_CHROMA_URL", url)
        memory = open_fake_memory()
        texts = [text_for("kept", n) for n in range(5)]
        for text in texts:
            memory.add(text)
    with pytest.raises(MemoryUnavailable) as gone:
        returns_within(60, lambda: memory.search(texts[0]))
    line = str(gone.value)
    assert "\n" not in line and f"The Chroma server at {url} failed to" in line and "chroma run" in line
    returns_within(60, lambda: memory.add(text_for("late", 0)))  # remembered: the ledger has it, and its vector
    assert text_for("late", 0) in {r.text for r in memory.list()}
    with pytest.raises(MemoryUnavailable, match=f"The Chroma server at {url} cannot be reached"):
        open_fake_memory()

    with chroma_server(tmp_path / "server-b") as running:  # a new, empty server: the ledger fills it again
        monkeypatch.setenv("AGENT_CHROMA_URL", running.url)
        ledger_of(memory).close()
        assert_recalls(open_fake_memory(), [*texts, text_for("late", 0)])


@pytest.mark.slow
def test_a_server_that_stops_answering_costs_one_bounded_wait(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with chroma_server(tmp_path / "server") as running:
        monkeypatch.setenv("AGENT_CHROMA_URL", running.url)
        memory = open_fake_memory()
        memory.add(text_for("kept", 0))
        monkeypatch.setattr(chroma_index, "SERVER_TIMEOUT", 1.0)  # only now: a loaded machine can miss it
        running.process.send_signal(signal.SIGSTOP)  # it never answers again while the test runs
        try:
            with pytest.raises(MemoryUnavailable, match="no answer within 1 s"):
                returns_within(60, lambda: memory.search(text_for("kept", 0)))
            # A later call that asked the stopped server again would now wait an hour, well past the bound.
            monkeypatch.setattr(chroma_index, "SERVER_TIMEOUT", 3600.0)
            with pytest.raises(MemoryUnavailable, match="no answer within 1 s"):
                returns_within(60, lambda: memory.search(text_for("kept", 0)))
            returns_within(60, lambda: memory.add(text_for("late", 0)))  # kept in the ledger, with its vector
        finally:
            running.process.send_signal(signal.SIGCONT)
