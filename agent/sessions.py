"""Session files: one inspectable JSON file per conversation, durable after every turn, one process at a time.

Why so careful: a session is the user's conversation, and it must survive a crash at any instant. Each save
writes a new file beside the old one (created with ``O_EXCL | O_NOFOLLOW``, mode 0600), fsyncs it, renames it
over the old name with ``os.replace`` (which replaces a planted symlink instead of following it) and fsyncs the
directory, so the file is always the old or the new valid JSON. Reads refuse symlinks and non-regular files. A
file that does not parse is an error naming its path, and it is never overwritten (the chat moves it aside to
``NAME.json.corrupt-<time>`` and starts afresh; a file from another version is left alone). Names come from a strict
allowlist, so no name can reach outside the sessions directory. A lock file per session (``filelock``, no
waiting) makes a second process on the same session fail with a clear message instead of interleaving turns; the
holder of the lock deletes the temp files a killed process left, since they hold the conversation too.
Forgetting a memory rewrites session files through this store's lock, load and save (``agent.forget``).
"""

from __future__ import annotations

import errno
import json
import logging
import os
import re
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, TypeVar, get_args

from agent.domain import Turn, TurnStatus, fold_with_spans, normalise_text
from agent.errors import Remedy, SessionBusy, SessionCorrupt, SessionError
from agent.files import move_aside, own_directory, read_regular, symlinked, write_private

log = logging.getLogger(__name__)
T = TypeVar("T")
SCHEMA_VERSION = 1
NAME_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")
_TURN_FIELDS = {"user", "reply", "status", "at", "model", "prompt_tokens", "completion_tokens", "said"}


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


def unused_name(store: SessionStore) -> str:
    """A name for a new session the user did not name: ``new_name``, with a suffix when a session started in the
    same second has it."""
    name, suffix = new_name(), 1
    while store.exists(name):
        suffix += 1
        name = f"{new_name()}-{suffix}"
    return name


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
            "turns": [_turn_json(t) for t in self.turns],
        }


