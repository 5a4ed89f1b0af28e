"""Forget: the words of a memory the user forgets leave every file of the data directory, even when the process
is killed half-way. The chat's ``/forget`` and ``agent memories forget`` both go through here.

Where the words can be: the ledger (text, quote, the vector's copy, the keyword index), the vector index (id and
vector), every session file (damaged ones and copies set aside included), the input history, and the keyword
context other memories keep (the end of the reply their line answered). Scrubbing the sessions of a store in use
for months takes seconds, long enough for a kill or a Ctrl-C to land in the middle, and once the memory has left
the ledger nothing would remember what was still to erase. So a forget (``forget``, the one entry point of the chat
and the command line, which only say what it did) goes in steps:

1. ``begin``: one ledger transaction deletes the memories and records the forget (their ids and the texts to
   erase). The caller holds Ctrl-C for this short part (``critical``). From here on the forget is finished, by this
   process or by the next one. Then their vectors leave the index.
2. ``finish``: the texts leave the other memories' context, every session file and the input history of this
   machine; then this machine acknowledges the record, and the ledger drops it (its bytes zeroed) once every
   machine it waits for has. A session that another process holds cannot be rewritten now, and a file may fail
   to be (a full disk): the record then stays unacknowledged, and the next start tries again.
3. ``finish_cut_short``: every start of the agent (the chat, ``agent memories ...``, ``agent sessions ...``)
   finishes the forgets this machine has not acknowledged (a kill or an interrupt left them, or another machine
   made them), and says so in one line; a chat also finishes, before each turn, those made meanwhile
   (``ChatEngine.follow_forgets``). Whatever replays the turns waiting in the spool takes their words out of it
   first (``hold_back``): a chat whose memory opens in the background replays before its first turn.

A place that is a symlink out of the data directory (``sessions/``, ``spool/``, ``history``) is neither followed nor
rewritten: the forget names it, and what its target still holds, and is finished all the same (kept for it, the
record would stay for ever). Every forget also leaves in the ledger a keyed digest of its texts, so that a turn a
machine kept while the forget was made is never written back, even once the record is gone (``agent.spool``).

A machine is a data directory (the random id in its ``machine-id`` file): with a ledger that several machines
share (PostgreSQL) each one registers for the user at every start, and a forget waits for every machine
registered for its user when it was made, so the words typed on a laptop leave the laptop's files at its next
start even when the forget was made on the desktop. One that never comes back keeps the record, and the texts in
it, on the server until it is retired (``agent memories machines --retire``). A SQLite ledger is one data
directory's own file: it registers no machine, and its records wait for nothing but the scrub.

A vector left in the index by a kill between the ledger and the index is dropped by the next open of the index
(``agent.adapters.mirrored_index.reconcile``), which the record does not need to remember.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Protocol, TypeVar

from agent.domain import ForgetRecord, MemoryRecord, fold_with_spans, normalise_text
from agent.errors import AgentError, Interrupted, MemoryUnavailable, SessionBusy, SessionError
from agent.files import read_regular, regular, symlinked, write_private
from agent.memory.service import MemoryService, drop_changes_naming
from agent.ports import Ledger
from agent.sessions import NAME_PATTERN, Session, SessionStore
from agent.spool import Spool

FORGOTTEN = "[forgotten]"
T = TypeVar("T")


class Forgotten:
    """The words of forgotten memories, found in any text in every form the store takes for the same memory.

    A memory's id folds its text (``normalise_text``: NFKC, case-folded, spaces collapsed), so "Café Müller" typed
    with combining accents, "HAUPTSTRASSE" for "Hauptstraße" and a fullwidth "１２" refresh one memory: the scrub
    matches in exactly that fold, and ``scrub`` puts ``[forgotten]`` in place of every piece of the original text
    whose fold is a forgotten text's fold."""

    def __init__(self, texts: Iterable[str]) -> None:
        self._texts = {normalise_text(t): t for t in texts if t.split()}

    def __bool__(self) -> bool:
        return bool(self._texts)


    def within(self, text: str) -> Forgotten:
        """Only the forgotten texts that occur in ``text``: the many pieces of one file are then scrubbed against a
        short list (after ``forget --all`` the full one can hold thousands)."""
        folded = normalise_text(text)
        return Forgotten(t for f, t in self._texts.items() if f in folded)

    def scrub(self, text: str) -> str:
        """``text`` with every forgotten text in it replaced; the longest first, so a quote goes as a whole."""
        folded = normalise_text(text)
        present = sorted((f for f in self._texts if f in folded), key=len, reverse=True)
        if not present:
            return text
        fold, starts, ends = fold_with_spans(text)
        spans: list[tuple[int, int]] = []
        for needle in present:
            at = fold.find(needle)
            while at != -1:
                span = (starts[at], ends[at + len(needle) - 1])
                if not any(s < span[1] and span[0] < e for s, e in spans):
                    spans.append(span)
                at = fold.find(needle, at + len(needle))
        for s, e in sorted(spans, reverse=True):
            text = text[:s] + FORGOTTEN + text[e:]
        return text


