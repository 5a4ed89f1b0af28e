"""The chat does what the LoCoMo benchmark measures: a remembered line is indexed with the reply it answers, so a
later question that names what the reply asked about finds the short answer."""

from __future__ import annotations

from pathlib import Path

from agent.app.chat_engine import CONTEXT_CHARS
from agent.memory.service import MemoryService
from tests.chat_fakes import ScriptedChat
from tests.repl_harness import build_chat, memory_service, run_lines


def test_a_memory_is_indexed_with_the_end_of_the_reply_it_answers(tmp_path: Path) -> None:
    long_reply = "x" * 1_000 + " Which instrument does your daughter play in the school orchestra?"
    chat = ScriptedChat(long_reply, "Lovely!")
    opened: list[MemoryService] = []

    def open_service() -> MemoryService:
        opened.append(memory_service(tmp_path / "mem"))
        return opened[-1]

    run_lines(build_chat(tmp_path, chat, memory=open_service),
              "My daughter Mia is nine and loves school", "She plays the bassoon, I'm so proud of her")
    (service,) = opened
    by_text = {r.text: r for r in service.list()}
    answer = by_text["She plays the bassoon, I'm so proud of her"]
    assert answer.extra["context"] == long_reply[-CONTEXT_CHARS:]
    assert "context" not in by_text["My daughter Mia is nine and loves school"].extra
    top = service.search("which instrument in the orchestra", k=1)  # words only the reply has
    assert top[0].record.id == answer.id
