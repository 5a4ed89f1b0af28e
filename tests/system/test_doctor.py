"""``agent doctor``: each check of the model server, the embedder, the data directory and the store, printed with
ok/warn/fail and what to fix; exit 1 when one failed. The checks over fakes of their probes, with no server, are
tests/unit/test_doctor_checks.py."""

from __future__ import annotations

import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agent.cli import app
from agent.config import load_settings
from agent.wiring import open_memory
from tests.fake_openai import FakeOpenAI, Reply
from tests.helpers_store import vectors_of

pytestmark = pytest.mark.usefixtures("model_cache")

NO_SYSTEM_TEMPLATE = "{% for m in messages %}<start_of_turn>{{ m.content }}<end_of_turn>{% endfor %}"


@pytest.fixture
def llama_like() -> Iterator[FakeOpenAI]:
    """A server that publishes what llama.cpp's ``llama-server`` does: one model by path, ``/props``."""
    with FakeOpenAI(fallback=Reply("OK.")) as server:
        server.routes["/v1/models"] = {"object": "list", "data": [{"id": "/models/gemma-3-270m.gguf"}]}
        server.routes["/props"] = {"default_generation_settings": {"n_ctx": 2048},
                                   "chat_template": NO_SYSTEM_TEMPLATE}
        yield server


def doctor(monkeypatch: pytest.MonkeyPatch, base_url: str) -> tuple[int, list[str]]:
    monkeypatch.setenv("OPENAI_BASE_URL", base_url)
    monkeypatch.setenv("AGENT_EMBEDDER", "local")
    result = CliRunner().invoke(app, ["doctor"])
    return result.exit_code, result.output.splitlines()


def test_a_small_llama_cpp_server_passes_with_a_warning_about_its_context(
    llama_like: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    code, lines = doctor(monkeypatch, llama_like.url)
    assert code == 0, lines
    assert lines[:2] == [f"ok    model server: reachable: {llama_like.url} (llama.cpp)",
                         "ok    model server: model served: /models/gemma-3-270m.gguf (the only one; "
                         "AGENT_MODEL=gpt-4o-mini is answered by it on llama.cpp)"]
    assert lines[2].startswith("ok    model server: streaming: a reply of up to 8 tokens streamed in")
    assert lines[3].startswith("warn  model server: context size: 2,048 tokens, less than the agent's budget")
    assert lines[4] == "      fix: give the server a context of 8,074 tokens, or lower AGENT_CONTEXT_TOKENS"
    assert lines[5] == "ok    model server: system role: the server's chat template has no system role; the memory " \
                       "goes into the first user message (the server's chat template has no system role)"
    assert lines[6].startswith("ok    embedder: loads and embeds: local (all-MiniLM-L6-v2")
    assert "ok    store: index matches ledger: 0 memories of default" in lines
    assert lines[-1] == "0 failed, 1 warnings"
    (streamed,) = llama_like.chat_requests  # the published template answers for the system role: nothing counted
    assert streamed.body["stream"] and streamed.body["max_tokens"] == 8


def test_nothing_listening_fails_says_what_to_fix_and_checks_the_rest(monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    code, lines = doctor(monkeypatch, f"http://127.0.0.1:{port}/v1")
    assert code == 1
    assert lines[0].startswith(f"fail  model server: reachable: http://127.0.0.1:{port}/v1: ")
    assert "Connection refused" in lines[0]
    assert lines[1] == "      fix: start the server, or set OPENAI_BASE_URL to where it listens"
    assert lines[2].startswith("ok    embedder: loads and embeds")
    assert lines[-1].startswith("1 failed")


def test_a_store_another_process_holds_loose_permissions_are_warnings(
    llama_like: FakeOpenAI, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    data.mkdir(mode=0o755)
    data.chmod(0o755)
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys; from pathlib import Path; from agent.locking import acquire; "
         f"acquire(Path({str(data / 'chroma')!r}), 5); print('held', flush=True); sys.stdin.read()"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        code, lines = doctor(monkeypatch, llama_like.url)
    finally:
        holder.communicate("")
    assert code == 0, lines
    assert f"warn  data directory: permissions: 1 entry under {data} can be read by other users (e.g. {data})" \
        in lines
    assert f"      fix: chmod -R go-rwx {data} (the next chat does it too)" in lines
    assert any(line.startswith(f"ok    store: lock: another agent process (pid {holder.pid}) holds the memory "
                               "index; a chat started now works from the ledger") for line in lines), lines


def test_an_index_that_lost_a_memory_of_the_ledger_is_a_warning(
    llama_like: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENT_EMBEDDER", "local")
    service = open_memory(load_settings())
    record = service.add("I can't eat peanuts")
    vectors_of(service).delete([record.id])
    code, lines = doctor(monkeypatch, llama_like.url)
    assert "warn  store: index matches ledger: 1 memories in the ledger, 0 in the index" in lines
    assert "      fix: the next chat re-indexes them (or run `agent memories rebuild`)" in lines


def test_a_check_that_breaks_is_a_failure_of_its_area_and_the_others_still_run(
    llama_like: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(kind: str, settings: object) -> object:
        raise RuntimeError("the ONNX runtime is missing a symbol")

    monkeypatch.setattr("agent.wiring.build_embedder", broken)
    code, lines = doctor(monkeypatch, llama_like.url)
    assert code == 1
    assert "fail  embedder: check: RuntimeError: the ONNX runtime is missing a symbol" in lines
    assert any(line.startswith("ok    data directory: permissions") for line in lines)
