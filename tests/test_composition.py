"""The package's shape: imports point one way (the composition root on top, the pure core at the bottom), with no
cycle, and the command line reaches every command it documents."""

from __future__ import annotations

import ast
from pathlib import Path

from agent.adapters.chroma_index import forget_clients
from agent.adapters.local_embedder import LocalEmbedder
from agent.config import load_settings
from agent.wiring import open_memory
from tests.cli_harness import invoke

PACKAGE = Path(__file__).resolve().parent.parent / "agent"
# What each layer may not import (a prefix of a module name), lazily inside a function or not.
FORBIDDEN = {
    "agent.domain": ("agent.",),
    "agent.errors": ("agent.",),
    "agent.ports": ("agent.adapters", "agent.ui", "agent.cli", "agent.wiring", "agent.memory", "agent.app"),
    "agent.memory": ("agent.adapters", "agent.ui", "agent.cli", "agent.wiring", "agent.app", "agent.doctor"),
    "agent.adapters": ("agent.ui", "agent.cli", "agent.wiring", "agent.app", "agent.doctor"),
    "agent.ui": ("agent.adapters", "agent.cli", "agent.wiring", "agent.doctor"),
}
# The modules allowed to import agent.adapters: the composition root, and the checks of ``agent doctor``, which
# probe the adapters themselves. Ruff's banned-api holds the rest (pyproject.toml); these two are exempt there, so
# the libraries they may not import either are held here.
ADAPTER_USERS = {"agent.wiring", "agent.doctor"}
LIBRARIES = {"rich": "agent.ui", "prompt_toolkit": "agent.ui", "openai": "agent.adapters",
             "chromadb": "agent.adapters", "psycopg": "agent.adapters"}


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path) -> set[str]:
    """The agent modules ``path`` imports, at the top or inside a function (``from agent import x`` counts as
    ``agent.x`` when x is a module)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name.startswith("agent"))
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("agent"):
            found.add(node.module)
            for alias in node.names:
                candidate = f"{node.module}.{alias.name}"
                if (PACKAGE.parent / Path(*candidate.split("."))).with_suffix(".py").exists() or (
                    PACKAGE.parent / Path(*candidate.split("."))
                ).is_dir():
                    found.add(candidate)
    return found


def graph() -> dict[str, set[str]]:
    modules = {module_name(path): path for path in PACKAGE.rglob("*.py")}
    return {name: {m for m in imports_of(path) if m in modules and m != name} for name, path in modules.items()}


def layer_of(module: str) -> str | None:
    return next((layer for layer in FORBIDDEN if module == layer or module.startswith(layer + ".")), None)


def test_no_module_imports_a_higher_layer() -> None:
    wrong = []
    for module, imported in sorted(graph().items()):
        layer = layer_of(module)
        for target in sorted(imported):
            if layer is not None and target.startswith(FORBIDDEN[layer]) and target != "agent":
                wrong.append(f"{module} imports {target}")
            if target.startswith("agent.adapters") and not module.startswith("agent.adapters") and \
                    module not in ADAPTER_USERS:
                wrong.append(f"{module} imports {target} (only the composition root builds adapters)")
    assert wrong == []


def test_terminal_and_client_libraries_stay_in_their_package() -> None:
    wrong = []
    for path in sorted(PACKAGE.rglob("*.py")):
        module = module_name(path)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([alias.name for alias in node.names] if isinstance(node, ast.Import) else
                     [node.module] if isinstance(node, ast.ImportFrom) and node.module else [])
            for name in names:
                home = LIBRARIES.get(name.split(".")[0])
                if home is not None and not module.startswith(home + "."):
                    wrong.append(f"{module} imports {name}")
    assert wrong == []


def test_no_import_cycle() -> None:
    """Packages count as the modules in them (``agent.memory`` importing ``agent.memory.gate`` is no cycle)."""
    edges = graph()
    cycles: list[list[str]] = []
    state: dict[str, int] = {}  # 1 on the path, 2 done

    def visit(module: str, path: list[str]) -> None:
        state[module] = 1
        for target in sorted(edges[module]):
            if module.startswith(target + ".") or target.startswith(module + "."):
                continue  # a package and its own modules
            if state.get(target) == 1:
                cycles.append([*path[path.index(target):], target])
            elif target not in state:
                visit(target, [*path, target])
        state[module] = 2

    for module in sorted(edges):
        if module not in state:
            visit(module, [module])
    assert cycles == []


def test_reindex_is_a_command(local_embedder: LocalEmbedder) -> None:
    """`agent memories reindex`, which the README and the refusal of an embedder switch name, runs."""
    service = open_memory(load_settings(), local_embedder)
    service.remember("I keep bees on the roof")
    service.ledger.close()
    forget_clients()
    result = invoke("memories", "reindex", "--embedder", "local")
    assert (result.returncode, result.stderr) == (0, "")
    assert result.stdout == f"re-embedded 1 memory with local ({local_embedder.model})\n"
    listed = invoke("memories", "search", "bees")
    assert "I keep bees on the roof" in listed.stdout
