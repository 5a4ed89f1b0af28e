"""Asks an OpenAI-compatible server what it is: the models it lists, and where it publishes them, its context size
and chat template (vLLM's ``max_model_len`` in ``/v1/models``, llama.cpp's ``GET /props``, Ollama's
``POST /api/show``).

Plain ``urllib`` with a short timeout rather than the OpenAI SDK: the probe runs while the chat starts, before the
SDK is imported, and these routes are not OpenAI's. Every failure is an answer (``ServerInfo.error``), never an
exception: a server that publishes nothing is still a server to chat with.
"""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.request
from typing import Any

from agent.adapters.openai_client import redact
from agent.server import ServerInfo

OPENAI_BASE = "https://api.openai.com/v1"
PROBE_TIMEOUT = 3.0


def root_of(base_url: str) -> str:
    """The server's root: the base URL without its ``/v1``."""
    return re.sub(r"/v1/?$", "", base_url.rstrip("/"))


def _fetch(url: str, key: str | None, timeout: float, body: dict[str, Any] | None = None) -> Any:
    """The JSON at ``url`` (POSTed ``body`` if given); raises ``OSError`` or ``ValueError``."""
    headers = {"Accept": "application/json"}
    if key:
        headers["Authorization"] = f"Bearer {key}"
    data = None if body is None else json.dumps(body).encode()
    if data is not None:
        headers["Content-Type"] = "application/json"
    request = urllib.request.Request(url, data=data, headers=headers)
    with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310 (the configured endpoint)
        return json.loads(response.read(4_000_000))


def _why(exc: Exception, key: str | None) -> str:
    if isinstance(exc, urllib.error.HTTPError):
        return f"{exc.code} {exc.reason}"
    if isinstance(exc, urllib.error.URLError):
        return redact(str(exc.reason), key)
    return redact(f"{type(exc).__name__}: {exc}", key)


def probe(base_url: str | None, key: str | None, model: str, timeout: float = PROBE_TIMEOUT) -> ServerInfo:
    """What the server at ``base_url`` (OpenAI's own when None) says about itself and about ``model``; a few quick
    GETs, local routes only for a base URL that is not OpenAI's own."""
    base = (base_url or OPENAI_BASE).rstrip("/")
    listed: list[dict[str, Any]] = []
    error, unreachable = None, False
    try:
        data = _fetch(f"{base}/models", key, timeout).get("data", [])
        listed = [m for m in data if isinstance(m, dict) and "id" in m]
    except (OSError, ValueError, AttributeError) as exc:
        error, unreachable = _why(exc, key), isinstance(exc, OSError) and not isinstance(exc, urllib.error.HTTPError)
    models = tuple(str(m["id"]) for m in listed)
    # vLLM lists each model with the context it was started with.
    served = [m for m in listed if m["id"] == model] or (listed if len(listed) == 1 else [])
    if served and isinstance(served[0].get("max_model_len"), int):
        return ServerInfo("vllm", models, served[0]["max_model_len"])
    if base == OPENAI_BASE or unreachable:
        return ServerInfo(models=models, error=error, unreachable=unreachable)
    root = root_of(base)
    try:
        props = _fetch(f"{root}/props", key, timeout)
        defaults = props.get("default_generation_settings") or {}
        context = defaults.get("n_ctx") or props.get("n_ctx")
        template = props.get("chat_template")
        return ServerInfo("llama.cpp", models, int(context) if context else None,
                          template if isinstance(template, str) and template else None, error)
    except (OSError, ValueError, AttributeError, TypeError):
        pass
    try:
        shown = _fetch(f"{root}/api/show", key, timeout, {"model": model})
    except (OSError, ValueError):
        shown = None
    if not isinstance(shown, dict):
        return ServerInfo(models=models, error=error)
    template = shown.get("template")
    return ServerInfo("ollama", models, _ollama_context(shown), template if isinstance(template, str) and template
                      else None, error)


def _ollama_context(shown: dict[str, Any]) -> int | None:
    """``num_ctx`` of the model's parameters: what Ollama runs it with when set (else its own default, 2,048 or
    4,096 tokens depending on the version, which it does not publish)."""
    match = re.search(r"^num_ctx\s+(\d+)", str(shown.get("parameters") or ""), re.MULTILINE)
    return int(match.group(1)) if match else None
