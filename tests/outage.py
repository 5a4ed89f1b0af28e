"""A memory store that goes away mid-chat, in-process: a SQLite ledger that fails every call as the PostgreSQL
ledger does when its server is gone, and a scripted chat that switches it at a given turn. Shared by the spool's
tests of every tier, so that none of them imports another test module."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from agent.adapters.ledger import SqliteLedger
from agent.domain import Message
from agent.errors import MemoryUnavailable
from agent.memory.service import MemoryService
from agent.ports import ChatChunk
from tests.chat_fakes import ScriptedChat
from tests.fakes import InMemoryIndex, WordHashEmbedder

AWAY = "The PostgreSQL server at db.example cannot be reached (connection refused)."


class Outage:
    """A ledger that fails every call with ``MemoryUnavailable``, as the PostgreSQL ledger does when its server is
    gone, while ``down`` is set."""

    def __init__(self, ledger: SqliteLedger) -> None:
        self.ledger = ledger
        self.down = False

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self.ledger, name)
        if not callable(attr):
            return attr

        def call(*args: Any, **kwargs: Any) -> Any:
            if self.down:
                raise MemoryUnavailable(AWAY)
            return attr(*args, **kwargs)

        return call


class Switching(ScriptedChat):
    """``ScriptedChat`` that runs ``at[n]`` when the request of turn ``n`` (from 1) is sent: after that turn's
    recall, before its write."""

    def __init__(self, at: dict[int, Callable[[], None]], *replies: str) -> None:
        super().__init__(*replies)
        self._at = at

    def stream(self, messages: Sequence[Message], model: str) -> Iterator[ChatChunk]:
        self._at.get(len(self.requests) + 1, lambda: None)()
        return super().stream(messages, model)


def service(outage: Outage) -> MemoryService:
    return MemoryService(outage, InMemoryIndex(), WordHashEmbedder(), "me")  # type: ignore[arg-type]


def outage_in(tmp_path: Path) -> Outage:
    root = tmp_path / "mem"
    root.mkdir()
    return Outage(SqliteLedger(root / "ledger.sqlite3"))
