"""Issue 9 item 6: a full disk is a full disk, not damage; and set-aside copies of the index do not pile up.

Before, each start on a full disk took the index for damaged (`cannot be opened (... database or disk is full). It
was moved aside ...`) and added a `chroma.corrupt-*` and a `chroma.backup-unknown-*` copy (twenty copies, 284 MB on
one store), and the ledger's own disk-full error read `cannot rollback - no transaction is active`. A full disk is
simulated as the other store tests do: files capped with ``RLIMIT_FSIZE`` (SIGXFSZ ignored) in a child process
(forked from a warm interpreter, ``tests.warm_agent``), which makes every write past the cap fail with EFBIG, as
ENOSPC does on a full disk; the starts with room run in-process (``tests.cli_harness``).
"""

from __future__ import annotations

import errno
import json
import os
import sqlite3
from pathlib import Path

import pytest

from agent import wiring
from agent.adapters import chroma_files
from agent.adapters.chroma_files import VERSION_FILE
from agent.adapters.chroma_index import forget_clients
from agent.adapters.local_embedder import LocalEmbedder
from agent.adapters.mirrored_index import RECONCILE_LIMIT
from agent.app.maintenance import rebuild_index
from agent.config import load_settings
from agent.errors import DiskFull
from tests.builders import add_all
from tests.cli_harness import invoke
from tests.helpers_store import ShaEmbedder, ledger_of, open_fake_memory, open_memory_with, text_for
from tests.warm_agent import WarmAgent

TEXTS = ["My sister lives in Lisbon", "I grow tomatoes on my balcony", "I am allergic to penicillin"]


ENV = {"AGENT_EMBEDDER": "local"}


def listing(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.iterdir())


def test_starts_on_a_full_disk_say_so_move_nothing_aside_and_the_next_start_with_room_recalls(
    tmp_path: Path, local_embedder: LocalEmbedder, warm_agent: WarmAgent
) -> None:
    add_all(open_memory_with(local_embedder), TEXTS)
    forget_clients()
    data = tmp_path / "data"
    before = listing(data)

    for limit in (4096, 4096, 1):  # repeated starts; the last cannot grow any file at all
        full = warm_agent.run({**os.environ, **ENV}, "memories", "search", "Where does my sister live?",
                              file_size=limit)
        assert full.returncode == 1
        [line] = full.stderr.splitlines()
        assert line.startswith(f"agent: The memory index at {data / 'chroma'} cannot be opened: the disk holding ")
        assert "is full (File too large;" in line and "nothing was moved aside" in line
        assert "damaged" not in line and "corrupt" not in line
        assert listing(data) == before, "no copy set aside, no backup made"

    found = invoke("memories", "search", "Where does my sister live?", "--json", env=ENV)
    assert found.returncode == 0 and found.stderr == "", found.stderr
    assert json.loads(found.stdout)[0]["text"] == "My sister lives in Lisbon"
    listed = json.loads(invoke("memories", "list", "--json", env=ENV).stdout)
    assert sorted(m["text"] for m in listed) == sorted(TEXTS)
    assert listing(data) == before


def test_a_chat_on_a_full_disk_answers_without_memory_and_names_the_disk(
    tmp_path: Path, local_embedder: LocalEmbedder, warm_agent: WarmAgent
) -> None:
    from tests.fake_openai import FakeOpenAI, Reply

    seeded = open_memory_with(local_embedder)
    add_all(seeded, TEXTS)
    seeded.close()  # now, not whenever a garbage collection frees it: its WAL files go with it
    forget_clients()
    data = tmp_path / "data"
    before = listing(data)
    with FakeOpenAI(fallback=Reply("Noted.")) as fake:
        chat = warm_agent.run({**os.environ, **ENV, "OPENAI_BASE_URL": fake.url}, "-s", "today",
                              stdin="Any snack ideas?\n", file_size=4096)
    assert chat.stdout == "Noted.\n"
    assert "Long-term memory is unavailable" in chat.stderr and "is full (File too large;" in chat.stderr
    assert "Traceback" not in chat.stderr
    assert not [p for p in listing(data) if "corrupt" in p or "backup" in p]
    assert set(before) <= set(listing(data))


