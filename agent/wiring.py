"""The one place that builds adapters from settings and hands them to the core.

Everything else receives its collaborators through constructors, so tests build the same objects around fakes.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from agent.config import Settings
from agent.errors import AgentError, ConfigError, StoreCorrupt, UsageError
from agent.forget import Places, finish_cut_short
from agent.memory.retriever import FusionWeights
from agent.memory.service import Extractor, MemoryPolicy, MemoryService
from agent.ports import Embedder, Ledger
from agent.recovery import MirroredIndex, Notify, drop_set_aside_indexes, move_aside, reconcile, set_aside_index
from agent.sessions import SessionStore
from agent.spool import Spool

if TYPE_CHECKING:
    from agent.adapters.ledger import VectorLedger
    from agent.adapters.ledger_vectors import LedgerVectors

log = logging.getLogger(__name__)
PROBE_LATEST = 3


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
# history, the turns waiting for the store (``spool``), and temp files a kill left (``.history.<hex>.tmp``). Only
# these are tightened, and a directory holding nothing else is a store made by a version older than the marker.
OWN_ENTRY = re.compile(r"""\.?(?:ledger\.sqlite3|chroma|sessions|history|spool)(?:-wal|-shm|-journal)?
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
    embedder: str | Embedder | None = None,
    extractor: Extractor | None = None,
    check: bool = True,
    notify: Notify | None = None,
) -> MemoryService:
    """The memory service of ``settings.user`` in the configured data directory (or Chroma server).

    ``embedder`` is an explicit request: a kind (``--embedder``), or an ``Embedder`` used as it is (tests and
    benchmarks bring theirs); without one, an explicit ``AGENT_EMBEDDER`` counts as a request, and otherwise the
    store keeps the embedder it was built with. A request that differs from the store's is refused by
    ``check_space`` unless ``check`` is False (``reindex`` and ``rebuild`` re-embed on purpose, and skip
    reconciling the index with the ledger, which they are about to rebuild anyway).

    Every failure is an ``AgentError`` whose message is one line for the user; ``MemoryUnavailable`` and its
    subclasses mean the chat goes on without memory. A damaged ledger is moved to ``<name>.corrupt-<time>``
    (never deleted or overwritten) and the ``StoreCorrupt`` raised says where it went. A damaged embedded index is
    moved aside the same way and rebuilt from the ledger's copies of the vectors: memory stays available, and
    ``notify`` (by default a logged warning, which the CLI prints on stderr) tells the user in one line, as it
    tells anything else the open could not put right. The embedded store is held by the first process that opens
    it, until ``forget_clients`` (see ``agent.locking``); any other works from the ledger alone, never waiting.
    """
    tell = notify or log.warning
    paths = ensure_data_dir(settings.data_dir)
    ledger = build_ledger(settings, paths)
    try:
        index, set_aside = _open_index(settings, paths, ledger, tell, hold=not check)
        if embedder is None or isinstance(embedder, str):
            requested = embedder or (settings.embedder if settings.embedder != "auto" else None)
            recorded = index.space()
            embedder = build_embedder(requested or (recorded[0] if recorded else settings.resolved_embedder), settings)
        service = MemoryService(ledger, index, embedder, settings.user, memory_policy(settings), extractor)
        if check:
            service.check_space()
            if isinstance(index, MirroredIndex):  # the index of a process that works from the ledger is the ledger
                done = reconcile(ledger, index, service.embedder, settings.user, tell)
                if done.restored and not set_aside:  # a set-aside index was announced as rebuilt already
                    tell(f"The memory index lacked {done.restored} of {service.count()} memories; they were "
                         "restored from the ledger.")
                if done.whole and not settings.chroma_url:
                    drop_set_aside_indexes(paths.chroma)
    except BaseException:
        ledger.close()
        raise
    return service


