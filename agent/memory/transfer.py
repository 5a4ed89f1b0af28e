"""Memories out of the store and back in: ``agent memories export`` and ``agent memories import``.

The JSON Lines export is the store's own record of each memory, one object a line, nothing left out: text, kind,
the dates (as the epoch seconds the ledger keeps, so a round trip gives the same floats), the session and turn it
came from, the words it came from (``source``), every extra field, and its history: the profile facts it states,
the memory that replaced it and when, and the later quotes that restated it. A replaced memory is exported too, so
what replaced what survives the trip; ids are the exporting user's, and an import maps them to its own. Vectors are
not exported: they belong to an embedder, and the importing store embeds each text with its own. The Markdown
export is for a person to read.

Import treats every line as a memory the user gives: its texts are made canonical (``agent.memory.canonical``), and
the refusals that hold for every memory (secrets, links, instructions, fence tags; ``refusal.record_refusal``) apply
to each of them, the text and also its source, profile facts, restated quotes and extra fields, and are counted, a
memory the store holds already (the same id: the same user and text, however spaced or cased) is a restatement that
refreshes it, and a file with a line that is not a memory (not JSON, a field of the wrong type, a value out of range:
a date of ``Infinity`` or ``1e20``, a turn of 2**70) is refused as a whole before anything is written, with the line
number. So is an import whose new
memories would evict more than a write may (``EVICTION_SLACK``); the evictions it may make are reported one by
one. The file is read as a stream, once, a line at a time (a million lines of one memory, or ``/dev/zero`` given as
standard input, cost memory for one line), and written through the service's bulk write ``BATCH`` at a time. Each
memory is judged once, in that first reading: its line waits for the write with the ``seal`` of its verdict, which the
service's last check recognises instead of judging the same texts again. The first calls' embeddings are made on a
thread while that reading goes on (``_Ahead``): nothing is written before the file is read to its end.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, BinaryIO, get_args

from agent.domain import EARLIEST, LATEST, MemoryKind, MemoryRecord, Quote, StatedFact, content_hash, memory_id
from agent.errors import AgentError, OverCapacity, Remedy, UsageError
from agent.memory.canonical import canonical
from agent.memory.refusal import MAX_CHARS, canonical_record, record_refusal, seal
from agent.memory.service import BULK_BATCH, EVICTION_SLACK, MemoryService, embed_many

log = logging.getLogger(__name__)

FORMATS = ("jsonl", "markdown")
BATCH = BULK_BATCH  # memories embedded and written at a time: a large import never holds every vector at once
_KINDS: tuple[str, ...] = get_args(MemoryKind)
# The longest line an export can hold: no field is longer than a memory's text (``MAX_CHARS``), and 4 MB holds
# a memory's text, source and context with five hundred restatements as long, each character four bytes of UTF-8.
MAX_LINE = 4 << 20
MAX_TURN = 2**31 - 1  # the turn column of the ledgers (a PostgreSQL integer)
CHECKED = 256  # memories of the first reading looked up in the store at a time, to refuse a file past the room soon
LISTED = 50  # refused lines named one by one; the others are counted
SEEN_LINES = 4_096  # lines remembered by their digest, so a line said again is not parsed again
AHEAD = 2  # the import's first calls embedded while the first reading judges the rest of the file (``_Ahead``)


def portable(record: MemoryRecord) -> dict[str, Any]:
    """One memory as a line of the JSON Lines export. The user is left out: an import files it under its own."""
    return {
        "id": record.id,
        "text": record.text,
        "kind": record.kind,
        "created_at": record.created_at,
        "last_seen": record.last_seen,
        "session": record.session,
        "turn": record.turn,
        "source": record.source,
        "extra": record.extra,
        "facts": [{"key": f.key, "value": f.value, "superseded_by": f.superseded_by,
                   **({"origin": f.origin} if f.origin else {})} for f in record.facts],
        "superseded_by": record.superseded_by,
        "superseded_at": record.superseded_at,
        "restated": [{"text": q.text, "session": q.session, "turn": q.turn, "at": q.at} for q in record.restated],
    }


def from_portable(data: object, user: str) -> MemoryRecord:
    """The memory a line of an export describes, as ``user``'s (its id and hash are computed again, from the text);
    ``ValueError`` saying what is wrong with it otherwise: a field of the wrong type, or a value no memory can hold
    (a date outside 1970 to the year 3000, a turn outside the ledgers' whole numbers, a text longer than any
    memory's), which would be refused by the ledger or crash every reader after it."""
    if not isinstance(data, dict):
        raise ValueError("not a JSON object")
    text = data.get("text")
    if not isinstance(text, str) or not canonical(text).strip():
        raise ValueError("no text")
    kind = data.get("kind", "explicit")
    if kind not in _KINDS:
        raise ValueError(f"kind {kind!r} is none of {', '.join(_KINDS)}")
    created = _seconds(data.get("created_at"), "created_at")
    seen = _seconds(data.get("last_seen", data.get("created_at")), "last_seen")
    session, turn, source = data.get("session", "import"), data.get("turn", 0), data.get("source", text)
    extra = data.get("extra", {})
    if not isinstance(session, str) or not isinstance(source, str) or not isinstance(turn, int):
        raise ValueError("session and source must be text, turn a whole number")
    if not isinstance(extra, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in extra.items()):
        raise ValueError("extra must be an object of text fields")
    _fits(session, "session")
    _fits(source, "source")
    _turn(turn)
    for key, value in extra.items():
        _fits(key, "a key of extra")
        _fits(value, f"extra {key!r}")
    # The id is the canonical text's, which is what is stored; the texts stay as written until the import has judged
    # them (text hidden in invisible characters is refused, not stripped).
    said = canonical(text)
    return MemoryRecord(memory_id(user, said), text, kind, user, session, turn, created, seen, content_hash(said),
                        source, dict(extra), _facts(data.get("facts", [])), _text(data.get("superseded_by", "")),
                        _seconds(data.get("superseded_at", 0.0), "superseded_at"), _quotes(data.get("restated", [])))


def _text(value: object) -> str:
    if not isinstance(value, str):
        raise ValueError("superseded_by must be text")
    return _fits(value, "superseded_by")


def _fits(value: str, what: str) -> str:
    """``value`` when no longer than a memory's text may be (``MAX_CHARS``): no field of a memory is longer."""
    if len(value) > MAX_CHARS:
        raise ValueError(f"{what} is {len(value):,} characters long, more than any memory holds ({MAX_CHARS:,})")
    return value


def _turn(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_TURN:
        raise ValueError(f"turn {value!r} is not a turn number (a whole number from 0 to {MAX_TURN:,})")
    return value


def _facts(value: object) -> tuple[StatedFact, ...]:
    if not isinstance(value, list) or not all(isinstance(f, dict) and isinstance(f.get("key"), str)
                                              and isinstance(f.get("value"), str)
                                              and isinstance(f.get("origin", ""), str) for f in value):
        raise ValueError("facts must be a list of objects with a key and a value")
    return tuple(StatedFact(_fits(f["key"], "a fact's key"), _fits(f["value"], "a fact's value"),
                            _text(f.get("superseded_by", "")), _fits(f.get("origin", ""), "a fact's origin"))
                 for f in value)


def _quotes(value: object) -> tuple[Quote, ...]:
    if not isinstance(value, list) or not all(isinstance(q, dict) and isinstance(q.get("text"), str)
                                              and isinstance(q.get("session"), str)
                                              and isinstance(q.get("turn"), int) for q in value):
        raise ValueError("restated must be a list of quotes with text, session and turn")
    return tuple(Quote(_fits(q["text"], "a restated quote"), _fits(q["session"], "a quote's session"),
                       _turn(q["turn"]), _seconds(q.get("at", 0.0), "a quote's date")) for q in value)


def _seconds(value: object, what: str) -> float:
    """A date of the file, in epoch seconds: a number within the dates every reader handles (``EARLIEST`` to
    ``LATEST``). ``Infinity``, ``1e20`` or ``-1e15`` would be stored and then crash every listing and recall."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError("created_at and last_seen must be epoch seconds")
    if not EARLIEST <= value <= LATEST:  # also false for nan
        raise ValueError(f"{what} {value!r} is not a date a memory can have (epoch seconds from 0, 1970, to "
                         f"{LATEST:.0f}, the year 3000)")
    return float(value)


def _no_constant(name: str) -> object:
    """``json.loads`` takes ``NaN``, ``Infinity`` and ``-Infinity``, which JSON has not: refused as the file's."""
    raise ValueError(f"{name} is not a JSON number")


@dataclass
class ImportReport:
    """What an import did: memories new to the store, restatements of ones it held (refreshed), the lines refused
    (each with its line number and reason, never its text: a refused line may be a secret; the first ``LISTED``
    of them, and how many in all), and the memories the import's writes evicted past the capacity."""

    new: int = 0
    refreshed: int = 0
    refused: list[str] = field(default_factory=list)
    refused_count: int = 0
    evicted: list[MemoryRecord] = field(default_factory=list)

    def refuse(self, number: int, reason: str) -> None:
        self.refused_count += 1
        if len(self.refused) < LISTED:
            self.refused.append(f"line {number}: {reason}")


@dataclass
class _Plan:
    """What the first reading of a file found: the memories to write and what the file's ids become here."""

    kept: dict[str, float] = field(default_factory=dict)  # this store's id -> the latest last_seen the file gives it
    exported: dict[str, str] = field(default_factory=dict)  # the exporting store's id -> this store's
    named: set[str] = field(default_factory=set)  # the exporting store's ids that the file's histories name
    new: int = 0  # how many of ``kept`` this store does not hold
    report: ImportReport = field(default_factory=ImportReport)


def lines(stream: BinaryIO, name: str) -> Iterator[tuple[int, str]]:
    """The numbered lines of ``stream``, each read on its own: a file of any size is read with memory for one line,
    and a line longer than ``MAX_LINE`` (``/dev/zero`` has no end to its first) is refused as soon as it is."""
    number = 0
    while raw := _line(stream, name):
        number += 1
        if len(raw) > MAX_LINE:
            raise _not_a_memory(name, number, f"longer than {MAX_LINE >> 20} MB, more than any memory can be")
        try:
            yield number, raw.decode("utf-8")
        except UnicodeDecodeError:
            raise _not_a_memory(name, number, "not UTF-8 text") from None


def _line(stream: BinaryIO, name: str) -> bytes:
    try:
        return stream.readline(MAX_LINE + 1)
    except OSError as exc:
        raise UsageError(f"Cannot read {name} ({exc.strerror or exc}); nothing more was imported.") from exc


def import_stream(service: MemoryService, stream: BinaryIO, name: str, scratch: BinaryIO,
                  batch_size: int = BATCH) -> ImportReport:
    """Import the JSON Lines export read from ``stream`` (``name`` names it in messages) into ``service``.

    Read once, with memory for a line at a time and for the memories kept: a line that is not a memory, or an import
    that would evict more than a write may, refuses the whole file before anything is written. The first line that
    gives each memory is kept in ``scratch`` (a private temp file of the caller's), then written from there
    ``batch_size`` at a time (one embedding call, so one window sorted by length, and one index write) through the
    service's bulk write, each eviction that write makes reported."""
    with _Ahead(service, batch_size) as ahead:
        plan = _plan(service, stream, name, scratch, ahead)
        _check_room(service, plan, name)
        scratch.seek(0)
        batch: list[MemoryRecord] = []
        seals: list[bytes] = []
        room, calls = len(plan.kept), 0
        for _, kept in lines(scratch, "the import's copy"):
            sealed, line = kept.split(" ", 1)
            batch.append(_as_kept(canonical_record(from_portable(json.loads(line), service.user)), plan))
            seals.append(bytes.fromhex(sealed))
            if len(batch) == batch_size:
                _write(service, batch, seals, plan.report, ahead.vectors(calls, batch))
                batch, seals, calls = [], [], calls + 1
                if len(plan.kept) <= room // 2:  # a dict keeps the table of its largest size: a copy is as large as
                    plan.kept = dict(plan.kept)  # it holds (5 MB at 100,000 memories, while the index grows)
                    room = len(plan.kept)
        _write(service, batch, seals, plan.report, ahead.vectors(calls, batch))
    return plan.report


class _Ahead:
    """The import's first ``AHEAD`` calls embedded on a thread while the first reading judges the rest of the file.

    That reading is Python on one core (a sixth of an import of 100,000 in wall time, a fifth of one of 10,000), and
    the embedder's runs let go of the interpreter's lock, so the two overlap. A call is embedded ahead only when the
    store holds none of its memories, and then exactly as the write would embed it: the same texts (canonical, as
    stored) in the same order and the same call, so the same batches and the same vectors to the bit. A call whose
    memories differ from those the write then has (a memory another process wrote meanwhile), or whose embedding
    failed, is embedded by the write as before. Bounded: ``AHEAD`` calls' vectors, 3 MB each as float32."""

    def __init__(self, service: MemoryService, size: int) -> None:
        self._service, self._size = service, size
        self._ids: list[str] = []
        self._texts: list[str] = []
        self._calls: list[tuple[list[str], Future[Sequence[Sequence[float]]] | None]] = []
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="import-ahead")

    def __enter__(self) -> _Ahead:
        return self

    def __exit__(self, *_: object) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)

    def offer(self, memory: str, text: str) -> None:
        """The next memory the first reading keeps, and the text the write will embed for it."""
        if len(self._calls) < AHEAD:
            self._ids.append(memory)
            self._texts.append(text)
            if len(self._ids) == self._size:
                self.read()

    def read(self) -> None:
        """The memories offered so far make a call (the last one, shorter, when the file ends)."""
        if not self._ids or len(self._calls) == AHEAD:
            return
        ids, texts, self._ids, self._texts = self._ids, self._texts, [], []
        new = not self._service.records(ids)
        self._calls.append((ids, self._pool.submit(embed_many, self._service.embedder, texts) if new else None))

    def vectors(self, call: int, batch: Sequence[MemoryRecord]) -> dict[str, Sequence[float]] | None:
        """The vectors of the write's ``call``-th batch, when they were embedded ahead for exactly its memories."""
        if call >= len(self._calls):
            return None
        ids, future = self._calls[call]
        self._calls[call] = (ids, None)  # let go of them once written
        if future is None or ids != [r.id for r in batch]:
            if future is not None:
                future.cancel()
            return None
        try:
            return dict(zip(ids, future.result(), strict=True))
        except Exception as exc:  # the write embeds them itself, and says what fails there
            log.debug("import: the vectors embedded ahead are not used (%s)", exc)
            return None


