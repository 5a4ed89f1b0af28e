"""Slash commands: what the user can see and correct from inside the chat.

A command is any line starting with ``/`` (a leading space sends it as a message instead); a unique prefix is
enough (``/mem``). Numbers given to ``/forget`` refer to the last ``/memories`` listing. ``/forget QUERY`` shows
its matches and asks before forgetting anything. Memory text is always printed escaped.

Forget means gone from the whole data directory, not only from the store: ``erase_traces`` (also used by
``agent memories forget``) takes the forgotten words out of the session files, the input history and the reply
context other memories keep for keyword search. The memory core knows nothing of sessions; this is where both meet.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path

from rich.table import Table
from rich.text import Text

from agent.chat import ChatEngine, MemoryWorker
from agent.domain import MemoryRecord, ScoredMemory
from agent.errors import AgentError
from agent.memory.service import MemoryService
from agent.sessions import Forgotten, SessionStore
from agent.ui.history import scrub_history
from agent.ui.output import Output
from agent.ui.render import escape_terminal, memory_table, safe
from agent.ui.truth_view import history_table, profile_rows, profile_table

COMMANDS: dict[str, str] = {
    "/help": "list the commands",
    "/memories": "[QUERY]  what I remember about you (all, or the matches for QUERY; --history: what was replaced)",
    "/profile": "the stable facts about you: each value, when and where you said it, and what it replaced",
    "/forget": "N... | ID | QUERY  forget memories (numbers from the last /memories or /profile)",
    "/remember": "TEXT  remember TEXT as you say it",
    "/restore": "N | ID  make a replaced memory current again (numbers from /memories --history)",
    "/why": "the memories injected into the last reply, with similarity and threshold",
    "/session": "this session: name, file, turns, context size",
    "/retry": "ask the last message again (after an error or an interruption)",
    "/clear": "empty the short-term context; the session file keeps the turns",
    "/exit": "leave (also /quit, exit, quit, Ctrl-D)",
    "/quit": "leave",
}
EXIT_WORDS = {"exit", "quit", "/exit", "/quit"}
_ID = re.compile(r"[0-9a-f]{6,32}")
SHOWN_CHARS = 160


@dataclass(frozen=True)
class Action:
    """What the REPL does after a command: leave, send a line as a turn (``/retry``), or nothing."""

    exit: bool = False
    send: str | None = None


def is_command(line: str) -> bool:
    return line.startswith("/") or line.strip().lower() in EXIT_WORDS


def resolve(word: str) -> list[str]:
    """The commands ``word`` names: itself, or every command it is a prefix of."""
    if word in COMMANDS:
        return [word]
    return [name for name in COMMANDS if name.startswith(word)]


def plural(count: int, one: str, many: str) -> str:
    return f"{count} {one if count == 1 else many}"


def shorten(text: str, limit: int = SHOWN_CHARS) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def scrub_contexts(service: MemoryService, forgotten: Forgotten) -> int:
    """Rewrite the memories whose keyword context (the end of the reply a remembered line answered) quotes forgotten
    words: each is deleted, which zeroes its bytes, and stored again under the same id and dates without them (the
    ledger is written before the embedding, so a failing embedder cannot lose it). Returns how many."""
    affected = [r for r in service.list() if forgotten.within(r.extra.get("context", ""))]
    if affected:
        service.forget([r.id for r in affected])
        service.write([replace(r, extra={**r.extra, "context": forgotten.scrub(r.extra["context"])})
                       for r in affected])
    return len(affected)


def erase_traces(
    store: SessionStore,
    history: Path | None,
    records: Sequence[MemoryRecord],
    on_memory: Callable[[Callable[[MemoryService], int]], int],
    engine: ChatEngine | None = None,
) -> list[str]:
    """After ``records`` were forgotten: take their words (text and the quote they came from) out of the other
    memories' reply context, every session file and the input history, and return what to tell the user, one line
    each. ``on_memory`` runs a task with the memory service (on the chat's memory thread). The chat's own session
    is scrubbed through its ``engine``, in memory too (a command line has none). A session another process holds
    cannot be rewritten: it is left, and named."""
    forgotten = Forgotten(text for record in records for text in record.quotes())
    if not forgotten:
        return []
    places = []
    if engine is not None and engine.scrub(forgotten, {record.id for record in records}):
        places.append("this session")
    report = store.scrub(forgotten, skip=None if engine is None else engine.session.name)
    places += [f"session {name}" for name in report.rewritten]
    try:
        rewritten = on_memory(lambda service: scrub_contexts(service, forgotten))
    except AgentError as exc:  # the ledger kept each memory: the next open indexes what was not re-embedded
        report.failed.append(f"the reply context of other memories ({exc})")
    else:
        if rewritten:
            places.append(f"the reply context of {plural(rewritten, 'other memory', 'other memories')}")
    if history is not None:
        try:
            if scrub_history(history, forgotten):
                places.append("the input history")
        except OSError as exc:
            report.failed.append(f"{history}: {exc.strerror}")
    lines = [f"The forgotten words were also removed from {', '.join(places)}."] if places else []
    if report.busy:
        lines.append(f"They stay in {plural(len(report.busy), 'session', 'sessions')} open in another agent process, "
                     f"which cannot be rewritten now: {', '.join(report.busy)}.")
    if report.failed:
        lines.append(f"They could not be removed from: {'; '.join(report.failed)}.")
    return lines


class Commands:
    """Runs slash commands against the engine and memory; ``ask`` reads the answer to a yes/no question;
    ``history`` is the input history file, cleaned of what ``/forget`` forgets."""

    def __init__(
        self, engine: ChatEngine, out: Output, ask: Callable[[str], str | None], history: Path | None = None
    ) -> None:
        self.engine = engine
        self.out = out
        self.ask = ask
        self.history = history
        self._listing: list[str] = []

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
        if name in EXIT_WORDS:
            return Action(exit=True)
        handler: Callable[[str], Action | None] = getattr(self, f"_{name[1:]}")
        try:
            return handler(arg.strip()) or Action()
        except AgentError as exc:
            self.out.error(f"{name}: {exc}")
            return Action()

    def _help(self, arg: str) -> None:
        table = Table.grid(padding=(0, 2))
        for name, text in COMMANDS.items():
            usage, _, description = text.rpartition("  ")
            table.add_row(Text(f"{name} {usage}".strip()), Text(description))
        self.out.show(table)
        self.out.notice("Enter sends; Alt-Enter or Esc Enter adds a line; Ctrl-C stops a reply; Ctrl-D leaves.")

    def _worker(self) -> MemoryWorker | None:
        """The memory worker, or None with a word to the user when this run has no memory."""
        if self.engine.memory is None:
            self.out.warn("Long-term memory is off in this run (--no-memory, or it could not be opened).")
        return self.engine.memory

    def _show(self, rows: Sequence[MemoryRecord | ScoredMemory], title: str) -> None:
        self._listing = [(r.record if isinstance(r, ScoredMemory) else r).id for r in rows]
        self.out.show(memory_table(rows, title=safe(title)))

    def _memories(self, query: str) -> None:
        memory = self._worker()
        if memory is None:
            return
        if query == "--history":
            self._history(memory)
            return
        if not query:
            rows: Sequence[MemoryRecord | ScoredMemory] = [r for r in memory.call(lambda s: s.list()) if r.current]
            empty, title = "No memories yet.", plural(len(rows), "memory", "memories")
        else:
            rows = memory.call(lambda s: s.search(query, 10, s.threshold))
            threshold = memory.call(lambda s: s.threshold)
            empty, title = f"Nothing matches above the similarity threshold {threshold:.2f}.", f"matches for {query}"
        if not rows:
            self._listing = []
            self.out.notice(empty)
            return
        self._show(rows, title)
        self.out.notice("/forget N forgets number N.")

    def _history(self, memory: MemoryWorker) -> None:
        records = memory.call(lambda s: s.list())
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
        current, history = memory.call(lambda s: s.profile())
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
        else:
            ids = [r.id for r in memory.call(lambda s: s.list()) if not r.current and arg and r.id.startswith(arg)]
            if len(ids) != 1:
                self.out.warn("Usage: /restore N (from /memories --history) or /restore ID of a replaced memory.")
                return
            wanted = ids[0]
        restored = memory.call(lambda s: s.restore(wanted))
        if restored is None:
            self.out.warn("That memory is not a replaced one (or it was forgotten): nothing restored.")
            return
        self._listing = []
        self.out.notice(f"restored: {shorten(restored.text)}", "green")

    def _forget(self, arg: str) -> None:
        memory = self._worker()
        if memory is None:
            return
        if not arg:
            self.out.warn("Usage: /forget N (from the last /memories), /forget ID or /forget QUERY.")
            return
        tokens = arg.split()
        if all(token.isdigit() for token in tokens):
            numbers = [int(token) for token in tokens]
            bad = [n for n in numbers if not 1 <= n <= len(self._listing)]
            if bad:
                self.out.warn(f"No number {bad[0]} in the last listing: run /memories first.")
                return
            self._erase(memory, [self._listing[n - 1] for n in numbers])
            return
        if len(tokens) == 1 and _ID.fullmatch(arg.lower()):
            ids = [r.id for r in memory.call(lambda s: s.list()) if r.id.startswith(arg.lower())]
            if len(ids) == 1:
                self._erase(memory, ids)
                return
        matches = memory.call(lambda s: s.search(arg, 10, s.threshold))
        if not matches:
            self.out.notice(f"No memory matches {shorten(arg, 60)!r}.")
            return
        self._show(matches, f"memories matching {arg}")
        answer = self.ask(f"Forget these {len(matches)} memories? [y/N] ")
        if (answer or "").strip().lower() in {"y", "yes"}:
            self._erase(memory, [m.record.id for m in matches])
        else:
            self.out.notice("Nothing forgotten.")

    def _erase(self, memory: MemoryWorker, ids: list[str]) -> None:
        known = {r.id: r for r in memory.call(lambda s: s.list())}
        count = memory.call(lambda s: s.forget(ids))
        gone = [known[memory_id] for memory_id in ids if memory_id in known]
        for record in gone:
            self.out.notice(f"forgot: {shorten(record.text)}")
        self.out.notice(f"Forgot {plural(count, 'memory', 'memories')}.")
        self._listing = []
        for line in erase_traces(self.engine.store, self.history, gone, memory.call, self.engine):
            self.out.notice(line)

    def _remember(self, text: str) -> None:
        memory = self._worker()
        if memory is None:
            return
        if not text:
            self.out.warn("Usage: /remember TEXT")
            return
        session, turn = self.engine.session.name, len(self.engine.session.turns)
        record = memory.call(lambda s: s.add(text, session=session, turn=turn))
        self.out.notice(f"remembered: {shorten(record.text)}", "green")

    def _why(self, arg: str) -> None:
        recall = self.engine.last_recall
        if recall is None:
            self.out.notice("No reply with memory yet in this run." if self.engine.memory else
                            "Long-term memory is off in this run.")
            return
        if not recall.block.memories:
            self.out.notice(f"No memory reached the similarity threshold {recall.threshold:.2f} for the last "
                            "message: none was injected.")
            return
        self._show(list(recall.block.memories), f"injected into the last reply (threshold {recall.threshold:.2f})")

    def _session(self, arg: str) -> None:
        engine = self.engine
        session, conversation = engine.session, engine.conversation
        started = datetime.fromtimestamp(session.created_at).strftime("%Y-%m-%d %H:%M")
        rows = [
            ("session", session.name),
            ("file", str(engine.store.path(session.name))),
            ("started", started),
            ("turns", f"{len(session.turns)} ({conversation.turns - conversation.start} in the context window)"),
            ("context", f"{conversation.tokens():,} of {conversation.budget_tokens:,} tokens"
                        + (", with a summary of earlier turns" if conversation.summary else "")),
            ("model", engine.model),
            ("memory", "off" if engine.memory is None else plural(engine.memory.count or 0, "memory", "memories")),
        ]
        table = Table.grid(padding=(0, 2))
        for key, value in rows:
            table.add_row(Text(key), Text(escape_terminal(value)))
        self.out.show(table)

    def _retry(self, arg: str) -> Action | None:
        line = self.engine.take_back_last()
        if line is None:
            self.out.notice("Nothing to retry yet.")
            return None
        return Action(send=line)

    def _clear(self, arg: str) -> None:
        self.engine.clear()
        self.out.notice(f"Short-term context cleared; the session file keeps its {len(self.engine.session.turns)} "
                        "turns.")
