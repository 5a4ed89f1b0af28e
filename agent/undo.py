"""``/undo``: the last exchange taken back, and everything its write did to memory with it, so the store is as it
was before the turn.

What a turn's write did is in the ledger (``agent.domain.Change``, written before the write itself): the memories
it created, the quote it added to a memory it said again, and the links it changed of memories it did not create
(words said again after they were replaced). Undo takes each back:

1. the turn's words still waiting in the spool (the store did not answer) leave it, so they are never remembered;
2. its quotes leave the memories they joined, and the links it changed are as before it (``put_back``);
3. the memories it created are forgotten as ``/forget`` forgets (``agent.forget``: every file, crash-safe, and
   what they replaced is current again), with the words of its quotes;
4. its changes go from the ledger, and the turn leaves the session and the context window.

A kill in the middle leaves the turn in the session and its changes in the ledger until step 4: ``/undo`` again
finds what is left (a quote already taken out is taken out of the files still, a link already put back stays).
"""

from __future__ import annotations

from dataclasses import dataclass

from agent import forget
from agent.app import queries
from agent.app.chat_engine import ChatEngine
from agent.app.memory_worker import passing
from agent.domain import MemoryRecord, Turn
from agent.errors import AgentError
from agent.memory.service import TurnWrites


@dataclass(frozen=True)
class Undone:
    """What ``/undo`` took back: the turn and its number; ``memory`` False when this run has no memory; the
    entries of the spool it took out (``waiting``); the memories it forgot, and the ones the turn had only said
    again (their quote taken out); the memories current again as before the turn (the turn had replaced them with
    words said before); the memories that stay because memory is read-only (``kept``); and what the forget did
    (which says what is current again now that what the turn wrote is gone)."""

    turn: Turn
    number: int
    memory: bool = True
    waiting: int = 0
    forgotten: tuple[MemoryRecord, ...] = ()
    restated: tuple[MemoryRecord, ...] = ()
    back: tuple[MemoryRecord, ...] = ()
    kept: tuple[MemoryRecord, ...] = ()
    result: forget.Result | None = None


def take_back(engine: ChatEngine, places: forget.Places | None) -> Undone | None:
    """Undo the last exchange of ``engine``'s session (None when there is none); ``places`` are the files a forget
    scrubs (None: this run has no memory). A store that does not answer raises, and nothing is taken back, unless
    the turn's words were still waiting in the spool: then nothing of it can be in the store, and the turn goes."""
    exchange = engine.last_exchange()
    if exchange is None:
        return None
    memory, turn, number = engine.memory_worker(), exchange.turn, exchange.number
    if memory is None or places is None:
        engine.take_back_last()
        return Undone(turn, number, memory=False)
    session = engine.session_name()
    words = turn.user if turn.said is None else turn.said  # what the gate judged: not a document attached to it
    waiting = 0 if memory.read_only else memory.unspool(session, number, words)
    try:
        scrubbed = forget.FORGOTTEN in words
        writes = memory.call(queries.WritesOfTurn(session, number, words, scrubbed))
    except AgentError as exc:
        if not (waiting and passing(exc)):
            raise
        writes = TurnWrites()
    if memory.read_only:
        engine.take_back_last()
        return Undone(turn, number, kept=writes.created)
    touched = [m for m, _ in writes.quotes]
    restated = list(memory.call(queries.Fetch(touched)).values()) if touched else []
    put_back = memory.call(queries.PutBack(writes)) if writes.quotes or writes.changed else []
    result = None
    if writes.created or writes.quotes:
        result = forget.forget(memory.call, writes.created, places, own=engine,
                               also=[quote.text for _, quote in writes.quotes])
    if writes.changes:
        memory.call(queries.DropChanges(writes))
    engine.take_back_last()
    return Undone(turn, number, waiting=waiting, forgotten=writes.created, restated=tuple(restated),
                  back=tuple(r for r in put_back if r.current), result=result)
