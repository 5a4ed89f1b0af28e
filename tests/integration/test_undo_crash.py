"""``/undo`` cut short at any step leaves no fact the user still holds lost, and the next start with another
``/undo`` gives back the store exactly as it was before the turn, with no byte of the words taken back left. The
process dies at its n-th ledger write, for every n the undo makes: the ledger stops answering there (every write
before it is durable, as the ledger's transactions are), then a new chat on the same files starts (finishing the
forget cut short, as every start does) and undoes again. In-process through the REPL harness, with the real
session files and SQLite ledger."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agent.adapters.ledger import SqliteLedger
from agent.errors import MemoryUnavailable
from agent.forget import Places, finish_cut_short
from agent.memory import profile, transfer
from agent.memory.profile import Entry
from agent.memory.service import MemoryService
from agent.sessions import SessionStore
from tests.chat_fakes import ScriptedChat
from tests.fakes import InMemoryIndex, WordHashEmbedder
from tests.repl_harness import Chat, build_chat, run_lines

WRITES = frozenset({"put", "set_links", "unstate", "drop_changes", "record_forget",
                    "acknowledge_forget", "restate", "set_contexts", "touch", "delete", "supersede", "set_facts",
                    "put_vectors", "claim_vectors"})
DEAD = "the process was killed here"
SCENARIOS = {
    "a retraction undone": ("I'm allergic to shellfish", "I'm not allergic to shellfish anymore, Zanzibar"),
    "a restatement undone": ("I'm allergic to peanuts", "I'm allergic to peanuts, my doctor Zanzibar says"),
    "words said again after they were replaced, undone": ("I live in Boston", "I moved to Berlin",
                                                          "I live in Boston"),
}


class Dying:
    """The ledger of a process killed at its ``at``-th write: that write and everything after it fail."""

    def __init__(self, ledger: SqliteLedger, at: int) -> None:
        self.ledger = ledger
        self.at = at
        self.writes = 0

    @property
    def died(self) -> bool:
        return self.writes >= self.at

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self.ledger, name)
        if not callable(attr):
            return attr

        def call(*args: Any, **kwargs: Any) -> Any:
            if name in WRITES:
                self.writes += 1
            if self.died:
                raise MemoryUnavailable(DEAD)
            return attr(*args, **kwargs)

        return call


def say(root: Path, service: MemoryService, *lines: str) -> Chat:
    """A chat on ``root``'s files with ``service`` as its memory, told ``lines`` (each turn answered "Noted.")."""
    replies = ["Noted."] * sum(not line.startswith("/") for line in lines)
    return run_lines(build_chat(root, ScriptedChat(*replies), memory=lambda: service), *lines)


def places(root: Path) -> Callable[[str], Places]:
    return lambda user: Places(SessionStore(root / "sessions", "default"))


def state(ledger: SqliteLedger) -> list[dict[str, object]]:
    return [{k: v for k, v in transfer.portable(r).items() if k != "last_seen"} for r in ledger.all("me")]


def leaks(root: Path) -> list[str]:
    return [str(f) for f in root.rglob("*") if f.is_file() and b"zanzibar" in f.read_bytes().lower()]


@pytest.mark.parametrize("lines", SCENARIOS.values(), ids=SCENARIOS.keys())
def test_an_undo_killed_at_any_write_is_finished_by_the_next_undo(tmp_path: Path, lines: tuple[str, ...]) -> None:
    for at in range(1, 40):
        root = tmp_path / str(at)
        (root / "mem").mkdir(parents=True)
        path, index, embedder = root / "mem" / "ledger.sqlite3", InMemoryIndex(), WordHashEmbedder()
        ledger = SqliteLedger(path)
        healthy = MemoryService(ledger, index, embedder, "me")
        say(root, healthy, *lines[:-1])
        before = state(ledger)
        say(root, healthy, lines[-1])
        dying = Dying(SqliteLedger(path), at)
        cut = say(root, MemoryService(dying, index, embedder, "me"), "/undo")  # type: ignore[arg-type]
        if not dying.died:
            assert state(ledger) == before, cut.log
            assert at > 2, "the undo writes in steps, and it was cut short at each"
            break
        assert DEAD in cut.log
        # Never neither value: the profile holds the key, with the value before the turn or the one it said.
        held = {e.key for e in healthy.profile()[0]}
        assert held >= {e.key for e in _profile(before)}, (at, cut.log)

        finish_cut_short(ledger, places(root))
        again = say(root, healthy, "/undo")
        assert again.code == 0 and f"Undid turn {len(lines)}" in again.log, (at, cut.log, again.log)
        assert state(ledger) == before, (at, cut.log, again.log)
        assert [t.user for t in again.session.turns] == list(lines[:-1])
        changes = ledger.changes("me")
        assert changes == [] or all(c.turn < len(lines) for c in changes)
        healthy.close()
        dying.ledger.close()
        assert leaks(root) == [], (at, cut.log)
    else:
        pytest.fail("the undo never finished")


def _profile(rows: list[dict[str, object]]) -> list[Entry]:
    """The current profile of the memories ``rows`` (as ``state`` gives them)."""
    return profile.view([transfer.from_portable({**row, "last_seen": 0.0}, "me") for row in rows])[0]


def test_a_turn_whose_write_was_killed_at_any_step_is_undone_to_what_was_there_before(tmp_path: Path) -> None:
    """The change is recorded before the write, so a kill anywhere in the write is undone whole: both homes may be
    current for a moment (a duplicate), never neither."""
    for at in range(1, 40):
        root = tmp_path / str(at)
        (root / "mem").mkdir(parents=True)
        path, index, embedder = root / "mem" / "ledger.sqlite3", InMemoryIndex(), WordHashEmbedder()
        ledger = SqliteLedger(path)
        healthy = MemoryService(ledger, index, embedder, "me")
        say(root, healthy, "I live in Boston")
        before = state(ledger)
        dying = Dying(SqliteLedger(path), at)
        say(root, MemoryService(dying, index, embedder, "me"), "I moved to Berlin Zanzibar")  # type: ignore[arg-type]
        if not dying.died:
            assert at > 2, "the write goes in steps, and it was cut short at each"
            break
        assert {e.key for e in healthy.profile()[0]} == {"home"}, at
        again = say(root, healthy, "/undo")
        assert state(ledger) == before, (at, again.log)
        healthy.close()
        dying.ledger.close()
        assert leaks(root / "mem") == [], at
    else:
        pytest.fail("the write never finished")
