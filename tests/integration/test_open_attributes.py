"""Attributes no rule reads (a sport, a gym, a team, a bank, how the user works) and values no rule reads, kept as
the user said them (issue 20): the real local embedder names the attribute; the value reaches every request in the
profile; a change said in words retires the values before it, a plain statement adds one; a description of a thing
is no new thing; and a memory that is replaced takes the values it stated as said along."""

from __future__ import annotations

from agent.domain import AS_SAID
from agent.memory.service import MemoryService
from tests.truth_service import say


def live(memory: MemoryService) -> list[str]:
    return [r.source for r in memory.list() if r.current]


def profile_of(memory: MemoryService) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for entry in memory.profile()[0]:
        out.setdefault(entry.key, []).append(entry.value)
    return out


def test_a_gym_left_for_another_is_replaced_and_the_new_one_reaches_a_far_request(memory: MemoryService) -> None:
    say(memory, "member of the YMCA pool on Elm street", "What's a good book for the train?",
        "cancelled the YMCA, swimming at Aquafit Centre now")
    ymca = next(r for r in memory.list() if "Elm street" in r.text)
    assert not ymca.current and "gym" in profile_of(memory)
    block = memory.recall("when is the quietest time to go?").block.text
    assert "Aquafit" in block and "Elm street" not in block


def test_two_sports_said_plainly_both_hold(memory: MemoryService) -> None:
    say(memory, "I do pilates on tuesdays", "bouldering with friends on weekends")
    assert len(live(memory)) == 2
    assert len(profile_of(memory)["sport"]) == 2
    block = memory.recall("plan my week").block.text
    assert "pilates" in block and "bouldering" in block


def test_a_value_no_rule_reads_reaches_every_request_as_said(memory: MemoryService) -> None:
    say(memory, "supporter of Hajduk Split since forever")
    [entry] = [e for e in memory.profile()[0] if e.key == "team"]
    assert entry.origin == AS_SAID and "Hajduk" in entry.value
    assert "Hajduk" in memory.recall("what should I do on saturday afternoon?").block.text


def test_a_description_of_a_thing_is_no_other_thing(memory: MemoryService) -> None:
    say(memory, "my phone is a Nokia X20", "my phone is so slow right now", "My bank is Monzo.",
        "my bank is Starling")
    assert "my phone is a Nokia X20" in live(memory) and "my phone is so slow right now" in live(memory)
    assert "Nokia X20" in profile_of(memory)["phone"]
    assert profile_of(memory)["bank"] == ["Starling"]  # a bank named replaces the bank named before


def test_a_replaced_memory_takes_its_values_kept_as_said_along(memory: MemoryService) -> None:
    say(memory, "I'm a student at Uppsala, studying physics", "I graduated and now I work as a data engineer")
    assert live(memory) == ["I graduated and now I work as a data engineer"]
    assert "Uppsala" not in memory.recall("what do I do all day?").block.text
    assert not any("Uppsala" in value for values in profile_of(memory).values() for value in values)


def test_a_fact_about_the_user_is_not_a_wish_about_the_replies(memory: MemoryService) -> None:
    say(memory, "my hair is really long these days, down past my shoulders")
    assert not any(key.startswith("preference") for key in profile_of(memory))


def test_a_safety_fact_said_again_in_other_words_is_one_memory(memory: MemoryService) -> None:
    say(memory, "I'm allergic to shellfish", "shellfish gives me hives every single time")
    assert live(memory) == ["I'm allergic to shellfish"]
    assert "shellfish" in memory.recall("plan a dinner for six").block.text


def test_one_frame_with_another_value_is_another_fact(memory: MemoryService) -> None:
    say(memory, "I drink green tea in the afternoon", "I drink rooibos tea in the afternoon")
    assert len(live(memory)) == 2
