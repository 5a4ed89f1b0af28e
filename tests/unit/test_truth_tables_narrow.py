"""``/profile`` and ``/memories --history`` at any width: a table whose words do not fit its columns is drawn
stacked (a numbered paragraph per row), never with words folded mid-word ("shellf / ish" at 80 columns)."""

from __future__ import annotations

import re
from datetime import datetime

import pytest
from rich.console import Console, RenderableType

from agent.domain import MemoryRecord
from agent.memory.profile import Entry
from agent.ui.truth_view import history_table, profile_table

WHEN = datetime(2026, 11, 30, 9, 30).timestamp()
CURRENT = [Entry("allergy", "shellfish", "d51fcf71aa", WHEN, "monday", 1),
           Entry("home", "Lisbon, in a flat near the river", "28365791bb", WHEN, "20261201-0903-2", 2)]
REPLACED = [Entry("home", "Boston", "0a1b2c3d4e", WHEN - 86400, "20261129-0801-1", 1, replaced_by="28365791bb",
                  replaced_at=WHEN, origin="extractor")]
BOSTON = MemoryRecord("0a1b2c3d4e5f", "I live in Boston, in a small flat near the river.", "turn", "me", "monday", 1,
                      WHEN - 86400, WHEN, "", "", superseded_by="9f8e7d6c5b4a", superseded_at=WHEN)
BERLIN = MemoryRecord("9f8e7d6c5b4a", "Big news: I moved to Berlin last month!", "turn", "me", "tuesday", 1,
                      WHEN, WHEN, "", "")


def drawn(renderable: RenderableType, width: int) -> str:
    console = Console(width=width, no_color=True, record=True, file=open("/dev/null", "w"))  # noqa: SIM115
    console.print(renderable)
    return console.export_text()


def words_whole(text: str, *sources: str) -> None:
    """Every word of ``sources`` is a whole word of ``text``: a word folded over two lines is two other words."""
    drawn_words = set(re.findall(r"[\w'-]+", text))
    for source in sources:
        for word in re.findall(r"[\w'-]+", source):
            assert word in drawn_words, (word, text)


@pytest.mark.parametrize("width", [50, 60, 70, 80, 90, 99, 100, 120, 160])
def test_profile_keeps_every_word_whole_and_within_the_width(width: int) -> None:
    text = drawn(profile_table(CURRENT, REPLACED, title="profile"), width)
    assert max(len(line.rstrip()) for line in text.splitlines()) <= width
    words_whole(text, "allergies shellfish", "lives in Lisbon, in a flat near the river", "Boston", "monday",
                "d51fcf71", "28365791", "0a1b2c3d", "current", "replaced", "(extractor)")


@pytest.mark.parametrize("width", [50, 60, 70, 80, 90, 99, 100, 120, 160])
def test_history_keeps_every_word_whole_and_within_the_width(width: int) -> None:
    text = drawn(history_table([BOSTON], {r.id: r for r in (BOSTON, BERLIN)}, title="1 replaced memory"), width)
    assert max(len(line.rstrip()) for line in text.splitlines()) <= width
    words_whole(text, BOSTON.text, BERLIN.text, "0a1b2c3d")


def test_a_wide_terminal_keeps_the_table_and_a_narrow_one_stacks_the_rows() -> None:
    assert "┃ key" in drawn(profile_table(CURRENT, REPLACED), 160)
    narrow = drawn(profile_table(CURRENT, REPLACED, title="profile"), 80).splitlines()
    assert narrow[0].strip() == "profile"
    assert narrow[1].rstrip() == "1 allergies: shellfish"
    assert narrow[2].startswith("  current · said 2026-11-30 09:30 in monday · memory d51fcf71")
