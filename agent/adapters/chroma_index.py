"""The vector index on Chroma: one collection per user, cosine space, ids and vectors only.

Why one collection per user: a ``where`` filter on user costs 35 ms per query at 20,000 memories against
1.6 ms for a collection of its own. Why no documents: the text lives in the ledger, the source of truth, so a
damaged or lost Chroma directory loses nothing that ``agent memories rebuild`` cannot restore, and no memory text
is ever written into Chroma's files. The HNSW index is saved every ``SAVE_EVERY`` changes (its ``sync_threshold``),
not at every second write as before (that save, the whole id map and an fsync of each file, grows with the store:
on Chroma alone at 10,000 vectors single upserts took p50 19.4 ms against 10.9 with 64): what a save has not taken
yet is in Chroma's write log, which it replays at the next open. A delete does not wait for it: ``delete`` ends
with as many changes as the threshold, deletes of ids that are not there, so Chroma saves the index then and a
forgotten vector leaves its files before ``delete`` returns.

Opening the embedded store is guarded, because chromadb 1.5.9 fails in ways that must not reach the user raw
(all measured on this machine; the checks of its files live in ``chroma_files``):

- two processes writing one directory lose records: the opener holds an exclusive lock (``agent.locking``);
- a hung process holding ``chroma.sqlite3`` locked makes the open block for as long, with the GIL held, so no
  thread can time it out: the lock is probed first with Python's own SQLite and a bounded wait. That is safe only
  while Chroma does not have the file open in this process (closing a second handle would drop Chroma's POSIX
  locks), which the per-process client cache here guarantees;
- a 0-byte ``chroma.sqlite3`` opens as an empty store (every memory silently gone) and a damaged page panics in
  Rust (``PanicException``, not an ``Exception``): the file is checked (``quick_check``) before Chroma opens it,
  and a panic is caught anyway; both are reported as ``StoreCorrupt``;
- HNSW files torn by a kill or damaged on disk crash or hang the process at the first search or write (a truncated
  ``data_level0.bin`` segfaults, garbage link lists allocate without end): each segment is checked against its
  header before Chroma reads it, and what only a search reveals (a lost segment answers fewer hits than it holds)
  is caught by ``probe`` right after opening;
- Chroma migrates a store forward and can never go back: a sidecar file records the chromadb version that last
  wrote the store; a store of a newer chromadb is refused, and one of an older version is copied aside first;
- every write and every read of vectors by id is cut into batches of the client's own maximum
  (``get_max_batch_size``, 5,461 for the embedded store): one ``upsert`` above it is refused whole
  (``Batch size of 50000 is greater than max batch size of 5461``), which kept a store of 5,462 memories or more
  from ever restoring its lost index;
- a deleted vector is not gone: hnswlib keeps its bytes, a dropped collection's files stay on disk, and Chroma's
  SQLite keeps deleted rows in free pages. Vectors are overwritten with noise before they are deleted, and
  ``chroma.sqlite3`` is vacuumed once Chroma has let go of it, so forget leaves no copy of the vector either;
- hnswlib writes its ``malloc``'d room past the last element into the segment's files, whatever the process's
  heap held there (the user's words, measured): those bytes are zeroed after each write and delete, before each
  open and after each close.

Against a server (``HttpClient``) every call runs in a worker thread with a deadline, because the client's HTTP
session has no timeout and a server that stops answering would otherwise freeze the chat. After one deadline is
missed, calls fail at once until the server answers a heartbeat again (asked on a thread of its own), so a server
that was stopped and continued (``kill -STOP``, ``kill -CONT``, a paused VM) heals the chat as a restarted one does.
The embedded calls run inline: Chroma's Rust code keeps the GIL, so a watchdog thread could not fire anyway.
"""

from __future__ import annotations

import atexit
import hashlib
import importlib
import json
import logging
import os
import random
import re
import shutil
import sqlite3
import sys
import threading
import time
import types
from collections.abc import Callable, Iterator, Sequence
from contextlib import suppress
from functools import partial
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlparse

from agent import locking
from agent.adapters import chroma_files, disk
from agent.domain import VectorSpace
from agent.errors import AgentError, DiskFull, MemoryUnavailable, Remedy, StoreAway, StoreCorrupt
from agent.ports import IndexHit

log = logging.getLogger(__name__)
T = TypeVar("T")

