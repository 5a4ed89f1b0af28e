"""A scripted in-process ``ChatModel``: replays replies, records every request, fails loudly when out of script
and when a test ends with scripted replies nobody asked for (the turns they were written for never ran)."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import ClassVar

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
    """``ChatModel`` whose replies come from ``script``; ``requests`` holds every message list it was sent.

    Every instance is noted in ``made``; the autouse fixture ``scripts_used_up`` (conftest) fails a test that leaves
    any of their replies unused, as ``unused`` reports them."""

    made: ClassVar[list[ScriptedChat]] = []

    def __init__(self, *script: Scripted | str) -> None:
        self.script = [say(s) if isinstance(s, str) else s for s in script]
        self.requests: list[list[Message]] = []
        ScriptedChat.made.append(self)

    @classmethod
    def unused(cls) -> list[str]:
        """The replies left in every script made since the last call, as text; forgets those scripts."""
        left = ["".join(reply.pieces) for chat in cls.made for reply in chat.script]
        cls.made.clear()
        return left

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
