"""Where the attribute head's reading alone keeps a line the grammar read as nothing (agent/memory/service.py): a
safety attribute needs less certainty than any other, because a missed allergy or condition is the memory a user
cannot afford to lose."""

from __future__ import annotations

from collections.abc import Sequence

from agent.memory import service
from agent.memory.attributes import Meaning, Reading


def reading_all_as(attribute: str, score: float) -> Meaning:
    def meaning(sentences: Sequence[str]) -> list[Reading | None]:
        return [Reading(attribute, score) for _ in sentences]

    return meaning


def test_a_safety_attribute_keeps_a_line_at_a_lower_certainty_than_another() -> None:
    line = "these vertigo spells come out of nowhere, room spinning"
    between = (service.SAFETY_OVERRULE + service.OVERRULE) / 2
    assert service._states_a_fact(line, reading_all_as("disability", between))
    assert not service._states_a_fact(line, reading_all_as("hobby", between))
    assert service._states_a_fact(line, reading_all_as("hobby", service.OVERRULE))
    assert not service._states_a_fact(line, reading_all_as("disability", service.SAFETY_OVERRULE - 0.01))
