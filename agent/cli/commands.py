"""``agent config``, ``agent trust``, ``agent mcp`` and ``agent doctor``: the settings, the approval of a .env,
memory served to another program, and the checks."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer

from agent.cli.root import DataDirOpt, DebugOpt, EmbedderOpt, State, _warn, app, shared
from agent.ui.render import (
    escape_terminal,
    plain_table,
    plural,
    print_stdout,
    stdout_is_terminal,
)


@app.command("config")
def config_cmd(ctx: typer.Context, data_dir: DataDirOpt = None, debug: DebugOpt = False) -> None:
    """Print every effective setting and where it came from (flag, environment, user config, .env, default)."""
    state = ctx.find_root().ensure_object(State)
    state.apply(data_dir, debug)
    settings = state.settings()
    header = ("setting", "variable", "value", "source")
    rows = [tuple(escape_terminal(cell) for cell in row) for row in settings.describe()]
    if stdout_is_terminal():
        print_stdout(plain_table(header, rows))
    else:  # a pipe gets every value whole, in aligned columns, instead of a table squeezed to 80 columns
        widths = [max(len(row[i]) for row in (header, *rows)) for i in range(3)]
        for row in (header, *rows):
            typer.echo("  ".join([*(cell.ljust(width) for cell, width in zip(row, widths, strict=False)), row[3]]))
    for file in settings.files:
        typer.echo(escape_terminal(f"settings file {file.path}: {file.describe()}"))


DOTENV = Path(".env")


@app.command("trust")
def trust_cmd(
    file: Annotated[Path, typer.Argument(metavar="FILE", help="The .env to approve (default: the one here).")] = DOTENV,
    revoke: Annotated[bool, typer.Option("--revoke", help="Take the approval back: it is not read again.")] = False,
) -> None:
    """Approve a .env outside agent's own checkout, as it is now: agent reads it from then on, until it changes."""
    from agent.config import SPECS, approve_dotenv, checkout_dotenv, revoke_dotenv

    path = Path(os.path.abspath(file))
    if revoke:
        said = "approval taken back: it is not read again" if revoke_dotenv(path) else "it was not approved"
        typer.echo(escape_terminal(f"{path}: {said}"))
        return
    if checkout_dotenv(path):
        typer.echo(escape_terminal(f"{path} is the .env of agent's own checkout: it is read without approval."))
        return
    approved = approve_dotenv(path)
    specs = {name: spec for spec in SPECS for name in spec.env}
    ours = {name: value for name, value in (approved.written or {}).items() if name in specs}
    others = len(approved.names) - len(ours)
    typer.echo(escape_terminal(f"approved {path}: agent reads it while it stays as it is now (an edit needs "
                               f"`agent trust` again); {'it sets:' if ours else 'it sets none of its settings.'}"))
    for name, value in ours.items():  # as the file spells them: a ${VAR} it would expand is shown as it is
        shown = "(set)" if specs[name].secret else specs[name].shown(value)
        typer.echo(escape_terminal(f"  {name}={shown if len(shown) <= 100 else shown[:100] + '…'}"))
    if others:
        typer.echo(f"  and {plural(others, 'variable', 'variables')} agent does not read")
    for problem in approved.problems:
        _warn(f"warning: {escape_terminal(problem)}")


@app.command("mcp")
@shared
def mcp_cmd(embedder: EmbedderOpt = None, *, state: State) -> None:
    """Serve this user's memory over the Model Context Protocol on stdin and stdout (for an editor or another
    agent): tools to search, remember, forget and read the profile, as the chat does them."""
    from agent import mcp_server

    service = state.service(embedder)
    mcp_server.serve(service, state.places(service.user))


@app.command("doctor")
@shared
def doctor_cmd(*, state: State) -> None:
    """Check the model server, the embedder, the store and the data directory; say what to fix (exit 1 on a
    failure)."""
    from agent import wiring
    from agent.app import doctor

    settings = state.settings()
    checks = doctor.run(settings, wiring.doctor_probes(settings))
    colours = {"ok": "green", "warn": "yellow", "fail": "red"}
    for check in checks:
        typer.secho(f"{check.status:<4}  {check.area}: {check.name}: {escape_terminal(check.detail)}",
                    fg=colours[check.status])
        if check.fix and check.status != "ok":
            typer.echo(f"      fix: {escape_terminal(check.fix)}")
    problems = [c for c in checks if c.status != "ok"]
    typer.echo("all good" if not problems else
               f"{sum(c.status == 'fail' for c in problems)} failed, {sum(c.status == 'warn' for c in problems)} "
               "warnings")
    if doctor.failed(checks):
        raise typer.Exit(1)
