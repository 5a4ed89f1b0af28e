"""Plain data shared by every layer: messages, memory records and scored memories, and the fold of text that makes
two statements one memory."""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Literal, NamedTuple

Role = Literal["system", "user", "assistant"]
MemoryKind = Literal["turn", "fact", "explicit"]
TurnStatus = Literal["complete", "interrupted", "truncated", "failed"]
CONTEXT = "context"  # the key of ``MemoryRecord.context`` in ``extra``, as the ledgers store it

# The dates a memory can carry, in epoch seconds: from 1970 to the year 3000 (UTC). Every date the agent formats,
# compares or ranks lies within them; an import refuses a line whose date does not (``agent.memory.transfer``).
EARLIEST = 0.0
LATEST = 32_503_680_000.0


def stored_time(value: object) -> float:
    """A date as a ledger holds it, read into the range every reader can use: a store written by hand or by an older
    version may hold ``Infinity``, ``1e20``, ``-1e15`` or (PostgreSQL) ``NaN``, which crashed every listing, the
    export and each recall. Such a date reads as the nearest end of the range (``NaN``, or what is not a number, as
    1970), so the memory stays listed, recalled and exportable, and can be forgotten."""
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError, OverflowError):
        return EARLIEST
    if number != number:  # NaN
        return EARLIEST
    return min(max(number, EARLIEST), LATEST)


class VectorSpace(NamedTuple):
    """The space a vector lives in: the embedder kind (``local``, ``openai``), its model and the vector length.
    Vectors of two spaces are never compared, so a store records the space it was built in and refuses another."""

    embedder: str
    model: str
    dimension: int

    def describe(self) -> str:
        return f"{self.embedder} ({self.model}, {self.dimension} dimensions)"


@dataclass(frozen=True)
class VectorChanges:
    """What changed among a user's vector copies since a mark (``Ledger.vector_changes``): the ids written, rewritten
    or deleted since, whose state the caller reads (``whole`` False); or, when the ledger cannot tell (no mark yet,
    or its record of changes no longer reaches back to it), every id it holds now (``whole`` True), which the caller
    compares with what it has. ``mark`` is the one to pass next time. ``forgot``: a forget since the mark took its
    ids out of the record (an id derives from the memory's text), so ``ids`` are the other changes only; a caller
    whose view held a forgotten vector tells by counting, and compares every id only then."""

    mark: tuple[int, int]
    ids: list[str]
    whole: bool
    forgot: bool = False


@dataclass(frozen=True)
class Message:
    """One chat message as the model sees it."""

    role: Role
    content: str


@dataclass(frozen=True)
class Turn:
    """One exchange: the user's line and the reply as far as it got. Only ``complete`` replies ended normally.
    ``said`` is the user's own words when ``user`` also carries attached text (a piped document, a file given with
    ``-f``): the write gate judged those words alone, and ``/undo`` finds the memories they wrote by them; None when
    the line is all the user's."""

    user: str
    reply: str
    status: TurnStatus = "complete"
    at: float = 0.0
    model: str = ""
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    said: str | None = None

    def messages(self) -> list[Message]:
        """The turn as the model will see it later: the words of the reply as far as they got, and nothing the agent
        says of them. A note such as "[reply cut off before its end]" sent as the assistant's own words was taken
        up by small models, which wrote it at the end of their next replies; the status stays in the session file
        and on screen (``agent sessions show`` marks the turn)."""
        out = [Message("user", self.user)]
        if self.reply:
            out.append(Message("assistant", self.reply))
        return out


@dataclass(frozen=True)
class Quote:
    """The user's words of a later turn that said again what a memory says: kept in the memory's provenance."""

    text: str
    session: str
    turn: int
    at: float


EXTRACTOR = "extractor"
# The origin of a safety value no rule could read: the user's sentence itself, kept as said.
AS_SAID = "as said"


@dataclass(frozen=True)
class StatedFact:
    """A profile fact: what ``agent.memory.profile`` reads in a turn and what a memory states (one type for both, so
    a fact read is the fact stored); ``superseded_by`` is the id of the memory that replaced this value while the
    memory itself stays current for its other facts. ``origin`` is where the value came from: "" for the user's words
    read by the profile's patterns, ``EXTRACTOR`` for a value the model proposed (and the user's words hold),
    ``AS_SAID`` for a safety value that is the user's sentence itself."""

    key: str
    value: str
    superseded_by: str = ""
    origin: str = ""


