"""The data directory: where each file of one user lives (``DataPaths``), how a directory becomes a store and stays
private (``ensure_data_dir``), this machine's id in it, and the places a forget scrubs. No adapter: the composition
root (``agent.wiring``) opens the stores in it, and the front ends and the app's maintenance find their files
through it.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

from agent.config import Settings
from agent.errors import ConfigError, UsageError
from agent.forget import Places
from agent.machine import machine_id
from agent.sessions import SessionStore
from agent.spool import Spool

DEFAULT_USER = "default"  # the default of AGENT_USER (agent.config)
_PLAIN_USER = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")


@dataclass(frozen=True)
class DataPaths:
    """Where everything of one data directory lives. The store is shared, its records keyed by user; the sessions
    and the input history are files, so each user has their own: ``for_user`` gives the paths of one user."""

    root: Path
    user: str = DEFAULT_USER

    def for_user(self, user: str) -> DataPaths:
        return DataPaths(self.root, user)

    @property
    def ledger(self) -> Path:
        return self.root / "ledger.sqlite3"

    @property
    def chroma(self) -> Path:
        return self.root / "chroma"

    @property
    def _user_area(self) -> Path:
        """The default user's files are where they were before users had their own (``sessions/``, ``history``),
        so nothing written then is lost or hidden; any other user's are under ``users/<name>/``."""
        return self.root if self.user == DEFAULT_USER else self.root / "users" / user_directory(self.user)

    @property
    def sessions(self) -> Path:
        return self._user_area / "sessions"

    @property
    def history(self) -> Path:
        return self._user_area / "history"

    @property
    def spool(self) -> Path:
        """The turns waiting for a memory store that did not answer (``agent.spool``)."""
        return self._user_area / "spool"

    def session_store(self) -> SessionStore:
        """The user's sessions, which nothing reads or writes through a symlink below ``root``."""
        return SessionStore(self.sessions, self.user, self.root)

    def spool_of(self) -> Spool:
        """The user's waiting turns, which nothing reads or writes through a symlink below ``root``."""
        return Spool(self.spool, self.root)


def user_directory(user: str) -> str:
    """The directory name of ``user``: the name itself when it is lower-case letters, digits, ``-`` and ``_``
    (readable, and distinct even where the file system ignores case), otherwise ``=`` and a digest of it, which
    no name can climb out of and which cannot be mistaken for a plain name."""
    if _PLAIN_USER.fullmatch(user):
        return user
    return "=" + hashlib.sha256(user.encode("utf-8", "surrogatepass")).hexdigest()[:32]


MARKER = ".agent-data-dir"
MARKER_TEXT = ("This directory is a data directory of agent: long-term memories, chat sessions and the input history.\n"
               "It is private (0700). agent wrote this file when it made the directory its store; it never takes\n"
               "over a directory that holds other files. Keep nothing else here.\n")
# What the agent (or SQLite and Chroma on its behalf) makes at the top of a data directory: the ledger with its
# journals, the index with its lock, set-aside copies (``.corrupt-<time>``) and backups, the sessions, the input
# history, the turns waiting for the store (``spool``), the machine's id (``agent.machine``), and temp files a kill
# left (``.history.<hex>.tmp``). Only these are tightened, and a directory holding nothing else is a store made by a
# version older than the marker.
OWN_ENTRY = re.compile(r"""\.?(?:ledger\.sqlite3|chroma|sessions|history|spool|machine-id)(?:-wal|-shm|-journal)?
                           (?:\.lock|\.corrupt-[\w.-]+|\.backup-[\w.-]+|\.[0-9a-f]+\.tmp)?""", re.VERBOSE)
# Entries that leave a directory empty for this purpose: the checkout's agent_memory_db/ is kept in git by a
# .gitkeep, and macOS's Finder drops a .DS_Store into any directory it shows.
IGNORED = frozenset({".gitkeep", ".DS_Store"})


