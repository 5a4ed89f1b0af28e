"""/profile, /memories --history, /restore and /forget on a profile fact, in a whole chat in-process."""

from __future__ import annotations

from pathlib import Path

from tests.chat_fakes import ScriptedChat
from tests.repl_harness import build_chat, memory_service, run_lines

BOSTON = "I live in Boston, in a small flat near the river."
BERLIN = "Big news: I moved to Berlin last month!"


def seeded(tmp_path: Path, *lines: str) -> None:
    service = memory_service(tmp_path / "mem")
    for n, line in enumerate(lines):
        service.observe(line, session="monday", turn=n + 1)


def test_profile_lists_each_value_with_when_and_where_and_what_it_replaced(tmp_path: Path) -> None:
    seeded(tmp_path, BOSTON, "I'm allergic to peanuts.", BERLIN)
    done = run_lines(build_chat(tmp_path, ScriptedChat(), memory=lambda: memory_service(tmp_path / "mem")),
                     "/profile")
    rows = [line for line in done.out.splitlines() if "│" in line]
    assert any("allergies" in r and "peanuts" in r and "current" in r and "monday" in r for r in rows)
    assert any("lives in" in r and "Berlin" in r and "current" in r for r in rows)
    assert any("lives in" in r and "Boston" in r and "replaced" in r for r in rows)


def test_history_shows_the_replaced_memory_and_restore_makes_it_current(tmp_path: Path) -> None:
    seeded(tmp_path, BOSTON, BERLIN)
    chat = ScriptedChat("ok")
    done = run_lines(build_chat(tmp_path, chat, memory=lambda: memory_service(tmp_path / "mem")),
                     "/memories --history", "/restore 1", "Any good bakeries near me?")
    assert "1 replaced memory" in done.out and "Boston" in done.out and "Berlin" in done.out
    assert "restored: I live in Boston" in done.log
    prompt = chat.requests[-1][0].content
    assert "lives in: Boston" in prompt and "Berlin" not in prompt.split("<memory_notes>")[0]


def test_forget_a_profile_fact_forgets_the_memory_it_came_from(tmp_path: Path) -> None:
    seeded(tmp_path, "I'm allergic to peanuts.", "I play the cello in an orchestra")
    chat = ScriptedChat("ok")
    done = run_lines(build_chat(tmp_path, chat, memory=lambda: memory_service(tmp_path / "mem")),
                     "/profile", "/forget 1", "What should I cook tonight?")
    assert "forgot: I'm allergic to peanuts." in done.log
    assert "peanuts" not in chat.requests[-1][0].content
    assert [r.text for r in memory_service(tmp_path / "mem").list()] == ["I play the cello in an orchestra"]
