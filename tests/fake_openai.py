"""An OpenAI-compatible server on 127.0.0.1 for tests: scripted replies, recorded requests.

Tests talk to it through the real OpenAI SDK (``OPENAI_BASE_URL=fake.url``), so streaming, SSE parsing, status
codes, headers and broken connections all go through the same code as in production. The server replays a
script of ``Reply`` objects, one per chat request, and records every request body so a test can read the system
prompt the model received. When the script runs out it answers 500 and records the fact: a test that sends more
requests than it scripted fails loudly instead of passing on a default. ``fallback`` opts into a default reply
for end-to-end tests that do not care how many turns the model answers.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

HOLD_LIMIT = 600.0  # a reply held at ``hold_at`` and never released goes on after this: a bound on a stuck test


@dataclass
class Reply:
    """One scripted answer to a chat request.

    ``status`` other than 200 sends an error with ``error`` (default: a message naming the status) and
    ``headers`` (e.g. ``{"Retry-After": "1"}``). For a 200, the reply streams ``text`` in ``chunks`` pieces (words
    by default), waiting ``delay`` seconds before each; ``finish_reason`` None sends no finish reason and no
    ``[DONE]``; ``cut_after`` breaks the connection after that many text pieces; ``usage`` False sends no usage.
    ``wait`` holds the whole answer back that many seconds (a server that hangs before it answers). ``hold_at``
    streams the pieces before that index, then holds the rest until ``release`` (or the server stops): a reply that
    stays in the middle for as long as the test needs, so a Ctrl-C, a signal or typing sent then lands mid-reply on
    any machine, where a slow stream only makes that likely.
    """

    text: str = "ok"
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    error: dict[str, Any] | None = None
    chunks: list[str] | None = None
    finish_reason: str | None = "stop"
    cut_after: int | None = None
    delay: float = 0.0
    usage: bool = True
    wait: float = 0.0
    hold_at: int | None = None
    _released: threading.Event = field(default_factory=threading.Event, repr=False)

    def pieces(self) -> list[str]:
        return self.chunks if self.chunks is not None else re.findall(r"\S+\s*|\s+", self.text) or [""]

    def release(self) -> None:
        """Stream the rest of a reply held at ``hold_at``."""
        self._released.set()


def held_reply(text: str, words: int) -> Reply:
    """``text`` streamed as its first ``words`` words in one piece, then held (``Reply.hold_at``) until ``release``:
    a terminal shows that first piece at once, where its live display may skip pieces that come close together
    until the next one, which a held reply never sends."""
    pieces = Reply(text).pieces()
    return Reply(text, chunks=["".join(pieces[:words]), *pieces[words:]], hold_at=1)


def hashed_embedding(text: str, dimension: int = 64) -> list[float]:
    """A bag-of-words vector: texts that share words are similar, unrelated texts are not."""
    vector = [0.0] * dimension
    for word in re.findall(r"\w+", text.lower()):
        digest = hashlib.sha256(word.encode()).digest()
        vector[digest[0] % dimension] += 1.0 if digest[1] % 2 else -1.0
    norm = math.sqrt(sum(x * x for x in vector)) or 1.0
    return [x / norm for x in vector]


@dataclass
class Request:
    """One request the fake received."""

    path: str
    body: dict[str, Any]
    headers: dict[str, str]


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hangs up (Ctrl-C, a closed pool) is part of the tests, not an error to print."""


class FakeOpenAI:
    """The server and its script. Use as a context manager; ``url`` is the base URL ending in ``/v1``."""

    def __init__(self, script: list[Reply] | None = None, fallback: Reply | None = None) -> None:
        self.script: deque[Reply] = deque(script or [])
        self.fallback = fallback
        self.requests: list[Request] = []
        self.exhausted = 0
        # Embedding requests with a text containing this word answer 500 (an embedding server that fails).
        self.failing_word: str | None = None
        # JSON answers by path (``/v1/models``, llama.cpp's ``/props``, Ollama's ``/api/show``); others answer 404.
        # ``routes`` wins over ``models``.
        self.routes: dict[str, dict[str, Any]] = {}
        # What GET /v1/models lists; None answers 404, as a server without that route does.
        self.models: list[str] | None = ["fake-small", "fake-large"]
        self._lock = threading.Lock()
        self._served: list[Reply] = []
        self._server = _QuietServer(("127.0.0.1", 0), _handler_for(self))
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.02,), daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __enter__(self) -> FakeOpenAI:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        for reply in self._served:  # a reply still held ends, and its thread with it
            reply.release()
        self._server.shutdown()
        self._server.server_close()

    def add(self, *replies: Reply) -> None:
        with self._lock:
            self.script.extend(replies)

    def next_reply(self) -> Reply | None:
        with self._lock:
            if self.script:
                reply = self.script.popleft()
                self._served.append(reply)
                return reply
            self.exhausted += 1
            if self.fallback is not None:
                self._served.append(self.fallback)
            return self.fallback

    def record(self, request: Request) -> None:
        with self._lock:
            self.requests.append(request)

    @property
    def chat_requests(self) -> list[Request]:
        return [r for r in self.requests if r.path.endswith("/chat/completions")]

    def system_prompts(self) -> list[str]:
        """The first system message of every chat request, in order."""
        prompts = []
        for request in self.chat_requests:
            systems = [m["content"] for m in request.body["messages"] if m["role"] == "system"]
            prompts.append(systems[0] if systems else "")
        return prompts

    def user_messages(self, index: int = -1) -> list[str]:
        """The user messages of one chat request (the last by default)."""
        return [m["content"] for m in self.chat_requests[index].body["messages"] if m["role"] == "user"]


