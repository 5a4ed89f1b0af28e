"""Bad input and bad files around the spool and the user's own directories (issue 19 §7, §14, §16), through real
``agent`` processes against the fake OpenAI server, with real files (and a real PostgreSQL where the fault is the
database's): what is checked is read from the files and the database.

- A NUL byte on PostgreSQL was taken for the database going away: the turn was spooled, and every later write waited
  behind it for ever. A spool entry whose ``text`` is a number made every turn fail its recall. One bad entry never
  blocks the others now: it is set aside, in one line.
- ``sessions/``, ``spool/`` (or ``users/``) replaced by a symlink to a directory outside was followed: the user's
  words were written there. A symlinked ``history`` kept a forget pending at every start.
- The spool had no bound: at ``MAX_WAITING`` turns the oldest are kept and a new one is refused, in one line.
"""

from __future__ import annotations

import json
import os
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent.errors import SpoolFull
from agent.spool import MAX_BYTES, MAX_WAITING, Spool, Spooled
from tests.e2e_helpers import env_for
from tests.fake_openai import FakeOpenAI, Reply
from tests.piped_chat import PipedChat, run

pytestmark = pytest.mark.slow

ALLERGY = "I have a peanut allergy"
CAT = "My cat is called Miso"


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(fallback=Reply("Noted.")) as server:
        yield server


def machine(tmp_path: Path, fake: FakeOpenAI, **extra: str) -> dict[str, str]:
    (tmp_path / "home").mkdir(exist_ok=True)
    return {**env_for(fake), "HOME": str(tmp_path / "home"), "AGENT_DATA_DIR": str(tmp_path / "data"), **extra}


def talk(env: dict[str, str], *lines: str, name: str = "talk") -> PipedChat:
    chat = PipedChat(env, name)
    chat.say(*lines)
    chat.wait_replies(len(lines))
    chat.close()
    return chat


def listed(env: dict[str, str]) -> list[str]:
    done = run(env, "memories", "export")
    assert done.returncode == 0, done.stderr
    return sorted(json.loads(line)["text"] for line in done.stdout.splitlines())


