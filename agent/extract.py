"""Stage-2 memory extraction: ask the chat model for at most two standalone facts about the user.

Off by default (``AGENT_LLM_EXTRACT``): it costs a model call per remembered turn. The model's answer is parsed by
``parse_facts``, a pure function, and the memory service keeps a fact only if it is close to the user's own words
(the grounding threshold), so a hallucinated fact does not get in.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from agent.conversation import DEFAULT, complete, placed
from agent.domain import Message
from agent.errors import ChatError
from agent.memory.gate import refusal
from agent.memory.service import Extractor
from agent.ports import ChatModel
from agent.prompts import prompt
from agent.server import Placement

MAX_FACTS = 2
MAX_CHARS = 300
_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+")
_ABOUT_USER = re.compile(r"^(?:the\s+)?user\b", re.IGNORECASE)


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
        fact = line.strip().strip("\"'`").strip()
        if not _ABOUT_USER.match(fact) or len(fact) > MAX_CHARS or refusal(fact):
            continue
        fact = fact if fact[-1] in ".!?" else f"{fact}."
        if fact.casefold() not in {f.casefold() for f in facts}:
            facts.append(fact)
    return facts[:MAX_FACTS]


def model_extractor(
    chat: ChatModel,
    model: str,
    on_error: Callable[[ChatError], None],
    placement: Callable[[], Placement] = lambda: DEFAULT,
) -> Extractor:
    """An extractor asking ``chat`` with ``prompts/extract.md`` (placed where the chat's own requests go); a failed
    call is reported and yields no fact, so the turn itself is still remembered."""

    def extract(text: str) -> list[str]:
        try:
            messages = placed([Message("system", prompt("extract")), Message("user", text)], placement())
            answer = complete(chat, messages, model)
        except ChatError as exc:
            on_error(exc)
            return []
        return parse_facts(answer)

    return extract
