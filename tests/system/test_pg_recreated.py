"""A memory database dropped and created again under its name while a chat runs (issue 19 §15): every turn failed
with ``relation "memories" does not exist`` until the chat was restarted, since only the first connection made the
schema. Each new connection checks it now, as an open does, and registers the machine again. A real ``agent`` chat
against the fake OpenAI server, on a database of the shared cluster (``tests.pg_server``) that the test drops."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e_helpers import env_for
from tests.fake_openai import FakeOpenAI, Reply
from tests.machines import listed
from tests.pg_server import Cluster
from tests.piped_chat import PipedChat

pytestmark = pytest.mark.slow
psycopg = pytest.importorskip("psycopg")

CAT = "My cat is called Miso"
ALLERGY = "I have a peanut allergy"


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(fallback=Reply("Noted.")) as server:
        yield server


def test_a_database_dropped_and_created_again_mid_chat_is_used_again_without_a_restart(
    tmp_path: Path, pg_cluster: Cluster, fake: FakeOpenAI
) -> None:
    url = pg_cluster.new_database()
    name = url.rsplit("/", 1)[1]
    (tmp_path / "home").mkdir(exist_ok=True)
    env = {**env_for(fake), "HOME": str(tmp_path / "home"), "AGENT_DATA_DIR": str(tmp_path / "data"),
           "AGENT_DATABASE_URL": url, "AGENT_CHROMA_URL": ""}
    chat = PipedChat(env, "desk")
    try:
        chat.say(CAT)
        chat.wait_until(lambda: f"remembered: {CAT}" in chat.err)
        pg_cluster.sql(f"DROP DATABASE {name} WITH (FORCE)")
        pg_cluster.sql(f"CREATE DATABASE {name}")
        chat.say(ALLERGY, "hello", "Do I have any allergy?")
        chat.wait_until(lambda: any(line.endswith(f"remembered: {ALLERGY}") for line in chat.err))
        chat.wait_replies(4)
    finally:
        assert chat.close() == 0, "\n".join(chat.err)
    said = "\n".join(chat.err)
    assert "does not exist" not in said and "Traceback" not in said, said
    assert listed(env) == [ALLERGY], "the new database holds what was said since, and nothing of the old one"
    assert ALLERGY in fake.system_prompts()[-1], "and the chat recalls it"
    with psycopg.connect(url) as conn:
        assert conn.execute("SELECT count(*) FROM machines").fetchone() == (1,), "the machine is registered again"
