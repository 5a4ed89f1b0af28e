"""The short-term window: message cap, token budget, rolling summary, message assembly."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import pytest

from agent.conversation import (
    SUMMARY_HEADING,
    Conversation,
    Fold,
    ShortTermMemory,
    Turn,
    model_summarizer,
)
from agent.domain import Message
from agent.errors import ChatRetryable
from agent.ports import ChatChunk
from agent.prompts import prompt
from tests.chat_fakes import ScriptedChat


def words(text: str) -> int:
    return len(text.split())


class RecordingSummarizer:
    """Summarises by listing the user lines it was given; records every call."""

    def __init__(self, fail: bool = False) -> None:
        self.calls: list[tuple[str, list[Message]]] = []
        self.fail = fail

    def __call__(self, previous: str, dropped: Sequence[Message]) -> str:
        self.calls.append((previous, list(dropped)))
        if self.fail:
            raise ChatRetryable("the model server kept failing")
        said = [m.content for m in dropped if m.role == "user"]
        return " ".join(filter(None, [previous, *said]))


def turn(n: int, size: int = 5) -> Turn:
    return Turn(f"question {n} " + "w " * (size - 2), f"answer {n} " + "w " * (size - 2))


def add(conversation: Conversation, turn: Turn) -> Fold | None:
    """Add a turn and fold what left the window at once, as the chat does later on its summary thread."""
    leaving = conversation.add(turn)
    return None if leaving is None else conversation.fold(leaving)


def test_sixty_messages_into_a_memory_capped_at_fifty_leave_the_newest_fifty() -> None:
    memory = ShortTermMemory(max_messages=50)
    evicted = []
    for n in range(60):
        evicted += memory.add(Message("user", f"message {n}"))
    assert len(memory.messages) == 50
    assert [m.content for m in memory.messages] == [f"message {n}" for n in range(10, 60)]
    assert [m.content for m in evicted] == [f"message {n}" for n in range(10)]


def test_unfinished_replies_go_to_the_model_without_the_agent_s_notes_and_a_failed_empty_one_is_left_out() -> None:
    """Small models echoed a note sent as the assistant's own words ("[reply cut off before its end]")."""
    assert Turn("hi", "hello").messages() == [Message("user", "hi"), Message("assistant", "hello")]
    for status in ("interrupted", "truncated", "failed"):
        assert Turn("hi", "hel", status=status).messages() == [Message("user", "hi"), Message("assistant", "hel")]
    assert Turn("hi", "", status="failed").messages() == [Message("user", "hi")]


def test_messages_hold_system_prompt_memory_block_summary_window_and_the_line() -> None:
    conversation = Conversation(1000, RecordingSummarizer(), counter=words, clock=lambda: 0.0)
    add(conversation, Turn("I like tea", "Noted."))
    conversation.summary = "The user greeted."
    messages = conversation.messages("What should I drink?", "<memory_notes>\n- tea\n</memory_notes>")
    assert messages[0].role == "system"
    assert messages[0].content.startswith(prompt("system"))
    assert "Today is Thursday 1970-01-01." in messages[0].content
    assert messages[0].content.endswith(  # one system message: formats that keep only the first keep the summary
        "<memory_notes>\n- tea\n</memory_notes>\n\n"
        f"<conversation_summary>\n{SUMMARY_HEADING}\nThe user greeted.\n</conversation_summary>")
    assert messages[1:] == [Message("user", "I like tea"), Message("assistant", "Noted."),
                            Message("user", "What should I drink?")]


def test_without_memory_or_summary_there_is_one_system_message() -> None:
    messages = Conversation(1000, RecordingSummarizer(), counter=words).messages("hi")
    assert [m.role for m in messages] == ["system", "user"]
    assert "memory_notes" not in messages[0].content


def test_past_the_budget_the_oldest_turns_fold_into_the_summary_in_one_call() -> None:
    summarizer = RecordingSummarizer()
    conversation = Conversation(40, summarizer, counter=words)
    folds = [add(conversation, turn(n)) for n in range(4)]  # 10 words a turn: 40 fits
    assert folds == [None] * 4 and summarizer.calls == []
    fold = add(conversation, turn(4))
    assert fold is not None and fold.turns == 2 and fold.error is None
    assert len(summarizer.calls) == 1
    previous, dropped = summarizer.calls[0]
    assert previous == "" and [m.content.split()[:2] for m in dropped if m.role == "user"] == [
        ["question", "0"], ["question", "1"]]
    assert conversation.tokens() - words(conversation.summary) <= 30
    assert conversation.start == 2 and conversation.turns == 5
    assert conversation.summary.startswith("question 0")
    window = conversation.messages("next")[1:-1]
    assert window[0].content.startswith("question 2")


def test_the_last_turn_stays_even_when_it_alone_exceeds_the_budget() -> None:
    conversation = Conversation(10, RecordingSummarizer(), counter=words)
    add(conversation, turn(0, size=30))
    assert conversation.start == 0 and len(conversation.messages("x")) == 4


