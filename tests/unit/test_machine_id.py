"""This machine's id (``agent.machine``): made once per data directory, the same for every process that asks, even
several at once on a new directory (a second id would be a machine every forget waits for, for ever)."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from agent.errors import ConfigError
from agent.machine import MACHINE_FILE, machine_id


def test_the_id_is_made_once_private_and_kept(tmp_path: Path) -> None:
    root = tmp_path / "data"
    root.mkdir()
    made = machine_id(root)
    assert len(made) == 32 and machine_id(root) == made
    assert os.stat(root / MACHINE_FILE).st_mode & 0o777 == 0o600
    assert [p.name for p in root.iterdir()] == [MACHINE_FILE], "no temp file is left"


def test_processes_asking_at_once_on_a_new_directory_get_one_id(tmp_path: Path) -> None:
    start = threading.Barrier(8)
    ids: list[str] = []

    def ask() -> None:
        start.wait(timeout=60)
        ids.append(machine_id(tmp_path))

    threads = [threading.Thread(target=ask) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert len(ids) == 8 and set(ids) == {(tmp_path / MACHINE_FILE).read_text().strip()}


def test_a_damaged_id_is_one_line_saying_what_to_do(tmp_path: Path) -> None:
    (tmp_path / MACHINE_FILE).write_text("not an id\n")
    with pytest.raises(ConfigError, match="is damaged: delete it"):
        machine_id(tmp_path)
