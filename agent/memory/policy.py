"""The memory's tunable numbers and their defaults, pure data: those that are also settings come from
``agent.defaults``, which the settings (``agent.config``) read too."""

from __future__ import annotations

from dataclasses import dataclass, field

from agent import defaults


@dataclass(frozen=True)
class FusionWeights:
    """How the two rankings combine: ``dense`` and ``keyword`` weigh the normalised scores, ``candidates`` is
    how many each side proposes. A zero weight switches that side off (the benchmark's single-retriever columns).

    The keyword side weighs more because it carries names, rare words and the turn a memory answers; on LoCoMo
    (bench/RESULTS.md) every weight of dense from 0.3 to 0.4 beat 0.6 on both dev conversations alike. Since the
    gate keeps the remarks people make to each other (a reply to a line is about what the line is about, so it is
    as near in meaning as the line itself, and only the line's own words tell them apart), dense 0.25 ranks the
    line that says it above the replies around it: +1.5 points R@5 with R@10 unchanged (E13)."""

    dense: float = 0.25
    keyword: float = 0.75
    candidates: int = 50
    # Between two memories that answer about equally well, the newer wins: the fused score gains up to this much
    # by the age of a memory among the best candidates (the oldest 0, the newest all of it). Small enough to
    # reorder near-ties only (bench/RESULTS.md, E12).
    recency: float = 0.02


@dataclass(frozen=True)
class MemoryPolicy:
    """The tunable numbers of the memory service; ``None`` thresholds take the embedder's calibrated default."""

    k: int = defaults.MEMORY_K
    threshold: float | None = None
    budget_tokens: int = defaults.MEMORY_TOKENS
    capacity: int = defaults.MEMORY_CAPACITY
    writes_per_session: int = defaults.WRITES_PER_SESSION
    grounding_threshold: float | None = None
    weights: FusionWeights = field(default_factory=FusionWeights)
    # False stores every observed turn: the benchmark measures what the gate costs against this.
    gate: bool = True
    # False stores every memory as it comes, with no supersede or restatement (the benchmark's comparison).
    truth: bool = True
    profile_budget_tokens: int = defaults.PROFILE_TOKENS
