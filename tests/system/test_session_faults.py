"""Checklist cases 11-15 where they reach the chat: a damaged session file is moved aside and the session starts
afresh, a file from another version is left alone, two processes on one session lose no turn, names and planted
symlinks cannot make the chat write outside its sessions directory, and temp files a kill left are cleaned. Chats
through a pipe run in this process (``tests.cli_harness``); two chats at once, the file size limit and the terminal
are real processes."""

from __future__ import annotations

import errno
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent.conversation import Turn
from agent.errors import SessionError
from agent.sessions import Session, SessionStore
from agent.ui.repl import open_session
from tests.chat_fakes import ScriptedChat
from tests.cli_harness import invoke
from tests.e2e_helpers import Terminal, agent_env, screen_text, session_file
from tests.fake_openai import FakeOpenAI, Reply
from tests.piped_chat import PipedAgent
from tests.repl_harness import build_chat, run_lines
from tests.warm_agent import shared


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(fallback=Reply("Noted.")) as server:
        yield server


@pytest.fixture
def store(tmp_path: Path) -> SessionStore:
    store = SessionStore(tmp_path / "data" / "sessions", "default")
    store.directory.mkdir(parents=True)
    return store


@pytest.mark.parametrize("content", [b"", b'{"schema": 1, "turns": [{"user": "hel', b"\xff\xfe", b'{"schema": 1}'])
def test_a_damaged_session_is_moved_aside_intact_and_the_session_starts_afresh(
    store: SessionStore, content: bytes
) -> None:
    (store.directory / "work.json").write_bytes(content)
    told: list[str] = []
    session, resumed = open_session(store, "work", True, told.append)
    assert (session.name, session.turns, resumed) == ("work", [], False)
    [moved] = store.directory.glob("work.json.corrupt-*")
    assert moved.read_bytes() == content and not (store.directory / "work.json").exists()
    [line] = told
    assert line.startswith(f"The session file {store.directory / 'work.json'} was damaged (")
    assert line.endswith(f"moved aside to {moved}, and session work starts afresh.")


def test_a_session_written_by_another_version_is_refused_and_left(store: SessionStore) -> None:
    newer = b'{"schema": 2, "turns": [], "created_at": 1, "updated_at": 2}'
    (store.directory / "work.json").write_bytes(newer)
    with pytest.raises(SessionError, match="written by another version of agent \\(schema 2, this one reads 1\\)"):
        open_session(store, "work", True, print)
    assert (store.directory / "work.json").read_bytes() == newer
    assert list(store.directory.glob("*.corrupt-*")) == []


def test_the_lock_holder_cleans_the_temp_files_a_killed_save_left(store: SessionStore) -> None:
    store.save(Session("work", 1.0, 2.0, [Turn("q", "a")]))
    leftovers = [store.directory / ".work.4242.deadbeef.tmp", store.directory / ".work.4243.cafe.tmp"]
    for leftover in leftovers:
        leftover.write_text('{"half a session')
    other = store.directory / ".other.4242.deadbeef.tmp"
    other.write_text("{")
    assert [info.name for info in store.list()] == ["work"], "a temp file is never taken for a session"
    with store.lock("work"):
        assert not any(p.exists() for p in leftovers)
        assert store.load("work").turns == [Turn("q", "a")]
    assert other.exists(), "another session's temp files are its own holder's business"


def test_the_chat_moves_a_damaged_session_aside_and_answers(fake: FakeOpenAI, tmp_path: Path) -> None:
    sessions = tmp_path / "data" / "sessions"
    sessions.mkdir(parents=True)
    (sessions / "work.json").write_text('{"schema": 1, "turns": [{"user": "hel')
    result = invoke("--lines", "-s", "work", "--no-memory", stdin="hello again\n", env=agent_env(fake))
    assert result.returncode == 0 and result.stdout == "Noted.\n", result.stderr
    [moved] = sessions.glob("work.json.corrupt-*")
    assert f"was moved aside to {moved}, and session work starts afresh." in result.stderr
    assert moved.read_text() == '{"schema": 1, "turns": [{"user": "hel'
    assert [t["user"] for t in session_file(tmp_path, "work")["turns"]] == ["hello again"]  # type: ignore[union-attr]


@pytest.mark.slow
def test_two_chats_on_one_session_lose_no_turn(fake: FakeOpenAI, tmp_path: Path) -> None:
    """Started together: either one is refused at once and the other's turns are all there, or they ran one after
    the other and every turn of both is there. Never an interleaved read-modify-write that drops turns."""
    env = agent_env(fake)
    chats = [PipedAgent(env, "--lines", "-s", "shared", "--no-memory") for _ in range(2)]
    for tag, chat in zip("ab", chats, strict=True):
        chat.say(*(f"{tag} line {n}" for n in range(15)))
    codes = [chat.finish() for chat in chats]
    turns = session_file(tmp_path, "shared")["turns"]
    assert isinstance(turns, list)
    refused = [n for n, chat in enumerate(chats) if any("in use by another agent process" in line for line in chat.err)]
    if refused:
        assert len(refused) == 1 and codes[refused[0]] == 1 and len(turns) == 15
    else:
        assert codes == [0, 0] and len(turns) == 30
    assert all(t["status"] == "complete" for t in turns)


