"""The write gate, stage 1: a fast, deterministic decision on whether a user turn is worth remembering.

Only the user's own words reach this gate; assistant replies and injected memory never do, so a hallucination
or a recalled note cannot come back as a "fact". The gate keeps self-disclosure (first-person facts, preferences,
plans, relationships, dates) and explicit "remember that ..." requests; it drops greetings, acknowledgements,
thanks, very short turns, questions that disclose nothing about the user, pasted documents, and instructions
aimed at the assistant (the shape of a memory-poisoning attempt), anything that carries a link (where an injected
instruction would send the user's data), and anything that looks like a credential. Every decision carries its
reason.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from agent.memory.text import words

MAX_CHARS = 2_000
MIN_WORDS = 4
FENCE_TAG = "memory_notes"
# The fence of the rolling summary of a conversation (``agent.conversation``): derived text, never instructions.
SUMMARY_TAG = "conversation_summary"

_EXPLICIT = re.compile(
    r"^\s*(?:please\s+)?(?:remember|note|don'?t forget|do not forget|keep in mind)\b(?:\s+that)?[\s:,-]*(?P<rest>.+)$",
    re.IGNORECASE | re.DOTALL,
)
_SMALL_TALK = frozenset(
    """hi hello hey hiya yo morning evening afternoon good night bye goodbye thanks thank you thx ty cheers ok okay
    k sure cool great nice awesome perfect fine yes yeah yep yup no nope nah lol haha wow sounds got it alright
    right indeed agreed exactly totally true interesting amazing wonderful excellent lovely appreciate it that's
    that is so very much a lot again there all see later soon talk to care too and oh ah hmm well""".split()
)
_FIRST_PERSON = frozenset("i i'm i've i'd i'll me my mine myself we we're we've we'll our ours us".split())
# Chat drops the "I" of a sentence that opens with what the speaker did: "Just got back from Lisbon.",
# "Still working on opening the studio." Such a sentence counts as first person.
_ELLIPTIC_FIRST_PERSON = re.compile(
    r"(?:^|[.!?]\s+)(?:just |still |finally |recently |also )?(?:got|went|started|finished|made|bought|had|took|saw|"
    r"been|working|trying|thinking|planning|gonna|moved|visited|joined|learned|tried|found|met|spent|signed)\b",
    re.IGNORECASE,
)
_SIGNALS = re.compile(
    r"\b(?:love|loves|loved|hate|hates|hated|like|likes|liked|prefer|prefers|favou?rite|allergic|allergy|"
    r"can't eat|cannot eat|vegan|vegetarian|born|birthday|married|divorced|engaged|wife|husband|partner|son|"
    r"daughter|kids?|children|mom|mum|dad|mother|father|sister|brother|friend|dog|cat|pet|job|work|works|worked|"
    r"live|lives|lived|moving|moved|plan|plans|planning|going to|will|next|last|yesterday|tomorrow|tonight|"
    r"week|month|year|weekend|monday|tuesday|wednesday|thursday|friday|saturday|sunday|january|february|march|"
    r"april|may|june|july|august|september|october|november|december|\d{4})\b",
    re.IGNORECASE,
)
_QUESTION_START = frozenset(
    "what what's which who whom whose when where why how is are am was were do does did can could would should "
    "will shall may might have has any anything".split()
)
_REQUEST_START = frozenset(
    "tell give show help write explain suggest recommend list make find summarize summarise translate describe "
    "create draft compose generate please".split()
)
# In a question or a request, "I" alone is part of the frame ("how do I ..."); these say something about the user.
_STRONG_DISCLOSURE = re.compile(
    r"\b(?:my|our|mine|ours|i'm|i am|i've|i have|i had|i was|i were|we're|we are|we've|we have|i'd like|"
    r"i (?:love|hate|like|prefer|can't|cannot|don't|work|live|study))\b",
    re.IGNORECASE,
)
_INSTRUCTION = re.compile(
    r"(?:ignore (?:all |any |the )?(?:previous|prior|above) (?:instructions|messages)|system prompt|"
    r"\b(?:always|from now on|every time)\b.{0,60}"
    r"\b(?:send|(?<!look )(?<!looking )forward|post|append|include|upload|email|share)\b|"
    r"\b(?:send|forward|post|append|upload|email)\b.{0,80}https?://)",
    re.IGNORECASE | re.DOTALL,
)
_URL = re.compile(r"https?://|\bwww\.", re.IGNORECASE)
# A line of a dated transcript, "(8 May 2023) Ada: ...": the stamp and the speaker's label say nothing about the
# speaker, and a date in the stamp must not pass for a date the speaker mentioned. The words after it are judged.
_TRANSCRIPT_PREFIX = re.compile(r"^\([^()\n]{1,60}\)\s*(?:[^\s:()][^:\n]{0,40}:\s+)?")
# Sentences of a turn: a statement followed by a question ("I just got back from Japan! Have you been?").
_SENTENCES = re.compile(r"(?<=[.!?])\s+")
# Credentials do not belong in a memory that is injected into prompts sent to a model provider.
_SECRET = re.compile(
    r"(?:\bsk-[A-Za-z0-9_-]{16,}|\bAKIA[0-9A-Z]{16}\b|\bgh[pousr]_[A-Za-z0-9]{30,}|\bxox[abprs]-[A-Za-z0-9-]{10,}|"
    r"\b(?:password|passwd|passcode|pin|api key|secret key|token)\b\s*(?:is|:|=)|\b(?:\d[ -]?){13,19}\b)",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class GateDecision:
    """Whether to keep a turn, why, what text to store and whether the user asked for it explicitly."""

    keep: bool
    reason: str
    text: str = ""
    explicit: bool = False


def _is_request(text: str, tokens: list[str]) -> bool:
    """A question or an imperative addressed to the assistant ("tell me ...", "how do I ...")."""
    if text.rstrip().endswith("?") or tokens[0] in _REQUEST_START:
        return True
    return tokens[0] in _QUESTION_START and "?" in text


def _discloses(tokens: list[str], text: str) -> bool:
    """A first-person statement with something to say: a pronoun of the user and a content signal or a verb."""
    if not any(t in _FIRST_PERSON for t in tokens) and not _ELLIPTIC_FIRST_PERSON.search(text):
        return False
    return bool(_SIGNALS.search(text)) or len([t for t in tokens if t not in _SMALL_TALK]) >= 3


def _statement_before_question_discloses(text: str) -> bool:
    """A turn that ends in a question may open with a statement worth keeping: judge the sentences that are not
    questions on their own ("Started at the gym last week. How is your project?")."""
    if not text.rstrip().endswith("?"):
        return False
    statement = " ".join(s for s in _SENTENCES.split(text) if not s.rstrip().endswith("?"))
    return bool(statement) and decide(statement).keep


def refusal(text: str) -> str | None:
    """Why ``text`` must never become a memory, whoever wrote it (the user, or the model extracting a fact): a
    fence tag, a secret, an instruction for the assistant or a link. None when it is none of those."""
    if FENCE_TAG in text.lower() or SUMMARY_TAG in text.lower():
        return "contains a fence tag: text from a fenced block is never stored again"
    if _SECRET.search(text):
        return "looks like a secret (a key, password or card number): never stored"
    if _INSTRUCTION.search(text):
        return "an instruction for the assistant, not a fact about the user"
    if _URL.search(text):
        return "carries a link: links are never stored as memory (an injected instruction needs one to send data to)"
    return None


def decide(text: str) -> GateDecision:
    """Stage 1 of the gate for one user turn. Pure and fast (a few regular expressions).

    A transcript line is judged by its words without its leading stamp and speaker label; what is kept is the
    whole line."""
    stripped = text.strip()
    body = _TRANSCRIPT_PREFIX.sub("", stripped, count=1)
    if body != stripped and body:
        decision = decide(body)
        return GateDecision(decision.keep, decision.reason, stripped if decision.keep else "", decision.explicit)
    if not stripped:
        return GateDecision(False, "empty")
    if len(stripped) > MAX_CHARS:
        return GateDecision(False, f"longer than {MAX_CHARS} characters: a pasted document, not a statement")
    refused = refusal(stripped)
    if refused:
        return GateDecision(False, refused)

    explicit = _EXPLICIT.match(stripped)
    if explicit and len(words(explicit.group("rest"))) >= 2:
        return GateDecision(True, "explicit request to remember", text=explicit.group("rest").strip(), explicit=True)

    tokens = words(stripped)
    if len(tokens) < MIN_WORDS:
        return GateDecision(False, f"fewer than {MIN_WORDS} words")
    if all(t in _SMALL_TALK for t in tokens):
        return GateDecision(False, "small talk (greeting, thanks or acknowledgement)")
    if _is_request(stripped, tokens):
        if _STRONG_DISCLOSURE.search(stripped) or _statement_before_question_discloses(stripped):
            return GateDecision(True, "a question or request that discloses something about the user", text=stripped)
        return GateDecision(False, "a question or request that discloses nothing about the user")
    if _discloses(tokens, stripped):
        return GateDecision(True, "first-person statement (fact, preference, plan or relationship)", text=stripped)
    if _SIGNALS.search(stripped):
        return GateDecision(True, "statement with a date, plan, preference or relationship", text=stripped)
    return GateDecision(False, "nothing about the user in it")
