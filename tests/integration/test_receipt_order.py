"""The ``remembered:`` receipt belongs to its exchange: at a terminal the next prompt waits (bounded) for this
turn's write, so the receipt comes after the reply and before the prompt; a write that outlasts the wait says
which turn it was for when it lands. In-process, with a reader that notes what was printed when each prompt opens."""

from __future__ import annotations

import io
import threading
from pathlib import Path

import pytest

from agent.memory.service import MemoryService, WriteReport
from agent.ui import repl as repl_module
from agent.ui.prompt import PipeReader
from tests.chat_fakes import ScriptedChat
from tests.helpers_store import stores_of
from tests.repl_harness import Chat, build_chat, memory_service

CHESS = "I play chess with my brother every week"
TEA = "I drink green tea every morning"


class NotingReader(PipeReader):
    """Lines from a script; notes the notices printed so far at each prompt, and sets ``before`` at every prompt
    after the first."""

    def __init__(self, chat: Chat, *lines: str, before: threading.Event | None = None) -> None:
        super().__init__(chat.repl.out.notice, io.StringIO("".join(f"{line}\n" for line in lines)))
        self.chat = chat
        self.before = before
        self.seen: list[str] = []

    def read(self) -> str:
        self.seen.append(self.chat.log)
        if self.before is not None and len(self.seen) > 1:
            self.before.set()  # the user is at the prompt after a turn: the held write may go on
        return super().read()


def run(chat: Chat, reader: NotingReader) -> None:
    chat.repl.use(reader)
    chat.code = chat.repl.run()


def test_the_receipt_is_printed_before_the_next_prompt(tmp_path: Path) -> None:
    memory = memory_service(tmp_path / "mem")
    chat = build_chat(tmp_path, ScriptedChat("Fun.", "Nice."), memory=lambda: memory, interactive=True)
    reader = NotingReader(chat, CHESS, TEA)
    run(chat, reader)
    assert reader.seen[1].endswith(f"remembered: {CHESS}\n")
    assert reader.seen[2].endswith(f"remembered: {TEA}\n")


class HeldService(MemoryService):
    """A store whose writes wait until ``go`` is set: a write that outlasts the prompt's wait."""

    go = threading.Event()

    def observe(self, text: str, **kwargs: object) -> WriteReport:  # type: ignore[override]
        assert self.go.wait(60), "the prompt never opened"
        return super().observe(text, **kwargs)  # type: ignore[arg-type]


def test_a_late_receipt_names_its_turn(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(repl_module, "RECEIPT_WAIT", 0.0)
    plain = memory_service(tmp_path / "mem")
    memory = HeldService(*stores_of(plain), plain.embedder, plain.user)
    go = threading.Event()
    monkeypatch.setattr(HeldService, "go", go)
    chat = build_chat(tmp_path, ScriptedChat("Fun."), memory=lambda: memory, interactive=True)
    reader = NotingReader(chat, CHESS, before=go)
    run(chat, reader)
    assert "remembered" not in reader.seen[1], "the prompt did not wait past RECEIPT_WAIT"
    assert chat.log.endswith(f"(turn 1) remembered: {CHESS}\n")
