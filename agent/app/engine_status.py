"""What a front end shows of a running chat, as one frozen snapshot (``ChatEngine.status``).

The toolbar, the banner, ``/session``, ``/why`` and the notes after a turn read the chat's state from here, never
from the engine's own attributes: what they may show is this list, and none can change the engine by holding on to
what it read (the engine changes only through its methods: ``use_model``, ``pause``, ``switch``...).
"""

from __future__ import annotations

from dataclasses import dataclass

from agent.app.memory_worker import MemoryStatus
from agent.domain import Turn
from agent.errors import AgentError, SessionError
from agent.memory.service import Recall
from agent.server import Placement, ServerProfile


@dataclass(frozen=True)
class EngineStatus:
    """The chat as it stands: its session (``session`` the name, ``turns`` how many, ``last_turn`` the newest),
    whether the session is written (``saving``) and why the last save failed (``unsaved``, None once one succeeds);
    the model asked for (``model``: the configured name, or the one ``/model`` switched to) and the one shown
    (``shown_model``: the name the server serves when it said so); what the probe of the server found (``server``);
    AGENT_MAX_TOKENS (``max_tokens``, 0: not set); the long-term memory (``memory``, None when this run has none),
    whether writes are paused (``paused``), why the last recall failed (``memory_error``) and the last recall
    (``last_recall``, for ``/why``); where the system prompt and memories go (``placement``); the conversation
    window (``context_tokens`` of ``budget_tokens``, ``window_turns`` of the session's turns, ``summarised`` when a
    summary of earlier turns heads it); and the machine a forget is finished for (``machine``, "" for none)."""

    session: str
    created_at: float
    turns: int
    last_turn: Turn | None
    saving: bool
    unsaved: SessionError | None
    model: str
    shown_model: str
    server: ServerProfile | None
    max_tokens: int
    memory: MemoryStatus | None
    paused: bool
    memory_error: AgentError | None
    last_recall: Recall | None
    placement: Placement
    context_tokens: int
    budget_tokens: int
    window_turns: int
    summarised: bool
    machine: str

