"""``/model``: what the server serves (``GET /v1/models`` through the SDK), and a switch mid-chat that the session
records turn by turn. In-process with a scripted catalog, and through a real ``agent`` process against the fake
server, which lists its models or answers 404 as a server without that route does."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent.errors import ChatError
from tests.chat_fakes import ScriptedChat
from tests.cli_harness import invoke
from tests.e2e_helpers import agent_env, session_file
from tests.fake_openai import FakeOpenAI, Reply
from tests.repl_harness import build_chat, run_lines


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(fallback=Reply("Noted.")) as server:
        yield server


def usage_free(text: str) -> str:
    return re.sub(r"↳ [\d,]+ tokens in · [\d,]+ out", "↳ usage", text)


def test_model_lists_switches_by_prefix_and_refuses_what_is_not_served(tmp_path: Path) -> None:
    served = ["big-model", "small-model", "test-model"]
    chat = build_chat(tmp_path, ScriptedChat("One.", "Two."), catalog=lambda: served)
    done = run_lines(chat, "hello", "/model", "/model sm", "/model nope", "/model small-model", "again")

    assert done.out == "One.\n  big-model\n  small-model\n* test-model\nTwo.\n"
    assert done.log.splitlines()[1:] == [
        "3 models served. /model NAME switches; the session records which model said what.",
        "Now talking to small-model; earlier replies keep the model that wrote them.",
        "The server does not serve nope (3 models: /model lists them); still talking to small-model.",
        "Already talking to small-model.",
        done.log.splitlines()[-1],
    ]
    assert [(t.reply, t.model) for t in done.session.turns] == [("One.", "test-model"), ("Two.", "small-model")]
    assert "model small-model" in done.repl.toolbar()


def test_a_server_that_cannot_list_still_switches_as_given(tmp_path: Path) -> None:
    def fails() -> list[str]:
        raise ChatError("the server does not list its models (404 on /models)")

    chat = build_chat(tmp_path, ScriptedChat(), catalog=fails)
    done = run_lines(chat, "/model", "/model llama3")
    assert done.log == (
        "Talking to test-model; the server does not list its models (404 on /models). /model NAME switches.\n"
        "Now talking to llama3 (the server does not list its models (404 on /models): it is used as given); "
        "earlier replies keep the model that wrote them.\n")
    assert done.repl.engine.status().model == "llama3"


@pytest.mark.slow
def test_model_through_the_command_lists_and_switches_mid_chat(fake: FakeOpenAI, tmp_path: Path) -> None:
    env = agent_env(fake, AGENT_MODEL="fake-small")
    result = invoke("--lines", "--no-memory", "-s", "m", stdin="hello\n/model\n/model fake-large\nagain\n", env=env)

    assert result.returncode == 0, result.stderr
    assert result.stdout == "Noted.\n  fake-large\n* fake-small\nNoted.\n"
    assert usage_free(result.stderr) == (
        "↳ usage\n"
        "2 models served. /model NAME switches; the session records which model said what.\n"
        "Now talking to fake-large; earlier replies keep the model that wrote them.\n"
        "↳ usage\n")
    assert [r.body["model"] for r in fake.chat_requests] == ["fake-small", "fake-large"]
    turns = session_file(tmp_path, "m")["turns"]
    assert isinstance(turns, list) and [t["model"] for t in turns] == ["fake-small", "fake-large"]


@pytest.mark.slow
def test_model_against_a_server_without_the_route(fake: FakeOpenAI) -> None:
    fake.models = None
    result = invoke("--lines", "--no-memory", stdin="/model\n", env=agent_env(fake))
    assert (result.returncode, result.stdout) == (0, "")
    assert result.stderr == ("Talking to gpt-4o-mini; the server does not list its models (404 on /models). "
                             "/model NAME switches.\n")
