"""The command line reaches every command it documents. The package's shape (layers, who builds adapters, no
cycle) is held by import-linter's contracts in pyproject.toml, which `make test` checks with `lint-imports`."""

from __future__ import annotations

from agent.adapters.chroma_index import forget_clients
from agent.adapters.local_embedder import LocalEmbedder
from agent.config import load_settings
from agent.wiring import open_memory
from tests.cli_harness import invoke


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
