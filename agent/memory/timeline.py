"""Notes on one subject, in the order they were said, the newest marked current: what the rules could not decide is
left to the chat model, with what it needs to decide it.

A new statement replaces an old one only when the rules read both ("I live in Boston", then "I moved to Porto");
said in words no rule reads ("Porto is home these days"), both stay live, and in the order of their relevance the
old one may come first and read as the current value. Hiding one would lose a fact the user may still hold (two
instruments, two sisters), so both are shown, next to each other, oldest first, and the newest is marked as the
current one where they disagree: the model sees the dates and the order and resolves it.

Two live notes speak to the same subject when their vectors are at least ``SAME_SUBJECT`` alike (MiniLM, on the
dev set of bench/memory_truth.py: an update and the statement it updates score 0.44-0.64 between the quartiles,
two facts that both hold 0.41-0.57, unrelated lines of the same user under 0.40 in 99 of 100); the marks say
"where they disagree", so two facts that agree lose nothing by being grouped. Lines of two speakers of a
transcript are never one subject's. Pure: the service hands in the vectors it read.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from agent.domain import ScoredMemory
from agent.memory.retriever import dot
from agent.memory.truth import speaker

SAME_SUBJECT = 0.50
NEWEST = "the newest on this subject: current where the notes beside it disagree"
OLDER = "an older note on this subject: a newer one beside it is current where they disagree"


def _same(a: ScoredMemory, b: ScoredMemory, vectors: Mapping[str, Sequence[float]]) -> bool:
    va, vb = vectors.get(a.record.id), vectors.get(b.record.id)
    return (va is not None and vb is not None and speaker(a.record.text) == speaker(b.record.text)
            and dot(va, vb) >= SAME_SUBJECT)


def arrange(memories: Sequence[ScoredMemory], vectors: Mapping[str, Sequence[float]]
            ) -> tuple[list[ScoredMemory], dict[str, str]]:
    """``memories`` (most relevant first) with the live notes on one subject together, at the place of the most
    relevant of them, oldest first; and the mark of each note so grouped, by id."""
    groups: list[list[ScoredMemory]] = []
    for memory in memories:
        live = memory.record.current
        group = next((g for g in groups if live and g[0].record.current and any(_same(memory, o, vectors)
                                                                                for o in g)), None)
        if group is None:
            groups.append([memory])
        else:
            group.append(memory)
    ordered: list[ScoredMemory] = []
    marks: dict[str, str] = {}
    for group in groups:
        group.sort(key=lambda m: m.record.created_at)
        ordered += group
        if len(group) > 1:
            marks.update({m.record.id: OLDER for m in group[:-1]})
            marks[group[-1].record.id] = NEWEST
    return ordered, marks
