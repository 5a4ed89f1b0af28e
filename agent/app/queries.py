"""The reads and small writes a user asks for by hand, as named functions of the memory service: the chat sends
them to its memory thread (``MemoryWorker.call``) and a command runs them inline, so neither reaches into the
service's ledger or index itself."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from agent.domain import ForgetRecord, MemoryRecord, ScoredMemory

if TYPE_CHECKING:
    from agent.memory.profile import Entry
    from agent.memory.service import MemoryService, TurnWrites

SEARCH_K = 10  # how many matches /memories QUERY and /forget QUERY show


def records(service: MemoryService) -> list[MemoryRecord]:
    """Every memory of the user, current and replaced, oldest first."""
    return service.list()


def ids(service: MemoryService) -> list[str]:
    """The id of every memory of the user: what a prefix is resolved among."""
    return [record.id for record in service.list()]


def by_id(service: MemoryService) -> dict[str, MemoryRecord]:
    return {record.id: record for record in service.list()}


def profile(service: MemoryService) -> tuple[list[Entry], list[Entry]]:
    return service.profile()


def threshold(service: MemoryService) -> float:
    return service.threshold


@dataclass(frozen=True)
class Matching:
    """The memories about ``query`` above the similarity threshold, the chat's way (``SEARCH_K`` at most)."""

    query: str

    def __call__(self, service: MemoryService) -> list[ScoredMemory]:
        return service.search(self.query, SEARCH_K, service.threshold)


@dataclass(frozen=True)
class Fetch:
    """The memories of ``ids`` that are still there (one may have been forgotten meanwhile)."""

    ids: Sequence[str]

    def __call__(self, service: MemoryService) -> dict[str, MemoryRecord]:
        return service.records(self.ids)


@dataclass(frozen=True)
class PendingForgets:
    """The user's forgets that ``machine`` has not finished in its own files (``""``: a chat without places)."""

    machine: str

    def __call__(self, service: MemoryService) -> list[ForgetRecord]:
        return service.pending_forgets(self.machine)


@dataclass(frozen=True)
class Restore:
    """Make the replaced memory ``id`` current again; None when it is not a replaced one."""

    id: str

    def __call__(self, service: MemoryService) -> MemoryRecord | None:
        return service.restore(self.id)


@dataclass(frozen=True)
class WritesOfTurn:
    """What the write of turn ``turn`` of ``session``, whose words were ``line``, did to memory (``/undo``);
    ``scrubbed``: a forget has taken words out of the line since."""

    session: str
    turn: int
    line: str
    scrubbed: bool

    def __call__(self, service: MemoryService) -> TurnWrites:
        return service.turn_writes(self.session, self.turn, self.line, self.scrubbed)


@dataclass(frozen=True)
class PutBack:
    """Take the quotes of ``writes`` out of the memories they joined and put back the links it changed; returns
    the memories that changed."""

    writes: TurnWrites

    def __call__(self, service: MemoryService) -> list[MemoryRecord]:
        return service.put_back(self.writes)


@dataclass(frozen=True)
class DropChanges:
    """Drop from the store the changes ``writes`` kept: the turn they record is undone."""

    writes: TurnWrites

    def __call__(self, service: MemoryService) -> None:
        service.drop_changes(self.writes)
