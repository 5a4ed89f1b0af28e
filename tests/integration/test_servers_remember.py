"""What the user said is remembered whatever became of the reply (cut off at max_tokens, interrupted, failed): the
issue's Monday on a small local model, where every reply ended cut off and nothing was remembered. Only the
model's extraction waits for a reply that finished."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent.errors import ChatRetryable, ContextOverflow
from agent.extract import model_extractor
from agent.memory.service import MemoryService
from tests.chat_fakes import Scripted, ScriptedChat, say
from tests.helpers_store import stores_of
from tests.repl_harness import build_chat, memory_service, run_lines

PEANUTS = "I can't eat peanuts, they make my throat swell"
FACT = "- The user can't eat peanuts; peanuts make the user's throat swell."


def extracting(tmp_path: Path, chat: ScriptedChat) -> MemoryService:
    service = memory_service(tmp_path / "mem")
    return MemoryService(*stores_of(service), service.embedder, "me",
                         extractor=model_extractor(chat, "test-model", lambda exc: None))


@pytest.mark.parametrize(
    "reply",
    [
        say("Peanut-free snacks are", finish_reason="length"),
        say("Peanut-free", finish_reason=None),
        say("Peanut-free", finish_reason=None, error=ChatRetryable("The reply broke off mid-stream.")),
        say("", finish_reason=None, error=ContextOverflow("The request exceeds the server's context.")),
    ],
    ids=["max_tokens", "no-finish-reason", "broken", "refused"],
)
def test_the_users_line_is_remembered_when_the_reply_did_not_finish_and_extraction_waits(
    tmp_path: Path, reply: Scripted
) -> None:
    chat = ScriptedChat(reply)
    done = run_lines(build_chat(tmp_path, chat, memory=lambda: extracting(tmp_path, chat), max_tokens=16), PEANUTS)
    assert done.session.turns[0].status in {"truncated", "failed"}
    assert f"remembered: {PEANUTS}" in done.log
    assert len(chat.requests) == 1, "no extraction call for a reply that did not finish"
    assert [m.text for m in memory_service(tmp_path / "mem").list()] == [PEANUTS]


def test_retry_of_an_unfinished_reply_extracts_then_without_saying_the_line_again(tmp_path: Path) -> None:
    chat = ScriptedChat(say("Peanut", finish_reason="length"), "Noted, no peanuts.", FACT)
    done = run_lines(build_chat(tmp_path, chat, memory=lambda: extracting(tmp_path, chat), max_tokens=16),
                     PEANUTS, "/retry")
    assert "[the reply was cut off (length): it reached AGENT_MAX_TOKENS (16); it is kept, marked cut off]" in done.log
    assert chat.requests[2][0].content.startswith("You extract lasting facts")
    assert "remembered: The user can't eat peanuts; peanuts make the user's throat swell." in done.log


def test_retry_without_extraction_remembers_the_line_once(tmp_path: Path) -> None:
    chat = ScriptedChat(say("Peanut", finish_reason="length"), "Noted, no peanuts.")
    done = run_lines(build_chat(tmp_path, chat, memory=lambda: memory_service(tmp_path / "mem")), PEANUTS, "/retry")
    assert done.log.count(f"remembered: {PEANUTS}") == 1
    assert [t.status for t in done.session.turns] == ["complete"]
