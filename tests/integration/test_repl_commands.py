"""Slash commands in a scripted chat: whole transcripts of what the user sees."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent.memory.context import FENCE_TAG
from agent.ui.commands import COMMANDS, resolve
from tests.chat_fakes import ScriptedChat
from tests.helpers_store import ledger_of
from tests.repl_harness import Chat, build_chat, memory_service, run_lines

PEANUTS = "I can't eat peanuts, they make my throat swell"
BERLIN = "I am moving to Berlin next month"


def with_memories(tmp_path: Path, chat: ScriptedChat, *texts: str) -> Chat:
    seeded = memory_service(tmp_path / "mem")
    for text in texts:
        seeded.add(text, session="monday")
    return build_chat(tmp_path, chat, memory=lambda: seeded)


def test_help_lists_every_command(tmp_path: Path) -> None:
    done = run_lines(build_chat(tmp_path, ScriptedChat()), "/help")
    for name in COMMANDS:
        assert name in done.out
    assert "/memories [QUERY]" in done.out and "Alt-Enter" in done.log


def test_memories_lists_a_numbered_table_and_forget_n_removes_it_from_recall(tmp_path: Path) -> None:
    chat = ScriptedChat("Try fruit.")
    done = run_lines(with_memories(tmp_path, chat, PEANUTS, BERLIN),
                     "/memories", "/forget 1", "/memories", "do peanuts make my throat swell?")
    first_table, second_table = done.out.split("2 memories")[1].split("1 memory")
    assert "│ 1 │ I can't eat peanuts" in first_table and "│ 2 │ I am moving to Berlin" in first_table
    assert "monday" in first_table and "explicit" in first_table
    assert f"forgot: {PEANUTS}" in done.log and "Forgot 1 memory." in done.log
    assert "peanuts" not in second_table
    assert "peanuts" not in chat.requests[0][0].content


def test_forget_query_shows_the_matches_and_asks_first(tmp_path: Path) -> None:
    done = run_lines(with_memories(tmp_path, ScriptedChat(), PEANUTS, BERLIN),
                     "/forget peanuts throat swell eat", "n", "/forget peanuts throat swell eat", "yes",
                     "/memories")
    assert done.log.count("Forget this memory? [y/N]") == 2
    assert "Nothing forgotten." in done.log and f"forgot: {PEANUTS}" in done.log
    assert done.out.count("I can't eat peanuts") == 2  # shown twice by the two /forget QUERY, never after
    assert memory_service(tmp_path / "mem").count() == 1


def test_forget_by_id_prefix(tmp_path: Path) -> None:
    service = memory_service(tmp_path / "mem")
    record = service.add(PEANUTS)
    done = run_lines(build_chat(tmp_path, ScriptedChat(), memory=lambda: service),
                     f"/forget {record.id[:8]}")
    assert f"forgot: {PEANUTS}" in done.log
    assert memory_service(tmp_path / "mem").count() == 0


def test_forget_a_number_without_a_listing_says_what_to_do(tmp_path: Path) -> None:
    done = run_lines(with_memories(tmp_path, ScriptedChat(), PEANUTS), "/forget 3")
    assert "No number 3 in the last listing: run /memories first." in done.log


def test_remember_then_why_shows_what_was_injected_with_similarity_and_threshold(tmp_path: Path) -> None:
    chat = ScriptedChat("Noted.")
    done = run_lines(build_chat(tmp_path, chat, memory=lambda: memory_service(tmp_path / "mem")),
                     "/why", f"/remember {PEANUTS}", "do peanuts make my throat swell?", "/why")
    assert "No reply with memory yet in this run." in done.log
    assert f"remembered: {PEANUTS}" in done.log
    assert f"<{FENCE_TAG}>" in chat.requests[0][0].content
    why = done.out.split("Noted.")[1]
    assert "injected into the last reply (threshold 0.30)" in why and "I can't eat peanuts" in why
    assert "sim" in why


def test_memory_text_is_escaped_in_listings(tmp_path: Path) -> None:
    """A memory is stored canonical, without control characters (``agent.memory.canonical``); one a store written
    before holds them all the same, put straight into its ledger here, and its listing shows them escaped."""
    seeded = memory_service(tmp_path / "mem")
    text = "I like \x1b[2Jred \x1b]8;;file:/evil\x07links"
    ledger_of(seeded).put([seeded._record(text, "explicit", session="monday", turn=1, when=1.0, source=text)])
    seeded.rebuild()
    done = run_lines(build_chat(tmp_path, ScriptedChat(), memory=lambda: seeded), "/memories")
    assert "\x1b" not in done.out and "\\x1b[2J" in done.out
    assert seeded.add(text).text == "I like [2Jred ]8;;file:/evillinks", "a new memory holds no control character"


def test_session_shows_name_file_and_context(tmp_path: Path) -> None:
    # Wide enough for any tmp_path (a parallel run's are longer): at 100 columns a long one is shown cut.
    done = run_lines(build_chat(tmp_path, ScriptedChat("Hi."), session="work", width=240), "hello", "/session")
    assert "work" in done.out and str(tmp_path / "sessions" / "work.json") in done.out
    assert "1 (1 in the context window)" in done.out and "memory   off" in done.out


def test_clear_empties_the_context_but_the_session_keeps_its_turns(tmp_path: Path) -> None:
    chat = ScriptedChat("Hi Ann.", "I don't know.")
    done = run_lines(build_chat(tmp_path, chat), "My name is Ann", "/clear", "What is my name?")
    assert "Short-term context cleared; the session file keeps its 1 turn." in done.log
    assert [m.role for m in chat.requests[1]] == ["system", "user"]
    assert len(done.session.turns) == 2 and done.session.context_start == 1


def test_retry_with_nothing_to_retry(tmp_path: Path) -> None:
    done = run_lines(build_chat(tmp_path, ScriptedChat()), "/retry")
    assert "Nothing to retry yet." in done.log


@pytest.mark.parametrize("word", ["/exit", "/quit", "exit", "quit", "/ex", "  QUIT  "])
def test_exit_words_leave_and_later_lines_are_not_read(tmp_path: Path, word: str) -> None:
    chat = ScriptedChat()
    done = run_lines(build_chat(tmp_path, chat), word, "never sent")
    assert done.code == 0 and chat.requests == []


def test_prefixes_unknown_and_ambiguous_commands(tmp_path: Path) -> None:
    chat = ScriptedChat("sent")
    done = run_lines(build_chat(tmp_path, chat), "/he", "/nope", "/re", " /usr/bin is a path")
    assert "/help" in done.out
    assert "/nope is not a command. /help lists the commands" in done.log
    assert "/re is ambiguous: /remember, /restore, /retry" in done.log
    assert chat.requests[0][-1].content == " /usr/bin is a path"


def test_resolve() -> None:
    assert resolve("/mem") == ["/memories"]
    assert resolve("/forget") == ["/forget"]
    assert resolve("/x") == []
