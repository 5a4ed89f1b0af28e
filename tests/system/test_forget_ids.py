"""A forgotten memory's id leaves every place that names it (issue 19 §12): an id is derived from the memory's text,
and confirms a guessed sentence to whoever can read it. It stayed in the ``superseded_by`` of the memory it had
replaced, so ``agent memories list --json`` and every export showed it after the forget, and the memory it replaced
stayed replaced by nothing. Now those memories are current again, and no file of the data directory holds the id.
Real ``agent`` processes with real files (the fake OpenAI server's embeddings)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent.forget import Forgotten, scrub_history
from tests.e2e_helpers import env_for
from tests.fake_openai import FakeOpenAI, Reply
from tests.piped_chat import run

pytestmark = pytest.mark.slow

BOSTON, BERLIN = "I live in Boston", "I moved to Berlin"


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(fallback=Reply("Noted.")) as server:
        yield server


def test_no_file_or_listing_names_a_forgotten_memory_that_had_superseded_another(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    (tmp_path / "home").mkdir(exist_ok=True)
    env = {**env_for(fake), "HOME": str(tmp_path / "home"), "AGENT_DATA_DIR": str(tmp_path / "data")}
    for text in (BOSTON, BERLIN):
        assert run(env, "memories", "add", text).returncode == 0
    before = {m["text"]: m for m in json.loads(run(env, "memories", "list", "--json").stdout)}
    berlin = before[BERLIN]["id"]
    assert before[BOSTON]["superseded_by"] == berlin, "the move replaced the old home"

    gone = run(env, "memories", "forget", berlin)
    assert gone.returncode == 0, gone.stderr

    outputs = {
        "list --json": run(env, "memories", "list", "--json").stdout,
        "list --history": run(env, "memories", "list", "--history").stdout,
        "export": run(env, "memories", "export").stdout,
        "export --format markdown": run(env, "memories", "export", "--format", "markdown").stdout,
        "profile --json": run(env, "memories", "profile", "--json").stdout,
    }
    assert {what: berlin[:8] in out for what, out in outputs.items()} == dict.fromkeys(outputs, False), outputs
    [boston] = json.loads(outputs["list --json"])
    assert boston["text"] == BOSTON and boston["superseded_by"] is None, "current again, as before the move"
    holders = [p for p in (tmp_path / "data").rglob("*") if p.is_file() and berlin.encode() in p.read_bytes()]
    assert holders == [], "no file of the data directory holds the id"


def test_the_input_history_loses_the_forgotten_ids_typed_in_commands(tmp_path: Path) -> None:
    history = tmp_path / "history"
    history.write_text("\n# 2026-12-01 10:00:00.000000\n+/forget 3f2a9c1b\n"
                       "\n# 2026-12-01 10:01:00.000000\n+/why cafe\n"
                       "\n# 2026-12-01 10:02:00.000000\n+my cafe is 3f2a9c1b\n")
    assert scrub_history(history, Forgotten([]), ["3f2a9c1b" + "0" * 24, "cafe" + "1" * 28])
    text = history.read_text()
    assert "+/forget [forgotten]" in text and "+/why [forgotten]" in text
    assert "+my cafe is 3f2a9c1b" in text, "a line that is not a command is the user's words: left as they are"
