"""/why says what went with the last reply: the profile (on every request, whatever the message) as well as the
memories recalled for it; "none was injected" only when nothing was."""

from __future__ import annotations

from pathlib import Path

from agent.memory.fences import PROFILE_TAG
from tests.chat_fakes import ScriptedChat
from tests.repl_harness import build_chat, memory_service, run_lines

FACTS = ("I'm allergic to shellfish.", "I live in Lisbon.", "My wife is called Ana.")


def seeded(tmp_path: Path) -> None:
    service = memory_service(tmp_path / "mem")
    for n, line in enumerate(FACTS):
        service.observe(line, session="monday", turn=n + 1)


def test_why_lists_the_profile_that_was_sent_when_no_memory_reached_the_threshold(tmp_path: Path) -> None:
    seeded(tmp_path)
    chat = ScriptedChat("ok")
    done = run_lines(build_chat(tmp_path, chat, memory=lambda: memory_service(tmp_path / "mem")),
                     "What time is it in Tokyo?", "/why")
    sent = chat.requests[-1][0].content
    assert f"<{PROFILE_TAG}>" in sent and "shellfish" in sent and "Lisbon" in sent and "Ana" in sent
    why = done.out.split("ok", 1)[1]
    assert "profile sent with the last reply" in why
    assert "shellfish" in why and "Lisbon" in why and "Ana" in why
    assert "none was injected" not in done.log
    assert "only the profile above was sent" in done.log


def test_why_numbers_profile_rows_and_memories_together_so_forget_n_takes_either(tmp_path: Path) -> None:
    seeded(tmp_path)
    chat = ScriptedChat("ok")
    done = run_lines(build_chat(tmp_path, chat, memory=lambda: memory_service(tmp_path / "mem")),
                     "/remember My sister Ottilie keeps two cats called Fig and Olive",
                     "do Ottilie's cats Fig and Olive like fish?", "/why", "/forget 4")
    why = done.out.split("ok", 1)[1]
    rows = [line for line in why.splitlines() if line.lstrip("│ ").startswith("4 ")]
    assert rows and "Ottilie" in rows[0], why
    assert "forgot: My sister Ottilie" in done.log


def test_why_says_none_was_injected_only_when_nothing_was(tmp_path: Path) -> None:
    memory_service(tmp_path / "mem").observe("I play the cello in an orchestra", session="monday", turn=1)
    done = run_lines(build_chat(tmp_path, ScriptedChat("ok"), memory=lambda: memory_service(tmp_path / "mem")),
                     "What time is it in Tokyo?", "/why")
    assert "none was injected" in done.log and "profile sent" not in done.out
