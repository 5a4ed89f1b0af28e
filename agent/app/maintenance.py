"""Work on a data directory as a whole: rebuild the vector index from the ledger (``agent memories rebuild``), and
finish the forgets a kill or Ctrl-C cut short (every start). What opens or moves an adapter's files comes from
the composition root, passed in (``Root``): the app imports no adapter, and the root, which builds the app's chat,
is not imported back."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from agent.app.data_dir import DataPaths, machine_of, places_of
from agent.config import EmbedderKind, Settings
from agent.errors import AgentError
from agent.forget import finish_cut_short
from agent.ports import Embedder, Ledger, Notify

if TYPE_CHECKING:
    from agent.memory.service import MemoryService

log = logging.getLogger(__name__)


class Root(Protocol):
    """The composition root's steps this module takes: the ``agent.wiring`` module itself is one."""

    def open_memory(self, settings: Settings, embedder: EmbedderKind | Embedder | None = None, *,
                    check: bool = True) -> MemoryService: ...

    def set_aside_newer_index(self, settings: Settings) -> Path | None: ...

    def drop_index_copies(self, settings: Settings) -> None: ...

    def existing_ledger(self, settings: Settings, paths: DataPaths) -> Ledger | None: ...


def rebuild_index(
    root: Root, settings: Settings, embedder: EmbedderKind | Embedder | None = None
) -> tuple[int, Path | None]:
    """Re-embed this user's memories from the ledger's text into a fresh index, with ``embedder`` as ``open_memory``
    takes it; returns (memories indexed, where an index written by a newer chromadb went). Opening moves a damaged
    index aside by itself and says so; the newer one, which opening refuses, is moved aside here, as the user asked
    for a new index."""
    moved = root.set_aside_newer_index(settings)
    count = root.open_memory(settings, embedder, check=False).rebuild()
    if moved is None:
        root.drop_index_copies(settings)
    return count, moved


def finish_forgets(root: Root, settings: Settings, paths: DataPaths, notify: Notify, ledger: Ledger | None = None
                   ) -> None:
    """Finish the forgets a kill or Ctrl-C cut short (``agent.forget``): every start of the agent calls this, and
    ``notify`` says what it did in one line. ``ledger`` is the one the caller has open; without it the ledger is
    opened here, if there is one, and one that cannot be opened now is left for the memory commands to report."""
    own = None
    if ledger is None:
        try:
            ledger = own = root.existing_ledger(settings, paths)
        except AgentError as exc:
            log.debug("no forget finished: %s", exc)
            return
        if ledger is None:
            return
    try:
        machine = machine_of(settings, paths)
        line = finish_cut_short(ledger, lambda user: places_of(paths.for_user(user), machine), machine)
    except AgentError as exc:
        line = f"A forget that was cut short could not be finished now ({exc}); the next start tries again."
    finally:
        if own is not None:
            own.close()
    if line:
        notify(line)
