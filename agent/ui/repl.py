"""The chat loop: reads lines and answers them through the chat engine the composition root built
(``agent.cli.run_chat``), and says what happened.

Start-up does only what can fail fast in the foreground (endpoint settings, the session name, its lock, its
file) and shows the prompt; the OpenAI SDK import, Chroma and the embedding model load in the background. Each
turn: recall, stream (Ctrl-C stops the reply and keeps it, marked interrupted), save, then a usage line; the
memory write runs in the background and reports "remembered: ..." when it lands. Leaving (Ctrl-D, /exit, end of
input, SIGTERM, SIGHUP or a closed terminal) saves the turn in flight and waits for pending writes.
"""

from __future__ import annotations

import logging
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Any

from rich.traceback import Traceback

from agent.app.chat_engine import ChatEngine, PendingTurn, TurnResult
from agent.app.chat_options import ChatOptions
from agent.app.memory_worker import MemoryWorker, WriteOutcome
from agent.attachments import OneMessage
from agent.conversation import Fold
from agent.errors import ChatError, SessionCorrupt, StoreOpening, UsageError
from agent.ports import RetryNotice
from agent.pricing import Price, cost_note
from agent.sessions import Session, SessionHold, SessionStore, check_name, unused_name
from agent.tokens import count_tokens
from agent.ui.commands import Commands, evicted_line, is_command, shorten
from agent.ui.controls import writes_state
from agent.ui.output import Output
from agent.ui.prompt import EmptyLineInterrupt, LineReader, PipeReader, end_prompt, typed_ahead_kept
from agent.ui.render import plural

log = logging.getLogger(__name__)
BANNER_WAIT = 1.5  # how long the banner waits for the server to say which model it serves
# How long the next prompt waits for the memory write of the turn before it (an embedding and a ledger write: tens
# of milliseconds once the store is open), so that "remembered: ..." is printed under the reply it belongs to.
RECEIPT_WAIT = 5.0


