"""Session files: one inspectable JSON file per conversation, durable after every turn, one process at a time.

Why so careful: a session is the user's conversation, and it must survive a crash at any instant. Each save
writes a new file beside the old one (created with ``O_EXCL | O_NOFOLLOW``, mode 0600), fsyncs it, renames it
over the old name with ``os.replace`` (which replaces a planted symlink instead of following it) and fsyncs the
directory, so the file is always the old or the new valid JSON. Reads refuse symlinks and non-regular files. A
file that does not parse is an error naming its path, and it is never overwritten. Names come from a strict
allowlist, so no name can reach outside the sessions directory. A lock file per session (``filelock``, no
waiting) makes a second process on the same session fail with a clear message instead of interleaving turns.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import stat
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, get_args

from agent.conversation import Turn, TurnStatus
from agent.errors import SessionError

SCHEMA_VERSION = 1
NAME_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")
_TURN_FIELDS = {"user", "reply", "status", "at", "model", "prompt_tokens", "completion_tokens"}


def check_name(name: str) -> str:
    """``name`` if it is a valid session name; ``SessionError`` saying what a name may be otherwise."""
    if not NAME_PATTERN.fullmatch(name):
        raise SessionError(
            f"{name!r} is not a valid session name: use 1 to 64 letters, digits, '-' or '_', "
            "starting with a letter or digit."
        )
    return name


def new_name(clock: float | None = None) -> str:
    """A name for a session the user did not name: its start time, sortable."""
    return time.strftime("%Y%m%d-%H%M%S", time.localtime(clock))


@dataclass
class Session:
    """One conversation: every turn, plus the short-term state to resume (summary, first turn in the window)."""

    name: str
    created_at: float
    updated_at: float
    turns: list[Turn] = field(default_factory=list)
    summary: str = ""
    context_start: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "schema": SCHEMA_VERSION,
            "name": self.name,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
            "summary": self.summary,
            "context_start": self.context_start,
            "turns": [asdict(t) for t in self.turns],
        }


@dataclass(frozen=True)
class SessionInfo:
    """What ``sessions list`` shows; ``error`` is set for a file that cannot be read."""

    name: str
    path: Path
    turns: int
    updated_at: float
    first_line: str = ""
    error: str | None = None


def _parse(data: Any, name: str) -> Session:
    """A session from decoded JSON; ``ValueError`` says what is wrong with it."""
    if not isinstance(data, dict):
        raise ValueError("not a JSON object")
    version = data.get("schema")
    if version != SCHEMA_VERSION:
        raise ValueError(f"schema version {version!r}, expected {SCHEMA_VERSION} (written by another version?)")
    raw_turns = data.get("turns")
    if not isinstance(raw_turns, list):
        raise ValueError("'turns' is not a list")
    turns = []
    for n, raw in enumerate(raw_turns, start=1):
        if not isinstance(raw, dict) or not {"user", "reply", "status"} <= raw.keys():
            raise ValueError(f"turn {n} lacks user, reply or status")
        if raw["status"] not in get_args(TurnStatus):
            raise ValueError(f"turn {n} has an unknown status {raw['status']!r}")
        turns.append(Turn(**{k: v for k, v in raw.items() if k in _TURN_FIELDS}))
    try:
        return Session(
            name=name,
            created_at=float(data["created_at"]),
            updated_at=float(data["updated_at"]),
            turns=turns,
            summary=str(data.get("summary", "")),
            context_start=int(data.get("context_start", 0)),
        )
    except (KeyError, TypeError) as exc:
        raise ValueError(f"missing or invalid field {exc}") from exc


class SessionStore:
    """Session files in one directory (created 0700): ``NAME.json`` and its lock ``.NAME.lock``."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def path(self, name: str) -> Path:
        path = self.directory / f"{check_name(name)}.json"
        # Lexical check (symlinks are handled by O_NOFOLLOW and os.replace): the name cannot climb out.
        if Path(os.path.abspath(path)).parent != Path(os.path.abspath(self.directory)):
            raise SessionError(f"The session {name!r} would live outside {self.directory}: refused.")
        return path

    def _ensure_dir(self) -> None:
        try:
            self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        except OSError as exc:
            raise SessionError(f"The sessions directory {self.directory} cannot be created ({exc.strerror}).") from exc

    def exists(self, name: str) -> bool:
        return os.path.lexists(self.path(name))

    def load(self, name: str) -> Session:
        path = self.path(name)
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except FileNotFoundError as exc:
            raise SessionError(f"There is no session {name!r} (no file {path}).") from exc
        except OSError as exc:
            raise SessionError(f"The session file {path} cannot be opened ({exc.strerror}): it may be a "
                               "symlink, which is refused; the file was left as it is.") from exc
        with os.fdopen(fd, "rb") as handle:
            if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
                raise SessionError(f"The session file {path} is not a regular file: refused, left as it is.")
            raw = handle.read()
        try:
            return _parse(json.loads(raw.decode("utf-8")), name)
        except (ValueError, UnicodeDecodeError) as exc:
            raise SessionError(
                f"The session file {path} is damaged ({exc}); it was left as it is. Move it away or remove it "
                f"with `agent sessions rm {name}`, or start another session."
            ) from exc

    def save(self, session: Session) -> None:
        """Write ``session`` atomically: the file on disk is always a complete old or new version."""
        path = self.path(session.name)
        self._ensure_dir()
        data = json.dumps(session.to_json(), ensure_ascii=False, indent=1).encode("utf-8")
        temp = self.directory / f".{session.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp"
        try:
            fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view):]
                os.fsync(fd)
            finally:
                os.close(fd)
            os.replace(temp, path)
            _fsync_dir(self.directory)
        except OSError as exc:
            temp.unlink(missing_ok=True)
            raise SessionError(f"The session file {path} could not be saved ({exc.strerror}); "
                               "the previous version is intact.") from exc

    def list(self) -> list[SessionInfo]:
        """Every session, most recently updated first; unreadable files are listed with their error."""
        if not self.directory.is_dir():
            return []
        infos = []
        for path in self.directory.glob("*.json"):
            name = path.stem
            if not NAME_PATTERN.fullmatch(name):
                continue
            try:
                session = self.load(name)
            except SessionError as exc:
                infos.append(SessionInfo(name, path, 0, path.lstat().st_mtime, error=str(exc)))
                continue
            first = session.turns[0].user.splitlines()[0] if session.turns and session.turns[0].user else ""
            infos.append(SessionInfo(name, path, len(session.turns), session.updated_at, first))
        return sorted(infos, key=lambda info: info.updated_at, reverse=True)

    def latest(self) -> str | None:
        readable = [info for info in self.list() if info.error is None]
        return readable[0].name if readable else None

    def remove(self, name: str) -> None:
        """Delete a session (even a damaged file), refusing while another process has it open."""
        path = self.path(name)
        if not os.path.lexists(path):
            raise SessionError(f"There is no session {name!r}.")
        with self.lock(name):
            path.unlink()
        (self.directory / f".{name}.lock").unlink(missing_ok=True)

    @contextmanager
    def lock(self, name: str) -> Iterator[None]:
        """Hold the session for this process; ``SessionError`` at once if another process holds it."""
        import filelock

        lock_path = self.directory / f".{check_name(name)}.lock"
        self._ensure_dir()
        lock = filelock.FileLock(lock_path, timeout=0, mode=0o600)
        try:
            lock.acquire()
        except filelock.Timeout as exc:
            raise SessionError(f"The session {name!r} is in use by another agent process: close it there, "
                               "or pick another name with -s NAME.") from exc
        except OSError as exc:
            raise SessionError(f"The lock of session {name!r} cannot be taken ({exc.strerror}); a symlink at "
                               f"{lock_path} is refused.") from exc
        try:
            yield
        finally:
            lock.release()


def _fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
