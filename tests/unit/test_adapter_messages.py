"""A message below the front ends (the adapters', the memory's, the app's, a machine's and a session's) names a
command as a ``Remedy`` and never spells it: the command line is free to rename its commands, and the layers that
know the domain and the ports say nothing stale. Docstrings and comments may name a command: they are prose for a
reader of the code."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from agent.errors import Remedy

AGENT = Path(__file__).resolve().parents[2] / "agent"
LAYERS = ("adapters", "memory", "app")
MODULES = ("machine.py", "sessions.py", "config.py", "settings_files.py")
_COMMAND = re.compile(r"`agent [a-z-]|\bagent (memories|sessions|config|doctor|trust|mcp)\b")


def _spelled(path: Path) -> list[str]:
    tree = ast.parse(path.read_text())
    prose = {id(node.value) for node in ast.walk(tree) if isinstance(node, ast.Expr)}  # a docstring
    return [f"{path.relative_to(AGENT.parent)}:{node.lineno}" for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in prose
            and _COMMAND.search(node.value)]


def test_no_message_below_the_front_ends_spells_a_command() -> None:
    paths = [*(path for layer in LAYERS for path in sorted((AGENT / layer).rglob("*.py"))),
             *(AGENT / module for module in MODULES)]
    assert [where for path in paths for where in _spelled(path)] == []


def test_a_remedy_reads_as_the_command_that_carries_it_out() -> None:
    assert f"cannot recall them: {Remedy.REBUILD}." == "cannot recall them: run `agent memories rebuild`."
    assert Remedy.REINDEX.run(embedder="local") == "run `agent memories reindex --embedder local`"
    assert Remedy.EVICT_TO.command(count=40) == "`agent memories evict --to 40`"
