"""The local embedder cuts a bulk embedding into batches by length (issue 22): sorted, so a batch pads little, and
bounded in tokens, so one long line shares its batch with few others and what a batch holds at once is bounded."""

from __future__ import annotations

import numpy as np

from agent.adapters.local_embedder import BATCH, BATCH_TOKENS, MAX_TOKENS, LocalEmbedder, batches


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