def _turn_json(turn: Turn) -> dict[str, Any]:
    """A turn as the file keeps it: ``said`` only where the line carries attached text, so that the turns of a chat
    are written as before."""
    data = asdict(turn)
    if data["said"] is None:
        del data["said"]
    return data


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
    if data.get("schema") != SCHEMA_VERSION:
        raise ValueError(f"schema version {data.get('schema')!r}, expected {SCHEMA_VERSION}")
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
    """The session files of one user, in one directory (created 0700): ``NAME.json`` and its lock ``.NAME.lock``.

    Sessions belong to a user as memories do: each user's are in their own directory (``DataPaths.sessions``), so
    listing, resuming, removing and the forget scrub of one user never reach another's. Each file also names its
    user, and a file that names another user is refused (one copied or linked into the wrong directory); a file
    without a user (written before sessions had one) belongs to the directory's user. The directory must be the data
    directory's own: if it, or a directory between it and ``below`` (the data directory), is a symlink, nothing is
    read or written through it (the user's words would go wherever it points)."""

    def __init__(self, directory: Path, user: str, below: Path | None = None) -> None:
        self.directory = directory
        self.user = user
        self._below = directory.parent if below is None else below

    def _own(self, make: bool = False) -> None:
        """``SessionError`` when the directory is not the data directory's own (a symlink); ``make`` creates it."""
        try:
            if make:
                own_directory(self.directory, self._below)
            elif (link := symlinked(self.directory, self._below)) is not None:
                raise OSError(errno.ELOOP, f"{link} is a symlink (to {os.readlink(link)}), which agent does not "
                              "follow: move it away and start again")
        except OSError as exc:
            raise SessionError(f"The sessions directory {self.directory} cannot be used ({exc.strerror}).") from exc

    def path(self, name: str) -> Path:
        path = self.directory / f"{check_name(name)}.json"
        # Lexical check (symlinks are handled by O_NOFOLLOW and os.replace): the name cannot climb out.
        if Path(os.path.abspath(path)).parent != Path(os.path.abspath(self.directory)):
            raise SessionError(f"The session {name!r} would live outside {self.directory}: refused.")
        return path

    def _ensure_dir(self) -> None:
        self._own(make=True)

    def exists(self, name: str) -> bool:
        return os.path.lexists(self.path(name))

    def load(self, name: str) -> Session:
        path = self.path(name)
        self._own()
        try:
            raw = read_regular(path)
        except FileNotFoundError as exc:
            raise SessionError(f"There is no session {name!r} (no file {path}).") from exc
        except OSError as exc:
            raise SessionError(f"The session file {path} cannot be read ({_why(exc, path)}); the file was left as "
                               "it is.") from exc
        try:
            data = json.loads(raw.decode("utf-8"))
        except (ValueError, UnicodeDecodeError) as exc:
            raise _damaged(path, name, str(exc)) from exc
        version = data.get("schema") if isinstance(data, dict) else None
        if isinstance(version, int) and version != SCHEMA_VERSION:
            raise SessionError(f"The session file {path} was written by another version of agent (schema "
                               f"{version}, this one reads {SCHEMA_VERSION}): it was left as it is; open it with "
                               "that version, or pick another name with -s NAME.")
        owner = data.get("user", self.user) if isinstance(data, dict) else self.user
        if owner != self.user:
            raise SessionError(f"The session file {path} belongs to another user than {self.user!r}: it was left "
                               "as it is; open it with --user set to its owner.")
        try:
            return _parse(data, name)
        except ValueError as exc:
            raise _damaged(path, name, str(exc)) from exc

    def set_aside(self, name: str) -> Path:
        """Move a damaged session file to ``NAME.json.corrupt-<time>`` beside it (kept, never overwritten) and
        return where it went; the caller holds the session's lock."""
        return move_aside(self.path(name))

    def save(self, session: Session) -> None:
        """Write ``session`` atomically: the file on disk is always a complete old or new version."""
        path = self.path(session.name)
        self._ensure_dir()
        data = json.dumps({**session.to_json(), "user": self.user}, ensure_ascii=False, indent=1).encode("utf-8")
        try:
            write_private(path, data, f".{session.name}.{os.getpid()}")
        except OSError as exc:
            kept = "the previous version is intact" if self.exists(session.name) else "nothing of it is on disk yet"
            raise SessionError(f"The session file {path} could not be saved ({exc.strerror}); {kept}.") from exc

    def list(self) -> list[SessionInfo]:
        """Every session, most recently updated first; unreadable files are listed with their error."""
        self._own()
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
        try:
            with self.lock(name):
                path.unlink()
        except SessionBusy as exc:
            raise SessionBusy(f"The session {name!r} is open in another agent process: leave that chat (Ctrl-D or "
                              f"/exit), then {Remedy.SESSION_RM.run(name=name)} again.") from exc
        except OSError as exc:
            raise SessionError(f"The session file {path} cannot be removed ({exc.strerror}).") from exc
        (self.directory / f".{name}.lock").unlink(missing_ok=True)

    @contextmanager
    def lock(self, name: str) -> Iterator[None]:
        """Hold the session for this process; ``SessionBusy`` at once if another process holds it.

        In a directory nobody can write (a read-only mount or permissions), there is no lock to take, and none is
        needed: no process can change the session there. The body then runs unlocked, and each save fails with its
        own one-line error, which the chat reports and survives."""
        import filelock

        lock_path = self.directory / f".{check_name(name)}.lock"
        lock = filelock.FileLock(lock_path, timeout=0, mode=0o600)
        self._own()
        try:
            self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
            lock.acquire()
        except filelock.Timeout as exc:
            raise SessionBusy(f"The session {name!r} is in use by another agent process: close it there, "
                              "or pick another name with -s NAME.") from exc
        except OSError as exc:
            if not self._unwritable(exc) or os.path.islink(lock_path):
                raise SessionError(f"The lock of session {name!r} cannot be taken ({_why(exc, lock_path)}).") from exc
            log.debug("session %s is not locked: %s is not writable (%s)", name, self.directory, exc.strerror)
        if not lock.is_locked:
            yield
            return
        try:
            for temp in self.directory.glob(f".{name}.*.tmp"):  # only the lock holder writes: these are leftovers
                temp.unlink(missing_ok=True)
            yield
        finally:
            lock.release()

    def _unwritable(self, exc: OSError) -> bool:
        """Whether ``exc`` says the sessions directory cannot be written at all (a lock file another user owns, in
        a directory this process can write, is a refusal to share, not this)."""
        return exc.errno == errno.EROFS or (exc.errno in {errno.EACCES, errno.EPERM}
                                            and not os.access(self.directory, os.W_OK))


