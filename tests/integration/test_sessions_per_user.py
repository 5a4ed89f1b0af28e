"""Sessions belong to a user as memories do (issue 9, 9).

Before, every user's sessions were files in one directory: Bob could list, show and resume Alice's sessions, his
requests then carried her turns, and his forget rewrote her session files while her memory stayed. Each user now
has their own sessions directory (the default user keeps ``sessions/``, so nothing written before is lost or hidden)
and input history, and each session file names its user.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent.app.data_dir import DataPaths, user_directory
from agent.errors import SessionError
from agent.sessions import Session, SessionStore
from tests.cli_harness import invoke
from tests.e2e_helpers import agent_env
from tests.fake_openai import FakeOpenAI, Reply

pytestmark = pytest.mark.usefixtures("model_cache")

SISTER = "My sister Clara lives in Porto and teaches the cello"


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(fallback=Reply("Noted.")) as server:
        yield server


@pytest.mark.slow
def test_alice_and_bob_on_one_data_dir_never_see_or_touch_each_others_sessions(
    fake: FakeOpenAI, tmp_path: Path
) -> None:
    env = agent_env(fake)
    data = tmp_path / "data"
    before = invoke("--lines", "-s", "old", stdin="A line from before users had sessions of their own\n", env=env)
    assert before.returncode == 0, before.stderr
    alice = invoke("--lines", "--user", "alice", "-s", "work", stdin=f"{SISTER}\n", env=env)
    assert alice.returncode == 0 and "remembered" in alice.stderr, alice.stderr
    alice_file = data / "users" / "alice" / "sessions" / "work.json"
    alice_bytes = alice_file.read_bytes()

    listed = invoke("--user", "bob", "sessions", "list", env=env)
    assert listed.returncode == 0 and "No sessions yet" in listed.stdout
    for command in (["sessions", "show", "work"], ["sessions", "rm", "work"]):
        refused = invoke("--user", "bob", *command, env=env)
        assert refused.returncode == 1 and "There is no session 'work'" in refused.stderr
    assert invoke("sessions", "--user", "bob", "show", "work", env=env).returncode == 1  # the flag after the group too

    resumed = invoke("--lines", "--user", "bob", "-c", stdin="What do you know about my family?\n", env=env)
    assert resumed.returncode == 0, resumed.stderr
    assert "No session to continue" in resumed.stderr
    assert fake.user_messages() == ["What do you know about my family?"]  # none of Alice's turns
    named = invoke("--lines", "--user", "bob", "-s", "work", stdin=f"{SISTER}\n", env=env)
    assert named.returncode == 0 and "(new)" not in named.stdout
    assert fake.user_messages() == [SISTER]  # Bob's own session "work", not Alice's

    bob_ids = [m["id"] for m in json.loads(invoke("--user", "bob", "memories", "list", "--json", env=env).stdout)
               if m["text"] == SISTER]
    assert len(bob_ids) == 1
    forgot = invoke("--user", "bob", "memories", "forget", bob_ids[0], env=env)
    assert forgot.returncode == 0 and "session work" in forgot.stdout, forgot.stdout
    assert alice_file.read_bytes() == alice_bytes  # Bob's forget left Alice's session as it was
    assert SISTER not in (data / "users" / "bob" / "sessions" / "work.json").read_text()
    alice_memories = json.loads(invoke("--user", "alice", "memories", "list", "--json", env=env).stdout)
    assert [m["text"] for m in alice_memories] == [SISTER]

    alice_list = invoke("--user", "alice", "sessions", "list", "--json", env=env)
    assert [s["name"] for s in json.loads(alice_list.stdout)] == ["work"]
    default_list = json.loads(invoke("sessions", "list", "--json", env=env).stdout)
    assert [s["name"] for s in default_list] == ["old"]  # the file from before is still the default user's
    assert (data / "sessions" / "old.json").is_file()


def test_each_user_has_their_own_directory_and_the_default_user_keeps_the_old_one(tmp_path: Path) -> None:
    paths = DataPaths(tmp_path)
    assert paths.sessions == tmp_path / "sessions" and paths.history == tmp_path / "history"
    bob = paths.for_user("bob")
    assert bob.sessions == tmp_path / "users" / "bob" / "sessions"
    assert bob.history == tmp_path / "users" / "bob" / "history"
    assert bob.ledger == paths.ledger  # one store, its records keyed by user
    odd = {user_directory(user) for user in ("Bob", "bob ", "../alice", "a/b", "café", "BOB")}
    assert len(odd) == 6 and all(name.startswith("=") and "/" not in name for name in odd)


def test_a_session_file_that_names_another_user_is_refused_and_left(tmp_path: Path) -> None:
    alice = SessionStore(tmp_path / "alice", "alice")
    alice.save(Session("work", 1.0, 1.0))
    assert json.loads((tmp_path / "alice" / "work.json").read_text())["user"] == "alice"
    (tmp_path / "bob").mkdir()
    copied = (tmp_path / "bob" / "work.json")
    copied.write_bytes((tmp_path / "alice" / "work.json").read_bytes())
    with pytest.raises(SessionError, match="belongs to another user"):
        SessionStore(tmp_path / "bob", "bob").load("work")
    assert copied.read_bytes() == (tmp_path / "alice" / "work.json").read_bytes()


def test_a_session_file_without_a_user_belongs_to_its_directory(tmp_path: Path) -> None:
    store = SessionStore(tmp_path, "default")
    store.save(Session("old", 1.0, 1.0))
    raw = json.loads((tmp_path / "old.json").read_text())
    del raw["user"]  # as written before sessions named their user
    (tmp_path / "old.json").write_text(json.dumps(raw))
    assert store.load("old").name == "old"
