"""Slash commands: what the user can see and correct from inside the chat.

A command is any line starting with ``/`` (a leading space sends it as a message instead); a unique prefix is
enough (``/mem``). Numbers given to ``/forget`` refer to the last ``/memories`` listing. ``/forget QUERY`` shows
its matches and asks before forgetting anything. Memory text is always printed escaped.

Forget means gone from the whole data directory, not only from the store: ``agent.forget`` (also used by
``agent memories forget``) does it, crash-safe; this module only says what it did.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from pathlib import Path

from rich.table import Table
from rich.text import Text

from agent import forget, undo
from agent.app import queries
from agent.app.chat_engine import ChatEngine
from agent.app.editing import Unchanged, edit_memory
from agent.app.engine_status import EngineStatus
from agent.app.forgetting import forget_ids
from agent.app.memory_worker import MemoryWorker
from agent.app.selectors import MIN_PREFIX, SHOWN_ID, pick_all, replaced_by_prefix
from agent.domain import MemoryRecord, ScoredMemory
from agent.errors import AgentError
from agent.sessions import SessionHold
from agent.ui.controls import ChatControls, writes_state
from agent.ui.editor import edit_text
from agent.ui.output import Output
from agent.ui.render import escape_terminal, memory_table, plural, safe
from agent.ui.session_commands import SessionCommands
from agent.ui.truth_view import history_table, profile_rows, profile_table

EXIT_WORDS = {"exit", "quit", "/exit", "/quit"}
# A word of /forget taken for an id prefix: hex with a digit in it (no word of a query has one) or a whole shown id.
_ID = re.compile(r"(?=[a-f]*[0-9])[0-9a-f]{4,32}|[0-9a-f]{8,32}")
PAGE = 50  # /memories shows the newest 50; /memories --all shows every one
SHOWN_CHARS = 160


@dataclass(frozen=True)
class Action:
    """What the REPL does after a command: leave, send a line as a turn (``/retry``), or nothing; ``said`` is the
    user's own words in that line when it carries attached text (``Turn.said``)."""

    exit: bool = False
    send: str | None = None
    said: str | None = None


def is_command(line: str) -> bool:
    return line.startswith("/") or line.strip().lower() in EXIT_WORDS


def resolve(word: str) -> list[str]:
    """The commands ``word`` names: itself, or every command it is a prefix of."""
    if word in COMMANDS:
        return [word]
    return [name for name in COMMANDS if name.startswith(word)]


def shorten(text: str, limit: int = SHOWN_CHARS) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def evicted_line(record: MemoryRecord) -> str:
    """What the chat says of a memory a write evicted past the capacity (``AGENT_MEMORY_CAPACITY``)."""
    return f"evicted (the least recently seen, past the memory capacity): {shorten(record.text)}"


