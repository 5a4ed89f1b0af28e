"""The Chroma server side of the shared deployment (issue 11 §2): a server stopped and continued mid-chat heals the
index as a restarted one does, a memory whose vector never reached the server is found by any chat open on the
ledger, and a reconcile beside another machine's write in flight does not alarm the user.

Real ``chroma run`` throughout (``tests.helpers_store.chroma_server``), and real PostgreSQL where two machines share
the ledger. A stopped server is always continued in a ``finally``. Every wait is for a state (a search that finds
the memory) with a timeout only a hang reaches.
"""

from __future__ import annotations

import signal
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from agent.adapters import chroma_index
from agent.adapters.chroma_index import ChromaIndex, open_client
from agent.adapters.index_holder import HeldIndex
from agent.adapters.ledger import SqliteLedger
from agent.adapters.mirrored_index import IN_FLIGHT
from agent.domain import memory_id
from agent.errors import MemoryUnavailable
from agent.memory.service import MemoryService
from agent.spool import Spool
from tests.builders import record
from tests.cli_harness import invoke
from tests.e2e_helpers import env_for
from tests.fake_openai import FakeOpenAI, Reply
from tests.helpers_store import (
    ShaEmbedder,
    chroma_server,
    index_of,
    open_fake_memory,
    returns_within,
    stores_of,
    text_for,
    vectors_of,
)
from tests.outage import Switching
from tests.ports import refused_port
from tests.repl_harness import build_chat, run_lines

# One worker of a parallel run starts the module's Chroma server, not each (pyproject.toml: loadgroup).
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("chroma_heal")]

HEAL_WAIT = 120.0  # a bound only a server that never answers again reaches


def found_by_meaning(memory: MemoryService, text: str) -> bool:
    """Whether a search by ``text``'s vector answers its memory first (the index, not the keyword search)."""
    hits = vectors_of(memory).query(ShaEmbedder().embed([text])[0], 1)
    return bool(hits) and hits[0].id in {r.id for r in memory.list() if r.text == text}


def eventually(check: Callable[[], bool], what: str) -> None:
    """Wait for ``check`` to hold, asking again while memory is still unavailable; fail only after ``HEAL_WAIT``."""
    deadline = time.monotonic() + HEAL_WAIT
    while True:
        try:
            if check():
                return
        except MemoryUnavailable:
            pass
        assert time.monotonic() < deadline, f"never: {what}"
        time.sleep(0.1)


