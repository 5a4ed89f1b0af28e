"""Rendering shared by the CLI and the REPL: escaping untrusted text and tables of memories."""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime

from rich.markup import escape as escape_markup
from rich.table import Table

from agent.domain import MemoryRecord, ScoredMemory

# C0 controls except tab and newline, DEL, C1 controls (which include the 8-bit CSI and OSC introducers).
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
SHOWN_ID = 8  # characters of a memory's id in the tables: enough to name one among millions


def escape_terminal(text: str) -> str:
    """Make text from memory or from the model inert on a terminal: every control character becomes visible
    (``\\x1b`` prints as ``\\x1b``), so no escape sequence can clear the screen, plant a link or move the cursor."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def safe(text: str) -> str:
    """Escaped for the terminal and for rich markup, ready for a rich table cell or ``console.print``."""
    return escape_markup(escape_terminal(text))


def plural(count: int, one: str, many: str) -> str:
    """``1 memory``, ``2 memories``, ``1,000 memories``."""
    return f"{count:,} {one if count == 1 else many}"


def short_date(timestamp: float) -> str:
    return datetime.fromtimestamp(timestamp).strftime("%Y-%m-%d %H:%M")


def memory_table(
    rows: Sequence[MemoryRecord | ScoredMemory], title: str | None = None, numbered: bool = True
) -> Table:
    """A table of memories: number, text, kind, date, session, id prefix, similarity for search results, and when a
    later memory replaced it for a listing that holds replaced ones."""
    scored = any(isinstance(row, ScoredMemory) for row in rows)
    replaced = any(not (row.record if isinstance(row, ScoredMemory) else row).current for row in rows)
    table = Table(title=title, show_lines=False, expand=False)
    if numbered:
        table.add_column("#", justify="right", style="dim")
    table.add_column("memory", overflow="fold")
    table.add_column("kind")
    table.add_column("date", no_wrap=True)
    table.add_column("session")
    if scored:
        table.add_column("sim", justify="right")
    if replaced:
        table.add_column("replaced", no_wrap=True)
    table.add_column("id", style="dim", no_wrap=True)
    for number, row in enumerate(rows, start=1):
        record = row.record if isinstance(row, ScoredMemory) else row
        cells = [str(number)] if numbered else []
        cells += [safe(record.text), record.kind, short_date(record.created_at), safe(record.session)]
        if scored:
            cells.append(f"{row.similarity:.2f}" if isinstance(row, ScoredMemory) else "")
        if replaced:
            cells.append(short_date(record.superseded_at) if record.superseded_by else "")
        cells.append(record.id[:SHOWN_ID])
        table.add_row(*cells)
    return table
