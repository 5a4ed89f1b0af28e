"""The input history file: private to the user, and without the lines it must not keep.

prompt-toolkit keeps every line typed at the prompt in ``DATA_DIR/history``. Those lines are the user's own words,
so the file is created 0600, and forgetting a memory rewrites it without them (``agent.forget.scrub_history``).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from prompt_toolkit.history import FileHistory, History, InMemoryHistory


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
