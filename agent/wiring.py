"""The one place that builds adapters from settings and hands them to the core.

Everything else receives its collaborators through constructors, so tests build the same objects around fakes.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from agent.config import Settings
from agent.errors import ConfigError
from agent.memory.retriever import FusionWeights
from agent.memory.service import Extractor, MemoryPolicy, MemoryService
from agent.ports import Embedder


@dataclass(frozen=True)
class DataPaths:
    """Where everything of one data directory lives."""

    root: Path

    @property
    def ledger(self) -> Path:
        return self.root / "ledger.sqlite3"

    @property
    def chroma(self) -> Path:
        return self.root / "chroma"

    @property
    def sessions(self) -> Path:
        return self.root / "sessions"

    @property
    def history(self) -> Path:
        return self.root / "history"


def ensure_data_dir(root: Path) -> DataPaths:
    """Create the data directory (0700: it holds personal data) and return its paths."""
    try:
        root.mkdir(mode=0o700, parents=True, exist_ok=True)
        os.chmod(root, 0o700)
    except OSError as exc:
        raise ConfigError(f"The data directory {root} cannot be created or used ({exc.strerror}): "
                          "set AGENT_DATA_DIR or --data-dir to a writable directory.") from exc
    return DataPaths(root)


def build_embedder(kind: str, settings: Settings) -> Embedder:
    """The embedder called ``kind`` (``local`` or ``openai``), configured from settings."""
    if kind == "local":
        from agent.adapters.local_embedder import LocalEmbedder

        return LocalEmbedder(settings.local_model_dir)
    if kind == "openai":
        from agent.adapters.openai_client import make_client
        from agent.adapters.openai_embedder import OpenAIEmbedder

        return OpenAIEmbedder(make_client(settings), settings.embedding_model)
    raise ConfigError(f"Unknown embedder {kind!r}: use local or openai.")


def memory_policy(settings: Settings, weights: FusionWeights | None = None) -> MemoryPolicy:
    return MemoryPolicy(
        k=settings.memory_k,
        threshold=settings.memory_threshold,
        budget_tokens=settings.memory_tokens,
        capacity=settings.memory_capacity,
        writes_per_session=settings.memory_writes_per_session,
        grounding_threshold=settings.grounding_threshold,
        weights=weights or FusionWeights(),
    )


def open_memory(
    settings: Settings,
    embedder: str | None = None,
    extractor: Extractor | None = None,
    check: bool = True,
) -> MemoryService:
    """The memory service of ``settings.user`` in the configured data directory (or Chroma server).

    ``embedder`` is an explicit request (``--embedder``); without one, an explicit ``AGENT_EMBEDDER`` counts as
    a request, and otherwise the store keeps the embedder it was built with. A request that differs from the
    store's is refused by ``check_space`` unless ``check`` is False (``reindex`` re-embeds on purpose).
    """
    from agent.adapters.chroma_index import ChromaIndex, open_client
    from agent.adapters.ledger import SqliteLedger

    paths = ensure_data_dir(settings.data_dir)
    ledger = SqliteLedger(paths.ledger)
    client = open_client(None if settings.chroma_url else paths.chroma, settings.chroma_url)
    index = ChromaIndex(client, settings.user, settings.chroma_url or str(paths.chroma))
    requested = embedder or (settings.embedder if settings.embedder != "auto" else None)
    recorded = index.space()
    kind = requested or (recorded[0] if recorded else settings.resolved_embedder)
    service = MemoryService(
        ledger, index, build_embedder(kind, settings), settings.user, memory_policy(settings), extractor
    )
    if check:
        service.check_space()
    return service