def _plan(service: MemoryService, stream: BinaryIO, name: str, scratch: BinaryIO, ahead: _Ahead) -> _Plan:
    """The first reading: every line parsed and checked, each memory's first line kept in ``scratch``, the file's
    ids mapped, and the new memories counted against what the store has room for (stopping as soon as it has not:
    the memory used is for what the store may hold, whatever the file's length)."""
    plan = _Plan()
    pending: list[str] = []
    # A line met before: (id, exported id, seen, its refusal or its seal).
    seen: dict[bytes, tuple[str, str, float, str | bytes]] = {}
    for number, line in lines(stream, name):
        if not line.strip():
            continue
        key = hashlib.blake2b(line.encode(), digest_size=16).digest()
        if key not in seen:  # a file of one line said a million times is parsed once, not a million times
            record, exported = _parsed(line, number, service.user, name)
            plan.named.update(old for old in (record.superseded_by, *(f.superseded_by for f in record.facts)) if old)
            if len(seen) >= SEEN_LINES:
                seen.clear()
            seen[key] = (record.id, exported, record.last_seen, b"" if record.id in plan.kept else _verdict(record))
        memory, exported, last_seen, verdict = seen[key]
        if isinstance(verdict, str):
            plan.report.refuse(number, verdict)
            continue
        if exported:
            plan.exported.setdefault(exported, memory)
        if memory in plan.kept:  # said again in the file: one memory, first seen first, seen last when last seen
            plan.kept[memory] = max(plan.kept[memory], last_seen)
            continue
        plan.kept[memory] = last_seen
        try:
            scratch.write(verdict.hex().encode() + b" " + line.rstrip("\r\n").encode() + b"\n")
        except OSError as exc:
            raise AgentError(f"The import's private copy could not be written ({exc.strerror or exc}); nothing was "
                             "imported.") from exc
        pending.append(memory)
        if record.id == memory:  # parsed just now (a line written here is met first), so its text is this one's
            ahead.offer(memory, canonical(record.text))
        if len(pending) == CHECKED:
            plan.new += _new_among(service, pending)
            pending = []
            _check_room(service, plan, name, partial=True)
    plan.new += _new_among(service, pending)
    ahead.read()
    # Only the ids a history names are ever looked up (``_as_kept``): the map of every exported id (an export of
    # 100,000 gives each its id, 20 MB of strings) is not kept through the writes, where the index grows to its peak.
    plan.exported = {old: new for old, new in plan.exported.items() if old in plan.named}
    plan.named = set()
    return plan


