"""What the optional model extraction proposes for a turn, and which of its profile values the memory accepts.

The model may propose standalone facts (kept when close in meaning to the turn, ``MemoryService``) and key/value
profile updates. A proposed value goes through the same supersede path as a value the profile's patterns read, so
it must be held to the same standard as the user's own words: every word of it is in the user's turn (a model that
invents "Paris" for a turn about Berlin proposes nothing), its key is one the profile knows or a thing the turn
calls the user's ("my phone"), a thing's value names it rather than describes it, and the patterns' own reading of
the turn wins over the model's. Each proposal dropped says why, so the user sees it (the chat prints it). Pure.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from agent.domain import EXTRACTOR, StatedFact
from agent.memory import things
from agent.memory.profile import Statement, is_thing, normal, same_value, single_valued
from agent.memory.refusal import refusal

_WORD = re.compile(r"[\w'’+-]+")
_ARTICLES = frozenset({"a", "an", "the", "my"})


@dataclass(frozen=True)
class Extraction:
    """The model's answer for one turn: standalone facts, proposed profile values, and why any line of the answer
    was not taken (a malformed profile line)."""

    facts: tuple[str, ...] = ()
    profile: tuple[StatedFact, ...] = ()
    dropped: tuple[str, ...] = ()
    # (label of a listed memory, the words of the turn that replace it): ``agent.memory.consolidation``.
    supersedes: tuple[tuple[str, str], ...] = ()


def _words(text: str) -> list[str]:
    return [w for w in _WORD.findall(text.casefold()) if w not in _ARTICLES]


def unsaid(words: str, turn: str) -> str | None:
    """The words of ``words`` that ``turn`` does not hold ("no value" when there are none), or None when it holds
    every one."""
    said = {normal(w) for w in _words(turn)}
    missing = [w for w in _words(words) if normal(w) not in said]
    return ", ".join(missing) or "no value" if not _words(words) or missing else None


def _why_not(fact: StatedFact, turn: str, statement: Statement) -> str:
    """Why the memory does not take ``fact`` for ``turn``, or "" when it does."""
    missing = unsaid(fact.value, turn)
    if missing is not None:
        return f"not in your words ({missing})"
    if refusal(fact.value) or refusal(f"{fact.key}: {fact.value}"):
        return "not something to remember"
    if is_thing(fact.key):
        if f"my {fact.key}" not in " ".join(turn.casefold().split()):
            return f"not a key of the profile, and the turn names no {fact.key} of yours"
        if things.value_of(fact.value) is None:
            return "a description, not a value"
    for read in statement.facts:
        if read.key == fact.key and (same_value(read.value, fact.value) or single_valued(fact.key)):
            return "" if same_value(read.value, fact.value) else f"your words say {read.key} = {read.value}"
    return ""


def ground(proposals: Sequence[StatedFact], turn: str, statement: Statement) -> tuple[list[StatedFact], list[str]]:
    """The proposed profile values the memory takes for ``turn`` (marked as the extractor's), the ones the patterns
    read already left out, and a line per proposal dropped: "home = Paris: not in your words (paris)"."""
    kept: list[StatedFact] = []
    dropped: list[str] = []
    for fact in proposals:
        why = _why_not(fact, turn, statement)
        if why:
            dropped.append(f"{fact.key} = {fact.value}: {why}")
        elif not any(f.key == fact.key and same_value(f.value, fact.value) for f in (*statement.facts, *kept)):
            kept.append(replace(fact, origin=EXTRACTOR))
    return kept, dropped