class Commands(ChatControls, SessionCommands):
    """Runs slash commands against the engine and memory; ``ask`` reads the answer to a yes/no question;
    ``history`` is the input history file, cleaned of what ``/forget`` forgets; ``data_root`` the data directory,
    where copies of the index set aside are (by default the one the session files are in); ``hold`` the lock of
    the session the chat is in, which ``/new`` and ``/sessions`` move."""

    def __init__(
        self,
        engine: ChatEngine,
        out: Output,
        ask: Callable[[str], str | None],
        history: Path | None = None,
        data_root: Path | None = None,
        hold: SessionHold | None = None,
    ) -> None:
        self.engine = engine
        self.out = out
        self.ask = ask
        self.history = history
        self.data_root = data_root or engine.session_store().directory.parent
        self.hold = hold
        self._listing: list[str] = []
        self._session_listing: list[str] = []

    def handle(self, line: str) -> Action:
        stripped = line.strip()
        if stripped.lower() in EXIT_WORDS:
            return Action(exit=True)
        word, _, arg = stripped.partition(" ")
        names = resolve(word.lower())
        if len(names) != 1:
            problem = "is ambiguous: " + ", ".join(names) if names else "is not a command"
            self.out.warn(f"{word} {problem}. /help lists the commands; start a line with a space to send it "
                          "as a message.")
            return Action()
        name = names[0]
        run = COMMANDS[name].run
        if run is None:
            return Action(exit=True)
        try:
            return run(self, arg.strip()) or Action()
        except AgentError as exc:
            self.out.error(f"{name}: {exc}")
            return Action()

    def _help(self, arg: str) -> None:
        table = Table.grid(padding=(0, 2))
        for name, command in COMMANDS.items():
            usage, _, description = command.help.rpartition("  ")
            table.add_row(Text(f"{name} {usage}".strip()), Text(description))
        self.out.show(table)
        self.out.notice("Enter sends; Alt-Enter or Esc Enter adds a line; Ctrl-C stops a reply; Ctrl-D leaves.")

    def _worker(self) -> MemoryWorker | None:
        """The memory worker, or None with a word to the user when this run has no memory."""
        memory = self.engine.memory_worker()
        if memory is None:
            self.out.warn("Long-term memory is off in this run (--no-memory, or it could not be opened).")
        return memory

    def _writer(self, nothing: str) -> MemoryWorker | None:
        """The memory worker when this run may write memory, or None with a word to the user."""
        memory = self._worker()
        if memory is not None and memory.read_only:
            self.out.warn(f"Memory is read-only in this run (--read-only): {nothing}.")
            return None
        return memory

    def _show(self, rows: Sequence[MemoryRecord | ScoredMemory], title: str) -> None:
        self._listing = [(r.record if isinstance(r, ScoredMemory) else r).id for r in rows]
        self.out.show(memory_table(rows, title=safe(title)))

    def _memories(self, query: str) -> None:
        memory = self._worker()
        if memory is None:
            return
        more = 0
        if query == "--history":
            self._history(memory)
            return
        if not query or query == "--all":
            everything = [r for r in memory.call(queries.records) if r.current]
            shown = everything if query == "--all" else everything[-PAGE:]
            rows: Sequence[MemoryRecord | ScoredMemory] = shown
            more = len(everything) - len(shown)
            total = plural(len(everything), "memory", "memories")
            empty, title = "No memories yet.", f"the newest {len(shown)} of {total}" if more else total
        else:
            rows = memory.call(queries.Matching(query))
            threshold = memory.call(queries.threshold)
            empty, title = f"Nothing matches above the similarity threshold {threshold:.2f}.", f"matches for {query}"
        if not rows:
            self._listing = []
            self.out.notice(empty)
            return
        self._show(rows, title)
        if more:
            self.out.notice(f"{plural(more, 'older memory is', 'older memories are')} not shown: /memories --all "
                            "lists every one, /memories QUERY finds the ones about QUERY.")
        self.out.notice("/forget N forgets number N.")

    def _history(self, memory: MemoryWorker) -> None:
        records = memory.call(queries.records)
        replaced = sorted((r for r in records if not r.current), key=lambda r: -r.superseded_at)
        if not replaced:
            self._listing = []
            self.out.notice("No memory was replaced by a later one.")
            return
        self._listing = [r.id for r in replaced]
        self.out.show(history_table(replaced, {r.id: r for r in records},
                                    title=plural(len(replaced), "replaced memory", "replaced memories")))
        self.out.notice("/restore N makes number N current again; /forget N forgets it.")

    def _profile(self, arg: str) -> None:
        memory = self._worker()
        if memory is None:
            return
        current, history = memory.call(queries.profile)
        if not current and not history:
            self._listing = []
            self.out.notice("No profile facts yet: they come from what you say about yourself (where you live, "
                            "your job, your diet and allergies, what to call you...).")
            return
        self._listing = [entry.memory for entry in profile_rows(current, history)]
        self.out.show(profile_table(current, history, title="profile"))
        self.out.notice("/forget N forgets the memory fact N came from; /memories --history shows what was replaced.")

    def _restore(self, arg: str) -> None:
        memory = self._worker()
        if memory is None:
            return
        if arg.isdigit() and 1 <= int(arg) <= len(self._listing):
            wanted = self._listing[int(arg) - 1]
        elif arg.isdigit() and len(arg) < SHOWN_ID:  # a number, not an id: say which listing it needs
            self.out.warn(f"No number {arg} in the last listing: /memories --history lists the replaced memories "
                          "again, numbered." if self._listing else
                          "No listing to take a number from: /memories --history lists the replaced memories, "
                          "numbered.")
            return
        else:
            ids = replaced_by_prefix(memory.call(queries.records), arg) if arg else []
            if len(ids) != 1:
                self.out.warn("Usage: /restore N (from /memories --history) or /restore ID of a replaced memory.")
                return
            wanted = ids[0]
        restored = memory.call(queries.Restore(wanted))
        if restored is None:
            self.out.warn("That memory is not a replaced one (it is current, or was forgotten): nothing restored.")
            return
        # The listing's numbers stay valid: each names a memory by id, so /restore 2 after /restore 1 is the 2 shown.
        self.out.notice(f"restored: {shorten(restored.text)}", "green")

    def _forget(self, arg: str) -> None:
        memory = self._writer("nothing is forgotten")
        if memory is None:
            return
        if not arg:
            self.out.warn("Usage: /forget N (from the last /memories), /forget ID or /forget QUERY.")
            return
        tokens = arg.split()
        if all(token.isdigit() or _ID.fullmatch(token.lower()) for token in tokens):
            named = self._numbers_or_ids(memory, tokens)
            if named is None:
                return
            ids, sure = named
            if sure:
                self._erase(memory, ids)
                return
            # A short prefix may be a year or a code the user meant as a query ("/forget 2024"): show, then ask.
            known = memory.call(queries.by_id)
            self._ask_then_erase(memory, [known[i] for i in ids], f"memories whose ids start with {arg}")
            return
        matches = memory.call(queries.Matching(arg))
        if not matches:
            self.out.notice(f"No memory matches {shorten(arg, 60)!r}.")
            return
        self._ask_then_erase(memory, matches, f"memories matching {arg}")

    def _ask_then_erase(self, memory: MemoryWorker, rows: Sequence[MemoryRecord | ScoredMemory], title: str) -> None:
        self._show(rows, title)
        answer = self.ask(f"Forget {'this memory' if len(rows) == 1 else f'these {len(rows)} memories'}? [y/N] ")
        if (answer or "").strip().lower() in {"y", "yes"}:
            self._erase(memory, [(r.record if isinstance(r, ScoredMemory) else r).id for r in rows])
        else:
            self.out.notice("Nothing forgotten.")

    def _numbers_or_ids(self, memory: MemoryWorker, tokens: list[str]) -> tuple[list[str], bool] | None:
        """The memories ``tokens`` name, each a number of the last listing or else an id prefix (as
        ``agent memories forget`` takes them: ``05177021`` is an id unless the listing has that many rows), and
        whether they are named for sure (listing numbers and whole shown ids) rather than by a short prefix; None,
        with one line saying which token named none or several, when any does."""
        picks = pick_all(tokens, partial(memory.call, queries.ids), self._listing)
        ids = [p.id for p in picks if p.id is not None]
        if len(ids) < len(picks):
            self.out.warn(self._unknown(picks[-1].token, picks[-1].matches))
            return None
        return ids, all(p.sure for p in picks)  # a shorter prefix than a shown id is shown and asked about

    @staticmethod
    def _unknown(token: str, matches: int) -> str:
        if token.isdigit() and len(token) < MIN_PREFIX:
            return f"No number {token} in the last listing: run /memories first."
        number = f"No number {token} in the last listing, and n" if token.isdigit() else "N"
        if matches:
            return f"{token} is the start of {matches} memory ids: give more of it (the id column of /memories)."
        return f"{number}o memory id starts with {token}: the id column of /memories shows the ids."

    def _erase(self, memory: MemoryWorker, ids: list[str]) -> None:
        """Forget ``ids`` and say which memories went and where else their words were removed from."""
        gone, erased = forget_ids(memory.call, ids, self._places(memory), own=self.engine)
        for record in gone:
            self.out.notice(f"forgot: {shorten(record.text)}")
        self.out.notice(f"Forgot {plural(erased.count, 'memory', 'memories')}.")
        self._listing = []
        self._tell(erased, this_session=erased.this_session)

    def _places(self, memory: MemoryWorker) -> forget.Places:
        """Where a forget takes the words out (``agent.forget``, which holds Ctrl-C until it is done and also
        scrubs this session, in memory too): the sessions directory is in the data directory, where copies of the
        index and the ledger are set aside."""
        machine = self.engine.status().machine
        return forget.Places(self.engine.session_store(), self.history, self.data_root, memory.spool, machine)

    def _tell(self, erased: forget.Result, this_session: bool, back: Sequence[MemoryRecord] | None = None) -> None:
        """What a forget did, and which memories are current again (``back``, by default the forget's own)."""
        for line in forget.back_line(erased.back if back is None else back):
            self.out.notice(line)
        for line in erased.outcome.lines(this_session=this_session):
            self.out.notice(line)
        if erased.index_error is not None:
            self.out.warn(f"memory: the index keeps their vectors until the next start ({erased.index_error})")
        if erased.interrupted:
            self.out.notice("(Ctrl-C waited for the forget to finish.)")

    def _edit(self, arg: str) -> None:
        """Rewrite one memory in the editor: stored anew with its provenance and embedded again, and the old text
        forgotten from every file (``agent.edit``)."""
        memory = self._writer("nothing is changed")
        if memory is None:
            return
        if len(arg.split()) != 1 or not (arg.isdigit() or _ID.fullmatch(arg.lower())):
            self.out.warn("Usage: /edit N (a number from the last /memories) or /edit ID.")
            return
        named = self._numbers_or_ids(memory, [arg])
        if named is None:
            return
        [chosen] = named[0]
        old = memory.call(queries.Fetch([chosen])).get(chosen)
        if old is None:
            self.out.notice("That memory is gone (forgotten meanwhile): nothing to edit.")
            return
        edited = edit_memory(memory.call, old, self._places(memory), edit_text, own=self.engine)
        if isinstance(edited, Unchanged):
            self.out.notice(edited.why)
            return
        self._listing = []
        self.out.notice(f"edited: {shorten(edited.stored.text)} (was: {shorten(old.text)})", "green")
        self._tell(edited.result, this_session=edited.result.this_session, back=edited.back)

    def _remember(self, text: str) -> None:
        memory = self._writer("nothing is remembered")
        if memory is None:
            return
        if not text:
            self.out.warn("Usage: /remember TEXT")
            return
        status = self.engine.status()
        session, turn = status.session, status.turns
        outcome = memory.remember(text, session=session, turn=turn)
        report = outcome.report
        if report is None:  # the store does not answer: the words wait in the spool with the turns
            self.out.warn(f"Not remembered yet ({outcome.error}): it is kept on this machine and remembered when "
                          "memory answers again.")
            return
        for record in report.stored:
            self.out.notice(f"{report.verb(record)}: {shorten(record.text)}", "green")
        for record in report.evicted:
            self.out.notice(evicted_line(record))

    def _why(self, arg: str) -> None:
        status = self.engine.status()
        recall = status.last_recall
        if recall is None:
            error = status.memory_error
            if status.memory is not None and error is not None:  # the last message's recall failed
                self.out.notice(f"Memory did not answer for the last message ({error}): none was injected.")
                return
            self.out.notice("No reply with memory yet in this run." if status.memory is not None else
                            "Long-term memory is off in this run.")
            return
        block = recall.block
        if not block.profile and not block.memories:
            self._listing = []
            self.out.notice(f"No profile fact yet and no memory reached the similarity threshold "
                            f"{recall.threshold:.2f} for the last message: none was injected.")
            return
        self._listing = [entry.memory for entry in block.profile]
        if block.profile:  # the profile goes with every request, whatever the message
            self.out.show(profile_table(block.profile, (), title="profile sent with the last reply"))
        if block.memories:
            self._listing += [m.record.id for m in block.memories]
            self.out.show(memory_table(block.memories, first=len(block.profile) + 1,
                                       title=f"memories injected into the last reply (threshold "
                                             f"{recall.threshold:.2f})"))
        else:
            self.out.notice(f"No memory reached the similarity threshold {recall.threshold:.2f} for the last "
                            "message: only the profile above was sent.")
        self.out.notice(f"The memory went into {status.placement.describe()}.")

    def _session(self, arg: str) -> None:
        status = self.engine.status()
        started = datetime.fromtimestamp(status.created_at).strftime("%Y-%m-%d %H:%M")
        rows = [
            ("session", status.session),
            ("file", str(self.engine.session_store().path(status.session)) if status.saving else
                     "none: this chat writes no session (--no-session; /new NAME starts one that is written)"),
            ("started", started),
            ("turns", f"{status.turns} ({status.window_turns} in the context window)"),
            ("context", f"{status.context_tokens:,} of {status.budget_tokens:,} tokens in the conversation "
                        "window" + (", with a summary of earlier turns" if status.summarised else "")
                        + " (as the toolbar; each request adds the system prompt and the memories recalled)"),
            ("model", status.shown_model if status.shown_model == status.model else
                      f"{status.shown_model} (served; asked for {status.model})"),
            ("memory", self._memory_state(status)),
        ]
        if status.server is not None:
            info = status.server.info
            context = f"context {info.context:,} tokens" if info.context else "publishes no context size"
            rows.append(("server", f"{info.kind}, {context}; the system prompt goes into "
                                   f"{status.server.placement.describe()}"))
        table = Table.grid(padding=(0, 2))
        for key, value in rows:
            table.add_row(Text(key), Text(escape_terminal(value)))
        self.out.show(table)

    @staticmethod
    def _memory_state(status: EngineStatus) -> str:
        """How many memories there are, once the store (opened in the background at start) has said so."""
        memory = status.memory
        if memory is None:
            return "off"
        if memory.count is None:
            if memory.away:
                return "away (what this chat keeps waits on this machine until memory answers)"
            return "could not be opened" if memory.failed else "counting… (the store is still opening)"
        return plural(memory.count, "memory", "memories") + writes_state(status)

    def _retry(self, arg: str) -> Action | None:
        last = self.engine.status().last_turn
        said = last.said if last is not None else None  # a one-shot turn's attached text stays out of the gate again
        line = self.engine.take_back_last()
        if line is None:
            self.out.notice("Nothing to retry yet.")
            return None
        return Action(send=line, said=said)

    def _undo(self, arg: str) -> None:
        """Take back the last exchange and everything its write did to memory (``agent.undo``): the memories it
        wrote are forgotten as ``/forget`` forgets them (every file, crash-safe), a quote it added to a memory it
        said again leaves that memory, what it replaced is current again, and its words no longer wait in the
        spool; then the turn leaves the session and the context window. One line says which."""
        memory = self.engine.memory_worker()
        undone = undo.take_back(self.engine, None if memory is None else self._places(memory))
        if undone is None:
            self.out.notice("Nothing to undo yet.")
            return
        said = f"Undid turn {undone.number} (you: {shorten(undone.turn.user, 60)})"
        parts = []
        if not undone.memory:
            parts.append("long-term memory is off in this run, so no memory was looked at")
        if undone.kept:
            stay = "it wrote stays" if len(undone.kept) == 1 else "it wrote stay"
            parts.append(f"memory is read-only in this run, so the {plural(len(undone.kept), 'memory', 'memories')} "
                         f"{stay}: {'; '.join(shorten(r.text, 60) for r in undone.kept)}")
        if undone.waiting:
            parts.append("it had not reached memory (the store did not answer), and it no longer waits to be "
                         "remembered")
        if undone.forgotten:
            which = "the memory" if len(undone.forgotten) == 1 else f"the {len(undone.forgotten)} memories"
            parts.append(f"forgot {which} it wrote: {'; '.join(shorten(r.text, 60) for r in undone.forgotten)}")
        if undone.restated:
            parts.append("took its words out of the memory it said again: "
                         f"{'; '.join(shorten(r.text, 60) for r in undone.restated)}")
        if undone.back:
            parts.append(f"what it replaced is current again: {'; '.join(shorten(r.text, 60) for r in undone.back)}")
        if undone.memory and not parts:
            parts.append("it wrote no memory")
        self.out.notice(f"{said}; {'; '.join(parts)}.")
        if undone.result is not None:
            self._listing = []
            self._tell(undone.result, this_session=False)

    def _clear(self, arg: str) -> None:
        self.engine.clear()
        turns = plural(self.engine.status().turns, "turn", "turns")
        self.out.notice(f"Short-term context cleared; the session file keeps its {turns}.")


