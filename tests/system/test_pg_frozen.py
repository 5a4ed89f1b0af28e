"""A PostgreSQL server that is frozen, not gone (SIGSTOP: its kernel still accepts and acknowledges, nothing
answers): every exchange with it gives up after the ledger's timeout with one line, the chat goes on and keeps the
turns its gate kept in the spool, and memory heals once the server runs again (SIGCONT). Real servers, each test
with a cluster of its own (``tests.pg_server``); every process stopped is continued in a ``finally``."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from agent.adapters import postgres_ledger
from agent.adapters.ledger_vectors import LedgerVectors
from agent.adapters.postgres_ledger import PostgresLedger
from agent.errors import MemoryUnavailable
from agent.memory.service import MemoryService
from agent.spool import Spool
from tests.builders import USER, record
from tests.fakes import WordHashEmbedder
from tests.outage import Switching
from tests.pg_server import Cluster
from tests.repl_harness import build_chat, run_lines

pytestmark = pytest.mark.slow
pytest.importorskip("psycopg")

BOUND = 3.0  # the ledger's timeout in these tests: far above any statement here, short enough to wait for


def server_processes(cluster: Cluster) -> list[int]:
    """The postmaster of ``cluster`` and every process it started (the backends serving the connections)."""
    postmaster = int((cluster.data / "postmaster.pid").read_text().split()[0])
    children = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:  # a process that ended meanwhile
                continue
            if int(fields[1]) == postmaster:
                children.append(int(entry.name))
    return [postmaster, *children]


@contextmanager
def frozen(cluster: Cluster) -> Iterator[None]:
    """The whole server stopped for the length of the block, continued afterwards whatever happens."""
    stopped: list[int] = []
    try:
        postmaster, *children = server_processes(cluster)
        os.kill(postmaster, signal.SIGSTOP)  # first: a stopped postmaster starts no new backend
        stopped.append(postmaster)
        for pid in children:
            try:
                os.kill(pid, signal.SIGSTOP)
            except ProcessLookupError:  # a backend that ended since it was listed (a closed connection's)
                continue
            stopped.append(pid)
        yield
    finally:
        for pid in stopped:
            try:
                os.kill(pid, signal.SIGCONT)
            except ProcessLookupError:
                pass


def eventually(call: object, seconds: float = 120.0) -> None:
    """Call ``call`` until it stops raising ``MemoryUnavailable``; fails only if it never does."""
    assert callable(call)
    deadline = time.monotonic() + seconds
    while True:
        try:
            call()
            return
        except MemoryUnavailable:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def test_a_frozen_server_is_given_up_on_in_one_line_and_memory_heals_once_it_runs_again(
    own_cluster: Cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(postgres_ledger, "REST", 1)  # rested for one timeout after it gave up, then tried again
    url = own_cluster.new_database()
    setup = PostgresLedger(url)
    setup.put([record("before the freeze")])
    setup.close()
    ledger = PostgresLedger(url, timeout=BOUND)
    assert [r.text for r in ledger.all(USER)] == ["before the freeze"]
    with frozen(own_cluster):
        with pytest.raises(MemoryUnavailable) as read:
            ledger.all(USER)  # on the open connection: the statement is sent, and no reply ever comes
        line = str(read.value)
        assert "\n" not in line and f"did not answer within {BOUND:g} s while memory was read" in line
        assert "tries it again" in line
        with pytest.raises(MemoryUnavailable) as write:
            ledger.put([record("during the freeze")])  # given up on: the same line, and nothing written
        assert "did not answer within" in str(write.value)
    eventually(lambda: ledger.put([record("after the freeze")]))
    assert sorted(r.text for r in ledger.all(USER)) == ["after the freeze", "before the freeze"]
    ledger.close()


def test_a_connection_to_a_frozen_server_gives_up_too(own_cluster: Cluster, monkeypatch: pytest.MonkeyPatch) -> None:
    url = own_cluster.new_database()
    ledger = PostgresLedger(url, timeout=BOUND)
    ledger.put([record("kept")])
    ledger.close()  # the next call connects anew, to a server that accepts and never answers
    monkeypatch.setattr(postgres_ledger, "REST", 0)
    with frozen(own_cluster):
        with pytest.raises(MemoryUnavailable) as connect:
            ledger.count(USER)
        assert f"did not answer within {BOUND:g} s" in str(connect.value) and "\n" not in str(connect.value)
    eventually(lambda: ledger.count(USER))
    assert [r.text for r in ledger.all(USER)] == ["kept"]
    ledger.close()


def test_a_chat_whose_server_freezes_answers_every_turn_and_remembers_the_kept_ones_once_it_runs(
    own_cluster: Cluster, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(postgres_ledger, "REST", 0)  # try the server at every call: the turns decide when it is back
    ledger = PostgresLedger(own_cluster.new_database(), timeout=BOUND)
    memory = MemoryService(ledger, LedgerVectors(ledger, "me"), WordHashEmbedder(), "me")
    spool = Spool(tmp_path / "spool")
    stopped: list[int] = []

    def freeze() -> None:  # after turn 2's recall, before its write
        for pid in server_processes(own_cluster):
            os.kill(pid, signal.SIGSTOP)
            stopped.append(pid)

    def thaw() -> None:  # after turn 3's recall, before its write
        for pid in stopped:
            os.kill(pid, signal.SIGCONT)
        stopped.clear()

    chat = Switching({2: freeze, 3: thaw}, *["Noted."] * 4)
    try:
        done = run_lines(build_chat(tmp_path, chat, memory=lambda: memory, spool=spool),
                         "My sister is called Ada", "I live in Boston", "My dog is called Rex", "where do I live?")
    finally:
        thaw()
    log = done.log
    assert done.code == 0 and done.out == "Noted.\n" * 4, "every turn is answered"
    assert f"memory: turn 2 is not remembered yet (The memory database {ledger.where} did not answer within " \
           f"{BOUND:g} s while memory was read" in log
    assert log.count("memory: recall failed (The memory database") == 1, log  # turn 3's, while frozen
    assert "(turn 2, kept while memory was away) remembered: I live in Boston" in log
    assert log.index("remembered: I live in Boston") < log.index("remembered: My dog is called Rex")
    assert not spool.has_waiting()
    assert "Boston" in chat.requests[-1][0].content, "and the next turn recalls it"
    assert {"My sister is called Ada", "I live in Boston", "My dog is called Rex"} <= {r.text for r in ledger.all("me")}
    ledger.close()
