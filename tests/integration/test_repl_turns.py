"""Chat turns in-process: what is sent, shown, saved and remembered, and what happens when things go wrong."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from pathlib import Path

from agent.domain import Message
from agent.errors import ChatRetryable, EmbeddingError, MemoryUnavailable
from agent.extract import model_extractor
from agent.memory.context import FENCE_TAG
from agent.memory.service import MemoryService
from agent.ports import ChatChunk
from agent.prompts import prompt
from tests.chat_fakes import ScriptedChat, say
from tests.fakes import WordHashEmbedder
from tests.helpers_store import stores_of
from tests.repl_harness import build_chat, memory_service, run_lines

PEANUTS = "I can't eat peanuts, they make my throat swell"


def test_a_turn_streams_the_reply_saves_it_and_remembers_the_users_words(tmp_path: Path) -> None:
    chat = ScriptedChat("Noted, no peanuts.", "Try apple slices.")
    done = run_lines(build_chat(tmp_path, chat, memory=lambda: memory_service(tmp_path / "mem")),
                     PEANUTS, "do peanuts make my throat swell?")
    assert done.code == 0
    assert done.out == "Noted, no peanuts.\nTry apple slices.\n"
    assert f"remembered: {PEANUTS}" in done.log
    assert "↳ " in done.log and "tokens in" in done.log
    turns = done.session.turns
    assert [(t.user, t.reply, t.status) for t in turns] == [
        (PEANUTS, "Noted, no peanuts.", "complete"),
        ("do peanuts make my throat swell?", "Try apple slices.", "complete"),
    ]
    first, second = chat.requests
    assert FENCE_TAG not in first[0].content
    assert f"<{FENCE_TAG}>" in second[0].content and "peanuts, they make my throat swell" in second[0].content
    assert [m.content for m in second[1:]] == [PEANUTS, "Noted, no peanuts.", "do peanuts make my throat swell?"]


def test_without_memory_nothing_is_recalled_or_written(tmp_path: Path) -> None:
    chat = ScriptedChat("ok", "ok")
    done = run_lines(build_chat(tmp_path, chat), PEANUTS, "/memories", "peanuts?")
    assert "remembered" not in done.log
    assert "memory is off" in done.log
    assert all(FENCE_TAG not in request[0].content for request in chat.requests)


def test_a_reply_without_finish_reason_is_kept_as_truncated_and_the_users_words_remembered(tmp_path: Path) -> None:
    chat = ScriptedChat(say("Half a rep", finish_reason=None), say("All", finish_reason="length"))
    done = run_lines(build_chat(tmp_path, chat, memory=lambda: memory_service(tmp_path / "mem")),
                     PEANUTS, "My favourite colour is green and I love it")
    assert [t.status for t in done.session.turns] == ["truncated", "truncated"]
    assert "cut off (no finish reason)" in done.log and "cut off (length)" in done.log
    assert f"remembered: {PEANUTS}" in done.log  # what the user said, whatever became of the reply
    assert memory_service(tmp_path / "mem").count() == 2


def test_a_broken_stream_keeps_the_partial_reply_and_retry_replaces_it(tmp_path: Path) -> None:
    broken = say("The first half", finish_reason=None, error=ChatRetryable("The reply broke off mid-stream."))
    chat = ScriptedChat(broken, "The whole answer.")
    done = run_lines(build_chat(tmp_path, chat, memory=lambda: memory_service(tmp_path / "mem")),
                     PEANUTS, "/retry")
    assert done.out == "The first half\nThe whole answer.\n"
    assert "error: The reply broke off mid-stream." in done.log
    assert "partial reply is kept, marked incomplete; /retry" in done.log
    assert done.code == 1  # a script learns that a turn failed
    assert [(t.reply, t.status) for t in done.session.turns] == [("The whole answer.", "complete")]
    assert [m.content for m in chat.requests[1][1:]] == [PEANUTS]
    assert done.log.count("remembered:") == 1


def test_a_failed_turn_keeps_the_users_line_so_it_can_be_sent_again(tmp_path: Path) -> None:
    chat = ScriptedChat(say("", error=ChatRetryable("Cannot reach the model server.")))
    done = run_lines(build_chat(tmp_path, chat), "hello there")
    assert "error: Cannot reach the model server." in done.log
    assert [(t.user, t.reply, t.status) for t in done.session.turns] == [("hello there", "", "failed")]


class InterruptingChat:
    """Streams two pieces, then behaves as if the user pressed Ctrl-C; records whether the stream was closed."""

    def __init__(self) -> None:
        self.closed = False
        self.requests: list[list[Message]] = []

    def stream(self, messages: Sequence[Message], model: str) -> Iterator[ChatChunk]:
        self.requests.append(list(messages))
        if len(self.requests) > 1:
            yield ChatChunk(text="Back again.")
            yield ChatChunk(finish_reason="stop")
            return
        try:
            yield ChatChunk(text="Once upon ")
            yield ChatChunk(text="a time")
            raise KeyboardInterrupt
        finally:
            self.closed = True


def test_ctrl_c_during_a_reply_keeps_the_partial_reply_and_the_chat_goes_on(tmp_path: Path) -> None:
    chat = InterruptingChat()
    done = run_lines(build_chat(tmp_path, chat, memory=lambda: memory_service(tmp_path / "mem")),
                     "I love long stories about dragons", "hello")
    assert chat.closed
    assert done.out == "Once upon a time\nBack again.\n"
    assert "[interrupted: the partial reply is kept in the session; /retry asks again]" in done.log
    assert [(t.reply, t.status) for t in done.session.turns] == [("Once upon a time", "interrupted"),
                                                                 ("Back again.", "complete")]
    assert "remembered: I love long stories about dragons" in done.log
    assert chat.requests[1][2] == Message("assistant", "Once upon a time"), "the note stays out of what is sent"
    assert done.session.turns[0].status == "interrupted", "and in the session file"


def test_a_store_that_cannot_be_opened_means_a_chat_without_memory(tmp_path: Path) -> None:
    def broken() -> MemoryService:
        raise MemoryUnavailable("The memory store is locked by another process.")

    chat = ScriptedChat("one", "two")
    done = run_lines(build_chat(tmp_path, chat, memory=broken), PEANUTS, "again")
    assert done.out == "one\ntwo\n"
    assert done.log.count("Long-term memory is unavailable: The memory store is locked") == 1
    assert done.repl.engine.status().memory is None


def test_even_a_bug_in_the_memory_layer_leaves_the_chat_working(tmp_path: Path) -> None:
    def buggy() -> MemoryService:
        raise TypeError("reconcile() missing 1 required positional argument")

    done = run_lines(build_chat(tmp_path, ScriptedChat("one"), memory=buggy), PEANUTS)
    assert done.out == "one\n"
    assert "memory store could not be opened (TypeError: reconcile() missing" in done.log


class FailingEmbedder(WordHashEmbedder):
    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        raise EmbeddingError("The embedding server answered 500.")


def test_a_failed_write_is_reported_not_swallowed(tmp_path: Path) -> None:
    chat = ScriptedChat("Noted.")
    done = run_lines(build_chat(tmp_path, chat, memory=lambda: memory_service(tmp_path / "m", FailingEmbedder())),
                     PEANUTS)
    assert "memory: recall failed (The embedding server answered 500.)" in done.log
    assert "memory: could not save turn 1 (The embedding server answered 500.)" in done.log
    assert done.out == "Noted.\n" and done.session.turns[0].status == "complete"


class BlockedEmbedder(WordHashEmbedder):
    """Holds every write (a batch starting with the peanut line, after the first call) until ``release`` is set."""

    def __init__(self) -> None:
        super().__init__()
        self.release = threading.Event()
        self.finished = threading.Event()

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if texts and texts[0] == PEANUTS and len(self.calls) > 0:
            assert self.release.wait(60)
            self.finished.set()
        return super().embed(texts)


def test_the_write_runs_after_the_reply_off_the_critical_path_and_finishes_before_exit(tmp_path: Path) -> None:
    embedder = BlockedEmbedder()
    harness = build_chat(tmp_path, ScriptedChat("Noted."), memory=lambda: memory_service(tmp_path / "m", embedder))
    harness.repl.turn(PEANUTS)  # returns while the write is still blocked: the next prompt does not wait
    assert not embedder.finished.is_set()
    saved = harness.repl.engine.session_store().load("test")
    assert saved.turns[0].status == "complete"  # durable before the next prompt
    threading.Timer(0.2, embedder.release.set).start()
    run_lines(harness)  # end of input: leaving waits for the pending write
    assert embedder.finished.is_set()
    assert f"remembered: {PEANUTS}" in harness.log


def test_a_resumed_session_carries_its_turns_into_the_context(tmp_path: Path) -> None:
    run_lines(build_chat(tmp_path, ScriptedChat("Hi Ann."), session="work"), "My name is Ann")
    chat = ScriptedChat("You are Ann.")
    done = run_lines(build_chat(tmp_path, chat, session="work"), "What is my name?")
    assert [m.content for m in chat.requests[0][1:]] == ["My name is Ann", "Hi Ann.", "What is my name?"]
    assert len(done.session.turns) == 2


def test_turns_past_the_budget_fold_into_a_summary_that_survives_a_resume(tmp_path: Path) -> None:
    chat = ScriptedChat("word " * 30, "word " * 30, "The user asked twice.")
    done = run_lines(build_chat(tmp_path, chat, budget=60), "first question", "second question")
    assert chat.requests[2][0].content.startswith("You maintain a running summary")
    session = done.session
    assert session.summary == "The user asked twice." and session.context_start == 1
    assert "(the oldest turn left the context window; a summary keeps it in mind)" in done.log
    resumed = ScriptedChat("ok")
    run_lines(build_chat(tmp_path, resumed, budget=60), "third")
    assert resumed.requests[0][0].content.endswith("The user asked twice.\n</conversation_summary>")
    assert [m.content for m in resumed.requests[0][1:]][0] == "second question"


def test_the_summary_is_made_while_the_user_types_and_awaited_only_by_the_next_request(tmp_path: Path) -> None:
    started, release = threading.Event(), threading.Event()

    class SlowSummary(ScriptedChat):
        def stream(self, messages: Sequence[Message], model: str) -> Iterator[ChatChunk]:
            if messages[0].content == prompt("summary"):
                started.set()
                assert release.wait(60), "the summary was never released"
            yield from super().stream(messages, model)

    chat = SlowSummary("word " * 30, "word " * 30, "The user asked twice.", "ok")
    repl = build_chat(tmp_path, chat, budget=60).repl
    repl.turn("first question")
    repl.turn("second question")  # pushes the first turn out: its summary waits for ``release``

    assert started.wait(60) and len(chat.requests) == 2  # the turn is over, the summary still in flight
    saved = repl.engine.session_store().load("test")
    assert len(saved.turns) == 2 and saved.context_start == 0 and saved.summary == ""  # nothing lost meanwhile
    release.set()
    repl.turn("third")

    assert chat.requests[3][0].content.endswith("The user asked twice.\n</conversation_summary>")
    saved = repl.engine.session_store().load("test")
    assert saved.summary == "The user asked twice." and saved.context_start == 1


def test_a_summary_that_fails_is_reported_at_the_next_turn_and_its_lines_kept(tmp_path: Path) -> None:
    failing = say("", error=ChatRetryable("the server kept failing"))
    done = run_lines(build_chat(tmp_path, ScriptedChat("word " * 30, "word " * 30, failing, "ok"), budget=60),
                     "first question", "second question", "third")
    assert "Could not summarise the earlier turn (the server kept failing)" in done.log
    assert done.session.summary.startswith("The user said: first question")


def test_a_server_without_usage_gets_an_estimated_usage_line(tmp_path: Path) -> None:
    class NoUsage(ScriptedChat):
        def stream(self, messages: Sequence[Message], model: str) -> Iterator[ChatChunk]:
            return (c for c in super().stream(messages, model) if c.prompt_tokens is None)

    done = run_lines(build_chat(tmp_path, NoUsage("Hello!")), "hi")
    assert "(estimated: the server sent no usage)" in done.log and "~" in done.log


def test_model_text_cannot_send_terminal_escapes(tmp_path: Path) -> None:
    done = run_lines(build_chat(tmp_path, ScriptedChat("click \x1b]8;;http://evil\x07here\x1b[2J")), "hi")
    assert "\x1b" not in done.out and "\\x1b]8;;http://evil\\x07here\\x1b[2J" in done.out


def test_stage_two_extraction_asks_the_model_after_the_reply_and_stores_grounded_facts(tmp_path: Path) -> None:
    chat = ScriptedChat("Noted.", "- The user can't eat peanuts; peanuts make the user's throat swell.\n- NONE")
    extractor = model_extractor(chat, "test-model", lambda exc: None)

    def with_extraction() -> MemoryService:
        service = memory_service(tmp_path / "mem")
        return MemoryService(*stores_of(service), service.embedder, "me", extractor=extractor)

    done = run_lines(build_chat(tmp_path, chat, memory=with_extraction), PEANUTS)
    assert chat.requests[1][0].content.startswith("You extract lasting facts")
    assert f"remembered: {PEANUTS}" in done.log
    assert "remembered: The user can't eat peanuts; peanuts make the user's throat swell." in done.log


def test_the_toolbar_counts_memories_once_the_store_is_open(tmp_path: Path) -> None:
    done = run_lines(build_chat(tmp_path, ScriptedChat("hi"), memory=lambda: memory_service(tmp_path / "m")), "hi")
    assert "│ memories 0 │" in done.repl.toolbar()


def test_debug_shows_the_traceback_of_a_failed_turn(tmp_path: Path) -> None:
    chat = ScriptedChat(say("", error=ChatRetryable("Cannot reach the model server.")))
    harness = build_chat(tmp_path, chat)
    harness.repl.debug = True
    done = run_lines(harness, "hello")
    assert "Traceback" in done.out and "ChatRetryable" in done.out
