"""What ``agent memories stats`` shows: counts by kind, the embedder, the threshold, and where the memory lives."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agent.app.data_dir import ensure_data_dir
from agent.config import Settings, without_password

if TYPE_CHECKING:
    from agent.memory.service import MemoryService


def stats(service: MemoryService, settings: Settings) -> dict[str, Any]:
    """The figures, keyed as ``--json`` prints them; ``kinds`` counts the memories (current and replaced) by kind."""
    records = service.list()
    kinds: dict[str, int] = {}
    for record in records:
        kinds[record.kind] = kinds.get(record.kind, 0) + 1
    paths = ensure_data_dir(settings.data_dir)
    root = paths.root
    size = sum(p.stat().st_size for p in root.rglob("*") if p.is_file())
    # Where the memory lives: on a shared deployment, not in the data directory whose size is shown.
    ledger = f"PostgreSQL {without_password(settings.database_url)}" if settings.database_url else str(paths.ledger)
    index = f"Chroma server {settings.chroma_url}" if settings.chroma_url else str(paths.chroma)
    return {
        "user": service.user,
        "memories": len(records),
        "kinds": kinds,
        "indexed": service.indexed(),
        "embedder": service.embedder.name,
        "embedding_model": service.embedder.model,
        "dimension": service.embedder.dimension,
        "threshold": service.threshold,
        "capacity": service.policy.capacity,
        "ledger": ledger,
        "index": index,
        "data_dir": str(root),
        "bytes_on_disk": size,
    }
