"""The turns a chat could not write to memory because the store did not answer, kept on this machine until it does.

A shared deployment keeps the memories on servers (PostgreSQL, a Chroma server) that can go away in the middle of a
chat. What the user said in the meantime and the write gate wanted to keep must not be lost, nor be claimed as
remembered: each such turn is written here, one small file per turn (the words, the session and turn they came
from, when they were said, the end of the reply they answered), and written to memory at the first turn the store
answers again, in the order they were said, before anything newer (a later "I moved to Lisbon" must supersede a
spooled "I live in Boston", not the other way round). Each entry is its own file, written atomically (``0600``) and
removed once its turn is in memory: two chats of one user on one data directory can spool and replay at once with
no lock between them (a turn replayed twice is remembered once: a memory's id comes from its words).

A forget must never be undone by a turn waiting here, whatever the order of events and on whichever machine it was
made. So a forget takes its words out of the spool (``agent.forget.scrub_spool``) when it is finished on this
machine, the replay takes out first the words of every forget this machine has not finished yet
(``agent.forget.hold_back``), and each entry records how far this machine knew the ledger's forgets when it was
said (``known``: the ledger's id and its count of forgets, ``Ledger.forget_mark``): a replay never writes an entry
that a forget recorded after that names (``Ledger.forgotten_since``), even one whose record every machine has
finished and dropped. Words said again after the forget was known here are the user's again, and are remembered.

The spool is bounded (``MAX_WAITING`` turns, ``MAX_BYTES`` in all): at the limit the oldest are kept, since they
come first and a later turn may depend on them, and a new turn is refused with ``SpoolFull`` (the chat says it is
not kept; a turn's words stay in its session file). An entry that cannot be read as a turn (damaged, or written by
hand) is set aside as ``<name>.corrupt-<time>`` by the replay, which says so in one line and goes on with the
others.

A chat that starts while the store's server does not answer spools the same way from its first turn (and keeps a
``/remember`` here too): the memory worker opens the store again in the background and replays the spool once it
answers. The directory must be the data directory's own: a symlink there is neither written nor read through.
"""

from __future__ import annotations

import json
import os
import secrets
import time
from dataclasses import MISSING, asdict, dataclass, fields, replace
from pathlib import Path
from typing import Any

from agent.errors import SpoolFull
from agent.files import move_aside, own_directory, read_regular, regular, symlinked, write_private

MAX_WAITING = 1000  # turns: weeks of use with the database away
MAX_BYTES = 16_000_000  # in all, whatever the turns' length
KNOWN = "forgets-known"  # how far this machine knew the ledger's forgets (``Spool.note``)


@dataclass(frozen=True)
class Spooled:
    """One turn waiting for the store: what ``MemoryService.observe`` is given for it; or, ``explicit``, the words
    of a ``/remember``, which ``MemoryService.remember`` stores as given. ``store`` and ``mark`` say how far this
    machine knew the forgets of that ledger when the words were said ("" and 0: nothing known, so every forget
    counts)."""

    text: str
    session: str
    turn: int
    when: float
    context: str = ""
    finished: bool = True
    explicit: bool = False
    store: str = ""
    mark: int = 0


_TYPES: dict[str, tuple[type, ...]] = {"text": (str,), "session": (str,), "turn": (int,), "when": (int, float),
                                       "context": (str,), "finished": (bool,), "explicit": (bool,),
                                       "store": (str,), "mark": (int,)}
_REQUIRED = {f.name for f in fields(Spooled) if f.default is MISSING}


def parse(raw: bytes) -> Spooled:
    """The entry in ``raw``; ``ValueError`` saying what is wrong when it is not one (a torn or hand-made file, a
    field of the wrong type: a ``text`` that is a number would fail every replay)."""
    try:
        data: Any = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise ValueError("not JSON") from exc
    if not isinstance(data, dict):
        raise ValueError("not a JSON object")
    missing = sorted(_REQUIRED - data.keys())
    if missing:
        raise ValueError(f"no {', '.join(missing)}")
    known = {name: value for name, value in data.items() if name in _TYPES}  # a newer version's extra fields go
    for name, value in known.items():
        wanted = _TYPES[name]
        if not isinstance(value, wanted) or (isinstance(value, bool) and bool not in wanted):
            raise ValueError(f"its {name} is not {'text' if str in wanted else wanted[0].__name__}")
    return Spooled(**known)