def texts_of(records: Iterable[MemoryRecord]) -> list[str]:
    """What must leave the other files for ``records``: each one's text, the words it came from and every later
    restatement of it (``MemoryRecord.quotes``)."""
    return list(dict.fromkeys(text for record in records for text in record.quotes() if text.strip()))


# -- the places, one by one ------------------------------------------------------------------------------------


@dataclass
class ScrubReport:
    """What a scrub of the session files did: the files it rewrote, the sessions it left because another process
    has them open, and the files it could not read or write, each with its error."""

    rewritten: list[str] = field(default_factory=list)
    busy: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)


def scrub_session(session: Session, forgotten: Forgotten) -> bool:
    """Replace forgotten words in the turns and summary of ``session``; returns whether anything changed. The
    summary goes altogether when a turn it was written from held them: it may say the same in other words."""
    forgotten = forgotten.within("\n".join([session.summary, *(f"{t.user}\n{t.reply}\n{t.said or ''}"
                                                                for t in session.turns)]))
    if not forgotten:
        return False
    changed_before = False
    changed = False
    for n, turn in enumerate(session.turns):
        user, reply = forgotten.scrub(turn.user), forgotten.scrub(turn.reply)
        said = None if turn.said is None else forgotten.scrub(turn.said)
        if (user, reply, said) != (turn.user, turn.reply, turn.said):
            session.turns[n] = replace(turn, user=user, reply=reply, said=said)
            changed = True
            changed_before = changed_before or n < session.context_start
    summary = "" if changed_before else forgotten.scrub(session.summary)
    if summary != session.summary:
        session.summary = summary
        changed = True
    return changed


def scrub_file(path: Path, forgotten: Forgotten) -> bool:
    """Replace forgotten words in a file that is not a readable session, as text (bytes that are not UTF-8 stay as
    they are): its JSON may be damaged, but the words must still go."""
    text = read_regular(path).decode("utf-8", "surrogateescape")
    scrubbed = forgotten.scrub(text)
    if scrubbed == text:
        return False
    write_private(path, scrubbed.encode("utf-8", "surrogateescape"), f".{path.name}")
    return True


def scrub_sessions(store: SessionStore, forgotten: Forgotten, skip: str | None = None) -> ScrubReport:
    """Replace the words of forgotten memories in every session file but ``skip`` (the chat's own, which it scrubs
    in memory), temp files a kill left included. A session another process holds is left and reported; a damaged
    file, or one set aside, is scrubbed as text."""
    report = ScrubReport()
    directory = store.directory
    if not directory.is_dir():
        return report
    names = {p.stem for p in directory.glob("*.json")} | {p.name.split(".")[1] for p in directory.glob(".*.tmp")}
    for name in sorted(n for n in names if NAME_PATTERN.fullmatch(n) and n != skip):
        try:
            with store.lock(name):  # the lock holder also deletes the temp files a killed save left
                if os.path.lexists(store.path(name)) and _scrub_one(store, name, forgotten):
                    report.rewritten.append(name)
        except SessionBusy:
            if _still_holds(store, name, forgotten):
                report.busy.append(name)
        except (SessionError, OSError) as exc:
            report.failed.append(f"{name}: {exc}")
    for copy in sorted(directory.glob("*.json.corrupt-*")):
        try:
            if scrub_file(copy, forgotten):
                report.rewritten.append(copy.name)
        except OSError as exc:
            report.failed.append(f"{copy.name}: {exc}")
    return report


