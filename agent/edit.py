"""Editing a memory: the user rewrites its text, and it becomes the memory of the new text with the provenance of
the old one (kind, session, turn, when it was first said, the reply it answered), embedded again; the old text
is then forgotten as ``agent.forget`` forgets, from every file. The chat's ``/edit`` and ``agent memories edit``
both go through here.

The old words the memory came from (``source``) are forgotten with its text, so the new memory's source is its
new text. Order matters for a crash: the new memory is written before the old one is forgotten, so a kill in
between leaves both, never neither; only when the new text folds to the old (a change of case or spacing, the same
id) must the old go first, and the window is one ledger transaction wide.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime

from agent.domain import MemoryRecord, content_hash, memory_id, normalise_text
from agent.memory.canonical import canonical
from agent.memory.refusal import refusal


def edited(old: MemoryRecord, text: str, when: float) -> MemoryRecord:
    """The memory ``old`` becomes when rewritten as ``text`` at ``when`` (its canonical form: what is stored)."""
    text = canonical(text)
    stamp = datetime.fromtimestamp(when).astimezone().isoformat(timespec="seconds")
    return replace(old, id=memory_id(old.user, text), text=text, content_hash=content_hash(text), source=text,
                   last_seen=max(old.last_seen, when), extra={**old.extra, "edited_at": stamp})


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


def forget_first(old: MemoryRecord, new: MemoryRecord) -> bool:
    """Whether the old memory must be forgotten before the new one is written: they share an id."""
    return normalise_text(old.text) == normalise_text(new.text)
