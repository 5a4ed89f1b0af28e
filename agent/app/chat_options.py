"""The chat's options as the command line gives them (``agent.cli`` makes them of its flags): what
``agent.cli.run_chat``, the wiring and the REPL read. Apart from the typer module, so that none of those imports
the command line."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ChatOptions:
    """The chat's command-line flags. ``system`` replaces the system prompt for this run; ``sampling`` are the
    request options passed through to the model (``agent.sampling``); ``no_session``: no session file is written
    (a session named with ``session`` or ``resume_latest`` still is); ``lines``: standard input is a script, one
    turn per line."""

    session: str | None = None
    resume_latest: bool = False
    no_memory: bool = False
    read_only: bool = False
    plain: bool = False
    debug: bool = False
    system: str | None = None
    sampling: tuple[tuple[str, float], ...] = ()
    no_session: bool = False
    lines: bool = False
