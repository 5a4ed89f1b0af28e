"""The careful file operations every store of user data shares: read a regular file, replace one atomically and
privately, move a damaged one aside.

Why one module: sessions, the input history, the forget scrub and the recovery of a damaged ledger or index all
touch files that hold the user's words, and each must survive a crash at any instant and never follow a planted
symlink. So the reads refuse symlinks and non-regular files, the writes go through a temp file created with
``O_EXCL | O_NOFOLLOW`` (mode 0600), fsynced and renamed over the old name, and nothing damaged is ever deleted or
overwritten: it is renamed to ``<name>.corrupt-<time>`` beside itself.
"""

from __future__ import annotations

import errno
import os
import secrets
import stat
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

# A SQLite file is moved together with these, which SQLite needs to make sense of it.
SQLITE_SIDE_FILES = ("-journal", "-wal", "-shm")


def read_regular(path: Path) -> bytes:
    """The bytes of the regular file ``path``. ``OSError`` for anything else: a symlink is not followed (ELOOP),
    and a FIFO or device is refused without blocking on it."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            raise OSError(errno.EINVAL, "not a regular file", str(path))
        return handle.read()


def write_private(path: Path, data: bytes, prefix: str) -> None:
    """Replace ``path`` with ``data`` atomically, mode 0600 (``replaced_privately``). Raises ``OSError``; the old file
    is intact then and no temp file is left."""
    with replaced_privately(path, prefix) as handle:
        handle.write(data)


@contextmanager
def replaced_privately(path: Path, prefix: str) -> Iterator[BinaryIO]:
    """A file to write that replaces ``path`` atomically, mode 0600, when the block ends: a temp file
    ``PREFIX.<random>.tmp`` beside it (created with ``O_EXCL | O_NOFOLLOW``), fsynced, renamed over ``path`` (which
    replaces a symlink instead of following it), and the directory fsynced. What the block writes may be as large
    as it likes: nothing holds it whole. On any error or interruption the temp file goes and ``path`` is as it was."""
    temp = path.with_name(f"{prefix}.{secrets.token_hex(4)}.tmp")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        with os.fdopen(fd, "wb") as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, path)
        _fsync_dir(path.parent)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise


def regular(path: Path) -> bool:
    """Whether ``path`` is a regular file itself (not a symlink to one, a FIFO or a directory)."""
    try:
        return stat.S_ISREG(path.lstat().st_mode)
    except FileNotFoundError:
        return False


def symlinked(path: Path, below: Path) -> Path | None:
    """The first symlink on the way from ``below`` (not included: the data directory itself may be reached through
    one, the user's choice) down to ``path`` (included), or None. A directory of the data directory replaced by a
    symlink to somewhere else (``sessions/``, ``spool/``, ``users/``) would have the user's words written there."""
    try:
        parts = path.relative_to(below).parts
    except ValueError:
        parts = (path.name,)
        below = path.parent
    at = below
    for part in parts:
        at = at / part
        if at.is_symlink():
            return at
    return None


def own_directory(path: Path, below: Path | None = None) -> Path:
    """Make ``path`` a directory (0700, with any missing parent) that is the data directory's own: ``OSError``
    (``ELOOP``, naming the link and where it points) when it, or a directory between it and ``below`` (default:
    its parent), is a symlink, which is never followed for the user's words."""
    link = symlinked(path, path.parent if below is None else below)
    if link is not None:
        raise OSError(errno.ELOOP, f"{link} is a symlink (to {os.readlink(link)}), which agent does not follow: "
                      "move it away and start again", str(link))
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    return path


def move_aside(path: Path) -> Path:
    """Rename a damaged file or directory to ``<name>.corrupt-<YYYYmmdd-HHMMSS>`` beside it and return the new
    path; a SQLite file's journal goes along under the matching name."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    target = path.with_name(f"{path.name}.corrupt-{stamp}")
    n = 1
    while target.exists():
        n += 1
        target = path.with_name(f"{path.name}.corrupt-{stamp}-{n}")
    path.rename(target)
    for suffix in SQLITE_SIDE_FILES:
        side = path.with_name(path.name + suffix)
        if side.exists():
            side.rename(target.with_name(target.name + suffix))
    return target


def _fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