def _still_holds(store: SessionStore, name: str, forgotten: Forgotten) -> bool:
    """Whether a session another process holds still has forgotten words in its file: a chat takes a forget made
    elsewhere out of its own session at its next turn (``ChatEngine.follow_forgets``), and a session clean of them
    keeps no forget waiting. One that cannot be read counts as holding them."""
    try:
        return scrub_session(store.load(name), forgotten)
    except SessionError:
        return True


def _scrub_one(store: SessionStore, name: str, forgotten: Forgotten) -> bool:
    """Scrub one session this process holds: as a session if it loads, else as text (damaged, or written by
    another version)."""
    try:
        session = store.load(name)
    except SessionError:
        return scrub_file(store.path(name), forgotten)
    if not scrub_session(session, forgotten):
        return False
    store.save(session)
    return True


def scrub_history(path: Path, forgotten: Forgotten, ids: Iterable[str] = ()) -> bool:
    """Rewrite the input history file (atomically) with the forgotten words replaced, and the forgotten memories'
    ids in the commands that named them (``/forget 3f2a9c1b``: an id derives from the text, and confirms a guessed
    sentence); False when none were there.

    prompt-toolkit's format: each entry is a comment line (``# <time>``) followed by the entry's lines, each after
    a ``+``. An entry of several lines is scrubbed as a whole, so a memory that spans lines goes too. ``OSError``
    when the file cannot be read or written (a symlink is refused)."""
    try:
        raw = read_regular(path).decode("utf-8", "surrogateescape")
    except FileNotFoundError:
        return False
    forgotten = forgotten.within(raw.replace("\n+", " "))
    wanted = {memory_id.lower() for memory_id in ids}
    if not forgotten and not wanted:
        return False
    out: list[str] = []
    entry: list[str] = []

    def end_entry() -> None:
        if entry:
            out.extend(f"+{line}" for line in forgotten.scrub("\n".join(entry)).split("\n"))
            entry.clear()

    for line in raw.split("\n"):
        if line.startswith("+"):
            entry.append(_unnamed(line[1:], wanted))
        else:
            end_entry()
            out.append(line)
    end_entry()
    scrubbed = "\n".join(out)
    if scrubbed == raw:
        return False
    write_private(path, scrubbed.encode("utf-8", "surrogateescape"), f".{path.name}")
    return True


def scrub_spool(spool: Spool, forgotten: Forgotten) -> bool:
    """Take the forgotten words out of the turns waiting for the store (``agent.spool``): a turn that says them is
    dropped, since writing it later would remember them again; one whose reply context quotes them keeps its words
    and loses them from its context; an entry that cannot be read as a turn, or was set aside, is scrubbed as
    text. ``OSError`` when a file cannot be rewritten. Whether anything changed."""
    changed = False
    for path, entry in spool.entries():
        if isinstance(entry, str):  # a regular file (the others hold nothing of agent's) not read as a turn
            changed = regular(path) and scrub_file(path, forgotten) or changed
        elif forgotten.within(entry.text):
            spool.done(path)
            changed = True
        elif forgotten.within(entry.context):
            spool.rewrite(path, replace(entry, context=forgotten.scrub(entry.context)))
            changed = True
    for path in spool.set_aside_files():
        changed = scrub_file(path, forgotten) or changed
    return changed


