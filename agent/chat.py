"""One chat turn as data, with no terminal code: recall, assemble, stream, persist, then remember off the path.

    user line -> recall(probe = the line) -> messages -> model stream -> session file (durable) -> write gate

The REPL drives a turn in three steps (``begin``, ``stream``, ``finish``) so it can render the stream and catch
Ctrl-C between them; whatever happens, ``finish`` records the turn with its true status: complete, interrupted,
truncated (no finish reason, or "length") or failed. Only complete turns go through the write gate.

Long-term memory lives on one background thread (``MemoryWorker``): opening Chroma and loading the embedding
model take about a second, so they happen while the user types, and the write after each reply does not hold up
the next prompt. One thread also means the store is never used by two threads at once.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Generator, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import TypeVar

from agent.conversation import Conversation, Fold, Leaving, Turn, TurnStatus
from agent.domain import ForgetRecord, Message
from agent.errors import AgentError, ChatError, MemoryUnavailable, SessionError
from agent.forget import Forgotten, scrub_session
from agent.memory.service import MemoryService, Recall, WriteReport
from agent.ports import ChatChunk, ChatModel
from agent.sessions import Session, SessionStore

log = logging.getLogger(__name__)
T = TypeVar("T")
# How much of the previous reply is indexed as the context of the next line: its end holds the question.
CONTEXT_CHARS = 400


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


class MemoryWorker:
    """Every use of the memory service, on one thread. ``call`` waits for its answer; ``observe`` does not.

    ``on_write`` hears about every background write, from the worker thread. ``close`` lets pending writes
    finish: the process never exits with a write half done.
    """

    def __init__(self, open_service: Callable[[], MemoryService], on_write: Callable[[WriteOutcome], None]) -> None:
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="memory")
        self._on_write = on_write
        self._pending: list[Future[None]] = []
        self._service = self._pool.submit(self._open, open_service)
        self.count: int | None = None  # memories stored, refreshed after every change; None until the store opens

    def _open(self, open_service: Callable[[], MemoryService]) -> MemoryService:
        """Open the store and load the embedding model now, so the first recall does not wait for them."""
        try:
            service = open_service()
            self.count = service.count()  # known once the store is open: the model may take seconds more to load
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

    @property
    def failed(self) -> bool:
        """True once opening the store has failed: memory is unusable for the rest of this run."""
        return self._service.done() and self._service.exception() is not None

    def call(self, task: Callable[[MemoryService], T]) -> T:
        """Run ``task`` with the service on the memory thread and return its result (or raise its error)."""

        def run() -> T:
            service = self._service.result()
            try:
                result = task(service)
            except AgentError:
                raise
            except Exception as exc:
                raise memory_failure(exc) from exc
            self.count = service.count()
            return result

        return self._pool.submit(run).result()

    def observe(self, text: str, *, session: str, turn: int, context: str = "") -> None:
        """Queue the user's words of one turn for the write gate; the outcome goes to ``on_write``. ``context`` is
        the reply those words answer: indexed for keyword search beside the memory, never stored as one."""

        def write() -> None:
            try:
                service = self._service.result()
                report = service.observe(
                    text, session=session, turn=turn, extra={"context": context} if context else None
                )
                self.count = service.count()
            except Exception as exc:  # reported like any failed write, never lost in the worker thread
                self._on_write(WriteOutcome(turn, error=memory_failure(exc)))
                return
            self._on_write(WriteOutcome(turn, report=report))

        self._pending = [f for f in self._pending if not f.done()]
        self._pending.append(self._pool.submit(write))

    def drain(self) -> None:
        """Wait until every write submitted so far is done."""
        for future in list(self._pending):
            future.result()

    def close(self) -> None:
        self.drain()
        self._pool.submit(self._flush_seen).result()
        self._pool.shutdown(wait=True)

    def _flush_seen(self) -> None:
        """Record when recalled memories were last seen; a store that never opened has nothing to record."""
        try:
            self._service.result().flush_seen()
        except Exception as exc:  # a store that failed to open or broke was reported when it did
            log.debug("last_seen not recorded: %s", exc)


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
        self.messages = messages
        self.recall = recall
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
    ) -> None:
        self.chat = chat
        self.model = model
        self.conversation = conversation
        self.store = store
        self.session = session
        self.memory = memory
        self.last_recall: Recall | None = None
        self.memory_error: AgentError | None = None
        # Why the last save failed (disk full, say); None once one succeeds: each save writes the whole session,
        # so the next one that succeeds saves what the failed ones could not. Until then the turns live here.
        self.unsaved: SessionError | None = None
        self._clock = clock
        self._folding: Future[Fold] | None = None
        self._saving = threading.Lock()  # the summary thread saves too
        self._followed: set[int] = set()  # the forgets this chat has taken out of its own session

    def begin(self, line: str) -> PendingTurn:
        """Recall memories for this line and assemble the request. A memory failure means no memories, noted
        in ``memory_error``, never a failed turn."""
        fold = self.settle()
        recall = None
        self.memory_error = None
        if self.memory is not None:
            try:
                self.follow_forgets()
                recall = self.memory.call(lambda service: service.recall(line))
            except AgentError as exc:
                self.memory_error = exc
        block = recall.block.text if recall is not None else ""
        if block:
            log.debug("memory block for this turn:\n%s", block)  # user content: only with --debug
        pending = PendingTurn(line, self.conversation.messages(line, block), recall)
        pending.fold = fold
        return pending

    def stream(self, pending: PendingTurn) -> Generator[str, None, None]:
        """The reply's text as it arrives. A ``ChatError`` ends the stream and is kept in ``pending.error``;
        Ctrl-C (``KeyboardInterrupt``) propagates to the caller, which marks the turn interrupted."""
        chunks = self.chat.stream(pending.messages, self.model)
        try:
            for chunk in chunks:
                pending.finish_reason = chunk.finish_reason or pending.finish_reason
                if chunk.prompt_tokens is not None:
                    pending.prompt_tokens, pending.completion_tokens = chunk.prompt_tokens, chunk.completion_tokens
                if chunk.text:
                    pending.pieces.append(chunk.text)
                    yield chunk.text
        except ChatError as exc:
            pending.error = exc
        finally:
            close = getattr(chunks, "close", None)  # a generator: closing it closes the HTTP response
            if callable(close):
                close()

    def finish(self, pending: PendingTurn) -> TurnResult:
        """Record the turn: the session file is durable before this returns (or ``unsaved`` says why not); then
        the write gate runs in the background, for complete turns only (a cut-off reply is not mined for memory)."""
        turn = Turn(
            user=pending.line,
            reply=pending.text,
            status=pending.status,
            at=self._clock(),
            model=self.model,
            prompt_tokens=pending.prompt_tokens,
            completion_tokens=pending.completion_tokens,
        )
        self.last_recall = pending.recall
        self.session.turns.append(turn)
        self._save()  # durable before anything slow
        leaving = self.conversation.add(turn)
        if leaving is not None:  # the summary is a model call: made while the user types, awaited by ``settle``
            self._folding = in_background(lambda: self._fold(leaving), "summary")
        number = len(self.session.turns)
        if self.memory is not None and turn.status == "complete":
            # The end of the previous reply is what this line answers ("Which city?" -> "Lisbon"): +10 points of
            # recall@5 on LoCoMo (bench/RESULTS.md, E5).
            answered = self.session.turns[-2].reply[-CONTEXT_CHARS:] if number > 1 else ""
            self.memory.observe(pending.line, session=self.session.name, turn=number, context=answered)
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
            self.last_recall = replace(
                recall, block=block, candidates=tuple(m for m in recall.candidates if m.record.id not in ids))
        if not scrub_session(self.session, forgotten):
            return False
        self.conversation.resume(self.session.turns, self.session.context_start, self.session.summary)
        self._save()
        return True

    def follow_forgets(self) -> None:
        """Take out of this session the words of forgets made in another process (another terminal's ``/forget``,
        ``agent memories forget``) since the last turn: that process could not rewrite a session this one holds,
        so the forget's record waits in the ledger (``agent.forget``). One read per turn; for each new record, the
        session is scrubbed in memory and on disk. The next start of agent then finds no session holding the
        words and finishes the forget (the input history included), dropping its record."""
        assert self.memory is not None

        def new(service: MemoryService) -> list[ForgetRecord]:
            return [record for record in service.ledger.pending_forgets()
                    if record.user == service.user and record.key not in self._followed]

        for record in self.memory.call(new):
            self._followed.add(record.key)
            self.scrub(Forgotten(record.texts), set(record.ids))

    def _save(self) -> None:
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