class Leave(BaseException):
    """SIGTERM, or SIGHUP (the terminal closed): leave the chat as Ctrl-D does, after the turn in flight is saved
    as Ctrl-C saves it; the exit status is 128 + the signal's number (143, 129). A ``BaseException``, so that no
    handler meant for errors or for Ctrl-C swallows it."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum
        self.exit_code = 128 + signum


HANDLED_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class HeldInterrupts:
    """The chat's signals. Ctrl-C (SIGINT) raises ``KeyboardInterrupt``, SIGTERM and SIGHUP raise ``Leave``; while
    a piece of the reply is drawn, or the turn is being saved, either waits until that is done, so the screen is
    never left half-drawn and the session file always gets the turn. While waiting for the network they interrupt
    at once. After SIGHUP the terminal is gone: standard input and output are pointed at /dev/null, so what is
    still printed on the way out cannot fail, and the way out is the same as for SIGTERM. Only the main thread
    gets signals, so elsewhere this does nothing."""

    def __init__(self) -> None:
        self.holding = False
        self.pending: BaseException | None = None
        self._previous: dict[int, Any] = {}
        self._terminals: list[int] = []

    def __enter__(self) -> HeldInterrupts:
        if threading.current_thread() is threading.main_thread():
            self._terminals = [fd for fd in (0, 1, 2) if os.isatty(fd)]  # a hung-up terminal is no tty any more
            self._previous = {signum: signal.signal(signum, self._handle) for signum in HANDLED_SIGNALS}
        return self

    def __exit__(self, *exc: object) -> None:
        for signum, previous in self._previous.items():
            signal.signal(signum, previous)

    def _handle(self, signum: int, frame: object) -> None:
        if signum == signal.SIGHUP:
            detach(self._terminals)
        exc: BaseException = KeyboardInterrupt() if signum == signal.SIGINT else Leave(signum)
        if self.holding:
            if not isinstance(self.pending, Leave):  # leaving outranks a Ctrl-C
                self.pending = exc
            return
        if not end_prompt(exc):  # landed in a callback of the prompt's event loop, which would swallow it
            raise exc

    @contextmanager
    def held(self) -> Iterator[None]:
        self.holding = True
        try:
            yield
        finally:
            self.release(interrupt=True)

    def release(self, interrupt: bool) -> None:
        """End the hold and raise what arrived during it: ``Leave`` always, Ctrl-C only if ``interrupt`` (a Ctrl-C
        that came while an interrupted reply was being saved has done its job already)."""
        self.holding = False
        pending, self.pending = self.pending, None
        if isinstance(pending, Leave) or (interrupt and pending is not None):
            raise pending


def detach(terminals: list[int]) -> None:
    """Point the standard streams that were a terminal at /dev/null: after a hangup, writing to the terminal fails
    (EIO) and reading it never ends, and neither may stop the session from being saved."""
    devnull = os.open(os.devnull, os.O_RDWR)
    try:
        for fd in terminals:
            os.dup2(devnull, fd)
    finally:
        os.close(devnull)


class Repl:
    """Reads lines, runs commands and turns, and reports on each; ``run`` returns the exit code."""

    def __init__(
        self,
        engine: ChatEngine,
        out: Output,
        worker: MemoryWorker | None,
        events: ReplEvents,
        debug: bool = False,
        history: Path | None = None,
        data_root: Path | None = None,
        hold: SessionHold | None = None,
        price: Callable[[str], Price | None] = lambda model: None,
    ) -> None:
        self.engine = engine
        self.out = out
        self.worker = worker
        self.events = events
        self.debug = debug
        self.reader: LineReader = PipeReader(out.notice)
        self.commands = Commands(engine, out, self.reader.ask, history, data_root, hold)
        self.price = price  # the published price of a model, where it applies (``agent.pricing``)
        self.once = False  # one message, then the end (``run_once``): the notes name no command to type next
        self.signals = HeldInterrupts()
        self._unsaved_told = False
        self._recall_failing = False  # the last recall failed: a store away for many turns is said once
        self._away_told = False  # memory was away at start: said once (``ReplEvents.on_memory_back`` its return)
        self._opening_told = False  # a turn went without memories while the store on a server was still opening

    def use(self, reader: LineReader) -> None:
        self.reader = reader
        self.commands.ask = reader.ask

    def toolbar(self) -> str:
        """The status line, drawn anew at each redraw: the context is what ``/session`` counts, the conversation
        window (summary and turns, what the budget limits), so ``/clear`` shows at once."""
        status = self.engine.status()
        count = None if status.memory is None else status.memory.count
        memories = "off" if status.memory is None else ("…" if count is None else str(count))
        memories += writes_state(status)
        return (f" session {status.session} │ model {status.shown_model} │ memories {memories} │ "
                f"context {status.context_tokens:,} tokens ")

    def run(self) -> int:
        """The loop, until end of input, /exit, SIGTERM or SIGHUP. In a script, a failed turn makes the exit code
        1; a signal makes it 128 + its number, once the turn in flight is saved and pending memory writes are done."""
        return self._running(self._loop)

    def run_once(self, message: OneMessage) -> int:
        """One message (a one-shot prompt, a piped document) and its reply, and the chat ends: no slash command is
        read in it. The exit code is 0, 1 when the reply failed (an API error), 130 when Ctrl-C stopped it (the
        partial reply is kept, as in the chat), 128 + the signal's number after SIGTERM or SIGHUP."""
        self.once = True

        def once() -> int:
            result = self.turn(message.text, message.said)
            if self.worker is not None:
                self.worker.drain()  # the receipt of what was remembered comes before the end
            if result is None or result.turn.status == "interrupted":
                return 130
            return 1 if result.turn.status == "failed" else 0

        return self._running(once)

    def _loop(self) -> int:
        failed = False
        while True:
            try:
                line = self.reader.read()
            except EOFError:
                break
            except EmptyLineInterrupt:
                self.out.notice("(Ctrl-D or /exit leaves)")
                continue
            if not line.strip():
                continue
            said = None
            if is_command(line):
                try:
                    action = self.commands.handle(line)
                except KeyboardInterrupt:
                    self.out.notice("(cancelled)")
                    continue
                self._save_problem()
                if action.exit:
                    break
                if action.send is None:
                    continue
                line, said = action.send, action.said
            with typed_ahead_kept() if self.out.mode.interactive else nullcontext():
                result = self.turn(line, said)
            failed = failed or (result is not None and result.turn.status == "failed")
            if not self.out.mode.interactive and self.worker is not None:
                self.worker.drain()  # a script sees each turn's notices in order
        return 1 if failed and not self.out.mode.interactive else 0

    def _running(self, body: Callable[[], int]) -> int:
        """Run ``body`` (the loop, or one message) with the chat's signals, and end as every chat ends: a signal
        saves the turn in flight, a summary being made and pending memory writes finish, and what could not be
        saved is said. The exit code is ``body``'s unless a signal or a failed save decides it."""
        code = 0
        leave: Leave | None = None
        with self.signals:
            try:
                code = body()
            except Leave as exc:
                leave = exc
                self.out.notice(f"({exc}: the session is saved; pending memory writes finish, then the chat ends)")
            finally:
                self.signals.holding = True  # nothing cuts the way out short: it saves and finishes the writes
                try:
                    self._fold_problem(self.engine.settle())  # a summary being made is saved before the chat ends
                finally:
                    if self.worker is not None:
                        self.worker.close()
        if leave is None and isinstance(self.signals.pending, Leave):  # it came on the way out
            leave = self.signals.pending
        status = self.engine.status()
        if status.unsaved is not None:
            lost = ("The turns since the last save are" if self.engine.session_store().exists(status.session) else
                    "Every turn of this session is")
            self.out.error(f"{status.unsaved} {lost} lost when this chat ends.")
            return 1 if leave is None else leave.exit_code
        if leave is not None:
            return leave.exit_code
        return code

    def turn(self, line: str, said: str | None = None) -> TurnResult | None:
        """One exchange; None when Ctrl-C came before the request was sent. SIGTERM or SIGHUP at any point saves
        the turn as Ctrl-C does (the line, and the reply as far as it got, marked interrupted), then raises
        ``Leave``. ``said``: the user's own words when the line carries attached text (``ChatEngine.begin``)."""
        guard = self.signals
        try:
            pending = self.engine.begin(line, said)
        except KeyboardInterrupt:
            self.out.notice("(cancelled)")
            return None
        except Leave:
            pending = PendingTurn(line, [], None)
            if said is not None:
                pending.said = pending.own = said
            pending.interrupted = True
            guard.holding = True
            self.engine.finish(pending)
            raise
        self._memory_problem()
        leave: Leave | None = None
        try:
            with self.out.lock:
                stream = self.out.reply_stream()
                pieces = self.engine.stream(pending)
                try:
                    for piece in pieces:
                        with guard.held():
                            stream.feed(piece)
                except KeyboardInterrupt:
                    pending.interrupted = True
                except Leave as exc:
                    pending.interrupted, leave = True, exc
                finally:
                    guard.holding = True  # neither a second Ctrl-C nor a signal may cut the clean-up or the save short
                    pieces.close()
                    stream.close()
        except Exception:  # the terminal failed (EIO as it hangs up, before SIGHUP lands): the turn is saved anyway
            pending.interrupted = True
            self.engine.finish(pending)
            if isinstance(guard.pending, Leave):
                raise guard.pending from None
            raise
        result = self.engine.finish(pending)
        if leave is not None:
            raise leave
        guard.release(interrupt=False)
        self._report(pending, result)
        self._save_problem()
        self._await_receipt(result.number)
        return result

    def _await_receipt(self, number: int) -> None:
        """Let this turn's memory write land before the next prompt is drawn, so its receipt follows the reply
        and precedes the prompt. A slower write (the store still opening) reports above the prompt when it lands,
        naming its turn; Ctrl-C stops the wait, never the write."""
        if not self.out.mode.interactive:  # a script waits for every write (``run``)
            return
        try:
            if not self.engine.await_write(RECEIPT_WAIT):
                self.events.late.add(number)
        except KeyboardInterrupt:
            self.events.late.add(number)

    def _save_problem(self) -> None:
        """Say once when the session stops being saved, and once when it is saved again."""
        unsaved = self.engine.status().unsaved
        if unsaved is not None and not self._unsaved_told:
            self.out.error(f"{unsaved} The chat goes on: the turns are kept in memory and saved once a save "
                           "succeeds.")
        elif unsaved is None and self._unsaved_told:
            self.out.notice("(the session is saved again, with every turn)")
        self._unsaved_told = unsaved is not None

    def _memory_problem(self) -> None:
        error = self.engine.status().memory_error
        if error is None:
            if self._recall_failing:
                self.out.notice("(memory answers again)")
            self._recall_failing = False
            return
        if self.worker is not None and self.worker.failed:
            self.out.warn(f"Long-term memory is unavailable: {error} Chatting without it in this run.")
            self.engine.without_memory()
        elif self.worker is not None and self.worker.away:  # since the start: said once, and its return once
            if not self._away_told:
                self.out.warn(f"Long-term memory is away: {error} What this chat would remember is kept on this "
                              "machine until memory answers, and remembered then.")
            self._away_told, self._recall_failing = True, False
        elif isinstance(error, StoreOpening):
            if not self._opening_told:
                self.out.notice(f"({error} This reply goes without it.)")
            self._opening_told = True
        elif not self._recall_failing:
            self.out.warn(f"memory: recall failed ({error}); the replies have no memories until it answers again.")
            self._recall_failing = True

    def _report(self, pending: PendingTurn, result: TurnResult) -> None:
        status = result.turn.status
        for note in pending.notes:
            self.out.warn(note)
        retry = "" if self.once else "; /retry asks again"
        if status == "interrupted":
            kept = "kept in the session" if self.engine.status().saving else "shown, and not saved (no session)"
            self.out.warn(f"[interrupted: the partial reply is {kept}{retry}]")
        elif status == "failed" and result.error is not None:
            self.out.error(f"error: {result.error}")
            if self.debug:
                self.out.show(Traceback.from_exception(type(result.error), result.error, result.error.__traceback__))
            if pending.text:
                self.out.warn(f"[the partial reply is kept, marked incomplete{retry}]")
        elif status == "truncated":
            reason = pending.finish_reason or "no finish reason"
            max_tokens = self.engine.status().max_tokens
            limit = f": it reached AGENT_MAX_TOKENS ({max_tokens:,})" if reason == "length" and max_tokens else ""
            self.out.warn(f"[the reply was cut off ({reason}){limit}; it is kept, marked cut off]")
        self._fold_problem(pending.fold)
        if result.left:
            left = "the oldest turn" if result.left == 1 else f"the {result.left} oldest turns"
            self.out.notice(f"({left} left the context window; a summary keeps it in mind)")
        if status != "failed" or pending.text:
            self.out.notice(self._usage(pending, status))

    def _fold_problem(self, fold: Fold | None) -> None:
        if fold is not None and fold.error:
            turns = "the earlier turn" if fold.turns == 1 else f"{fold.turns} earlier turns"
            self.out.warn(f"Could not summarise {turns} ({fold.error}); kept the user's lines instead.")

    def _usage(self, pending: PendingTurn, status: str) -> str:
        if pending.prompt_tokens is not None and pending.completion_tokens is not None:
            tokens_in, tokens_out, mark = pending.prompt_tokens, pending.completion_tokens, ""
        else:
            tokens_in = sum(count_tokens(m.content) for m in pending.messages)
            tokens_out, mark = count_tokens(pending.text), "~"
        # The server sends usage at the end of a stream: one cut short (Ctrl-C, a failure) never got there.
        why = {"interrupted": "the reply was interrupted", "failed": "the reply broke off"}.get(
            status, "the server sent no usage")
        note = f" (estimated: {why})" if mark else ""
        price = self.price(self.engine.status().model)
        cost = f" · {cost_note(price, tokens_in, tokens_out)}" if price is not None else ""
        return f"↳ {mark}{tokens_in:,} tokens in · {mark}{tokens_out:,} out{note}{cost}"



