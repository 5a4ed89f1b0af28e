"""A base URL that points at something other than a model server: answers that retrying cannot change (404, 405,
501) fail at once and say what to check; and the banner names the model the server says it serves."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from openai import OpenAI

from agent.adapters.openai_chat import OpenAIChat
from agent.domain import Message
from agent.errors import ChatFatal, SystemRoleRefused
from tests.e2e_helpers import Terminal, agent, agent_env
from tests.fake_openai import FakeOpenAI, Reply


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(fallback=Reply("Noted.")) as server:
        yield server


@pytest.mark.parametrize("status", [405, 501])
def test_405_and_501_are_not_retried_and_ask_whether_this_is_a_model_server(fake: FakeOpenAI, status: int) -> None:
    fake.add(Reply(status=status))
    sleeps: list[float] = []
    chat = OpenAIChat(OpenAI(api_key="not-needed", base_url=fake.url, timeout=60), max_retries=3, sleep=sleeps.append)
    with pytest.raises(ChatFatal, match=f"answered {status} .*is this an OpenAI-compatible server\\? The base URL "
                                        "usually ends in /v1"):
        list(chat.stream([Message("user", "hello")], "m"))
    assert len(fake.chat_requests) == 1 and sleeps == []


@pytest.mark.parametrize("status", [400, 500])
def test_a_template_that_refuses_the_system_role_is_told_apart_and_not_retried(fake: FakeOpenAI, status: int) -> None:
    fake.add(Reply(status=status, error={"message": "System role not supported", "type": "BadRequestError"}))
    chat = OpenAIChat(OpenAI(api_key="not-needed", base_url=fake.url, timeout=60), max_retries=3, sleep=lambda s: None)
    with pytest.raises(SystemRoleRefused, match="refuses system messages .*set AGENT_SYSTEM_PROMPT=user"):
        list(chat.stream([Message("system", "be brief"), Message("user", "hello")], "m"))
    assert len(fake.chat_requests) == 1


class PlainWebServer:
    """``python -m http.server`` on a free port: it answers every POST with 501 and an HTML page."""

    def __init__(self, root: Path) -> None:
        self.posts = 0  # chat requests
        outer = self

        class Handler(SimpleHTTPRequestHandler):
            def __init__(self, *args: Any, **kwargs: Any) -> None:
                super().__init__(*args, directory=str(root), **kwargs)

            def do_POST(self) -> None:  # what http.server answers to a POST, counted
                if self.path.endswith("/chat/completions"):
                    outer.posts += 1
                self.send_error(501, f"Unsupported method ({self.command!r})")

            def log_message(self, format: str, *args: Any) -> None:
                return

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, args=(0.02,), daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"


@pytest.mark.slow
def test_a_plain_web_server_on_the_port_is_reported_at_once_not_retried(tmp_path: Path) -> None:
    web = PlainWebServer(tmp_path)
    try:
        result = agent({**agent_env(FakeOpenAI()), "OPENAI_BASE_URL": web.url}, "--no-memory", stdin="hello\n")
    finally:
        web.server.shutdown()
        web.server.server_close()
    assert result.returncode == 1
    assert f"error: The server at {web.url} answered 501 (Unsupported method ('POST')) to a chat request: is this " \
           "an OpenAI-compatible server? The base URL usually ends in /v1 (OPENAI_BASE_URL)." in result.stderr
    assert "retrying" not in result.stderr and "try again later" not in result.stderr
    assert web.posts == 1


@pytest.mark.slow
def test_the_banner_names_the_model_the_server_serves(fake: FakeOpenAI) -> None:
    fake.routes["/v1/models"] = {"object": "list", "data": [{"id": "/models/gemma-3-270m-q4_k_m.gguf"}]}
    with Terminal(agent_env(fake), "--no-memory") as term:
        term.expect("model gemma-3-270m-q4_k_m.gguf · memory off")
        term.expect("›")
        term.type("\x04")
        assert term.wait() == 0
