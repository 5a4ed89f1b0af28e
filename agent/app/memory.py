"""The memory service as a front end names it: the one object every memory use case of ``agent.app`` takes, which a
command opens through the composition root (``agent.wiring.open_memory``) and hands on. A front end imports it for
its type alone (under ``TYPE_CHECKING``): the service loads the memory engine, which a command that never opens
the memory (``agent --version``) must not wait for."""

from __future__ import annotations

from agent.memory.service import MemoryService

__all__ = ["MemoryService"]