class ReplEvents:
    """The chat's events (``ChatEvents``) as lines of the transcript: the receipt of each memory write,
    each retry of a request, a failed extraction. ``late`` holds the turns whose memory write outlasted
    ``RECEIPT_WAIT``: their receipt, printed above a later prompt, names its turn."""

    def __init__(self, out: Output) -> None:
        self.out = out
        self.late: set[int] = set()
        self._spooling = False  # a turn waits in the spool: the next ones are said in short
        self._held: set[int] = set()  # turns kept while the store was still opening: said when they land

    def on_write(self, outcome: WriteOutcome) -> None:
        """Called on the memory thread after each background write."""
        if outcome.spooled and isinstance(outcome.error, StoreOpening):
            # Not known to be away, only slow: its receipt comes when it is written, as a write that landed late
            # (and if the store turns out away, the next turn says so for it too).
            self._held.add(outcome.turn)
            if self.out.mode.interactive:
                self.late.add(outcome.turn)
            return
        late = f"(turn {outcome.turn}) " if outcome.turn in self.late else ""
        if outcome.replayed and outcome.turn not in self._held:
            late = f"(turn {outcome.turn}, kept while memory was away) "
        if outcome.replayed:
            self._held.discard(outcome.turn)
        if outcome.note:  # a waiting turn that is not written (a forget names it, it cannot be read)
            self.out.warn(f"{late}memory: {outcome.note}")
            return
        if outcome.spooled:
            if self._spooling:
                self.out.warn(f"memory: turn {outcome.turn} is kept on this machine too, until memory answers again")
            else:
                self.out.warn(f"memory: turn {outcome.turn} is not remembered yet ({outcome.error}); it is kept on "
                              "this machine and remembered when memory answers again")
            self._spooling = True
            return
        self._spooling = False
        if outcome.error is not None:
            self.out.error(f"memory: could not save turn {outcome.turn} ({outcome.error})")
        elif outcome.report is not None and outcome.report.stored:
            report = outcome.report
            for record in report.stored:
                self.out.notice(f"{late}{report.verb(record)}: {shorten(record.text)}", "green")
            if report.superseded:
                self.out.notice(f"it replaces {plural(len(report.superseded), 'earlier memory', 'earlier memories')}"
                                " (/memories --history shows it, /restore undoes it)", "green")
            for record in report.evicted:
                self.out.notice(evicted_line(record))
            for reason in report.consolidated:
                self.out.notice(f"{late}extraction: {reason}", "green")
            for reason in report.dropped:
                self.out.notice(f"{late}extraction: profile value not taken ({reason})")
        elif outcome.report is not None and outcome.report.skipped_reason:
            self.out.warn(f"{late}memory: not saved ({outcome.report.skipped_reason})")

    def on_retry(self, notice: RetryNotice) -> None:
        self.out.warn(f"{notice.reason}: retrying in {notice.delay:.1f} s ({notice.attempt}/{notice.retries})…")

    def on_extraction_failed(self, error: ChatError) -> None:
        self.out.warn(f"memory: extraction failed ({error})")

    def on_memory_back(self) -> None:
        self.out.notice("(memory answers again: what this chat kept on this machine is remembered now)")


