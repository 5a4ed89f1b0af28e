"""Settings files: which ones the agent reads, and reading one.

Why approval: a ``.env`` is looked for in the working directory, and a working directory may be anyone's. A cloned
repository whose ``.env`` set ``OPENAI_BASE_URL`` to its own server received the user's key with every request, and
with ``AGENT_MEMORY_THRESHOLD=-1`` every memory on the first "hello"; nearly every setting is such a lever (the
Chroma and database URLs receive the memories, the data directory and user choose which store is read and written,
the capacity evicts, the embedder sends memories out). So the agent reads without asking only the user's own
files: the user config file, and the ``.env`` of the checkout the agent runs from (whoever can write that one can
change the code that reads it). Any other ``.env`` is read only once the user approved it with ``agent trust FILE``,
which notes its path and the SHA-256 of its bytes beside the user config file, as direnv does: an edited file
needs approving again, and until then it sets nothing at all, not only the settings that look dangerous today.
Nothing ever asks at start: a run without a terminal must not wait for an answer, and a y/N before every chat is
answered by reflex. The bytes are read once, hashed and parsed from the same buffer, so the file approved is the
file read.

A file is read whole but bounded (``MAX_BYTES``), and what python-dotenv would pass over in silence is said: a key
set twice with different values (the last is used), and a line that is not ``KEY=value``.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import shlex
import stat
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from dotenv.main import resolve_variables
from dotenv.parser import parse_stream

from agent.errors import Remedy, UsageError
from agent.files import read_regular, write_private

MAX_BYTES = 4 << 20  # a settings file is a few dozen lines: a larger one is not one (but is said so only past 4 MB,
# so that a long value in one is told as the value it is)
APPROVALS = "approved-env.json"  # beside the user config file: path -> {"sha256": ..., "at": epoch seconds}

# own: the user config file or the checkout's .env; approved: another .env whose bytes the user approved;
# unapproved / changed: another .env, never approved or edited since, not read; absent: no regular file there.
Status = Literal["own", "approved", "unapproved", "changed", "absent"]


@dataclass(frozen=True)
class SettingsFile:
    """One settings file as this run found it. ``values`` is what the agent reads from it: empty unless it is the
    user's own or approved. ``names`` are the names it sets, read or not, for the line saying it was not used;
    ``problems`` the lines about its text (a key set twice, a line that is not ``KEY=value``)."""

    path: Path
    label: str
    status: Status
    values: Mapping[str, str]
    names: tuple[str, ...] = ()
    problems: tuple[str, ...] = ()
    written: Mapping[str, str] | None = None  # the values as the file spells them, ``${VAR}`` not expanded

    @property
    def read(self) -> bool:
        return self.status in ("own", "approved")

    def describe(self) -> str:
        """How ``agent config`` says what became of the file."""
        how = f"{Remedy.TRUST.run(path=_quoted(self.path))} to use it"
        return {
            "own": "read",
            "approved": "read (you approved it)",
            "unapproved": f"not read: a .env outside agent's own checkout is read only once you approve it; {how}",
            "changed": f"not read: it changed since you approved it; {how} again",
            "absent": "not found",
        }[self.status]


def approvals_file(config_file: Path) -> Path:
    """Where approvals are noted: beside the user config file, where only the user writes."""
    return config_file.with_name(APPROVALS)


def own(path: Path, label: str) -> SettingsFile:
    """A file of the user's own: read whenever it is there."""
    data = _bytes(path)
    if data is None:
        return SettingsFile(path, label, "absent", {})
    values, names, problems = parse(path, _text(path, data))
    return SettingsFile(path, label, "own", values, names, problems)


def dotenv(path: Path, approvals: Path) -> SettingsFile:
    """A ``.env`` that is not the user's own: read only when its bytes are the ones the user approved."""
    data = _bytes(path, bounded=False)
    if data is None:
        return SettingsFile(path, ".env", "absent", {})
    digest = _digest(data)
    approved = _approvals(approvals).get(_key(path), {}).get("sha256")
    if approved == digest:
        values, names, problems = parse(path, _text(path, _bounded(path, data)))
        return SettingsFile(path, ".env", "approved", values, names, problems)
    try:
        names = parse(path, data[:MAX_BYTES].decode("utf-8"))[1]
    except UnicodeDecodeError:
        names = ()
    return SettingsFile(path, ".env", "unapproved" if approved is None else "changed", {}, names)