def hold_back(pending: Iterable[ForgetRecord], spool: Spool) -> bool:
    """Before anything in ``spool`` is written to memory: take out of it the words of every forget ``pending`` (of
    the user's that this machine has not finished yet: made on another machine, or cut short here), whatever else
    is still to scrub for it (``finish`` does that, and acknowledges it). Whether anything changed; ``OSError`` as
    ``scrub_spool``. A forget whose record is gone already is caught entry by entry (``Ledger.forgotten_since``)."""
    texts = [text for record in pending for text in record.texts]
    return bool(texts) and scrub_spool(spool, Forgotten(texts))


# A word of a slash command that may name a memory: 4 hex characters at least, as ``/forget`` takes an id prefix
# (``agent.ui.render.MIN_PREFIX``).
_HEX_WORD = re.compile(r"[0-9a-fA-F]{4,32}")


def _unnamed(line: str, ids: set[str]) -> str:
    """A line of the history with each word of a slash command (``/forget 3f2a9c1b``) that is a prefix of one of
    ``ids`` replaced; any other line as it is (a hex word in the user's own words is theirs)."""
    if not ids or not line.startswith("/"):
        return line
    return re.sub(r"\S+", lambda word: FORGOTTEN if _HEX_WORD.fullmatch(word.group()) and any(
        memory_id.startswith(word.group().lower()) for memory_id in ids) else word.group(), line)


class UserStore(Protocol):
    """What finishing a forget changes in the store, for the forget's user: the chat's ``MemoryService``, or a
    ledger seen as one user's (``OfUser``: a start finishes the forgets of every user)."""

    def list(self) -> list[MemoryRecord]: ...

    def set_contexts(self, contexts: Mapping[str, str]) -> None: ...

    def drop_changes_naming(self, ids: Sequence[str]) -> None: ...

    def acknowledge_forget(self, key: int, machine: str) -> None: ...


@dataclass(frozen=True)
class OfUser:
    """``ledger`` as the ``UserStore`` of ``user``."""

    ledger: Ledger
    user: str

    def list(self) -> list[MemoryRecord]:
        return self.ledger.all(self.user)

    def set_contexts(self, contexts: Mapping[str, str]) -> None:
        self.ledger.set_contexts(self.user, contexts)

    def drop_changes_naming(self, ids: Sequence[str]) -> None:
        drop_changes_naming(self.ledger, self.user, ids)

    def acknowledge_forget(self, key: int, machine: str) -> None:
        self.ledger.acknowledge_forget(key, machine)


def scrub_contexts(store: UserStore, forgotten: Forgotten) -> int:
    """Rewrite, in place, the keyword context of the user's memories that quotes forgotten words (the end of the
    reply a remembered line answered); the memories keep their text, dates and vectors. Returns how many."""
    contexts = {record.id: forgotten.scrub(context) for record in store.list()
                if (context := record.context) and forgotten.within(context)}
    store.set_contexts(contexts)
    return len(contexts)


_HEX_RUN = re.compile(rb"[0-9a-f]{32,}")
_ID_LENGTH = 32
_CHUNK = 1 << 20


def set_aside_copies(root: Path, ids: Iterable[str]) -> tuple[list[Path], list[Path]]:
    """The copies of the index (``chroma.corrupt-*``, damaged and moved aside; ``chroma.backup-*``, kept before a
    chromadb migration) and of the ledger (``ledger.sqlite3.corrupt-*``) in ``root`` whose files hold one of
    ``ids``: an index copy holding an id holds its vector too, a ledger copy its text. A file that cannot be read
    counts as holding them."""
    wanted = {memory_id.encode() for memory_id in ids}
    index = [c for c in [*root.glob("chroma.corrupt-*"), *root.glob("chroma.backup-*")] if c.is_dir()]
    ledgers = [c for c in root.glob("ledger.sqlite3.corrupt-*") if not c.name.endswith(("-journal", "-wal", "-shm"))]
    return ([c for c in sorted(index) if not c.is_symlink() and _holds(c, wanted)],
            [c for c in sorted(ledgers) if any(_holds(f, wanted) for f in _with_log(c))])