def pick_session(store: SessionStore, options: ChatOptions) -> tuple[str, bool]:
    """The session name of this run and whether it exists already."""
    if options.session and options.resume_latest:
        raise UsageError("Use -s NAME or -c, not both.")
    if options.session:
        name = check_name(options.session)
        return name, store.exists(name)
    if options.resume_latest:
        latest = store.latest()
        if latest is not None:
            return latest, True
    return unused_name(store), False


def open_session(store: SessionStore, name: str, exists: bool, warn: Callable[[str], None]) -> tuple[Session, bool]:
    """The session ``name`` (the caller holds its lock) and whether it was resumed. A damaged file is moved aside,
    kept for the user to inspect, and the session starts afresh with one line saying where the file went."""
    if exists:
        try:
            return store.load(name), True
        except SessionCorrupt as exc:
            moved = store.set_aside(name)
            warn(f"The session file {exc.path} was damaged ({exc.reason}): it was moved aside to {moved}, and "
                 f"session {name} starts afresh.")
    now = time.time()
    return Session(name, now, now), False


def banner(repl: Repl, resumed: bool, options: ChatOptions) -> None:
    """The lines an interactive chat opens with: the session, the model the server serves, the memory's state."""
    repl.engine.adopt_server(BANNER_WAIT)
    status = repl.engine.status()
    state = f"resumed, {plural(status.turns, 'turn', 'turns')}" if resumed else "new"
    memory = "off" if options.no_memory else "read-only" if options.read_only else "on"
    repl.out.notice(f"agent · session {status.session} ({state}) · model {status.shown_model} · memory {memory}",
                    "bold")
    repl.out.notice("/help lists the commands · Alt-Enter adds a line · Ctrl-C stops a reply · Ctrl-D leaves")
    if resumed and status.last_turn is not None:
        repl.out.notice(f"last: you: {shorten(status.last_turn.user, 80)}")

