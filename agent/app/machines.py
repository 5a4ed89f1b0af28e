"""The machines that share a database for one user, and the forgets still waiting for some of them
(``agent memories machines``, ``agent memories forget --pending``, ``agent sessions search``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agent.domain import Machine

if TYPE_CHECKING:
    from agent.domain import ForgetRecord
    from agent.memory.service import MemoryService
    from agent.ports import Ledger


def pending_forgets(ledger: Ledger, user: str) -> list[ForgetRecord]:
    """The forgets of ``user``'s memories some machine has not finished in its own files."""
    return [record for record in ledger.pending_forgets() if record.user == user]


def pending_texts(ledger: Ledger, user: str) -> list[str]:
    """The words of those forgets: what a search of the sessions must not show while they still hold them."""
    return [text for record in pending_forgets(ledger, user) for text in record.texts]


def forgotten_texts(service: MemoryService) -> list[str]:
    """The forgotten texts of this user's forgets that some machine has not finished yet."""
    return [text for record in service.pending_forgets() for text in record.texts]


def machines(service: MemoryService) -> list[Machine]:
    return service.machines()


def pending(service: MemoryService) -> list[ForgetRecord]:
    return service.pending_forgets()


def retire(service: MemoryService, machine: Machine) -> None:
    """No forget of this user waits for ``machine`` any more."""
    service.retire_machine(machine.id)