def _parsed(line: str, number: int, user: str, name: str) -> tuple[MemoryRecord, str]:
    """The memory of one line and the id the exporting store gave it; ``UsageError`` naming the line otherwise."""
    try:
        data = json.loads(line, parse_constant=_no_constant)
        return from_portable(data, user), str(data.get("id", ""))
    except ValueError as exc:  # json.JSONDecodeError is one
        raise _not_a_memory(name, number, "not JSON" if isinstance(exc, json.JSONDecodeError) else str(exc)) from exc


def _not_a_memory(name: str, number: int, what: str) -> UsageError:
    return UsageError(f"{name} line {number} is not a memory ({what}); nothing was imported. "
                      f"{Remedy.EXPORT.command()} writes the format import reads (one JSON object a line).")


def _verdict(record: MemoryRecord) -> str | bytes:
    """Why no memory may hold what ``record`` would store, in any of its fields (``refusal.record_refusal``), or
    the ``seal`` that says nothing of it is refused."""
    return record_refusal(record) or seal(record)


def _new_among(service: MemoryService, ids: Sequence[str]) -> int:
    return len(ids) - len(service.records(ids)) if ids else 0


def _check_room(service: MemoryService, plan: _Plan, name: str, partial: bool = False) -> None:
    """Refuse the import, before anything is written, when its new memories would take the store further past its
    capacity than a write may evict (``EVICTION_SLACK``): a bulk eviction is the user's decision, never an import's.
    ``partial``: the file is not read to its end, so it holds at least that many."""
    capacity, count = service.policy.capacity, service.count()
    if plan.new == 0 or count + plan.new - capacity <= EVICTION_SLACK:
        return
    room = max(capacity + EVICTION_SLACK - count, 0)
    evict = capacity + EVICTION_SLACK - plan.new
    how = (f"make room first with {Remedy.EVICT_TO.command(count=evict)} (then add --yes) or raise" if evict >= 0
           else "raise")
    raise OverCapacity(
        f"{name} holds {'at least ' if partial else ''}{plan.new:,} {'memory' if plan.new == 1 else 'memories'} this "
        "store does not "
        f"have, and it has room for {room:,}: it holds {count:,} of its capacity of {capacity:,}, and an import "
        f"evicts no more than {EVICTION_SLACK} to make room. Nothing was imported: {how} AGENT_MEMORY_CAPACITY to "
        f"{count + plan.new:,} or more.")


