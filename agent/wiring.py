"""The composition root: the one place that builds adapters from settings and hands them to the core, the store
and the chat.

Everything else receives its collaborators through constructors, so tests build the same objects around fakes; no
other module imports ``agent.adapters``: even the doctor's checks (``agent.app.doctor``) take their probes from here
(``doctor_probes``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from concurrent.futures import Future
from contextlib import AbstractContextManager, nullcontext, suppress
from pathlib import Path
from typing import TYPE_CHECKING

from agent.adapters.index_holder import HeldIndex
from agent.adapters.mirrored_index import drop_set_aside_indexes, lacked, reconcile, set_aside_index
from agent.app.chat_engine import ChatEngine, ChatEvents, DeferredChatModel, in_background
from agent.app.chat_options import ChatOptions
from agent.app.data_dir import DataPaths, ensure_data_dir, machine_of, places_of
from agent.app.doctor import OpenStore, PingChat, Probes
from agent.app.memory_worker import OPEN_WAIT, ConnectWait, MemoryWorker
from agent.config import EmbedderKind, Settings, embedder_kind, user_config_file
from agent.conversation import Conversation, model_summarizer
from agent.domain import VectorSpace
from agent.errors import ConfigError, StoreCorrupt
from agent.files import move_aside
from agent.machine import machine_name
from agent.memory.attributes import HeadStore
from agent.memory.policy import FusionWeights, MemoryPolicy
from agent.memory.service import Extractor, MemoryService
from agent.ports import ChatModel, Embedder, Ledger, Notify, WarmsUp
from agent.sessions import Session, SessionStore

if TYPE_CHECKING:
    from agent.adapters.ledger_vectors import LedgerVectors
    from agent.adapters.openai_client import Endpoint
    from agent.server import ServerInfo

log = logging.getLogger(__name__)
PROBE_LATEST = 3


def build_embedder(kind: str, settings: Settings) -> Embedder:
    """The embedder called ``kind``, configured from settings. ``kind`` is a string, as a store records the embedder
    it was built with: one of no ``EmbedderKind`` is refused with ``ConfigError``."""
    try:
        chosen = embedder_kind(kind)
    except ValueError:
        raise ConfigError(f"Unknown embedder {kind!r}: use local or openai.") from None
    if chosen == "local":
        from agent.adapters.local_embedder import LocalEmbedder

        return LocalEmbedder(settings.local_model_dir)
    from agent.adapters.openai_client import make_client
    from agent.adapters.openai_embedder import OpenAIEmbedder

    return OpenAIEmbedder(make_client(endpoint(settings)), settings.embedding_model)


def _head_files(embedder: Embedder) -> HeadStore | None:
    """Where the local model's attribute head is kept between processes (the model cache); no other embedder has a
    head to keep."""
    if embedder.name != "local":
        return None
    from agent.adapters.head_files import HeadFiles

    return HeadFiles()


def endpoint(settings: Settings) -> Endpoint:
    """The model server of ``settings``, as the plain values the OpenAI adapters take."""
    from agent.adapters.openai_client import Endpoint

    return Endpoint(settings.base_url, settings.api_key, settings.timeout, settings.max_retries, user_config_file())


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
    embedder: EmbedderKind | Embedder | None = None,
    extractor: Extractor | None = None,
    check: bool = True,
    notify: Notify | None = None,
    connecting: Callable[[], AbstractContextManager[None]] = nullcontext,
    ledger_only: bool = False,
    ledger: Ledger | None = None,
    warm_up: bool = False,
    sweep_later: bool = False,
    group_writes: bool = False,
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
    ``connecting`` surrounds each step that waits on a server (``agent.app.memory_worker.ConnectWait``).
    With ``ledger_only`` the ledger's own vector copies stand in for the index and Chroma is not opened: a command
    that reads the ledger only must not wait for, or fail with, a Chroma server that is down or frozen.
    ``ledger`` is one the caller built (``build_ledger``) and keeps a handle on, to finish forgets with it: the
    service's own is no one else's to reach; it is closed here if the open fails.

    With ``warm_up`` (a chat's memory thread) what the first recall waits for loads on threads beside the open:
    chromadb's import of an embedded index while the ledger opens (its check reads the whole file: 0.3 s at 100,000
    memories, in SQLite's C code, which lets the import run), and the embedder's model while the index opens,
    whenever the embedder is known before it (asked for, or recorded in the ledger): the model's load overlapping
    the import took 0.35-0.45 s off the first turn at load 7. The threads have ended when this returns or raises
    (one still inside onnxruntime at exit aborts the process); what fails in them fails again where it is used.

    With ``sweep_later`` (a chat, whose memory thread runs ``MemoryService.sweep_index`` between turns) an embedded
    index that has no saved mark to resume from is compared with the ledger in pieces after the open, not during
    it (``agent.adapters.mirrored_index.Sweep``): at 100,000 memories that compare took 4.5-5.1 s before the first
    prompt. An index just set aside, or on a server, is compared here as before.

    With ``group_writes`` (a chat, whose memory thread flushes between turns and at its close) the vectors a write
    stores reach the ledger in the call and Chroma in groups (``HeldIndex.group_writes``): a write costs one
    embedding and the ledger's transactions, not Chroma's upsert, and the next search consults what is pending. Not
    on a Chroma server: the other machines search the server, where a vector pending here is not until the flush,
    and two machines' chats grouping their writes onto one server met its "Error creating hnsw segment reader:
    Nothing found on disk" on a search (tests/system/test_shared_deployment.py, once in two runs).
    """
    tell = notify or log.warning
    paths = ensure_data_dir(settings.data_dir)
    _load_drivers(settings)
    loading: list[Future[None]] = []
    if warm_up and not ledger_only and not settings.chroma_url:
        loading.append(in_background(_import_chromadb, "chromadb-import"))
    try:
        if ledger is None:
            with connecting() if settings.database_url else nullcontext():
                ledger = build_ledger(settings, paths)
    except BaseException:
        _wait_for(loading)
        raise
    try:
        if embedder is None or isinstance(embedder, str):
            known = _embedder_asked(embedder, settings, ledger.vector_space(settings.user))
            embedder = build_embedder(known, settings) if known else embedder
        if warm_up and isinstance(embedder, WarmsUp):
            loading.append(in_background(embedder.warm_up, "model-load"))
        with connecting() if settings.chroma_url and not ledger_only else nullcontext():
            index, set_aside = (_ledger_index(ledger, settings.user) if ledger_only
                                else _open_index(settings, paths, ledger, tell, hold=not check))
        if embedder is None or isinstance(embedder, str):
            kind = _embedder_asked(embedder, settings, index.space()) or settings.resolved_embedder
            embedder = build_embedder(kind, settings)
        _group(index, group_writes and not settings.chroma_url)
        service = MemoryService(ledger, index, embedder, settings.user, memory_policy(settings), extractor,
                                heads=_head_files(embedder))
        if check:
            service.check_space()
            if isinstance(index, HeldIndex):  # the index of a process that works from the ledger is the ledger
                later = sweep_later and not set_aside and not settings.chroma_url
                done = reconcile(ledger, index, service.embedder, settings.user, tell, defer=later)
                restored = done.restored - done.recent  # the recent: another machine's write on its way
                if restored and not set_aside:  # a set-aside index was announced as rebuilt already
                    tell(lacked(restored, service.count()))
                if done.whole and not settings.chroma_url:
                    drop_set_aside_indexes(paths.chroma)
    except BaseException:
        ledger.close()
        raise
    finally:
        _wait_for(loading)
    return service


