"""The client of a plain-http server on this machine loads no CA bundle, and trusts no certificate should it ever be
sent to https; every other endpoint gets the SDK's own client, which verifies against the bundle."""

from __future__ import annotations

import ssl

import pytest

from agent.adapters.openai_client import make_client
from agent.config import load_settings
from agent.wiring import endpoint
from tests.fake_openai import FakeOpenAI, Reply


def tls_context(base_url: str) -> ssl.SSLContext:
    client = make_client(endpoint(load_settings({"base_url": base_url, "api_key": "sk-test-key"})))
    context: ssl.SSLContext = client._client._transport._pool._ssl_context
    return context


@pytest.mark.parametrize("base_url", ["http://127.0.0.1:8080/v1", "http://localhost:11434/v1", "http://[::1]:8000/v1"])
def test_a_plain_http_server_on_this_machine_gets_a_context_that_trusts_nothing(base_url: str) -> None:
    context = tls_context(base_url)
    assert context.cert_store_stats()["x509_ca"] == 0, "the CA bundle was not loaded"
    assert context.verify_mode == ssl.CERT_REQUIRED and context.check_hostname, "a redirect to https fails closed"


@pytest.mark.parametrize("base_url", ["https://api.openai.com/v1", "https://127.0.0.1:8443/v1",
                                      "http://192.168.1.20:11434/v1"])
def test_any_other_endpoint_verifies_against_the_ca_bundle(base_url: str) -> None:
    context = tls_context(base_url)
    assert context.cert_store_stats()["x509_ca"] > 0
    assert context.verify_mode == ssl.CERT_REQUIRED and context.check_hostname


def test_the_local_client_talks_to_the_server() -> None:
    with FakeOpenAI(fallback=Reply("Hello there.")) as fake:
        client = make_client(endpoint(load_settings({"base_url": fake.url})))
        reply = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
    assert reply.choices[0].message.content == "Hello there."
