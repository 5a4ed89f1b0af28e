"""The local embedder cuts a bulk embedding into batches by length (issue 22): sorted, so a batch pads little, and
bounded in tokens, so one long line shares its batch with few others and what a batch holds at once is bounded."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from agent.adapters.local_embedder import BATCH, BATCH_TOKENS, MAX_TOKENS, LocalEmbedder, batches, default_model_files
from bench.latency import sentences


def test_every_text_is_in_one_batch_and_no_batch_pads_past_its_bound() -> None:
    lengths = [8] * 300 + [MAX_TOKENS] + [40] * 50 + [120] * 20
    cut = batches(lengths)
    assert sorted(i for batch in cut for i in batch) == list(range(len(lengths)))
    assert all(len(batch) <= BATCH and len(batch) * max(lengths[i] for i in batch) <= BATCH_TOKENS for batch in cut)
    alone = next(batch for batch in cut if len(lengths) - 71 in batch)  # the one long line
    assert len(alone) <= BATCH_TOKENS // MAX_TOKENS, "the long line pads few others"
    assert sum(len(batch) == BATCH for batch in cut) >= 300 // BATCH, "short lines still fill whole batches"


def test_a_text_means_the_same_in_a_batch_of_any_lengths_as_alone(local_embedder: LocalEmbedder) -> None:
    texts = ["I walk the dog", "My sister plays the violin in an orchestra " * 20, "Tea, no sugar"]
    together = np.asarray(local_embedder.embed(texts))
    alone = np.asarray([local_embedder.embed([text])[0] for text in texts])
    # The int8 model quantizes each batch's activations with a scale of its own: a batch moves a vector a little.
    assert (together * alone).sum(axis=1).min() > 0.98


@pytest.mark.usefixtures("model_cache")
def test_the_float_model_gives_a_text_its_vector_alone_in_any_batch_so_padding_moves_nothing(tmp_path: Path) -> None:
    """The packaged model computes in float32: the attention mask keeps the padding and the batch's other texts out
    of a text's vector, to the bit. What moves a vector of the int8 model (above) is its per-batch scale alone."""
    for name, packaged in zip(("model.onnx", "tokenizer.json"), default_model_files(), strict=True):
        (tmp_path / name).symlink_to(packaged)
    texts = sentences(70)
    texts[3] = " ".join(sentences(20))  # one long line among short ones: a batch padded far past them
    embedder = LocalEmbedder(model_dir=tmp_path)
    together = np.asarray(embedder.embed(texts), dtype=np.float32)
    alone = np.asarray([embedder.embed([text])[0] for text in texts], dtype=np.float32)
    assert np.abs(together - alone).max() < 1e-5


def test_the_sessions_pool_threads_wait_without_spinning() -> None:
    """onnxruntime's pool threads spin for work by default, burning a core between two runs: a bulk write's Python
    between its batches, a chat's whole turn. The embedder's sessions are opened with the spinning off."""
    import onnxruntime as ort

    options = LocalEmbedder()._options(ort, ort.GraphOptimizationLevel.ORT_ENABLE_BASIC)
    assert options.get_session_config_entry("session.intra_op.allow_spinning") == "0"
    assert not options.enable_mem_pattern, "a plan kept for each batch width: a bulk write's memory grew with them"


def test_packed_vectors_are_the_embedders_own_numbers(local_embedder: LocalEmbedder) -> None:
    """A bulk write takes its vectors packed as float32 (an eighth of the memory of lists of floats): the same
    numbers ``embed`` gives, to the bit, so what the ledger and Chroma keep (both float32) does not change."""
    texts = sentences(40)
    packed = local_embedder.embed_packed(texts)
    assert all(len(v) == local_embedder.dimension for v in packed)
    assert np.array_equal(np.asarray(packed, dtype=np.float32), np.asarray(local_embedder.embed(texts), np.float32))
    assert [list(v) for v in packed] == local_embedder.embed(texts)
