"""What the memory decided, shown to the user: the profile with where each value came from, the memories later ones
replaced (and by what, and when), and the same as JSON fields for ``agent memories list --json``.

Every decision the memory makes about truth (a value replaced, a restatement merged) is visible here and can be
undone: ``/restore`` and ``agent memories restore`` make a replaced memory current again.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from rich.console import Console, ConsoleOptions, RenderResult
from rich.table import Table
from rich.text import Text

from agent.app.profile import Entry, label
from agent.app.selectors import SHOWN_ID
from agent.domain import MemoryRecord
from agent.ui.render import escape_terminal, safe, short_date


def iso(timestamp: float) -> str | None:
    return datetime.fromtimestamp(timestamp).astimezone().isoformat(timespec="seconds") if timestamp else None


def truth_fields(record: MemoryRecord, history: Sequence[Entry]) -> dict[str, Any]:
    """The JSON fields of a memory about its truth: the profile facts it states (``key`` is the first), whether a
    later memory replaced it, the restatements merged into it, and, per key it states, the values held before."""
    keys = {fact.key for fact in record.facts}
    return {
        "key": record.facts[0].key if record.facts else None,
        "profile": [
            {"kind": "profile", "key": f.key, "value": f.value, "superseded_by": f.superseded_by or None,
             "origin": f.origin or "user"}
            for f in record.facts
        ],
        "superseded_by": record.superseded_by or None,
        "superseded_at": iso(record.superseded_at),
        "restated": [
            {"text": q.text, "session": q.session, "turn": q.turn, "at": iso(q.at)} for q in record.restated
        ],
        "history": [
            {"key": e.key, "value": e.value, "memory": e.memory, "said_at": iso(e.said_at),
             "replaced_by": e.replaced_by, "replaced_at": iso(e.replaced_at), "origin": e.origin or "user"}
            for e in history
            if e.key in keys and e.memory != record.id
        ] if keys else [],
    }


def profile_rows(current: Sequence[Entry], history: Sequence[Entry]) -> list[Entry]:
    """The rows of ``/profile`` in order: the current values, then the replaced ones."""
    return [*current, *history]


UNBOUNDED = 10_000


class Stacked:
    """A table drawn as it is when every word of every cell fits its column, else stacked: each row a numbered
    paragraph of its own (a headline, then the details), wrapped at words at any width. A table squeezed below the
    width of its words folds them mid-word ("shellf / ish" at 80 columns), which no one can read."""

    def __init__(self, table: Table, rows: Sequence[tuple[str, str]], title: str | None) -> None:
        self.table = table
        self.rows = rows
        self.title = title

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        if self._words_fit(console, options):
            yield self.table
            return
        if self.title:
            yield Text(self.title, style="italic")
        stacked = Table(show_header=False, show_edge=False, box=None, padding=(0, 1, 0, 0), expand=False)
        stacked.add_column("#", justify="right", style="dim", no_wrap=True)
        stacked.add_column("row", overflow="fold")
        for number, (headline, details) in enumerate(self.rows, start=1):
            stacked.add_row(str(number), Text.assemble(headline, "\n", (details, "dim")))
        yield stacked

    def _words_fit(self, console: Console, options: ConsoleOptions) -> bool:
        """Whether rich gives every column at least its longest word at this width (it shrinks the widest columns
        below that when the table is too wide, whatever their words); rich's own width calculation, so it is the
        layout that would be drawn."""
        table = self.table
        widths = table._calculate_column_widths(console, options.update_width(options.max_width - table._extra_width))
        unbounded = options.update_width(UNBOUNDED)  # rich clamps a measurement to the width it is given
        return all(width >= table._measure_column(console, unbounded, column).minimum
                   for width, column in zip(widths, table.columns, strict=True))


def profile_table(current: Sequence[Entry], history: Sequence[Entry], title: str | None = None) -> Stacked:
    """Numbered rows: key, value, when and where it was said, and for a replaced value when it was replaced."""
    table = Table(title=title, show_lines=False, expand=False)
    table.add_column("#", justify="right", style="dim")
    table.add_column("key")
    table.add_column("value", overflow="fold")
    table.add_column("said", no_wrap=True)
    table.add_column("session")
    table.add_column("status")
    table.add_column("memory", style="dim", no_wrap=True)
    stacked: list[tuple[str, str]] = []
    for number, entry in enumerate(profile_rows(current, history), start=1):
        status = f"replaced {short_date(entry.replaced_at)}" if entry.replaced_by else "current"
        status += f" ({entry.origin})" if entry.origin else ""
        table.add_row(str(number), safe(label(entry.key)), safe(entry.value), short_date(entry.said_at),
                      safe(entry.session), status, entry.memory[:SHOWN_ID])
        stacked.append((escape_terminal(f"{label(entry.key)}: {entry.value}"),
                        escape_terminal(f"{status} · said {short_date(entry.said_at)} in {entry.session} · "
                                        f"memory {entry.memory[:SHOWN_ID]}")))
    return Stacked(table, stacked, title)


def history_table(records: Sequence[MemoryRecord], by_id: dict[str, MemoryRecord], title: str | None = None
                  ) -> Stacked:
    """Numbered superseded memories, each with what replaced it and when (a forgotten replacement says so)."""
    table = Table(title=title, show_lines=False, expand=False)
    table.add_column("#", justify="right", style="dim")
    table.add_column("memory", overflow="fold")
    table.add_column("said", no_wrap=True)
    table.add_column("replaced", no_wrap=True)
    table.add_column("by", overflow="fold")
    table.add_column("id", style="dim", no_wrap=True)
    stacked: list[tuple[str, str]] = []
    for number, record in enumerate(records, start=1):
        replacer = by_id.get(record.superseded_by)
        by = replacer.text if replacer is not None else "a memory since forgotten"
        table.add_row(str(number), safe(record.text), short_date(record.created_at),
                      short_date(record.superseded_at), safe(by), record.id[:SHOWN_ID])
        stacked.append((escape_terminal(record.text),
                        escape_terminal(f"said {short_date(record.created_at)} · replaced "
                                        f"{short_date(record.superseded_at)} by: {by} · id {record.id[:SHOWN_ID]}")))
    return Stacked(table, stacked, title)
