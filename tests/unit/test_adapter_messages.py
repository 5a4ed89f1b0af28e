"""A message below the front ends (the adapters', the memory's, the app's, a machine's and a session's) names a
command as a ``Remedy`` and never spells it: the command line is free to rename its commands, and the layers that
know the domain and the ports say nothing stale. Docstrings and comments may name a command: they are prose for a
reader of the code."""

from __future__ import annotations

import ast
import re

from agent.errors import Remedy
from tests.source_trees import Module, modules

LAYERS = ("agent/adapters/", "agent/memory/", "agent/app/")
MODULES = ("agent/machine.py", "agent/sessions.py", "agent/config.py", "agent/settings_files.py")
_COMMAND = re.compile(r"`agent [a-z-]|\bagent (memories|sessions|config|doctor|trust|mcp)\b")


def _spelled(module: Module) -> list[str]:
    prose = {id(node.value) for node in module.nodes if isinstance(node, ast.Expr)}  # a docstring
    return [f"{module.name}:{node.lineno}" for node in module.nodes
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in prose
            and _COMMAND.search(node.value)]


def test_no_message_below_the_front_ends_spells_a_command() -> None:
    below = [module for module in modules() if module.name.startswith(LAYERS) or module.name in MODULES]
    assert len(below) > len(MODULES) + len(LAYERS) * 5  # every layer's modules are read, not none of them
    assert [where for module in below for where in _spelled(module)] == []


def test_a_remedy_reads_as_the_command_that_carries_it_out() -> None:
    assert f"cannot recall them: {Remedy.REBUILD}." == "cannot recall them: run `agent memories rebuild`."
    assert Remedy.REINDEX.run(embedder="local") == "run `agent memories reindex --embedder local`"
    assert Remedy.EVICT_TO.command(count=40) == "`agent memories evict --to 40`"