def _sse(payload: dict[str, Any] | str) -> bytes:
    data = payload if isinstance(payload, str) else json.dumps(payload)
    return f"data: {data}\n\n".encode()


def _chunk(model: str, delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


def _usage(body: dict[str, Any], reply: Reply) -> dict[str, int]:
    prompt = sum(len(str(m.get("content", "")).split()) for m in body.get("messages", []))
    completion = len(reply.text.split())
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


def _handler_for(fake: FakeOpenAI) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # The headers and the body are two writes: with Nagle's algorithm the body waited for the client's delayed
        # ACK of the headers, 40 ms on every request (measured: an embedding took 49 ms, 2.5 ms without).
        disable_nagle_algorithm = True

        def log_message(self, format: str, *args: Any) -> None:
            return

        def do_GET(self) -> None:
            fake.record(Request(self.path, {}, {k.lower(): v for k, v in self.headers.items()}))
            if self.path in fake.routes:
                self._json(200, fake.routes[self.path])
            elif self.path == "/v1/models" and fake.models is not None:
                data = [{"id": name, "object": "model", "created": 0, "owned_by": "fake"} for name in fake.models]
                self._json(200, {"object": "list", "data": data})
            else:
                self._json(404, {"error": {"message": f"no route {self.path}", "type": "invalid_request_error"}})

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            data = self.rfile.read(length)
            if len(data) < length:  # the client went away mid-request (a killed agent): nothing arrived to record
                self.close_connection = True
                return
            body = json.loads(data or b"{}")
            fake.record(Request(self.path, body, {k.lower(): v for k, v in self.headers.items()}))
            if self.path == "/v1/embeddings":
                self._embeddings(body)
            elif self.path == "/v1/chat/completions":
                self._chat(body)
            elif self.path in fake.routes:
                self._json(200, fake.routes[self.path])
            else:
                self._json(404, {"error": {"message": f"no route {self.path}", "type": "invalid_request_error"}})

        def _json(self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for key, value in (headers or {}).items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(data)

        def _embeddings(self, body: dict[str, Any]) -> None:
            texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
            if fake.failing_word is not None and any(fake.failing_word in text for text in texts):
                self._json(500, {"error": {"message": "the embedding model is overloaded", "type": "server_error"}})
                return
            data = [{"object": "embedding", "index": i, "embedding": hashed_embedding(t)} for i, t in enumerate(texts)]
            usage = {"prompt_tokens": 1, "total_tokens": 1}
            self._json(200, {"object": "list", "data": data, "model": body.get("model", ""), "usage": usage})

        def _chat(self, body: dict[str, Any]) -> None:
            reply = fake.next_reply()
            if reply is not None:
                time.sleep(reply.wait)
            if reply is None:
                self._json(500, {"error": {"message": "the fake's script ran out", "type": "server_error"}})
                return
            if reply.status != 200:
                error = reply.error or {"message": f"scripted status {reply.status}", "type": "error", "code": None}
                self._json(reply.status, {"error": error}, reply.headers)
                return
            model = body.get("model", "fake")
            if not body.get("stream"):
                message = {"role": "assistant", "content": reply.text}
                choice = {"index": 0, "message": message, "finish_reason": reply.finish_reason}
                payload = {"id": "chatcmpl-fake", "object": "chat.completion", "created": int(time.time()),
                           "model": model, "choices": [choice], "usage": _usage(body, reply)}
                self._json(200, payload)
                return
            try:
                self._stream(body, reply, model)
            except (BrokenPipeError, ConnectionResetError):
                self.close_connection = True

        def _stream(self, body: dict[str, Any], reply: Reply, model: str) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            self._send(_sse(_chunk(model, {"role": "assistant", "content": ""})))
            for n, piece in enumerate(reply.pieces()):
                if reply.cut_after is not None and n >= reply.cut_after:
                    self.close_connection = True  # no terminating chunk: the client sees a broken body
                    return
                if n == reply.hold_at:
                    reply._released.wait(HOLD_LIMIT)
                time.sleep(reply.delay)
                self._send(_sse(_chunk(model, {"content": piece})))
            if reply.finish_reason is None:
                self._end()
                return
            self._send(_sse(_chunk(model, {}, reply.finish_reason)))
            wants_usage = (body.get("stream_options") or {}).get("include_usage")
            if reply.usage and wants_usage:
                usage_chunk = {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": int(time.time()),
                               "model": model, "choices": [], "usage": _usage(body, reply)}
                self._send(_sse(usage_chunk))
            self._send(_sse("[DONE]"))
            self._end()

        def _send(self, data: bytes) -> None:
            self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            self.wfile.flush()

        def _end(self) -> None:
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()

    return Handler

