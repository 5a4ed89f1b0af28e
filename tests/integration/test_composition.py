"""No module imports itself back, and the command line reaches every command it documents. The rest of the
package's shape (layers, who builds adapters, leaves) is held by import-linter's contracts in pyproject.toml, which
`make test` checks with `lint-imports`; their cycle contract is between sibling packages, so the cycles between
modules are checked here on the same import graph."""

from __future__ import annotations

import grimp

from agent.adapters.chroma_index import forget_clients
from agent.adapters.local_embedder import LocalEmbedder
from agent.config import load_settings
from agent.wiring import open_memory
from tests.cli_harness import invoke


def test_no_import_cycle_between_modules() -> None:
    """Imports inside functions count; a package and its own modules are no cycle."""
    graph = grimp.build_graph("agent", cache_dir=None)
    state: dict[str, int] = {}  # 1 on the path, 2 done
    cycles: list[list[str]] = []

    def visit(module: str, path: list[str]) -> None:
        state[module] = 1
        for target in sorted(graph.find_modules_directly_imported_by(module)):
            if module.startswith(target + ".") or target.startswith(module + "."):
                continue
            if state.get(target) == 1:
                cycles.append([*path[path.index(target):], target])
            elif target not in state:
                visit(target, [*path, target])
        state[module] = 2

    for module in sorted(graph.modules):
        if module not in state:
            visit(module, [module])
    assert cycles == []


def test_reindex_is_a_command(local_embedder: LocalEmbedder) -> None:
    """`agent memories reindex`, which the README and the refusal of an embedder switch name, runs."""
    service = open_memory(load_settings(), local_embedder)
    service.remember("I keep bees on the roof")
    service.close()
    forget_clients()
    result = invoke("memories", "reindex", "--embedder", "local")
    assert (result.returncode, result.stderr) == (0, "")
    assert result.stdout == f"re-embedded 1 memory with local ({local_embedder.model})\n"
    listed = invoke("memories", "search", "bees")
    assert "I keep bees on the roof" in listed.stdout