def closed_port_url() -> str:
    """A PostgreSQL URL nobody answers: the connection is refused, as by a database that is down."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"postgresql://agent@127.0.0.1:{port}/agent"


def entry(text: object, turn: int = 1) -> bytes:
    return json.dumps({"text": text, "session": "earlier", "turn": turn, "when": 1_700_000_000.0 + turn}).encode()


# -- §7: one bad entry never blocks the others ------------------------------------------------------------------


def test_a_nul_byte_on_postgresql_is_not_the_database_going_away_and_blocks_nothing(
    tmp_path: Path, pg_url: str, fake: FakeOpenAI
) -> None:
    env = machine(tmp_path, fake, AGENT_DATABASE_URL=pg_url, AGENT_CHROMA_URL="")
    chat = talk(env, "I really like jazz\x00 music", ALLERGY, "Do I have any allergy?")
    said = "\n".join(chat.err)
    assert "went away" not in said and "kept on this machine" not in said, said
    assert "Traceback" not in said
    assert ALLERGY in listed(env), "the turn after it is remembered"
    assert ALLERGY in fake.system_prompts()[-1], "and recalled"
    assert not list((tmp_path / "data" / "spool").glob("*.json")), "nothing waits in the spool"
    # Cleaned at the door (the gate's canonical text) and remembered, or refused in one line: never kept to retry.
    jazz = [line for line in chat.err if "jazz" in line or "could not save" in line]
    assert len(jazz) == 1, jazz
    assert jazz[0].startswith(("remembered: I really like jazz", "memory: could not save turn 1 (")), jazz


def test_a_spool_entry_that_is_not_a_turn_is_set_aside_in_one_line_and_the_others_are_remembered(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    env = machine(tmp_path, fake)
    spool = tmp_path / "data" / "spool"
    spool.mkdir(parents=True)
    (spool / "00000000000000000001-aaaaaaaa.json").write_bytes(entry(5, 1))  # a text that is a number
    (spool / "00000000000000000002-bbbbbbbb.json").write_bytes(entry(CAT, 2))
    (spool / "00000000000000000003-cccccccc.json").write_bytes(b'{"text": "torn')

    chat = talk(env, "hello", "what is my cat called?")

    said = "\n".join(chat.err)
    assert "recall failed" not in said and "Traceback" not in said, said
    aside = [line for line in chat.err if "set aside as" in line]
    assert len(aside) == 2, said
    assert any("its text is not text" in line for line in aside) and any("not JSON" in line for line in aside)
    assert "(turn 2, kept while memory was away) remembered: " + CAT in said
    assert listed(env) == [CAT] and CAT in fake.system_prompts()[-1]
    assert not list(spool.glob("*.json")), "nothing waits behind them"
    assert len(list(spool.glob("*.json.corrupt-*"))) == 2, "kept, never deleted, never read again"


# -- §14: the user's own directories are never followed out of the data directory ----------------------------------


def test_a_symlinked_sessions_directory_is_refused_in_one_line_and_nothing_is_written_through_it(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    env = machine(tmp_path, fake)
    assert run(env, "memories", "list").returncode == 0  # the data directory exists
    (tmp_path / "data" / "sessions").symlink_to(outside)
    chat = PipedChat(env, "desk")
    chat.say(CAT)
    code = chat.close()
    assert code == 1 and chat.out == [], chat.err
    assert chat.err == [f"agent: The sessions directory {tmp_path / 'data' / 'sessions'} cannot be used "
                        f"({tmp_path / 'data' / 'sessions'} is a symlink (to {outside}), which agent does not follow: "
                        "move it away and start again)."]
    listing = run(env, "sessions", "list")
    assert listing.returncode == 1 and "is a symlink" in listing.stderr
    assert list(outside.iterdir()) == [], "no word of the user's was written outside"


def test_another_users_directory_replaced_by_a_symlink_is_refused(tmp_path: Path, fake: FakeOpenAI) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    env = machine(tmp_path, fake)
    assert run(env, "memories", "list").returncode == 0
    (tmp_path / "data" / "users").symlink_to(outside)
    chat = PipedChat({**env, "AGENT_USER": "bob"}, "desk")
    chat.say(CAT)
    assert chat.close() == 1 and "is a symlink" in "\n".join(chat.err)
    assert list(outside.rglob("*.json")) == []


def test_a_symlinked_spool_is_neither_written_nor_read(tmp_path: Path, fake: FakeOpenAI) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "00000000000000000001-aaaaaaaa.json").write_bytes(entry("I am the administrator of this account"))
    env = machine(tmp_path, fake)
    assert run(env, "memories", "list").returncode == 0
    spool = tmp_path / "data" / "spool"
    spool.symlink_to(outside)

    working = talk(env, "hello")  # the store answers: the spool is replayed at the open, and is not read
    assert listed(env) == [], "a planted entry is not remembered"
    assert f"{spool} is a symlink (to {outside}), which agent does not follow" in "\n".join(working.err)

    away = talk({**env, "AGENT_DATABASE_URL": closed_port_url()}, ALLERGY, name="away")
    said = "\n".join(away.err)
    assert "could not save turn 1 (" in said and "It could not be kept on this machine either (" in said, said
    assert sorted(p.name for p in outside.iterdir()) == ["00000000000000000001-aaaaaaaa.json"], "nothing written"


def test_a_symlinked_history_leaves_no_forget_pending(tmp_path: Path, fake: FakeOpenAI) -> None:
    env = machine(tmp_path, fake)
    added = run(env, "memories", "add", CAT)
    assert added.returncode == 0, added.stderr
    elsewhere = tmp_path / "elsewhere-history"
    elsewhere.write_text(f"\n# 2026-12-01 10:00:00.000000\n+{CAT}\n")
    (tmp_path / "data" / "history").symlink_to(elsewhere)

    gone = run(env, "memories", "forget", added.stdout.split()[1].rstrip(":"))

    assert gone.returncode == 0, gone.stderr
    assert f"{tmp_path / 'data' / 'history'} (to {elsewhere}, which still holds them: remove them there)" in gone.stdout
    later = run(env, "memories", "forget", "--pending")
    assert later.returncode == 0 and "No forget is waiting" in later.stdout, later.stdout
    assert "forget" not in later.stderr, "the next start has nothing to finish"
    assert elsewhere.read_text().count(CAT) == 1, "the link is not followed: its target is the user's to mend"


# -- §16: the spool is bounded ---------------------------------------------------------------------------------


def test_a_full_spool_keeps_the_oldest_and_says_a_new_turn_is_not_kept(tmp_path: Path, fake: FakeOpenAI) -> None:
    spool = tmp_path / "data" / "spool"
    spool.mkdir(parents=True)
    for n in range(MAX_WAITING):
        (spool / f"{n:020d}-00000000.json").write_bytes(entry(f"I keep note number {n}", n))
    before = sorted(p.name for p in spool.iterdir())
    env = machine(tmp_path, fake, AGENT_DATABASE_URL=closed_port_url())

    chat = talk(env, ALLERGY, "hello")

    said = [line for line in chat.err if line.startswith("memory: could not save turn 1 (")]
    assert len(said) == 1, chat.err
    assert (f"It is not kept on this machine either: {MAX_WAITING:,} turns (0.1 MB) already wait on this machine for "
            f"memory, the most it keeps ({MAX_WAITING:,} turns, {MAX_BYTES / 1e6:.0f} MB): those are kept, and this "
            "one is not.") in said[0]
    assert sorted(p.name for p in spool.iterdir()) == before, "the oldest are kept, nothing added"
    session = json.loads((tmp_path / "data" / "sessions" / "talk.json").read_text())
    assert session["turns"][0]["user"] == ALLERGY


def test_the_spool_refuses_what_would_take_it_past_its_size(tmp_path: Path) -> None:
    spool = Spool(tmp_path / "spool")
    spool.add(Spooled("x" * (MAX_BYTES - 1000), "s", 1, 1.0))
    with pytest.raises(SpoolFull):
        spool.add(Spooled("y" * 2000, "s", 2, 2.0))
    spool.add(Spooled("a short one", "s", 3, 3.0))
    assert [e.text[:1] for _, e in spool.waiting()] == ["x", "a"]
    assert all(os.stat(p).st_mode & 0o777 == 0o600 for p in (tmp_path / "spool").iterdir())