def _import_chromadb() -> None:
    from agent.adapters.chroma_index import load_library

    load_library()


def _wait_for(loading: list[Future[None]]) -> None:
    """Until each thread ``open_memory`` started has ended; a failure there is met again where the thing is used
    (an import, the model's load), so it is not raised here."""
    for future in loading:
        future.exception()


def _embedder_asked(embedder: str | None, settings: Settings, recorded: VectorSpace | None) -> str | None:
    """The embedder ``open_memory`` builds: the one asked for (``embedder``, else an explicit ``AGENT_EMBEDDER``),
    else the one the store's vectors were made with (``recorded``); None when neither says."""
    requested = embedder or (settings.embedder if settings.embedder != "auto" else None)
    return requested or (recorded.embedder if recorded else None)


def _load_drivers(settings: Settings) -> None:
    """Import the clients of the servers in ``settings`` now: that takes seconds on a loaded machine and is no wait
    on a server, which ``connecting`` in ``open_memory`` counts alone."""
    if settings.database_url:
        with suppress(ImportError):  # build_ledger says what is missing
            import agent.adapters.postgres_ledger  # noqa: F401
    if settings.chroma_url:
        from agent.adapters.chroma_index import load_library

        load_library()


def _ledger_index(ledger: Ledger, user: str) -> tuple[LedgerVectors, bool]:
    from agent.adapters.ledger_vectors import LedgerVectors

    return LedgerVectors(ledger, user), False