class SessionHold:
    """The lock of the one session a chat is in, moved when the chat goes into another (``/new``, ``/sessions
    NAME``): the new one is taken before the old one is let go, so a session that another process holds leaves the
    chat where it was. ``take(None)``: a chat that writes no session holds none."""

    def __init__(self, store: SessionStore) -> None:
        self.store = store
        self._held = ExitStack()

    def take(self, name: str | None, load: Callable[[], T]) -> T:
        """Hold ``name`` and return what ``load`` reads under its lock; if either fails, the session held before
        is still held, and the error raised."""
        held = ExitStack()
        try:
            if name is not None:
                held.enter_context(self.store.lock(name))
            loaded = load()
        except BaseException:
            held.close()
            raise
        self._held.close()
        self._held = held
        return loaded

    def __enter__(self) -> SessionHold:
        return self

    def __exit__(self, *exc: object) -> None:
        self._held.close()


@dataclass(frozen=True)
class Found:
    """A turn of a session whose line (``who`` is ``you``) or reply (``agent``) holds every word searched for."""

    session: str
    turn: int
    at: float
    who: str
    text: str

    def snippet(self, words: list[str], width: int = 100) -> tuple[str, list[tuple[int, int]]]:
        """About ``width`` characters of the text around the first word found, on one line, and the spans of the
        words in it (to highlight)."""
        flat = " ".join(self.text.split())
        fold, starts, ends = fold_with_spans(flat)
        spans = sorted((starts[at], ends[at + len(word) - 1]) for word in words
                       for at in _positions(fold, word))
        first = spans[0][0] if spans else 0
        begin = max(0, min(first - width // 3, len(flat) - width))
        end = min(len(flat), begin + width)
        shown = ("…" if begin else "") + flat[begin:end] + ("…" if end < len(flat) else "")
        shift = (1 if begin else 0) - begin
        return shown, [(a + shift, b + shift) for a, b in spans if a >= begin and b <= end]


def _positions(fold: str, word: str) -> Iterator[int]:
    at = fold.find(word)
    while at != -1 and word:
        yield at
        at = fold.find(word, at + len(word))


def search(store: SessionStore, query: str, scrub: Callable[[str], str] = str) -> list[Found]:
    """Every turn of ``store``'s sessions (one user's) whose line or reply holds each word of ``query``, folded as
    memories are (case, accents' forms, spacing), newest first. ``scrub`` takes out of each text the words of the
    forgets still under way (a session another process held when they were made): a search never shows a forgotten
    text, whether or not the file has been scrubbed yet. Damaged files are skipped."""
    words = normalise_text(query).split()
    if not words:
        return []
    found = []
    for info in store.list():
        if info.error is not None:
            continue
        try:
            session = store.load(info.name)
        except SessionError:  # removed or damaged since it was listed
            continue
        for number, turn in enumerate(session.turns, start=1):
            for who, text in (("you", turn.user), ("agent", turn.reply)):
                text = scrub(text)
                folded = normalise_text(text)
                if all(word in folded for word in words):
                    found.append(Found(info.name, number, turn.at or session.updated_at, who, text))
    return sorted(found, key=lambda hit: (-hit.at, hit.session, hit.turn))


def _why(exc: OSError, path: Path) -> str:
    """Why ``path`` could not be used, in words: a symlink is named only when there is one."""
    if os.path.islink(path):
        return f"{path} is a symlink, and a symlink there is refused"
    return exc.strerror or str(exc)


def _damaged(path: Path, name: str, reason: str) -> SessionCorrupt:
    return SessionCorrupt(
        f"The session file {path} is damaged ({reason}); it was left as it is: {Remedy.RESUME.command(name=name)} "
        f"moves it aside and starts the session afresh, {Remedy.SESSION_RM.command(name=name)} deletes it.",
        path,
        reason,
    )