def _with_log(ledger: Path) -> list[Path]:
    """A ledger file and its write-ahead log, moved aside with it: the latest writes are in the log alone."""
    wal = ledger.with_name(f"{ledger.name}-wal")
    return [ledger, wal] if wal.exists() else [ledger]


def _holds(path: Path, ids: set[bytes]) -> bool:
    """Whether a file, or any file under a directory, holds one of ``ids`` in its raw bytes (read in chunks: a
    copy of the index can be hundreds of megabytes). An id can sit right after or before other hex digits (in a
    row of Chroma's SQLite write log, which holds the ids its HNSW save has not taken yet), so every 32-digit window
    of a longer run of them counts."""
    files = [path] if path.is_file() else [f for f in path.rglob("*") if f.is_file() and not f.is_symlink()]
    for file in files:
        try:
            with file.open("rb") as handle:
                tail = b""
                while chunk := handle.read(_CHUNK):
                    if any(_windows(run.group(), ids) for run in _HEX_RUN.finditer(tail + chunk)):
                        return True
                    tail = chunk[-(_ID_LENGTH - 1):]
        except OSError:
            return True
    return False


def _windows(run: bytes, ids: set[bytes]) -> bool:
    return any(run[start : start + _ID_LENGTH] in ids for start in range(len(run) - _ID_LENGTH + 1))


# -- one forget, from its record to the last file ------------------------------------------------------------


@dataclass(frozen=True)
class Places:
    """The files beside the ledger and the index where forgotten words can be, on this machine; ``root`` is the
    data directory, where damaged files and backups of the index and the ledger are set aside; ``spool`` holds the
    turns waiting for the store."""

    sessions: SessionStore
    history: Path | None = None
    root: Path | None = None
    spool: Spool | None = None
    machine: str = ""  # the id of the data directory, which acknowledges the forgets it scrubbed


@dataclass
class Held:
    """Whether a Ctrl-C came while ``critical`` held it."""

    interrupted: bool = False


@contextmanager
def critical() -> Iterator[Held]:
    """Hold Ctrl-C (SIGINT) until the block is done; the caller reads ``interrupted`` afterwards and acts on it.
    Only the main thread receives signals, so elsewhere this holds nothing."""
    held = Held()
    if threading.current_thread() is not threading.main_thread():
        yield held
        return

    def note(signum: int, frame: object) -> None:
        held.interrupted = True

    previous = signal.signal(signal.SIGINT, note)
    try:
        yield held
    finally:
        signal.signal(signal.SIGINT, previous)


@dataclass(frozen=True)
class Begun:
    """A forget whose memories have left the ledger: its record, how many memories existed, whether it is all
    of the user's memories (the index then drops the whole collection), and the memories current again now that
    what replaced them is gone."""

    record: ForgetRecord
    count: int
    everything: bool = False
    back: tuple[MemoryRecord, ...] = ()


def begin(service: MemoryService, records: Sequence[MemoryRecord], everything: bool = False,
          also: Sequence[str] = (), relink: bool = True) -> Begun:
    """Delete ``records`` from the ledger and record the forget, in one transaction: the part to hold Ctrl-C for.
    Just before, what they replaced passes to what replaced them or is current again (``MemoryService.release``;
    not ``relink`` for an edit that keeps the memory's id). ``also`` are more words to erase from every file (the
    quotes an undone turn added to memories that stay). Runs where the service lives (the chat's memory thread)."""
    back = service.release(records, everything) if relink else []
    ids, texts = [record.id for record in records], list(dict.fromkeys([*texts_of(records), *also]))
    key, count = service.record_forget(ids, texts)
    return Begun(ForgetRecord(key, service.user, tuple(ids), tuple(texts)), count, everything, tuple(back))


