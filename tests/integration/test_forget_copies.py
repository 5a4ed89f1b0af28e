"""Forget reaches what the store keeps beside itself: a forgotten memory's id leaves Chroma's files (an id is the
sha256 of the user and the text, so a leftover one confirms a guessed sentence to anyone who can read the files),
copies of the index set aside or backed up are deleted when they hold it, and a damaged ledger set aside, which
forget cannot rewrite, is named."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agent.adapters.chroma_index import forget_clients
from agent.cli import app

pytestmark = pytest.mark.usefixtures("model_cache")

SECRET = "I hide my spare key under the CANARY-Zq81x flowerpot"
OTHERS = ("I keep bees on my roof in Lisbon", "My sister is called Agnes")


def holding(root: Path, needle: str) -> list[str]:
    """Every file under ``root`` whose raw bytes hold ``needle`` (case-insensitive), relative to ``root``."""
    wanted = needle.lower().encode()
    return sorted(str(f.relative_to(root)) for f in root.rglob("*")
                  if f.is_file() and not f.is_symlink() and wanted in f.read_bytes().lower())


def add(runner: CliRunner, text: str) -> str:
    added = runner.invoke(app, ["memories", "add", text])
    assert added.exit_code == 0, added.output
    listed = runner.invoke(app, ["memories", "list", "--json"])
    return next(line.split('"')[3] for line in listed.stdout.splitlines()
                if '"id"' in line and line.split('"')[3].startswith(added.stdout.split()[1].rstrip(":")))


def test_a_forgotten_id_leaves_the_files_of_chroma_at_forget_and_all_of_them_with_forget_all(tmp_path: Path) -> None:
    data, runner = tmp_path / "data", CliRunner()
    secret, *others = (add(runner, text) for text in (SECRET, *OTHERS))
    forget_clients()
    assert holding(data / "chroma", secret), "the id is in Chroma's files while the memory lives"

    assert runner.invoke(app, ["memories", "forget", secret[:8]]).exit_code == 0
    assert set(holding(data, secret)) <= {"chroma/chroma.sqlite3"}, "only free pages, until Chroma lets go of it"
    forget_clients()  # what the agent does when it exits: chroma.sqlite3 is vacuumed
    assert holding(data, secret) == [] and holding(data, "canary") == []
    assert all(holding(data / "chroma", other) for other in others), "the others are still indexed"

    assert runner.invoke(app, ["memories", "forget", "--all", "--yes"]).exit_code == 0
    forget_clients()
    assert [holding(data, memory_id) for memory_id in others] == [[], []]


def test_copies_of_the_index_that_hold_the_memory_are_deleted_and_a_set_aside_ledger_is_named(tmp_path: Path) -> None:
    data, runner = tmp_path / "data", CliRunner()
    add(runner, OTHERS[0])
    forget_clients()
    shutil.copytree(data / "chroma", data / "chroma.corrupt-20260101-090000")  # made before the secret was said
    secret = add(runner, SECRET)
    forget_clients()
    shutil.copytree(data / "chroma", data / "chroma.corrupt-20260102-100000")
    shutil.copytree(data / "chroma", data / "chroma.backup-1.5.8-20260102-100500")
    for side in ("", "-wal"):  # as a damaged ledger is moved aside: with its write-ahead log
        shutil.copy(data / f"ledger.sqlite3{side}", data / f"ledger.sqlite3.corrupt-20260102-101000{side}")

    forgot = runner.invoke(app, ["memories", "forget", secret[:8]])

    assert forgot.exit_code == 0, forgot.output
    assert forgot.stdout.splitlines() == [
        f"forgot 1 memory: {SECRET}",
        "Deleted 1 copy of the index set aside, which held their vectors (chroma.backup-1.5.8-20260102-100500); the "
        "ledger rebuilds everything else they had.",
        "A damaged ledger set aside still holds their text (ledger.sqlite3.corrupt-20260102-101000): forget cannot "
        "rewrite a damaged file, so delete it once you have recovered what you need from it."]
    # The damaged copies went already when the store opened with its index whole (at most one is kept, until then).
    assert sorted(p.name for p in data.glob("chroma.*")) == ["chroma.lock"]
    forget_clients()
    for needle in (secret, "canary"):  # in the copy or in its log
        names = {name.removesuffix("-wal") for name in holding(data, needle)}
        assert names == {"ledger.sqlite3.corrupt-20260102-101000"}
