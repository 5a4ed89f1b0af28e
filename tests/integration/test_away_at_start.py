"""A chat that starts while its memory store's server does not answer (issue 11 §2: the shared database stopped,
refusing, frozen): memory is *away*, not off. One line says so; what the gate keeps, and ``/remember``, wait on this
machine (``agent.spool``); the store is opened again in the background, never on a reply's way; once it answers,
one line says so, the waiting turns are remembered in order, and later turns recall them. A store that answers and
refuses (a configuration error) is still one line and memory off for the run. In-process, with an opener that fails
as an unreachable server does; the same through a real PostgreSQL server is in tests/system/test_pg_down_at_start.py."""

from __future__ import annotations

import io
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from agent.app import memory_worker as chat_module
from agent.app.memory_worker import ConnectWait
from agent.errors import AgentError, ConfigError, MemoryUnavailable, StoreAway
from agent.memory.service import MemoryService
from agent.spool import Spool
from agent.ui.prompt import PipeReader
from tests.chat_fakes import ScriptedChat
from tests.repl_harness import Chat, build_chat, memory_service, run_lines

AWAY = "The memory database db.example:5432/agent refused the connection: start PostgreSQL there."
ALLERGY = "I have a peanut allergy"
WAIT = 60.0  # only a store that never opens reaches it
BACK = "(memory answers again: what this chat kept on this machine is remembered now)"


@pytest.fixture(autouse=True)
def quick_reopen(monkeypatch: pytest.MonkeyPatch) -> None:
    """Attempts to open the store again follow each other quickly here: the tests wait for states, not pauses."""
    monkeypatch.setattr(chat_module, "REOPEN_FIRST", 0.01)
    monkeypatch.setattr(chat_module, "REOPEN_MAX", 0.05)


class Opener:
    """Opens the memory service on ``root``, or raises ``error`` while ``down`` is set, as ``open_memory`` does for
    a server that cannot be reached; ``attempts`` counts the calls."""

    def __init__(self, root: Path, error: AgentError | None = None) -> None:
        self.root = root
        self.error = error or StoreAway(AWAY)
        self.down = True
        self.attempts = 0
        self.opened: MemoryService | None = None

    def __call__(self) -> MemoryService:
        self.attempts += 1
        if self.down:
            raise self.error
        self.opened = memory_service(self.root)
        return self.opened

    def texts(self) -> set[str]:
        service = memory_service(self.root)
        try:
            return {record.text for record in service.list()}
        finally:
            service.close()


def wait_for(done: Callable[[], bool]) -> None:
    """Until ``done()`` holds; a store that never answers fails the test after ``WAIT`` seconds."""
    deadline = time.monotonic() + WAIT
    while not done():
        assert time.monotonic() < deadline, "the state was never reached"
        time.sleep(0.01)


class Paced(PipeReader):
    """The lines of a script, running ``before[n]`` before the n-th is read (from 1): between turns, with nothing of
    the chat holding the terminal."""

    def __init__(self, chat: Chat, lines: Sequence[str], before: dict[int, Callable[[], None]]) -> None:
        super().__init__(chat.repl.out.notice, io.StringIO("".join(f"{line}\n" for line in lines)))
        self._before = before
        self._read = 0

    def read(self) -> str:
        self._read += 1
        self._before.get(self._read, lambda: None)()
        return super().read()


def run_paced(chat: Chat, lines: Sequence[str], before: dict[int, Callable[[], None]]) -> Chat:
    chat.repl.use(Paced(chat, lines, before))
    chat.code = chat.repl.run()
    return chat


def back(chat: Chat, opener: Opener) -> Callable[[], None]:
    """The server returns: then wait until the chat said that memory answers again."""

    def act() -> None:
        opener.down = False
        wait_for(lambda: BACK in chat.log)

    return act


def test_a_store_away_at_start_keeps_the_turns_and_remembers_them_once_it_answers(tmp_path: Path) -> None:
    opener = Opener(tmp_path / "mem")
    spool = Spool(tmp_path / "spool")
    model = ScriptedChat(*["Noted."] * 4)
    chat = build_chat(tmp_path, model, memory=opener, spool=spool)
    returns = back(chat, opener)

    def server_returns() -> None:
        assert [entry.text for _, entry in spool.waiting()] == [ALLERGY, "My cat is called Miso"], "kept meanwhile"
        returns()

    done = run_paced(chat, [ALLERGY, "My cat is called Miso", "hello again", "Do I have any allergy?"],
                     {4: server_returns})
    log = done.log
    assert done.code == 0 and done.out == "Noted.\n" * 4, "every turn is answered"
    assert log.count("Long-term memory is away") == 1, log
    assert f"Long-term memory is away: {AWAY} What this chat would remember is kept on this machine until memory " \
           "answers, and remembered then." in log
    assert "Chatting without it" not in log and "recall failed" not in log
    assert log.count(BACK) == 1
    assert "(turn 1, kept while memory was away) remembered: I have a peanut allergy" in log
    assert "(turn 2, kept while memory was away) remembered: My cat is called Miso" in log
    assert log.index(BACK) < log.index("kept while memory was away) remembered: I have")
    assert not any(line.startswith("remembered: I have") for line in log.splitlines()), "never claimed early"
    assert opener.texts() == {ALLERGY, "My cat is called Miso"}
    assert not spool.has_waiting(), "the spool is empty once its turns are remembered"
    assert ALLERGY in model.requests[3][0].content, "a later turn recalls what was kept while memory was away"
    assert ALLERGY not in model.requests[0][0].content