def drop_vectors(service: MemoryService, begun: Begun) -> AgentError | None:
    """Take the forgotten memories' vectors out of the index; the error when the index cannot be used now (the
    next open drops the vectors whose memory is gone, so the record need not wait for it)."""
    try:
        service.drop_vectors(begun.record.ids, begun.everything)
    except MemoryUnavailable as exc:
        return exc
    return None


@dataclass
class Outcome:
    """Where ``finish`` took the words out, where it could not (a session held by another process keeps the
    record), the copies of the index it deleted and the set-aside ledgers it could not rewrite."""

    places: list[str] = field(default_factory=list)
    busy: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    copies: list[str] = field(default_factory=list)
    ledgers: list[str] = field(default_factory=list)
    unfollowed: list[str] = field(default_factory=list)  # places that are symlinks, neither scrubbed nor written

    def lines(self, this_session: bool = False) -> list[str]:
        """What to tell the user, one line each; ``this_session`` when the chat scrubbed its own session."""
        places = ["this session", *self.places] if this_session else self.places
        lines = [f"The forgotten words were also removed from {', '.join(places)}."] if places else []
        if self.busy:
            lines.append(f"They stay in {_plural(len(self.busy), 'session', 'sessions')} open in another agent "
                         f"process, which cannot be rewritten now: {', '.join(self.busy)}; the next start of agent "
                         "removes them.")
        if self.failed:
            lines.append(f"They could not be removed from: {'; '.join(self.failed)}; the next start of agent tries "
                         "again.")
        if self.copies:
            lines.append(f"Deleted {_plural(len(self.copies), 'copy', 'copies')} of the index set aside, which held "
                         f"their vectors ({', '.join(self.copies)}); the ledger rebuilds everything else they had.")
        if self.ledgers:
            lines.append(f"A {_ledger_note(self.ledgers)}.")
        if self.unfollowed:
            note = _unfollowed_note(self.unfollowed)
            lines.append(f"{note[:1].upper()}{note[1:]}.")
        return lines


def _unfollowed_note(links: Sequence[str]) -> str:
    links = sorted(set(links))
    return (f"not scrubbed, as a symlink out of the data directory is never followed (nor written through by agent): "
            f"{'; '.join(links)}")


def _unfollowed(link: Path, forgotten: Forgotten) -> str:
    """``link`` as the forget names it: where it points and, for a file, whether the target still holds the words
    (read, never written: the user is told where to look)."""
    target = Path(os.path.realpath(link))
    try:
        holds = bool(forgotten.within(read_regular(target).decode("utf-8", "surrogateescape")))
    except OSError:  # a directory, or nothing there
        return f"{link} (to {target})"
    return f"{link} (to {target}, which {'still holds them: remove them there' if holds else 'does not hold them'})"


def _ledger_note(names: Sequence[str]) -> str:
    return (f"damaged ledger set aside still holds their text ({', '.join(names)}): forget cannot rewrite a damaged "
            "file, so delete it once you have recovered what you need from it")


