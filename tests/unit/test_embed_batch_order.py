"""A bulk embedding cut into batches by length gives each text the vector it has alone (issue 22): the batches are
padded, sorted and put back in the caller's order, and the padding is masked out of the pooling. The model here is a
stand-in whose every real token has a vector of its own and whose padding positions hold garbage, so a pad that
leaked into a vector, or a vector put back at another text's place, would show; the real model is in
``tests/integration/test_embed_batches.py``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

from agent.adapters.local_embedder import BATCH, DIMENSION, LocalEmbedder
from agent.memory.service import BULK_BATCH


@dataclass
class Encoding:
    ids: list[int]


class WordTokenizer:
    """One id a word (its length and first letters), so texts of many lengths make batches of many widths."""

    def encode_batch(self, texts: list[str]) -> list[Encoding]:
        return [Encoding([101, *(len(w) * 1000 + sum(map(ord, w[:3])) for w in text.split()), 102]) for text in texts]


class TokenModel:
    """Each real token's hidden state depends on its id alone; a padded position's is huge and random."""

    def __init__(self) -> None:
        self.widths: list[int] = []
        self.padded = 0  # positions run, padding included
        self.real = 0  # positions of real tokens
        self._noise = np.random.default_rng(0)

    def run(self, names: list[str], feeds: dict[str, Any]) -> list[Any]:
        ids, mask = feeds["input_ids"], feeds["attention_mask"]
        self.widths.append(ids.shape[1])
        self.padded += ids.size
        self.real += int(mask.sum())
        rows = np.stack([np.random.default_rng(int(i)).standard_normal(DIMENSION) for i in ids.ravel()])
        hidden = rows.reshape(*ids.shape, DIMENSION).astype(np.float32)
        pads = mask == 0
        hidden[pads] = self._noise.standard_normal((int(pads.sum()), DIMENSION)) * 1e6
        return [hidden]


@pytest.fixture
def embedder(monkeypatch: pytest.MonkeyPatch) -> tuple[LocalEmbedder, TokenModel]:
    local, model = LocalEmbedder(), TokenModel()
    monkeypatch.setattr(local, "_load", lambda: (model, WordTokenizer()))
    return local, model


def test_texts_of_every_length_batched_by_length_get_their_vectors_alone_in_the_callers_order(
        embedder: tuple[LocalEmbedder, TokenModel]) -> None:
    local, model = embedder
    texts = [" ".join(f"word{n}x{k}" for k in range(1 + (n * 37) % 90)) for n in range(3 * BATCH)]
    together = np.asarray(local.embed(texts))
    assert len(model.widths) > 3 and len(set(model.widths)) > 3, "several batches, padded to different widths"
    alone = np.asarray([local.embed([text])[0] for text in texts])
    assert np.abs(together - alone).max() < 1e-6
    assert np.allclose(np.linalg.norm(together, axis=1), 1.0, atol=1e-6)


def test_a_bulk_call_sorts_its_whole_window_by_length_so_its_batches_pad_little_and_keep_each_vector(
        embedder: tuple[LocalEmbedder, TokenModel]) -> None:
    """A bulk write hands the embedder ``BULK_BATCH`` texts a call: sorted within that window, texts of 1 to 60
    words in a random order pad a few percent, where calls of 256 (the window before) padded several times as
    much. Each text still gets its vector alone, in the caller's order."""
    local, model = embedder
    rng = np.random.default_rng(5)
    texts = [" ".join(f"w{n}x{k}" for k in range(int(rng.integers(1, 61)))) for n in range(BULK_BATCH)]
    together = np.asarray(local.embed(texts))
    wide = model.padded / model.real - 1
    assert len(model.widths) >= BULK_BATCH // BATCH, "cut into batches of at most BATCH"
    model.padded = model.real = 0
    for at in range(0, len(texts), 256):
        local.embed(texts[at : at + 256])
    narrow = model.padded / model.real - 1
    assert wide < 0.05 and narrow > 3 * wide, f"padding: {wide:.1%} in one window, {narrow:.1%} in calls of 256"
    sample = range(0, BULK_BATCH, 97)
    alone = np.asarray([local.embed([texts[i]])[0] for i in sample])
    assert np.abs(together[list(sample)] - alone).max() < 1e-6


def test_a_call_runs_its_widest_batch_first_so_later_runs_fit_in_what_it_freed(
        embedder: tuple[LocalEmbedder, TokenModel]) -> None:
    """The runs of one call go from the widest batch to the narrowest (``LocalEmbedder._matrix``): the same batches
    as sorted by length, each text's vector the same, in the caller's order."""
    local, model = embedder
    rng = np.random.default_rng(7)
    texts = [" ".join(f"w{n}x{k}" for k in range(int(rng.integers(1, 40)))) for n in range(6 * BATCH)]
    together = np.asarray(local.embed(texts))
    assert len(set(model.widths)) > 3
    assert model.widths == sorted(model.widths, reverse=True)
    alone = np.asarray([local.embed([text])[0] for text in texts[::29]])
    assert np.abs(together[::29] - alone).max() < 1e-6
