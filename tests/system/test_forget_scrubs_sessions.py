"""Forget means gone from the whole data directory: the words of a forgotten memory also leave the session files
(the chat's own, in memory too, and every other one, damaged or set aside) and the input history. A session that
another process holds cannot be rewritten: it is named in one line and left as it is."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput
from typer.testing import CliRunner

from agent.cli import app
from agent.conversation import Turn
from agent.forget import FORGOTTEN, Forgotten, scrub_history, scrub_session, scrub_sessions
from agent.sessions import Session, SessionStore
from agent.ui.prompt import TerminalReader
from tests.chat_fakes import ScriptedChat
from tests.e2e_helpers import Terminal, agent, agent_env, screen_text
from tests.fake_openai import FakeOpenAI, Reply
from tests.repl_harness import build_chat, memory_service, run_lines

pytestmark = pytest.mark.usefixtures("model_cache")

SECRET = "I hide my spare key under the CANARY-Zq81x flowerpot"
CHESS = "I play chess with my brother every week"
NEEDLES = (b"canary", b"zq81x", b"flowerpot")
HISTORY = (
    "\n# 2026-01-02 10:00:00.000000\n+hello there\n"
    "\n# 2026-01-02 10:00:05.000000\n+I hide my spare key\n+UNDER the canary-zq81x flowerpot\n"
    "\n# 2026-01-02 10:00:09.000000\n+/memories\n"
)


def leaks(*paths: Path) -> list[str]:
    """Every file under ``paths`` whose raw bytes hold a needle, whatever its case."""
    files = [f for p in paths for f in ([p] if p.is_file() else p.rglob("*")) if f.is_file() and not f.is_symlink()]
    return [str(f) for f in files if any(n in f.read_bytes().lower() for n in NEEDLES)]


def old_session(store: SessionStore, name: str, *turns: Turn) -> None:
    store.save(Session(name, 1.0, 2.0, list(turns)))


def test_forget_in_the_chat_scrubs_its_own_session_the_others_and_the_history(tmp_path: Path) -> None:
    store = SessionStore(tmp_path / "sessions", "default")
    old_session(store, "monday", Turn("i hide my spare key   under the canary-zq81x FLOWERPOT", "Noted."),
                Turn("What is the capital of Peru?", "Lima."))
    (tmp_path / "history").write_text(HISTORY)
    chat = ScriptedChat(f"Got it: {SECRET.lower()}.", "Chess is fun.", "I know nothing about you.")
    memory = memory_service(tmp_path / "mem")
    done = run_lines(build_chat(tmp_path, chat, memory=lambda: memory, session="friday", history=tmp_path / "history"),
                     SECRET, CHESS, "/memories", "/forget 1", "What do you know about me?")

    assert f"forgot: {SECRET}" in done.log
    assert ("The forgotten words were also removed from this session, session monday, the reply context of 1 other "
            "memory, the input history.") in done.log
    last_request = " ".join(m.content for m in chat.requests[-1]).lower()
    assert "canary" not in last_request and FORGOTTEN in last_request, "the context window was rebuilt"
    [chess] = memory.list()
    assert (chess.text, chess.extra["context"]) == (CHESS, f"Got it: {FORGOTTEN}."), "kept, without the words"
    assert memory.search("chess with my brother", 1)[0].record.id == chess.id
    assert leaks(tmp_path / "sessions", tmp_path / "history", tmp_path / "mem") == []
    friday = store.load("friday")
    assert [(t.user, t.reply) for t in friday.turns[:1]] == [(FORGOTTEN, f"Got it: {FORGOTTEN}.")]
    assert store.load("monday").turns[1].user == "What is the capital of Peru?"
    history = (tmp_path / "history").read_text()
    assert history == HISTORY.replace("+I hide my spare key\n+UNDER the canary-zq81x flowerpot", f"+{FORGOTTEN}")


def test_a_session_open_in_another_process_is_named_in_one_line_and_left(tmp_path: Path) -> None:
    store = SessionStore(tmp_path / "sessions", "default")
    old_session(store, "held", Turn(SECRET, "Noted."))
    before = (store.directory / "held.json").read_bytes()
    code = ("import sys, time; from pathlib import Path; from agent.sessions import SessionStore\n"
            "with SessionStore(Path(sys.argv[1]), 'default').lock('held'):\n"
            "    print('locked', flush=True); time.sleep(60)\n")
    holder = subprocess.Popen([sys.executable, "-c", code, str(store.directory)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        memory = memory_service(tmp_path / "mem")
        memory.add(SECRET)
        done = run_lines(build_chat(tmp_path, ScriptedChat(), memory=lambda: memory), "/memories", "/forget 1")
    finally:
        holder.kill()
        holder.wait()
    assert ("They stay in 1 session open in another agent process, which cannot be rewritten now: held; the next "
            "start of agent removes them."
            in done.log.splitlines())
    assert (store.directory / "held.json").read_bytes() == before


def test_a_summary_written_from_a_forgotten_turn_goes_with_it() -> None:
    forgotten = Forgotten([SECRET])
    folded = Session("s", 0, 0, [Turn(SECRET, "ok"), Turn("hi", "hello")], summary="The user hides a key.",
                     context_start=1)
    assert scrub_session(folded, forgotten) and folded.summary == ""
    in_window = Session("s", 0, 0, [Turn("hi", "hello"), Turn(SECRET, "ok")], summary=f"User said {SECRET}.",
                        context_start=1)
    assert scrub_session(in_window, forgotten) and in_window.summary == f"User said {FORGOTTEN}."
    untouched = Session("s", 0, 0, [Turn("hi", "hello")], summary="Small talk.")
    assert not scrub_session(untouched, forgotten) and untouched.summary == "Small talk."


def test_damaged_files_copies_set_aside_and_leftover_temp_files_lose_the_words_too(tmp_path: Path) -> None:
    store = SessionStore(tmp_path / "sessions", "default")
    store.directory.mkdir(parents=True)
    damaged = b'{"schema": 1, "turns": [{"user": "' + SECRET.encode() + b' \xff\xfe'
    (store.directory / "torn.json").write_bytes(damaged)
    (store.directory / "old.json.corrupt-20260101-100000").write_bytes(damaged)
    (store.directory / ".gone.4242.deadbeef.tmp").write_text(json.dumps({"turns": [{"user": SECRET}]}))
    target = tmp_path / "elsewhere.json"
    target.write_text(SECRET)
    (store.directory / "linked.json").symlink_to(target)

    report = scrub_sessions(store, Forgotten([SECRET]))

    assert sorted(report.rewritten) == ["old.json.corrupt-20260101-100000", "torn"]
    assert report.busy == [] and len(report.failed) == 1 and report.failed[0].startswith("linked:")
    assert (store.directory / "torn.json").read_bytes() == damaged.replace(SECRET.encode(), FORGOTTEN.encode())
    assert leaks(store.directory) == [] and target.read_text() == SECRET
    assert (store.directory / "linked.json").is_symlink()


def test_history_scrub_keeps_other_entries_and_refuses_a_symlink(tmp_path: Path) -> None:
    history = tmp_path / "history"
    assert not scrub_history(history, Forgotten([SECRET])), "no history yet: nothing to do"
    history.write_text(HISTORY)
    assert not scrub_history(history, Forgotten(["words nobody typed"]))
    assert history.read_text() == HISTORY
    assert scrub_history(history, Forgotten([SECRET]))
    assert leaks(history) == [] and "+hello there\n" in history.read_text()
    assert os.stat(history).st_mode & 0o777 == 0o600
    history.unlink()
    target = tmp_path / "target"
    target.write_text(HISTORY)
    history.symlink_to(target)
    with pytest.raises(OSError):
        scrub_history(history, Forgotten([SECRET]))
    assert target.read_text() == HISTORY


@pytest.mark.slow
def test_agent_memories_forget_scrubs_the_sessions_and_the_history(tmp_path: Path) -> None:
    data = tmp_path / "data"
    store = SessionStore(data / "sessions", "default")
    old_session(store, "monday", Turn(SECRET, "Noted."))
    (data / "history").write_text(HISTORY)
    runner = CliRunner()
    added = runner.invoke(app, ["memories", "add", SECRET])
    assert added.exit_code == 0, added.output
    memory_id = added.output.split()[1].rstrip(":")
    forgot = runner.invoke(app, ["memories", "forget", memory_id])
    assert forgot.exit_code == 0, forgot.output
    assert forgot.output.splitlines() == [
        f"forgot 1 memory: {SECRET}", "The forgotten words were also removed from session monday, the input history."]
    assert leaks(data / "sessions", data / "history") == []


@pytest.mark.slow
def test_forget_in_a_terminal_leaves_no_byte_of_the_words_in_any_file_under_the_data_dir(tmp_path: Path) -> None:
    """The whole story in real processes: the words said in one session, restated in another case in a second
    whose damaged file was set aside, a temp file a kill left, then said and forgotten in a terminal chat (whose
    history keeps every typed line); afterwards no file under the data directory holds a byte of them."""
    data = tmp_path / "data"
    with FakeOpenAI(fallback=Reply("Noted.")) as fake:
        env = agent_env(fake)
        fake.add(Reply(f"Got it: {SECRET}."))  # the next line is remembered with this reply as its context
        monday = agent(env, "--lines", "-s", "monday", stdin=f"{SECRET}\n{CHESS}\n")
        assert f"remembered: {SECRET}" in monday.stderr and f"remembered: {CHESS}" in monday.stderr, monday.stderr
        sessions = data / "sessions"
        (sessions / "old.json").write_text('{"schema": 1, "turns": [{"user": "' + SECRET)
        (sessions / ".old.4242.deadbeef.tmp").write_text(SECRET)
        old = agent(env, "--lines", "-s", "old", stdin=f"Remember that {SECRET.upper()}\n")
        assert "was moved aside to" in old.stderr and "remembered:" in old.stderr, old.stderr

        with Terminal(env, "-s", "friday") as terminal:
            terminal.expect("›")
            terminal.type(f"{SECRET}\r")
            terminal.expect("remembered:")
            terminal.expect("›")
            terminal.type("/forget spare key flowerpot\r")
            terminal.expect(r"\[y/N\]")
            terminal.type("y\r")
            terminal.expect("Forgot 1 memory")
            told = screen_text(terminal.expect(r"input history\."))
            terminal.expect("›")
            terminal.type("What do you know about me?\r")
            terminal.expect("tokens in")
            terminal.expect("›")
            terminal.type("\x04")
            assert terminal.wait() == 0
        assert ("removed from this session, session monday, session old, session old.json.corrupt-") in told
        assert told.endswith("the reply context of 1 other memory, the input history.")
        assert "canary" not in " ".join(m["content"] for m in fake.chat_requests[-1].body["messages"]).lower()

    assert leaks(data) == []
    assert list(sessions.glob(".*.tmp")) == []
    history = (data / "history").read_text()
    assert FORGOTTEN in history and "What do you know about me?" in history and "/forget" not in history
    assert FORGOTTEN in (sessions / "friday.json").read_text()


def test_a_forget_command_is_not_written_to_the_history_file(tmp_path: Path) -> None:
    with create_pipe_input() as keys:
        reader = TerminalReader(tmp_path / "history", lambda: "", print, pt_input=keys, pt_output=DummyOutput())
        for line in ("/fo locker code 4417", "/forget 1", " /forget is sent as a message", "hello"):
            keys.send_text(f"{line}\r")
            assert reader.read() == line
    assert [line for line in (tmp_path / "history").read_text().splitlines() if line.startswith("+")] == [
        "+ /forget is sent as a message", "+hello"]
