"""Forget on one machine is gone for both (issue 11 §2): what was typed on machine B, in B's session file and input
history, leaves B's files after a forget made on machine A, at B's next start or, with a chat open there, at its
next turn; and once every machine has done so, the record (the forgotten texts) leaves the server too. And a
session another client leaves in a transaction delays a forget's rewrite of the tables briefly, never for long.

Two "machines" (two data directories, two HOMEs) on a fresh database of a real PostgreSQL cluster, each with its own
embedded index (no Chroma server: the forget under test is the ledger's). B's chats are real ``agent`` processes
against the fake OpenAI server; the commands run in this process (``tests.cli_harness``). What is asserted is read
from the files themselves, raw bytes, and from the database's files after a CHECKPOINT.
"""

from __future__ import annotations

import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent.adapters.postgres_ledger import PostgresLedger
from tests.builders import USER
from tests.fake_openai import FakeOpenAI, Reply
from tests.machines import ALONE, SISTER, Machine, agent, forget_on, machine_id, machines, pending
from tests.pg_server import Cluster, database_files, holding
from tests.piped_chat import PipedChat

pytestmark = pytest.mark.slow
psycopg = pytest.importorskip("psycopg")

WORDS = b"Ada lives in Porto"  # what must leave every file


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(fallback=Reply("Noted.")) as server:
        yield server


def remembered_on(machine: Machine, fake: FakeOpenAI) -> PipedChat:
    """A chat on ``machine`` that was told ``SISTER`` and remembered it, still open; and the line in the machine's
    input history, as prompt-toolkit writes a typed line there (a piped chat keeps no history of its own)."""
    chat = PipedChat(machine.env(fake, **ALONE), "desk")
    chat.say(SISTER)
    chat.wait_until(lambda: SISTER in chat.remembered())
    (machine.root / "data" / "history").write_text(f"\n# 2026-12-01 10:00:00.000000\n+{SISTER}\n")
    return chat


def holders(machine: Machine) -> list[str]:
    """The files of the machine's data directory whose raw bytes hold the words. A chat still running saves its
    session through a temp file renamed over it: a file gone between the listing and its read means the listing
    is stale, so the directory is read again (until one whole pass finds every file it listed)."""
    data = machine.root / "data"
    while True:
        found, vanished = [], False
        for path in data.rglob("*"):
            try:
                if path.is_file() and WORDS in path.read_bytes():
                    found.append(str(path.relative_to(data)))
            except FileNotFoundError:
                vanished = True
        if not vanished:
            return sorted(found)


def test_a_scan_of_the_database_files_reads_past_a_file_the_server_removed_or_moved(tmp_path: Path) -> None:
    """The server does not stop for the scan: between the listing and the reads a checkpoint unlinked a relation's
    old file (the flaky "retired" test below read one that had vanished), and a backend renamed its catalog cache
    into place. Neither fails the scan, and the moved file's bytes are still read."""
    listed = [tmp_path / name for name in ("16384", "16390_fsm", "pg_internal.init.4242")]
    for path in listed:
        path.write_bytes(b"\0" * 64 + (WORDS if path.name.startswith("pg_internal") else b""))
    listed[1].unlink()
    listed[2].rename(tmp_path / "pg_internal.init")
    assert holding(listed, WORDS) == ["pg_internal.init"]
    assert holding(listed, b"nowhere") == []


def assert_gone_from_the_server(cluster: Cluster, url: str) -> None:
    assert pending(url) == [], "the last acknowledgement dropped the record"
    assert holding(database_files(cluster, url), WORDS) == [], "no table or index file of the database keeps it"


def forgotten_while_away(tmp_path: Path, cluster: Cluster, fake: FakeOpenAI) -> tuple[str, Machine, Machine]:
    """A database and two machines: ``SISTER`` told on the desktop, whose chat then ended, and forgotten on the
    laptop while the desktop is not running."""
    url = cluster.new_database()
    laptop, desktop = machines(tmp_path, url, "")
    chat = remembered_on(desktop, fake)
    assert chat.close() == 0, "\n".join(chat.err)
    assert holders(desktop) == ["history", "sessions/desk.json"]
    forget_on(laptop, fake)
    return url, laptop, desktop


def test_a_forget_made_on_one_machine_leaves_the_others_files_at_its_next_start(
    tmp_path: Path, pg_cluster: Cluster, fake: FakeOpenAI
) -> None:
    url, laptop, desktop = forgotten_while_away(tmp_path, pg_cluster, fake)
    [record] = pending(url)
    assert record.waiting == (machine_id(desktop),), "the laptop finished its own files; the desktop has not"
    told = agent(laptop.env(fake, **ALONE), "memories", "forget", "--pending")
    assert told.returncode == 0 and f"waiting for {machine_id(desktop)[:12]} (" in told.stdout, told.stdout
    assert holders(desktop) == ["history", "sessions/desk.json"]
    started = agent(desktop.env(fake, **ALONE), "memories", "list")  # the desktop's next start
    assert started.returncode == 0, started.stderr
    assert "Finished a forget made on another machine or cut short here (1 memory)" in started.stderr
    assert holders(desktop) == [], "no file of the desktop's data directory holds the words"
    assert_gone_from_the_server(pg_cluster, url)


