"""Moving between sessions without leaving the chat (``/new``, ``/sessions``) and finding words in past ones
(``/sessions search``, ``agent sessions search``), per user and never showing a forgotten text."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent.sessions import SessionHold, SessionStore
from tests.chat_fakes import ScriptedChat
from tests.cli_harness import invoke
from tests.e2e_helpers import agent_env
from tests.fake_openai import FakeOpenAI, Reply
from tests.repl_harness import build_chat, memory_service, run_lines

pytestmark = pytest.mark.usefixtures("model_cache")

SISTER = "My sister Ottilie lives in Lisbon with her two cats"


def user_lines(root: Path, name: str) -> list[str]:
    return [turn.user for turn in SessionStore(root / "sessions", "default").load(name).turns]


def test_new_starts_a_fresh_session_and_sessions_goes_back(tmp_path: Path) -> None:
    chat = ScriptedChat("One.", "Two.", "Three.")
    done = run_lines(build_chat(tmp_path, chat, session="work"),
                     "first", "/new", "second", "/sessions", "/sessions work", "third")
    assert done.code == 0, done.log
    names = [p.stem for p in (tmp_path / "sessions").glob("*.json")]
    [fresh] = [n for n in names if n != "work"]
    assert user_lines(tmp_path, "work") == ["first", "third"]
    assert user_lines(tmp_path, fresh) == ["second"]
    assert f"(new session {fresh}; session work is saved: /sessions work goes back)" in done.log
    assert "(session work, 1 turn; last: you: first;" in done.log
    assert "work *" not in done.out and f"{fresh} *" in done.out  # /sessions stars the session it is in
    assert [m.content for m in chat.requests[1] if m.role == "user"] == ["second"]  # a fresh context
    assert [m.content for m in chat.requests[2] if m.role == "user"] == ["first", "third"]  # work's own, back


def test_sessions_n_goes_into_the_listed_session_and_new_name_names_it(tmp_path: Path) -> None:
    chat = ScriptedChat("One.", "Two.")
    done = run_lines(build_chat(tmp_path, chat, session="a"), "in a", "/new b", "in b", "/sessions", "/sessions 2",
                     "/sessions b", "/new a")
    assert "(session a, 1 turn" in done.log  # b was listed first (the most recent), a second
    assert "Already in session" not in done.log and "(session b, 1 turn" in done.log
    assert "There is a session a already: /sessions a goes into it." in done.log
    assert user_lines(tmp_path, "b") == ["in b"]


def test_a_session_another_process_holds_leaves_the_chat_where_it_was(tmp_path: Path) -> None:
    store = SessionStore(tmp_path / "sessions", "default")
    built = build_chat(tmp_path, ScriptedChat("One."), session="mine")
    run_lines(built, "hello")  # makes the file of "mine"
    other = build_chat(tmp_path, ScriptedChat("Three."), session="theirs")
    run_lines(other, "theirs first")
    chat = build_chat(tmp_path, ScriptedChat("Four."), session="mine")
    hold = SessionHold(store)
    hold.take("mine", lambda: None)
    chat.repl.commands.hold = hold
    with store.lock("theirs"):  # another agent process has it open
        done = run_lines(chat, "/sessions theirs", "still mine")
    hold.take(None, lambda: None)
    assert "/sessions: The session 'theirs' is in use by another agent process" in done.log
    assert user_lines(tmp_path, "mine") == ["hello", "still mine"]
    assert user_lines(tmp_path, "theirs") == ["theirs first"]


def test_a_chat_without_a_session_file_says_so_and_writes_none(tmp_path: Path) -> None:
    built = build_chat(tmp_path, ScriptedChat("One.", "Two."), session="nosession-x", saving=False)
    done = run_lines(built, "hello", "/session", "/new", "again")
    assert "none: this chat writes no session" in done.out
    assert "session nosession-x was not saved" in done.log and "(not saved: this chat writes no session)" in done.log
    assert not (tmp_path / "sessions").exists() or not list((tmp_path / "sessions").glob("*.json"))


def test_sessions_search_in_the_chat_finds_words_of_other_sessions(tmp_path: Path) -> None:
    service = memory_service(tmp_path / "mem")
    run_lines(build_chat(tmp_path, ScriptedChat("Noted."), session="family", memory=lambda: service), SISTER)
    done = run_lines(build_chat(tmp_path, ScriptedChat(), session="work", memory=lambda: service),
                     "/sessions search ottilie CATS", "/sessions search nothing-like-this")
    assert "family #1" in done.out and "you: My sister Ottilie lives in Lisbon with her two cats" in done.out
    assert "1 match; /sessions NAME goes into one." in done.log
    assert "No turn of your sessions holds 'nothing-like-this'." in done.log


def test_agent_sessions_search_is_per_user_and_newest_first(tmp_path: Path) -> None:
    with FakeOpenAI(fallback=Reply("Noted, about the cats.")) as fake:
        env = agent_env(fake)
        assert invoke("--lines", "-s", "old", stdin=f"{SISTER}\n", env=env).returncode == 0
        assert invoke("--lines", "-s", "new", stdin="How are the cats?\n", env=env).returncode == 0
        assert invoke("--lines", "--user", "bob", "-s", "bobs", stdin="my cats are fine\n", env=env).returncode == 0
        found = invoke("sessions", "search", "cats", "--json", env=env)
        bob = invoke("sessions", "search", "cats", "--user", "bob", env=env)
        none = invoke("sessions", "search", "zebra", env=env)
    assert found.returncode == 0, found.stderr
    rows = [(r["session"], r["turn"], r["who"]) for r in json.loads(found.stdout)]
    assert rows == [("new", 1, "you"), ("new", 1, "agent"), ("old", 1, "you"), ("old", 1, "agent")]  # not bob's
    assert "bobs #1" in bob.stdout and "old" not in bob.stdout
    assert none.returncode == 0 and "No turn of your sessions holds 'zebra'." in none.stdout


def test_search_never_shows_a_forgotten_text_even_in_a_session_not_scrubbed_yet(tmp_path: Path) -> None:
    with FakeOpenAI(fallback=Reply("Noted.")) as fake:
        env = agent_env(fake)
        assert invoke("--lines", "-s", "held", stdin=f"{SISTER}\n", env=env).returncode == 0
        [row] = json.loads(invoke("memories", "list", "--json", env=env).stdout)
        store = SessionStore(tmp_path / "data" / "sessions", "default")
        with store.lock("held"):  # another chat has the session open: the forget cannot rewrite its file yet
            forgot = invoke("memories", "forget", row["id"], env=env)
            assert forgot.returncode == 0, forgot.stderr
            assert "Ottilie" in (tmp_path / "data" / "sessions" / "held.json").read_text()  # still in the file
            found = invoke("sessions", "search", "Ottilie", env=env)
            lisbon = invoke("sessions", "search", "lisbon", env=env)
        after = invoke("sessions", "search", "Ottilie", env=env)  # the next start finished the forget
    assert found.returncode == 0, found.stderr
    assert "held #1" not in found.stdout and "No turn of your sessions holds 'Ottilie'." in found.stdout
    assert "Ottilie" not in lisbon.stdout + lisbon.stderr  # its line is scrubbed before it is searched
    assert "Ottilie" not in (tmp_path / "data" / "sessions" / "held.json").read_text()
    assert "held #1" not in after.stdout
