"""One chat turn as data, with no terminal code: recall, assemble, stream, persist, then remember off the path.

    user line -> recall(probe = the line) -> messages -> model stream -> session file (durable) -> write gate

The REPL drives a turn in three steps (``begin``, ``stream``, ``finish``) so it can render the stream and catch
Ctrl-C between them; whatever happens, ``finish`` records the turn with its true status: complete, interrupted,
truncated (no finish reason, or "length") or failed. Every turn's line goes through the write gate: what is
remembered is what the user said, which a reply that broke off does not change.

Long-term memory lives on one background thread (``MemoryWorker``): opening Chroma and loading the embedding
model take about a second, so they happen while the user types, and the write after each reply does not hold up
the next prompt. One thread also means the store is never used by two threads at once.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable, Generator, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Protocol, TypeVar

from agent.conversation import DEFAULT, Conversation, Fold, Leaving
from agent.domain import CONTEXT, ForgetRecord, Message, Turn, TurnStatus
from agent.errors import (
    AgentError,
    ChatError,
    ContextOverflow,
    DiskFull,
    EmbedderMismatch,
    MemoryUnavailable,
    SessionError,
    SpoolFull,
    StoreAway,
    StoreCorrupt,
    StoreOpening,
    SystemRoleRefused,
)
from agent.forget import Forgotten, Places, begin, drop_vectors, finish, hold_back, scrub_session
from agent.memory.canonical import canonical
from agent.memory.policy import MemoryPolicy
from agent.memory.service import MemoryService, Recall, WriteReport, keeps, refuse
from agent.ports import ChatChunk, ChatModel, RetryNotice
from agent.server import Placement, ServerProfile, request_limit
from agent.sessions import Session, SessionStore
from agent.spool import Spool, Spooled
from agent.tokens import count_tokens

log = logging.getLogger(__name__)
T = TypeVar("T")
# How much of the previous reply is indexed as the context of the next line: its end holds the question.
CONTEXT_CHARS = 400
# How long the first turn waits for the probe of the server (``agent.server``) before going ahead without it.
PROBE_WAIT = 4.0
# How many times a request refused as too long for the server is trimmed and sent again.
OVERFLOW_RETRIES = 2
# How long the turns wait for a connection to the store's server at start (``ConnectWait``): one that does not
# answer must not hold up the replies; the open goes on in the background and a later turn uses the store.
OPEN_WAIT = 4.0
# The pause before opening again a store that was away at start, doubled after each failure up to the last.
REOPEN_FIRST = 0.5
REOPEN_MAX = 10.0
OPENING = "Long-term memory has not finished opening: its server is slow to answer."
# How much of a message that carries attached text (a piped document, a file) probes memory: the user's words come
# first in it, and a whole document would make a keyword query of thousands of words.
PROBE_CHARS = 2_000
# How many turns waiting in the spool are written before the recall of the turn on which memory answers again, so
# it recalls what was said during the outage; the rest are written after the recall, before this turn's own words,
# off the reply path. Each costs one write (bench/spool_replay.py: RESULTS.md has the figures on the servers).
REPLAY_BEFORE_RECALL = 8
# What a waiting turn that a forget made since names becomes: nothing, and this line.
FORGOTTEN_SINCE = ("its words are not remembered: a forget made after they were said (here or on another machine) "
                   "names them")


def in_background(build: Callable[[], T], name: str) -> Future[T]:
    """Run ``build`` on a daemon thread now; the future holds its result or its exception."""
    future: Future[T] = Future()

    def run() -> None:
        try:
            future.set_result(build())
        except BaseException as exc:  # handed to whoever waits on the future
            future.set_exception(exc)

    threading.Thread(target=run, name=name, daemon=True).start()
    return future


def memory_failure(exc: Exception) -> AgentError:
    """``exc`` as an error the chat reports in one line and survives: a bug in the memory layer (a library that
    chokes on some input, say) costs this turn its memories, never the chat."""
    if isinstance(exc, AgentError):
        return exc
    log.debug("the memory layer failed", exc_info=exc)
    return MemoryUnavailable(f"{type(exc).__name__}: {exc}")


def passing(error: AgentError) -> bool:
    """Whether ``error`` says the store cannot be used now but may be soon (a database or index server gone away, a
    lock held too long): a turn is then worth keeping for later. Damage, a full disk and a store of another
    embedder are not cured by waiting."""
    return isinstance(error, MemoryUnavailable) and not isinstance(error, StoreCorrupt | DiskFull | EmbedderMismatch)


class DeferredChatModel:
    """A ``ChatModel`` built in the background (importing the OpenAI SDK takes most of a second)."""

    def __init__(self, build: Callable[[], ChatModel]) -> None:
        self._model = in_background(build, "chat-model")

    def stream(self, messages: Sequence[Message], model: str) -> Iterator[ChatChunk]:
        return self._model.result().stream(messages, model)


@dataclass(frozen=True)
class WriteOutcome:
    """What became of one background write: the gate's report, or the error that stopped it."""

    turn: int
    report: WriteReport | None = None
    error: AgentError | None = None
    spooled: bool = False  # the store did not answer (``error`` says how): the turn waits in the spool
    replayed: bool = False  # a turn that waited in the spool, written now
    note: str = ""  # what became of a waiting turn that was not written (a forget names it, it cannot be read)