def test_a_server_stopped_and_continued_mid_chat_heals_and_indexes_what_was_said_meanwhile(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before, during = text_for("before", 0), text_for("during", 0)
    with chroma_server(tmp_path / "server") as running:
        monkeypatch.setenv("AGENT_CHROMA_URL", running.url)
        memory = open_fake_memory()
        memory.add(before)
        assert found_by_meaning(memory, before)
        # A short deadline only while the server is stopped: a loaded machine can make a running server miss it.
        monkeypatch.setattr(chroma_index, "SERVER_TIMEOUT", 1.0)
        running.process.send_signal(signal.SIGSTOP)
        try:
            with pytest.raises(MemoryUnavailable, match="no answer within 1 s"):
                returns_within(60, lambda: memory.search(before))
            # Written while the server is stopped: remembered (the ledger is the source of truth), not lost.
            returns_within(60, lambda: memory.add(during))
            returns_within(60, lambda: memory.add(before))  # said again: already remembered, no failure
            assert {r.text for r in memory.list()} == {before, during}
            assert stores_of(memory)[0].stored_vectors(memory.user, [r.id for r in memory.list() if r.text == during])
        finally:
            running.process.send_signal(signal.SIGCONT)
        monkeypatch.setattr(chroma_index, "SERVER_TIMEOUT", 60.0)
        # No restart, no new open: the same service finds both by meaning once the server runs again.
        eventually(lambda: found_by_meaning(memory, before) and found_by_meaning(memory, during),
                   "the continued server answers the open service")
        assert {r.text for r in memory.list()} == {before, during}


def on_machine(monkeypatch: pytest.MonkeyPatch, root: Path, database_url: str, chroma_url: str) -> MemoryService:
    """The memory of a machine of its own (a data directory) on the shared database and Chroma server."""
    monkeypatch.setenv("AGENT_DATA_DIR", str(root))
    monkeypatch.setenv("AGENT_DATABASE_URL", database_url)
    monkeypatch.setenv("AGENT_CHROMA_URL", chroma_url)
    return open_fake_memory()


def test_a_memory_whose_vector_never_reached_the_server_is_found_by_a_chat_open_on_another_machine(
    tmp_path: Path, pg_url: str, chroma_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    desk = on_machine(monkeypatch, tmp_path / "desk", pg_url, chroma_url)
    try:
        assert desk.search(text_for("early", 0)) == []  # open and searched: its index has read the server's ids
        laptop = on_machine(monkeypatch, tmp_path / "laptop", pg_url, chroma_url)
        try:
            late = text_for("late", 0)
            laptop.add(late)
            written = [r.id for r in laptop.list() if r.text == late]
            index_of(laptop).delete(written)  # the laptop's write stopped after the ledger: no vector on the server
            assert index_of(desk).vectors(written) == {}
            assert stores_of(laptop)[0].stored_vectors(laptop.user, written)
        finally:
            laptop.close()
        assert found_by_meaning(desk, late)  # the desk's next search, without a restart
        assert set(index_of(desk).vectors(written)) == set(written)
    finally:
        desk.close()


def test_a_reconcile_beside_another_machines_write_in_flight_says_nothing_and_an_old_gap_is_told(
    tmp_path: Path, chroma_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENT_CHROMA_URL", chroma_url)
    memory = open_fake_memory()
    fresh, old = text_for("fresh", 0), text_for("old", 0)
    memory.add(fresh)
    long_ago = time.time() - IN_FLIGHT - 3600
    memory.write([record(old, memory.user, kind="explicit", session="test", turn=0, at=long_ago)])
    ids = {r.text: r.id for r in memory.list()}
    index_of(memory).delete([ids[fresh]])  # in the ledger, not in the index yet: a write on its way
    memory.close()
    notices: list[str] = []
    reopened = open_fake_memory(notices.append)
    reopened.close()
    assert notices == []
    assert set(index_of(reopened).vectors([ids[fresh]])) == {ids[fresh]}  # restored all the same

    index_of(reopened).delete([ids[old]])  # written an hour ago and still not in the index: the index lost it
    again = open_fake_memory(notices.append)
    again.close()
    assert notices == ["The memory index lacked 1 of 2 memories; they were restored from the ledger."]
    assert set(index_of(again).vectors([ids[old]])) == {ids[old]}


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(fallback=Reply("Noted.")) as server:
        yield server


def test_the_commands_that_read_the_ledger_only_work_while_the_server_is_frozen_or_down(
    tmp_path: Path, fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    kept = text_for("kept", 0)
    with chroma_server(tmp_path / "server") as running:
        env = {**env_for(fake), "AGENT_DATA_DIR": str(tmp_path / "data"), "AGENT_CHROMA_URL": running.url}
        added = invoke("memories", "add", kept, env=env)
        assert added.returncode == 0, added.stderr
        monkeypatch.setattr(chroma_index, "SERVER_TIMEOUT", 3600.0)  # a call to the stopped server would hang
        running.process.send_signal(signal.SIGSTOP)
        try:
            for command in (("list",), ("profile",), ("export",)):
                done = returns_within(60, lambda command=command: invoke("memories", *command, env=env))
                assert done.returncode == 0 and done.stderr == "", (command, done.stderr)
                assert command == ("profile",) or kept in done.stdout
        finally:
            running.process.send_signal(signal.SIGCONT)
    with refused_port() as port:  # no server at all
        done = invoke("memories", "list", env={**env, "AGENT_CHROMA_URL": f"http://127.0.0.1:{port}"})
    assert done.returncode == 0 and kept in done.stdout, done.stderr


class ForgetDuringRead:
    """A ledger on which another machine's forget of ``victim`` lands right after this process read its vector:
    the forget deleted the vector from the server first, and now deletes the memory from the ledger."""

    def __init__(self, ledger: SqliteLedger, victim: str) -> None:
        self.ledger = ledger
        self.victim = victim

    def __getattr__(self, name: str) -> Any:
        return getattr(self.ledger, name)

    def stored_vectors(self, user: str, ids: Sequence[str]) -> dict[str, list[float]]:
        found = self.ledger.stored_vectors(user, ids)
        if self.victim in found:
            self.ledger.delete(user, [self.victim])
        return found


def test_a_catch_up_does_not_put_back_a_vector_another_machine_is_forgetting(tmp_path: Path, chroma_url: str) -> None:
    text = text_for("forgotten", 0)
    victim = memory_id("me", text)
    ledger = SqliteLedger(tmp_path / "ledger.sqlite3")
    now = time.time()
    ledger.put([record(text, "me", kind="explicit", session="test", turn=0, at=now)])
    ledger.put_vectors("me", [victim], ShaEmbedder().embed([text]))
    chroma = ChromaIndex(open_client(None, chroma_url), "me", chroma_url, namespace=ledger.store_id(), remote=True)
    try:
        HeldIndex(chroma, ForgetDuringRead(ledger, victim), "me").catch_up()  # type: ignore[arg-type]
        assert ledger.ids("me") == []
        assert chroma.ids() == set()
    finally:
        ledger.close()


def test_a_chat_whose_server_is_stopped_and_continued_remembers_meanwhile_and_recalls_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    said = "My cat is called Miso"
    with chroma_server(tmp_path / "server") as running:
        monkeypatch.setenv("AGENT_CHROMA_URL", running.url)
        memory = open_fake_memory()
        memory.add(text_for("earlier", 0))  # a store in use: the ledger knows its embedder without asking Chroma
        spool = Spool(tmp_path / "spool")

        def stop() -> None:  # after the first turn's recall, before its write
            monkeypatch.setattr(chroma_index, "SERVER_TIMEOUT", 1.0)
            running.process.send_signal(signal.SIGSTOP)

        def cont() -> None:  # after the second turn's recall, which the stopped server failed
            running.process.send_signal(signal.SIGCONT)
            monkeypatch.setattr(chroma_index, "SERVER_TIMEOUT", 60.0)
            eventually(lambda: memory.indexed() >= 0, "the continued server answers")

        chat = Switching({1: stop, 2: cont}, *["Noted."] * 3)
        try:
            done = run_lines(build_chat(tmp_path, chat, memory=lambda: memory, spool=spool),
                             said, "hello there", said)
        finally:
            running.process.send_signal(signal.SIGCONT)
    assert done.code == 0 and done.out == "Noted.\n" * 3, done.log
    assert f"remembered: {said}" in done.log, "true: the memory and its vector reached the ledger"
    assert "not remembered yet" not in done.log and not spool.has_waiting()
    assert "memory: recall failed" in done.log and "(memory answers again)" in done.log
    assert said in chat.requests[2][0].content, "the third turn recalls what was said while the server was stopped"
