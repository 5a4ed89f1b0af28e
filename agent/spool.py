"""The turns a chat could not write to memory because the store did not answer, kept on this machine until it does.

A shared deployment keeps the memories on servers (PostgreSQL, a Chroma server) that can go away in the middle of a
chat. What the user said in the meantime and the write gate wanted to keep must not be lost, nor be claimed as
remembered: each such turn is written here, one small file per turn (the words, the session and turn they came
from, when they were said, the end of the reply they answered), and written to memory at the first turn the store
answers again, in the order they were said, before anything newer (a later "I moved to Lisbon" must supersede a
spooled "I live in Boston", not the other way round). Each entry is its own file, written atomically (``0600``) and
removed once its turn is in memory: two chats of one user on one data directory can spool and replay at once with
no lock between them (a turn replayed twice is remembered once: a memory's id comes from its words).

A forget takes the forgotten words out of the spool too (``agent.forget.scrub_spool``): a turn still waiting there
would otherwise bring a forgotten memory back when the store answers again.

A chat that starts while the store's server does not answer spools the same way from its first turn (and keeps a
``/remember`` here too): the memory worker opens the store again in the background and replays the spool once it
answers.
"""

from __future__ import annotations

import json
import secrets
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from agent.files import read_regular, write_private


@dataclass(frozen=True)
class Spooled:
    """One turn waiting for the store: what ``MemoryService.observe`` is given for it; or, ``explicit``, the words
    of a ``/remember``, which ``MemoryService.remember`` stores as given."""

    text: str
    session: str
    turn: int
    when: float
    context: str = ""
    finished: bool = True
    explicit: bool = False


class Spool:
    """The directory of waiting turns of one user in one data directory."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def add(self, entry: Spooled) -> None:
        """Keep ``entry`` durably (fsynced before this returns); ``OSError`` when it cannot be written."""
        self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        name = f"{time.time_ns():020d}-{secrets.token_hex(4)}.json"
        write_private(self.directory / name, json.dumps(asdict(entry)).encode("utf-8"), f".{name}")

    def waiting(self) -> list[tuple[Path, Spooled]]:
        """The waiting turns, oldest first; a file that cannot be read as one (a torn copy) is left where it is."""
        if not self.directory.is_dir():
            return []
        found = []
        for path in sorted(self.directory.glob("*.json")):
            try:
                found.append((path, Spooled(**json.loads(read_regular(path)))))
            except (OSError, ValueError, TypeError):
                continue
        return found

    def has_waiting(self) -> bool:
        return self.directory.is_dir() and any(self.directory.glob("*.json"))

    @staticmethod
    def done(path: Path) -> None:
        """The turn in ``path`` is in memory now (or was put there by another chat a moment ago)."""
        path.unlink(missing_ok=True)

    def rewrite(self, path: Path, entry: Spooled) -> None:
        """Replace the waiting turn in ``path`` with ``entry`` (a forget scrubbed its context), atomically."""
        write_private(path, json.dumps(asdict(entry)).encode("utf-8"), f".{path.name}")