def build_ledger(settings: Settings, paths: DataPaths, set_aside: bool = True) -> VectorLedger:
    """The ledger of ``settings``, opened: the one place that picks its adapter. With ``AGENT_DATABASE_URL``, the
    PostgreSQL database that several machines share; otherwise the data directory's SQLite file.

    A damaged SQLite ledger is moved to ``<name>.corrupt-<time>`` (never deleted or overwritten) and the
    ``StoreCorrupt`` raised says where it went; without ``set_aside`` it is left where it is, for the memory
    commands to report. A database that cannot be reached is ``MemoryUnavailable``, naming it, never its password."""
    if settings.database_url:
        try:
            from agent.adapters.postgres_ledger import PostgresLedger
        except ImportError as exc:
            raise ConfigError(f"AGENT_DATABASE_URL needs the PostgreSQL driver, which is not installed ({exc.name}): "
                              "pip install 'agent[postgres]', or unset AGENT_DATABASE_URL.") from exc
        return PostgresLedger(settings.database_url)
    from agent.adapters.ledger import SqliteLedger

    try:
        return SqliteLedger(paths.ledger)
    except StoreCorrupt as exc:
        if not set_aside:
            raise
        moved = move_aside(paths.ledger)
        raise StoreCorrupt(
            f"{exc} It was moved aside to {moved} and a new, empty ledger starts next time; the moved file still "
            f"holds the text of your memories (`sqlite3 {moved} .recover` may save it).",
            moved,
        ) from exc


def _open_index(
    settings: Settings, paths: DataPaths, ledger: VectorLedger, notify: Notify, hold: bool
) -> tuple[MirroredIndex | LedgerVectors, bool]:
    """The user's index and whether it was set aside: on the Chroma server; or the embedded store, after a health
    probe, when this process holds it (an index that fails the probe is moved aside and a fresh one opened, which
    ``reconcile`` then fills from the ledger); or, when another process holds it, the ledger's own vector copies
    (``agent.index_holder`` says why). ``hold`` waits briefly for the store instead: rebuild and reindex rewrite it."""
    from agent import locking
    from agent.adapters.chroma_index import LOCK_WAIT, ChromaIndex, open_client
    from agent.adapters.ledger_vectors import LedgerVectors
    from agent.index_holder import HeldIndex

    if settings.chroma_url:
        client = open_client(None, settings.chroma_url)
        remote = ChromaIndex(client, settings.user, settings.chroma_url, namespace=ledger.store_id(), remote=True)
        return MirroredIndex(remote, ledger, settings.user), False
    if hold:
        locking.acquire(paths.chroma, LOCK_WAIT)
    elif not locking.try_acquire(paths.chroma):
        return LedgerVectors(ledger, settings.user), False
    try:
        index = ChromaIndex(open_client(paths.chroma, None), settings.user, str(paths.chroma))
        index.finish_reset()
        index.probe(ledger.latest_vectors(settings.user, PROBE_LATEST))
    except StoreCorrupt as exc:
        moved = set_aside_index(paths.chroma)
        notify(f"{exc} It was moved aside to {moved} and is rebuilt from the ledger (that copy goes once it is).")
        fresh = ChromaIndex(open_client(paths.chroma, None), settings.user, str(paths.chroma))
        return HeldIndex(fresh, ledger, settings.user), True
    return HeldIndex(index, ledger, settings.user), False


def finish_forgets(paths: DataPaths, notify: Notify, ledger: Ledger | None = None) -> None:
    """Finish the forgets a kill or Ctrl-C cut short (``agent.forget``): every start of the agent calls this, and
    ``notify`` says what it did in one line. ``ledger`` is the one the caller has open; without it the ledger is
    opened here, if there is one, and one that cannot be opened now is left for the memory commands to report."""
    from agent.adapters.ledger import SqliteLedger

    own = None
    if ledger is None:
        if not paths.ledger.exists():
            return
        try:
            ledger = own = SqliteLedger(paths.ledger)
        except AgentError as exc:
            log.debug("no forget finished: %s", exc)
            return
    try:
        line = finish_cut_short(ledger, lambda user: places_of(paths.for_user(user)))
    except AgentError as exc:
        line = f"A forget that was cut short could not be finished now ({exc}); the next start tries again."
    finally:
        if own is not None:
            own.close()
    if line:
        notify(line)


def places_of(paths: DataPaths) -> Places:
    """The session files, the input history and the waiting turns of ``paths``' user, where a forget of theirs
    scrubs."""
    return Places(SessionStore(paths.sessions, paths.user), paths.history, paths.root, Spool(paths.spool))
