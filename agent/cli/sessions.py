"""``agent sessions ...``: list, show, search and remove the chat sessions of this run's user."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

import typer

from agent.cli.root import JsonOpt, State, _json, app, shared
from agent.ui.render import (
    plural,
    print_stdout,
)

# -- agent sessions ---------------------------------------------------------------------------------------

sessions_app = typer.Typer(help="List, show, search and remove chat sessions.", no_args_is_help=True,
                           rich_markup_mode=None)
app.add_typer(sessions_app, name="sessions")
NameArg = Annotated[str, typer.Argument(help="The session name (as `agent sessions list` shows it).")]


@sessions_app.callback()
@shared
def sessions_root() -> None:
    """Options given here apply to every sessions command."""


@sessions_app.command("list")
@shared
def sessions_list(as_json: JsonOpt = False, *, state: State) -> None:
    """Every session, most recently updated first."""
    infos = state.session_store().list()
    if as_json:
        rows = [{"name": i.name, "turns": i.turns, "updated_at": i.updated_at, "path": str(i.path),
                 "first_line": i.first_line, "error": i.error} for i in infos]
        typer.echo(_json(rows))
        return
    if not infos:
        typer.echo("No sessions yet: `agent -s NAME` starts one.")
        return
    from agent.ui.sessions_view import sessions_table

    print_stdout(sessions_table(infos))


@sessions_app.command("show")
@shared
def sessions_show(name: NameArg, as_json: JsonOpt = False, *, state: State) -> None:
    """The whole conversation of session NAME."""
    session = state.session_store().load(name)
    if as_json:
        typer.echo(_json(session.to_json()))
        return
    from agent.ui.sessions_view import transcript

    print_stdout(transcript(session))


@sessions_app.command("search")
@shared
def sessions_search(
    text: Annotated[list[str], typer.Argument(metavar="TEXT...", help="Words to find (every one, in any case).")],
    limit: Annotated[int, typer.Option("--limit", min=1, help="Show at most N matches, the newest.")] = 50,
    as_json: JsonOpt = False,
    *,
    state: State,
) -> None:
    """The turns of your sessions (--user) whose line or reply holds every word of TEXT, newest first. A forgotten
    text is never shown, also one still waiting to leave a session another chat holds."""
    from agent.app.data_dir import ensure_data_dir
    from agent.app.machines import pending_texts
    from agent.forget import Forgotten
    from agent.sessions import search
    from agent.wiring import build_ledger, existing_ledger

    query = " ".join(text)
    settings = state.settings()
    paths = ensure_data_dir(settings.data_dir).for_user(settings.user)
    ledger = (build_ledger(settings, paths) if settings.database_url else existing_ledger(settings, paths))
    try:
        store = state.data_dir(ledger).session_store()  # finishes forgets cut short first
        pending = [] if ledger is None else pending_texts(ledger, settings.user)
    finally:
        if ledger is not None:
            ledger.close()
    found = search(store, query, Forgotten(pending).scrub)
    if as_json:
        typer.echo(_json([{"session": f.session, "turn": f.turn, "at": datetime.fromtimestamp(f.at).astimezone()
                           .isoformat(timespec="seconds"), "who": f.who, "text": f.text} for f in found[:limit]]))
        return
    if not found:
        typer.echo(f"No turn of your sessions holds {query!r}.")
        return
    from agent.ui.sessions_view import found_lines

    for line in found_lines(found[:limit], query):
        print_stdout(line, soft_wrap=True)
    shown = f"the newest {limit} of " if len(found) > limit else ""
    typer.echo(f"{shown}{plural(len(found), 'match', 'matches')}: `agent sessions show NAME` shows a whole "
               "conversation.", err=True)


@sessions_app.command("rm")
@shared
def sessions_rm(name: NameArg, *, state: State) -> None:
    """Delete session NAME (its file; memories it led to stay: `agent memories` manages those)."""
    state.session_store().remove(name)
    typer.echo(f"removed session {name}")
