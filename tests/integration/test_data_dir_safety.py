"""A data directory is the agent's own: an existing directory that is not a store is refused and left exactly as it
was, an empty one becomes a store, a store of an older version (no marker) still opens, and only the agent's own
entries are tightened, never through a symlink.

Before, ``--data-dir .``, ``--data-dir "$UNSET"``, ``AGENT_DATA_DIR=$HOME`` or any project directory had every
mode below it rewritten from 755/644 to 700/600, and became a store.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agent.app.data_dir import MARKER, ensure_data_dir
from agent.errors import ConfigError, UsageError
from tests.cli_harness import invoke
from tests.e2e_helpers import agent_env
from tests.fake_openai import FakeOpenAI, Reply

pytestmark = pytest.mark.usefixtures("model_cache")


def modes(root: Path) -> dict[str, int]:
    """The mode of ``root`` and of everything under it, by path relative to it (symlinks not followed)."""
    return {str(p.relative_to(root)): stat.S_IMODE(p.lstat().st_mode) for p in (root, *root.rglob("*"))}


def make_project(root: Path) -> dict[str, int]:
    """A project directory as people have them: 755 directories, 644 files, an executable; its modes."""
    (root / "src" / "pkg").mkdir(parents=True)
    (root / "README.md").write_text("# my project\n")
    (root / "src" / "pkg" / "main.py").write_text("print('hi')\n")
    (root / "run.sh").write_text("#!/bin/sh\n")
    for path in (root, root / "src", root / "src" / "pkg"):
        path.chmod(0o755)
    for path in (root / "README.md", root / "src" / "pkg" / "main.py"):
        path.chmod(0o644)
    (root / "run.sh").chmod(0o755)
    return modes(root)


def test_a_directory_holding_other_files_is_refused_and_left_as_it_was(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    before = make_project(project)
    with pytest.raises(UsageError, match="already holds files that are not agent's") as caught:
        ensure_data_dir(project)
    assert "\n" not in str(caught.value) and caught.value.exit_code == 2
    assert modes(project) == before
    assert not (project / MARKER).exists()


def test_a_new_or_empty_directory_becomes_a_private_store_with_a_marker(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir(mode=0o755)
    for root in (tmp_path / "new" / "store", empty):
        paths = ensure_data_dir(root)
        assert paths.root == root
        assert stat.S_IMODE(root.stat().st_mode) == 0o700
        assert stat.S_IMODE((root / MARKER).stat().st_mode) == 0o600
        ensure_data_dir(root)  # and it opens again


@pytest.mark.parametrize("name", [".gitkeep", ".DS_Store"])
def test_the_checkouts_gitkeep_does_not_make_a_directory_foreign(tmp_path: Path, name: str) -> None:
    root = tmp_path / "agent_memory_db"
    root.mkdir()
    (root / name).write_text("")
    ensure_data_dir(root)
    assert (root / MARKER).is_file()


@pytest.mark.parametrize("entries", [
    ["ledger.sqlite3", "notes.txt"],  # a ledger makes a store, whatever else is beside it
    ["sessions/", "history"],
    ["chroma/", "chroma.lock", "ledger.sqlite3-wal", "chroma.corrupt-20260101-120000/", "chroma.backup-1.5.9-x/"],
])
def test_a_store_of_an_older_version_without_a_marker_is_recognised(tmp_path: Path, entries: list[str]) -> None:
    root = tmp_path / "old"
    root.mkdir(mode=0o755)
    for entry in entries:
        path = root / entry.rstrip("/")
        path.mkdir() if entry.endswith("/") else path.write_text("x")
        path.chmod(0o755 if entry.endswith("/") else 0o644)
    ensure_data_dir(root)
    assert (root / MARKER).is_file()
    left = {name: mode for name, mode in modes(root).items() if mode & 0o077}
    assert left == ({"notes.txt": 0o644} if "notes.txt" in entries else {}), "only the agent's own are tightened"


def test_tightening_never_follows_a_symlink(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir(mode=0o755)
    (outside / "file.txt").write_text("x")
    (outside / "file.txt").chmod(0o644)
    root = tmp_path / "store"
    ensure_data_dir(root)
    (root / "sessions").mkdir()
    (root / "sessions" / "linked").symlink_to(outside)
    (root / "history").symlink_to(outside / "file.txt")
    before = modes(outside)
    ensure_data_dir(root)
    assert modes(outside) == before


def test_a_store_of_an_older_version_that_refuses_the_marker_still_opens(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "old"
    (root / "sessions").mkdir(parents=True)
    real_open = os.open

    def read_only(path: str | os.PathLike[str], flags: int, mode: int = 0o777) -> int:
        if Path(path).name == MARKER:
            raise PermissionError(13, "Permission denied")
        return real_open(path, flags, mode)

    monkeypatch.setattr(os, "open", read_only)
    assert ensure_data_dir(root).sessions == root / "sessions"
    assert not (root / MARKER).exists()
    with pytest.raises(ConfigError, match="cannot be created or used"):
        ensure_data_dir(tmp_path / "new")  # but a directory it makes a store must get one


# -- through the real process -------------------------------------------------------------------------------


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(fallback=Reply("Noted.")) as server:
        yield server


@pytest.mark.slow
@pytest.mark.parametrize("args", [("memories", "list"), ("sessions", "list"), ("-s", "work"), ("config",)],
                         ids=" ".join)
def test_a_project_directory_or_dot_as_data_dir_is_refused_and_its_modes_unchanged(
    fake: FakeOpenAI, tmp_path: Path, args: tuple[str, ...]
) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    before = make_project(project)
    env = agent_env(fake, AGENT_DATA_DIR=str(project))
    results = [invoke("--lines", *args, stdin="Hello\n", env=env)]
    os.chdir(project)  # `--data-dir .` from inside it
    results.append(invoke("--lines", "--data-dir", ".", *args, stdin="Hello\n", env=env))
    for result in results:
        if args == ("config",):  # config opens nothing: it shows the setting
            assert result.returncode == 0, result.stderr
            continue
        assert result.returncode == 2, result.stderr
        [line] = result.stderr.splitlines()
        assert line.startswith("agent: The data directory ") and "already holds files that are not agent's" in line
    assert modes(project) == before
    assert fake.requests == []


@pytest.mark.slow
def test_home_as_data_dir_is_refused(fake: FakeOpenAI, tmp_path: Path) -> None:
    home = Path(os.environ["HOME"])
    (home / ".bashrc").write_text("# mine\n")
    (home / ".bashrc").chmod(0o644)
    home.chmod(0o755)
    before = modes(home)
    result = invoke("memories", "list", env=agent_env(fake, AGENT_DATA_DIR="~"))
    assert result.returncode == 2 and "already holds files that are not agent's" in result.stderr
    assert modes(home) == before


@pytest.mark.slow
def test_an_empty_directory_becomes_a_store_and_an_old_store_still_opens(fake: FakeOpenAI, tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir(mode=0o755)
    env = agent_env(fake, AGENT_DATA_DIR=str(empty))
    added = invoke("memories", "add", "I keep bees on my roof in Lisbon", env=env)
    assert added.returncode == 0, added.stderr
    assert stat.S_IMODE(empty.stat().st_mode) == 0o700 and (empty / MARKER).is_file()

    (empty / MARKER).unlink()  # as a store made by an older version looks
    listed = invoke("memories", "list", "--json", env=env)
    assert listed.returncode == 0, listed.stderr
    assert "bees on my roof" in listed.stdout
    assert (empty / MARKER).is_file()


def test_two_agents_making_the_same_new_store_at_once_both_use_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Both saw no directory (and no marker) and both made it: the second one's mkdir and marker found the first
    one's. Before, the second said "cannot be created or used (File exists)"."""
    root = tmp_path / "new"
    ensure_data_dir(root)  # the first agent made the store
    is_dir, exists = Path.is_dir, Path.exists
    seen: set[Path] = set()

    def once(real: Any, path: Path) -> bool:  # the second saw nothing, once, just before the first made it
        if path in (root, root / MARKER) and path not in seen:
            seen.add(path)
            return False
        return bool(real(path))

    monkeypatch.setattr(Path, "is_dir", lambda self: once(is_dir, self))
    monkeypatch.setattr(Path, "exists", lambda self: once(exists, self))
    assert ensure_data_dir(root).root == root
    assert seen == {root, root / MARKER}, "both races were taken"