def ensure_data_dir(root: Path) -> DataPaths:
    """Make ``root`` the data directory, or check that it is one, keep what the agent owns in it private, and
    return its paths.

    A new or empty directory becomes a store (0700, with the ``MARKER`` file). An existing directory is used only
    when it is a store: it has the marker, or a ledger, or holds nothing but what the agent makes (a store of an
    older version). Any other directory (a project, the home directory, ``.``, ``/``) is refused with
    ``UsageError`` and left exactly as it was: pointing the setting at it must not rewrite its permissions.

    Every file the agent (or Chroma, or SQLite) creates from now on is 0600: the process umask gains 077, because
    Chroma creates its files with the umask's modes and cannot be asked otherwise. What an earlier run or an older
    version left readable by others is tightened too, but only in the agent's own entries, never through a
    symlink.
    """
    os.umask(os.umask(0o077) | 0o077)
    try:
        if root.is_dir():
            created = _check_store(root)
        else:
            try:
                root.mkdir(mode=0o700, parents=True)
                created = True
            except FileExistsError:  # another agent process, starting at the same moment, made it first
                if not root.is_dir():
                    raise
                created = _check_store(root)
        _mark(root, required=created)
        _tighten(root)
    except OSError as exc:
        raise ConfigError(f"The data directory {root} cannot be created or used ({exc.strerror}): "
                          "set AGENT_DATA_DIR or --data-dir to a writable directory.") from exc
    return DataPaths(root)


def _check_store(root: Path) -> bool:
    """Whether ``root`` (an existing directory) is empty; raises ``UsageError`` when it holds files not the agent's."""
    entries = [name for name in os.listdir(root) if name not in IGNORED]
    if not entries:
        return True
    if MARKER in entries or (root / "ledger.sqlite3").is_file():
        return False
    foreign = sorted(name for name in entries if not _own(name))
    if not foreign:
        return False
    raise UsageError(
        f"The data directory {root} already holds files that are not agent's ({len(foreign)}, e.g. {foreign[0]!r}), "
        "so it was left as it is: set --data-dir or AGENT_DATA_DIR to a new or empty directory."
    )


def _mark(root: Path, required: bool) -> None:
    """Write the marker that names ``root`` a store. In a store of an older version it is added when it can be
    (a read-only store is still usable without it); in a directory the agent makes a store, it must be."""
    marker = root / MARKER
    if marker.exists() or marker.is_symlink():
        return
    try:
        fd = os.open(marker, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(MARKER_TEXT)
    except FileExistsError:  # written a moment ago by another agent process making the same store
        return
    except OSError:
        if required:
            raise


def _tighten(root: Path) -> None:
    """Drop group and other permissions from ``root`` and from the agent's own entries in it, and everything under
    those; other entries and every symlink (and what it points to) are left alone."""
    _private(root)
    with os.scandir(root) as entries:
        own = [entry for entry in entries if _own(entry.name) and not entry.is_symlink()]
    for entry in own:
        _private(Path(entry.path))
        if entry.is_dir(follow_symlinks=False):
            for folder, dirs, files in os.walk(entry.path):  # os.walk does not descend into symlinked directories
                for name in (*dirs, *files):
                    _private(Path(folder) / name)


def _own(name: str) -> bool:
    return name == MARKER or OWN_ENTRY.fullmatch(name) is not None


def _private(path: Path) -> None:
    """Tighten ``path``; one that another agent process removed meanwhile (the ledger's rollback journal lives
    for one transaction) has nothing left to tighten."""
    try:
        mode = path.lstat().st_mode
        if stat.S_ISLNK(mode) or not mode & 0o077:
            return
        os.chmod(path, stat.S_IMODE(mode) & 0o700)
    except FileNotFoundError:
        return


def places_of(paths: DataPaths, machine: str = "") -> Places:
    """The session files, the input history and the waiting turns of ``paths``' user, where a forget of theirs
    scrubs; ``machine`` is the id that acknowledges it (``machine_of``)."""
    return Places(paths.session_store(), paths.history, paths.root, paths.spool_of(), machine)


def machine_of(settings: Settings, paths: DataPaths) -> str:
    """The id of this machine (the data directory) for a ledger that several machines share; "" for the data
    directory's own SQLite file, which has only this one."""
    return machine_id(paths.root) if settings.database_url else ""
