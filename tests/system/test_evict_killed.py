"""``kill -9`` of ``agent memories evict --yes`` in the middle (issue 19 §10): the index had overwritten the evicted
memories' vectors with noise (a delete scrambles them first, so no byte of a vector stays in its files) and the
ledger had not deleted them yet, so 500 of 600 memories stood in the ledger under vectors of noise, and no later start
or ``stats`` noticed. An eviction now deletes from the ledger first, as a forget does: a kill at any moment after
leaves only vectors whose memory is gone, which the next start drops, in one line (or, when the kill tore the
index's files, the start finds it damaged and rebuilds it from the ledger: the same end).

A real ``agent`` process, killed by itself at that instant (``tests.helpers_store``, the ``agent-killed-after-
scramble`` role), with the fake OpenAI server's embeddings; the store is read from its files afterwards."""

from __future__ import annotations

import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent import wiring
from agent.adapters.chroma_index import ChromaIndex, forget_clients, open_client
from agent.adapters.ledger import SqliteLedger
from agent.config import load_settings
from tests.builders import record
from tests.e2e_helpers import env_for
from tests.fake_openai import FakeOpenAI, Reply
from tests.helpers_store import child_env, spawn
from tests.piped_chat import run

pytestmark = pytest.mark.slow

STORED, KEPT = 600, 100


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(fallback=Reply("Noted.")) as server:
        yield server


def seeded(env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    """``STORED`` memories in the data directory of ``env``, written as the agent writes them (one batch)."""
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    memory = wiring.open_memory(load_settings())
    now = time.time()
    texts = [f"I keep note {n}q about the topic {n}z" for n in range(STORED)]
    memory.write([record(t, "default", kind="explicit", session="cli", turn=0, at=now + n)
                  for n, t in enumerate(texts)])
    memory.close()
    forget_clients()


def test_an_eviction_killed_between_the_index_and_the_ledger_is_finished_at_the_next_start(
    tmp_path: Path, fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = tmp_path / "data"
    env = {**env_for(fake), "HOME": str(tmp_path), "AGENT_DATA_DIR": str(data)}
    seeded(env, monkeypatch)

    killed = spawn("agent-killed-after-scramble", "memories", "evict", "--to", str(KEPT), "--yes",
                   env=child_env(**env))
    killed.communicate()
    assert killed.returncode == -signal.SIGKILL

    stats = run(env, "memories", "stats")  # the next start
    assert stats.returncode == 0, stats.stderr
    dropped = (f"Dropped {STORED - KEPT} vectors from the index whose memory is not in the ledger (a forget or an "
               "eviction cut short, or a ledger replaced after damage).")
    torn = "is rebuilt from the ledger"  # the kill tore the index's files (its health check at open finds it)
    assert dropped in stats.stderr or torn in stats.stderr, stats.stderr
    lines = dict(line.split(None, 1) for line in stats.stdout.splitlines() if line.split()[0] in ("memories",
                                                                                                  "indexed"))
    assert lines["memories"].startswith(f"{KEPT} ") and lines["indexed"] == str(KEPT), stats.stdout

    ledger = SqliteLedger(data / "ledger.sqlite3")
    index = ChromaIndex(open_client(data / "chroma", None), "default", str(data / "chroma"))
    try:
        ids = ledger.ids("default")
        copies, indexed = ledger.stored_vectors("default", ids), index.vectors(ids)
        assert len(ids) == KEPT and set(indexed) == set(ids) == index.ids()
        noise = [mid for mid in ids if max(abs(a - b) for a, b in zip(copies[mid], indexed[mid], strict=True)) > 1e-6]
        assert noise == [], "every memory kept is found by its own vector, none stands under noise"
    finally:
        ledger.close()
        forget_clients()
