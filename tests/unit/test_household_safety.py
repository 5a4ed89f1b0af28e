"""A safety fact of the user's household or family (issue 20, item 4): "my daughter Zoe is celiac" must reach every
request as the user's own allergy does (they cook for her), named in the profile's line; a colleague's or a
stranger's is nobody's the profile holds. The attribute is asked of the sentence's meaning without its opening who
(here a stand-in for the classifier; tests/integration/test_meaning.py uses the real one)."""

from __future__ import annotations

import pytest

from agent.domain import AS_SAID, MemoryRecord, StatedFact
from agent.memory import profile
from agent.memory.attributes import Reading
from agent.memory.context import PROFILE_FOOTER, PROFILE_HEADER, build_profile, profile_lines
from tests.builders import record


def safety_meaning(sentences: list[str] | tuple[str, ...]) -> list[Reading | None]:
    """A stand-in for the embedding classifier: an allergy where the words say one, the child where a child is
    named, nothing else."""
    return [Reading("allergy", 0.9) if "allergic" in s or "allergy" in s
            else Reading("child", 0.9) if "daughter" in s or "son" in s else None for s in sentences]


@pytest.mark.parametrize("sentence", [
    "my daughter Zoe is allergic to sesame", "our youngest is allergic to eggs", "hubby has a shellfish allergy",
    "levi (my 6yo) is allergic to kiwi", "Ana, my wife, is allergic to latex", "my mum's allergic to penicillin",
    "My daughter Zoe is allergic to sesame", "my 2 kids are allergic to eggs", "both my kids have a nut allergy",
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


# -- the user's words beside a safety value read narrower ---------------------------------------------------------

def stated(text: str, at: float, key: str, value: str) -> MemoryRecord:
    return record(text, "u", at=at, facts=(StatedFact(key, value),))


def test_a_safety_value_read_narrower_than_said_carries_the_users_sentence() -> None:
    """"coeliac" alone loses "so gluten is a no go": the line shows the sentence too; a value that is its sentence,
    and a key that is no safety one, show none."""
    current, _ = profile.view([stated("im coeliac so gluten is a no go for me. my car broke down", 1.0, "condition",
                                      "coeliac"),
                               stated("I live in Porto now", 2.0, "home", "Porto"),
                               stated("my son is allergic to kiwi", 3.0, "allergy", "my son is allergic to kiwi")])
    assert {e.key: e.said for e in current} == {"condition": "im coeliac so gluten is a no go for me", "home": "",
                                                "allergy": ""}
    text, _, _ = build_profile(current)
    assert 'coeliac (said "im coeliac so gluten is a no go for me",' in text and "Porto (" in text


def test_the_users_sentence_beside_a_safety_value_never_drops_another_line() -> None:
    """Counted in words: a budget with room for both plain lines and not for the sentence keeps both plain; with
    room for the sentence too, the safety line carries it."""
    current, _ = profile.view([stated("im coeliac so gluten is a no go for me", 1.0, "condition", "coeliac"),
                               stated("I live in Porto now", 2.0, "home", "Porto")])

    def words(text: str) -> int:
        return len(text.split())

    plain = words(PROFILE_HEADER) + words(PROFILE_FOOTER) + sum(words(line) for _, line in profile_lines(current))
    text, kept, used = build_profile(current, budget_tokens=plain, counter=words)
    assert "Porto" in text and "coeliac (" in text and "gluten" not in text and len(kept) == 2 and used == plain
    text, kept, used = build_profile(current, budget_tokens=plain + 20, counter=words)
    assert "Porto" in text and "gluten" in text and len(kept) == 2 and used > plain