@dataclass(frozen=True)
class MemoryRecord:
    """One long-term memory with its provenance.

    ``text`` is what is embedded and injected; ``source`` is the user's words it came from (equal to ``text``
    for a stored turn, the turn an extracted fact was drawn from otherwise). ``extra`` carries caller metadata
    (the benchmark keeps LoCoMo's ``dia_id`` there); it never holds secrets. ``context`` (kept in ``extra`` under
    ``CONTEXT``) is what the user answered: the end of the reply before their line, which keyword search reads
    beside the text, so "yes, that one" finds what it agreed to.

    ``facts`` are the profile facts the memory states. A memory
    replaced by a later one has ``superseded_by`` set to that memory's id and ``superseded_at`` to when; it stays
    in the store, out of the prompt, until restored or forgotten. ``restated`` holds the later quotes that said
    the same thing again (``agent.memory.truth``).
    """

    id: str
    text: str
    kind: MemoryKind
    user: str
    session: str
    turn: int
    created_at: float
    last_seen: float
    content_hash: str
    source: str
    extra: dict[str, str] = field(default_factory=dict)
    facts: tuple[StatedFact, ...] = ()
    superseded_by: str = ""
    superseded_at: float = 0.0
    restated: tuple[Quote, ...] = ()

    @property
    def current(self) -> bool:
        return not self.superseded_by

    @property
    def context(self) -> str:
        return self.extra.get(CONTEXT, "")

    def quotes(self) -> list[str]:
        """Every piece of the user's words this memory holds: its text, its source and each restatement."""
        return [self.text, self.source, *(quote.text for quote in self.restated)]


@dataclass(frozen=True)
class Links:
    """How a memory stands against the others: the memory that replaced it and when (empty: current), and its
    profile facts with the memory that replaced each value. What a write changes of a memory it did not create, and
    what an undo puts back."""

    superseded_by: str
    superseded_at: float
    facts: tuple[StatedFact, ...]

    @staticmethod
    def of(record: MemoryRecord) -> Links:
        return Links(record.superseded_by, record.superseded_at, record.facts)


@dataclass(frozen=True)
class Touched:
    """A memory one turn's write changed without creating it: its links ``before`` and ``after`` the write (a
    memory said again after it was replaced is current again, and the one that replaced it is replaced in turn), or
    the ``quote`` the write added to it (a restatement)."""

    memory: str
    before: Links | None = None
    after: Links | None = None
    quote: Quote | None = None


# The newest changes a ledger keeps per user (``Change``): a turn older than that is taken back by its provenance
# alone (the memories and quotes that name its session, turn and words).
CHANGES_KEPT = 1000


@dataclass(frozen=True)
class Change:
    """What the write of one user turn did to the store, kept in the ledger (in the transaction of the write's
    first step) so that ``/undo`` puts back exactly that, in a later run too: the memories it created and the ones
    it changed.
    ``said`` is the ``content_hash`` of the words it came from, which tells this turn's changes from those of an
    earlier turn of the same number (one taken back while memory was read-only). A supersede of a memory by one the
    write created is not listed: forgetting the new memory puts the old one back (``MemoryService.release``).
    ``key`` is the ledger's number for it (0 before it is stored)."""

    session: str
    turn: int
    said: str
    created: tuple[str, ...] = ()
    touched: tuple[Touched, ...] = ()
    key: int = 0

    def names(self) -> set[str]:
        """Every memory id this change holds: forgetting any of them drops the change with it."""
        links = [t.before for t in self.touched] + [t.after for t in self.touched]
        return ({*self.created, *(t.memory for t in self.touched)}
                | {link.superseded_by for link in links if link is not None and link.superseded_by}
                | {f.superseded_by for link in links if link is not None for f in link.facts if f.superseded_by})


@dataclass(frozen=True)
class ScoredMemory:
    """A memory as retrieval returns it: ``similarity`` is the embedder's cosine similarity to the probe,
    ``score`` the fused ranking score (dense and keyword) that ordered it."""

    record: MemoryRecord
    similarity: float
    score: float


