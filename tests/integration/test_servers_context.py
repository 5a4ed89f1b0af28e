"""A reply-length limit and a context that fits the server: max_tokens is sent, a server's published context size
trims the window before a request, and a request refused as too long (a 400, or llama-cpp-python's empty stream)
is said so in one line, trimmed and sent again instead of being reported as a cut-off reply."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from concurrent.futures import Future
from pathlib import Path

import pytest
from openai import OpenAI

from agent.adapters.openai_chat import OpenAIChat
from agent.domain import Message
from agent.errors import ContextOverflow
from agent.ports import ChatChunk
from agent.server import ServerInfo, server_profile
from agent.tokens import count_tokens
from tests.cli_harness import invoke
from tests.e2e_helpers import agent_env
from tests.fake_openai import FakeOpenAI, Reply
from tests.repl_harness import build_chat, run_lines

pytestmark = pytest.mark.usefixtures("model_cache")

HELLO = [Message("user", "hello")]
ESSAY = " ".join(f"word{n}" for n in range(1500))


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(fallback=Reply("Noted.")) as server:
        yield server


def adapter(fake: FakeOpenAI, max_tokens: int = 0) -> OpenAIChat:
    return OpenAIChat(OpenAI(api_key="not-needed", base_url=fake.url, timeout=60), max_retries=0,
                      max_tokens=max_tokens)


def test_max_tokens_is_sent_when_set_and_left_out_at_zero(fake: FakeOpenAI) -> None:
    fake.add(Reply("a"), Reply("b"))
    list(adapter(fake, 64).stream(HELLO, "m"))
    list(adapter(fake, 0).stream(HELLO, "m"))
    first, second = (r.body for r in fake.chat_requests)
    assert first["max_tokens"] == 64 and "max_tokens" not in second


def test_an_empty_stream_is_asked_again_whole_and_the_refusal_names_the_servers_context(fake: FakeOpenAI) -> None:
    """llama-cpp-python's way: an empty stream, and a 400 naming its context when asked without streaming."""
    fake.add(Reply("", finish_reason=None), Reply(status=400, error={
        "message": "This model's maximum context length is 2048 tokens. However, you requested 3020 tokens"}))
    with pytest.raises(ContextOverflow, match="exceeds the server's context of 2,048 tokens") as caught:
        list(adapter(fake, 64).stream(HELLO, "m"))
    assert caught.value.context == 2048
    streamed, whole = (r.body for r in fake.chat_requests)
    assert streamed["stream"] and not whole.get("stream") and whole["max_tokens"] == 64


def test_an_empty_stream_answered_whole_is_the_reply(fake: FakeOpenAI) -> None:
    fake.add(Reply("", finish_reason=None), Reply("Hello there."))
    chunks = list(adapter(fake).stream(HELLO, "m"))
    assert "".join(c.text for c in chunks) == "Hello there." and chunks[0].finish_reason == "stop"


def test_an_empty_stream_and_an_empty_answer_are_a_context_overflow_of_unknown_size(fake: FakeOpenAI) -> None:
    fake.add(Reply("", finish_reason=None), Reply(""))
    with pytest.raises(ContextOverflow, match="empty stream.*longer than its context") as caught:
        list(adapter(fake).stream(HELLO, "m"))
    assert caught.value.context is None


def test_a_400_naming_the_context_is_an_overflow_of_that_size(fake: FakeOpenAI) -> None:
    fake.add(Reply(status=400, error={"message": "Requested tokens (5000) exceed context window of 4096"}))
    with pytest.raises(ContextOverflow, match="exceeds the server's context of 4,096 tokens") as caught:
        list(adapter(fake).stream(HELLO, "m"))
    assert caught.value.context == 4096