@dataclass(frozen=True)
class ChatOptions:
    """The chat's command-line flags. ``system`` replaces the system prompt for this run; ``sampling`` are the
    request options passed through to the model (``agent.sampling``); ``no_session``: no session file is written
    (a session named with ``session`` or ``resume_latest`` still is); ``lines``: standard input is a script, one
    turn per line."""

    session: str | None = None
    resume_latest: bool = False
    no_memory: bool = False
    read_only: bool = False
    plain: bool = False
    debug: bool = False
    system: str | None = None
    sampling: tuple[tuple[str, float], ...] = ()
    no_session: bool = False
    lines: bool = False


class ChatEvents(Protocol):
    """What a running chat tells its front end, each from the thread it happens on: a background memory write
    landed or failed (the memory thread), a request to the model is about to be retried (the request's thread),
    the model's fact extraction failed (the memory thread; the turn is still remembered), memory away since the
    start answers again (the memory thread). The composition root hands one such object to the parts it builds, so
    they reach the front end without knowing it."""

    def on_write(self, outcome: WriteOutcome) -> None: ...

    def on_retry(self, notice: RetryNotice) -> None: ...

    def on_extraction_failed(self, error: ChatError) -> None: ...

    def on_memory_back(self) -> None: ...


class ConnectWait:
    """How long the turns wait for the open of the store at start: as long as its own work takes (imports, a
    schema migration, loading the embedding model: slow on a loaded machine, but it ends), and for a connection
    to a server (``connecting``) at most ``limit`` seconds, as a frozen server never answers one."""

    def __init__(self, limit: float) -> None:
        self.limit = limit
        self.settled = False  # the open has succeeded or failed
        self._changed = threading.Condition()
        self._since: float | None = None  # when the connection being made began

    @contextmanager
    def connecting(self) -> Iterator[None]:
        with self._changed:
            self._since = time.monotonic()
            self._changed.notify_all()
        try:
            yield
        finally:
            with self._changed:
                self._since = None
                self._changed.notify_all()

    def settle(self) -> None:
        with self._changed:
            self.settled = True
            self._changed.notify_all()

    def wait(self) -> bool:
        """Until the open settles (True), or a connection has taken ``limit`` (False)."""
        with self._changed:
            while not self.settled:
                left = None if self._since is None or math.isinf(self.limit) else (
                    self._since + self.limit - time.monotonic())
                if left is not None and left <= 0:
                    return False
                self._changed.wait(left)
            return True

    def late(self) -> bool:
        """Whether the open is held by a connection past ``limit`` now."""
        with self._changed:
            return not self.settled and self._since is not None and time.monotonic() - self._since >= self.limit


