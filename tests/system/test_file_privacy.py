"""Checklist cases 16, 26 and 28: private files, forget that really forgets, and an API key that never leaks.

Each claim is checked on the raw bytes of every file under the data directory (and HOME), not through the API that
wrote them: what a backup, a disk image or another user on the machine would see.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import stat
import threading
import traceback
from array import array
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from agent.adapters import chroma_index
from agent.adapters.chroma_index import forget_clients
from agent.adapters.local_embedder import LocalEmbedder
from agent.config import load_settings
from agent.errors import EmbeddingError
from agent.wiring import open_memory
from tests.builders import add_all
from tests.helpers_store import (
    ShaEmbedder,
    ledger_of,
    open_fake_memory,
    open_memory_with,
    run_agent,
    spawn,
    text_for,
)
from tests.ports import refused_port

CANARY = "CANARY-Zq81x my locker number is 44179823"
NEEDLES = (b"CANARY", b"canary", b"zq81x", b"Zq81x", b"44179823", "CANARY".encode("utf-16-le"))
KEY = "sk-test-CANARY123-5f0c9e2a7b1d4c3e"


def files_under(*roots: Path) -> list[Path]:
    return [p for root in roots for p in root.rglob("*") if p.is_file() and not p.is_symlink()]


def leaks(needles: tuple[bytes, ...], *roots: Path) -> list[str]:
    return [f"{p}: {n!r}" for p in files_under(*roots) for n in needles if n in p.read_bytes()]


# -- 16: permissions ----------------------------------------------------------------------------------------


@pytest.mark.slow
def test_data_dir_is_0700_and_every_file_0600_even_under_umask_022(tmp_path: Path) -> None:
    root = tmp_path / "data"
    root.mkdir(mode=0o755)
    (root / "sessions").mkdir(mode=0o755)
    for loose in (root / "history", root / "sessions" / "old.json"):  # what an older version left readable
        loose.write_text("x")
        loose.chmod(0o644)
    writer = spawn("add", "perm", "3", umask=0o022)
    _, err = writer.communicate(timeout=300)
    assert writer.returncode == 0, err
    paths = [root, *root.rglob("*")]
    assert any(p.name == "chroma.sqlite3" for p in paths) and any(p.name == "data_level0.bin" for p in paths)
    loose_modes = {str(p): oct(stat.S_IMODE(p.lstat().st_mode)) for p in paths
                   if stat.S_IMODE(p.lstat().st_mode) != (0o700 if p.is_dir() else 0o600)}
    assert loose_modes == {}


# -- 26: forget -----------------------------------------------------------------------------------------------


def test_forget_one_among_many_leaves_no_byte_of_it_anywhere(tmp_path: Path) -> None:
    memory = open_fake_memory()
    add_all(memory, [text_for("before", n) for n in range(25)])
    canary = memory.add(CANARY)
    vector = array("f", ShaEmbedder().embed([CANARY])[0]).tobytes()
    add_all(memory, [text_for("after", n) for n in range(25)])
    root = tmp_path / "data"
    assert leaks((b"CANARY",), root), "the canary was written"

    assert memory.forget([canary.id]) == 1
    assert CANARY not in [m.record.text for m in memory.search(CANARY, 10)]
    forget_clients()
    ledger_of(memory).close()
    assert leaks(NEEDLES, root) == []
    assert leaks((vector[:32],), root) == [], "nor of its vector: Chroma's copy was overwritten, the ledger's deleted"
    assert len(open_fake_memory().list()) == 50


def test_a_compaction_that_fails_at_exit_is_done_at_the_next_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    memory = open_fake_memory()
    add_all(memory, [text_for("before", n) for n in range(25)])
    canary = memory.add(CANARY)
    vector = array("f", ShaEmbedder().embed([CANARY])[0]).tobytes()[:32]
    add_all(memory, [text_for("after", n) for n in range(25)])
    memory.forget([canary.id])
    root = tmp_path / "data"
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(chroma_index.sqlite3, "connect", full_disk)
        forget_clients()
    assert "Could not compact" in caplog.text and (root / "chroma" / chroma_index.COMPACT_MARK).exists()
    assert leaks((vector,), root / "chroma"), "Chroma's free pages still hold the forgotten vector"
    open_fake_memory()  # the next start compacts before Chroma opens the file
    assert not (root / "chroma" / chroma_index.COMPACT_MARK).exists()
    forget_clients()
    assert leaks((vector,), root / "chroma") == []


def full_disk(*args: object, **kwargs: object) -> None:
    raise sqlite3.OperationalError("database or disk is full")


@pytest.mark.slow
def test_agent_memories_forget_and_forget_all_erase_the_text_from_every_file(
    tmp_path: Path, local_embedder: LocalEmbedder
) -> None:
    memory = open_memory_with(local_embedder)
    cousins = [f"My cousin number {n} lives in town {n}" for n in range(20)]
    add_all(memory, cousins)
    canary = memory.add(CANARY)
    forget_clients()
    root = tmp_path / "data"
    vectors = tuple(array("f", v).tobytes()[:32] for v in local_embedder.embed([CANARY, *cousins]))

    forgot = run_agent("memories", "forget", canary.id[:10])
    assert forgot.returncode == 0 and "forgot 1" in forgot.stdout, forgot.stderr
    assert leaks(NEEDLES, root) == []
    memory = open_memory_with(local_embedder)
    memory.add("I also keep a CANARY-Zq81x in a cage")
    forget_clients()
    assert leaks(vectors[:1], root) == []
    assert run_agent("memories", "forget", "--all", "--yes").returncode == 0
    assert leaks(NEEDLES + (b"cousin",) + vectors, root) == []


# -- 28: the API key ------------------------------------------------------------------------------------------


@contextmanager
def embeddings_server(status: int) -> Iterator[str]:
    """An OpenAI-compatible /v1/embeddings that answers ``status``; an error echoes the Authorization header
    back in its message, as some servers do with a key they refuse."""

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            return

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            if status == 200:
                data = [{"object": "embedding", "index": i, "embedding": [1.0] + [0.0] * 1535}
                        for i, _ in enumerate(body["input"])]
                payload = {"object": "list", "data": data, "model": body["model"],
                           "usage": {"prompt_tokens": 1, "total_tokens": 1}}
            else:
                message = f"Incorrect API key provided: {self.headers['Authorization']}"
                payload = {"error": {"message": message, "type": "invalid_request_error", "code": "invalid_api_key"}}
            raw = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


SERVERS = {"refused connection": None, "401 echoing the key": 401, "500 echoing the key": 500, "working": 200}


@pytest.mark.parametrize("server", list(SERVERS))
def test_the_api_key_is_in_no_error_log_or_file_of_the_memory_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, server: str
) -> None:
    status = SERVERS[server]
    caplog.set_level(logging.DEBUG)
    with embeddings_server(status or 200) as url, refused_port() as refused:
        monkeypatch.setenv("OPENAI_BASE_URL", url if status else f"http://127.0.0.1:{refused}/v1")
        monkeypatch.setenv("OPENAI_API_KEY", KEY)
        monkeypatch.setenv("AGENT_MAX_RETRIES", "0")
        memory = open_memory(load_settings(), embedder="openai")
        seen = []
        try:
            memory.add("I can't eat peanuts")
        except EmbeddingError as exc:
            seen.append("".join(traceback.format_exception(exc)))
        notices: list[str] = []
        forget_clients()
        open_memory(load_settings(), notify=notices.append)  # the open retries what the failed add left unindexed
    assert (status == 200) == (not seen)
    for text in (*seen, *notices, caplog.text):
        assert "CANARY123" not in text
    assert leaks((b"CANARY123",), tmp_path) == []
    if status not in (None, 200):
        assert f"Error code: {status}" in seen[0] and "sk-***" in seen[0], "the server's words stay, the key goes"


@pytest.mark.slow
def test_the_api_key_stays_out_of_debug_tracebacks_and_sdk_logs_of_agent_memories(tmp_path: Path) -> None:
    env = {"OPENAI_API_KEY": KEY, "AGENT_EMBEDDER": "openai", "OPENAI_LOG": "debug", "AGENT_MAX_RETRIES": "0"}
    with embeddings_server(401) as url:
        env["OPENAI_BASE_URL"] = url
        added = run_agent("--debug", "memories", "add", "I can't eat peanuts", env=env)
        stats = run_agent("memories", "--debug", "stats", env=env)
    assert added.returncode == 1 and "Traceback" in added.stderr and "Error code: 401" in added.stderr
    assert "could not be embedded now" in stats.stderr
    for out in (added.stdout, added.stderr, stats.stdout, stats.stderr):
        assert "CANARY123" not in out
    assert leaks((b"CANARY123",), tmp_path) == []
