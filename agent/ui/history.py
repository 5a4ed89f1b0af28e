"""The input history file: private to the user, and cleaned of what the user asked to forget.

prompt-toolkit keeps every line typed at the prompt in ``DATA_DIR/history``, in its own format: each entry is a
comment line (``# <time>``) followed by the entry's lines, each after a ``+``. Those lines are the user's own words,
so forgetting a memory rewrites the file without them.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from prompt_toolkit.history import FileHistory, History, InMemoryHistory

from agent.sessions import Forgotten, read_regular, write_private


class PrivateHistory(FileHistory):
    """A ``FileHistory`` that writes only the lines ``keep`` accepts to its file (the others stay in this run's
    memory, for the Up key)."""

    def __init__(self, path: Path, keep: Callable[[str], bool]) -> None:
        super().__init__(str(path))
        self._keep = keep

    def store_string(self, string: str) -> None:
        if self._keep(string):
            super().store_string(string)


def private_history(path: Path, warn: Callable[[str], None], keep: Callable[[str], bool]) -> History:
    """The history kept in ``path``, created 0600 if missing, with the lines ``keep`` accepts. A symlink planted
    there is refused: this run then keeps its history in memory only, and ``warn`` says so in one line."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    except OSError as exc:
        refused = "; a symlink there is refused" if os.path.islink(path) else ""
        warn(f"The input history file {path} cannot be used ({exc.strerror}{refused}): the lines typed in this run "
             "are not kept.")
        return InMemoryHistory()
    os.close(fd)
    return PrivateHistory(path, keep)


def scrub_history(path: Path, forgotten: Forgotten) -> bool:
    """Rewrite the history file (atomically) with the forgotten words replaced; False when none were there. An
    entry of several lines is scrubbed as a whole, so a memory that spans lines goes too. ``OSError`` when the file
    cannot be read or written (a symlink is refused)."""
    try:
        raw = read_regular(path).decode("utf-8", "surrogateescape")
    except FileNotFoundError:
        return False
    forgotten = forgotten.within(raw.replace("\n+", " "))
    if not forgotten:
        return False
    out: list[str] = []
    entry: list[str] = []

    def end_entry() -> None:
        if entry:
            out.extend(f"+{line}" for line in forgotten.scrub("\n".join(entry)).split("\n"))
            entry.clear()

    for line in raw.split("\n"):
        if line.startswith("+"):
            entry.append(line[1:])
        else:
            end_entry()
            out.append(line)
    end_entry()
    scrubbed = "\n".join(out)
    if scrubbed == raw:
        return False
    write_private(path, scrubbed.encode("utf-8", "surrogateescape"), f".{path.name}")
    return True