@dataclass(frozen=True)
class ForgetRecord:
    """A forget under way, as the ledger keeps it until every other file is scrubbed: whose memories, their ids,
    and the texts (each memory's text and the words it came from) still to be erased from sessions and history."""

    key: int
    user: str
    ids: tuple[str, ...]
    texts: tuple[str, ...]
    made_at: float = 0.0  # when (0 where the ledger does not keep it)
    waiting: tuple[str, ...] = ()  # the machines that have not yet scrubbed their own files of it


@dataclass(frozen=True)
class Machine:
    """A machine (a data directory, by the random id it keeps) that uses a shared ledger for a user: a forget of
    that user's memories waits until each one registered then has scrubbed its own sessions and input history.
    ``waiting`` counts the forgets it has not yet; ``last_seen`` is when it last started or finished one."""

    id: str
    name: str
    last_seen: float
    waiting: int = 0


_SPACES = re.compile(r"\s+")
_RUNS = re.compile(r"\s+|\S+")


def normalise_text(text: str) -> str:
    """The form two statements share when they say the same thing: NFKC, case-folded, spaces collapsed."""
    return _SPACES.sub(" ", unicodedata.normalize("NFKC", text)).strip().casefold()


def fold_with_spans(text: str) -> tuple[str, list[int], list[int]]:
    """``text`` folded as ``normalise_text`` folds it (not stripped), and for each folded character the span of
    ``text`` it came from: forget finds a memory's words in any text by their fold, and replaces the original. NFKC
    and case folding change lengths ("ß" becomes "ss", a letter and its combining accent become one letter), so
    each span covers the whole piece of the original that the character is part of. Kept beside ``normalise_text``:
    the two must fold alike (``tests/system/test_forget_fold.py`` checks it on random text)."""
    if text.isascii():  # NFKC changes nothing, case folding is lowercasing: only the runs of spaces shrink
        return _fold_ascii(text)
    chars: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    for start, end in _pieces(text):
        for char in unicodedata.normalize("NFKC", text[start:end]):
            if char.isspace():  # what the \s of normalise_text matches: each run becomes one space
                if chars and chars[-1] == " ":
                    ends[-1] = end
                    continue
                folded = " "
            else:
                folded = char.casefold()
            chars.extend(folded)
            starts.extend([start] * len(folded))
            ends.extend([end] * len(folded))
    return "".join(chars), starts, ends


def _fold_ascii(text: str) -> tuple[str, list[int], list[int]]:
    chars: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    for run in _RUNS.finditer(text):
        start, end = run.span()
        if run.group().isspace():
            chars.append(" ")
            starts.append(start)
            ends.append(end)
        else:
            chars.append(run.group().lower())
            starts.extend(range(start, end))
            ends.extend(range(start + 1, end + 1))
    return "".join(chars), starts, ends


def _pieces(text: str) -> Iterator[tuple[int, int]]:
    """Spans of ``text`` that NFKC normalises independently: a character with the combining marks after it, joined
    with the next piece whenever normalising both together differs (Hangul jamo compose into one syllable)."""
    start = 0
    for at in range(1, len(text) + 1):
        if at < len(text) and (unicodedata.combining(text[at]) or (
                not (text[at].isascii() and text[at - 1].isascii()) and _composes(text, start, at))):
            continue
        yield start, at
        start = at


def _composes(text: str, start: int, at: int) -> bool:
    """Whether the piece ``text[start:at]`` and the character at ``at`` normalise differently together."""
    piece, char = text[start:at], text[at]
    return unicodedata.normalize("NFKC", piece + char) != (unicodedata.normalize("NFKC", piece)
                                                           + unicodedata.normalize("NFKC", char))


def content_hash(text: str) -> str:
    """sha256 of the normalised text, used to skip already-stored content before paying to embed it."""
    return hashlib.sha256(normalise_text(text).encode("utf-8")).hexdigest()


def memory_id(user: str, text: str) -> str:
    """The id of a memory derives from its user and normalised text, so the same statement is stored once."""
    return hashlib.sha256(f"{user}\x00{normalise_text(text)}".encode()).hexdigest()[:32]
