"""The encoding of memories, facts, quotes, changes and vectors into the columns both ledgers store (SQLite,
``agent.adapters.ledger``; PostgreSQL, ``agent.adapters.postgres_ledger``), in a module of its own so that neither
ledger depends on the other for it: one format, read and written the same way by both."""

from __future__ import annotations

import hashlib
import hmac
import json
import sqlite3
from array import array
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from agent.domain import (
    Change,
    Links,
    MemoryRecord,
    Quote,
    StatedFact,
    Touched,
    normalise_text,
    stored_time,
)

# The keyword index has two columns, the memory's own text and the context it was written with (the turn it
# answers): BM25 counts a match in the text TEXT_WEIGHT times a match in the context (bench/RESULTS.md, E10).
TEXT_WEIGHT = 2.0


def search_context(record: MemoryRecord) -> str:
    """The context the writer attached (``MemoryRecord.context``) and the words of each restatement, indexed beside
    the memory text in its own column: a restatement's new words find the memory it merged into."""
    context = record.context
    return "\n".join(([context] if context else []) + [quote.text for quote in record.restated])


def facts_json(facts: Sequence[StatedFact]) -> str:
    # The origin only when there is one: a file of facts read from the user's words is as it always was.
    return json.dumps([[f.key, f.value, f.superseded_by, *([f.origin] if f.origin else [])] for f in facts],
                      ensure_ascii=False)


def quotes_json(quotes: Sequence[Quote]) -> str:
    return json.dumps([[q.text, q.session, q.turn, q.at] for q in quotes], ensure_ascii=False)


def _links_json(links: Links | None) -> list[Any] | None:
    return None if links is None else [links.superseded_by, links.superseded_at, json.loads(facts_json(links.facts))]


def _links(value: Any) -> Links | None:
    return None if value is None else Links(str(value[0]), float(value[1]), _facts(value[2]))


def _facts(rows: Any) -> tuple[StatedFact, ...]:
    return tuple(StatedFact(str(key), str(value), str(by), str(origin[0]) if origin else "")
                 for key, value, by, *origin in rows)


def unstated(record: MemoryRecord, quote: Quote) -> MemoryRecord | None:
    """``record`` without ``quote`` in its provenance (its keyword context follows: ``search_context``); None when it
    holds no such quote."""
    restated = tuple(q for q in record.restated if q != quote)
    return None if restated == record.restated else replace(record, restated=restated)


def change_json(change: Change) -> str:
    """The body of a stored ``Change``: what the turn created and, per memory it changed, its links before and after
    and the quote it added."""
    return json.dumps({
        "created": list(change.created),
        "touched": [{"memory": t.memory, "before": _links_json(t.before), "after": _links_json(t.after),
                     "quote": None if t.quote is None else json.loads(quotes_json([t.quote]))[0]}
                    for t in change.touched],
    }, ensure_ascii=False)


def change_from_row(key: int, session: str, turn: int, said: str, body: str) -> Change:
    data = json.loads(body)
    touched = tuple(
        Touched(str(t["memory"]), _links(t["before"]), _links(t["after"]),
                None if t["quote"] is None else Quote(str(t["quote"][0]), str(t["quote"][1]), int(t["quote"][2]),
                                                      float(t["quote"][3])))
        for t in data["touched"])
    return Change(session, int(turn), said, tuple(str(i) for i in data["created"]), touched, int(key))


def forgotten_digest(key: bytes, text: str) -> str:
    """What a forget keeps of each forgotten text once its record is gone: HMAC-SHA256 of the text, folded as memory
    ids fold it, under a random key of the ledger (``record_forget``). It recognises the same words in a turn that
    waited on some machine's spool while the forget was made (``forgotten_since``), so that a replay never writes
    them back; it is not the text, nor the memory's id or content hash, and means nothing outside this ledger. Whoever
    can read the ledger and guesses the exact words can still confirm them: the digest is kept for good, since a
    machine may come back with such a turn after any time (words said again are remembered in plain text beside it,
    and a turn said once the forget was known passes by its count, ``forget_mark``)."""
    return hmac.new(key, normalise_text(text).encode("utf-8", "surrogatepass"), hashlib.sha256).hexdigest()[:32]


def unlinked(facts_json_text: str, ids: set[str]) -> str | None:
    """``facts`` (as stored) with every ``superseded_by`` naming one of ``ids`` cleared, or None when none did."""
    facts = json.loads(facts_json_text)
    if not any(by in ids for _, _, by, *_ in facts):
        return None
    return json.dumps([[key, value, "" if by in ids else by, *rest] for key, value, by, *rest in facts],
                      ensure_ascii=False)


def floats(blob: bytes) -> list[float]:
    values = array("f")
    values.frombytes(blob)
    return values.tolist()


def row_to_record(row: sqlite3.Row | Mapping[str, Any]) -> MemoryRecord:
    """A memory from a row of its columns by name (a SQLite row, or a PostgreSQL row as a dict)."""
    return MemoryRecord(
        id=row["id"],
        text=row["text"],
        kind=row["kind"],
        user=row["user"],
        session=row["session"],
        turn=int(row["turn"]),
        created_at=stored_time(row["created_at"]),  # a date out of range reads as the nearest (``stored_time``)
        last_seen=stored_time(row["last_seen"]),
        content_hash=row["content_hash"],
        source=row["source"],
        extra=json.loads(row["extra"]),
        facts=_facts(json.loads(row["facts"])),
        superseded_by=row["superseded_by"],
        superseded_at=stored_time(row["superseded_at"]),
        restated=tuple(Quote(str(t), str(s), int(n), stored_time(a)) for t, s, n, a in json.loads(row["restated"])),
    )
