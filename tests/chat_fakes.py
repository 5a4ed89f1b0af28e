"""A scripted in-process ``ChatModel``: replays replies, records every request, fails loudly when out of script."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from agent.domain import Message
from agent.errors import ChatError
from agent.ports import ChatChunk


@dataclass(frozen=True)
class Scripted:
    """One reply: its text pieces, the finish reason, and an error to raise after the pieces (a broken stream)."""

    pieces: tuple[str, ...]
    finish_reason: str | None = "stop"
    error: ChatError | None = None


def say(text: str, finish_reason: str | None = "stop", error: ChatError | None = None) -> Scripted:
    """A reply streamed word by word."""
    return Scripted(tuple(re.findall(r"\S+\s*", text)), finish_reason, error)


class ScriptedChat:
    """``ChatModel`` whose replies come from ``script``; ``requests`` holds every message list it was sent."""

    def __init__(self, *script: Scripted | str) -> None:
        self.script = [say(s) if isinstance(s, str) else s for s in script]
        self.requests: list[list[Message]] = []

    def stream(self, messages: Sequence[Message], model: str) -> Iterator[ChatChunk]:
        self.requests.append(list(messages))
        if not self.script:
            raise AssertionError(f"ScriptedChat ran out of script at request {len(self.requests)}")
        reply = self.script.pop(0)
        for piece in reply.pieces:
            yield ChatChunk(text=piece)
        if reply.error is not None:
            raise reply.error
        if reply.finish_reason:
            yield ChatChunk(finish_reason=reply.finish_reason)
        yield ChatChunk(prompt_tokens=sum(len(m.content.split()) for m in messages),
                        completion_tokens=len(reply.pieces))