def test_remember_while_the_store_is_away_is_kept_and_remembered_as_given(tmp_path: Path) -> None:
    opener = Opener(tmp_path / "mem")
    spool = Spool(tmp_path / "spool")
    chat = build_chat(tmp_path, ScriptedChat("Noted."), memory=opener, spool=spool)
    done = run_paced(chat, ["/remember my locker number is 4417 at the gym", "/remember my api key is sk-abc123def456",
                            "hello"], {3: back(chat, opener)})
    log = done.log
    assert f"Not remembered yet ({AWAY}): it is kept on this machine and remembered when memory answers again." in log
    assert log.count("Not remembered yet") == 1, "a secret is refused now, not kept for later"
    assert "Not remembered: " in log
    assert "(turn 0, kept while memory was away) remembered: my locker number is 4417 at the gym" in log
    stored = memory_service(tmp_path / "mem")
    try:
        [record] = stored.list()
    finally:
        stored.close()
    assert (record.text, record.kind) == ("my locker number is 4417 at the gym", "explicit")
    assert not spool.has_waiting()


@pytest.mark.parametrize("thawed", ["opens", "times-out"])
def test_a_frozen_server_at_start_holds_up_no_reply_and_no_write(tmp_path: Path, thawed: str) -> None:
    """The open at start hangs (a server that accepts and never answers) until the test lets it go on, and then
    succeed or time out: the first reply is sent, and its turn is in the spool, while the open still hangs; the
    store, opened by that open or a later one, heals. (A script waits for each turn's write before its next line:
    a write that queued behind the hung open would have held up the second reply.)"""
    thaw, hanging = threading.Event(), threading.Event()
    opener = Opener(tmp_path / "mem", StoreAway("The memory database db.example:5432/agent did not answer in 10 s."))
    first = opener.__call__
    wait = ConnectWait(0.0)  # no wait for a connection: the turn need not race the hung one

    def frozen() -> MemoryService:
        if opener.attempts == 0:
            with wait.connecting():
                hanging.set()
                thaw.wait(WAIT)
        return first()

    spool = Spool(tmp_path / "spool")
    seen: list[tuple[bool, list[str]]] = []

    def while_frozen() -> None:  # the first turn is over (answered, its write done), the open still hung
        seen.append((hanging.is_set() and not thaw.is_set(), [entry.text for _, entry in spool.waiting()]))
        opener.down = thawed == "times-out"
        thaw.set()

    model = ScriptedChat(*["Noted."] * 3)
    chat = build_chat(tmp_path, model, memory=frozen, spool=spool, open_wait=wait)
    done = run_paced(chat, [ALLERGY, "hello again", "Do I have any allergy?"],
                     {2: while_frozen, 3: back(chat, opener)})
    log = done.log
    assert seen == [(True, [ALLERGY])]
    assert done.code == 0 and done.out == "Noted.\n" * 3
    assert log.count("(Long-term memory has not finished opening: its server is slow to answer. This reply goes "
                     "without it.)") == 1, log
    # A store still opening is slow, not known away: the turn is said when it lands, like any late write.
    assert "memory: turn 1" not in log and "remembered: I have a peanut allergy" in log.splitlines()
    assert log.count(BACK) == 1 and log.index(BACK) < log.index("remembered: I have")
    assert opener.texts() == {ALLERGY} and not spool.has_waiting()
    assert ALLERGY in model.requests[2][0].content, log


@pytest.mark.parametrize("error", [
    MemoryUnavailable("The memory database db.example:5432/agent was written by a newer version of agent (schema 9, "
                      "this one reads 2): upgrade agent to use it."),
    ConfigError("Unknown embedder 'word2vec': use local or openai."),
], ids=["newer-schema", "unknown-embedder"])
def test_a_store_that_answers_and_refuses_is_one_line_and_memory_off(tmp_path: Path, error: AgentError) -> None:
    opener = Opener(tmp_path / "mem", error)
    spool = Spool(tmp_path / "spool")
    done = run_lines(build_chat(tmp_path, ScriptedChat("Noted.", "Noted."), memory=opener, spool=spool),
                     ALLERGY, "hello")
    log = done.log
    assert log.count(f"Long-term memory is unavailable: {error} Chatting without it in this run.") == 1, log
    assert "away" not in log and "kept on this machine" not in log
    assert not spool.has_waiting() and opener.attempts == 1, "nothing kept, nothing tried again"