def approve(path: Path, approvals: Path) -> SettingsFile:
    """Note the bytes of ``path`` as approved and return the file as it will be read; ``UsageError`` when there is
    no regular file there or it cannot be a settings file."""
    path = Path(os.path.abspath(path))
    data = _bytes(path)
    if data is None:
        raise UsageError(f"There is no settings file {path} to approve.")
    text = _text(path, data)
    values, names, problems = parse(path, text)
    notes = _approvals(approvals)
    notes[_key(path)] = {"sha256": _digest(data), "at": time.time()}
    _save(approvals, notes)
    written = {b.key: b.value or "" for b in parse_stream(io.StringIO(text)) if b.key is not None and not b.error}
    return SettingsFile(path, ".env", "approved", values, names, problems, written)


def revoke(path: Path, approvals: Path) -> bool:
    """Forget the approval of ``path``; whether there was one."""
    notes = _approvals(approvals)
    if notes.pop(_key(path), None) is None:
        return False
    _save(approvals, notes)
    return True


def parse(path: Path, text: str) -> tuple[dict[str, str], tuple[str, ...], tuple[str, ...]]:
    """(the values ``text`` sets, as python-dotenv reads them, ``${VAR}`` expanded; every name it sets; a line for
    each key set twice with different values and each line that is not ``KEY=value``)."""
    bindings = list(parse_stream(io.StringIO(text)))
    problems: list[str] = []
    lines: dict[str, list[int]] = {}
    raw: dict[str, set[str | None]] = {}
    for binding in bindings:
        if binding.error:
            problems.append(f"line {binding.original.line} of {path} is not KEY=value, so it is ignored.")
        elif binding.key is not None:
            lines.setdefault(binding.key, []).append(binding.original.line)
            raw.setdefault(binding.key, set()).add(binding.value)
    for name, at in lines.items():
        if len(raw[name]) > 1:
            numbers = ", ".join(map(str, at[:-1]))
            problems.append(f"{shown_name(name)} is set {len(at)} times in {path} (lines {numbers} and {at[-1]}), with "
                            f"different values: the last, line {at[-1]}, is used. Delete the others.")
    resolved = resolve_variables(((b.key, b.value) for b in bindings if b.key is not None and not b.error),
                                 override=True)
    values = {name: value for name, value in resolved.items() if value is not None}
    return values, tuple(lines), tuple(problems)


def shown_name(name: str) -> str:
    """A name from a file as a message shows it: as it is when it is a plain identifier, else quoted and escaped
    (a file's key may hold any character, an escape sequence included)."""
    return name if name.isidentifier() and name.isascii() else repr(name)


def _bytes(path: Path, bounded: bool = True) -> bytes | None:
    """The bytes of the regular file ``path`` (a symlink is followed: the bytes are what is approved), None when there
    is none; a FIFO or device is passed over without blocking on it. ``bounded``: more than ``MAX_BYTES`` is
    refused; otherwise only that much is read, plus one byte to tell."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        raise UsageError(f"The settings file {path} cannot be read ({exc.strerror}): fix it or move it away.") from exc
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            return None
        data = handle.read(MAX_BYTES + 1)
    return _bounded(path, data) if bounded else data


def _bounded(path: Path, data: bytes) -> bytes:
    if len(data) > MAX_BYTES:
        raise UsageError(f"The settings file {path} is larger than {MAX_BYTES >> 20} MB, so it is not one: "
                         "a settings file is KEY=value lines. Fix it or move it away.")
    return data


def _text(path: Path, data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(f"The settings file {path} cannot be read (it is not UTF-8 text): fix it or move it "
                         "away.") from exc


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _approvals(path: Path) -> dict[str, dict[str, object]]:
    """The approvals noted, or none when the file is missing or damaged: then nothing is approved, the safe way to
    be wrong."""
    try:
        notes = json.loads(read_regular(path))
    except (OSError, ValueError):
        return {}
    if not isinstance(notes, dict):
        return {}
    return {k: v for k, v in notes.items() if isinstance(k, str) and isinstance(v, dict)}


def _save(path: Path, notes: Mapping[str, object]) -> None:
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        write_private(path, (json.dumps(notes, indent=1, sort_keys=True) + "\n").encode(), f".{APPROVALS}")
    except OSError as exc:
        raise UsageError(f"The approval could not be noted in {path} ({exc.strerror or exc}).") from exc


def _key(path: Path) -> str:
    """The name an approval is noted under: the file in its directory's real path, so ``agent trust ~/proj/.env``
    through a symlinked ``~/proj`` approves the file a run in that directory reads (the working directory is always
    its real path). The file itself is not resolved: what is approved is the bytes found at that name."""
    return str(Path(os.path.abspath(path)).parent.resolve() / path.name)


def _quoted(path: Path) -> str:
    return shlex.quote(str(path))
