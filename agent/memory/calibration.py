"""Per-embedder defaults for the similarity thresholds. Similarity scales differ between models, so each
embedder has its own value; the method and the data behind each number are in ``bench/RESULTS.md``."""

from __future__ import annotations

# Injection threshold: a memory enters the system prompt only if its cosine similarity to the user's
# message is at least this. local: calibrated with bench/calibrate.py on the LoCoMo dev file; the cross-store rule
# alone said 0.425, which loses the peanut allergy for "Any snack ideas?" (0.40) and 29% of own recall, so 0.30
# keeps a 0.05 margin under the weakest wanted match (section 2 of bench/RESULTS.md). openai: not yet calibrated
# (no endpoint reachable where the benchmark ran); run the same script with --embedder openai.
INJECTION = {"local": 0.30, "openai": 0.25}
# Grounding threshold of stage-2 extraction: an extracted fact is kept only if it is this similar to its turn.
GROUNDING = {"local": 0.62, "openai": 0.55}


def default_threshold(embedder: str) -> float:
    return INJECTION.get(embedder, 0.30)


def default_grounding(embedder: str) -> float:
    return GROUNDING.get(embedder, 0.62)