@dataclass(frozen=True)
class Slash:
    """A slash command: its help (the usage, two spaces, what it does) and the method of ``Commands`` that runs
    it, given the rest of the line; None for the ones that leave the chat."""

    help: str
    run: Callable[[Commands, str], Action | None] | None = None


# Every slash command, in the order /help lists them: the one table that /help, completion and dispatch read.
COMMANDS: dict[str, Slash] = {
    "/help": Slash("list the commands", Commands._help),
    "/memories": Slash(
        "[QUERY]  what I remember about you (all, or the matches for QUERY; --history: what was replaced)",
        Commands._memories,
    ),
    "/profile": Slash(
        "the stable facts about you: each value, when and where you said it, and what it replaced",
        Commands._profile,
    ),
    "/forget": Slash(
        "N... | ID | QUERY  forget memories (numbers from the last /memories or /profile)",
        Commands._forget,
    ),
    "/remember": Slash("TEXT  remember TEXT as you say it", Commands._remember),
    "/restore": Slash(
        "N | ID  make a replaced memory current again (numbers from /memories --history)",
        Commands._restore,
    ),
    "/edit": Slash("N | ID  rewrite a memory in $EDITOR (numbers from the last /memories)", Commands._edit),
    "/copy": Slash("the last reply to the clipboard (through the terminal, so it works over SSH)", Commands._copy),
    "/why": Slash("the memories injected into the last reply, with similarity and threshold", Commands._why),
    "/session": Slash("this session: name, file, turns, context size", Commands._session),
    "/sessions": Slash("[N | NAME | search TEXT]  your sessions; go into one; find words in them", Commands._sessions),
    "/new": Slash("[NAME]  start a fresh session without leaving the chat", Commands._new),
    "/model": Slash("[NAME]  the models the server serves, or switch to NAME", Commands._model),
    "/retry": Slash("ask the last message again (after an error or an interruption)", Commands._retry),
    "/undo": Slash("take back the last exchange, and forget the memories it wrote", Commands._undo),
    "/pause": Slash("stop remembering what you say (until /resume)", Commands._pause),
    "/resume": Slash("remember what you say again", Commands._resume),
    "/clear": Slash("empty the short-term context; the session file keeps the turns", Commands._clear),
    "/exit": Slash("leave (also /quit, exit, quit, Ctrl-D)"),
    "/quit": Slash("leave"),
}
