"""The model as an optional consolidator: with the extraction on (``AGENT_LLM_EXTRACT``), the model may propose that a
listed live memory is superseded by the turn, where no rule read it ("Porto is home these days" after "I live in
Boston", which share no word and little meaning for the embedding model).

A wrong supersede loses a fact the user still holds, so a proposal is held to the standard of a profile value
(``agent.memory.extraction``) and of a correction (``agent.memory.truth``), and each one dropped says why:

- it names a memory of the list it was given (by its label, "m1"), still live, by the same speaker;
- it quotes the words of the turn that replace the memory, and every word of the quote is the user's (a model that
  invents "Paris" for a turn about Berlin supersedes nothing), and says something the memory does not;
- the memory states no profile value: those change only through a profile value, whose own checks apply, and a
  memory that holds an allergy beside the home must not lose the allergy with the home;
- the turn neither adds ("also", "too", "another") nor plans ("next month", "going to"), and it says that
  something changed ("now", "these days", "since", "started", "no longer", "instead"...): without that, two
  statements may both hold, and the model's reading alone takes no memory away.

A proposal taken supersedes like any other: the reason names the model and the quote, the chat says it replaced a
memory, ``/restore`` undoes it. Pure.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from agent.domain import MemoryRecord
from agent.memory.extraction import unsaid
from agent.memory.refusal import refusal
from agent.memory.things import ADDITIVE
from agent.memory.truth import live_facts, same_speaker

# How many live memories the model is shown for a turn: its nearest.
LISTED = 4
# A turn that replaces something says that it changed: without one of these, two statements may both hold ("I love
# hiking", then "I enjoy swimming in the sea"), and the model's reading alone does not take a memory away.
_CHANGE = re.compile(r"\b(?:now|these days|nowadays|any ?more|no longer|instead|since|switched|moved|changed|"
                     r"started|new|turned|became|become|left|quit|died|passed away|sold|gave away|replaced|actually|"
                     r"used to|not .{1,30} but|lately|recently|finally|officially)\b", re.IGNORECASE)
_PLAN = re.compile(r"\b(?:going to|gonna|will|'ll|plan(?:ning)? to|thinking (?:about|of)|might|hope to|want to|"
                   r"about to|considering|next (?:week|month|year)|soon|if)\b", re.IGNORECASE)


@dataclass(frozen=True)
class Proposal:
    """The model's proposal that the listed memory ``label`` is superseded by the turn's words ``quote``."""

    label: str
    quote: str


def label(n: int) -> str:
    return f"m{n + 1}"


def _why_not(proposal: Proposal, listed: dict[str, MemoryRecord], turn: str) -> str:
    old = listed.get(proposal.label)
    if old is None:
        return "names no memory of the list"
    if not old.current or not same_speaker(old, turn):
        return "that memory is not a live one of yours"
    missing = unsaid(proposal.quote, turn)
    if missing is not None:
        return f"not in your words ({missing})"
    if unsaid(proposal.quote, old.text) is None:
        return "the quote says nothing that memory does not"
    if refusal(proposal.quote):
        return "not something to remember"
    if live_facts(old):
        return "that memory states profile values, which change only through a profile value"
    if ADDITIVE.search(turn) or _PLAN.search(turn):
        return "your words add to it or plan, and replace nothing"
    if not _CHANGE.search(turn):
        return "your words say nothing changed, and both may hold"
    return ""


def accepted(proposals: Sequence[Proposal], listed: Sequence[MemoryRecord], turn: str
             ) -> tuple[list[tuple[MemoryRecord, str]], list[str]]:
    """The memories ``proposals`` may supersede, with the quote that replaces each, and a line per proposal
    dropped ("supersede m2: not in your words (paris)")."""
    by_label = {label(n): record for n, record in enumerate(listed)}
    taken: list[tuple[MemoryRecord, str]] = []
    dropped: list[str] = []
    for proposal in proposals:
        why = _why_not(proposal, by_label, turn)
        if why:
            dropped.append(f"supersede {proposal.label}: {why}")
        elif all(old.id != by_label[proposal.label].id for old, _ in taken):
            taken.append((by_label[proposal.label], proposal.quote))
    return taken, dropped


def reason(taken: Sequence[tuple[MemoryRecord, str]]) -> str:
    return "; ".join(f'the model read that your words "{quote}" replace "{old.text}"' for old, quote in taken)
