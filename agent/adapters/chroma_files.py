"""Checks of Chroma's files made before Chroma opens them, and the record of which chromadb wrote them.

Why before: chromadb 1.5.9 trusts its files, and damage it meets crashes or hangs the process instead of raising
(measured here): a truncated ``data_level0.bin`` segfaults on the first search, garbage in ``link_lists.bin``
makes the next write allocate without end, a 0-byte ``chroma.sqlite3`` opens as an empty store. And Chroma
migrates a store forward and can never go back, so the version that last wrote it is kept in a sidecar file.
Each check raises ``StoreCorrupt`` (or ``StoreLocked``, ``MemoryUnavailable``) with a sentence for the user.
"""

from __future__ import annotations

import io
import json
import logging
import os
import pickle
import re
import shutil
import sqlite3
import struct
import time
from collections.abc import Iterator
from importlib.metadata import version as package_version
from pathlib import Path
from typing import Any

from agent.adapters import disk
from agent.errors import MemoryUnavailable, Remedy, StoreCorrupt, StoreLocked
from agent.files import write_private

log = logging.getLogger(__name__)

VERSION_FILE = "agent-store.json"
SQLITE_WAIT = 2.0  # as the ledger's BUSY_WAIT: no start waits longer for another program's lock
_SQLITE_MAGIC = b"SQLite format 3\x00"
_HNSW_HEADER = struct.Struct("<I6QiI3QdQ")


def installed_chromadb() -> str:
    return package_version("chromadb")