def _as_kept(record: MemoryRecord, plan: _Plan) -> MemoryRecord:
    """``record`` as it is written: seen last when the file last saw it, and with the ids its history names
    (``superseded_by``, of the memory or of one of its facts) turned from the exporting user's into this store's.
    An id the file does not keep is dropped, and the memory it named as its replacement is current again (nothing
    can point at a memory that is not there)."""

    def mapped(old: str) -> str:
        return plan.exported.get(old, "") if old else ""

    # Each memory is written once (the scratch file keeps its first line only), so its entry leaves the plan here:
    # what the plan holds shrinks as the index grows, instead of both growing with the file to its end.
    last_seen = plan.kept.pop(record.id)
    # Nothing of most memories changes here (no history, the one sighting), and they are not copied: a replace() a
    # memory was a tenth of the import's own Python. A date of -0.0 is made 0.0 below, so it is not "nothing".
    if (last_seen == record.last_seen and not record.superseded_by and not record.facts
            and math.copysign(1.0, record.superseded_at) == 1.0 and record.superseded_at == 0.0):
        return record
    return replace(record, last_seen=last_seen, superseded_by=mapped(record.superseded_by),
                   superseded_at=record.superseded_at if mapped(record.superseded_by) else 0.0,
                   facts=tuple(replace(f, superseded_by=mapped(f.superseded_by)) for f in record.facts))


