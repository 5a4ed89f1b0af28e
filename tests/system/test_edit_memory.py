"""``/edit N`` and ``agent memories edit ID``: a memory rewritten in ``$EDITOR`` (here ``tests/fake_editor.py``)
keeps its provenance, is embedded again, and its old text leaves every file as a forget takes it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent.adapters.chroma_index import forget_clients
from agent.adapters.local_embedder import LocalEmbedder
from agent.config import load_settings
from agent.wiring import open_memory
from tests import fake_editor
from tests.chat_fakes import ScriptedChat
from tests.cli_harness import invoke
from tests.e2e_helpers import Terminal, agent_env
from tests.fake_openai import FakeOpenAI, Reply
from tests.repl_harness import build_chat, memory_service, run_lines

pytestmark = pytest.mark.usefixtures("model_cache")

OLD = "My sister Ottilie lives in Lisbon with her two cats"
NEW = "My sister Ana lives in Porto with her two dogs"
EDITOR = fake_editor.COMMAND


def leaks(root: Path, needle: bytes = b"ottilie") -> list[str]:
    files = [root] if root.is_file() else [f for f in root.rglob("*") if f.is_file()]
    return [str(f) for f in files if needle in f.read_bytes().lower()]


@pytest.fixture
def editor(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """The fake editor as $EDITOR, writing NEW; returns the file where it notes what it was given."""
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.setenv("EDITOR", EDITOR)
    monkeypatch.setenv("FAKE_EDITOR_TEXT", f"  {NEW}\n")
    monkeypatch.setenv("FAKE_EDITOR_SAW", str(tmp_path / "saw"))
    return tmp_path / "saw"


def test_edit_in_the_chat_keeps_provenance_re_embeds_and_erases_the_old_text(tmp_path: Path, editor: Path) -> None:
    (tmp_path / "history").write_text(f"\n# 2026-01-02 10:00:00.000000\n+{OLD}\n")
    memory = memory_service(tmp_path / "mem")
    chat = ScriptedChat("Noted.", "You said Porto.")
    done = run_lines(build_chat(tmp_path, chat, memory=lambda: memory, history=tmp_path / "history"),
                     OLD, "/memories", "/edit 1", "Where does my sister Ana live with her two dogs?")

    assert editor.read_text() == f"{OLD}\n", "the editor opens on the memory's text"
    assert f"edited: {NEW} (was: {OLD})\n" in done.log
    assert "The forgotten words were also removed from this session, the input history." in done.log
    [record] = [r for r in memory.list() if r.turn == 1]  # the question of turn 2 is the gate's to judge
    assert (record.text, record.source, record.kind, record.session, record.turn) == (NEW, NEW, "turn", "test", 1)
    assert record.extra["edited_at"]
    assert memory.search("sister Ana Porto dogs", 1)[0].record.id == record.id, "embedded again"
    prompt = " ".join(m.content for m in chat.requests[-1] if m.role == "system")
    assert NEW in prompt and "Ottilie" not in prompt, "the edited memory is what the next turn recalls"
    assert leaks(tmp_path / "sessions") + leaks(tmp_path / "mem") + leaks(tmp_path / "history") == []


@pytest.mark.parametrize(("text", "status", "said"), [
    (OLD, "0", "The text is unchanged."),
    ("  \n", "0", "The text was emptied: nothing changed (forget removes a memory)."),
    (NEW, "1", "The editor exited with a failure status: nothing changed."),
    ("My password is hunter2hunter2", "0",
     "Not changed: the new text looks like a secret (a key, password or card number): never stored."),
])
def test_an_edit_that_changes_nothing_says_why_and_keeps_the_memory(
    tmp_path: Path, editor: Path, monkeypatch: pytest.MonkeyPatch, text: str, status: str, said: str
) -> None:
    monkeypatch.setenv("FAKE_EDITOR_TEXT", text)
    monkeypatch.setenv("FAKE_EDITOR_STATUS", status)
    memory = memory_service(tmp_path / "mem")
    memory.add(OLD)
    done = run_lines(build_chat(tmp_path, ScriptedChat(), memory=lambda: memory), "/memories", "/edit 1")
    assert done.log.endswith(f"/forget N forgets number N.\n{said}\n")
    assert [r.text for r in memory.list()] == [OLD]


def test_edit_takes_a_change_of_case_as_an_edit(tmp_path: Path, editor: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_EDITOR_TEXT", OLD.replace("Lisbon", "LISBON"))
    memory = memory_service(tmp_path / "mem")
    memory.add(OLD)
    done = run_lines(build_chat(tmp_path, ScriptedChat(), memory=lambda: memory), "/memories", "/edit 1")
    assert "edited: My sister Ottilie lives in LISBON" in done.log
    assert [r.text for r in memory.list()] == [OLD.replace("Lisbon", "LISBON")]


def test_edit_usage_and_unknown_numbers(tmp_path: Path, editor: Path) -> None:
    memory = memory_service(tmp_path / "mem")
    done = run_lines(build_chat(tmp_path, ScriptedChat(), memory=lambda: memory), "/edit", "/edit my sister",
                     "/edit 3")
    assert done.log == ("Usage: /edit N (a number from the last /memories) or /edit ID.\n" * 2
                        + "No number 3 in the last listing: run /memories first.\n")
    assert not editor.exists(), "no editor opened"


def test_memories_edit_from_the_command_line(tmp_path: Path, editor: Path, local_embedder: LocalEmbedder) -> None:
    service = open_memory(load_settings(), local_embedder)
    old = service.observe(OLD, session="monday", turn=2, when=1_700_000_000.0).stored[0]
    forget_clients()
    result = invoke("memories", "edit", old.id[:6])
    assert result.returncode == 0, result.stderr
    [new] = json.loads(invoke("memories", "list", "--json").stdout)
    assert result.stdout == f"edited {new['id'][:8]}: {NEW} (was {old.id[:8]})\n"
    assert (new["session"], new["turn"], new["kind"], new["created_at"][:10]) == ("monday", 2, "turn", "2023-11-14")
    found = json.loads(invoke("memories", "search", "where do my sister's pets live?", "--json").stdout)
    assert found[0]["text"] == NEW, "embedded again, by meaning"
    assert leaks(tmp_path / "data") == []
    missing = invoke("memories", "edit", "ffffff")
    assert (missing.returncode, missing.stderr) == (
        1, "agent: 'ffffff' matches no memory: use `agent memories list` to see the ids.\n")


@pytest.mark.slow
def test_edit_in_a_terminal_runs_the_editor_on_it(tmp_path: Path) -> None:
    with FakeOpenAI(fallback=Reply("Noted.")) as fake:
        env = agent_env(fake, EDITOR=EDITOR, FAKE_EDITOR_TEXT=NEW, FAKE_EDITOR_SAW=str(tmp_path / "saw"))
        env.pop("VISUAL", None)
        with Terminal(env, "-s", "tty") as terminal:
            terminal.expect("›")
            terminal.type(f"/remember {OLD}\r")
            terminal.expect("remembered: ")
            terminal.expect("›")
            terminal.type("/memories\r")
            terminal.expect("/forget N forgets number N")
            terminal.expect("›")
            terminal.type("/edit 1\r")
            terminal.expect(f"edited: {NEW}")
            terminal.expect("›")
            terminal.type("\x04")
            assert terminal.wait() == 0
    assert (tmp_path / "saw").read_text() == f"{OLD}\n"
    assert leaks(tmp_path / "data") == []