class SmallServer:
    """A ``ChatModel`` with a context of ``context`` tokens: a longer request gets the empty stream of
    llama-cpp-python (``named`` False) or a 400 naming the size."""

    def __init__(self, context: int, replies: list[str], named: bool = False) -> None:
        self.context = context
        self.replies = replies
        self.named = named
        self.requests: list[list[Message]] = []

    def stream(self, messages: Sequence[Message], model: str) -> Iterator[ChatChunk]:
        self.requests.append(list(messages))
        if sum(count_tokens(m.content) for m in messages) > self.context:
            raise ContextOverflow("too long", self.context if self.named else None)
        yield ChatChunk(text=self.replies.pop(0))
        yield ChatChunk(finish_reason="stop")


@pytest.mark.parametrize("named", [False, True])
def test_a_request_too_long_for_the_server_is_trimmed_said_in_one_line_and_answered(
    tmp_path: Path, named: bool
) -> None:
    server = SmallServer(1200, [ESSAY, "Apples."], named)
    done = run_lines(build_chat(tmp_path, server, max_tokens=100), "Write me an essay", "Any snack ideas?")
    assert [t.status for t in done.session.turns] == ["complete", "complete"]
    assert done.out.endswith("Apples.\n")
    size = " of 1,200 tokens" if named else ""
    assert f"The request exceeds the server's context{size}: trimmed the oldest turn from the context and sent " \
           "it again." in done.log
    assert "cut off" not in done.log and "error" not in done.log
    refused, resent = server.requests[1:3]
    assert ESSAY in "".join(m.content for m in refused) and ESSAY not in "".join(m.content for m in resent)
    # The trimmed turn is folded; the summary call is too long for this server as well, so it keeps the user's line.
    assert done.session.summary == "The user said: Write me an essay"
    assert "Could not summarise the earlier turn (too long)" in done.log


def test_a_line_too_long_for_the_server_on_its_own_fails_with_what_to_change(tmp_path: Path) -> None:
    server = SmallServer(300, [], named=True)
    done = run_lines(build_chat(tmp_path, server, max_tokens=100), ESSAY)
    assert [t.status for t in done.session.turns] == ["failed"]
    assert "exceeds the server's context of 300 tokens even without earlier turns: shorten the message, lower " \
           "AGENT_MAX_TOKENS (100)" in done.log
    assert len(server.requests) == 1, "nothing to trim: not sent again"


def test_a_published_context_trims_the_window_before_the_request(tmp_path: Path) -> None:
    server = SmallServer(1200, [ESSAY, "Apples.", "Summary."])
    probe: Future[object] = Future()
    probe.set_result(server_profile(ServerInfo("llama.cpp", context=1200), model="m", system_prompt="auto",
                                    max_tokens=100))
    done = run_lines(build_chat(tmp_path, server, max_tokens=100, server=probe),  # type: ignore[arg-type]
                     "Write me an essay", "Any snack ideas?")
    assert len(server.requests) == 3, "no request refused: the second was trimmed before it was sent"
    assert ESSAY not in "".join(m.content for m in server.requests[1])
    assert "the oldest turn left the context window" in done.log
    assert "exceeds" not in done.log


@pytest.mark.slow
def test_an_agent_on_a_server_that_answers_long_requests_with_an_empty_stream_recovers(
    fake: FakeOpenAI, tmp_path: Path
) -> None:
    fake.add(Reply(ESSAY), Reply("", finish_reason=None),
             Reply(status=400, error={"message": "This model's maximum context length is 2048 tokens."}),
             Reply("Apples."))
    result = invoke("--lines", "-s", "long", stdin="Write me an essay\nAny snack ideas?\n", env=agent_env(fake))
    assert result.returncode == 0, result.stderr
    assert "The request exceeds the server's context of 2,048 tokens: trimmed the oldest turn from the context and " \
           "sent it again." in result.stderr
    assert "cut off" not in result.stderr and "~0 out" not in result.stderr
    assert result.stdout.endswith("Apples.\n")
    assert all(r.body["max_tokens"] == 1024 for r in fake.chat_requests)