def finish(record: ForgetRecord, store: UserStore, places: Places, skip: str | None = None) -> Outcome:
    """Take the texts of ``record`` out of the other memories' context (and drop the changes ``/undo`` keeps that
    name its memories), every session file but ``skip`` (the chat's own, already scrubbed) and the input history;
    then, in ``store`` (the record's user's), the other memories' context and the changes ``/undo`` keeps, and
    acknowledge the record for this machine (the last
    machine's acknowledgement drops it), unless a session was held by another process or a place could not be
    scrubbed. Safe to run again, and from two processes at once: each step finds only what is left."""
    forgotten = Forgotten(record.texts)
    outcome = Outcome()
    below = places.root if places.root is not None else places.sessions.directory.parent
    link = symlinked(places.sessions.directory, below)
    if link is None:
        report = scrub_sessions(places.sessions, forgotten, skip)
        outcome.places += [f"session {name}" for name in report.rewritten]
        outcome.busy, outcome.failed = report.busy, report.failed
    else:
        outcome.unfollowed.append(_unfollowed(link, forgotten))
    try:
        rewritten = scrub_contexts(store, forgotten)
        store.drop_changes_naming(record.ids)  # what /undo keeps of the turns that wrote them
    except AgentError as exc:
        outcome.failed.append(f"the reply context of other memories ({exc})")
    else:
        if rewritten:
            outcome.places.append(f"the reply context of {_plural(rewritten, 'other memory', 'other memories')}")
    files: list[tuple[str, Path, Callable[[], bool]]] = []
    if places.history is not None:
        history = places.history
        files.append(("the input history", history, lambda: scrub_history(history, forgotten, record.ids)))
    if places.spool is not None:
        spool = places.spool
        files.append(("the turns waiting for the memory store", spool.directory, lambda: scrub_spool(spool, forgotten)))
    for what, where, scrub in files:
        link = symlinked(where, below)
        if link is not None:  # agent writes nothing through it (``agent.ui.history``, ``agent.spool``)
            outcome.unfollowed.append(_unfollowed(link, forgotten))
            continue
        try:
            if scrub():
                outcome.places.append(what)
        except OSError as exc:
            outcome.failed.append(f"{where}: {exc.strerror}")
    if places.root is not None:
        copies, ledgers = set_aside_copies(places.root, record.ids)
        for copy in copies:
            try:
                shutil.rmtree(copy)
                outcome.copies.append(copy.name)
            except OSError as exc:
                outcome.failed.append(f"{copy}: {exc.strerror}")
        outcome.ledgers = [copy.name for copy in ledgers]
    if not outcome.busy and not outcome.failed:
        try:
            store.acknowledge_forget(record.key, places.machine)
        except AgentError as exc:
            outcome.failed.append(f"the record of this forget ({exc})")
    return outcome


@dataclass(frozen=True)
class Finish:
    """``finish`` of ``record`` with the memory service of its user, sent where the service lives (``OnService``)."""

    record: ForgetRecord
    places: Places
    skip: str | None = None

    def __call__(self, service: MemoryService) -> Outcome:
        return finish(self.record, service, self.places, self.skip)


class OnService(Protocol):
    """Runs a task with the memory service where the service lives (the chat's memory thread: ``MemoryWorker.call``;
    a command: ``inline``) and returns its result."""

    def __call__(self, task: Callable[[MemoryService], T], /) -> T: ...


class _Inline:
    def __init__(self, service: MemoryService) -> None:
        self._service = service

    def __call__(self, task: Callable[[MemoryService], T], /) -> T:
        return task(self._service)


def inline(service: MemoryService) -> OnService:
    """Tasks run with ``service`` right here: a command has no memory thread."""
    return _Inline(service)


class OwnSession(Protocol):
    """The chat's own session (``ChatEngine``): it scrubs itself, in memory too, and saves itself."""

    def session_name(self) -> str: ...

    def scrub(self, forgotten: Forgotten, ids: set[str]) -> bool: ...


@dataclass(frozen=True)
class Result:
    """What a forget did: how many memories existed, where their words went, whether the chat's own session held
    them, why the index keeps their vectors until the next start (if it does), whether a Ctrl-C was held, and the
    memories current again now that what replaced them is gone."""

    count: int
    outcome: Outcome
    this_session: bool = False
    index_error: AgentError | None = None
    interrupted: bool = False
    back: tuple[MemoryRecord, ...] = ()

    def lines(self) -> list[str]:
        return [*back_line(self.back), *self.outcome.lines(self.this_session)]


def back_line(records: Sequence[MemoryRecord]) -> list[str]:
    """The line that says which memories are current again because what replaced them is gone (none: no line)."""
    if not records:
        return []
    them = "the memory that replaced it is" if len(records) == 1 else "the memories that replaced them are"
    return [f"Current again, now that {them} gone: {'; '.join(' '.join(r.text.split()) for r in records)}"]