class MemoryWorker:
    """Every use of the memory service, on one thread. ``call`` waits for its answer; ``observe`` does not.
    ``read_only`` is a promise the callers keep (the chat writes nothing, the commands refuse to) and the worker
    keeps for what it writes on its own: the ``last_seen`` of recalled memories.

    ``on_write`` hears about every background write, from the worker thread. ``close`` lets pending writes
    finish: the process never exits with a write half done.

    A turn the gate keeps while the store does not answer (``passing``) waits in ``spool`` (``agent.spool``) and is
    written, before anything newer, by the first write after the store answers again; turns an earlier run left
    there are written once the store opens. Never one that a forget names (``_replay``): the forgets ``machine``
    (this data directory, ``agent.machine``) has not finished are taken out of the spool first, and an entry that
    a forget made since it was said names is dropped, even once every machine has finished that forget.

    A store whose server does not answer when the chat starts (``StoreAway``) leaves memory *away*, not off: what
    the gate keeps (judged by ``policy``, as the store would) and every ``/remember`` go to the spool, and a thread
    of its own opens the store again, pausing longer after each failure (``REOPEN_FIRST`` doubling up to
    ``REOPEN_MAX``), so that no recall, write or command ever waits on a connection to a server that may be frozen.
    The store it opens is handed to the memory thread, which says so (``on_back``) and writes the spool, in order.
    ``open_wait`` says how long a call waits for the store opening at start: as long as its own work takes, but not
    for a connection to a server past its limit (``ConnectWait``; none: a store on this machine, which answers or
    fails but does not freeze).
    """

    def __init__(
        self,
        open_service: Callable[[], MemoryService],
        on_write: Callable[[WriteOutcome], None],
        read_only: bool = False,
        spool: Spool | None = None,
        *,
        policy: MemoryPolicy | None = None,
        open_wait: ConnectWait | None = None,
        on_back: Callable[[], None] | None = None,
        machine: str = "",
    ) -> None:
        self.read_only = read_only  # --read-only: recall, and never write (not even when a memory was last seen)
        self.spool = None if read_only else spool
        self.machine = machine
        self._store_ids: dict[MemoryService, str] = {}  # each open store's ledger id, read once
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="memory")
        self._on_write = on_write
        self._on_back = on_back
        self._policy = policy or MemoryPolicy()
        self._pending: list[Future[WriteOutcome] | Future[None]] = []
        self._service: MemoryService | None = None  # set on the memory thread once the store is open
        self._error: AgentError | None = None  # why it is not: away (opened again later) or failed for good
        self._closing = threading.Event()
        self._opening = open_wait or ConnectWait(math.inf)  # settled once the open at start succeeds or fails
        self._late = False  # something went without the store because it was still opening (``StoreOpening``)
        # Current memories (those /memories lists), refreshed after every change; None until the store opens.
        self.count: int | None = None
        self._pool.submit(self._open_first, open_service)

    def _open(self, open_service: Callable[[], MemoryService]) -> MemoryService:
        """Open the store and load the embedding model now, so the first recall does not wait for them."""
        try:
            service = open_service()
            self.count = service.current_count()  # known once the store opens: the model may take seconds more
            self._note_forgets(service)
            warm_up = getattr(service.embedder, "warm_up", None)
            if callable(warm_up):
                warm_up()
            _warm_index(service)
        except AgentError:
            raise
        except Exception as exc:  # a bug in the memory layer must not take the chat down with it
            log.debug("opening memory failed", exc_info=True)
            raise MemoryUnavailable(f"The memory store could not be opened ({type(exc).__name__}: {exc}).") from exc
        return service

    def _open_first(self, open_service: Callable[[], MemoryService]) -> None:
        """The open at start, on the memory thread (before any task: the thread takes them in order); then the
        turns an earlier run, or this one while the store was opening, left in the spool are written."""
        self._tell_spool()
        try:
            service = self._open(open_service)
        except AgentError as exc:
            self._error = exc
            self._opening.settle()
            if isinstance(exc, StoreAway):
                threading.Thread(target=self._reopen, args=(open_service,), name="memory-reopen", daemon=True).start()
            return
        self._service = service
        self._opening.settle()  # before the spool is replayed: a recall waits for that on the memory thread
        if self._late and self._on_back is not None:  # turns went without memory while it was opening
            self._on_back()
        self._replay(service)

    def _tell_spool(self) -> None:
        """Say once, at start, that the spool cannot be used (a symlink): nothing is kept or read there."""
        problem = None if self.spool is None else self.spool.problem()
        if problem is not None:
            self._on_write(WriteOutcome(0, note=f"what this chat cannot write to memory is not kept on this machine "
                                                f"either: {problem}"))

    def _reopen(self, open_service: Callable[[], MemoryService]) -> None:
        """Open the store that was away at start again until it answers, off the memory thread (a frozen server
        holds this thread for its connection timeout, and nothing else), and hand it to the memory thread."""
        pause = REOPEN_FIRST
        while not self._closing.wait(pause):
            try:
                service = self._open(open_service)
            except StoreAway as exc:
                log.debug("memory still away: %s", exc)
                pause = min(pause * 2, REOPEN_MAX)
                continue
            except AgentError as exc:  # the server answers now, and refuses (a newer schema): memory is off
                self._error = exc
                return
            try:
                self._pool.submit(self._adopt, service)
            except RuntimeError:  # the chat ended meanwhile: nothing will use the store
                service.ledger.close()
            return

    def _adopt(self, service: MemoryService) -> None:
        """Memory answers again: from now on it is used, and what waits in the spool is written first."""
        self._service, self._error = service, None
        if self._on_back is not None:
            self._on_back()
        self._replay(service)

    def _store(self) -> MemoryService:
        """The open store, on the memory thread; raises why there is none (the open at start ran first)."""
        if self._service is None:
            assert self._error is not None
            raise self._error.with_traceback(None)
        return self._service

    @property
    def failed(self) -> bool:
        """True once opening the store has failed for a reason waiting does not cure: memory is unusable for the
        rest of this run."""
        return self._opening.settled and self._error is not None and not self.away

    @property
    def away(self) -> bool:
        """True while the store's server, away when the chat started, has not answered since."""
        return isinstance(self._error, StoreAway)

    def call(self, task: Callable[[MemoryService], T]) -> T:
        """Run ``task`` with the service on the memory thread and return its result (or raise its error). While the
        store is away it raises at once, and a store still opening is waited for, but not past the limit of a
        after the start at most (``StoreOpening``)."""
        error = self._error
        if isinstance(error, StoreAway):
            raise error.with_traceback(None)
        if not self._opening.wait():
            self._late = True
            raise StoreOpening(OPENING)

        def run() -> T:
            service = self._store()
            try:
                result = task(service)
            except AgentError:
                raise
            except Exception as exc:
                raise memory_failure(exc) from exc
            self.count = service.current_count()
            return result

        return self._pool.submit(run).result()

    def recall(self, line: str) -> Recall:
        """The memories for ``line``, recalled after the oldest turns waiting in the spool are written (at most
        ``REPLAY_BEFORE_RECALL``): on the turn memory answers again, what was said while it was away is recalled
        too. A store still away answers the replay with the error the recall would meet: it is not asked twice."""

        def task(service: MemoryService) -> Recall:
            waiting = self._replay(service, REPLAY_BEFORE_RECALL)
            if waiting is not None:
                raise waiting
            self._note_forgets(service)
            return service.recall(line)

        return self.call(task)

    def observe(self, text: str, *, session: str, turn: int, context: str = "", finished: bool = True,
                again: bool = False) -> Future[WriteOutcome]:
        """Queue the user's words of one turn for the write gate; the outcome goes to ``on_write`` and then to the
        returned future (so whoever waits on it finds the receipt printed). ``context`` is the reply those words
        answer: indexed for keyword search beside the memory, never stored as one. For a turn whose reply did not
        finish (``finished`` False) the model's extraction is held back; ``again`` says the same words were observed
        before, unfinished, and only that extraction is still to do."""

        def write() -> WriteOutcome:
            service: MemoryService | None = None
            try:
                service = self._store()
                if again and not service.extracts:
                    return WriteOutcome(turn)
                waiting = self._replay(service)
                if waiting is not None:  # older turns wait for the store: this one goes after them
                    raise waiting
                report = service.observe(
                    text, session=session, turn=turn, extra={CONTEXT: context} if context else None,
                    extract=finished,
                )
                self.count = service.current_count()
            except Exception as exc:  # reported like any failed write, never lost in the worker thread
                outcome = failed(memory_failure(exc), service)
            else:
                outcome = WriteOutcome(turn, report=report)
            self._on_write(outcome)
            return outcome

        def failed(error: AgentError, service: MemoryService | None) -> WriteOutcome:
            if passing(error) and not keeps(self._policy if service is None else service.policy, text):
                return WriteOutcome(turn)  # the store is away, and the gate keeps nothing of these words
            unkept = self._keep(Spooled(text, session, turn, time.time(), context, finished), error)
            return WriteOutcome(turn, error=unkept or error, spooled=unkept is None)

        self._pending = [f for f in self._pending if not f.done()]
        if self._opening_late():  # the memory thread is held by the open: the turn waits in the spool at once
            outcome = failed(StoreOpening(OPENING), None)
            self._on_write(outcome)
            return _done(outcome)
        future = self._pool.submit(write)
        self._pending.append(future)
        return future

    def remember(self, text: str, *, session: str, turn: int) -> WriteOutcome:
        """``/remember``: store ``text`` as given (after what waits in the spool), or, while the store does not
        answer, keep it in the spool with the turns (``spooled``, ``error`` says why); a refusal, and any failure
        waiting does not cure, is raised."""

        def run() -> WriteOutcome:
            try:
                service = self._store()
                waiting = self._replay(service)
                if waiting is not None:
                    raise waiting
                report = service.remember(text, session=session, turn=turn)
            except Exception as exc:
                error = memory_failure(exc)
                unkept = kept(error)
                if unkept is not None:
                    if unkept is exc:
                        raise
                    raise unkept from exc
                return WriteOutcome(turn, error=error, spooled=True)
            self.count = service.current_count()
            return WriteOutcome(turn, report=report)

        def kept(error: AgentError) -> AgentError | None:
            """None once the words wait in the spool, else the error to raise."""
            refuse(text)  # what no memory may hold is refused now, not when the store is back
            return self._keep(Spooled(text, session, turn, time.time(), explicit=True), error)

        if self._opening_late():
            error = StoreOpening(OPENING)
            unkept = kept(error)
            if unkept is not None:
                raise unkept
            return WriteOutcome(turn, error=error, spooled=True)
        return self._pool.submit(run).result()

    def unspool(self, session: str, turn: int, text: str) -> int:
        """Take the words of turn ``turn`` of ``session`` out of the spool (``/undo`` of a turn the store did not
        answer for), so they are never remembered; returns how many entries went. On the memory thread, which
        replays the spool, so a replay is never half-way through one of them; a ``/remember`` typed after the turn,
        which carries its number, stays. While the open at start is held by a server that does not answer, the
        memory thread is too, and replays nothing until it is free: then it is done here."""
        spool = self.spool
        if spool is None:
            return 0

        said = canonical(text)  # the spool keeps the line as typed, the session its canonical form

        def run() -> int:
            mine = [path for path, entry in spool.waiting() if not entry.explicit
                    and (entry.session, entry.turn, canonical(entry.text)) == (session, turn, said)]
            for path in mine:
                spool.done(path)
            return len(mine)

        return run() if self._opening_late() else self._pool.submit(run).result()

    def _opening_late(self) -> bool:
        """Whether the open at start has waited on a server past its limit: the memory thread is held by a
        connection that may never answer, so nothing more waits for it."""
        late = self._opening.late()
        self._late = self._late or late
        return late

    def _keep(self, entry: Spooled, error: AgentError) -> AgentError | None:
        """Put ``entry`` in the spool if the store's failure is ``passing``: None once it is there, else the error to
        report for the turn (``error``, with why the spool could not take it when it was tried: full, or not
        writable)."""
        if self.spool is None or not passing(error):
            return error
        try:
            self.spool.add(entry)
        except SpoolFull as exc:
            return MemoryUnavailable(f"{error} It is not kept on this machine either: {exc}.")
        except OSError as exc:
            log.debug("the turn could not be spooled: %s", exc)
            return MemoryUnavailable(f"{error} It could not be kept on this machine either ({exc.strerror}).")
        return None

    def _store_id(self, service: MemoryService) -> str:
        if service not in self._store_ids:
            self._store_ids[service] = service.ledger.store_id()
        return self._store_ids[service]

    def _note_forgets(self, service: MemoryService) -> None:
        """Keep, with the spool, how far this machine knows the ledger's forgets now: a turn spooled from now on was
        said after them, and is the user's own again (``agent.spool``)."""
        if self.spool is not None:
            try:
                self.spool.note(self._store_id(service), service.ledger.forget_mark())
            except (AgentError, OSError) as exc:  # without it, turns kept from now on are judged as knowing none
                log.debug("the forgets known were not noted: %s", exc)

    def _replay(self, service: MemoryService, most: int | None = None) -> AgentError | None:
        """Write the spool's turns to memory, oldest first (the ``most`` oldest, if given), each reported through
        ``on_write``; stop at the first that meets the store still away, and return that error (None once they are
        written). A turn that fails for another reason leaves the spool, reported like any failed write: waiting
        would not help it. One that cannot be read as a turn, or that the memory layer fails on with an error of
        its own (a bug, data it chokes on), is set aside, said in one line, and the others go on.

        Never written: what a forget names. The forgets this machine has not finished are taken out of the spool
        first (``agent.forget.hold_back``), and an entry a forget recorded after it was said names is dropped
        (``Ledger.forgotten_since``): one whose record every machine had finished and dropped included."""
        if self.spool is None or not self.spool.has_waiting():
            return None
        try:
            hold_back(service.ledger, service.user, self.machine, self.spool)
            store = self._store_id(service)
        except AgentError as exc:  # this turn's own write waits behind them, and meets the same error
            return exc
        except OSError as exc:  # a spool file that cannot be rewritten: its turn must not be written unscrubbed
            log.debug("the spool could not be scrubbed: %s", exc)
            return MemoryUnavailable(f"The turns kept on this machine could not be checked against the forgets "
                                     f"({exc.strerror}).")
        for path, entry in self.spool.entries()[:most]:
            if isinstance(entry, str):
                self._set_aside(path, entry, 0)
                continue
            try:
                outcome = self._replay_one(service, entry, entry.mark if entry.store == store else 0)
            except AgentError as exc:
                if passing(exc):
                    return exc
                outcome = WriteOutcome(entry.turn, error=exc, replayed=True)
            except Exception as exc:  # the memory layer chokes on this entry: the others must not wait behind it
                log.debug("replaying %s failed", path, exc_info=True)
                self._set_aside(path, f"{type(exc).__name__}: {exc}", entry.turn)
                continue
            self.spool.done(path)
            self._on_write(outcome)
        return None

    def _replay_one(self, service: MemoryService, entry: Spooled, known: int) -> WriteOutcome:
        """Write one waiting turn, unless a forget recorded after the ``known``-th (``Ledger.forget_mark``: another
        ledger's count says nothing of this one's, so 0) names its words: checked before anything is written, and
        after, for a forget that committed while it was written (then what it wrote of those words is forgotten
        again, as that forget would have forgotten it)."""
        forgotten = service.ledger.forgotten_since
        if forgotten(service.user, [entry.text], known):
            return WriteOutcome(entry.turn, replayed=True, note=FORGOTTEN_SINCE)
        if entry.explicit:
            report = service.remember(entry.text, session=entry.session, turn=entry.turn, when=entry.when)
        else:
            report = service.observe(entry.text, session=entry.session, turn=entry.turn, when=entry.when,
                                     extra={CONTEXT: entry.context} if entry.context else None,
                                     extract=entry.finished)
        named = set(forgotten(service.user, [t for r in report.stored for t in (r.text, r.source)], known))
        again = [r for r in report.stored if {r.text, r.source} & named]
        if again:
            drop_vectors(service, begin(service, again))
        self.count = service.current_count()
        return WriteOutcome(entry.turn, replayed=True, note=FORGOTTEN_SINCE) if again else (
            WriteOutcome(entry.turn, report=report, replayed=True))

    def _set_aside(self, path: Path, why: str, turn: int) -> None:
        moved = Spool.set_aside(path)
        self._on_write(WriteOutcome(turn, replayed=turn > 0, note=(
            f"a turn kept on this machine cannot be remembered ({why}): it was set aside as {moved}, and the "
            "others are remembered without it")))

    def drain(self) -> None:
        """Wait until every write submitted so far is done."""
        for future in list(self._pending):
            future.result()

    def close(self) -> None:
        self._closing.set()  # a store still away is not waited for: what the chat kept stays in the spool
        self.drain()
        if not self.read_only:
            self._pool.submit(self._flush_seen).result()
        self._pool.shutdown(wait=True)

    def _flush_seen(self) -> None:
        """Record when recalled memories were last seen; a store that never opened has nothing to record."""
        try:
            if self._service is not None:
                self._service.flush_seen()
        except Exception as exc:  # a store that failed to open or broke was reported when it did
            log.debug("last_seen not recorded: %s", exc)


