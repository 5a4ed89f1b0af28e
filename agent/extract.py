"""Stage-2 memory extraction: ask the chat model for at most two standalone facts about the user, and the profile
values the message states.

Off by default (``AGENT_LLM_EXTRACT``): it costs a model call per remembered turn. The model's answer is parsed by
``parse_answer``, a pure function, and the memory service keeps a fact only if it is close to the user's own words
(the grounding threshold) and a profile value only if its words are the user's (``agent.memory.extraction``), so a
hallucinated fact does not get in.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from agent.conversation import DEFAULT, complete, placed
from agent.domain import Message, StatedFact
from agent.errors import ChatError
from agent.memory.canonical import canonical
from agent.memory.consolidation import label
from agent.memory.extraction import Extraction
from agent.memory.fences import defang
from agent.memory.refusal import refusal
from agent.memory.service import Extractor
from agent.ports import ChatModel
from agent.prompts import prompt
from agent.server import Placement

MAX_FACTS = 2
MAX_CHARS = 300
_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+")
_ABOUT_USER = re.compile(r"^(?:the\s+)?user\b", re.IGNORECASE)
MAX_PROFILE = 4
MAX_VALUE_CHARS = 60
# "profile: home = Berlin", bulleted or not; the key is a few lower-case words ("favourite coffee", "phone").
_PROFILE_LINE = re.compile(r"^\s*(?:(?:[-*•]|\d+[.)])\s+)?profile\s*:", re.IGNORECASE)
_PROFILE = re.compile(r"^\s*(?P<key>[a-z][a-z' -]{0,39}?)\s*=\s*(?P<value>\S.*?)\s*$", re.IGNORECASE)
# "supersede: m1 = Porto is home these days": a listed memory the turn replaces, and the turn's words that do.
_SUPERSEDE = re.compile(r"^\s*(?:(?:[-*•]|\d+[.)])\s+)?supersede\s*:\s*(?P<label>m\d{1,2})\s*=\s*(?P<quote>\S.*?)\s*$",
                        re.IGNORECASE)
MAX_SUPERSEDES = 2


def parse_facts(answer: str) -> list[str]:
    """Facts from the model's answer: bulleted (or plain) lines about "the user", at most two, deduplicated.

    Preambles, ``NONE``, lines not about the user and over-long lines are dropped, and so is any line the gate
    would never store (a link, an instruction, a secret: the model may have been talked into writing one); each
    fact ends with a period.
    """
    lines = [line.strip() for line in answer.strip().splitlines() if line.strip()]
    if any(_BULLET.match(line) for line in lines):
        lines = [_BULLET.sub("", line) for line in lines if _BULLET.match(line)]
    facts: list[str] = []
    for line in lines:
        fact = canonical(line).strip().strip("\"'`").strip()
        if not _ABOUT_USER.match(fact) or len(fact) > MAX_CHARS or refusal(fact):
            continue
        fact = fact if fact[-1] in ".!?" else f"{fact}."
        if fact.casefold() not in {f.casefold() for f in facts}:
            facts.append(fact)
    return facts[:MAX_FACTS]


def parse_profile(line: str) -> StatedFact | None:
    """The key and value of one ``profile:`` line, or None when it is not ``key = value`` with a value of at most
    ``MAX_VALUE_CHARS``."""
    match = _PROFILE.match(_PROFILE_LINE.sub("", line, count=1))
    if match is None:
        return None
    key = " ".join(match.group("key").casefold().replace("favorite", "favourite").split())
    value = match.group("value").strip().rstrip(".").strip().strip("\"'`").strip()
    return StatedFact(key, value) if value and len(value) <= MAX_VALUE_CHARS else None


def parse_answer(answer: str) -> Extraction:
    """The model's whole answer: the facts of ``parse_facts`` and at most ``MAX_PROFILE`` profile values; a
    ``profile:`` line that does not parse is dropped, and so said."""
    profile: list[StatedFact] = []
    dropped: list[str] = []
    rest: list[str] = []
    supersedes: list[tuple[str, str]] = []
    for line in answer.splitlines():
        if (proposal := _SUPERSEDE.match(line)) is not None:
            quote = proposal.group("quote").strip().strip("\"'`").strip()
            supersedes.append((proposal.group("label").lower(), quote[:MAX_CHARS]))
            continue
        if not _PROFILE_LINE.match(line):
            rest.append(line)
            continue
        fact = parse_profile(line)
        if fact is None:
            dropped.append(f"{line.strip()[:80]!r}: not a profile line of the form 'profile: key = value'")
        elif fact not in profile:
            profile.append(fact)
    dropped += [f"{f.key} = {f.value}: more than {MAX_PROFILE} profile values" for f in profile[MAX_PROFILE:]]
    dropped += [f"supersede {label}: more than {MAX_SUPERSEDES} proposals" for label, _ in supersedes[MAX_SUPERSEDES:]]
    return Extraction(tuple(parse_facts("\n".join(rest))), tuple(profile[:MAX_PROFILE]), tuple(dropped),
                      tuple(supersedes[:MAX_SUPERSEDES]))


def listing(listed: Sequence[str]) -> str:
    """The live memories shown to the model, each on a line of inert text after its label."""
    lines = "\n".join(f"- {label(n)}: {defang(text)}" for n, text in enumerate(listed))
    return f"Memories already kept (label: words):\n{lines}"


def model_extractor(
    chat: ChatModel,
    model: str,
    on_error: Callable[[ChatError], None],
    placement: Callable[[], Placement] = lambda: DEFAULT,
) -> Extractor:
    """An extractor asking ``chat`` with ``prompts/extract.md`` (placed where the chat's own requests go); a failed
    call is reported and yields nothing, so the turn itself is still remembered."""

    def extract(text: str, listed: Sequence[str] = ()) -> Extraction:
        system = [Message("system", prompt("extract")), *([Message("system", listing(listed))] if listed else [])]
        try:
            messages = placed([*system, Message("user", text)], placement())
            answer = complete(chat, messages, model)
        except ChatError as exc:
            on_error(exc)
            return Extraction()
        return parse_answer(answer)

    return extract
