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


def test_the_toolbar_and_session_count_the_current_memories_not_the_replaced_ones(tmp_path: Path) -> None:
    seeded(tmp_path, BOSTON, BERLIN, "I'm allergic to peanuts.")
    done = run_lines(build_chat(tmp_path, ScriptedChat(), memory=lambda: memory_service(tmp_path / "mem")),
                     "/session", "/memories")
    assert "memories 2 │" in done.repl.toolbar()
    assert "2 memories" in done.out and "3 memories" not in done.out


def test_a_second_restore_from_one_listing_takes_the_number_shown(tmp_path: Path) -> None:
    seeded(tmp_path, "I live in Boston.", "I'm allergic to peanuts.", "I moved to Berlin last month!",
           "I'm no longer allergic to peanuts.")
    done = run_lines(build_chat(tmp_path, ScriptedChat(), memory=lambda: memory_service(tmp_path / "mem")),
                     "/memories --history", "/restore 1", "/restore 2", "/restore 2", "/restore 7")
    assert "2 replaced memories" in done.out
    restored = [line for line in done.log.splitlines() if line.startswith("restored: ")]
    assert sorted(restored) == ["restored: I live in Boston.", "restored: I'm allergic to peanuts."]
    assert "nothing restored" in done.log, "the third, of a memory current again, says why it does nothing"
    assert "No number 7 in the last listing: /memories --history lists the replaced memories again" in done.log
    assert "Usage:" not in done.log


def test_restore_n_without_a_listing_says_to_list_first(tmp_path: Path) -> None:
    seeded(tmp_path, BOSTON, BERLIN)
    done = run_lines(build_chat(tmp_path, ScriptedChat(), memory=lambda: memory_service(tmp_path / "mem")),
                     "/restore 1")
    assert "No listing to take a number from: /memories --history lists the replaced memories" in done.log
