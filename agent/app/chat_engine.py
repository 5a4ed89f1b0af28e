"""One chat turn as data, with no terminal code: recall, assemble, stream, persist, then remember off the path.

    user line -> recall(probe = the line) -> messages -> model stream -> session file (durable) -> write gate

The REPL drives a turn in three steps (``begin``, ``stream``, ``finish``) so it can render the stream and catch
Ctrl-C between them; whatever happens, ``finish`` records the turn with its true status: complete, interrupted,
truncated (no finish reason, or "length") or failed. Every turn's line goes through the write gate: what is
remembered is what the user said, which a reply that broke off does not change.

Long-term memory lives on its own thread (``agent.app.memory_worker``); the engine hands it each turn's line
for recall and writing.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Generator, Iterator, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, replace
from typing import Protocol, TypeVar

from agent.app.engine_status import EngineStatus
from agent.app.memory_worker import (
    MemoryWorker,
    WriteOutcome,
)
from agent.app.queries import PendingForgets
from agent.conversation import DEFAULT, Conversation, Fold, Leaving
from agent.domain import Message, Turn, TurnStatus
from agent.errors import (
    AgentError,
    ChatError,
    ContextOverflow,
    SessionError,
    SystemRoleRefused,
)
from agent.forget import Finish, Forgotten, Places, scrub_session
from agent.memory.canonical import canonical
from agent.memory.service import Recall
from agent.ports import ChatChunk, ChatModel, RetryNotice
from agent.server import Placement, ServerProfile, request_limit
from agent.sessions import Session, SessionStore
from agent.tokens import count_tokens

log = logging.getLogger(__name__)
T = TypeVar("T")
# How much of the previous reply is indexed as the context of the next line: its end holds the question.
CONTEXT_CHARS = 400
# How long the first turn waits for the probe of the server (``agent.server``) before going ahead without it.
PROBE_WAIT = 4.0
# How many times a request refused as too long for the server is trimmed and sent again.
OVERFLOW_RETRIES = 2
# How much of a message that carries attached text (a piped document, a file) probes memory: the user's words come
# first in it, and a whole document would make a keyword query of thousands of words.
PROBE_CHARS = 2_000


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


class DeferredChatModel:
    """A ``ChatModel`` built in the background (importing the OpenAI SDK takes most of a second)."""

    def __init__(self, build: Callable[[], ChatModel]) -> None:
        self._model = in_background(build, "chat-model")

    def stream(self, messages: Sequence[Message], model: str) -> Iterator[ChatChunk]:
        return self._model.result().stream(messages, model)


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
        saving: bool = True,
        alias: Callable[[str], str | None] = lambda name: None,
    ) -> None:
        self._chat = chat
        self._model = model
        self._asked = model  # the name asked for at start; /model switches ``_model``
        self._server: ServerProfile | None = None  # adopted from ``server`` once the probe has answered
        self._conversation = conversation
        self._store = store
        self._session = session
        self._memory = memory
        self._last_recall: Recall | None = None
        self._memory_error: AgentError | None = None
        # Why the last save failed (disk full, say); None once one succeeds: each save writes the whole session,
        # so the next one that succeeds saves what the failed ones could not. Until then the turns live here.
        self._unsaved: SessionError | None = None
        self._paused = False  # /pause: what the user says is not written to memory until /resume
        self._catalog = catalog  # the models the server serves (/model), when known
        self._writing: Future[WriteOutcome] | None = None  # the memory write of the last turn
        self._clock = clock
        self._folding: Future[Fold] | None = None
        self._save_lock = threading.Lock()  # the summary thread saves too
        self._probe = server
        self._max_tokens = max_tokens
        self._limit: int | None = None  # tokens a request may hold on this server, once known
        self._leaving: Leaving | None = None  # turns trimmed to fit the server, folded with the turn's own
        self._answered: list[Message] = []  # the last request the server answered: it fits the server's context
        self._observed: dict[tuple[int, str], bool] = {}  # (turn, line) given to the gate: was its reply finished
        self._followed: set[int] = set()  # the forgets this chat has taken out of its own session
        self._places = places  # this machine's files of the chat's user, which a forget made elsewhere scrubs
        self._saving = saving  # False: the session is never written (``--no-session``, a one-shot prompt)
        self._alias = alias  # the model an alias names (``/model fast``)

    def adopt_server(self, wait: float = 0.0) -> ServerProfile | None:
        """Take what the probe of the server found (waiting at most ``wait`` seconds for it): where the system
        prompt goes. A probe that has not answered is asked again at the next turn."""
        if self._server is None and self._probe is not None:
            try:
                self._server = self._probe.result(timeout=wait)
            except TimeoutError:
                return None
            except Exception:  # a bug in the probe costs what it would have told, never the chat
                log.debug("the probe of the server failed", exc_info=True)
                self._probe = None
                return None
            if self._conversation.placement == DEFAULT:  # not yet changed by a server that refused system messages
                self._conversation.placement = self._server.placement
            if self._server.limit is not None:
                self._fit_budget(self._server.limit)
        return self._server

    def _fit_budget(self, limit: int) -> None:
        """A server with a small context: requests stay under ``limit``, and the window folds well before it."""
        self._limit = limit if self._limit is None else min(self._limit, limit)
        self._conversation.budget_tokens = min(self._conversation.budget_tokens, max(self._limit // 2, 1))

    def use_model(self, name: str) -> None:
        """``/model NAME``: the next requests go to ``name``; the replies before keep the model that wrote them."""
        self._model = name

    def pause(self, paused: bool) -> bool:
        """``/pause`` (True) and ``/resume`` (False): whether what the user says goes to the write gate from now on
        (recall goes on either way); returns whether writes were paused before."""
        was, self._paused = self._paused, paused
        return was

    def without_memory(self) -> None:
        """Chat on without long-term memory for the rest of the run: its worker failed and does not come back."""
        self._memory = None

    def status(self) -> EngineStatus:
        """What the front ends show of this chat, as it stands now (``agent.app.engine_status``). It waits for
        nothing (no summary being made, no probe of the server): the toolbar asks at each redraw."""
        session, conversation = self._session, self._conversation
        # The model the server says it serves, else the configured name (or the one ``/model`` switched to).
        shown = self._model if self._server is None or self._model != self._asked else self._server.model
        return EngineStatus(
            session=session.name,
            created_at=session.created_at,
            turns=len(session.turns),
            last_turn=session.turns[-1] if session.turns else None,
            saving=self._saving,
            unsaved=self._unsaved,
            model=self._model,
            shown_model=shown,
            server=self._server,
            max_tokens=self._max_tokens,
            memory=None if self._memory is None else self._memory.status(),
            paused=self._paused,
            memory_error=self._memory_error,
            last_recall=self._last_recall,
            placement=conversation.placement,
            context_tokens=conversation.tokens(),
            budget_tokens=conversation.budget_tokens,
            window_turns=conversation.turns - conversation.start,
            summarised=bool(conversation.summary),
            machine="" if self._places is None else self._places.machine,
        )

    def memory_worker(self) -> MemoryWorker | None:
        """The long-term memory the commands ask and write (``/memories``, ``/remember``, ``/forget``...); None
        when this run has none, or no longer (``without_memory``)."""
        return self._memory

    def session_store(self) -> SessionStore:
        """Where the sessions are saved: ``/sessions`` lists and loads the others from it, a forget scrubs them."""
        return self._store

    def session_name(self) -> str:
        """The name of the session the chat is in (a forget leaves it to ``scrub``, which saves it)."""
        return self._session.name

    def alias(self, name: str) -> str | None:
        """The model an alias of AGENT_MODEL_ALIASES names (``/model fast``), None when ``name`` is none."""
        return self._alias(name)

    def served_models(self) -> list[str] | None:
        """The models the server serves (``/model``), None when this chat cannot ask it; raises ``ChatError`` when
        the server does not answer."""
        return None if self._catalog is None else self._catalog()

    def last_reply(self) -> str | None:
        """The newest reply of the session with any text (``/copy``), None when there is none."""
        return next((turn.reply for turn in reversed(self._session.turns) if turn.reply.strip()), None)

    def await_write(self, timeout: float) -> bool:
        """Wait at most ``timeout`` seconds for the memory write of the last turn; False when it is still going
        (True when it landed, or the turn wrote nothing)."""
        if self._writing is None:
            return True
        try:
            self._writing.result(timeout=timeout)
        except TimeoutError:
            return False
        return True

    def begin(self, line: str, said: str | None = None) -> PendingTurn:
        """Recall memories for this line and assemble the request. A memory failure means no memories, noted in
        the status's ``memory_error``, never a failed turn. The line is made canonical first
        (``agent.memory.canonical``): what the model reads and the session keeps are the characters the user was
        shown; the gate judges the line as typed, so text hidden in it is refused, not stored without its hidden
        part. ``said`` is the user's own words when the line also carries attached text: the gate judges them alone
        (a piped diff is not something the user said about themselves), and memory is probed with the start of the
        line only."""
        own = None if said is None else canonical(said)
        said, line = (line if said is None else said), canonical(line)
        fold = self.settle()
        self.adopt_server(PROBE_WAIT)
        recall = None
        self._memory_error = None
        if self._memory is not None:
            try:
                self.follow_forgets()
                recall = self._memory.recall(line if own is None else line[:PROBE_CHARS])
            except AgentError as exc:
                self._memory_error = exc
        block = recall.block.text if recall is not None else ""
        if block:
            log.debug("memory block for this turn:\n%s", block)  # user content: only with --debug
        if self._limit is not None:
            self._trimmed(self._conversation.fit(self._limit, line, block))
        pending = PendingTurn(line, self._conversation.messages(line, block), recall)
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
        context = exc.context or (self._server.info.context if self._server else None)
        sent = sum(count_tokens(m.content) for m in pending.messages)
        # Without the server's size, the last request it answered is known to fit (else: half of this one).
        answered = sum(count_tokens(m.content) for m in self._answered) if self._answered else sent // 2
        known = request_limit(context, self._max_tokens)
        limit = min(answered if known is None else known, sent - 1)
        size = f" of {context:,} tokens" if context else ""
        turns = self._trimmed(self._conversation.fit(limit, pending.line, pending.block))
        if not turns:
            pending.error = ContextOverflow(
                f"The request exceeds the server's context{size} even without earlier turns: shorten the message, "
                f"lower AGENT_MAX_TOKENS ({self._max_tokens or 'not set'}) or AGENT_MEMORY_TOKENS, or give the "
                "server a larger context (llama.cpp --n_ctx, Ollama num_ctx).", context)
            return False
        self._fit_budget(limit)
        pending.messages = self._conversation.messages(pending.line, pending.block)
        oldest = "the oldest turn" if turns == 1 else f"the {turns} oldest turns"
        pending.notes.append(f"The request exceeds the server's context{size}: trimmed {oldest} from the context "
                             "and sent it again.")
        return True

    def stream(self, pending: PendingTurn) -> Generator[str, None, None]:
        """The reply's text as it arrives. A ``ChatError`` ends the stream and is kept in ``pending.error``;
        Ctrl-C (``KeyboardInterrupt``) propagates to the caller, which marks the turn interrupted."""
        refits = 0  # a request refused as too long is trimmed and sent again at most OVERFLOW_RETRIES times
        while True:  # and one refused for its system message once more, folded (then the placement is "user")
            chunks = self._chat.stream(pending.messages, self._model)
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
                if pending.pieces or self._conversation.placement.where == "user":
                    pending.error = exc
                    return
                self._conversation.placement = Placement("user", "the server refuses system messages")
                pending.messages = self._conversation.messages(pending.line, pending.block)
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
        """Record the turn: the session file is durable before this returns (or the status's ``unsaved`` says why
        not); then the write gate runs in the background on the user's words, whatever became of the reply (memory
        comes from what the user said); only the model's extraction waits for a reply that finished."""
        turn = Turn(
            user=pending.line,
            reply=pending.text,
            status=pending.status,
            at=self._clock(),
            model=self._model,
            prompt_tokens=pending.prompt_tokens,
            completion_tokens=pending.completion_tokens,
            said=pending.own,
        )
        self._last_recall = pending.recall
        self._session.turns.append(turn)
        self._save()  # durable before anything slow
        leaving = self._conversation.add(turn)
        if self._leaving is not None:  # turns trimmed to fit the server are older than those ``add`` let go
            leaving, self._leaving = self._leaving.then(leaving), None
        if leaving is not None:  # the summary is a model call: made while the user types, awaited by ``settle``
            self._folding = in_background(lambda: self._fold(leaving), "summary")
        number = len(self._session.turns)
        finished = turn.status == "complete"
        seen = self._observed.get((number, pending.line))  # a /retry sends the same line as the same turn
        self._writing = None
        if (self._memory is not None and self._remembering and pending.said.strip()
                and (seen is None or (finished and not seen))):
            # The end of the previous reply is what this line answers ("Which city?" -> "Lisbon"): +10 points of
            # recall@5 on LoCoMo (bench/RESULTS.md, E5); partial if that reply was.
            answered = self._session.turns[-2].reply[-CONTEXT_CHARS:] if number > 1 else ""
            self._writing = self._memory.observe(pending.said, session=self._session.name, turn=number,
                                               context=answered, finished=finished, again=seen is not None)
            self._observed[(number, pending.line)] = finished
        return TurnResult(turn, number, leaving.turns if leaving else 0, pending.error)

    def _fold(self, leaving: Leaving) -> Fold:
        fold = self._conversation.fold(leaving)
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
    def _remembering(self) -> bool:
        """Whether what the user says now goes to the write gate: memory is on, may be written, and not paused."""
        return self._memory is not None and not self._memory.read_only and not self._paused

    def last_exchange(self) -> Exchange | None:
        """The last turn, once its memory write has landed (or gone to the spool); None when there is none."""
        self.settle()
        if not self._session.turns:
            return None
        if self._memory is not None:
            self._memory.drain()
        return Exchange(self._session.turns[-1], len(self._session.turns))

    def take_back_last(self) -> str | None:
        """Remove the last turn (for ``/retry``) and return its line; None when there is none."""
        self.settle()
        if not self._session.turns:
            return None
        self._conversation.drop_last()
        line = self._session.turns.pop().user
        self._save()
        return line

    def clear(self) -> None:
        self.settle()
        self._conversation.clear()
        self._save()

    def scrub(self, forgotten: Forgotten, ids: set[str]) -> bool:
        """After a forget: take the forgotten words out of this session, in memory (the context window is rebuilt
        from the scrubbed turns) and on disk, so no later save writes them back; the memories of the last reply
        lose the forgotten ones (``/why``). Returns whether the session held the words."""
        self.settle()
        if self._last_recall is not None:
            recall = self._last_recall
            block = replace(recall.block, memories=tuple(m for m in recall.block.memories if m.record.id not in ids))
            self._last_recall = replace(recall, block=block)
        if not scrub_session(self._session, forgotten):
            return False
        self._conversation.resume(self._session.turns, self._session.context_start, self._session.summary)
        self._save()
        return True

    def follow_forgets(self) -> None:
        """Finish on this machine the forgets made in another process or on another machine (another terminal's
        ``/forget``, ``agent memories forget`` here or elsewhere) that it has not acknowledged: one indexed read per
        turn (``pending_forgets`` of this machine). Each new one is taken out of this session, in memory and on
        disk; then, with ``places``, out of this machine's other files (``agent.forget.finish``), and acknowledged
        unless a session another process holds still has its words: that process's next turn, or the next start,
        finishes it."""
        assert self._memory is not None
        machine = "" if self._places is None else self._places.machine

        for record in self._memory.call(PendingForgets(machine)):
            if record.key in self._followed:
                continue  # tried once by this chat: the next start tries again (a turn waits for no retry)
            self._followed.add(record.key)
            self.scrub(Forgotten(record.texts), set(record.ids))
            if self._places is not None:
                self._memory.call(Finish(record, self._places, self._session.name))

    def switch(self, session: Session, saving: bool = True) -> None:
        """Go on in ``session`` (``/new``, ``/sessions NAME``): the window is rebuilt from its turns, and what this
        chat knew of the one it leaves (the last recall, the turns given to the gate) goes with it. The caller
        holds the new session's lock (none when ``saving`` is False: nothing of it is written)."""
        self.settle()
        self._session, self._saving = session, saving
        self._conversation.resume(session.turns, session.context_start, session.summary)
        self._last_recall, self._memory_error, self._writing = None, None, None
        self._observed, self._leaving = {}, None

    def _save(self) -> None:
        if not self._saving:
            return
        with self._save_lock:
            self._session.summary = self._conversation.summary
            self._session.context_start = self._conversation.start
            self._session.updated_at = self._clock()
            try:
                self._store.save(self._session)
            except SessionError as exc:  # the chat goes on: the reply was shown and the turns are kept in memory
                self._unsaved = exc
                return
            self._unsaved = None