def _done(outcome: WriteOutcome) -> Future[WriteOutcome]:
    future: Future[WriteOutcome] = Future()
    future.set_result(outcome)
    return future


def _warm_index(service: MemoryService) -> None:
    """Read a shared store's vectors now (``LedgerVectors``, ``HeldIndex``), not at the first search; a failure
    here is left for that search to report, as it would be without the warm-up."""
    warm_up = getattr(service.index, "warm_up", None)
    if callable(warm_up):
        try:
            warm_up()
        except AgentError as exc:
            log.debug("index not warmed up: %s", exc)


class PendingTurn:
    """A turn in flight: what was sent and the reply as far as it got."""

    def __init__(self, line: str, messages: list[Message], recall: Recall | None) -> None:
        self.line = line
        self.said = line  # the line as typed, before it was made canonical: what the write gate judges
        self.own: str | None = None  # the user's own words when the line carries attached text (``Turn.said``)
        self.messages = messages
        self.recall = recall
        self.notes: list[str] = []  # what happened to the request on its way (trimmed to fit the server), to tell
        self.pieces: list[str] = []
        self.finish_reason: str | None = None
        self.prompt_tokens: int | None = None
        self.completion_tokens: int | None = None
        self.interrupted = False
        self.error: ChatError | None = None
        self.fold: Fold | None = None  # the summary finished since the last turn, to report

    @property
    def text(self) -> str:
        return "".join(self.pieces)

    @property
    def block(self) -> str:
        """The memory block of this turn's request."""
        return self.recall.block.text if self.recall is not None else ""

    @property
    def status(self) -> TurnStatus:
        if self.interrupted:
            return "interrupted"
        if self.error is not None:
            return "failed"
        return "complete" if self.finish_reason == "stop" else "truncated"


