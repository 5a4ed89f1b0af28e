"""Embeddings from OpenAI (or any OpenAI-compatible server) through the SDK: one request per batch.

An error never carries the API key out: some servers echo the key they refused in their error message, so the
message is redacted (``openai_client.redact``), and the SDK's exception is not chained onto ours, because
``--debug`` prints the whole chain.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from typing import Any

from agent.adapters.openai_client import redact
from agent.errors import EmbeddingError

log = logging.getLogger(__name__)

KNOWN_DIMENSIONS = {"text-embedding-3-small": 1536, "text-embedding-3-large": 3072, "text-embedding-ada-002": 1536}
BATCH = 512


class OpenAIEmbedder:
    """``Embedder`` on ``client.embeddings.create``; vectors are L2-normalised here, whatever the server does."""

    def __init__(self, client: Any, model: str) -> None:
        self._client = client
        self._model = model
        self._dimension = KNOWN_DIMENSIONS.get(model)

    @property
    def name(self) -> str:
        return "openai"

    @property
    def model(self) -> str:
        return self._model

    @property
    def dimension(self) -> int:
        if self._dimension is None:
            self._dimension = len(self.embed(["dimension probe"])[0])
        return self._dimension

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        from openai import OpenAIError

        vectors: list[list[float]] = []
        for start in range(0, len(texts), BATCH):
            batch = list(texts[start : start + BATCH])
            try:
                response = self._client.embeddings.create(model=self._model, input=batch)
            except OpenAIError as exc:
                detail = redact(f"{type(exc).__name__}: {exc}", getattr(self._client, "api_key", None))
                log.debug("embedding request failed: %s", detail)
                raise EmbeddingError(f"The embedding request to model {self._model} failed ({detail}).") from None
            ordered = sorted(response.data, key=lambda item: item.index)
            if len(ordered) != len(batch):
                raise EmbeddingError(f"The embedding server returned {len(ordered)} vectors for {len(batch)} texts.")
            for item in ordered:
                norm = math.sqrt(sum(x * x for x in item.embedding)) or 1.0
                vectors.append([x / norm for x in item.embedding])
        if vectors and self._dimension is None:
            self._dimension = len(vectors[0])
        return vectors
