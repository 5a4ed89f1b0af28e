"""A start looks for unfinished forgets in the ledger before the first prompt without checking the whole file
(issue 22): ``quick_check`` reads every page, 0.3 s at 100,000 memories, for a few rows. The memory's own open
still checks it, and reports damage as before."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent import wiring
from agent.adapters.ledger import SqliteLedger
from agent.app.data_dir import ensure_data_dir
from agent.config import load_settings
from agent.errors import StoreCorrupt
from tests.builders import record


def damaged_far_in(path: Path) -> None:
    """Garbage over a page three quarters into the file: the memories' rows, far from the schema."""
    page = 4096
    at = (path.stat().st_size // page) * 3 // 4 * page
    with path.open("r+b") as handle:
        handle.seek(at)
        handle.write(b"\xa5" * page)


def test_the_look_for_unfinished_forgets_does_not_read_every_page(tmp_path: Path) -> None:
    settings = load_settings({"data_dir": tmp_path / "data"})
    paths = ensure_data_dir(settings.data_dir)
    ledger = SqliteLedger(paths.ledger)
    ledger.put([record(f"a note of some length to fill the pages, number {n} " * 4) for n in range(800)])
    ledger.close()
    damaged_far_in(paths.ledger)
    with pytest.raises(StoreCorrupt):
        SqliteLedger(paths.ledger)  # the memory's own open checks every page
    peek = wiring.existing_ledger(settings, paths)
    assert peek is not None and peek.pending_forgets() == []
    peek.close()