def test_the_ledgers_disk_full_error_names_the_disk_not_a_rollback(tmp_path: Path) -> None:
    memory = open_fake_memory()
    memory.add(text_for("kept", 0))
    db = ledger_of(memory)._db
    pages = db.execute("PRAGMA page_count").fetchone()[0]
    db.execute(f"PRAGMA max_page_count = {pages}")  # SQLite answers SQLITE_FULL, as on a full disk

    with pytest.raises(DiskFull) as failed:
        add_all(memory, [text_for("big", i) * 20 for i in range(200)])
    line = str(failed.value)
    assert "cannot rollback" not in line and "no transaction is active" not in line
    assert line.startswith(f"The memory ledger {tmp_path / 'data' / 'ledger.sqlite3'} could not be written: the "
                           f"disk holding {tmp_path / 'data'} is full (database or disk is full; ")
    assert "Nothing was saved" in line
    assert memory.count() == 1 and memory.indexed() == 1


def test_at_most_one_damaged_index_is_kept_and_it_goes_once_the_index_is_whole(tmp_path: Path) -> None:
    """Copies stay only while the rebuild is not done: here the ledger has no vector copies (a store from before
    they existed), so a start cannot restore the index and asks for `agent memories rebuild`."""
    add_all(open_fake_memory(), [text_for("old", i) for i in range(RECONCILE_LIMIT + 6)])
    forget_clients()
    data = tmp_path / "data"
    with sqlite3.connect(data / "ledger.sqlite3") as db:
        db.execute("DELETE FROM vectors")
    (data / "ledger.sqlite3.corrupt-20260101-000000").write_bytes(b"a ledger set aside once, with text")

    for round_no in range(3):
        os.truncate(data / "chroma" / "chroma.sqlite3", 0)  # damage
        notices: list[str] = []
        open_fake_memory(notices.append)
        forget_clients()
        assert "moved aside to" in notices[0] and "run `agent memories rebuild`" in notices[1], notices
        assert len(list(data.glob("chroma.corrupt-*"))) == 1, f"round {round_no}: one set-aside index at most"

    assert rebuild_index(wiring, load_settings(), ShaEmbedder()) == (RECONCILE_LIMIT + 6, None)
    assert list(data.glob("chroma.corrupt-*")) == [], "the index is whole again: its damaged copy goes"
    assert (data / "ledger.sqlite3.corrupt-20260101-000000").exists(), "a ledger set aside is never removed"


def test_at_most_one_version_backup_and_no_half_copy_on_a_full_disk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    add_all(open_fake_memory(), [text_for("old", i) for i in range(3)])
    forget_clients()
    data = tmp_path / "data"
    sidecar = data / "chroma" / VERSION_FILE
    for _ in range(2):  # two migrations, one backup each: the older goes
        sidecar.write_text(json.dumps({"chromadb": "1.5.0"}))
        open_fake_memory()
        forget_clients()
    assert len(list(data.glob("chroma.backup-*"))) == 1

    def fills_the_disk(source: Path, target: Path) -> None:
        Path(target).mkdir()
        (Path(target) / "chroma.sqlite3").write_bytes(b"the first pages")
        raise OSError(errno.ENOSPC, "No space left on device", str(target))

    sidecar.write_text(json.dumps({"chromadb": "1.4.0"}))
    monkeypatch.setattr(chroma_files.shutil, "copytree", fills_the_disk)
    with pytest.raises(DiskFull, match="nothing was moved aside"):
        open_fake_memory()
    assert [p.name.split("-")[1] for p in data.glob("chroma.backup-*")] == ["1.5.0"], "the half copy is removed"
