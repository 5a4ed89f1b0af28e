"""Export and import, the use cases of ``agent memories export`` and ``import``: the memories of the user as JSON
Lines objects (lossless, what import reads) or as Markdown for a person, and an export's memories added back.

The formats and the import's checks are the memory's own (``agent.memory.transfer``); this module is what a front
end calls, so it imports no policy. Rendering (escaping for a terminal, the JSON text) stays with the front end.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from agent.errors import AgentError
from agent.memory import transfer

if TYPE_CHECKING:
    from agent.memory.service import MemoryService
    from agent.memory.transfer import ImportReport

FORMATS = transfer.FORMATS  # what ``export --format`` takes: jsonl, markdown


def portable(service: MemoryService) -> list[dict[str, Any]]:
    """Every memory of the user as the plain object a JSON Lines export holds for it, oldest first."""
    return [transfer.portable(record) for record in service.list()]


def markdown(service: MemoryService, now: float) -> tuple[int, str]:
    """How many memories the user has, and all of them as a Markdown page dated ``now``."""
    records = service.list()
    return len(records), transfer.markdown(records, service.user, now)


def import_export(service: MemoryService, stream: BinaryIO, name: str, scratch_dir: Path) -> ImportReport:
    """Add the memories of the export ``stream`` (called ``name`` in what is refused), embedded with the store's
    embedder; ones already stored are refreshed. The memories read wait in a private, nameless file in
    ``scratch_dir`` (gone with the process) until they are written, so a large export is never held in memory."""
    try:
        scratch = tempfile.TemporaryFile(dir=scratch_dir, prefix=".import-")
    except OSError as exc:
        raise AgentError(f"The import could not make its private copy in {scratch_dir} ({exc.strerror}); nothing "
                         "was imported.") from exc
    with scratch:
        return transfer.import_stream(service, stream, name, scratch)
