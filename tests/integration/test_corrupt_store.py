"""Checklist cases 4, 5, 6 and 8: damaged index files, a damaged ledger, rebuild, and chromadb version changes.

Damage is found when the store opens (not at the first search of a chat), the damaged files are moved aside byte
for byte as they were, and the user reads one line saying so. A damaged index is rebuilt at once from the ledger's
copies of the vectors, so memory stays available; a damaged ledger leaves the chat without memory.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from agent import wiring
from agent.adapters import chroma_files, mirrored_index
from agent.adapters.chroma_files import VERSION_FILE, installed_chromadb
from agent.adapters.chroma_index import forget_clients
from agent.adapters.local_embedder import LocalEmbedder
from agent.errors import DiskFull, MemoryUnavailable, StoreCorrupt
from tests.builders import add_all
from tests.cli_harness import invoke
from tests.helpers_store import ShaEmbedder, index_of, open_fake_memory, open_memory_with, text_for, vectors_of

pytestmark = pytest.mark.usefixtures("model_cache")

N = 64  # one write of SAVE_EVERY: the HNSW files hold them all (a smaller one waits in Chroma's write log)
TEXTS = ["I grow tomatoes on my balcony", "My sister lives in Lisbon", "I am allergic to penicillin"]
Damage = Callable[[Path], None]


def segment(chroma: Path) -> Path:
    """The HNSW segment directory of the one collection in ``chroma``."""
    [found] = [p for p in chroma.iterdir() if p.is_dir()]
    return found


def overwrite(path: Path, offset: int, length: int) -> None:
    with path.open("r+b") as handle:
        handle.seek(offset)
        handle.write(os.urandom(length))


DAMAGE: dict[str, Damage] = {
    "data_level0.bin truncated": lambda c: os.truncate(segment(c) / "data_level0.bin", 1000),
    "header.bin zeroed": lambda c: (segment(c) / "header.bin").write_bytes(bytes(100)),
    "index_metadata.pickle garbage": lambda c: (segment(c) / "index_metadata.pickle").write_bytes(os.urandom(900)),
    "HNSW segment lost": lambda c: shutil.rmtree(segment(c)),
    "chroma.sqlite3 empty": lambda c: os.truncate(c / "chroma.sqlite3", 0),
    "chroma.sqlite3 pages overwritten": lambda c: [overwrite(c / "chroma.sqlite3", 4096 * k, 4096) for k in (1, 3, 5)],
    "chroma.sqlite3 header garbage": lambda c: overwrite(c / "chroma.sqlite3", 0, 100),
}

# Damage Chroma cannot meet without crashing or misreading is caught before it opens the files; these two only a
# search finds, after Chroma has opened (and written its bookkeeping into) the store.
FOUND_BY_SEARCHING = {"HNSW segment lost"}


def seed(n: int = N) -> dict[str, str]:
    """``n`` memories written with the sha embedder, then the store closed, as a process that ends leaves it (the
    ledger's write-ahead log checkpointed into its file); returns id -> text."""
    memory = open_fake_memory()
    stored = add_all(memory, [text_for("seed", i) for i in range(n)])
    forget_clients()
    memory.close()
    return stored


def snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def assert_recalls(stored: dict[str, str]) -> None:
    memory = open_fake_memory()
    assert memory.count() == memory.indexed() == len(stored)
    embedder = ShaEmbedder()
    for mid, text in stored.items():
        assert vectors_of(memory).query(embedder.embed([text])[0], 1)[0].id == mid


@pytest.mark.parametrize("damage", list(DAMAGE), ids=list(DAMAGE))
def test_a_damaged_index_is_moved_aside_as_it_was_and_rebuilt_from_the_ledger(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, damage: str
) -> None:
    stored = seed()
    chroma = tmp_path / "data" / "chroma"
    DAMAGE[damage](chroma)
    damaged = snapshot(chroma)
    embedded: list[int] = []
    real_embed = ShaEmbedder.embed

    def counted(self: ShaEmbedder, texts: list[str]) -> list[list[float]]:
        embedded.append(len(texts))
        return real_embed(self, texts)

    monkeypatch.setattr(ShaEmbedder, "embed", counted)

    set_aside: dict[Path, dict[str, bytes]] = {}
    real_drop = wiring.drop_set_aside_indexes

    def drop(chroma_dir: Path) -> list[Path]:
        set_aside.update((p, snapshot(p)) for p in mirrored_index.set_aside_indexes(chroma_dir))
        return real_drop(chroma_dir)

    monkeypatch.setattr(wiring, "drop_set_aside_indexes", drop)
    notices: list[str] = []
    open_fake_memory(notices.append)

    [(moved, kept)] = set_aside.items()
    if damage in FOUND_BY_SEARCHING:
        assert set(kept) >= set(damaged), "Chroma itself wrote to the store before the probe found it"
    else:
        assert kept == damaged, "the damaged store was set aside byte for byte"
    assert not moved.exists(), "and removed once the index was whole again"
    [line] = notices
    assert "\n" not in line and f"moved aside to {moved}" in line and "rebuilt from the ledger" in line
    assert embedded == [], "the index came back from the ledger's copies, without embedding"
    forget_clients()
    assert_recalls(stored)


def test_a_rust_panic_while_opening_is_caught_as_damage(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    stored = seed()
    overwrite(tmp_path / "data" / "chroma" / "chroma.sqlite3", 4096, 4096)
    monkeypatch.setattr(chroma_files, "check_sqlite", lambda chroma_dir: None)  # let Chroma meet the damage
    notices: list[str] = []
    open_fake_memory(notices.append)
    assert "cannot be opened" in notices[0] and "moved aside" in notices[0]
    forget_clients()
    assert_recalls(stored)


def test_damage_met_mid_session_is_one_line_and_the_next_start_sets_it_right(tmp_path: Path) -> None:
    from chromadb.errors import InternalError

    stored = seed()
    memory = open_fake_memory()

    def damaged(**_: object) -> None:
        raise InternalError("Error executing plan: Internal error: Error finding id")

    with pytest.MonkeyPatch.context() as patch, pytest.raises(MemoryUnavailable) as failed:
        patch.setattr(index_of(memory)._get(), "query", damaged)
        memory.search(text_for("seed", 0))
    assert "\n" not in str(failed.value) and "agent memories rebuild" in str(failed.value)
    forget_clients()
    os.truncate(segment(tmp_path / "data" / "chroma") / "data_level0.bin", 1000)  # the damage behind that error
    notices: list[str] = []
    open_fake_memory(notices.append)
    assert len(notices) == 1 and "moved aside" in notices[0]
    forget_clients()
    assert_recalls(stored)


def seed_local(embedder: LocalEmbedder, texts: list[str]) -> set[str]:
    """Memories written in-process with the real model (loaded once per run), then the store closed."""
    memory = open_memory_with(embedder)
    ids = {memory.add(text).id for text in texts}
    forget_clients()
    return ids


def test_rebuild_re_embeds_every_memory_of_a_damaged_index_from_the_ledger(
    tmp_path: Path, local_embedder: LocalEmbedder
) -> None:
    ids = seed_local(local_embedder, TEXTS)
    DAMAGE["index_metadata.pickle garbage"](tmp_path / "data" / "chroma")
    rebuilt = invoke("memories", "rebuild")
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert "moved aside to" in rebuilt.stderr and "rebuilt the index: 3 memories" in rebuilt.stdout
    memory = open_memory_with(local_embedder)
    assert memory.count() == memory.indexed() == 3
    found = memory.search("who lives in Portugal?", 3)
    assert {m.record.id for m in found} == ids
    assert found[0].record.text == "My sister lives in Lisbon"


@pytest.mark.parametrize("damage", ["garbage pages", "not a database"])
def test_a_damaged_ledger_is_moved_aside_named_and_never_overwritten(tmp_path: Path, damage: str) -> None:
    seed(5)
    ledger = tmp_path / "data" / "ledger.sqlite3"
    if damage == "garbage pages":
        overwrite(ledger, 4096, 3 * 4096)
    else:
        overwrite(ledger, 0, 100)
    damaged = ledger.read_bytes()

    with pytest.raises(StoreCorrupt) as failed:
        open_fake_memory()
    [moved] = list((tmp_path / "data").glob("ledger.sqlite3.corrupt-*"))
    message = str(failed.value)
    assert "\n" not in message and str(ledger) in message and f"moved aside to {moved}" in message
    assert moved.read_bytes() == damaged
    assert not ledger.exists()

    notices: list[str] = []
    assert open_fake_memory(notices.append).count() == 0, "the next start begins with a new ledger"
    assert notices == ["Dropped 5 vectors from the index whose memory is not in the ledger (a forget or an "
                       "eviction cut short, or a ledger replaced after damage)."]
    assert moved.read_bytes() == damaged, "and leaves the damaged one alone"


def test_a_store_of_a_newer_chromadb_is_refused_untouched_and_rebuild_sets_it_aside(
    tmp_path: Path, local_embedder: LocalEmbedder
) -> None:
    seed_local(local_embedder, TEXTS)
    chroma = tmp_path / "data" / "chroma"
    (chroma / VERSION_FILE).write_text(json.dumps({"chromadb": "9.0.0"}))
    before = snapshot(chroma)

    refused = invoke("memories", "search", "tomatoes")
    assert refused.returncode == 1
    assert f"written by chromadb 9.0.0, newer than the installed {installed_chromadb()}" in refused.stderr
    assert snapshot(chroma) == before

    rebuilt = invoke("memories", "rebuild")
    assert rebuilt.returncode == 0, rebuilt.stderr
    [moved] = list((tmp_path / "data").glob("chroma.corrupt-*"))
    assert f"moved the damaged index aside to {moved}" in rebuilt.stdout
    assert snapshot(moved) == before
    assert json.loads((chroma / VERSION_FILE).read_text()) == {"chromadb": installed_chromadb()}
    assert open_memory_with(local_embedder).search("tomatoes", 1)[0].record.text == "I grow tomatoes on my balcony"


@pytest.mark.parametrize("recorded", ["1.5.0", None], ids=["older", "unrecorded"])
def test_a_store_of_an_older_chromadb_is_copied_aside_before_it_migrates(tmp_path: Path, recorded: str | None) -> None:
    stored = seed(5)
    chroma = tmp_path / "data" / "chroma"
    sidecar = chroma / VERSION_FILE
    if recorded:
        sidecar.write_text(json.dumps({"chromadb": recorded}))
    else:
        sidecar.unlink()
    before = snapshot(chroma)

    assert_recalls(stored)
    [backup] = list((tmp_path / "data").glob(f"chroma.backup-{recorded or 'unknown'}-*"))
    assert snapshot(backup) == before
    assert json.loads(sidecar.read_text()) == {"chromadb": installed_chromadb()}
    assert sidecar.stat().st_mode & 0o777 == 0o600


def test_the_ledger_keeps_the_embedder_when_the_index_is_lost(tmp_path: Path, local_embedder: LocalEmbedder) -> None:
    seed_local(local_embedder, ["I can't eat peanuts"])
    shutil.rmtree(tmp_path / "data" / "chroma")
    switched = invoke("memories", "list", "--embedder", "openai", env={"OPENAI_BASE_URL": "http://127.0.0.1:9/v1"})
    assert switched.returncode == 1
    line = switched.stderr.strip()
    assert "\n" not in line and "Traceback" not in line
    assert "built with local (all-MiniLM-L6-v2-int8, 384 dimensions)" in line
    assert "agent memories reindex --embedder openai" in line
    kept = invoke("memories", "search", "peanuts", "--json")
    assert kept.returncode == 0 and "peanuts" in kept.stdout, "without a request the store keeps its own embedder"


def test_a_missing_local_model_names_the_path_and_the_setting_at_once(tmp_path: Path) -> None:
    empty = tmp_path / "no-model"
    empty.mkdir()
    failed = invoke("memories", "add", "I can't eat peanuts", env={"AGENT_LOCAL_MODEL_DIR": str(empty)})
    assert failed.returncode == 1
    line = failed.stderr.strip()
    assert "\n" not in line and "Traceback" not in line
    assert str(empty / "model.onnx") in line and "AGENT_LOCAL_MODEL_DIR" in line


def test_a_missing_packaged_model_says_how_to_get_it_back(monkeypatch: pytest.MonkeyPatch) -> None:
    from agent.adapters import local_embedder
    from agent.errors import EmbeddingError

    monkeypatch.setattr(local_embedder, "_package_dir", lambda package: None)
    with pytest.raises(EmbeddingError, match="AGENT_LOCAL_MODEL_DIR"):
        local_embedder.LocalEmbedder().embed(["hello"])


def test_a_ledger_written_by_a_newer_agent_is_refused_not_downgraded(tmp_path: Path) -> None:
    seed(1)
    ledger = tmp_path / "data" / "ledger.sqlite3"
    with sqlite3.connect(ledger) as db:
        db.execute("PRAGMA user_version = 99")
    with pytest.raises(MemoryUnavailable, match="written by a newer version of agent"):
        open_fake_memory()
    with sqlite3.connect(ledger) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == 99


def test_a_version_backup_that_cannot_be_written_stops_the_open_before_any_migration(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seed(3)
    chroma = tmp_path / "data" / "chroma"
    (chroma / VERSION_FILE).write_text(json.dumps({"chromadb": "1.5.0"}))
    before = snapshot(chroma)

    def disk_full(source: Path, target: Path) -> None:
        raise OSError(errno.ENOSPC, "No space left on device", str(target))

    monkeypatch.setattr(chroma_files.shutil, "copytree", disk_full)
    full = "cannot be prepared: the disk holding .* is full \\(No space left on device"
    with pytest.raises(DiskFull, match=full) as failed:
        open_fake_memory()
    assert "\n" not in str(failed.value)
    assert snapshot(chroma) == before, "chromadb never opened, so never migrated, the store it could not back up"
