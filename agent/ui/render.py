"""Rendering shared by the CLI and the REPL: escaping untrusted text, tables of memories, and printing them (the CLI
prints through here, so rich stays inside ``agent/ui``)."""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from datetime import datetime

from rich import box
from rich.console import Console, ConsoleOptions, RenderableType, RenderResult
from rich.markup import escape as escape_markup
from rich.table import Table

from agent.app.selectors import SHOWN_ID
from agent.domain import MemoryRecord, ScoredMemory

# C0 controls except tab and newline, DEL, C1 controls (which include the 8-bit CSI and OSC introducers), and the
# invisible characters that change how a line shows: bidi marks, embeddings, overrides and isolates (U+202E shows the
# text after it reversed) and the line and paragraph separators (U+2028 breaks a table row in two).
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]")


def escape_terminal(text: str) -> str:
    """Make text from memory or from the model inert on a terminal: every control character becomes visible
    (``\\x1b`` prints as ``\\x1b``, U+202E as ``\\u202e``), so no escape sequence can clear the screen, plant a link
    or move the cursor, and no text can show reordered or break a line."""
    return _CONTROL.sub(_visible, text)


def _visible(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def escape_json(dumped: str) -> str:
    """JSON text as ``json.dumps(..., ensure_ascii=False)`` writes it, with every character ``escape_terminal``
    makes visible written as a ``\\u`` escape: the same strings when loaded, and inert when a pipe ends on a
    terminal. JSON escapes the C0 controls itself but leaves DEL, the C1 controls (8-bit escape introducers among
    them), the bidi controls (U+202E shows what follows reversed) and the line separators raw: every listing that
    escapes them for a person must escape them for a program too (``--json``, the export)."""
    return _CONTROL.sub(_json_escape, dumped)


def _json_escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    code -= 0x10000  # outside the Basic Multilingual Plane JSON escapes a character as its UTF-16 surrogate pair
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


def safe(text: str) -> str:
    """Escaped for the terminal and for rich markup, ready for a rich table cell or ``console.print``."""
    return escape_markup(escape_terminal(text))


def print_stdout(renderable: RenderableType, soft_wrap: bool = False) -> None:
    """Print a command's table or transcript on stdout, with no highlighting: the words are the user's.
    ``soft_wrap``: a long line stays one line (the terminal wraps it), so a pipe gets it whole."""
    Console(highlight=False, soft_wrap=soft_wrap).print(renderable)


def stdout_is_terminal() -> bool:
    return Console(highlight=False).is_terminal


def plain_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> Table:
    table = Table(*header)
    for row in rows:
        table.add_row(*row)
    return table


def plural(count: int, one: str, many: str) -> str:
    """``1 memory``, ``2 memories``, ``1,000 memories``."""
    return f"{count:,} {one if count == 1 else many}"


def short_date(timestamp: float) -> str:
    return datetime.fromtimestamp(timestamp).strftime("%Y-%m-%d %H:%M")


def memory_table(rows: Sequence[MemoryRecord | ScoredMemory], title: str | None = None, first: int = 1
                 ) -> MemoryTable:
    """A table of memories: number (from ``first``: ``/why`` numbers the profile rows before them), text, kind,
    date, session, id prefix, similarity for search results, and when a later memory replaced it for a listing that
    holds replaced ones."""
    return MemoryTable(rows, title, first)


NARROW = 100  # below this many columns the memory's text takes the room: short dates, sessions cut to SESSION_CHARS
SESSION_CHARS = 10


def narrow_date(timestamp: float, now: float | None = None) -> str:
    """A date in six to eight characters: ``01 Dec`` this year, ``Dec 2025`` before."""
    when = datetime.fromtimestamp(timestamp)
    this_year = datetime.fromtimestamp(time.time() if now is None else now).year
    return when.strftime("%d %b") if when.year == this_year else when.strftime("%b %Y")


class MemoryTable:
    """The memory table laid out for the width it is drawn at. Wide, every column shows in full; narrow (a terminal
    of 70-80 columns), the text keeps at least half the width: the date is short, a long session name is cut with
    an ellipsis, and the id keeps its ``SHOWN_ID`` characters (what ``/forget ID`` takes at once)."""

    def __init__(self, rows: Sequence[MemoryRecord | ScoredMemory], title: str | None, first: int = 1) -> None:
        self.rows = rows
        self.title = title
        self.first = first

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield self.table(options.max_width)

    def table(self, width: int) -> Table:
        narrow = width < NARROW
        scored = any(isinstance(row, ScoredMemory) for row in self.rows)
        records = [row.record if isinstance(row, ScoredMemory) else row for row in self.rows]
        replaced = any(not record.current for record in records)
        dates = [narrow_date(r.created_at) if narrow else short_date(r.created_at) for r in records]
        # Every column but the text's is drawn whole (no_wrap), so the text alone gives way when the table is too
        # wide, and only to what the others leave; narrow, the lines between columns go too (a space each).
        table = Table(title=self.title, show_lines=False, expand=False, show_edge=not narrow,
                      box=box.SIMPLE_HEAD if narrow else box.HEAVY_HEAD, padding=(0, 0) if narrow else (0, 1))
        table.add_column("#", justify="right", style="dim", no_wrap=True)
        table.add_column("memory", overflow="fold")
        table.add_column("kind", no_wrap=True)
        table.add_column("date", no_wrap=True)
        table.add_column("session", no_wrap=narrow, overflow="ellipsis" if narrow else "fold",
                         max_width=SESSION_CHARS if narrow else None)
        if scored:
            table.add_column("sim", justify="right", no_wrap=True)
        if replaced:
            table.add_column("replaced", no_wrap=True)
        table.add_column("id", style="dim", no_wrap=True)
        for number, (row, record, date) in enumerate(zip(self.rows, records, dates, strict=True), start=self.first):
            cells = [str(number), safe(record.text), record.kind, date, safe(record.session)]
            if scored:
                cells.append(f"{row.similarity:.2f}" if isinstance(row, ScoredMemory) else "")
            if replaced:
                when = record.superseded_at if record.superseded_by else None
                cells.append("" if when is None else narrow_date(when) if narrow else short_date(when))
            cells.append(record.id[:SHOWN_ID])
            table.add_row(*cells)
        return table
