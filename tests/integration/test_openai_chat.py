"""The OpenAI chat adapter against the fake server, through the real SDK: streaming, retries, error hints."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from email.utils import formatdate

import pytest
from openai import OpenAI

from agent.adapters.openai_chat import OpenAIChat, RetryNotice, retry_after
from agent.domain import Message
from agent.errors import ChatFatal, ChatRetryable
from agent.ports import ChatChunk
from tests.fake_openai import FakeOpenAI, Reply

CANARY = "sk-test-CANARY1234567890"
HELLO = [Message("system", "be brief"), Message("user", "hello")]


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        yield server


class Recorder:
    """Collects retry notices and the waits the adapter asked for, without waiting."""

    def __init__(self) -> None:
        self.notices: list[RetryNotice] = []
        self.sleeps: list[float] = []


def adapter(base_url: str, recorder: Recorder, max_retries: int = 3) -> OpenAIChat:
    client = OpenAI(api_key=CANARY, base_url=base_url, timeout=60)
    return OpenAIChat(client, max_retries=max_retries, on_retry=recorder.notices.append, sleep=recorder.sleeps.append)


def collect(chat: OpenAIChat, messages: list[Message] = HELLO) -> list[ChatChunk]:
    return list(chat.stream(messages, "test-model"))


def text_of(chunks: list[ChatChunk]) -> str:
    return "".join(c.text for c in chunks)


def test_streams_text_finish_reason_and_usage(fake: FakeOpenAI) -> None:
    fake.add(Reply("Hello there, friend."))
    chunks = collect(adapter(fake.url, Recorder()))
    assert text_of(chunks) == "Hello there, friend."
    assert [c.finish_reason for c in chunks if c.finish_reason] == ["stop"]
    usage = [c for c in chunks if c.prompt_tokens is not None]
    assert len(usage) == 1 and usage[0].completion_tokens == 3
    body = fake.chat_requests[0].body
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert body["model"] == "test-model"
    assert body["messages"] == [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hello"}]


def test_429_with_retry_after_is_retried_visibly_then_answers(fake: FakeOpenAI) -> None:
    fake.add(Reply(status=429, headers={"Retry-After": "2"}), Reply(status=429, headers={"retry-after-ms": "250"}),
             Reply("finally"))
    recorder = Recorder()
    assert text_of(collect(adapter(fake.url, recorder))) == "finally"
    assert recorder.sleeps == [2.0, 0.25]
    assert [(n.attempt, n.retries, n.reason) for n in recorder.notices] == [
        (1, 3, "rate limited (429)"), (2, 3, "rate limited (429)")]
    assert [r.headers["x-stainless-retry-count"] for r in fake.chat_requests] == ["0", "1", "2"]


def test_retry_after_past_the_limit_fails_at_once_as_quota(fake: FakeOpenAI) -> None:
    fake.add(Reply(status=429, headers={"Retry-After": "600"}))
    recorder = Recorder()
    with pytest.raises(ChatFatal, match="Rate limited.*600 s"):
        collect(adapter(fake.url, recorder))
    assert recorder.sleeps == [] and len(fake.chat_requests) == 1, "no wait, no second request"


def test_insufficient_quota_is_final(fake: FakeOpenAI) -> None:
    fake.add(Reply(status=429, error={"message": "You exceeded your quota", "code": "insufficient_quota"}))
    with pytest.raises(ChatFatal, match="quota is exhausted"):
        collect(adapter(fake.url, Recorder()))
    assert len(fake.chat_requests) == 1


def test_server_errors_are_retried_with_backoff_then_reported(fake: FakeOpenAI) -> None:
    fake.add(*[Reply(status=503)] * 3)
    recorder = Recorder()
    with pytest.raises(ChatRetryable, match="kept failing \\(503"):
        collect(adapter(fake.url, recorder, max_retries=2))
    assert len(fake.chat_requests) == 3
    assert [n.reason for n in recorder.notices] == ["server error (503)"] * 2
    assert 0.3 <= recorder.sleeps[0] <= 0.5 and 0.7 <= recorder.sleeps[1] <= 1.0


@pytest.mark.parametrize(
    ("status", "message"),
    [
        (401, "refused the API key \\(401\\): check OPENAI_API_KEY"),
        (400, "exceeds the server's context of 10 tokens \\(400: .*maximum context length"),
        (404, "is the model name 'test-model' right"),
        (403, "Access denied \\(403"),
    ],
)
def test_client_errors_are_not_retried_and_say_what_to_fix(fake: FakeOpenAI, status: int, message: str) -> None:
    detail = f"This model's maximum context length is 10 tokens; key {CANARY}"
    fake.add(Reply(status=status, error={"message": detail, "type": "invalid_request_error"}))
    recorder = Recorder()
    with pytest.raises(ChatFatal, match=message) as caught:
        collect(adapter(fake.url, recorder))
    assert CANARY not in str(caught.value)
    assert len(fake.chat_requests) == 1 and recorder.notices == []


def test_404_without_v1_in_the_base_url_asks_about_it(fake: FakeOpenAI) -> None:
    with pytest.raises(ChatFatal, match="is /v1 missing from the base URL"):
        collect(adapter(fake.url.removesuffix("/v1"), Recorder()))


def test_a_stream_broken_mid_reply_yields_the_partial_text_then_raises(fake: FakeOpenAI) -> None:
    fake.add(Reply("one two three four", cut_after=2))
    received: list[str] = []
    with pytest.raises(ChatRetryable, match="broke off mid-stream.*/retry"):
        for chunk in adapter(fake.url, Recorder()).stream(HELLO, "m"):
            received.append(chunk.text)
    assert "".join(received) == "one two "


def test_a_stream_without_finish_reason_just_ends(fake: FakeOpenAI) -> None:
    fake.add(Reply("cut short", finish_reason=None))
    chunks = collect(adapter(fake.url, Recorder()))
    assert text_of(chunks) == "cut short"
    assert all(c.finish_reason is None for c in chunks)


def test_length_finish_reason_and_missing_usage_are_passed_on(fake: FakeOpenAI) -> None:
    fake.add(Reply("long", finish_reason="length", usage=False))
    chunks = collect(adapter(fake.url, Recorder()))
    assert [c.finish_reason for c in chunks if c.finish_reason] == ["length"]
    assert all(c.prompt_tokens is None for c in chunks)


def test_a_server_refusing_stream_options_is_asked_again_without_them(fake: FakeOpenAI) -> None:
    refusal = {"message": "Unrecognized request argument supplied: stream_options"}
    fake.add(Reply(status=400, error=refusal), Reply("fine"), Reply("again"))
    chat = adapter(fake.url, Recorder())
    assert text_of(collect(chat)) == "fine"
    assert text_of(collect(chat)) == "again"
    assert ["stream_options" in r.body for r in fake.chat_requests] == [True, False, False]


def test_a_closed_port_is_a_retryable_connection_error() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    recorder = Recorder()
    with pytest.raises(ChatRetryable, match=f"Cannot reach the model server at http://127.0.0.1:{port}/v1"):
        collect(adapter(f"http://127.0.0.1:{port}/v1", recorder, max_retries=1))
    assert [n.reason for n in recorder.notices] == ["connection failed"]


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({"retry-after-ms": "1500", "retry-after": "9"}, 1.5),
        ({"retry-after": "3"}, 3.0),
        ({"retry-after": "0.5"}, 0.5),
        ({"retry-after": "soon"}, None),
        ({}, None),
    ],
)
def test_retry_after_parsing(headers: dict[str, str], expected: float | None) -> None:
    assert retry_after(headers) == expected


def test_retry_after_as_an_http_date() -> None:
    sent = time.time()
    wait = retry_after({"retry-after": formatdate(sent + 30, usegmt=True)})
    read = time.time()
    due = int(sent + 30)  # an HTTP date has whole seconds; the wait is counted from the clock while it is read
    assert wait is not None and due - read <= wait <= due - sent


def test_the_fake_serves_embeddings_through_the_sdk(fake: FakeOpenAI) -> None:
    from agent.adapters.openai_embedder import OpenAIEmbedder

    embedder = OpenAIEmbedder(OpenAI(api_key=CANARY, base_url=fake.url), "text-embedding-3-small")
    tea, tea_again, trains = embedder.embed(["I like green tea", "green tea I like", "trains run late"])
    assert sum(a * b for a, b in zip(tea, tea_again, strict=True)) > 0.99
    assert sum(a * b for a, b in zip(tea, trains, strict=True)) < 0.5
    assert fake.requests[0].path == "/v1/embeddings"
