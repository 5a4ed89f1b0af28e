"""The chat keeps going when its memory store cannot be used: ``agent`` with piped stdin against the fake OpenAI
server, run in this process (``tests.cli_harness``). A damaged ledger turns memory off with one line; a torn index
is rebuilt from the ledger while the chat starts, and recall works in the first reply; a store whose index another
process holds is recalled from the ledger, as in any second terminal."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent.adapters.chroma_index import forget_clients
from agent.adapters.local_embedder import LocalEmbedder
from tests.cli_harness import invoke
from tests.fake_openai import FakeOpenAI, Reply
from tests.helpers_store import open_memory_with, spawn, wait_for_line

PEANUTS = "I can't eat peanuts, they make my throat swell"


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(fallback=Reply("Noted.")) as server:
        yield server


@pytest.fixture
def seeded(tmp_path: Path, local_embedder: LocalEmbedder) -> Path:
    """A store holding the peanut allergy, closed as a process that ends leaves it (the ledger's write-ahead log
    checkpointed into its file); returns the data directory."""
    memory = open_memory_with(local_embedder)
    memory.add(PEANUTS)
    forget_clients()
    memory.close()
    return tmp_path / "data"


def chat(fake: FakeOpenAI, line: str) -> subprocess.CompletedProcess[str]:
    return invoke("--lines", "-s", "today", stdin=f"{line}\n",
                  env={"OPENAI_BASE_URL": fake.url, "AGENT_EMBEDDER": "local"})


def test_a_damaged_ledger_turns_memory_off_and_the_chat_answers(fake: FakeOpenAI, seeded: Path) -> None:
    with (seeded / "ledger.sqlite3").open("r+b") as ledger:
        ledger.write(os.urandom(100))
    result = chat(fake, "Any snack ideas?")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Noted.\n"
    [moved] = list(seeded.glob("ledger.sqlite3.corrupt-*"))
    assert f"Long-term memory is unavailable: The memory ledger {seeded / 'ledger.sqlite3'} is damaged" in result.stderr
    assert f"moved aside to {moved}" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_torn_index_is_rebuilt_and_the_first_reply_recalls(fake: FakeOpenAI, seeded: Path) -> None:
    [segment] = [p for p in (seeded / "chroma").iterdir() if p.is_dir()]
    (segment / "index_metadata.pickle").write_bytes(os.urandom(300))
    result = chat(fake, "Any snack ideas?")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Noted.\n"
    assert "is rebuilt from the ledger" in result.stderr and "Traceback" not in result.stderr
    assert PEANUTS in fake.system_prompts()[-1]


@pytest.mark.slow
def test_a_second_chat_beside_a_holder_recalls_from_the_ledger(fake: FakeOpenAI, seeded: Path) -> None:
    holder = spawn("hold", "real")
    try:
        wait_for_line(holder, "ready")
        result = chat(fake, "Any snack ideas?")
    finally:
        holder.kill()
        holder.communicate()
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Noted.\n"
    assert "is using the memory store" not in result.stderr and "Chatting without it" not in result.stderr
    assert PEANUTS in fake.system_prompts()[-1]