def _version_key(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", text.split("+")[0])[:3])


def stored_chromadb(chroma_dir: Path) -> str | None:
    """The chromadb version recorded in the store's sidecar, or None when there is none (or it is unreadable)."""
    try:
        value = json.loads((chroma_dir / VERSION_FILE).read_text(encoding="utf-8")).get("chromadb")
    except (OSError, ValueError, AttributeError):
        return None
    return value if isinstance(value, str) and _version_key(value) else None


def written_by_newer_chromadb(chroma_dir: Path) -> bool:
    stored = stored_chromadb(chroma_dir)
    return stored is not None and _version_key(stored) > _version_key(installed_chromadb())


def check_version(chroma_dir: Path) -> None:
    """Refuse a store of a newer chromadb; copy a store of an older (or unrecorded) one aside before it migrates."""
    if not (chroma_dir / "chroma.sqlite3").exists():
        return
    installed = installed_chromadb()
    stored = stored_chromadb(chroma_dir)
    if stored == installed:
        return
    if stored is not None and _version_key(stored) > _version_key(installed):
        raise MemoryUnavailable(
            f"The memory index in {chroma_dir} was written by chromadb {stored}, newer than the installed "
            f"{installed}, which could damage it: install chromadb {stored}, or {Remedy.REBUILD} to set "
            "it aside and build a new index from the ledger."
        )
    name = f"{chroma_dir.name}.backup-{stored or 'unknown'}-{time.strftime('%Y%m%d-%H%M%S')}"
    backup, n = chroma_dir.with_name(name), 1
    while backup.exists():  # two migrations within a second
        n += 1
        backup = chroma_dir.with_name(f"{name}-{n}")
    try:
        shutil.copytree(chroma_dir, backup)
    except OSError:
        shutil.rmtree(backup, ignore_errors=True)  # half a copy is no backup, and it filled the disk further
        raise
    for older in version_backups(chroma_dir):
        if older != backup:
            shutil.rmtree(older, ignore_errors=True)
    log.info("chromadb %s will migrate the index written by %s; copied it to %s first", installed, stored, backup)


def version_backups(chroma_dir: Path) -> list[Path]:
    """The copies ``check_version`` made before a migration. One is kept, the latest: each is a copy of the
    index, which the ledger can rebuild, and every start on a store that keeps failing to migrate made one more."""
    return sorted(chroma_dir.parent.glob(f"{chroma_dir.name}.backup-*"))


def record_version(chroma_dir: Path) -> None:
    """Write the sidecar atomically (``write_private``), so a crash leaves the old or the new one."""
    installed = installed_chromadb()
    if stored_chromadb(chroma_dir) == installed:
        return
    write_private(chroma_dir / VERSION_FILE, json.dumps({"chromadb": installed}).encode("utf-8"), f".{VERSION_FILE}")


def check_sqlite(chroma_dir: Path) -> None:
    """Before Chroma opens ``chroma.sqlite3``: a missing, empty, foreign or damaged file is reported as damage
    (Chroma would open an empty file as an empty store, and panic on a damaged page); a lock held by another process
    is waited for ``SQLITE_WAIT`` seconds at most, here, where the wait can be bounded. ``quick_check`` takes
    milliseconds: the file holds Chroma's catalogue and recent log, not the vectors."""
    db = chroma_dir / "chroma.sqlite3"
    if not db.exists():
        if (chroma_dir / VERSION_FILE).exists():
            raise StoreCorrupt(f"The memory index in {chroma_dir} lost its chroma.sqlite3.", chroma_dir)
        return
    with db.open("rb") as handle:
        header = handle.read(len(_SQLITE_MAGIC))
    if header != _SQLITE_MAGIC:
        what = "is empty" if not header else "is not a SQLite database"
        raise StoreCorrupt(f"The memory index file {db} {what}.", chroma_dir)
    try:
        probe = sqlite3.connect(db, timeout=SQLITE_WAIT, isolation_level=None)
        try:
            probe.execute("BEGIN IMMEDIATE")
            probe.execute("ROLLBACK")
            check = probe.execute("PRAGMA quick_check").fetchone()[0]
        finally:
            probe.close()
    except sqlite3.OperationalError as exc:
        full = disk.full(exc, chroma_dir, f"The memory index file {db} cannot be checked")
        if full is not None:
            raise full from exc
        if "locked" in str(exc) or "busy" in str(exc):
            raise StoreLocked(
                f"Another process has held {db} locked for over {SQLITE_WAIT:.0f} s: end it (see `fuser {db}`), "
                "then start again."
            ) from exc
        check = str(exc)
    except sqlite3.DatabaseError as exc:
        check = str(exc)
    if check != "ok":
        detail = check.splitlines()[0][:200]
        raise StoreCorrupt(f"The memory index file {db} is damaged ({detail}).", chroma_dir)


class _Unchecked(Exception):
    """The pickle refers to a class: a format this check does not know, so it is not judged."""


class _PlainUnpickler(pickle.Unpickler):
    """Reads only plain containers, numbers and strings: it never imports or calls anything."""

    def find_class(self, module: str, name: str) -> Any:
        raise _Unchecked(f"{module}.{name}")


def check_hnsw(chroma_dir: Path) -> None:
    """Before Chroma reads them, check that each HNSW segment's files agree with its header.

    Why: Chroma trusts these files, and a file torn by a kill or damaged on disk crashes the whole process on the
    first search (a truncated ``data_level0.bin`` segfaults), or makes the next write allocate without end (garbage
    in ``link_lists.bin``), neither of which can be caught. The layout is hnswlib's as chromadb 1.5 writes it: a
    100-byte ``header.bin`` (format version, then the index parameters), ``data_level0.bin`` of ``max_elements``
    fixed-size records, ``link_lists.bin`` holding a u32 length and that many bytes per element, and
    ``index_metadata.pickle``, the id/label maps."""
    for header_file in sorted(chroma_dir.glob("*/header.bin")):
        segment = header_file.parent
        try:
            problem = _hnsw_problem(segment)
        except OSError as exc:
            problem = f"{exc.strerror}: {exc.filename}"
        if problem:
            raise StoreCorrupt(f"The memory index segment {segment} is damaged ({problem}).", chroma_dir)


def clear_slack(chroma_dir: Path) -> None:
    """Zero the bytes of each HNSW segment past its last element, in ``length.bin`` and ``data_level0.bin``.

    Why: hnswlib (chromadb 1.5.9) allocates room for ``max_elements`` with ``malloc`` and, when it creates a
    segment's files, writes the whole of it: the room past the elements holds whatever the process's heap held
    there before, and in the agent that is the user's own words (typed lines, request bodies). Measured: in a
    process whose threads had freed strings holding the user's words, five vectors written put those words in
    ``data_level0.bin`` (freed 400-byte buffers, in ``length.bin``), though Chroma never had any text. Those bytes
    are never read (a new element zeroes its record before use), so they are zeroed; only the blocks that hold
    any, so the file's holes stay holes. Run while no Chroma call is running (before it opens the store, after a
    write or a delete, after it closed it): the embedded store writes these files only inside a call (measured:
    nothing changes after one returns), the header's count first and then each element's record whole, and never
    writes the room past the elements again once the segment exists. A file that cannot be read or written is
    logged and tried again at the next call: never an error, since nothing is lost meanwhile."""
    for header_file in chroma_dir.glob("*/header.bin"):
        try:
            for name, used in element_bytes(header_file).items():
                _zero_from(header_file.parent / name, used)
        except OSError as exc:
            log.warning("Could not clear the unused bytes of %s (%s); tried again at the next write or open.",
                        exc.filename, exc.strerror)


def element_bytes(header_file: Path) -> dict[str, int]:
    """How many bytes of ``length.bin`` and ``data_level0.bin`` the segment's elements fill, by its header (none
    for a header of the wrong size, which ``check_hnsw`` names)."""
    header = header_file.read_bytes()
    if len(header) != _HNSW_HEADER.size:
        return {}
    fields = _HNSW_HEADER.unpack(header)
    count, record = fields[3], fields[4]
    return {"length.bin": count * 4, "data_level0.bin": count * record}


def _zero_from(path: Path, start: int) -> None:
    """Overwrite with zeros every block of ``path`` past ``start`` that holds a byte other than zero. A file whose
    room is clean is only read, so a clean store on a read-only disk is left alone without a warning."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    try:
        if next(_dirty_blocks(fd, start), None) is None:
            return
    finally:
        os.close(fd)
    fd = os.open(path, os.O_RDWR | os.O_NOFOLLOW)
    try:
        for at, size in list(_dirty_blocks(fd, start)):
            os.pwrite(fd, bytes(size), at)
        os.fsync(fd)
    finally:
        os.close(fd)


def _dirty_blocks(fd: int, start: int, block: int = 1 << 16) -> Iterator[tuple[int, int]]:
    """Offset and size of each block of ``fd`` past ``start`` holding a byte other than zero."""
    size, at = os.fstat(fd).st_size, start
    while at < size:
        chunk = os.pread(fd, min(block, size - at), at)
        if not chunk:
            return
        if chunk.count(0) != len(chunk):
            yield at, len(chunk)
        at += len(chunk)


def _hnsw_problem(segment: Path) -> str | None:
    header = (segment / "header.bin").read_bytes()
    if len(header) != _HNSW_HEADER.size:
        return f"header.bin has {len(header)} bytes, not {_HNSW_HEADER.size}"
    (version, _, max_elements, count, record, label_offset, data_offset, max_level, _, max_m, max_m0, m, mult,
     _) = _HNSW_HEADER.unpack(header)
    if not (version >= 1 and 0 < record and label_offset < record and data_offset < record and count <= max_elements
            and 0 < m <= 4096 and 0 < max_m <= 4096 and 0 < max_m0 <= 8192
            and (0 <= max_level < 256 or (max_level == -1 and count == 0))
            and 0.0 < mult < 16.0):
        return "header.bin holds impossible parameters"
    data = (segment / "data_level0.bin").stat().st_size
    if data < count * record:
        return f"data_level0.bin has {data} bytes, {count} elements need {count * record}"
    links = (segment / "link_lists.bin").read_bytes()
    link_record = max_m * 4 + 4
    at = 0
    for _ in range(count):
        if at + 4 > len(links):
            return "link_lists.bin is cut short"
        (size,) = struct.unpack_from("<I", links, at)
        if size % link_record or size > max_level * link_record:
            return "link_lists.bin holds an impossible length"
        at += 4 + size
    if at != len(links):
        return f"link_lists.bin has {len(links)} bytes, its lengths add up to {at}"
    try:
        metadata = _PlainUnpickler(io.BytesIO((segment / "index_metadata.pickle").read_bytes())).load()
    except _Unchecked:
        return None
    except FileNotFoundError:
        return None if count == 0 else "index_metadata.pickle is missing"
    except Exception as exc:  # a damaged pickle raises any of a dozen exception types
        return f"index_metadata.pickle cannot be read ({type(exc).__name__})"
    if not isinstance(metadata, dict) or not isinstance(metadata.get("id_to_label"), dict):
        return "index_metadata.pickle holds no id map"
    return None
