"""Recovery: damaged files are moved aside, the index is kept in step with the ledger, and rebuilt from it.

The ledger is the source of truth; the index can always be rebuilt from it. So a damaged file is never deleted or
overwritten: it is renamed to ``<name>.corrupt-<time>`` beside itself (a ledger together with its rollback
journal, which SQLite needs to make sense of it), and a new index is built from the ledger's text.

``reconcile`` runs at every open. A kill between the ledger write and the index write of a memory leaves the memory
without its vector, and one between the two halves of a forget leaves a vector without its text; a handful of
missing vectors is embedded at once, while a whole missing index (one set aside after damage) waits for an explicit
``agent memories rebuild``, because re-embedding thousands of memories takes minutes (or API calls).
"""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import TYPE_CHECKING

from agent.config import Settings
from agent.errors import EmbeddingError, StoreCorrupt
from agent.memory.service import space_of
from agent.ports import Embedder

if TYPE_CHECKING:
    from agent.adapters.chroma_index import ChromaIndex
    from agent.adapters.ledger import SqliteLedger

log = logging.getLogger(__name__)

RECONCILE_LIMIT = 64
SQLITE_SIDE_FILES = ("-journal", "-wal", "-shm")


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


def set_aside_index(chroma_dir: Path) -> Path:
    """Close the embedded store of ``chroma_dir`` in this process and move it aside, holding its lock meanwhile so
    no other process opens it half-moved."""
    from agent import locking
    from agent.adapters.chroma_index import LOCK_WAIT, close_client

    locking.acquire(chroma_dir, LOCK_WAIT)
    try:
        close_client(chroma_dir)
        return move_aside(chroma_dir)
    finally:
        locking.release(chroma_dir)


def reconcile(ledger: SqliteLedger, index: ChromaIndex, embedder: Embedder, user: str) -> None:
    """Make ``user``'s index hold the ledger's memories and nothing else, as far as it can be done now."""
    stored = set(ledger.ids(user))
    indexed = index.ids()
    orphans = indexed - stored
    if orphans:
        log.debug("index: dropping %d vectors whose memory is not in the ledger", len(orphans))
        index.delete(sorted(orphans))
    missing = sorted(stored - indexed)
    if not missing:
        return
    if len(missing) > RECONCILE_LIMIT:
        log.warning("%d of %d memories are not in the index, so chat cannot recall them: "
                    "run `agent memories rebuild`.", len(missing), len(stored))
        return
    records = ledger.get(user, missing)
    try:
        vectors = embedder.embed([records[i].text for i in missing])
    except EmbeddingError as exc:
        log.warning("%d memories are not in the index yet and could not be embedded now (%s).", len(missing), exc)
        return
    if index.space() is None:
        index.claim(space_of(embedder))
    index.upsert(missing, vectors)
    log.debug("index: embedded %d memories that had no vector", len(missing))


def rebuild_index(settings: Settings, embedder: str | None = None) -> tuple[int, Path | None]:
    """Rebuild this user's vector index from the ledger; returns (memories indexed, where an unusable index went).

    An index that opening finds damaged is moved aside by ``open_memory`` itself; one written by a newer chromadb
    (which opening refuses) is moved aside here, as the user asked for a new one."""
    from agent.adapters.chroma_index import written_by_newer_chromadb
    from agent.wiring import ensure_data_dir, open_memory

    paths = ensure_data_dir(settings.data_dir)
    moved = None
    if not settings.chroma_url and written_by_newer_chromadb(paths.chroma):
        moved = set_aside_index(paths.chroma)
    try:
        service = open_memory(settings, embedder=embedder, check=False)
    except StoreCorrupt as exc:
        if settings.chroma_url or exc.path is None or not exc.path.name.startswith(f"{paths.chroma.name}.corrupt-"):
            raise
        moved = exc.path
        service = open_memory(settings, embedder=embedder, check=False)
    return service.rebuild(), moved