def forget(
    on_service: OnService,
    records: Sequence[MemoryRecord],
    places: Places,
    *,
    everything: bool = False,
    own: OwnSession | None = None,
    interruptible: bool = False,
    on_begun: Callable[[int], None] | None = None,
    also: Sequence[str] = (),
    relink: bool = True,
) -> Result:
    """Forget ``records`` (``everything``: all of the user's memories) the whole way, for the chat and the command
    line alike: ``begin``, then the vectors, the chat's ``own`` session, and ``finish``. ``on_begun`` hears how many
    memories left the ledger as soon as they have; ``also`` and ``relink`` are ``begin``'s.

    Ctrl-C is held for the ledger transaction. Not ``interruptible`` (the chat), it is held to the end and the forget
    runs to its end (``Result.interrupted`` says one came); ``interruptible`` (a command), a Ctrl-C after the
    transaction stops the scrub with ``Interrupted``, whose message says that the next start finishes it."""
    with critical() as held:
        begun = on_service(lambda service: begin(service, records, everything, also, relink))
        if not interruptible:
            return replace(_complete(on_service, begun, places, own), interrupted=held.interrupted)
    try:
        if held.interrupted:
            raise KeyboardInterrupt
        if on_begun is not None:
            on_begun(begun.count)
        return _complete(on_service, begun, places, own)
    except KeyboardInterrupt as exc:
        memories = f"{begun.count} memory is" if begun.count == 1 else f"{begun.count} memories are"
        raise Interrupted(f"Interrupted: {memories} forgotten, but their words may still be in session files or the "
                          "input history; the next start of agent removes them.") from exc


def _complete(on_service: OnService, begun: Begun, places: Places, own: OwnSession | None) -> Result:
    index_error = on_service(lambda service: drop_vectors(service, begun))
    record = begun.record
    this_session = own is not None and own.scrub(Forgotten(record.texts), set(record.ids))
    skip = None if own is None else own.session_name()
    outcome = on_service(Finish(record, places, skip))
    return Result(begun.count, outcome, this_session, index_error, back=begun.back)


def finish_cut_short(ledger: Ledger, places_of: Callable[[str], Places], machine: str = "") -> str | None:
    """Finish every forget ``machine`` has not acknowledged (of any user, each in that user's own files:
    ``places_of``) and say so in one line; None when there was none."""
    pending = ledger.pending_forgets(machine)
    if not pending:
        return None
    outcomes = [finish(record, OfUser(ledger, record.user), places_of(record.user)) for record in pending]
    memories = _plural(sum(len(record.ids) for record in pending), "memory", "memories")
    # A shared ledger's records wait for machines: this one may be finishing another machine's forget.
    what = "made on another machine or cut short here" if any(r.waiting for r in pending) else "that was cut short"
    where = list(dict.fromkeys(place for outcome in outcomes for place in outcome.places))
    busy = sorted({name for outcome in outcomes for name in outcome.busy})
    failed = [problem for outcome in outcomes for problem in outcome.failed]
    if busy or failed:
        held = f"{_plural(len(busy), 'session', 'sessions')} open in another agent process ({', '.join(busy)})"
        where_left = "; ".join([*([held] if busy else []), *failed])
        return (f"A forget {what} ({memories}) is not finished: its words stay in {where_left}; the next "
                "start of agent tries again.")
    copies = [copy for outcome in outcomes for copy in outcome.copies]
    where += [f"{_plural(len(copies), 'copy', 'copies')} of the index set aside (deleted)"] if copies else []
    said = f"their words were removed from {', '.join(where)}" if where else "no other file held their words"
    ledgers = sorted({copy for outcome in outcomes for copy in outcome.ledgers})
    if ledgers:
        said += f"; a {_ledger_note(ledgers)}"
    unfollowed = [link for outcome in outcomes for link in outcome.unfollowed]
    if unfollowed:
        said += f"; {_unfollowed_note(unfollowed)}"
    return f"Finished a forget {what} ({memories}): {said}."


def _plural(count: int, one: str, many: str) -> str:
    return f"{count} {one if count == 1 else many}"
