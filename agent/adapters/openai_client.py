"""The one place an ``openai.OpenAI`` client is built, for chat and embeddings alike, and the one place its API key
is taken out of the messages they report."""

from __future__ import annotations

import contextlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from agent.errors import ConfigError

LOCAL_HOSTS = {"localhost", "127.0.0.1", "::1", "0.0.0.0"}
_KEY_SHAPED = re.compile(r"\bsk-[A-Za-z0-9_*-]{6,}")


def redact(text: str, key: str | None) -> str:
    """``text`` without the API key, for every message and log line built from a server's answer: some servers
    echo the key they refused. The configured ``key`` (when it is long enough to be one) and anything shaped like
    an OpenAI key become ``sk-***``."""
    if key and len(key) >= 8:
        text = text.replace(key, "sk-***")
    return _KEY_SHAPED.sub("sk-***", text)


@dataclass(frozen=True)
class Endpoint:
    """Where the model server listens and how to ask it, as plain values the composition root takes from the
    settings (the adapters know no ``Settings``): ``settings_file`` is only named in the hint of an error."""

    base_url: str | None
    api_key: str | None
    timeout: float
    max_retries: int
    settings_file: Path


def is_local(base_url: str | None) -> bool:
    return bool(base_url) and (urlparse(base_url).hostname or "") in LOCAL_HOSTS


def check_endpoint(endpoint: Endpoint) -> None:
    """Raise ``ConfigError`` unless a model endpoint is usable; cheap, so the chat checks it before its prompt."""
    if not endpoint.api_key and not endpoint.base_url:
        raise ConfigError(
            "No model endpoint is configured: set OPENAI_API_KEY for OpenAI, or OPENAI_BASE_URL for an "
            "OpenAI-compatible server (e.g. http://127.0.0.1:11434/v1 for Ollama), in the environment, in "
            f"{endpoint.settings_file} or in .env."
        )
    if not endpoint.api_key and not is_local(endpoint.base_url):
        raise ConfigError(
            f"OPENAI_BASE_URL is {endpoint.base_url}, which is not on this machine, and OPENAI_API_KEY is not set: "
            "set the key the server expects."
        )


def _settle_httpx() -> None:
    """Wait until another thread's import of ``httpx`` is done. The openai SDK looks ``httpx`` up in
    ``sys.modules`` without importing it (to accept clients of that older library, which chromadb uses): while
    chromadb, opening memory on another thread of the chat, was still importing it, the SDK found the module half
    made and the chat's first turn failed with "partially initialized module 'httpx' has no attribute 'URL'" (one
    start in about twenty, under load). An import of our own waits on the module's import lock instead."""
    with contextlib.suppress(ImportError):
        import httpx  # noqa: F401


def make_client(endpoint: Endpoint) -> Any:
    """An OpenAI SDK client for the endpoint; a server on localhost needs no key."""
    check_endpoint(endpoint)
    _settle_httpx()
    from openai import OpenAI

    return OpenAI(
        api_key=endpoint.api_key or "not-needed",
        base_url=endpoint.base_url,
        timeout=endpoint.timeout,
        max_retries=endpoint.max_retries,
        http_client=_plain_local_client(endpoint.base_url),
    )


def _plain_local_client(base_url: str | None) -> Any:
    """For a server on this machine spoken to in plain http, the SDK's HTTP client with a TLS context that trusts
    no certificate; for any other endpoint None (the SDK's own). The SDK's default context loads the CA bundle,
    23-27 ms of CPU at every start, for a connection that never uses TLS; should the server redirect to https, the
    request fails closed instead of going out unverified."""
    if not (base_url and is_local(base_url) and urlparse(base_url).scheme == "http"):
        return None
    import ssl

    from openai import DefaultHttpxClient

    return DefaultHttpxClient(verify=ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT))  # CERT_REQUIRED, no CA loaded
