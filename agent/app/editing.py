"""Edit one memory by hand, for ``agent memories edit`` and the chat's ``/edit`` alike: the editor shows the text,
``agent.edit`` checks and stores the new one and forgets the old.

One Ctrl-C policy for both: while the editor is open a Ctrl-C ends the edit and nothing has changed (it reaches
the caller as ``KeyboardInterrupt``, as any Ctrl-C at a prompt does); from the rewrite on it is held until the
new text is stored and the old one forgotten from every file (``edit.rewrite``), so no edit stops half-way.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from agent import edit, forget
from agent.domain import MemoryRecord


@dataclass(frozen=True)
class Unchanged:
    """The edit stored nothing: ``why`` says so in one line (the editor failed, the text was emptied, unchanged,
    or refused)."""

    why: str


def edit_memory(
    on_service: forget.OnService,
    old: MemoryRecord,
    places: forget.Places,
    editor: Callable[[str], str | None],
    own: forget.OwnSession | None = None,
) -> edit.Edited | Unchanged:
    """Let the user rewrite ``old`` in ``editor`` (the front end's: the terminal's ``$EDITOR``, a test's function)
    and store what they saved (``own``: the chat's session, which the old words leave in memory too)."""
    text = editor(old.text)
    why = edit.problem(old, text)
    if why is not None or text is None:
        return Unchanged(why or "")
    return edit.rewrite(on_service, old, text, places, own=own)