def test_a_chat_open_on_the_other_machine_scrubs_its_files_at_its_next_turn(
    tmp_path: Path, pg_cluster: Cluster, fake: FakeOpenAI
) -> None:
    url = pg_cluster.new_database()
    laptop, desktop = machines(tmp_path, url, "")
    desk = remembered_on(desktop, fake)
    try:
        forget_on(laptop, fake)
        assert [r.waiting for r in pending(url)] == [(machine_id(desktop),)]
        desk.say("hello again")
        desk.wait_replies(2)  # the turn began by finishing the forget on this machine
        assert holders(desktop) == [], "the open chat's session and the machine's history are scrubbed"
        assert_gone_from_the_server(pg_cluster, url)
        assert not any(b"Porto" in m["content"].encode() for m in fake.chat_requests[-1].body["messages"])
    finally:
        assert desk.close() == 0
    assert holders(desktop) == [], "and the chat, closing, saved nothing of them back"


def test_a_machine_that_will_not_come_back_is_retired_and_the_record_goes(
    tmp_path: Path, pg_cluster: Cluster, fake: FakeOpenAI
) -> None:
    url, laptop, desktop = forgotten_while_away(tmp_path, pg_cluster, fake)
    listed = agent(laptop.env(fake, **ALONE), "memories", "machines")
    assert listed.returncode == 0, listed.stderr
    assert f"{machine_id(desktop)[:12]} (" in listed.stdout and "1 forget waiting" in listed.stdout
    assert f"{machine_id(laptop)[:12]} (" in listed.stdout and "this machine" in listed.stdout
    retired = agent(laptop.env(fake, **ALONE), "memories", "machines", "--retire", machine_id(desktop)[:8])
    assert retired.returncode == 0 and retired.stdout.startswith("retired "), retired.stderr
    assert_gone_from_the_server(pg_cluster, url)
    refused = agent(laptop.env(fake, **ALONE), "memories", "machines", "--retire", machine_id(laptop))
    assert refused.returncode == 2 and "That is this machine" in refused.stderr


def ungranted_rewrite(url: str) -> bool:
    """Whether a VACUUM FULL is queued for its lock on a table of the database."""
    with psycopg.connect(url, autocommit=True) as conn:
        return bool(conn.execute(
            "SELECT 1 FROM pg_locks l JOIN pg_stat_activity a USING (pid) WHERE NOT l.granted "
            "AND l.mode = 'AccessExclusiveLock' AND a.query LIKE 'VACUUM FULL%%' AND a.datname = current_database()"
        ).fetchall())


def test_a_session_left_in_a_transaction_delays_a_forget_briefly_and_blocks_no_other_reader(
    tmp_path: Path, pg_cluster: Cluster, fake: FakeOpenAI
) -> None:
    """The session psql (or any client not in autocommit) leaves idle in a transaction after a read holds a lock on
    every memories table. A forget's rewrite queues behind it, and every statement on the table queues behind the
    rewrite: it waited a minute per table, and each other agent's read of those memories failed after its own lock
    wait meanwhile. Now the rewrite gives up first, the command says so in one line, and the next start finishes."""
    url = pg_cluster.new_database()
    laptop, _ = machines(tmp_path, url, "")
    env = laptop.env(fake, AGENT_CHROMA_URL="", AGENT_USER=USER)
    added = agent(env, "memories", "add", SISTER)
    assert added.returncode == 0, added.stderr
    reader = psycopg.connect(url)  # psycopg's default, as psql's: the read opens a transaction that stays open
    other = PostgresLedger(url)
    done: dict[str, subprocess.CompletedProcess[str]] = {}
    try:
        reader.execute("SELECT count(*) FROM memories").fetchall()
        forgetting = threading.Thread(target=lambda: done.update(gone=agent(
            env, "memories", "forget", added.stdout.split()[1].rstrip(":"))))
        forgetting.start()
        deadline = time.monotonic() + 120
        while forgetting.is_alive() and not ungranted_rewrite(url):
            if time.monotonic() > deadline:
                pytest.fail("the forget never came to its rewrite")
            forgetting.join(0.05)
        read = [r.text for r in other.all(USER)]  # queued behind the rewrite, if it still waits
        forgetting.join(timeout=120)
        if forgetting.is_alive():
            pytest.fail("the forget still waits for the session's transaction")
    finally:
        reader.close()
        other.close()
    assert read == [], "another agent's read went through"
    gone = done["gone"]
    assert gone.returncode == 0 and "forgot 1 memory" in gone.stdout, gone.stderr
    assert "another session kept a transaction open on them for over 2 s" in gone.stdout
    started = agent(env, "memories", "list")  # the next start
    assert started.returncode == 0 and "Finished a forget" in started.stderr, started.stderr
    assert pending(url) == [] and holding(database_files(pg_cluster, url), WORDS) == []
