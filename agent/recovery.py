"""Recovery of the vector index from the ledger, the source of truth.

A damaged Chroma directory is never deleted or overwritten: it is moved aside to ``chroma.corrupt-<time>`` and a
new index is built from the ledger's text with the embedder the user asks for (or the configured one).
"""

from __future__ import annotations

import logging
import time
from pathlib import Path

from agent.config import Settings
from agent.errors import MemoryUnavailable
from agent.wiring import ensure_data_dir, open_memory

log = logging.getLogger(__name__)


def move_aside(path: Path) -> Path:
    """Rename a damaged file or directory to ``<name>.corrupt-<YYYYmmdd-HHMMSS>`` beside it and return the new path."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    target = path.with_name(f"{path.name}.corrupt-{stamp}")
    n = 1
    while target.exists():
        n += 1
        target = path.with_name(f"{path.name}.corrupt-{stamp}-{n}")
    path.rename(target)
    return target


def rebuild_index(settings: Settings, embedder: str | None = None) -> tuple[int, Path | None]:
    """Rebuild this user's vector index from the ledger; returns (memories indexed, where a damaged index went)."""
    try:
        return open_memory(settings, embedder=embedder, check=False).rebuild(), None
    except MemoryUnavailable as exc:
        if settings.chroma_url:
            raise
        log.debug("index unusable, moving it aside: %s", exc)
    from agent.adapters.chroma_index import forget_clients

    paths = ensure_data_dir(settings.data_dir)
    forget_clients()
    moved = move_aside(paths.chroma) if paths.chroma.exists() else None
    return open_memory(settings, embedder=embedder, check=False).rebuild(), moved