SAVE_EVERY = 64  # changes between two saves of the HNSW index; see the module docstring and ``_flush``
HNSW_CONFIG = {"hnsw": {"space": "cosine", "sync_threshold": SAVE_EVERY, "batch_size": 2}}
COMPACT_MARK = "agent-compact"
LEDGER_MARK = "agent-ledger-mark"  # how far a collection is in step with the ledger, per collection
FLUSH_ID = "agent-flush"
RESET_MARK = "agent-reset"
LOCK_WAIT = 0.5
SERVER_TIMEOUT = 15.0
HEAL_POLL = 1.0
PROBE_K = 10
CLOSE_WAIT = 2.0
_POLL = 0.01

# How many ids one page of an embedded collection's listing (``ids``) holds: each page is an OFFSET query that walks
# the rows from the first, so pages of the client's batch (5,461) made listing 100,000 ids 3.5 s at load 7, against
# 0.8 in one page; 50,000 ids are a few MB.
IDS_PAGE = 50_000
# Used when a client cannot tell its maximum batch (a server answering -1): chromadb 1.5.9's embedded store takes
# 5,461 records per call.
FALLBACK_BATCH = 1000
_random = random.Random()
# Vectors overwritten with noise a call (``_scramble``): Chroma holds a call's records several times over while it
# applies them, and a rebuild scrambles the whole index (at 3,000 vectors, calls of 5,461 held 55 MB more at once).
SCRAMBLE_BATCH = 512

_clients: dict[Path, Any] = {}
_clients_mutex = threading.Lock()


# The module chromadb's telemetry imports as it is imported, for an exporter it makes only when the user turns
# OpenTelemetry on (``CHROMA_OTEL_GRANULARITY``); it brings gRPC and protobuf with it, 12 MB of RSS in every
# process that opens the index (an import of 100,000 memories peaked at ~490 MB with it, against a goal of 500).
_OTLP_EXPORTER = "opentelemetry.exporter.otlp.proto.grpc.trace_exporter"


def _defer_otlp_exporter() -> None:
    """Put a stand-in for ``_OTLP_EXPORTER`` in ``sys.modules`` until chromadb is imported, unless the module is
    there already: the stand-in imports the real one as soon as anything of it is used (the exporter made, any name
    read), so nothing changes for a user who turns telemetry on; without it, gRPC is never imported."""
    if _OTLP_EXPORTER in sys.modules:
        return

    def real() -> Any:
        if sys.modules.get(_OTLP_EXPORTER) is stand_in:
            del sys.modules[_OTLP_EXPORTER]
        return importlib.import_module(_OTLP_EXPORTER)

    stand_in = types.ModuleType(_OTLP_EXPORTER, "A stand-in until the exporter is made (agent.adapters.chroma_index).")
    stand_in.OTLPSpanExporter = lambda *args, **kwargs: real().OTLPSpanExporter(*args, **kwargs)  # type: ignore[attr-defined]
    def attribute(name: str) -> Any:
        if name.startswith("__"):  # what the import machinery asks of any module (``__path__``): not a use of it
            raise AttributeError(name)
        return getattr(real(), name)

    stand_in.__getattr__ = attribute  # type: ignore[method-assign]
    sys.modules[_OTLP_EXPORTER] = stand_in


def _chromadb() -> Any:
    """chromadb, imported, and from then on none of its ``Settings`` reads a ``.env``. chromadb's ``Settings``
    (pydantic-settings) read the working directory's ``.env`` by themselves: a cloned repository's file naming an
    implementation class (``CHROMA_PRODUCT_TELEMETRY_IMPL=evil.Api``) made it import and run that repository's code,
    and ``CHROMA_OTEL_*`` would have sent its telemetry elsewhere. Only the settings chromadb makes as it is imported
    still read the file (defaults for ``chromadb.Client``, which the agent never uses); a value chromadb refuses
    there stops the import, and is said in one line. The environment still applies: it is the user's."""
    if "chromadb" not in sys.modules:
        _defer_otlp_exporter()
    try:
        import chromadb
        import chromadb.config
    except ValueError as exc:  # pydantic's ValidationError is one
        raise MemoryUnavailable(
            "The memory index cannot start: chromadb reads the .env of the working directory itself, and a value "
            f"there is not one it takes ({_short(exc)}). Memory is off in this run: run agent from another "
            "directory, or fix that file.") from exc
    chromadb.config.Settings.model_config["env_file"] = None
    return chromadb


