"""Checklist cases 17-23 and 28 against the fake OpenAI server: every fault of the API ends in one clear line, the
turn is kept in the session (marked for what it is), nothing is mined for memory from a reply that did not finish,
and the API key appears in no output, log, traceback or file. The chats run ``agent`` in this process
(``tests.cli_harness``), the one with the SDK's debug log too."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli_harness import invoke
from tests.e2e_helpers import agent_env, session_file
from tests.fake_openai import FakeOpenAI, Reply

pytestmark = pytest.mark.usefixtures("model_cache")

KEY = "sk-test-CANARY123-5f0c9e2a7b1d4c3e"
ECHO = {"message": f"Incorrect API key provided: {KEY}", "type": "invalid_request_error", "code": "invalid_api_key"}
# Statements the write gate keeps: a turn that ended badly must still not become a memory.
HIKING, CHESS, TEA = "I love hiking in the Alps", "I play chess with my brother", "I drink green tea every morning"


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        yield server


def statuses(tmp_path: Path, name: str) -> list[str]:
    turns = session_file(tmp_path, name)["turns"]
    assert isinstance(turns, list)
    return [turn["status"] for turn in turns]


def test_each_api_fault_is_one_line_the_turn_is_kept_and_the_users_words_are_remembered(
    fake: FakeOpenAI, tmp_path: Path
) -> None:
    script = [
        (Reply(status=429, headers={"Retry-After": "600"}), "Rate limited: the server asks to wait 600 s"),
        (Reply(status=401), "refused the API key (401): check OPENAI_API_KEY"),
        (Reply(status=400, error={"message": "This model's maximum context length is 8 tokens"}),
         "exceeds the server's context of 8 tokens even without earlier turns: shorten the message"),
        (Reply(status=404, error={"message": "The model does not exist"}), "is the model name 'gpt-4o-mini' right?"),
        (Reply(status=503), "server error (503): retrying in"),
        (Reply(status=503), "kept failing (503: scripted status 503); try again later."),
        (Reply(wait=8), "timed out: retrying in"),  # each waits 4 times AGENT_TIMEOUT: it times out on any machine
        (Reply(wait=8), "did not answer in time: raise AGENT_TIMEOUT"),
        (Reply(status=429, headers={"retry-after-ms": "100"}), "rate limited (429): retrying in 0.1 s (1/1)"),
        (Reply("Back after the rate limit."), ""),
        (Reply(f"Noted, {HIKING.lower()} and more", cut_after=2), "broke off mid-stream"),
        (Reply("Chess is a fine game", finish_reason=None), "cut off (no finish reason)"),
        (Reply("Green tea has", finish_reason="length"), "cut off (length)"),
        (Reply("Delayed but whole, piece by piece.", delay=0.5), ""),  # 3 s in all, each piece well within 2 s
        (Reply("Noted."), ""),
    ]
    fake.add(*(reply for reply, _ in script))
    lines = ["one", "two", "three", "four", "five", "six", "seven", HIKING, CHESS, TEA, "eight", "I like quiet trains"]
    result = invoke("--lines", "-s", "faults", stdin="".join(f"{line}\n" for line in lines),
                    env=agent_env(fake, AGENT_MAX_RETRIES="1", AGENT_TIMEOUT="2"))

    assert result.returncode == 1, "a script learns that turns failed"
    position = 0
    for _, message in script:
        if message:
            position = result.stderr.index(message, position)  # each in order, none missing
    assert [line.rstrip() for line in result.stdout.splitlines()] == [
        "Back after the rate limit.", "Noted, i", "Chess is a fine game", "Green tea has",
        "Delayed but whole, piece by piece.", "Noted."]
    assert statuses(tmp_path, "faults") == ["failed"] * 6 + ["complete", "failed", "truncated", "truncated",
                                                             "complete", "complete"]
    assert [line for line in result.stderr.splitlines() if line.startswith("remembered:")] == [
        f"remembered: {line}" for line in (HIKING, CHESS, TEA, "I like quiet trains")]
    assert "Traceback" not in result.stderr
    assert fake.exhausted == 0 and len(fake.chat_requests) == len(script)


def test_a_refused_connection_keeps_the_line_and_retry_sends_it_once_the_server_is_back(
    fake: FakeOpenAI, tmp_path: Path
) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{sock.getsockname()[1]}/v1"
    down = invoke("--lines", "-s", "s", "--no-memory", stdin=f"{HIKING}\n",
                  env=agent_env(fake, OPENAI_BASE_URL=closed, AGENT_MAX_RETRIES="0"))
    assert down.returncode == 1 and f"error: Cannot reach the model server at {closed}" in down.stderr
    assert statuses(tmp_path, "s") == ["failed"]
    fake.add(Reply("Welcome back."))
    back = invoke("--lines", "-s", "s", "--no-memory", stdin="/retry\n", env=agent_env(fake))
    assert back.returncode == 0 and back.stdout == "Welcome back.\n"
    assert fake.user_messages() == [HIKING]
    assert statuses(tmp_path, "s") == ["complete"]


def test_an_embedding_server_that_fails_costs_the_memory_not_the_reply(fake: FakeOpenAI, tmp_path: Path) -> None:
    fake.add(Reply("Noted."), Reply("Noted too."), Reply("Lovely."))
    fake.failing_word = "hiking"
    env = agent_env(fake, AGENT_EMBEDDER="openai", AGENT_EMBEDDING_MODEL="fake-embed", AGENT_MAX_RETRIES="0",
                    OPENAI_API_KEY="sk-test-not-used-here")
    result = invoke("--lines", "-s", "e", stdin=f"{HIKING}\n{CHESS}\n", env=env)
    assert result.returncode == 0 and result.stdout == "Noted.\nNoted too.\n"
    assert "memory: recall failed (The embedding request to model fake-embed failed (InternalServerError" in (
        result.stderr)
    assert "memory: could not save turn 1 (The embedding request" in result.stderr
    assert f"remembered: {CHESS}" in result.stderr
    assert statuses(tmp_path, "e") == ["complete", "complete"]

    fake.failing_word = None  # the server recovers: the memory the failed write left in the ledger is indexed
    later = invoke("memories", "search", "walking in the mountains", "--all", "--json", env=env)
    assert later.returncode == 0, later.stderr
    assert HIKING in [m["text"] for m in json.loads(later.stdout)]


@pytest.mark.slow
def test_the_api_key_is_in_no_output_log_traceback_or_file_even_with_debug_logging(
    fake: FakeOpenAI, tmp_path: Path
) -> None:
    """Servers that echo the key they refuse, in every failure the chat reports, with ``--debug`` (tracebacks of
    failed turns) and the SDK's own debug log on; the OpenAI embedder sends the key too."""
    fake.add(Reply(status=401, error=ECHO), Reply(status=500, error=ECHO), Reply(status=500, error=ECHO),
             Reply("half of it", cut_after=1), Reply(status=429, headers={"Retry-After": "900"}, error=ECHO),
             Reply("Noted."))
    env = agent_env(fake, OPENAI_API_KEY=KEY, OPENAI_LOG="debug", AGENT_MAX_RETRIES="1", AGENT_EMBEDDER="openai",
                    AGENT_EMBEDDING_MODEL="fake-embed")
    result = invoke("--lines", "--debug", "-s", "k", stdin=f"one\ntwo\nthree\nfour\n{TEA}\n", env=env)
    assert result.returncode == 1
    assert "Traceback" in result.stdout and "HTTP Request: POST" in result.stderr, "debug output is on"
    assert "Incorrect API key provided: sk-***" in result.stdout + result.stderr, "the server's words stay"
    assert f"remembered: {TEA}" in result.stderr
    assert all(request.headers["authorization"] == f"Bearer {KEY}" for request in fake.requests)
    assert "CANARY123" not in result.stdout + result.stderr
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert any(p.name == "ledger.sqlite3" for p in files) and any(p.name == "k.json" for p in files)
    assert [str(p) for p in files if b"CANARY123" in p.read_bytes()] == []
