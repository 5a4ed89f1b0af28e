"""How ``agent sessions list`` and ``agent sessions show`` print sessions: every text from a session is escaped."""

from __future__ import annotations

from collections.abc import Sequence

from rich.table import Table
from rich.text import Text

from agent.domain import normalise_text
from agent.sessions import Found, Session, SessionInfo
from agent.ui.render import escape_terminal, plural, short_date

_MARKS = {"interrupted": "[interrupted]", "truncated": "[cut off]", "failed": "[failed]"}


def sessions_table(infos: Sequence[SessionInfo], current: str | None = None) -> Table:
    """Name, turns, last update and first line of each session, most recent first; damaged files say so. In the
    chat (``current``: the session it is in) the rows are numbered for ``/sessions N``, and the current one starred."""
    columns = ("#", "session", "turns", "updated", "first message") if current is not None else (
        "session", "turns", "updated", "first message")
    table = Table(*columns)
    for number, info in enumerate(infos, start=1):
        first = Text("damaged: see `agent sessions show`", style="red") if info.error else Text(
            escape_terminal(info.first_line[:60]))
        row: list[Text | str] = [Text(info.name + (" *" if info.name == current else "")), str(info.turns),
                                 short_date(info.updated_at), first]
        table.add_row(*([str(number)] if current is not None else []), *row)
    return table


def found_lines(found: Sequence[Found], query: str) -> list[Text]:
    """One line per turn found: session, turn, date, who said it, and the words around the match, highlighted."""
    words = normalise_text(query).split()
    lines = []
    for hit in found:
        shown, spans = hit.snippet(words)
        line = Text(f"{hit.session} #{hit.turn}  {short_date(hit.at)}  {hit.who}: ", style="dim")
        snippet = Text(escape_terminal(shown))
        if snippet.plain == shown:  # escaped control characters would shift the spans: no highlight then
            for start, end in spans:
                snippet.stylize("bold", start, end)
        lines.append(line + snippet)
    return lines


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