def _chroma_settings() -> Any:
    return _chromadb().config.Settings(anonymized_telemetry=False)


def similarity_from_distance(distance: float) -> float:
    """Chroma's cosine distance is ``1 - cos``; the similarity is therefore ``1 - distance`` (not ``1 - d/2``)."""
    return 1.0 - distance


def collection_name(user: str, namespace: str = "") -> str:
    """A valid Chroma name for any user string: a readable slug plus a hash that keeps users apart.

    ``namespace`` (the ledger's store id, used on a server) keeps apart the collections of two data directories
    that share one server: each holds the vectors of its own ledger only."""
    slug = re.sub(r"[^a-zA-Z0-9]+", "-", user).strip("-")[:40] or "user"
    key = f"{namespace}\x00{user}" if namespace else user
    digest = hashlib.sha256(key.encode("utf-8")).hexdigest()[:12]
    return f"mem-{slug}-{digest}"


def _noise(count: int, dimension: int) -> Any:
    """``count`` random unit vectors, as one float32 array: a rebuild scrambles every vector of the index, and the
    Python floats of 5,461 of them at a time (a read of the vectors, then the noise) held 130 MB and took 2.7 ms a
    vector (chromadb takes the array as it is)."""
    import numpy as np  # chromadb's own dependency, loaded with it: not on the paths that import neither

    vectors = np.random.default_rng(_random.getrandbits(128)).standard_normal((count, dimension))
    return (vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)).astype(np.float32)


