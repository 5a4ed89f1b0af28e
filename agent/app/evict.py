"""``agent memories evict``: the least recently seen memories past a count to keep, and their eviction."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from agent.domain import MemoryRecord

if TYPE_CHECKING:
    from agent.memory.service import MemoryService


@dataclass(frozen=True)
class Plan:
    """Keep ``keep`` of ``count`` memories: ``going`` are the least recently seen past it, least recent first."""

    keep: int
    count: int
    going: list[MemoryRecord]


def plan(service: MemoryService, to: int | None = None) -> Plan:
    """What evicting down to ``to`` (default: the capacity, ``AGENT_MEMORY_CAPACITY``) would take."""
    keep = service.policy.capacity if to is None else to
    count = service.count()
    return Plan(keep, count, service.least_recently_seen(count - keep))


def evict(service: MemoryService, chosen: Plan) -> int:
    """Evict what ``chosen`` names; returns how many memories remain. An eviction is no forget: the words stay in
    the sessions that said them."""
    service.forget([record.id for record in chosen.going])
    return service.count()
