"""The OpenAI embedder at the HTTP transport layer: one request per batch, order kept, vectors normalised."""

from __future__ import annotations

import json
import math

import httpx2
import pytest
from openai import OpenAI

from agent.adapters.openai_embedder import OpenAIEmbedder
from agent.errors import EmbeddingError


def client_for(handler: object) -> OpenAI:
    transport = httpx2.MockTransport(handler)  # type: ignore[arg-type]
    return OpenAI(api_key="sk-test", base_url="http://embed.test/v1", max_retries=0,
                  http_client=httpx2.Client(transport=transport))


def test_one_request_per_batch_in_order_and_normalised() -> None:
    requests: list[dict[str, object]] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        body = json.loads(request.content)
        requests.append(body)
        # Answer out of order, with unnormalised vectors, as some servers do.
        data = [{"object": "embedding", "index": i, "embedding": [float(i + 1), 0.0, 1.0]}
                for i in range(len(body["input"]))][::-1]
        return httpx2.Response(200, json={"object": "list", "data": data, "model": body["model"],
                                          "usage": {"prompt_tokens": 1, "total_tokens": 1}})

    embedder = OpenAIEmbedder(client_for(handler), "text-embedding-3-small")
    vectors = embedder.embed(["a", "b", "c"])
    assert len(requests) == 1
    assert requests[0]["input"] == ["a", "b", "c"]
    assert requests[0]["model"] == "text-embedding-3-small"
    assert [round(v[0] / v[2], 6) for v in vectors] == [1.0, 2.0, 3.0]
    assert all(math.isclose(sum(x * x for x in v), 1.0) for v in vectors)
    assert embedder.dimension == 1536


def test_unknown_model_learns_its_dimension() -> None:
    def handler(request: httpx2.Request) -> httpx2.Response:
        n = len(json.loads(request.content)["input"])
        data = [{"object": "embedding", "index": i, "embedding": [1.0] * 7} for i in range(n)]
        return httpx2.Response(200, json={"object": "list", "data": data, "model": "m",
                                          "usage": {"prompt_tokens": 1, "total_tokens": 1}})

    assert OpenAIEmbedder(client_for(handler), "nomic-embed-text").dimension == 7


def test_server_error_becomes_an_embedding_error() -> None:
    def handler(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(500, json={"error": {"message": "not started for embeddings"}})

    with pytest.raises(EmbeddingError, match="nomic-embed-text"):
        OpenAIEmbedder(client_for(handler), "nomic-embed-text").embed(["x"])