def test_a_failed_summary_call_keeps_the_users_lines_and_reports_why() -> None:
    conversation = Conversation(20, RecordingSummarizer(fail=True), counter=words)
    add(conversation, turn(0))
    add(conversation, turn(1))
    fold = add(conversation, turn(2))
    assert fold is not None and fold.error == "the model server kept failing"
    assert conversation.summary.startswith("The user said: question 0")


def test_a_summariser_that_breaks_costs_the_summary_not_the_chat() -> None:
    def broken(previous: str, dropped: Sequence[Message]) -> str:
        raise ValueError("unexpected reply shape")

    conversation = Conversation(20, broken, counter=words)
    add(conversation, turn(0))
    add(conversation, turn(1))
    assert add(conversation, turn(2)) == Fold(2, "ValueError: unexpected reply shape")
    assert conversation.summary.startswith("The user said: question 0") and conversation.start == 2


def test_the_message_cap_evicts_whole_turns() -> None:
    summarizer = RecordingSummarizer()
    conversation = Conversation(10_000, summarizer, counter=words, max_messages=5)
    for n in range(3):
        add(conversation, turn(n))
    window = conversation.messages("x")[1:-1]
    assert window[0].role == "user" and window[0].content.startswith("question 2")
    assert conversation.start == 2 and len(summarizer.calls) == 1


def test_past_the_message_cap_the_window_trims_to_three_quarters_so_summaries_come_every_few_turns() -> None:
    summarizer = RecordingSummarizer()
    conversation = Conversation(10_000, summarizer, counter=words, max_messages=20)
    for n in range(30):
        add(conversation, turn(n))
        assert len(conversation.messages("x")) - 2 <= 20  # the system message and the line
    assert 1 <= len(summarizer.calls) <= 30 // 4
    assert conversation.summary.startswith("question 0 ")


def test_turns_that_left_the_window_count_as_in_it_until_they_are_folded() -> None:
    conversation = Conversation(20, RecordingSummarizer(), counter=words)
    add(conversation, turn(0))
    add(conversation, turn(1))
    leaving = conversation.add(turn(2))
    assert leaving is not None and leaving.turns == 2
    assert conversation.start == 0 and conversation.summary == ""  # a save now resumes with them in the window
    assert conversation.fold(leaving) == Fold(2)
    assert conversation.start == 2 and conversation.summary.startswith("question 0")


def test_clear_empties_the_window_and_summary_but_counts_the_turns() -> None:
    conversation = Conversation(1000, RecordingSummarizer(), counter=words)
    add(conversation, turn(0))
    conversation.summary = "old"
    conversation.clear()
    assert [m.role for m in conversation.messages("x")] == ["system", "user"]
    assert conversation.start == conversation.turns == 1
    conversation.drop_last()
    assert conversation.turns == conversation.start == 0


def test_drop_last_removes_the_newest_turn_for_a_retry() -> None:
    conversation = Conversation(1000, RecordingSummarizer(), counter=words)
    add(conversation, Turn("one", "first"))
    add(conversation, Turn("two", "", status="failed"))
    conversation.drop_last()
    assert [m.content for m in conversation.messages("two")[1:]] == ["one", "first", "two"]
    assert conversation.turns == 1


def test_resume_restores_the_window_from_start_and_the_summary() -> None:
    conversation = Conversation(1000, RecordingSummarizer(), counter=words)
    turns = [Turn("one", "1"), Turn("two", "2"), Turn("three", "3")]
    conversation.resume(turns, start=1, summary="The user said one.")
    messages = conversation.messages("four")
    assert messages[0].content.endswith("The user said one.\n</conversation_summary>")
    assert [m.content for m in messages[1:]] == ["two", "2", "three", "3", "four"]
    assert conversation.turns == 3 and conversation.start == 1


def test_model_summarizer_sends_the_summary_prompt_and_the_transcript() -> None:
    chat = ScriptedChat("The user likes tea.")
    summarize = model_summarizer(chat, "m")
    result = summarize("The user is Ann.", [Message("user", "I like tea"), Message("assistant", "Nice")])
    assert result == "The user likes tea."
    system, user = chat.requests[0]
    assert system == Message("system", prompt("summary"))
    assert "The user is Ann." in user.content and "user: I like tea\nassistant: Nice" in user.content


def test_a_capacity_below_one_is_refused() -> None:
    with pytest.raises(ValueError):
        ShortTermMemory(0)


def test_ctrl_c_during_the_summary_call_falls_back_to_the_users_lines() -> None:
    class Interrupted:
        def stream(self, messages: Sequence[Message], model: str) -> Iterator[ChatChunk]:
            raise KeyboardInterrupt
            yield ChatChunk()

    conversation = Conversation(20, model_summarizer(Interrupted(), "m"), counter=words)
    for n in range(3):
        fold = add(conversation, turn(n))
    assert fold is not None and fold.error == "the summary was interrupted"
    assert conversation.summary.startswith("The user said: question 0")