class Spool:
    """The directory of waiting turns of one user in one data directory (``below``: the data directory, from which
    down no symlink is followed)."""

    def __init__(self, directory: Path, below: Path | None = None) -> None:
        self.directory = directory
        self._below = directory.parent if below is None else below

    def problem(self) -> str | None:
        """Why the directory cannot be used (it, or a directory above it in the data directory, is a symlink), or
        None."""
        link = symlinked(self.directory, self._below)
        return None if link is None else f"{link} is a symlink (to {os.readlink(link)}), which agent does not follow"

    def add(self, entry: Spooled) -> None:
        """Keep ``entry`` durably (fsynced before this returns), stamped with what this machine knew of the forgets
        (``note``) unless it says; ``SpoolFull`` at the limit (the oldest stay), ``OSError`` when it cannot be
        written (a symlinked directory is refused)."""
        own_directory(self.directory, self._below)
        waiting = list(self.directory.glob("*.json"))
        size = sum(_size(path) for path in waiting)
        data = json.dumps(asdict(entry if entry.store else replace(entry, **self._known()))).encode("utf-8")
        if len(waiting) >= MAX_WAITING or size + len(data) > MAX_BYTES:
            raise SpoolFull(f"{len(waiting):,} turns ({size / 1e6:.1f} MB) already wait on this machine for memory, "
                            f"the most it keeps ({MAX_WAITING:,} turns, {MAX_BYTES / 1e6:.0f} MB): those are kept, "
                            "and this one is not")
        name = f"{time.time_ns():020d}-{secrets.token_hex(4)}.json"
        write_private(self.directory / name, data, f".{name}")

    def entries(self) -> list[tuple[Path, Spooled | str]]:
        """Every waiting file, oldest first, with its turn, or why it cannot be read as one. Nothing is read through
        a symlinked directory (its entries would be anyone's words)."""
        if self.problem() is not None or not self.directory.is_dir():
            return []
        found: list[tuple[Path, Spooled | str]] = []
        for path in sorted(self.directory.glob("*.json")):
            try:
                found.append((path, parse(read_regular(path))))
            except FileNotFoundError:  # replayed by another chat a moment ago
                continue
            except OSError as exc:
                found.append((path, exc.strerror or str(exc)))
            except ValueError as exc:
                found.append((path, str(exc)))
        return found

    def waiting(self) -> list[tuple[Path, Spooled]]:
        """The waiting turns that can be read, oldest first."""
        return [(path, entry) for path, entry in self.entries() if isinstance(entry, Spooled)]

    def set_aside_files(self) -> list[Path]:
        """The entries set aside (``set_aside``): they still hold the user's words, which a forget scrubs."""
        if self.problem() is not None or not self.directory.is_dir():
            return []
        return sorted(p for p in self.directory.glob("*.json.corrupt-*") if regular(p))

    def has_waiting(self) -> bool:
        return self.problem() is None and self.directory.is_dir() and any(self.directory.glob("*.json"))

    @staticmethod
    def done(path: Path) -> None:
        """The turn in ``path`` is in memory now (or was put there by another chat a moment ago)."""
        path.unlink(missing_ok=True)

    @staticmethod
    def set_aside(path: Path) -> Path:
        """Move an entry that cannot be replayed to ``<name>.corrupt-<time>`` beside it (kept, never read again) and
        return where it went; one moved or replayed by another chat meanwhile stays where that put it."""
        try:
            return move_aside(path)
        except FileNotFoundError:
            return path

    def rewrite(self, path: Path, entry: Spooled) -> None:
        """Replace the waiting turn in ``path`` with ``entry`` (a forget scrubbed its context), atomically."""
        write_private(path, json.dumps(asdict(entry)).encode("utf-8"), f".{path.name}")

    def note(self, store: str, mark: int) -> None:
        """Remember that this machine knows the forgets of ledger ``store`` up to ``mark`` (``Ledger.forget_mark``),
        so that turns spooled by a later chat that never reaches the store are stamped with it. Written only when
        it changed, and not at all before the first forget."""
        if mark == 0 or self._known() == {"store": store, "mark": mark} or self.problem() is not None:
            return
        own_directory(self.directory, self._below)
        write_private(self.directory / KNOWN, json.dumps({"store": store, "mark": mark}).encode(), f".{KNOWN}")

    def _known(self) -> dict[str, Any]:
        try:
            data = json.loads(read_regular(self.directory / KNOWN))
            if isinstance(data.get("store"), str) and isinstance(data.get("mark"), int):
                return {"store": data["store"], "mark": data["mark"]}
        except (OSError, ValueError, AttributeError):
            pass
        return {"store": "", "mark": 0}


def _size(path: Path) -> int:
    try:
        return path.lstat().st_size
    except FileNotFoundError:
        return 0