def _write(service: MemoryService, batch: Sequence[MemoryRecord], seals: Sequence[bytes], report: ImportReport,
           vectors: dict[str, Sequence[float]] | None = None) -> None:
    if not batch:
        return
    known = service.records([r.id for r in batch])
    report.evicted += service.write_evicting(batch, seals, vectors)[1]
    report.refreshed += len(known)
    report.new += len(batch) - len(known)


def markdown(records: Sequence[MemoryRecord], user: str, now: float) -> str:
    """The memories as a document a person reads: a heading per day, one bullet per memory with where it came
    from. Not for import (the JSON Lines export is)."""
    stamp = datetime.fromtimestamp(now).astimezone().strftime("%Y-%m-%d %H:%M %Z")
    count = f"{len(records)} {'memory' if len(records) == 1 else 'memories'}"
    by_id = {record.id: record for record in records}
    replaced = sum(1 for record in records if record.superseded_by)
    if replaced:
        count += f" ({replaced} replaced by a later one, marked so)"
    lines = [f"# Memories of {user}", "", f"{count}, exported {stamp}. {Remedy.EXPORT.command()} (JSON Lines) is the "
             f"format {Remedy.IMPORT.command()} reads.", ""]
    day = ""
    for record in sorted(records, key=lambda r: r.created_at):
        when = datetime.fromtimestamp(record.created_at).astimezone()
        if when.strftime("%Y-%m-%d") != day:
            day = when.strftime("%Y-%m-%d")
            lines += [f"## {when.strftime('%A %d %B %Y')}", ""]
        origin = f"added with {Remedy.ADD.command()}" if record.session == "cli" else (
            f"session {record.session}, turn {record.turn}")
        lines.append(f"- {_flat(record.text)}  ")
        lines.append(f"  *{record.kind}, {when.strftime('%H:%M')}, {origin}, id {record.id[:8]}*")
        if record.source.strip() and record.source.strip() != record.text.strip():
            lines.append(f"  from: “{_flat(record.source)}”")
        if record.superseded_by:
            lines.append(f"  **replaced** {_replaced(record, by_id.get(record.superseded_by))}")
    return "\n".join(lines) + "\n"


def _replaced(record: MemoryRecord, replacer: MemoryRecord | None) -> str:
    """When a later memory replaced this one, and by which: a replaced memory is history, not a current fact."""
    when = datetime.fromtimestamp(record.superseded_at).astimezone().strftime("%Y-%m-%d %H:%M")
    if replacer is None:
        return f"on {when} by a memory since forgotten"
    return f"on {when} by: “{_flat(replacer.text)}” (id {replacer.id[:8]})"


def _flat(text: str) -> str:
    return " ".join(text.split())
