"""An adapter's message names the fix as a ``Remedy`` and never spells a command of the front ends: the command line
is free to rename its commands, and the adapters (which know the domain and the ports only) say nothing stale."""

from __future__ import annotations

import re
from pathlib import Path

from agent.errors import Remedy

ADAPTERS = Path(__file__).resolve().parents[2] / "agent" / "adapters"
_COMMAND = re.compile(r"(?<!`)`agent [a-z]")  # a command in a message; a docstring's ``agent ...`` is prose


def test_no_adapter_message_spells_a_command() -> None:
    spelled = [f"{path.name}:{number}" for path in sorted(ADAPTERS.glob("*.py"))
               for number, line in enumerate(path.read_text().splitlines(), 1) if _COMMAND.search(line)]
    assert spelled == []


def test_a_remedy_reads_as_the_command_that_carries_it_out() -> None:
    assert f"cannot recall them: {Remedy.REBUILD}." == "cannot recall them: run `agent memories rebuild`."