def _group(index: HeldIndex | LedgerVectors, group_writes: bool) -> None:
    """Let the held index batch what a chat writes into Chroma (``HeldIndex.group_writes``); the ledger's own copies
    (another process holds the store) have nothing to batch."""
    if group_writes and isinstance(index, HeldIndex):
        index.group_writes()


def _open_index(
    settings: Settings, paths: DataPaths, ledger: Ledger, notify: Notify, hold: bool
) -> tuple[HeldIndex | LedgerVectors, bool]:
    """The user's index and whether it was set aside: on the Chroma server, caught up with the ledger before each
    search as the held embedded store is; or the embedded store, after a health probe, when this process holds it
    (an index that fails the probe is moved aside and a fresh one opened, which ``reconcile`` then fills from the
    ledger); or, when another process holds it, the ledger's own vector copies (``agent.adapters.index_holder``
    says why). ``hold`` waits briefly for the store instead: rebuild and reindex rewrite it."""
    from agent import locking
    from agent.adapters.chroma_index import LOCK_WAIT, ChromaIndex, open_client
    from agent.adapters.ledger_vectors import LedgerVectors

    if settings.chroma_url:
        client = open_client(None, settings.chroma_url)
        remote = ChromaIndex(client, settings.user, settings.chroma_url, namespace=ledger.store_id(), remote=True)
        return HeldIndex(remote, ledger, settings.user), False
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


def set_aside_newer_index(settings: Settings) -> Path | None:
    """Move aside an embedded index that a newer chromadb wrote (opening refuses it) and say where it went; None
    when there is none, or the index is on a Chroma server (``agent.app.maintenance.rebuild_index``)."""
    from agent.adapters.chroma_files import written_by_newer_chromadb

    paths = ensure_data_dir(settings.data_dir)
    if settings.chroma_url or not written_by_newer_chromadb(paths.chroma):
        return None
    return set_aside_index(paths.chroma)


def drop_index_copies(settings: Settings) -> None:
    """Delete the copies of the embedded index set aside earlier, once a rebuilt one holds every memory."""
    if not settings.chroma_url:
        drop_set_aside_indexes(ensure_data_dir(settings.data_dir).chroma)


def build_ledger(settings: Settings, paths: DataPaths) -> Ledger:
    """The ledger of ``settings``, opened: the one place that picks its adapter. With ``AGENT_DATABASE_URL``, the
    PostgreSQL database that several machines share (one that cannot be reached is ``MemoryUnavailable``, naming it,
    never its password); otherwise the data directory's SQLite file.

    A damaged ledger is moved to ``<name>.corrupt-<time>`` (never deleted or overwritten) and the ``StoreCorrupt``
    raised says where it went."""
    if settings.database_url:
        try:
            from agent.adapters.postgres_ledger import PostgresLedger
        except ImportError as exc:
            raise ConfigError(f"AGENT_DATABASE_URL needs the PostgreSQL driver, which is not installed ({exc.name}): "
                              "pip install 'agent[postgres]', or unset AGENT_DATABASE_URL.") from exc
        ledger = PostgresLedger(settings.database_url, timeout=settings.database_timeout)
        try:  # the forgets of this user's memories now wait for this machine's files too (agent.forget)
            ledger.register_machine(machine_of(settings, paths), settings.user, machine_name())
        except BaseException:
            ledger.close()
            raise
        return ledger
    from agent.adapters.ledger import SqliteLedger

    try:
        return SqliteLedger(paths.ledger)
    except StoreCorrupt as exc:
        moved = move_aside(paths.ledger)
        raise StoreCorrupt(
            f"{exc} It was moved aside to {moved} and a new, empty ledger starts next time; the moved file still "
            f"holds the text of your memories (`sqlite3 {moved} .recover` may save it).",
            moved,
        ) from exc


def existing_ledger(settings: Settings, paths: DataPaths) -> Ledger | None:
    """The ledger of ``settings`` if there is one yet, as it is (never set aside, unlike ``build_ledger``): a
    start that only looks for unfinished work must not create one, and leaves a damaged one for the memory
    commands to report. None for a database: a chat does not wait for a
    server before its first prompt (the memory commands, which open it anyway, finish its forgets). Its file is not
    checked whole: that look, before the first prompt, read every page for a few rows (0.3 s at 100,000 memories,
    0.85 s more to the first prompt than at 1,000 at load 7), and the memory's open checks it and reports damage."""
    if settings.database_url or not paths.ledger.exists():
        return None
    from agent.adapters.ledger import SqliteLedger

    return SqliteLedger(paths.ledger, check=False)


