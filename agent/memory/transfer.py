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
refreshes it, and a file with a line that is not a memory is refused as a whole before anything is written, with the
line number.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, get_args

from agent.domain import MemoryKind, MemoryRecord, Quote, StatedFact, content_hash, memory_id
from agent.errors import UsageError
from agent.memory.canonical import canonical
from agent.memory.refusal import canonical_record, record_refusal
from agent.memory.service import MemoryService

FORMATS = ("jsonl", "markdown")
BATCH = 256  # memories embedded and written at a time: a large import never holds every vector at once
_KINDS: tuple[str, ...] = get_args(MemoryKind)


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
    ``ValueError`` saying what is wrong with it otherwise."""
    if not isinstance(data, dict):
        raise ValueError("not a JSON object")
    text = data.get("text")
    if not isinstance(text, str) or not canonical(text).strip():
        raise ValueError("no text")
    kind = data.get("kind", "explicit")
    if kind not in _KINDS:
        raise ValueError(f"kind {kind!r} is none of {', '.join(_KINDS)}")
    created, seen = _seconds(data.get("created_at")), _seconds(data.get("last_seen", data.get("created_at")))
    session, turn, source = data.get("session", "import"), data.get("turn", 0), data.get("source", text)
    extra = data.get("extra", {})
    if not isinstance(session, str) or not isinstance(source, str) or not isinstance(turn, int):
        raise ValueError("session and source must be text, turn a whole number")
    if not isinstance(extra, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in extra.items()):
        raise ValueError("extra must be an object of text fields")
    # The id is the canonical text's, which is what is stored; the texts stay as written until ``import_records``
    # has judged them (text hidden in invisible characters is refused, not stripped).
    said = canonical(text)
    return MemoryRecord(memory_id(user, said), text, kind, user, session, turn, created, seen, content_hash(said),
                        source, dict(extra), _facts(data.get("facts", [])), _text(data.get("superseded_by", "")),
                        _seconds(data.get("superseded_at", 0.0)), _quotes(data.get("restated", [])))


def _text(value: object) -> str:
    if not isinstance(value, str):
        raise ValueError("superseded_by must be text")
    return value


def _facts(value: object) -> tuple[StatedFact, ...]:
    if not isinstance(value, list) or not all(isinstance(f, dict) and isinstance(f.get("key"), str)
                                              and isinstance(f.get("value"), str)
                                              and isinstance(f.get("origin", ""), str) for f in value):
        raise ValueError("facts must be a list of objects with a key and a value")
    return tuple(StatedFact(f["key"], f["value"], _text(f.get("superseded_by", "")), f.get("origin", ""))
                 for f in value)


def _quotes(value: object) -> tuple[Quote, ...]:
    if not isinstance(value, list) or not all(isinstance(q, dict) and isinstance(q.get("text"), str)
                                              and isinstance(q.get("session"), str)
                                              and isinstance(q.get("turn"), int) for q in value):
        raise ValueError("restated must be a list of quotes with text, session and turn")
    return tuple(Quote(q["text"], q["session"], q["turn"], _seconds(q.get("at", 0.0))) for q in value)


def _remapped(records: list[MemoryRecord], exported: list[str]) -> list[MemoryRecord]:
    """``records`` with the ids their history names (``superseded_by``, of a memory or of one of its facts) turned
    from the exporting user's ids into the importing user's: an id the file does not hold is dropped, and the memory
    it named as its replacement is current again (nothing can point at a memory that is not there)."""
    ids = {old: record.id for old, record in zip(exported, records, strict=True) if old}

    def mapped(old: str) -> str:
        return ids.get(old, "") if old else ""

    return [replace(r, superseded_by=mapped(r.superseded_by),
                    superseded_at=r.superseded_at if mapped(r.superseded_by) else 0.0,
                    facts=tuple(replace(f, superseded_by=mapped(f.superseded_by)) for f in r.facts))
            for r in records]


def _seconds(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError("created_at and last_seen must be epoch seconds")
    return float(value)


def parse_jsonl(lines: Iterable[str], user: str, name: str) -> list[MemoryRecord]:
    """Every memory of a JSON Lines export (``name`` is the file, for the one line that says what is wrong)."""
    records = []
    exported: list[str] = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
            records.append(from_portable(data, user))
            exported.append(str(data.get("id", "")))
        except ValueError as exc:  # json.JSONDecodeError is one
            what = "not JSON" if isinstance(exc, json.JSONDecodeError) else str(exc)
            raise UsageError(f"{name} line {number} is not a memory ({what}); nothing was imported. `agent "
                             "memories export` writes the format import reads (one JSON object a line).") from exc
    return _remapped(records, exported)


@dataclass
class ImportReport:
    """What an import did: memories new to the store, restatements of ones it held (refreshed), and the lines
    refused, each with its reason (never its text: a refused line may be a secret)."""

    new: int = 0
    refreshed: int = 0
    refused: list[str] = field(default_factory=list)


def import_records(service: MemoryService, records: Sequence[MemoryRecord]) -> ImportReport:
    """Store ``records`` in ``service``, embedded with its embedder, ``BATCH`` at a time."""
    report = ImportReport()
    kept: dict[str, MemoryRecord] = {}
    for number, record in enumerate(records, 1):
        refused = record_refusal(record)
        record = canonical_record(record)
        if refused:
            report.refused.append(f"memory {number}: {refused}")
        elif record.id in kept:  # said twice in the file: one memory, first seen first
            first = kept[record.id]
            kept[record.id] = replace(first, last_seen=max(first.last_seen, record.last_seen))
        else:
            kept[record.id] = record
    unique = list(kept.values())
    for start in range(0, len(unique), BATCH):
        batch = unique[start : start + BATCH]
        known = service.ledger.get(service.user, [r.id for r in batch])
        service.write(batch)
        report.refreshed += len(known)
        report.new += len(batch) - len(known)
    return report


def markdown(records: Sequence[MemoryRecord], user: str, now: float) -> str:
    """The memories as a document a person reads: a heading per day, one bullet per memory with where it came
    from. Not for import (the JSON Lines export is)."""
    stamp = datetime.fromtimestamp(now).astimezone().strftime("%Y-%m-%d %H:%M %Z")
    count = f"{len(records)} {'memory' if len(records) == 1 else 'memories'}"
    lines = [f"# Memories of {user}", "", f"{count}, exported {stamp}. `agent memories export` (JSON Lines) is the "
             "format `agent memories import` reads.", ""]
    day = ""
    for record in sorted(records, key=lambda r: r.created_at):
        when = datetime.fromtimestamp(record.created_at).astimezone()
        if when.strftime("%Y-%m-%d") != day:
            day = when.strftime("%Y-%m-%d")
            lines += [f"## {when.strftime('%A %d %B %Y')}", ""]
        origin = "added with `agent memories add`" if record.session == "cli" else (
            f"session {record.session}, turn {record.turn}")
        lines.append(f"- {_flat(record.text)}  ")
        lines.append(f"  *{record.kind}, {when.strftime('%H:%M')}, {origin}, id {record.id[:8]}*")
        if record.source.strip() and record.source.strip() != record.text.strip():
            lines.append(f"  from: “{_flat(record.source)}”")
    return "\n".join(lines) + "\n"


def _flat(text: str) -> str:
    return " ".join(text.split())
