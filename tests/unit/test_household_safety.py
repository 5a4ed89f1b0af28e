"""A safety fact of the user's household or family (issue 20, item 4): "my daughter Zoe is celiac" must reach every
request as the user's own allergy does (they cook for her), named in the profile's line; a colleague's or a
stranger's is nobody's the profile holds. The attribute is asked of the sentence's meaning without its opening who
(here a stand-in for the classifier; tests/integration/test_meaning.py uses the real one)."""

from __future__ import annotations

import pytest

from agent.domain import AS_SAID, StatedFact
from agent.memory import profile
from agent.memory.attributes import Reading


def safety_meaning(sentences: list[str] | tuple[str, ...]) -> list[Reading | None]:
    """A stand-in for the embedding classifier: an allergy where the words say one, the child where a child is
    named, nothing else."""
    return [Reading("allergy", 0.9) if "allergic" in s or "allergy" in s
            else Reading("child", 0.9) if "daughter" in s or "son" in s else None for s in sentences]


@pytest.mark.parametrize("sentence", [
    "my daughter Zoe is allergic to sesame", "our youngest is allergic to eggs", "hubby has a shellfish allergy",
    "levi (my 6yo) is allergic to kiwi", "Ana, my wife, is allergic to latex", "my mum's allergic to penicillin",
])
def test_a_household_members_safety_fact_is_read_without_who_and_kept_naming_them(sentence: str) -> None:
    asked: list[str] = []

    def meaning(sentences: list[str] | tuple[str, ...]) -> list[Reading | None]:
        asked.extend(sentences)
        return safety_meaning(sentences)

    assert profile.household_safety(sentence, meaning, []) == [StatedFact("allergy", sentence, origin=AS_SAID)]
    assert asked and all("daughter" not in a and "wife" not in a for a in asked)


@pytest.mark.parametrize("sentence", [
    "my colleague is allergic to nuts",  # not of the household: nobody's the profile holds
    "she is allergic to nuts",  # nobody named
    "my daughter Zoe loves drawing",  # no safety fact
])
def test_no_household_safety_fact_without_a_household_member_and_a_safety_meaning(sentence: str) -> None:
    assert profile.household_safety(sentence, safety_meaning, []) == []


def test_a_safety_fact_read_already_is_not_read_twice() -> None:
    found = [StatedFact("allergy", "kiwi")]
    assert profile.household_safety("my son is allergic to kiwi", safety_meaning, found) == []
    assert profile.household_safety("my son is allergic to kiwi", None, []) == []
