"""Editing a memory: the user rewrites its text, and it becomes the memory of the new text with the provenance of
the old one (kind, session, turn, when it was first said, the reply it answered), embedded again, with everything
the old words gave it derived again from the new ones (``MemoryService.rewrite``: dates, profile facts, what it
replaces and what replaces it); the old text is then forgotten as ``agent.forget`` forgets, from every file. The
chat's ``/edit`` and ``agent memories edit`` both go through ``rewrite`` here.

The old words the memory came from (``source``) and its restatements are forgotten with its text, so the new
memory's source is its new text. Order matters for a crash: the new memory is written before the old one is
forgotten, and the memories it replaces point at it only once it is stored, so a kill in between leaves both,
never neither, and no link to a memory that is not there; only when the new text folds to the old (a change of
case or spacing, the same id) must the old go first, and the window is one ledger transaction wide.
"""

from __future__ import annotations

from dataclasses import dataclass

from agent import forget
from agent.domain import MemoryRecord
from agent.memory.canonical import canonical
from agent.memory.refusal import refusal


@dataclass(frozen=True)
class Edited:
    """What an edit did: the memory as stored now, the memories current again (the new text no longer replaces
    them), and the forget of the old text."""

    stored: MemoryRecord
    back: tuple[MemoryRecord, ...]
    result: forget.Result


def problem(old: MemoryRecord, text: str | None) -> str | None:
    """Why the edit changes nothing, in one line; None when ``text`` is a new text to store."""
    if text is None:
        return "The editor exited with a failure status: nothing changed."
    if not text:
        return "The text was emptied: nothing changed (forget removes a memory)."
    if text == old.text:
        return "The text is unchanged."
    refused = refusal(text)
    if refused:
        return f"Not changed: the new text {refused}."
    if canonical(text) == old.text:
        return "The text is unchanged."
    return None


def rewrite(on_service: forget.OnService, old: MemoryRecord, text: str, places: forget.Places,
            own: forget.OwnSession | None = None) -> Edited:
    """Rewrite ``old`` as ``text`` (checked by ``problem``) and forget the old text; Ctrl-C waits for the end."""
    with forget.critical():
        plan = on_service(lambda service: service.rewrite(old, text))
        if plan.new.id == old.id:  # the same words but for case or spacing: the old goes first
            result = forget.forget(on_service, [old], places, own=own, relink=False)
            stored = on_service(lambda service: service.store_rewrite(plan))
        else:
            stored = on_service(lambda service: service.store_rewrite(plan))
            result = forget.forget(on_service, [old], places, own=own)
    return Edited(stored, (*plan.back, *result.back), result)
