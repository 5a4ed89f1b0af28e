"""``/memories`` at 70-80 columns: the memory's text gets the room, the date is short, a long session name is cut,
the id keeps the 8 characters ``/forget ID`` takes; at 100 columns and more the table is as it always was."""

from __future__ import annotations

import re
import time
from datetime import datetime

import pytest
from rich.console import Console

from agent.domain import MemoryRecord, memory_id
from agent.ui.render import memory_table, narrow_date
from tests.cli_harness import invoke
from tests.e2e_helpers import Terminal, agent_env
from tests.fake_openai import FakeOpenAI, Reply

pytestmark = pytest.mark.usefixtures("model_cache")

TEXT = "I can't eat peanuts, they make my throat swell and I carry an epipen"
WHEN = datetime(2023, 11, 14, 9, 30).timestamp()


def record(n: int) -> MemoryRecord:
    return MemoryRecord(f"91f134f4d91115{n:02d}", TEXT, "explicit", "me", "20261201-0903-2", 3, WHEN, WHEN, "", TEXT)


def drawn(width: int) -> str:
    console = Console(width=width, no_color=True, record=True, file=open("/dev/null", "w"))  # noqa: SIM115
    console.print(memory_table([record(1), record(2)], title="2 memories"))
    return console.export_text()


def test_at_70_columns_the_text_takes_the_room() -> None:
    assert drawn(70) == (
        "                              2 memories                              \n"
        "# memory                         kind     date     session    id      \n"
        "──────────────────────────────────────────────────────────────────────\n"
        "1 I can't eat peanuts, they make explicit Nov 2023 20261201-… 91f134f4\n"
        "  my throat swell and I carry an                                      \n"
        "  epipen                                                              \n"
        "2 I can't eat peanuts, they make explicit Nov 2023 20261201-… 91f134f4\n"
        "  my throat swell and I carry an                                      \n"
        "  epipen                                                              \n")


@pytest.mark.parametrize("width", [70, 80])
def test_narrow_tables_fit_and_give_the_text_at_least_30_characters(width: int) -> None:
    lines = drawn(width).splitlines()
    assert max(len(line.rstrip()) for line in lines) <= width
    first = next(line for line in lines if line.startswith("1 "))
    assert first.startswith("1 I can't eat peanuts, they make") and first.rstrip().endswith("91f134f4")


def test_at_100_columns_the_table_is_drawn_in_full() -> None:
    text = drawn(100)
    assert "2023-11-14 09:30" in text and "20261201-0903-2" in text and "┃ memory" in text


def test_narrow_dates_are_short() -> None:
    now = datetime(2026, 12, 1).timestamp()
    assert narrow_date(datetime(2026, 3, 5).timestamp(), now) == "05 Mar"
    assert narrow_date(WHEN, now) == "Nov 2023"


@pytest.mark.slow
def test_memories_in_an_80_column_terminal() -> None:
    assert invoke("memories", "add", TEXT).returncode == 0
    with FakeOpenAI(fallback=Reply("Noted.")) as fake, \
            Terminal(agent_env(fake), "-s", "narrow", columns=80) as terminal:
        terminal.expect("›")
        terminal.type("/memories\r")
        table = terminal.expect("/forget N forgets number N")
        terminal.expect("›")
        terminal.type("\x04")
        assert terminal.wait() == 0
    rows = [line for line in re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", table).splitlines() if line.startswith("1 ")]
    today = narrow_date(time.time())
    assert rows == [f"1 {TEXT[:40]}      explicit {today} cli     {memory_id('default', TEXT)[:8]}"]