def places(root: Path) -> set[Path]:
    return set(root.rglob("*"))


@pytest.mark.parametrize("name", ["../../outside", "/tmp/absolute", "a/b", "x" * 300])
def test_a_session_name_that_leaves_the_sessions_directory_is_refused_in_one_line(
    fake: FakeOpenAI, tmp_path: Path, name: str
) -> None:
    before = places(tmp_path)
    result = invoke("--lines", "-s", name, stdin="hello\n", env=agent_env(fake))
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr.startswith("agent: ") and "is not a valid session name" in result.stderr
    assert result.stderr.count("\n") == 1
    assert {p for p in places(tmp_path) - before if not p.is_relative_to(tmp_path / "data")} == set()
    assert fake.requests == []


@pytest.mark.parametrize(("planted", "message"), [("work.json", "cannot be read"), (".work.lock", "lock of session")])
def test_a_symlink_planted_at_the_session_or_its_lock_is_refused_and_its_target_untouched(
    fake: FakeOpenAI, tmp_path: Path, planted: str, message: str
) -> None:
    sessions = tmp_path / "data" / "sessions"
    sessions.mkdir(parents=True)
    target = tmp_path / "precious.txt"
    target.write_text("precious")
    (sessions / planted).symlink_to(target)
    result = invoke("--lines", "-s", "work", stdin="hello\n", env=agent_env(fake))
    assert result.returncode == 1 and message in result.stderr and "symlink" in result.stderr
    assert result.stderr.count("\n") == 1
    assert target.read_text() == "precious" and (sessions / planted).is_symlink()
    assert fake.requests == []


@pytest.mark.slow
def test_a_symlink_planted_at_the_history_file_is_refused_and_the_chat_goes_on(
    fake: FakeOpenAI, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    data.mkdir()
    target = tmp_path / "precious.txt"
    target.write_text("precious")
    (data / "history").symlink_to(target)
    with Terminal(agent_env(fake), "-s", "work", "--no-memory") as terminal:
        warning = screen_text(terminal.expect("›"))  # the warning comes before the first prompt, wrapped anywhere
        terminal.type("hello\r")
        terminal.expect("Noted.")
        terminal.expect("›")
        terminal.type("\x04")
        assert terminal.wait() == 0
    assert f"The input history file {data / 'history'} cannot be used (Too many levels of symbolic links; a " \
           "symlink there is refused): the lines typed in this run are not kept." in warning
    assert target.read_text() == "precious"


@pytest.mark.slow
def test_a_session_that_cannot_be_saved_keeps_the_chat_going_and_the_saved_file_whole(
    fake: FakeOpenAI, tmp_path: Path
) -> None:
    """Files capped a little above the saved session (RLIMIT_FSIZE, with SIGXFSZ ignored), as on a disk that fills
    up: every reply still reaches the user, the failure is told once, and the file keeps its last whole version."""
    env = agent_env(fake)
    assert invoke("--lines", "-s", "full", "--no-memory", stdin="hello\n", env=env).returncode == 0
    path = tmp_path / "data" / "sessions" / "full.json"
    before = path.read_bytes()

    lines = "".join(f"line {n} {'x' * 300}\n" for n in range(3))
    result = shared().run(env, "--lines", "-s", "full", "--no-memory", stdin=lines, file_size=len(before) + 200)
    assert result.stdout == "Noted.\n" * 3
    assert result.stderr.count("could not be saved (File too large); the previous version is intact. The chat "
                               "goes on") == 1
    assert result.stderr.rstrip().endswith("The turns since the last save are lost when this chat ends.")
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert path.read_bytes() == before and list(path.parent.glob(".*.tmp")) == []


def test_the_next_save_that_succeeds_saves_the_turns_a_failed_one_could_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import agent.sessions

    write = agent.sessions.write_private
    failures = [OSError(errno.ENOSPC, "No space left on device")]

    def full_once(path: Path, data: bytes, prefix: str) -> None:
        if failures:
            raise failures.pop()
        write(path, data, prefix)

    monkeypatch.setattr(agent.sessions, "write_private", full_once)
    done = run_lines(build_chat(tmp_path, ScriptedChat("One.", "Two.")), "first", "second")
    assert done.out == "One.\nTwo.\n" and done.code == 0
    assert done.log.count("could not be saved (No space left on device)") == 1
    assert "(the session is saved again, with every turn)" in done.log
    assert [t.user for t in done.session.turns] == ["first", "second"]
