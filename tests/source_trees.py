"""The package's modules parsed once per test run, for the tests that read the code itself (what a module reaches
into, what a message spells): parsing and walking the ~120 modules is most of such a test's time, and each test
did it again for itself."""

from __future__ import annotations

import ast
import functools
from dataclasses import dataclass
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "agent"


@dataclass(frozen=True)
class Module:
    """One module: ``name`` its path from the checkout (``agent/app/doctor.py``), ``nodes`` every node of its tree
    in ``ast.walk``'s order."""

    name: str
    nodes: tuple[ast.AST, ...]


@functools.cache
def modules() -> tuple[Module, ...]:
    """Every module of the package, in path order."""
    return tuple(Module(str(path.relative_to(PACKAGE.parent)), tuple(ast.walk(ast.parse(path.read_text()))))
                 for path in sorted(PACKAGE.rglob("*.py")))
