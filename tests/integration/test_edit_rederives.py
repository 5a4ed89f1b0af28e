"""An edit derives again everything the old words gave the memory (issue 19 item 9, issue 21 defect 3): its profile
facts, what it replaces and what replaces it, its dates, its restatements; and an edited memory keeps its supersede
links through an export and an import, so the round trip is byte-identical. ``agent memories edit`` (in-process,
``tests.cli_harness``) with the real local model and store, ``/edit`` through the REPL harness, ``$EDITOR`` the fake
editor."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent.adapters.chroma_index import forget_clients
from agent.adapters.local_embedder import LocalEmbedder
from agent.config import load_settings
from agent.memory.service import MemoryService
from agent.wiring import open_memory
from tests import fake_editor
from tests.chat_fakes import ScriptedChat
from tests.cli_harness import invoke
from tests.e2e_helpers import agent_env
from tests.fake_openai import FakeOpenAI, Reply
from tests.repl_harness import build_chat, memory_service, run_lines

EDITOR = fake_editor.COMMAND
BOSTON = "I live in Boston"
BERLIN = "I moved to Berlin"


@pytest.fixture
def editor(monkeypatch: pytest.MonkeyPatch) -> Iterator[pytest.MonkeyPatch]:
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.setenv("EDITOR", EDITOR)
    yield monkeypatch


def seeded(local_embedder: LocalEmbedder, *lines: str) -> MemoryService:
    memory = open_memory(load_settings(), local_embedder)
    for n, line in enumerate(lines):
        memory.observe(line, session=f"s{n}", turn=1, when=1_700_000_000.0 + 3600 * n)
    return memory


def listed() -> dict[str, dict[str, object]]:
    return {row["text"]: row for row in json.loads(invoke("memories", "list", "--json", "--history").stdout)}


def test_memories_edit_of_a_home_into_a_taste_leaves_no_home_and_no_old_quote(
    tmp_path: Path, editor: pytest.MonkeyPatch, local_embedder: LocalEmbedder
) -> None:
    memory = seeded(local_embedder, BOSTON, "I live in Boston, really")  # the second is a restatement
    [boston] = memory.list()
    assert [q.text for q in boston.restated] == ["I live in Boston, really"]
    forget_clients()
    editor.setenv("FAKE_EDITOR_TEXT", "I like green tea")
    edited = invoke("memories", "edit", boston.id[:8])
    assert edited.returncode == 0, edited.stderr

    rows = listed()
    assert list(rows) == ["I like green tea"]
    # A taste may be a value of its own (a drink, kept as said); no home is left of the old words.
    assert rows["I like green tea"]["restated"] == []
    assert [p["key"] for p in rows["I like green tea"]["profile"] if p["key"] == "home"] == []
    assert [p for p in json.loads(invoke("memories", "profile", "--json").stdout) if p["key"] == "home"] == []
    with FakeOpenAI(fallback=Reply("Noted.")) as fake:
        chat = invoke("--lines", "-s", "later", stdin="Recommend a restaurant near me\n", env=agent_env(fake))
        assert chat.returncode == 0, chat.stderr
        assert "Boston" not in fake.system_prompts()[0] and "lives in" not in fake.system_prompts()[0]
    exported = invoke("memories", "export").stdout
    assert "Boston" not in exported and "really" not in exported


def test_an_edited_memory_keeps_what_it_replaced_through_export_and_import_byte_for_byte(
    tmp_path: Path, editor: pytest.MonkeyPatch, local_embedder: LocalEmbedder
) -> None:
    memory = seeded(local_embedder, BOSTON, BERLIN)
    berlin = next(r for r in memory.list() if r.text == BERLIN)
    forget_clients()
    editor.setenv("FAKE_EDITOR_TEXT", "I moved to Berlin, to Kreuzberg")
    assert invoke("memories", "edit", berlin.id[:8]).returncode == 0

    rows = listed()
    new = rows["I moved to Berlin, to Kreuzberg"]
    assert rows[BOSTON]["superseded_by"] == new["id"], "the link follows the edit"
    assert [p["superseded_by"] for p in rows[BOSTON]["profile"]] == [new["id"]]
    exported = invoke("memories", "export")
    assert exported.returncode == 0
    (tmp_path / "export.jsonl").write_text(exported.stdout)
    other = str(tmp_path / "other")
    assert invoke("memories", "--data-dir", other, "import", str(tmp_path / "export.jsonl")).returncode == 0
    assert invoke("memories", "--data-dir", other, "export").stdout == exported.stdout, "byte-identical round trip"
    profile = json.loads(invoke("memories", "--data-dir", other, "profile", "--json").stdout)
    assert [(p["value"], p["superseded_by"] is None) for p in profile] == [("Berlin", True), ("Boston", False)]
    with FakeOpenAI(fallback=Reply("Noted.")) as fake:
        chat = invoke("--lines", "--data-dir", other, "-s", "later", stdin="Recommend a restaurant near me\n",
                      env=agent_env(fake))
        assert chat.returncode == 0, chat.stderr
        assert "lives in: Berlin" in fake.system_prompts()[0] and "Boston" not in fake.system_prompts()[0]


def test_an_edit_that_no_longer_replaces_makes_the_old_value_current_again_and_says_so(
    editor: pytest.MonkeyPatch, local_embedder: LocalEmbedder
) -> None:
    memory = seeded(local_embedder, BOSTON, BERLIN)
    berlin = next(r for r in memory.list() if r.text == BERLIN)
    forget_clients()
    editor.setenv("FAKE_EDITOR_TEXT", "I like green tea")
    edited = invoke("memories", "edit", berlin.id[:8])
    assert edited.returncode == 0, edited.stderr
    assert f"Current again, now that the memory that replaced it is gone: {BOSTON}\n" in edited.stdout
    rows = listed()
    assert rows[BOSTON]["superseded_by"] is None and rows["I like green tea"]["superseded_by"] is None
    homes = [p for p in json.loads(invoke("memories", "profile", "--json").stdout) if p["key"] == "home"]
    assert [(p["value"], p["superseded_by"]) for p in homes] == [("Boston", None)]


def test_an_edit_into_a_new_home_replaces_an_older_one_and_is_replaced_by_a_newer_one(
    tmp_path: Path, editor: pytest.MonkeyPatch
) -> None:
    memory = memory_service(tmp_path / "mem")
    for n, line in enumerate([BOSTON, "I like tea", "I like coffee"]):
        memory.observe(line, session="s", turn=n + 1, when=1_700_000_000.0 + 3600 * n)
    editor.setenv("FAKE_EDITOR_TEXT", "I moved to Paris")
    done = run_lines(build_chat(tmp_path, ScriptedChat(), memory=lambda: memory), "/memories --all", "/edit 2")
    by_text = {r.text: r for r in memory.list()}
    assert "I like tea" not in by_text, done.log
    assert by_text[BOSTON].superseded_by == by_text["I moved to Paris"].id, "the edit replaces the older home"
    assert [(e.key, e.value) for e in memory.profile()[0]] == [("home", "Paris")]

    memory.observe("I moved to Munich", session="s", turn=4, when=1_700_000_000.0 + 3600 * 3)
    editor.setenv("FAKE_EDITOR_TEXT", "I moved to Rome")  # the coffee, said before Munich
    run_lines(build_chat(tmp_path, ScriptedChat(), memory=lambda: memory), "/memories --all", "/edit 1")
    by_text = {r.text: r for r in memory.list()}
    rome, munich = by_text["I moved to Rome"], by_text["I moved to Munich"]
    assert rome.superseded_by == munich.id, "a newer home replaces the edit as it would have replaced it then"
    assert [f.superseded_by for f in rome.facts] == [munich.id]
    assert [(e.key, e.value) for e in memory.profile()[0]] == [("home", "Munich")]


def test_an_edit_resolves_its_relative_dates_and_keeps_the_words_as_its_source(
    tmp_path: Path, editor: pytest.MonkeyPatch
) -> None:
    memory = memory_service(tmp_path / "mem")
    memory.add("My dentist appointment is on Monday")
    editor.setenv("FAKE_EDITOR_TEXT", "My dentist appointment is tomorrow at 3pm")
    done = run_lines(build_chat(tmp_path, ScriptedChat(), memory=lambda: memory), "/memories", "/edit 1")
    [record] = memory.list()
    assert "tomorrow" not in record.text and "at 3pm" in record.text, done.log
    assert record.source == "My dentist appointment is tomorrow at 3pm"


def test_edit_in_the_chat_of_a_memory_that_replaced_another_keeps_the_link(
    tmp_path: Path, editor: pytest.MonkeyPatch
) -> None:
    memory = memory_service(tmp_path / "mem")
    chat = ScriptedChat("Noted.", "Noted.", "Kreuzberg.")
    editor.setenv("FAKE_EDITOR_TEXT", "I moved to Berlin, to Kreuzberg")
    done = run_lines(build_chat(tmp_path, chat, memory=lambda: memory), BOSTON, BERLIN, "/memories", "/edit 1",
                     "Where do I live?")
    assert "edited: I moved to Berlin, to Kreuzberg (was: I moved to Berlin)" in done.log
    by_text = {r.text: r for r in memory.list()}
    assert by_text[BOSTON].superseded_by == by_text["I moved to Berlin, to Kreuzberg"].id
    system = " ".join(m.content for m in chat.requests[-1] if m.role == "system")
    assert "lives in: Berlin" in system and "Boston" not in system
