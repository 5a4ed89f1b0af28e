"""The one place that builds adapters from settings and hands them to the core.

Everything else receives its collaborators through constructors, so tests build the same objects around fakes.
"""

from __future__ import annotations

import logging
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from agent.config import Settings
from agent.errors import ConfigError, StoreCorrupt
from agent.memory.retriever import FusionWeights
from agent.memory.service import Extractor, MemoryPolicy, MemoryService
from agent.ports import Embedder
from agent.recovery import MirroredIndex, Notify, drop_set_aside_indexes, move_aside, reconcile, set_aside_index

if TYPE_CHECKING:
    from agent.adapters.chroma_index import ChromaIndex
    from agent.adapters.ledger import SqliteLedger

log = logging.getLogger(__name__)
PROBE_LATEST = 3


@dataclass(frozen=True)
class DataPaths:
    """Where everything of one data directory lives."""

    root: Path

    @property
    def ledger(self) -> Path:
        return self.root / "ledger.sqlite3"

    @property
    def chroma(self) -> Path:
        return self.root / "chroma"

    @property
    def sessions(self) -> Path:
        return self.root / "sessions"

    @property
    def history(self) -> Path:
        return self.root / "history"


def ensure_data_dir(root: Path) -> DataPaths:
    """Create the data directory and keep what is in it private to the user, then return its paths.

    The directory is 0700 and every file the agent (or Chroma, or SQLite) creates from now on is 0600: the process
    umask gains 077, because Chroma creates its files with the umask's modes and cannot be asked otherwise. What an
    earlier run or an older version left readable by others is tightened here too.
    """
    os.umask(os.umask(0o077) | 0o077)
    try:
        root.mkdir(mode=0o700, parents=True, exist_ok=True)
        _tighten(root)
    except OSError as exc:
        raise ConfigError(f"The data directory {root} cannot be created or used ({exc.strerror}): "
                          "set AGENT_DATA_DIR or --data-dir to a writable directory.") from exc
    return DataPaths(root)


def _tighten(root: Path) -> None:
    """Drop group and other permissions from ``root`` and everything under it (symlinks are left alone)."""
    for path in (root, *root.rglob("*")):
        mode = path.lstat().st_mode
        if stat.S_ISLNK(mode) or not mode & 0o077:
            continue
        os.chmod(path, stat.S_IMODE(mode) & 0o700)


def build_embedder(kind: str, settings: Settings) -> Embedder:
    """The embedder called ``kind`` (``local`` or ``openai``), configured from settings."""
    if kind == "local":
        from agent.adapters.local_embedder import LocalEmbedder

        return LocalEmbedder(settings.local_model_dir)
    if kind == "openai":
        from agent.adapters.openai_client import make_client
        from agent.adapters.openai_embedder import OpenAIEmbedder

        return OpenAIEmbedder(make_client(settings), settings.embedding_model)
    raise ConfigError(f"Unknown embedder {kind!r}: use local or openai.")


def memory_policy(settings: Settings, weights: FusionWeights | None = None) -> MemoryPolicy:
    return MemoryPolicy(
        k=settings.memory_k,
        threshold=settings.memory_threshold,
        budget_tokens=settings.memory_tokens,
        capacity=settings.memory_capacity,
        writes_per_session=settings.memory_writes_per_session,
        grounding_threshold=settings.grounding_threshold,
        weights=weights or FusionWeights(),
    )


def open_memory(
    settings: Settings,
    embedder: str | None = None,
    extractor: Extractor | None = None,
    check: bool = True,
    notify: Notify | None = None,
) -> MemoryService:
    """The memory service of ``settings.user`` in the configured data directory (or Chroma server).

    ``embedder`` is an explicit request (``--embedder``); without one, an explicit ``AGENT_EMBEDDER`` counts as
    a request, and otherwise the store keeps the embedder it was built with. A request that differs from the
    store's is refused by ``check_space`` unless ``check`` is False (``reindex`` and ``rebuild`` re-embed on
    purpose, and skip reconciling the index with the ledger, which they are about to rebuild anyway).

    Every failure is an ``AgentError`` whose message is one line for the user; ``MemoryUnavailable`` and its
    subclasses mean the chat goes on without memory. A damaged ledger is moved to ``<name>.corrupt-<time>``
    (never deleted or overwritten) and the ``StoreCorrupt`` raised says where it went. A damaged embedded index is
    moved aside the same way and rebuilt from the ledger's copies of the vectors: memory stays available, and
    ``notify`` (by default a logged warning, which the CLI prints on stderr) tells the user in one line, as it
    tells anything else the open could not put right. The embedded store is held by this process until
    ``forget_clients`` (see ``agent.locking``).
    """
    from agent.adapters.ledger import SqliteLedger

    tell = notify or log.warning
    paths = ensure_data_dir(settings.data_dir)
    try:
        ledger = SqliteLedger(paths.ledger)
    except StoreCorrupt as exc:
        moved = move_aside(paths.ledger)
        raise StoreCorrupt(
            f"{exc} It was moved aside to {moved} and a new, empty ledger starts next time; the moved file still "
            f"holds the text of your memories (`sqlite3 {moved} .recover` may save it).",
            moved,
        ) from exc
    try:
        chroma, set_aside = _open_index(settings, paths, ledger, tell)
        index = MirroredIndex(chroma, ledger, settings.user)
        requested = embedder or (settings.embedder if settings.embedder != "auto" else None)
        recorded = index.space()
        kind = requested or (recorded[0] if recorded else settings.resolved_embedder)
        service = MemoryService(
            ledger, index, build_embedder(kind, settings), settings.user, memory_policy(settings), extractor
        )
        if check:
            service.check_space()
            done = reconcile(ledger, index, service.embedder, settings.user, tell)
            if done.restored and not set_aside:  # a set-aside index was announced as rebuilt from the ledger already
                tell(f"The memory index lacked {done.restored} of {service.count()} memories; they were restored "
                     "from the ledger.")
            if done.whole and not settings.chroma_url:
                drop_set_aside_indexes(paths.chroma)
    except BaseException:
        ledger.close()
        raise
    return service


def _open_index(
    settings: Settings, paths: DataPaths, ledger: SqliteLedger, notify: Notify
) -> tuple[ChromaIndex, bool]:
    """The user's index on the Chroma server, or in the embedded store after a health probe, and whether it was
    set aside: an embedded index that fails the probe is moved aside and a fresh one opened (``reconcile`` then
    fills it from the ledger)."""
    from agent.adapters.chroma_index import ChromaIndex, open_client

    if settings.chroma_url:
        client = open_client(None, settings.chroma_url)
        remote = ChromaIndex(client, settings.user, settings.chroma_url, namespace=ledger.store_id(), remote=True)
        return remote, False
    try:
        index = ChromaIndex(open_client(paths.chroma, None), settings.user, str(paths.chroma))
        index.finish_reset()
        index.probe(ledger.latest_vectors(settings.user, PROBE_LATEST))
    except StoreCorrupt as exc:
        moved = set_aside_index(paths.chroma)
        notify(f"{exc} It was moved aside to {moved} and is rebuilt from the ledger (that copy goes once it is).")
        return ChromaIndex(open_client(paths.chroma, None), settings.user, str(paths.chroma)), True
    return index, False
