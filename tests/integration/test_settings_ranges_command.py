"""Bad settings through the whole ``agent`` command (run in-process as its console script runs it,
``tests.cli_harness``): a capacity of 0 on a store that holds a memory, and a chat with
a bad setting, each stop with one line and exit 2 before anything is touched.

Before, ``AGENT_MEMORY_CAPACITY=0 agent memories add ...`` printed ``remembered``, exited 0 and evicted every
memory; ``AGENT_TIMEOUT=nan`` or ``OPENAI_BASE_URL=http://[::1`` crashed the chat with a traceback.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli_harness import invoke
from tests.e2e_helpers import agent_env
from tests.fake_openai import FakeOpenAI, Reply

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("model_cache")]

BEES = "I keep bees on my roof in Lisbon"


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(fallback=Reply("Noted.")) as server:
        yield server


def test_a_capacity_of_0_refuses_in_one_line_and_the_memory_stays(fake: FakeOpenAI) -> None:
    env = agent_env(fake)
    assert invoke("memories", "add", BEES, env=env).returncode == 0

    refused = invoke("memories", "add", "I also keep a tortoise called Speedy",
                     env={**env, "AGENT_MEMORY_CAPACITY": "0"})
    assert refused.returncode == 2
    assert refused.stdout == ""
    assert refused.stderr == ("agent: AGENT_MEMORY_CAPACITY='0' is not valid: expected a whole number from 1 to "
                              "10,000,000.\n")

    chat = invoke("--lines", stdin="I also keep a tortoise called Speedy\n", env={**env, "AGENT_MEMORY_CAPACITY": "-5"})
    assert chat.returncode == 2 and chat.stderr.count("\n") == 1 and "AGENT_MEMORY_CAPACITY='-5'" in chat.stderr

    listed = invoke("memories", "list", "--json", env=env)
    assert listed.returncode == 0, listed.stderr
    assert BEES in listed.stdout and "tortoise" not in listed.stdout
    assert fake.chat_requests == []


@pytest.mark.parametrize(("name", "raw"), [("AGENT_TIMEOUT", "nan"), ("AGENT_TIMEOUT", "-1"),
                                           ("AGENT_MAX_RETRIES", "-1"), ("OPENAI_BASE_URL", "http://[::1"),
                                           ("OPENAI_BASE_URL", "127.0.0.1:8080/v1"), ("AGENT_USER", "")])
def test_a_chat_with_a_bad_setting_exits_2_before_any_request(
    fake: FakeOpenAI, name: str, raw: str, tmp_path: Path
) -> None:
    result = invoke("--lines", "-s", "work", stdin="Hello there\n", env=agent_env(fake, **{name: raw}))
    assert result.returncode == 2
    assert result.stdout == ""
    [line] = result.stderr.splitlines()
    assert line.startswith(f"agent: {name}={raw!r} is not valid: ") and "Traceback" not in result.stderr
    assert fake.requests == []
    assert not (tmp_path / "data").exists(), "nothing is created before the settings are known to be good"
