"""Long-term memory lives on one background thread (``MemoryWorker``): opening Chroma and loading the embedding
model take about a second, so they happen while the user types, and the write after each reply does not hold up
the next prompt. One thread also means the store is never used by two threads at once.
"""

from __future__ import annotations

import contextlib
import logging
import math
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from agent.domain import CONTEXT
from agent.errors import (
    AgentError,
    DiskFull,
    EmbedderMismatch,
    EmbeddingError,
    MemoryUnavailable,
    SpoolFull,
    StoreAway,
    StoreCorrupt,
    StoreOpening,
)
from agent.forget import begin, drop_vectors, hold_back
from agent.memory.canonical import canonical
from agent.memory.policy import MemoryPolicy
from agent.memory.service import MemoryService, Recall, WriteReport, keeps, refuse
from agent.ports import WarmsUp
from agent.spool import Spool, Spooled

log = logging.getLogger(__name__)
T = TypeVar("T")
# How long the turns wait for a connection to the store's server at start (``ConnectWait``): one that does not
# answer must not hold up the replies; the open goes on in the background and a later turn uses the store.
OPEN_WAIT = 4.0
# The pause before opening again a store that was away at start, doubled after each failure up to the last.
REOPEN_FIRST = 0.5
REOPEN_MAX = 10.0
OPENING = "Long-term memory has not finished opening: its server is slow to answer."
# How many turns waiting in the spool are written before the recall of the turn on which memory answers again, so
# it recalls what was said during the outage; the rest are written after the recall, before this turn's own words,
# off the reply path. Each costs one write (bench/spool_replay.py: RESULTS.md has the figures on the servers).
REPLAY_BEFORE_RECALL = 8
# The work left for between turns (``_between_turns``: the index's compare with the ledger, the examples' warm-up)
# waits until no call has asked for the memory thread for ``QUIET`` seconds, looking again every ``YIELD_PAUSE``: a
# turn makes its calls one after another (the forgets to follow, then the recall), and the next one is asked a moment
# after the last returns.
YIELD_PAUSE = 0.005
QUIET = 0.25
# What a waiting turn that a forget made since names becomes: nothing, and this line.
FORGOTTEN_SINCE = ("its words are not remembered: a forget made after they were said (here or on another machine) "
                   "names them")


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


@dataclass(frozen=True)
class MemoryStatus:
    """The memory as the chat's status shows it: how many memories (None until the store has opened), whether its
    server is away, whether opening failed for good, and whether this run only reads it."""

    count: int | None
    away: bool
    failed: bool
    read_only: bool