def _short(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return text[:200]


def _is_panic(exc: BaseException) -> bool:
    """A Rust panic in Chroma's bindings arrives as ``pyo3_runtime.PanicException``, a ``BaseException``."""
    return type(exc).__name__ == "PanicException"


def _discard_system(identifier: str) -> None:
    """Drop a half-started store from Chroma's per-process cache, or the next open of the path would reuse it.

    Chroma cleans up after an ``Exception`` in its constructor but not after a Rust panic (a ``BaseException``)."""
    from chromadb.api.shared_system_client import SharedSystemClient

    SharedSystemClient._identifier_to_system.pop(identifier, None)
    SharedSystemClient._identifier_to_refcount.pop(identifier, None)


def _open_embedded(chroma_dir: Path) -> Any:
    chromadb = _chromadb()

    key = chroma_dir.absolute()
    with _clients_mutex:
        if key in _clients:
            return _clients[key]
        locking.acquire(chroma_dir, LOCK_WAIT)
        fresh = not (chroma_dir / "chroma.sqlite3").exists()
        client: Any = None
        try:
            chroma_files.check_version(chroma_dir)
            chroma_files.check_sqlite(chroma_dir)
            chroma_files.check_hnsw(chroma_dir)
            chroma_files.clear_slack(chroma_dir)
            _compact(chroma_dir, check_handles=False)
            try:
                client = chromadb.PersistentClient(path=str(key), settings=_chroma_settings())
            except BaseException as exc:
                if not isinstance(exc, Exception) and not _is_panic(exc):
                    raise
                _discard_system(str(key))
                what = f"The memory index at {chroma_dir} cannot be opened"
                raise _full(exc, chroma_dir, what, fresh) or StoreCorrupt(f"{what} ({_short(exc)}).",
                                                                          chroma_dir) from exc
            chroma_files.record_version(chroma_dir)
        except OSError as exc:  # the version backup or sidecar on a full or read-only disk
            if client is not None:  # opened before its sidecar failed: not used, and ``_full`` may remove it
                _close_quietly(client, key)
            locking.release(chroma_dir)
            what = f"The memory index at {chroma_dir} cannot be prepared"
            raise _full(exc, chroma_dir, what, fresh) or MemoryUnavailable(
                f"{what} ({exc.strerror}: {exc.filename})."
            ) from exc
        except BaseException:
            locking.release(chroma_dir)
            raise
        _clients[key] = client
        return client


def _full(exc: BaseException, chroma_dir: Path, what: str, fresh: bool) -> DiskFull | None:
    """``DiskFull`` if ``exc`` came from a full disk (``disk.full``), else None. A store this open was creating is
    removed then: it holds nothing, and left behind it would read as an empty, damaged store at the next start."""
    error = disk.full(exc, chroma_dir if chroma_dir.is_dir() else chroma_dir.parent, what)
    if error is not None and fresh:
        shutil.rmtree(chroma_dir, ignore_errors=True)
    return error


def load_library() -> None:
    """Import chromadb now (seconds on a loaded machine), so that a wait for the server counts the connection alone
    (``agent.app.memory_worker.ConnectWait``)."""
    _chromadb()


def _open_server(url: str) -> Any:
    chromadb = _chromadb()

    parsed = urlparse(url if "://" in url else f"http://{url}")

    def connect() -> Any:
        return chromadb.HttpClient(
            host=parsed.hostname or "127.0.0.1",
            port=parsed.port or (443 if parsed.scheme == "https" else 8000),
            ssl=parsed.scheme == "https",
            settings=_chroma_settings(),
        )

    try:
        return _with_deadline(connect, SERVER_TIMEOUT)
    except Exception as exc:
        raise StoreAway(
            f"The Chroma server at {url} cannot be reached ({_short(exc)}): start it with "
            "`chroma run --path DIR --host 127.0.0.1 --port PORT`, or unset AGENT_CHROMA_URL."
        ) from exc


def open_client(chroma_dir: Path | None, url: str | None) -> Any:
    """An embedded ``PersistentClient`` on ``chroma_dir`` (locked to this process), or an ``HttpClient`` on ``url``.

    The embedded client is opened once per process and directory; ``forget_clients`` closes it."""
    if url:
        return _open_server(url)
    assert chroma_dir is not None
    return _open_embedded(chroma_dir)


def close_client(chroma_dir: Path) -> None:
    """Close this process's embedded store on ``chroma_dir``, if open, and drop it from Chroma's cache, so a later
    open of the same path starts from the files on disk; the directory's lock is kept (see ``forget_clients``).
    Nothing is saved: what the HNSW index has not saved yet is in Chroma's write log, which the next open replays
    (a save here would cost each ``agent memories add`` process one, where the old setting cost every second)."""
    key = chroma_dir.absolute()
    with _clients_mutex:
        client = _clients.pop(key, None)
        if client is not None:
            _close_quietly(client, key)
        _discard_system(str(key))


def _close_quietly(client: Any, key: Path) -> None:
    """Close ``client`` and drop it from Chroma's cache; a store that failed mid-way may not close cleanly."""
    try:
        client.close()
    except Exception as exc:
        log.debug("closing the index at %s: %s", key, exc)
    _discard_system(str(key))


def forget_clients() -> None:
    """Close every embedded store this process opened, compact it after deletions, zero the heap bytes hnswlib
    wrote past its elements (``chroma_files.clear_slack``) and release its lock, so another process can use it.
    Registered to run at exit."""
    for path in list(_clients):
        close_client(path)
        try:
            _compact(path, check_handles=True)
            if not any(_held_open(segment_file, wait=0) for segment_file in path.glob("*/*.bin")):
                chroma_files.clear_slack(path)
        finally:
            locking.release(path)


atexit.register(forget_clients)


def _compact(chroma_dir: Path, check_handles: bool) -> None:
    """VACUUM ``chroma.sqlite3`` once vectors were deleted from it (``COMPACT_MARK``). Chroma's SQLite keeps deleted
    rows' bytes in free pages, so without this a forgotten memory's vector would stay readable in the file; VACUUM
    rewrites the file with live rows only (measured: no byte of the vector left). It runs with Python's SQLite,
    so only while this process has no handle on the file: before Chroma opens it, or after it is closed."""
    mark, db = chroma_dir / COMPACT_MARK, chroma_dir / "chroma.sqlite3"
    if not mark.exists() or not db.exists() or (check_handles and _held_open(db)):
        return
    try:
        connection = sqlite3.connect(db, timeout=chroma_files.SQLITE_WAIT, isolation_level=None)
        try:
            connection.execute("VACUUM")
        finally:
            connection.close()
    except sqlite3.Error as exc:  # a full disk, a lock: the mark stays, and the next open or exit tries again
        log.warning("Could not compact %s after a forget (%s); it is tried again at the next start.", db, exc)
        return
    mark.unlink()


def _held_open(path: Path, wait: float = CLOSE_WAIT) -> bool:
    """Whether this process still has ``path`` open after waiting up to ``wait`` seconds (Chroma closes its SQLite
    connections on a thread of its own, some milliseconds after ``close``); True when it cannot tell (no ``/proc``)."""
    handles = Path("/proc/self/fd")
    if not handles.is_dir():
        return True
    target = str(path.resolve())
    deadline = time.monotonic() + wait
    while True:
        held = False
        for handle in handles.iterdir():
            try:
                held = held or os.readlink(handle) == target
            except OSError:
                continue
        if not held or time.monotonic() >= deadline:
            return held
        time.sleep(_POLL)


def _save_now(collection: Any, batch: int) -> None:
    """Make Chroma save the collection's HNSW index now: delete as many ids that are not there as its
    ``sync_threshold``, and at least ``SAVE_EVERY`` (a segment loaded after ``_save_less_often`` has that, though
    the handle may still read the old value), ``batch`` at a time. Each is one change in Chroma's write log, and
    the HNSW segment saves itself once that many changes came in since its last save (chromadb 1.5.9's local
    segment counts every record it applies, deletes of unknown ids too), so it saves in this call wherever its
    count stood, and Chroma then drops its write log up to that save. Deletes of absent ids add no element to the
    index (the placeholder upserted and deleted before left one more deleted element at each forget)."""
    pads = [f"{FLUSH_ID}-{n}" for n in range(max(SAVE_EVERY, _sync_threshold(collection)))]
    for start in range(0, len(pads), batch):
        collection.delete(ids=pads[start : start + batch])


def _sync_threshold(collection: Any) -> int:
    hnsw = (collection.configuration or {}).get("hnsw") or {}
    return int(hnsw.get("sync_threshold") or SAVE_EVERY)


class _Timeout(Exception):
    """A call to the Chroma server outlived its deadline."""


def _with_deadline(fn: Callable[[], T], seconds: float) -> T:
    """Run ``fn`` in a daemon thread and wait ``seconds`` at most; the thread is left behind if it hangs."""
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:  # handed over to the caller's thread
            box["error"] = exc

    worker = threading.Thread(target=run, name="chroma-call", daemon=True)
    worker.start()
    worker.join(seconds)
    if worker.is_alive():
        raise _Timeout(f"no answer within {seconds:.0f} s")
    if "error" in box:
        raise box["error"]
    value: T = box["value"]
    return value


class ChromaIndex:
    """``VectorIndex`` on one Chroma collection of one user.

    ``remote`` marks a server client: its calls get a deadline, and after one is missed the index answers every
    later call with ``MemoryUnavailable`` at once instead of making the user wait again, until the server answers
    again (``_await_server``)."""

    def __init__(self, client: Any, user: str, location: str, namespace: str = "", remote: bool = False) -> None:
        self._client = client
        self._name = collection_name(user, namespace)
        self._location = location
        self._remote = remote
        self._compact_mark = None if remote else Path(location) / COMPACT_MARK
        self._ledger_mark = None if remote else Path(location) / f"{LEDGER_MARK}-{self._name}"
        self._collection: Any = None
        self._loaded = remote  # an embedded collection's segment is loaded by the first call on it
        self._broken: str | None = None
        self._batch: int | None = None

    @property
    def remote(self) -> bool:
        """Whether this is a server's collection, which other processes and machines write too."""
        return self._remote

    def ledger_mark(self) -> tuple[int, int] | None:
        """The mark of the ledger's vector copies (``Ledger.vector_changes``) this embedded collection was last saved
        in step with, or None (a server's collection, or none saved). A mark older than the collection's state is
        harmless: what changed since it is put in again, which changes nothing."""
        if self._ledger_mark is None:
            return None
        try:
            first, second = json.loads(self._ledger_mark.read_text())
            return int(first), int(second)
        except (OSError, ValueError, TypeError):
            return None

    def save_ledger_mark(self, mark: tuple[int, int]) -> None:
        """Record ``mark`` after the collection took in everything up to it. Not saved (a full disk) leaves the
        older mark, or none, and the next open compares more, never less."""
        if self._ledger_mark is None:
            return
        written = self._ledger_mark.with_name(self._ledger_mark.name + ".new")
        with suppress(OSError):
            written.write_text(json.dumps(list(mark)))
            os.replace(written, self._ledger_mark)

    def batch_size(self) -> int:
        """The most records the client takes in one call, as it reports it (asked once: a server answers it over
        the network)."""
        if self._batch is None:
            reported = self._call("report its batch size", lambda: int(self._client.get_max_batch_size()))
            self._batch = reported if reported > 0 else FALLBACK_BATCH
        return self._batch

    def _batches(self, ids: Sequence[str]) -> Iterator[tuple[int, list[str]]]:
        """``ids`` in slices the client accepts, each with its offset (to slice the matching vectors)."""
        size = self.batch_size()
        for start in range(0, len(ids), size):
            yield start, list(ids[start : start + size])

    def _call(self, what: str, fn: Callable[[], T]) -> T:
        if self._broken is not None:
            raise StoreAway(self._broken)
        try:
            result = _with_deadline(fn, SERVER_TIMEOUT) if self._remote else fn()
            if not self._loaded and self._collection is not None:
                # Loading the segment writes its files again, the room past its elements filled from this process's
                # heap (measured: an open's first count left 11 KB of it, an API key among it once): zeroed once.
                self._loaded = True
                self._clear_slack()
            return result
        except AgentError:
            raise
        except BaseException as exc:
            if not isinstance(exc, Exception) and not _is_panic(exc):
                raise
            full = None if self._remote else disk.full(
                exc, Path(self._location), f"The memory index at {self._location} failed to {what}",
                "Free some space: the next start indexes what the ledger holds and the index lacks.",
            )
            if full is not None:
                raise full from exc
            if self._remote:
                message = (
                    f"The Chroma server at {self._location} failed to {what} ({_short(exc)}): memory is unavailable "
                    "until it answers again; start it with `chroma run`, or unset AGENT_CHROMA_URL."
                )
                if isinstance(exc, _Timeout):
                    self._give_up(message)
                raise StoreAway(message) from exc
            raise MemoryUnavailable(
                f"The memory index at {self._location} failed to {what} ({_short(exc)}): {Remedy.REBUILD} to "
                "rebuild it from the ledger if this persists."
            ) from exc

    def _give_up(self, message: str) -> None:
        """Answer every call with ``message`` at once until the server answers a heartbeat again."""
        self._broken = message
        threading.Thread(target=self._await_server, name="chroma-heal", daemon=True).start()

    def _await_server(self) -> None:
        """Ask the server for a heartbeat until it answers, then let calls through again. The request has no
        deadline: a stopped server answers it the moment it runs again; a server that is gone refuses it at once,
        and it is asked again every ``HEAL_POLL`` seconds, so one started again on the same address is found too."""
        while True:
            try:
                self._client.heartbeat()
            except Exception as exc:
                log.debug("the Chroma server at %s does not answer yet: %s", self._location, exc)
                time.sleep(HEAL_POLL)
            else:
                log.debug("the Chroma server at %s answers again", self._location)
                self._broken = None
                return

    def _get(self, create: bool = False) -> Any:
        if self._collection is None:
            if create:
                self._collection = self._call(
                    "create its collection",
                    lambda: self._client.get_or_create_collection(
                        self._name, configuration=HNSW_CONFIG, embedding_function=None
                    ),
                )
            else:
                names = self._call("list collections", lambda: [c.name for c in self._client.list_collections()])
                if self._name not in names:
                    return None
                self._collection = self._call(
                    "open its collection",
                    lambda: self._client.get_collection(self._name, embedding_function=None),
                )
            self._save_less_often(self._collection)
        return self._collection

    def _save_less_often(self, collection: Any) -> None:
        """Raise the ``sync_threshold`` of a collection an older agent made (2: the index saved every second write)
        to ``SAVE_EVERY``. Only a setting changes, no stored vector; Chroma applies it from the next load of the
        segment, and ``_flush`` puts a delete on disk at once whichever of the two the loaded segment has."""
        if _sync_threshold(collection) < SAVE_EVERY:
            self._call("change how often it saves", lambda: collection.modify(
                configuration={"hnsw": {"sync_threshold": SAVE_EVERY}}))

    def space(self) -> VectorSpace | None:
        collection = self._get()
        if collection is None:
            return None
        meta = collection.metadata or {}
        if "embedder" not in meta:
            return None
        return VectorSpace(str(meta["embedder"]), str(meta["model"]), int(meta["dimension"]))

    def claim(self, space: VectorSpace) -> None:
        collection = self._get(create=True)
        name, model, dimension = space
        meta = {"embedder": name, "model": model, "dimension": dimension}
        self._call("record its embedder", lambda: collection.modify(metadata=meta))

    def upsert(self, ids: Sequence[str], vectors: Sequence[Sequence[float]]) -> None:
        if not ids:
            return
        import numpy as np  # chromadb's own dependency, loaded with it: not on the paths that import neither

        collection = self._get(create=True)
        for start, chunk in self._batches(ids):
            # One float32 array a call, which chromadb takes as it is: a list copy of each vector, then chromadb's
            # own array of each, cost two conversions of every float (2,048 vectors: 25 MB of Python floats).
            embeddings = np.asarray(vectors[start : start + len(chunk)], dtype=np.float32)
            self._call("save vectors", partial(collection.upsert, ids=chunk, embeddings=embeddings))
        self._clear_slack()

    def query(self, vector: Sequence[float], k: int) -> list[IndexHit]:
        collection = self._get()
        if collection is None or k <= 0:
            return []
        # chromadb 1.5 clamps n_results to the collection size itself (an empty one answers no ids); asking for
        # the count first cost 4-7 ms per turn.
        result = self._call(
            "search",
            lambda: collection.query(query_embeddings=[list(vector)], n_results=k, include=["distances"]),
        )
        ids, distances = result["ids"][0], result["distances"][0]
        return [IndexHit(id=i, similarity=similarity_from_distance(d)) for i, d in zip(ids, distances, strict=True)]

    def vectors(self, ids: Sequence[str]) -> dict[str, list[float]]:
        collection = self._get()
        if collection is None or not ids:
            return {}
        found: dict[str, list[float]] = {}
        for _, chunk in self._batches(ids):
            got = self._call("read vectors", partial(collection.get, ids=chunk, include=["embeddings"]))
            found.update((i, [float(x) for x in v]) for i, v in zip(got["ids"], got["embeddings"], strict=True))
        return found

    def ids(self) -> set[str]:
        """Every id in this user's collection (for reconciling the index with the ledger), in pages of the
        client's batch on a server and of ``IDS_PAGE`` embedded."""
        found: set[str] = set()
        size, offset = self.batch_size() if self._remote else max(self.batch_size(), IDS_PAGE), 0
        while True:
            page = self.id_page(offset, size)
            found.update(page)
            offset += len(page)
            if len(page) < size:
                return found

    def id_page(self, offset: int, size: int) -> list[str]:
        """At most ``size`` ids from the ``offset``-th in the collection's own order (the order records were first
        written: a rewrite keeps its place, a delete moves the later ones up)."""
        collection = self._get()
        if collection is None:
            return []
        return list(self._call("list its ids", partial(collection.get, include=[], limit=size, offset=offset))["ids"])

    def held(self, ids: Sequence[str]) -> set[str]:
        """Which of ``ids`` the collection holds, without reading their vectors."""
        collection = self._get()
        if collection is None or not ids:
            return set()
        found: set[str] = set()
        for _, chunk in self._batches(ids):
            found.update(self._call("read ids", partial(collection.get, ids=chunk, include=[]))["ids"])
        return found

    def delete(self, ids: Sequence[str]) -> None:
        collection = self._get()
        if collection is None or not ids:
            return
        self._mark_for_compaction()
        held = self._scramble(collection, ids)
        for _, chunk in self._batches(ids):
            self._call("delete vectors", partial(collection.delete, ids=chunk))
        if held:
            self._flush(collection)
        self._clear_slack()

    def _clear_slack(self) -> None:
        """Zero the heap bytes hnswlib wrote past the segment's elements when a write created it
        (``chroma_files.clear_slack``), right after the call, so no text of this process is left in the files
        between calls: a forget in a running chat does not wait for the exit."""
        if not self._remote:
            chroma_files.clear_slack(Path(self._location))

    def _flush(self, collection: Any) -> None:
        """Save the HNSW index now, with the delete and the noise written over it (``_save_now``): until that save,
        its id map (``index_metadata.pickle``) and Chroma's write log keep the deleted ids, and an id derives from
        the memory's text: it would confirm a guessed sentence. Measured: after this, and the vacuum at exit, no file
        of the store holds a deleted id or its vector."""
        batch = self.batch_size()
        self._call("flush deletions", lambda: _save_now(collection, batch))

    def _mark_for_compaction(self) -> None:
        """Before anything is deleted, so a kill in the middle still leaves the file to compact at the next open."""
        if self._compact_mark is not None:
            self._compact_mark.touch()

    def _scramble(self, collection: Any, ids: Sequence[str]) -> bool:
        """Overwrite vectors with noise before they are deleted: hnswlib only marks a deleted vector, and its bytes
        would stay in ``data_level0.bin``, where an embedding-inversion attack could read a forgotten memory back.
        (Measured: after scrambling, no byte of the forgotten vector is left in any file of the store.) Returns
        whether the index held any of ``ids``."""
        found, size = False, min(SCRAMBLE_BATCH, self.batch_size())
        for start in range(0, len(ids), size):
            chunk = list(ids[start : start + size])
            held = self._call("read vectors", partial(collection.get, ids=chunk, include=["embeddings"]))
            if held["ids"]:
                found = True
                shape = (len(held["ids"]), len(held["embeddings"][0]))
                self._call("overwrite vectors", partial(collection.upsert, ids=held["ids"], embeddings=_noise(*shape)))
        return found

    def count(self) -> int:
        collection = self._get()
        if collection is None:
            return 0
        return int(self._call("count", collection.count))

    def probe(self, expected: Sequence[tuple[str, Sequence[float]]] = ()) -> None:
        """Fail now, with ``StoreCorrupt``, where a damaged store would fail later or answer wrongly: count, search
        near a stored vector and expect as many hits as asked for (a lost HNSW segment answers fewer), and find each
        ``expected`` (id, vector) that the index says it holds by searching with that vector (a torn write leaves
        the id listed but its vector lost). Embedded stores only: a server's damage is its operator's to mend."""
        collection = self._get()
        if collection is None:
            return
        try:
            size = self.count()
            if size == 0:
                return
            sample = self._call("read a vector", lambda: collection.get(limit=1, include=["embeddings"]))
            hits = self.query(sample["embeddings"][0], PROBE_K)
            if len(hits) < min(PROBE_K, size):
                raise StoreCorrupt(
                    f"The memory index at {self._location} holds {size} vectors but finds only {len(hits)}.",
                    Path(self._location),
                )
            wanted = [mid for mid, _ in expected]
            held = set(self._call("read ids", lambda: collection.get(ids=wanted, include=[])["ids"]) if wanted else [])
            for mid, vector in expected:
                if mid in held and mid not in {hit.id for hit in self.query(vector, PROBE_K)}:
                    raise StoreCorrupt(
                        f"The memory index at {self._location} lists a memory but cannot find it by its vector.",
                        Path(self._location),
                    )
        except (StoreCorrupt, DiskFull):
            raise
        except MemoryUnavailable as exc:
            cause = _short(exc.__cause__ or exc)
            raise StoreCorrupt(f"The memory index at {self._location} fails when read ({cause}).",
                               Path(self._location)) from exc

    def reset(self) -> None:
        """Drop this user's collection; the next write creates it afresh. Chroma leaves a dropped collection's files
        on disk, so its vectors are scrambled and deleted first (see ``_scramble`` and ``_flush``). Until the drop, a
        mark says a reset is under way: a kill in the middle (of ``agent memories rebuild``) leaves noise under ids
        that look stored, which ``finish_reset`` clears at the next open."""
        collection = self._get()
        mark = self._reset_mark()
        if collection is not None:
            if mark is not None:
                mark.touch()
            self.delete(sorted(self.ids()))  # scrambled, and gone from the id map the dropped files keep
            self._call("drop its collection", lambda: self._client.delete_collection(self._name))
        if mark is not None:
            mark.unlink(missing_ok=True)
        self._collection = None

    def _reset_mark(self) -> Path | None:
        return None if self._remote else Path(self._location) / f"{RESET_MARK}-{self._name}"

    def finish_reset(self) -> bool:
        """Finish a reset that a kill cut short, so reconcile refills the collection from the ledger's copies
        instead of taking the noise left under its ids for stored vectors; True if there was one."""
        mark = self._reset_mark()
        if mark is None or not mark.exists():
            return False
        try:
            self.reset()
        except (StoreCorrupt, DiskFull):
            raise
        except MemoryUnavailable as exc:  # a store that cannot even be reset is set aside by the caller
            raise StoreCorrupt(f"The memory index at {self._location} cannot finish a reset that was cut short "
                               f"({_short(exc.__cause__ or exc)}).", Path(self._location)) from exc
        return True