@dataclass(frozen=True)
class TurnResult:
    """A finished turn as stored; ``left`` counts the oldest turns it pushed out of the context window."""

    turn: Turn
    number: int
    left: int
    error: ChatError | None


@dataclass(frozen=True)
class Exchange:
    """The last turn of the session and its number: what ``/undo`` takes back (``agent.undo``)."""

    turn: Turn
    number: int


class ChatEngine:
    """Runs turns of one session: the conversation window, the session file and (optionally) long-term memory."""

    def __init__(
        self,
        chat: ChatModel,
        model: str,
        conversation: Conversation,
        store: SessionStore,
        session: Session,
        memory: MemoryWorker | None,
        clock: Callable[[], float] = time.time,
        server: Future[ServerProfile] | None = None,
        max_tokens: int = 0,
        catalog: Callable[[], list[str]] | None = None,
        places: Places | None = None,
    ) -> None:
        self.chat = chat
        self.model = model
        self._asked = model  # the name asked for at start; /model switches ``model``
        self.server: ServerProfile | None = None  # adopted from ``server`` once the probe has answered
        self.conversation = conversation
        self.store = store
        self.session = session
        self.memory = memory
        self.last_recall: Recall | None = None
        self.memory_error: AgentError | None = None
        # Why the last save failed (disk full, say); None once one succeeds: each save writes the whole session,
        # so the next one that succeeds saves what the failed ones could not. Until then the turns live here.
        self.unsaved: SessionError | None = None
        self.paused = False  # /pause: what the user says is not written to memory until /resume
        self.catalog = catalog  # the models the server serves (/model), when known
        self.writing: Future[WriteOutcome] | None = None  # the memory write of the last turn
        self._clock = clock
        self._folding: Future[Fold] | None = None
        self._saving = threading.Lock()  # the summary thread saves too
        self._probe = server
        self.max_tokens = max_tokens
        self._limit: int | None = None  # tokens a request may hold on this server, once known
        self._leaving: Leaving | None = None  # turns trimmed to fit the server, folded with the turn's own
        self._answered: list[Message] = []  # the last request the server answered: it fits the server's context
        self._observed: dict[tuple[int, str], bool] = {}  # (turn, line) given to the gate: was its reply finished
        self._followed: set[int] = set()  # the forgets this chat has taken out of its own session
        self.places = places  # this machine's files of the chat's user, which a forget made elsewhere scrubs
        self.saving = True  # False: the session is never written (``--no-session``, a one-shot prompt)
        self.alias: Callable[[str], str | None] = lambda name: None  # the model an alias names (``/model fast``)

    def adopt_server(self, wait: float = 0.0) -> ServerProfile | None:
        """Take what the probe of the server found (waiting at most ``wait`` seconds for it): where the system
        prompt goes. A probe that has not answered is asked again at the next turn."""
        if self.server is None and self._probe is not None:
            try:
                self.server = self._probe.result(timeout=wait)
            except TimeoutError:
                return None
            except Exception:  # a bug in the probe costs what it would have told, never the chat
                log.debug("the probe of the server failed", exc_info=True)
                self._probe = None
                return None
            if self.conversation.placement == DEFAULT:  # not yet changed by a server that refused system messages
                self.conversation.placement = self.server.placement
            if self.server.limit is not None:
                self._fit_budget(self.server.limit)
        return self.server

    def _fit_budget(self, limit: int) -> None:
        """A server with a small context: requests stay under ``limit``, and the window folds well before it."""
        self._limit = limit if self._limit is None else min(self._limit, limit)
        self.conversation.budget_tokens = min(self.conversation.budget_tokens, max(self._limit // 2, 1))

    @property
    def shown_model(self) -> str:
        """The model the server says it serves, else the configured name (or the one ``/model`` switched to)."""
        return self.model if self.server is None or self.model != self._asked else self.server.model

    def begin(self, line: str, said: str | None = None) -> PendingTurn:
        """Recall memories for this line and assemble the request. A memory failure means no memories, noted
        in ``memory_error``, never a failed turn. The line is made canonical first (``agent.memory.canonical``):
        what the model reads and the session keeps are the characters the user was shown; the gate judges the line
        as typed, so text hidden in it is refused, not stored without its hidden part. ``said`` is the user's own
        words when the line also carries attached text: the gate judges them alone (a piped diff is not something
        the user said about themselves), and memory is probed with the start of the line only."""
        own = None if said is None else canonical(said)
        said, line = (line if said is None else said), canonical(line)
        fold = self.settle()
        self.adopt_server(PROBE_WAIT)
        recall = None
        self.memory_error = None
        if self.memory is not None:
            try:
                self.follow_forgets()
                recall = self.memory.recall(line if own is None else line[:PROBE_CHARS])
            except AgentError as exc:
                self.memory_error = exc
        block = recall.block.text if recall is not None else ""
        if block:
            log.debug("memory block for this turn:\n%s", block)  # user content: only with --debug
        if self._limit is not None:
            self._trimmed(self.conversation.fit(self._limit, line, block))
        pending = PendingTurn(line, self.conversation.messages(line, block), recall)
        pending.said, pending.own = said, own
        pending.fold = fold
        return pending

    def _trimmed(self, leaving: Leaving | None) -> int:
        """Keep turns trimmed to fit the server for the fold after the turn; how many there were."""
        if leaving is None:
            return 0
        self._leaving = leaving if self._leaving is None else self._leaving.then(leaving)
        return leaving.turns

    def _refit(self, pending: PendingTurn, exc: ContextOverflow) -> bool:
        """After the server refused ``pending`` as too long: trim the window to fit and rebuild the request (True),
        or keep in ``pending.error`` why it cannot fit, whatever is trimmed (False)."""
        context = exc.context or (self.server.info.context if self.server else None)
        sent = sum(count_tokens(m.content) for m in pending.messages)
        # Without the server's size, the last request it answered is known to fit (else: half of this one).
        answered = sum(count_tokens(m.content) for m in self._answered) if self._answered else sent // 2
        known = request_limit(context, self.max_tokens)
        limit = min(answered if known is None else known, sent - 1)
        size = f" of {context:,} tokens" if context else ""
        turns = self._trimmed(self.conversation.fit(limit, pending.line, pending.block))
        if not turns:
            pending.error = ContextOverflow(
                f"The request exceeds the server's context{size} even without earlier turns: shorten the message, "
                f"lower AGENT_MAX_TOKENS ({self.max_tokens or 'not set'}) or AGENT_MEMORY_TOKENS, or give the "
                "server a larger context (llama.cpp --n_ctx, Ollama num_ctx).", context)
            return False
        self._fit_budget(limit)
        pending.messages = self.conversation.messages(pending.line, pending.block)
        oldest = "the oldest turn" if turns == 1 else f"the {turns} oldest turns"
        pending.notes.append(f"The request exceeds the server's context{size}: trimmed {oldest} from the context "
                             "and sent it again.")
        return True

    def stream(self, pending: PendingTurn) -> Generator[str, None, None]:
        """The reply's text as it arrives. A ``ChatError`` ends the stream and is kept in ``pending.error``;
        Ctrl-C (``KeyboardInterrupt``) propagates to the caller, which marks the turn interrupted."""
        refits = 0  # a request refused as too long is trimmed and sent again at most OVERFLOW_RETRIES times
        while True:  # and one refused for its system message once more, folded (then the placement is "user")
            chunks = self.chat.stream(pending.messages, self.model)
            try:
                for chunk in chunks:
                    pending.finish_reason = chunk.finish_reason or pending.finish_reason
                    if chunk.prompt_tokens is not None:
                        pending.prompt_tokens, pending.completion_tokens = chunk.prompt_tokens, chunk.completion_tokens
                    if chunk.text:
                        pending.pieces.append(chunk.text)
                        yield chunk.text
                self._answered = pending.messages
                return
            except ContextOverflow as exc:
                if pending.pieces or refits == OVERFLOW_RETRIES or not self._refit(pending, exc):
                    pending.error = pending.error or exc
                    return
                refits += 1
            except SystemRoleRefused as exc:
                if pending.pieces or self.conversation.placement.where == "user":
                    pending.error = exc
                    return
                self.conversation.placement = Placement("user", "the server refuses system messages")
                pending.messages = self.conversation.messages(pending.line, pending.block)
                pending.notes.append("The server refuses system messages: the system prompt and the memory go into "
                                     "the first user message from now on (AGENT_SYSTEM_PROMPT=user does it at once).")
            except ChatError as exc:
                pending.error = exc
                return
            finally:
                close = getattr(chunks, "close", None)  # a generator: closing it closes the HTTP response
                if callable(close):
                    close()

    def finish(self, pending: PendingTurn) -> TurnResult:
        """Record the turn: the session file is durable before this returns (or ``unsaved`` says why not); then
        the write gate runs in the background on the user's words, whatever became of the reply (memory comes
        from what the user said); only the model's extraction waits for a reply that finished."""
        turn = Turn(
            user=pending.line,
            reply=pending.text,
            status=pending.status,
            at=self._clock(),
            model=self.model,
            prompt_tokens=pending.prompt_tokens,
            completion_tokens=pending.completion_tokens,
            said=pending.own,
        )
        self.last_recall = pending.recall
        self.session.turns.append(turn)
        self._save()  # durable before anything slow
        leaving = self.conversation.add(turn)
        if self._leaving is not None:  # turns trimmed to fit the server are older than those ``add`` let go
            leaving, self._leaving = self._leaving.then(leaving), None
        if leaving is not None:  # the summary is a model call: made while the user types, awaited by ``settle``
            self._folding = in_background(lambda: self._fold(leaving), "summary")
        number = len(self.session.turns)
        finished = turn.status == "complete"
        seen = self._observed.get((number, pending.line))  # a /retry sends the same line as the same turn
        self.writing = None
        if (self.memory is not None and self.remembering and pending.said.strip()
                and (seen is None or (finished and not seen))):
            # The end of the previous reply is what this line answers ("Which city?" -> "Lisbon"): +10 points of
            # recall@5 on LoCoMo (bench/RESULTS.md, E5); partial if that reply was.
            answered = self.session.turns[-2].reply[-CONTEXT_CHARS:] if number > 1 else ""
            self.writing = self.memory.observe(pending.said, session=self.session.name, turn=number,
                                               context=answered, finished=finished, again=seen is not None)
            self._observed[(number, pending.line)] = finished
        return TurnResult(turn, number, leaving.turns if leaving else 0, pending.error)

    def _fold(self, leaving: Leaving) -> Fold:
        fold = self.conversation.fold(leaving)
        self._save()
        return fold

    def settle(self) -> Fold | None:
        """Wait for the summary of turns that left the window, if one is being made, and return it (once).
        Everything that reads or changes the window or the session file settles first."""
        if self._folding is None:
            return None
        fold = self._folding.result()
        self._folding = None
        return fold

    @property
    def remembering(self) -> bool:
        """Whether what the user says now goes to the write gate: memory is on, may be written, and not paused."""
        return self.memory is not None and not self.memory.read_only and not self.paused

    def last_exchange(self) -> Exchange | None:
        """The last turn, once its memory write has landed (or gone to the spool); None when there is none."""
        self.settle()
        if not self.session.turns:
            return None
        if self.memory is not None:
            self.memory.drain()
        return Exchange(self.session.turns[-1], len(self.session.turns))

    def take_back_last(self) -> str | None:
        """Remove the last turn (for ``/retry``) and return its line; None when there is none."""
        self.settle()
        if not self.session.turns:
            return None
        self.conversation.drop_last()
        line = self.session.turns.pop().user
        self._save()
        return line

    def clear(self) -> None:
        self.settle()
        self.conversation.clear()
        self._save()

    def scrub(self, forgotten: Forgotten, ids: set[str]) -> bool:
        """After a forget: take the forgotten words out of this session, in memory (the context window is rebuilt
        from the scrubbed turns) and on disk, so no later save writes them back; the memories of the last reply
        lose the forgotten ones (``/why``). Returns whether the session held the words."""
        self.settle()
        if self.last_recall is not None:
            recall = self.last_recall
            block = replace(recall.block, memories=tuple(m for m in recall.block.memories if m.record.id not in ids))
            self.last_recall = replace(recall, block=block)
        if not scrub_session(self.session, forgotten):
            return False
        self.conversation.resume(self.session.turns, self.session.context_start, self.session.summary)
        self._save()
        return True

    def follow_forgets(self) -> None:
        """Finish on this machine the forgets made in another process or on another machine (another terminal's
        ``/forget``, ``agent memories forget`` here or elsewhere) that it has not acknowledged: one indexed read per
        turn (``pending_forgets`` of this machine). Each new one is taken out of this session, in memory and on
        disk; then, with ``places``, out of this machine's other files (``agent.forget.finish``), and acknowledged
        unless a session another process holds still has its words: that process's next turn, or the next start,
        finishes it."""
        assert self.memory is not None
        machine = "" if self.places is None else self.places.machine

        def new(service: MemoryService) -> list[ForgetRecord]:
            return [record for record in service.ledger.pending_forgets(machine) if record.user == service.user]

        def finish_here(places: Places, record: ForgetRecord) -> Callable[[MemoryService], object]:
            return lambda service: finish(record, service.ledger, places, self.session.name)

        for record in self.memory.call(new):
            if record.key in self._followed:
                continue  # tried once by this chat: the next start tries again (a turn waits for no retry)
            self._followed.add(record.key)
            self.scrub(Forgotten(record.texts), set(record.ids))
            if self.places is not None:
                self.memory.call(finish_here(self.places, record))

    def switch(self, session: Session, saving: bool = True) -> None:
        """Go on in ``session`` (``/new``, ``/sessions NAME``): the window is rebuilt from its turns, and what this
        chat knew of the one it leaves (the last recall, the turns given to the gate) goes with it. The caller
        holds the new session's lock (none when ``saving`` is False: nothing of it is written)."""
        self.settle()
        self.session, self.saving = session, saving
        self.conversation.resume(session.turns, session.context_start, session.summary)
        self.last_recall, self.memory_error, self.writing = None, None, None
        self._observed, self._leaving = {}, None

    def _save(self) -> None:
        if not self.saving:
            return
        with self._saving:
            self.session.summary = self.conversation.summary
            self.session.context_start = self.conversation.start
            self.session.updated_at = self._clock()
            try:
                self.store.save(self.session)
            except SessionError as exc:  # the chat goes on: the reply was shown and the turns are kept in memory
                self.unsaved = exc
                return
            self.unsaved = None
