"""The doctor's checks over their probes alone (``agent.app.doctor``): how the system role is told from a published
chat template or by counting prompt tokens, and one check that breaks failing its area only. ``agent doctor`` run
against a fake server and the real model is tests/system/test_doctor.py."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import pytest

from agent.app.doctor import OpenStore, PingChat, Probes, run, system_role_check
from agent.config import load_settings
from agent.domain import Message
from agent.ports import ChatChunk, Embedder, Notify
from agent.server import ServerInfo, server_profile

NO_SYSTEM_TEMPLATE = "{% for m in messages %}<start_of_turn>{{ m.content }}<end_of_turn>{% endfor %}"


@pytest.mark.parametrize(
    ("counts", "setting", "status", "says"),
    [
        ((12, 12), "system", "fail", "drops system messages, and the memory with them"),
        ((12, 12), "user", "ok", "drops system messages; the memory goes into the first user message"),
        ((12, 30), "system", "ok", "keeps system messages; the memory goes into the system message"),
        ((None, None), "auto", "warn", "reports no token usage"),
    ],
)
def test_the_system_role_is_told_by_the_prompt_tokens_after_a_short_and_a_long_system_message(
    counts: tuple[int | None, int | None], setting: str, status: str, says: str
) -> None:
    answers = iter(counts)
    profile = server_profile(ServerInfo(), model="m", system_prompt=setting, max_tokens=64)
    check = system_role_check(lambda messages: next(answers), profile)
    assert check.status == status and says in check.detail
    assert (check.fix == "set AGENT_SYSTEM_PROMPT=user") == (status == "fail")


def default_system_template(default_words: int) -> Callable[[list[Message]], int]:
    """The prompt tokens (a word each) of a template that keeps system messages and puts a default system prompt
    of its own in front when none is sent, as SmolLM2's does ("You are a helpful AI assistant named SmolLM...")."""
    def count(messages: list[Message]) -> int:
        system = [m for m in messages if m.role == "system"]
        return sum(len(m.content.split()) for m in messages) + (0 if system else default_words)
    return count


@pytest.mark.parametrize("default_words", range(1, 80))
def test_a_template_with_a_default_system_prompt_of_any_length_keeps_system_messages(default_words: int) -> None:
    """The issue's SmolLM2: its default system prompt was exactly as long as the doctor's system message, so the
    request without one counted the same tokens as the request with one, and the doctor said it dropped them."""
    profile = server_profile(ServerInfo(), model="m", system_prompt="auto", max_tokens=64)
    check = system_role_check(default_system_template(default_words), profile)
    assert (check.status, check.detail.split(";")[0]) == ("ok", "the chat template keeps system messages")


@pytest.mark.parametrize(
    ("template", "setting", "status", "says"),
    [
        ("{% if m.role == 'system' %}<sys>{% endif %}{{ m.content }}", "auto", "ok", "has a system role"),
        ("{{ if .System }}{{ .System }}{{ end }}{{ .Prompt }}", "auto", "ok", "has a system role"),
        (NO_SYSTEM_TEMPLATE, "auto", "ok", "has no system role; the memory goes into the first user message"),
        (NO_SYSTEM_TEMPLATE, "system", "warn", "has no system role: it may drop a system message"),
    ],
)
def test_a_published_template_tells_the_system_role_without_counting(
    template: str, setting: str, status: str, says: str
) -> None:
    def never(messages: list[Message]) -> int:
        raise AssertionError("counted prompt tokens")

    profile = server_profile(ServerInfo("llama.cpp", template=template), model="m", system_prompt=setting,
                             max_tokens=64)
    check = system_role_check(never, profile)
    assert check.status == status and says in check.detail, check


def test_a_template_published_by_its_name_alone_is_told_by_counting() -> None:
    """llama.cpp's ``--chat-template gemma`` publishes "gemma": a name, not a source to read a role in."""
    answers = iter((20, 60))
    profile = server_profile(ServerInfo("llama.cpp", template="gemma"), model="m", system_prompt="auto",
                             max_tokens=64)
    check = system_role_check(lambda messages: next(answers), profile)
    assert check.status == "ok" and check.detail == "the chat template keeps system messages; the memory goes into " \
        "the first user message (the server's chat template has no system role)"


class LlamaLike:
    """The probes of a llama.cpp server serving one model by path, with a 2,048-token context and a published
    template without a system role; its chat streams "OK." and never needs to count."""

    def check_endpoint(self) -> None:
        pass

    def probe(self) -> ServerInfo:
        return ServerInfo("llama.cpp", models=("/models/gemma-3-270m.gguf",), context=2048,
                          template=NO_SYSTEM_TEMPLATE)

    def chat(self, max_tokens: int) -> PingChat:
        assert max_tokens == 8
        return self

    def stream(self, messages: Sequence[Message], model: str) -> Iterator[ChatChunk]:
        yield ChatChunk("OK.")
        yield ChatChunk(finish_reason="stop")

    def prompt_tokens(self, messages: Sequence[Message], model: str) -> int | None:
        raise AssertionError("counted prompt tokens: the published template answers for the system role")


class HeldStore:
    """A store another process holds (pid 4242): the doctor says so and opens nothing."""

    def holder(self) -> str | None:
        return "4242"

    def open(self, notify: Notify) -> OpenStore:
        raise AssertionError("opened a store another process holds")


def broken_embedder(kind: str) -> Embedder:
    raise RuntimeError("the ONNX runtime is missing a symbol")


def test_every_area_is_checked_through_its_probe_and_one_that_breaks_fails_its_area_alone(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir(mode=0o700)
    settings = load_settings({"base_url": "http://127.0.0.1:8080/v1", "data_dir": str(data), "embedder": "local"})
    checks = run(settings, Probes(LlamaLike(), broken_embedder, HeldStore(), data))
    assert [(c.area, c.name) for c in checks] == [
        ("model server", "reachable"), ("model server", "model served"), ("model server", "streaming"),
        ("model server", "context size"), ("model server", "system role"), ("embedder", "check"),
        ("data directory", "permissions"), ("data directory", "free disk"), ("store", "lock"),
    ]
    assert [c.status for c in checks if c.name != "free disk"] == ["ok", "ok", "ok", "warn", "ok", "fail", "ok", "ok"]
    assert checks[2].detail.endswith("(3 characters)")
    assert checks[5].detail == "RuntimeError: the ONNX runtime is missing a symbol"
    assert checks[-1].detail.startswith("another agent process (pid 4242) holds the memory index")