@dataclass(frozen=True)
class WriteOutcome:
    """What became of one background write: the gate's report, or the error that stopped it."""

    turn: int
    report: WriteReport | None = None
    error: AgentError | None = None
    spooled: bool = False  # the store did not answer (``error`` says how): the turn waits in the spool
    replayed: bool = False  # a turn that waited in the spool, written now
    note: str = ""  # what became of a waiting turn that was not written (a forget names it, it cannot be read)


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
        # Calls (``call``) waiting for the store to open or for their task to start: the examples' warm-up, which
        # takes seconds, lets them go first.
        self._asking = 0
        self._asking_lock = threading.Lock()
        self._last_call = -math.inf  # when the last call's task ended (monotonic)
        self._flush_queued = False  # a flush of the index's pending writes is queued between turns
        # Current memories (those /memories lists), refreshed after every change; None until the store opens.
        self.count: int | None = None
        self._pool.submit(self._open_first, open_service)

    def _open(self, open_service: Callable[[], MemoryService]) -> MemoryService:
        """Open the store and load the embedding model now, so the first recall does not wait for them."""
        try:
            service = open_service()
            self.count = service.current_count()  # known once the store opens: the model may take seconds more
            self._note_forgets(service)
            if isinstance(service.embedder, WarmsUp):
                service.embedder.warm_up()
            _warm_index(service)
            # Queued after what was asked while the store opened (a recall typed meanwhile goes first), on the
            # memory thread: a daemon thread still embedding when a short run exits aborts it (onnxruntime's
            # threads), and a chat that closes first skips it.
            with contextlib.suppress(RuntimeError):  # the chat closed meanwhile (a store reopened late)
                self._pool.submit(self._between_turns, lambda: _sweep(service))
                self._pool.submit(self._between_turns, lambda: _warm_meaning(service))
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
                service.close()
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

    def status(self) -> MemoryStatus:
        """What the toolbar and ``/session`` show, read at once from the main thread (no task for the thread)."""
        return MemoryStatus(self.count, self.away, self.failed, self.read_only)

    def call(self, task: Callable[[MemoryService], T]) -> T:
        """Run ``task`` with the service on the memory thread and return its result (or raise its error). While the
        store is away it raises at once, and a store still opening is waited for, but not past the limit of a
        after the start at most (``StoreOpening``)."""
        error = self._error
        if isinstance(error, StoreAway):
            raise error.with_traceback(None)

        def run() -> T:
            self._ask(-1)
            try:
                return self._run(task)
            finally:
                self._last_call = time.monotonic()

        self._ask(1)
        try:
            if not self._opening.wait():
                self._late = True
                raise StoreOpening(OPENING)
            future = self._pool.submit(run)
        except BaseException:
            self._ask(-1)
            raise
        return future.result()

    def _ask(self, change: int) -> None:
        with self._asking_lock:
            self._asking += change

    def _run(self, task: Callable[[MemoryService], T]) -> T:
        """``task`` with the service, on the memory thread; the count of current memories refreshed after it."""
        service = self._store()
        try:
            result = task(service)
        except AgentError:
            raise
        except Exception as exc:
            raise memory_failure(exc) from exc
        self.count = service.current_count()
        if not self._flush_queued and service.writes_pending():
            # the vectors the write left for the index go in between turns, off this call's time
            self._flush_queued = True
            self._pool.submit(self._between_turns, lambda: self._flush_index(service))
        return result

    def _flush_index(self, service: MemoryService) -> bool:
        """Put the vectors written into the index (``MemoryService.flush_index``), in one step. One that fails here
        stays in the ledger, and the next search's catch-up puts it in (or reports what keeps it out)."""
        self._flush_queued = False
        try:
            service.flush_index()
        except Exception as exc:  # reported, if it lasts, by the next call that needs the index
            log.debug("the index's pending writes not flushed: %s", memory_failure(exc))
        return False

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
            self._store_ids[service] = service.store_id()
        return self._store_ids[service]

    def _note_forgets(self, service: MemoryService) -> None:
        """Keep, with the spool, how far this machine knows the ledger's forgets now: a turn spooled from now on was
        said after them, and is the user's own again (``agent.spool``)."""
        if self.spool is not None:
            try:
                self.spool.note(self._store_id(service), service.forget_mark())
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
            hold_back(service.pending_forgets(self.machine), self.spool)
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
        forgotten = service.forgotten_since
        if forgotten([entry.text], known):
            return WriteOutcome(entry.turn, replayed=True, note=FORGOTTEN_SINCE)
        if entry.explicit:
            report = service.remember(entry.text, session=entry.session, turn=entry.turn, when=entry.when)
        else:
            report = service.observe(entry.text, session=entry.session, turn=entry.turn, when=entry.when,
                                     extra={CONTEXT: entry.context} if entry.context else None,
                                     extract=entry.finished)
        named = set(forgotten([t for r in report.stored for t in (r.text, r.source)], known))
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

    def _between_turns(self, step: Callable[[], bool]) -> None:
        """Run ``step`` on the memory thread while no turn needs it, and again while it says more remains (the
        index's compare with the ledger a piece at a time, the examples' warm-up once), unless the chat is closing.

        The calls of a turn go first: this is queued as the store opens, before a recall typed meanwhile can be
        (that one waits for the open to settle), and the first turn waited seconds behind the warm-up (8.6 of a
        first recall's 16.7 s at load 7). While a call waits for the thread, or one ended less than ``QUIET`` ago,
        it steps aside and queues itself again behind them."""
        if self._closing.is_set():
            return
        if self._asking or time.monotonic() - self._last_call < QUIET:
            self._closing.wait(YIELD_PAUSE)
        elif not step():
            return
        with contextlib.suppress(RuntimeError):  # the chat closed meanwhile
            self._pool.submit(self._between_turns, step)

    def close(self) -> None:
        self._closing.set()  # a store still away is not waited for: what the chat kept stays in the spool
        self.drain()
        self._pool.submit(self._finish_sweep).result()
        if not self.read_only:
            self._pool.submit(self._flush_seen).result()
        self._pool.shutdown(wait=True)

    def _finish_sweep(self) -> None:
        """Run the pieces of the index's compare that the turns left no time for (a one-shot run has no time between
        turns): after the last reply, so it is off every turn's path, and its end saves the mark the next open
        resumes from."""
        if self._service is not None:
            while _sweep(self._service):
                pass

    def _flush_seen(self) -> None:
        """Record when recalled memories were last seen, and put the vectors still pending into the index; a store
        that never opened has nothing to record."""
        try:
            if self._service is not None:
                self._service.flush_seen()
                self._service.flush_index()
        except Exception as exc:  # a store that failed to open or broke was reported when it did
            log.debug("last_seen not recorded: %s", exc)


def _done(outcome: WriteOutcome) -> Future[WriteOutcome]:
    future: Future[WriteOutcome] = Future()
    future.set_result(outcome)
    return future


def _sweep(service: MemoryService) -> bool:
    """One piece of the index's compare with the ledger (``MemoryService.sweep_index``); True while more remain. A
    store that fails here stops it: the mark is saved only at its end, so the next open compares again."""
    try:
        return service.sweep_index()
    except Exception as exc:  # a bug in the memory layer too: the chat, and its close, go on without the rest
        log.debug("the index's compare with the ledger stopped: %s", memory_failure(exc))
        return False


def _warm_meaning(service: MemoryService) -> bool:
    """Embed the examples the writes read meaning with; an embedder that fails here fails again at the first
    write, which reads the patterns alone then (``agent.memory.attributes``). Done in one step."""
    try:
        service.warm_up_meaning()
    except (EmbeddingError, MemoryUnavailable) as exc:
        log.debug("meaning not warmed up: %s", exc)
    return False


def _warm_index(service: MemoryService) -> None:
    """Read a shared store's vectors now (``LedgerVectors``, ``HeldIndex``), not at the first search; a failure
    here is left for that search to report, as it would be without the warm-up."""
    try:
        service.warm_up_index()
    except AgentError as exc:
        log.debug("index not warmed up: %s", exc)
