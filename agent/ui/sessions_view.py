"""How ``agent sessions list`` and ``agent sessions show`` print sessions: every text from a session is escaped."""

from __future__ import annotations

from collections.abc import Sequence

from rich.table import Table
from rich.text import Text

from agent.sessions import Session, SessionInfo
from agent.ui.render import escape_terminal, plural, short_date

_MARKS = {"interrupted": "[interrupted]", "truncated": "[cut off]", "failed": "[failed]"}


def sessions_table(infos: Sequence[SessionInfo]) -> Table:
    """Name, turns, last update and first line of each session, most recent first; damaged files say so."""
    table = Table("session", "turns", "updated", "first message")
    for info in infos:
        first = Text("damaged: see `agent sessions show`", style="red") if info.error else Text(
            escape_terminal(info.first_line[:60]))
        table.add_row(Text(info.name), str(info.turns), short_date(info.updated_at), first)
    return table


def transcript(session: Session) -> Text:
    """The whole conversation as text: each turn's line and reply, unfinished replies marked."""
    out = Text()
    turns = plural(len(session.turns), "turn", "turns")
    out.append(f"session {session.name} · {turns} · started {short_date(session.created_at)}\n",
               style="bold")
    if session.summary:
        out.append(f"summary of the turns before the context window: {escape_terminal(session.summary)}\n",
                   style="dim")
    for number, turn in enumerate(session.turns, start=1):
        out.append(f"\n[{number}] you: ", style="bold cyan")
        out.append(escape_terminal(turn.user) + "\n")
        out.append("agent: ", style="bold green")
        out.append(escape_terminal(turn.reply))
        mark = _MARKS.get(turn.status)
        if mark:
            out.append(f" {mark}", style="yellow")
        out.append("\n")
    return out
