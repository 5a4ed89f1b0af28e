"""Session files: names, atomic saves, corrupt files left alone, symlinks refused, one process per session."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agent.conversation import Turn
from agent.errors import SessionError
from agent.sessions import Session, SessionStore, check_name, new_name


@pytest.fixture
def store(tmp_path: Path) -> SessionStore:
    return SessionStore(tmp_path / "sessions", "default")


def session(name: str = "work", turns: int = 2) -> Session:
    return Session(name, 1.0, 2.0, [Turn(f"q{n}", f"a{n}", at=float(n)) for n in range(turns)], "sum", 1)


def test_a_session_round_trips_through_its_file(store: SessionStore) -> None:
    original = session()
    original.turns.append(Turn("q", "par", status="interrupted", prompt_tokens=3, completion_tokens=1))
    store.save(original)
    loaded = store.load("work")
    assert loaded == original
    data = json.loads((store.directory / "work.json").read_text())
    assert data["schema"] == 1 and data["turns"][2]["status"] == "interrupted"


def test_files_are_private(store: SessionStore) -> None:
    old = os.umask(0o022)
    try:
        store.save(session())
        with store.lock("work"):
            pass
    finally:
        os.umask(old)
    assert stat.S_IMODE((store.directory / "work.json").stat().st_mode) == 0o600
    assert stat.S_IMODE((store.directory / ".work.lock").stat().st_mode) == 0o600
    assert stat.S_IMODE(store.directory.stat().st_mode) == 0o700


@pytest.mark.parametrize(
    "name",
    ["../../etc/passwd", "/abs/path", "a/b", "..", "", "x" * 65, "a\x00b", "-x", "_x", "trailing.", "trailing ",
     "café", "ｆｕｌｌ", "a.json"],
)
def test_names_outside_the_allowlist_are_refused_and_nothing_is_written(tmp_path: Path, name: str) -> None:
    store = SessionStore(tmp_path / "sessions", "default")
    before = sorted(p for p in tmp_path.rglob("*"))
    with pytest.raises(SessionError, match="not a valid session name"):
        store.save(Session(name, 0, 0))
    with pytest.raises(SessionError):
        store.load(name)
    assert sorted(p for p in tmp_path.rglob("*")) == before


@pytest.mark.parametrize("name", ["a", "CON", "Work_2024-01", "x" * 64, "9"])
def test_allowed_names(name: str) -> None:
    assert check_name(name) == name


def test_new_names_are_valid_and_sortable() -> None:
    assert check_name(new_name(0.0)) and new_name(0.0) < new_name(86400.0)


@pytest.mark.parametrize(
    ("content", "reason"),
    [(b"", "damaged"), (b'{"schema": 1, "turns": [', "damaged"),
     (b'{"schema": 99, "turns": []}', "another version of agent \\(schema 99"),
     (b"[1, 2]", "not a JSON object"), (b'{"schema": 1, "turns": [{"user": "x"}]}', "turn 1 lacks"),
     (b"\xff\xfe", "damaged")],
)
def test_a_corrupt_file_is_an_error_naming_it_and_is_never_overwritten(
    store: SessionStore, content: bytes, reason: str
) -> None:
    store.directory.mkdir(parents=True)
    path = store.directory / "work.json"
    path.write_bytes(content)
    with pytest.raises(SessionError, match=reason) as caught:
        store.load("work")
    assert str(path) in str(caught.value)
    assert path.read_bytes() == content
    assert [i.error is not None for i in store.list()] == [True]
    assert store.latest() is None


def test_a_failed_replace_leaves_the_old_file_and_no_temp_file(
    store: SessionStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    store.save(session(turns=1))
    before = (store.directory / "work.json").read_bytes()

    def refuse(src: object, dst: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", refuse)
    with pytest.raises(SessionError, match="could not be saved \\(No space left on device\\); the previous"):
        store.save(session(turns=5))
    assert (store.directory / "work.json").read_bytes() == before
    assert [p.name for p in store.directory.iterdir()] == ["work.json"]


def test_a_planted_symlink_is_replaced_not_followed_and_never_read(store: SessionStore, tmp_path: Path) -> None:
    target = tmp_path / "target.txt"
    target.write_text("precious")
    store.directory.mkdir(parents=True)
    link = store.directory / "work.json"
    link.symlink_to(target)
    with pytest.raises(SessionError, match="symlink"):
        store.load("work")
    store.save(session())
    assert target.read_text() == "precious"
    assert not link.is_symlink() and store.load("work") == session()


def test_a_symlink_at_the_lock_path_is_refused(store: SessionStore, tmp_path: Path) -> None:
    target = tmp_path / "target.txt"
    target.write_text("precious")
    store.directory.mkdir(parents=True)
    (store.directory / ".work.lock").symlink_to(target)
    with pytest.raises(SessionError, match="symlink"), store.lock("work"):
        pass
    assert target.read_text() == "precious"


def test_a_second_process_on_the_same_session_gets_a_clear_message_at_once(store: SessionStore) -> None:
    code = (
        "import sys; from pathlib import Path; from agent.sessions import SessionStore; from agent.errors import *\n"
        "try:\n    SessionStore(Path(sys.argv[1]), 'default').lock('work').__enter__()\n"
        "except SessionError as e:\n    print(e); sys.exit(1)\n"
    )
    with store.lock("work"):  # held until the child is done: a child that waited for it would never end
        result = subprocess.run([sys.executable, "-c", code, str(store.directory)], capture_output=True, text=True,
                                timeout=300)
    assert result.returncode == 1 and "in use by another agent process" in result.stdout
    with store.lock("work"):
        pass


def test_list_latest_and_remove(store: SessionStore) -> None:
    assert store.list() == [] and store.latest() is None
    older, newer = session("older"), session("newer")
    newer.updated_at = 10.0
    store.save(older)
    store.save(newer)
    infos = store.list()
    assert [i.name for i in infos] == ["newer", "older"]
    assert infos[0].turns == 2 and infos[0].first_line == "q0"
    assert store.latest() == "newer"
    store.remove("newer")
    assert [i.name for i in store.list()] == ["older"]
    with pytest.raises(SessionError, match="no session 'newer'"):
        store.remove("newer")
    with pytest.raises(SessionError, match="no session 'gone'"):
        store.load("gone")


def test_remove_refuses_a_session_in_use(store: SessionStore) -> None:
    store.save(session())
    code = (
        "import sys, time; from pathlib import Path; from agent.sessions import SessionStore\n"
        "with SessionStore(Path(sys.argv[1]), 'default').lock('work'):\n"
        "    print('locked', flush=True); time.sleep(30)\n"
    )
    holder = subprocess.Popen([sys.executable, "-c", code, str(store.directory)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        with pytest.raises(SessionError, match="open in another agent process: leave that chat"):
            store.remove("work")
        assert store.exists("work")
    finally:
        holder.kill()
        holder.wait()


def test_interrupted_saves_always_leave_valid_json(store: SessionStore) -> None:
    """Kill a process saving in a loop at random moments: the file is always a whole old or new version."""
    code = (
        "import sys; from pathlib import Path; from agent.sessions import SessionStore, Session\n"
        "from agent.conversation import Turn\n"
        "store = SessionStore(Path(sys.argv[1]), 'default'); s = Session('work', 0, 0)\n"
        "print('go', flush=True)\n"
        "while True:\n    s.turns.append(Turn('q' * 500, 'a' * 500)); store.save(s)\n"
    )
    for delay in (0.05, 0.11, 0.17, 0.23):
        child = subprocess.Popen([sys.executable, "-c", code, str(store.directory)], stdout=subprocess.PIPE)
        assert child.stdout is not None and child.stdout.readline() == b"go\n"
        time.sleep(delay)
        child.kill()
        child.wait()
        if store.exists("work"):
            assert len(store.load("work").turns) >= 1


def test_picking_the_session_of_a_run(store: SessionStore) -> None:
    from agent.errors import UsageError
    from agent.ui.repl import ChatOptions, pick_session

    assert pick_session(store, ChatOptions(session="work")) == ("work", False)
    name, exists = pick_session(store, ChatOptions(resume_latest=True))
    assert check_name(name) and not exists
    store.save(session("work"))
    assert pick_session(store, ChatOptions(resume_latest=True)) == ("work", True)
    assert pick_session(store, ChatOptions(session="work")) == ("work", True)
    with pytest.raises(UsageError, match="not both"):
        pick_session(store, ChatOptions(session="work", resume_latest=True))
    with pytest.raises(SessionError, match="not a valid session name"):
        pick_session(store, ChatOptions(session="../etc"))


def test_sessions_list_show_and_rm_from_the_command_line(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from agent.cli import app

    runner = CliRunner()
    assert "No sessions yet" in runner.invoke(app, ["sessions", "list"]).output
    store = SessionStore(tmp_path / "data" / "sessions", "default")
    work = Session("work", 1.0, 2.0, [Turn("I like \x1b[2Jtea", "Noted."), Turn("more?", "par", status="interrupted")])
    store.save(work)
    listing = runner.invoke(app, ["sessions", "list"])
    assert listing.exit_code == 0 and "work" in listing.output and "\x1b" not in listing.output
    shown = runner.invoke(app, ["sessions", "show", "work"])
    assert "[1] you: I like \\x1b[2Jtea" in shown.output and "agent: par [interrupted]" in shown.output
    as_json = json.loads(runner.invoke(app, ["sessions", "show", "work", "--json"]).output)
    assert as_json["turns"][1]["status"] == "interrupted"
    assert json.loads(runner.invoke(app, ["sessions", "list", "--json"]).output)[0]["turns"] == 2
    assert runner.invoke(app, ["sessions", "rm", "work"]).output == "removed session work\n"
    missing = runner.invoke(app, ["sessions", "show", "work"])
    assert isinstance(missing.exception, SessionError) and "no session 'work'" in str(missing.exception)