def check_endpoint(settings: Settings) -> None:
    """Refuse, in one line, a model endpoint that cannot be used, before the chat opens anything."""
    from agent.adapters.openai_client import check_endpoint as check

    check(endpoint(settings))


def build_chat(
    settings: Settings,
    options: ChatOptions,
    store: SessionStore,
    session: Session,
    events: ChatEvents,
    model: ChatModel | None = None,
    saving: bool = True,
) -> tuple[ChatEngine, MemoryWorker | None]:
    """The chat engine of ``session`` and its memory worker (None with ``--no-memory``), telling ``events`` what
    happens; without ``saving`` the session is never written. ``model`` is used as it is (benchmarks bring theirs);
    without it the OpenAI-compatible client is built in the background, as are the probe of the server and the
    memory store."""
    from agent.adapters.openai_chat import chat_model
    from agent.adapters.openai_models import served_models
    from agent.adapters.server_probe import probe
    from agent.extract import model_extractor
    from agent.server import server_profile
    from agent.tokens import warm_up as warm_up_tokens

    in_background(warm_up_tokens, "tokens")
    chat = model or DeferredChatModel(lambda: chat_model(endpoint(settings), settings.max_tokens,
                                                         on_retry=events.on_retry, options=dict(options.sampling)))
    # The summary and extraction calls go where the chat's requests go (``placement``, once the server is probed).
    conversation = Conversation(settings.context_tokens,
                                model_summarizer(chat, settings.model, lambda: conversation.placement))
    conversation.resume(session.turns, session.context_start, session.summary)
    conversation.system = options.system
    paths = DataPaths(settings.data_dir, settings.user)
    worker = None
    if not options.no_memory:
        extractor = None
        if settings.llm_extract:
            extractor = model_extractor(chat, settings.model, events.on_extraction_failed,
                                        lambda: conversation.placement)
        # A server may not answer at all: the turns wait OPEN_WAIT at most for a connection to it.
        wait = ConnectWait(OPEN_WAIT)
        worker = MemoryWorker(lambda: open_memory(settings, extractor=extractor, connecting=wait.connecting,
                                                  warm_up=True, sweep_later=True, group_writes=True),
                              events.on_write, read_only=options.read_only,
                              spool=paths.spool_of(), machine=machine_of(settings, paths),
                              policy=memory_policy(settings), open_wait=wait, on_back=events.on_memory_back)
    server = in_background(lambda: server_profile(probe(settings.base_url, settings.api_key, settings.model),
                                                  model=settings.model,
                                                  system_prompt=settings.system_prompt,
                                                  max_tokens=settings.max_tokens), "server-probe")
    engine = ChatEngine(chat, settings.model, conversation, store, session, worker, server=server,
                        max_tokens=settings.max_tokens, catalog=lambda: served_models(endpoint(settings)),
                        places=places_of(paths, machine_of(settings, paths)), saving=saving,
                        alias=settings.model_aliases.get)
    return engine, worker


def doctor_probes(settings: Settings) -> Probes:
    """What ``agent doctor`` probes, built as a chat builds it: the model server, the embedder, the store."""
    return Probes(_DoctorServer(settings), lambda kind: build_embedder(kind, settings), _DoctorStore(settings),
                  settings.data_dir)


class _DoctorServer:
    """The model server of ``settings`` through the OpenAI adapters (``agent.app.doctor.ModelServer``)."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings

    def check_endpoint(self) -> None:
        check_endpoint(self.settings)

    def probe(self) -> ServerInfo:
        from agent.adapters.server_probe import probe

        return probe(self.settings.base_url, self.settings.api_key, self.settings.model)

    def chat(self, max_tokens: int) -> PingChat:
        from agent.adapters.openai_chat import chat_model

        return chat_model(endpoint(self.settings), max_tokens, max_retries=0)


class _DoctorStore:
    """The memory store of ``settings`` (``agent.app.doctor.StoreOpener``): its lock, and its open without checks."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings

    def holder(self) -> str | None:
        from agent import locking

        chroma = self.settings.data_dir / "chroma"
        if self.settings.chroma_url or not self.settings.data_dir.is_dir() or locking.try_acquire(chroma):
            return None
        return locking.holder(chroma)

    def open(self, notify: Notify) -> OpenStore:
        return open_memory(self.settings, check=False, notify=notify)
