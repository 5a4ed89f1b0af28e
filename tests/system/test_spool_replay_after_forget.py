"""A forget made on one machine is never undone by another machine's spool (issue 19 §1), whatever the order of
events: the words a chat kept in ``spool/`` while the database was down, forgotten on another machine once it is back,
are not written again by the next chat there, neither while the forget waits for that machine (it reaches the spool
before anything in it is replayed) nor once every machine it waited for has finished it and its record is gone (the
ledger keeps a keyed digest of the forgotten words). Words said again once the forget was known are the user's own,
and are remembered.

Two "machines" (two data directories, two HOMEs) on a database of a PostgreSQL cluster of the test's own, which it
stops and starts; the chats are real ``agent`` processes against the fake OpenAI server, the commands run in this
process (``tests.cli_harness``). What is asserted is read from the database and the spool's files."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent.app.memory_worker import FORGOTTEN_SINCE
from tests.fake_openai import FakeOpenAI, Reply
from tests.machines import ALONE, SISTER, Machine, agent, forget_on, listed, machine_id, machines, pending
from tests.pg_server import Cluster
from tests.piped_chat import PipedChat

pytestmark = pytest.mark.slow
pytest.importorskip("psycopg")

NOT_REMEMBERED = f"(turn 1, kept while memory was away) memory: {FORGOTTEN_SINCE}"


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(fallback=Reply("Noted.")) as server:
        yield server


def spooled(machine: Machine) -> list[str]:
    """The words waiting in the machine's spool, read from its files."""
    return [json.loads(path.read_text())["text"] for path in sorted((machine.root / "data" / "spool").glob("*.json"))]


def chat(machine: Machine, fake: FakeOpenAI, name: str, *lines: str) -> PipedChat:
    """A chat on ``machine`` told ``lines``, each answered (a script's turn waits for the last one's write), then
    ended."""
    piped = PipedChat(machine.env(fake, **ALONE), name)
    piped.say(*lines)
    piped.wait_replies(len(lines))
    assert piped.close() == 0, "\n".join(piped.err)
    return piped


def told_while_down(tmp_path: Path, cluster: Cluster, fake: FakeOpenAI, register: bool) -> tuple[str, Machine, Machine]:
    """``SISTER`` remembered on the desktop, then told on the laptop while the database is down (kept in its
    spool); the database back. ``register``: the laptop used the database before, so forgets wait for it."""
    url = cluster.new_database()
    laptop, desktop = machines(tmp_path, url, "")
    added = agent(desktop.env(fake, **ALONE), "memories", "add", SISTER)
    assert added.returncode == 0, added.stderr
    if register:
        assert agent(laptop.env(fake, **ALONE), "memories", "list").returncode == 0
    cluster.stop()
    chat(laptop, fake, "away", SISTER, "hello again")
    assert spooled(laptop) == [SISTER]
    cluster.start()
    return url, laptop, desktop


def test_a_forget_made_on_another_machine_reaches_the_spool_before_anything_in_it_is_replayed(
    tmp_path: Path, own_cluster: Cluster, fake: FakeOpenAI
) -> None:
    url, laptop, desktop = told_while_down(tmp_path, own_cluster, fake, register=True)
    forget_on(desktop, fake)
    assert [r.waiting for r in pending(url)] == [(machine_id(laptop),)], "the forget waits for the laptop"

    later = chat(laptop, fake, "next", "hello")  # its memory opens, and replays the spool, before this turn

    assert not any(SISTER in line for line in later.remembered()), "\n".join(later.err)
    assert spooled(laptop) == [], "the forget took the words out of the laptop's spool"
    assert listed(desktop.env(fake, **ALONE)) == [] and listed(laptop.env(fake, **ALONE)) == []
    assert pending(url) == [], "the laptop finished the forget at its turn, and the record went"
    assert "Traceback" not in "\n".join(later.err)


def test_a_forget_every_machine_finished_is_not_undone_and_words_said_again_once_it_was_known_are_kept(
    tmp_path: Path, own_cluster: Cluster, fake: FakeOpenAI
) -> None:
    """The laptop never reached the database before (its first chat started while it was down): the forget waits
    for the desktop alone, which finishes it at once, and its record (the forgotten texts) leaves the database
    before the laptop ever hears of it."""
    url, laptop, desktop = told_while_down(tmp_path, own_cluster, fake, register=False)
    forget_on(desktop, fake)
    assert pending(url) == [], "finished and dropped before the laptop came back"

    later = PipedChat(laptop.env(fake, **ALONE), "next")
    try:
        later.say("hello")
        later.wait_until(lambda: NOT_REMEMBERED in later.err)
        later.wait_replies(1)
        assert listed(desktop.env(fake, **ALONE)) == [], "the forget stands"
        assert spooled(laptop) == []
        # Told again, once this chat knows of the forget, while the database is down again: the user's own words.
        own_cluster.stop()
        later.say(SISTER)
        later.wait_until(lambda: any(line.startswith("memory: turn 2 is not remembered yet") for line in later.err))
        assert spooled(laptop) == [SISTER]
        own_cluster.start()
        later.say("where does Ada live?")
        later.wait_until(lambda: "(turn 2, kept while memory was away) remembered: " + SISTER in later.err)
        later.wait_replies(3)
    finally:
        assert later.close() == 0, "\n".join(later.err)
    assert listed(desktop.env(fake, **ALONE)) == [SISTER]
    assert spooled(laptop) == []
