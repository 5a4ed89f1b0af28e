"""The command line: ``agent`` (chat), ``agent PROMPT`` (one prompt, then exit), ``agent memories ...``,
``agent sessions ...``, ``agent config``, ``agent doctor``; one module per group of commands, registered here in
the order ``--help`` lists them. ``main`` is the ``agent`` script's entry point (pyproject.toml).
"""

from __future__ import annotations

import functools
import sys
from typing import Any

import typer

from agent.cli import commands, memories, memories_data, sessions  # noqa: F401  (each registers its commands)
from agent.cli.root import app
from agent.errors import AgentError

__all__ = ["app", "main"]


@functools.cache
def _command() -> Any:
    """The click command typer makes of ``app``: made once per process, not at each run of ``main`` (6-8 ms of
    CPU each, which every in-process run of the command line paid again). ``app(...)`` would add only typer's
    pretty tracebacks, which are off."""
    return typer.main.get_command(app)


def main(argv: list[str] | None = None) -> None:
    """Entry point of the ``agent`` script, on ``argv`` (default: the command line's arguments)."""
    args = sys.argv[1:] if argv is None else argv
    debug = "--debug" in args
    try:
        _command().main(args=args, prog_name="agent")
    except AgentError as exc:
        if debug:
            raise
        print(f"agent: {exc}", file=sys.stderr)
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        print("agent: interrupted", file=sys.stderr)
        sys.exit(130)
