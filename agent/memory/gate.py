"""The write gate, stage 1: a fast, deterministic decision on whether a user turn is worth remembering.

Only the user's own words reach this gate; assistant replies and injected memory never do, so a hallucination
or a recalled note cannot come back as a "fact". What the user disclosed about themselves is kept, in their words,
and nothing else (``agent.memory.disclosure`` reads the grammar of it: questions, requests and remarks about the
conversation disclose nothing unless they say something about the user on the way), and so are explicit
"remember that ..." requests. ``refusal`` says what no memory may hold whoever asks, the user included: more than
``MAX_CHARS``, a fence tag, a credential or an identity or account number, an instruction aimed at the assistant
(the shape of a memory-poisoning attempt: to ignore its instructions, to send the user's data anywhere, or an order
about how it replies), and anything that could receive data (a URL, a bare domain, an e-mail address, an IP
address, a Markdown link or image). A turn refused only for a link keeps the clauses that disclose without it.
Every decision carries its reason.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from agent.memory import disclosure, typos
from agent.memory.refusal import ID_NUMBER_REFUSAL as ID_NUMBER_REFUSAL
from agent.memory.refusal import LINK_REFUSAL as LINK_REFUSAL
from agent.memory.refusal import MAX_CHARS as MAX_CHARS
from agent.memory.refusal import SECRET_REFUSAL as SECRET_REFUSAL
from agent.memory.refusal import WITHHELD as WITHHELD
from agent.memory.refusal import refusal as refusal
from agent.memory.refusal import without_links as _without_links

_EXPLICIT = re.compile(
    r"^\s*(?:please\s+)?(?:remember|note|don'?t forget|do not forget|keep in mind)\b(?:\s+that)?[\s:,-]*(?P<rest>.+)$",
    re.IGNORECASE | re.DOTALL,
)
# A line of a dated transcript, "(8 May 2023) Ada: ...": the stamp and the speaker's label say nothing about the
# speaker, and a date in the stamp must not pass for a date the speaker mentioned. The words after it are judged.
_TRANSCRIPT_PREFIX = re.compile(r"^\([^()\n]{1,60}\)\s*(?:[^\s:()][^:\n]{0,40}:\s+)?")

_CUT = "; the part with a link is not kept"


@dataclass(frozen=True)
class GateDecision:
    """Whether to keep a turn, why, what text to store and whether the user asked for it explicitly."""

    keep: bool
    reason: str
    text: str = ""
    explicit: bool = False
    # A turn dropped for its shape: what it was read as instead of a disclosure (``disclosure.Reading.read_as``).
    read_as: str = ""


def decide(text: str) -> GateDecision:
    """Stage 1 of the gate for one user turn. Pure and fast (regular expressions over the turn's clauses).

    A transcript line is judged by its words without its leading stamp and speaker label; what is kept is the
    stamp and label with the sentences that disclose something (all of the line when every sentence does)."""
    stripped = text.strip()
    if not stripped:
        return GateDecision(False, "empty")
    refused = refusal(stripped)
    prefix = _TRANSCRIPT_PREFIX.match(stripped)
    head, body = (prefix.group(0), stripped[prefix.end() :]) if prefix else ("", stripped)
    # A turn refused only for its link keeps what it discloses without it: a chat turn has no refusal to show the
    # user, so "I'm allergic to penicillin, see drugs.com" must not be lost for its link. (/remember is refused
    # whole, with the reason: the user asked for those words and can say them again without the link.)
    cut = refused == LINK_REFUSAL
    if cut:
        body = _without_links(body)
    if refused and not (cut and body):
        return GateDecision(False, refused)

    # "btw pls remmeber ...": the request read without its frame and with a slip in its first words read as meant
    # (only those: the words to remember are kept as said).
    opener = disclosure.unframed(body).split(" ", 2)
    explicit = _EXPLICIT.match(" ".join([*map(typos.corrected_text, opener[:2]), *opener[2:]]))
    if explicit and not explicit.group("rest").rstrip().endswith("?"):
        rest = explicit.group("rest").strip()
        if len(rest.split()) >= 2:
            # "remember to buy milk": "to buy milk" alone has lost its subject, so the request is kept whole.
            kept = body if rest.lower().startswith("to ") else rest
            return GateDecision(True, "explicit request to remember" + (_CUT if cut else ""), text=head + kept,
                                explicit=True)

    reading = disclosure.read(body, transcript=bool(prefix))
    if not reading.sentences:
        return GateDecision(False, refused or reading.reason, read_as=reading.read_as)
    if cut:
        return GateDecision(True, reading.reason + _CUT, text=head + " ".join(reading.sentences))
    whole = prefix or len(reading.sentences) == len(disclosure.sentences(body))
    return GateDecision(True, reading.reason, text=stripped if whole else " ".join(reading.sentences))
