"""Profile facts recognised by meaning (issue 20): the real local embedder names the attribute of sentences that no
pattern reads, in phrasings that are not among the shipped examples; a value is then read by the attribute's rule,
single-valued keys are replaced, sets grow and lose the value a sentence retires, safety facts reach every request
however they are said, and a refused line never becomes a fact."""

from __future__ import annotations

import json

import pytest

from agent.adapters.local_embedder import LocalEmbedder
from agent.domain import AS_SAID, StatedFact
from agent.memory import attributes, disclosure, profile, values
from agent.memory.service import MemoryService
from tests.fakes import WordHashEmbedder
from tests.truth_service import say


def current(memory: MemoryService) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for entry in memory.profile()[0]:
        out.setdefault(entry.key, []).append(entry.value)
    return out


HELD_OUT = {
    # None of these is among the examples of agent/memory/attributes.json.
    "Cardiff has been home since the spring": "home",
    "these days I'm a hospital porter": "job",
    "just signed my contract with Vodafone, first day Monday": "employer",
    "peanuts can kill me, literally": "allergy",
    "I take clopidogrel every morning": "medication",
    "gluten wrecks my gut, diagnosed coeliac": "condition",
    "we speak Greek at home and I'm picking up Turkish": "language",
    "I hop on my bike to get to the office": "commute",
}
NOT_ATTRIBUTES = ("where should we eat in Porto tonight", "my horoscope says I'll travel soon",
                  "oh I just love being stuck in traffic")


def test_the_held_out_phrasings_are_not_examples() -> None:
    shipped = {text.casefold() for texts in attributes.examples().values() for text in texts}
    assert not {text.casefold() for text in [*HELD_OUT, *NOT_ATTRIBUTES]} & shipped


def test_meaning_names_the_attribute_of_phrasings_it_was_not_given(local_embedder: LocalEmbedder) -> None:
    classifier = attributes.for_embedder(local_embedder)
    assert classifier is not None
    read = attributes.meaning(classifier, local_embedder.embed)
    # A job and its employer are said together and read together (either's rule reads the value of both), so
    # they are one answer here.
    work = {"job": "work", "employer": "work"}
    named = [work.get(r.attribute, r.attribute) if r else None for r in read(list(HELD_OUT))]
    wanted = [work.get(want, want) for want in HELD_OUT.values()]
    right = sum(got == want for got, want in zip(named, wanted, strict=True))
    # A classifier over 40 attributes: one miss of eight is allowed ("a contract with Vodafone" is near a phone
    # contract); its value is then kept as said under the attribute named, so nothing the user said is lost.
    assert right >= len(HELD_OUT) - 1, named
    # Sarcasm near the commute's examples may score at the threshold; what matters is that no fact is read.
    assert [profile.read(text, read) for text in NOT_ATTRIBUTES] == [profile.Statement()] * len(NOT_ATTRIBUTES)


def test_an_embedder_without_a_calibrated_threshold_reads_by_patterns_alone() -> None:
    assert attributes.for_embedder(WordHashEmbedder()) is None


def test_the_examples_file_is_well_formed() -> None:
    data = json.loads(attributes.EXAMPLES.read_text(encoding="utf-8"))
    assert data["none"] and all(len(texts) >= 3 for texts in data["attributes"].values())


def test_a_value_first_home_replaces_the_old_one(memory: MemoryService) -> None:
    say(memory, "I live in Leeds.", "Bath is home now, we moved in May")
    assert current(memory)["home"] == ["Bath"]


def test_an_age_moving_on_and_a_name_without_a_pattern(memory: MemoryService) -> None:
    say(memory, "I'm 40.", "had my 41st birthday on Friday", "My name is Ana Silva.",
        "I took his surname when we married, Ana Duarte now")
    profile = current(memory)
    assert profile["age"] == ["41"]
    assert profile["name"] == ["Ana Duarte"]


def test_a_pet_lost_and_another_come(memory: MemoryService) -> None:
    say(memory, "We have a dog called Rex.", "Rex passed away in June, so we took in a collie named Skye")
    pets = current(memory)["pet"]
    assert any(p.startswith("Skye") for p in pets)
    assert not any(p.startswith("Rex") for p in pets)


def test_a_weekend_job_adds_and_does_not_replace(memory: MemoryService) -> None:
    say(memory, "I work at a law firm.", "on saturdays I also work at a pub")
    profile = current(memory)
    assert profile["employer"] == ["a law firm"]
    assert profile["second employer"] == ["a pub"]


@pytest.mark.parametrize("line, word", [
    ("I take clopidogrel every morning", "clopidogrel"),
    ("gluten wrecks my gut, diagnosed coeliac", "coeliac"),
    ("penicillin once put me in hospital", "penicillin"),
    ("peanuts can kill me, literally", "peanuts"),
    ("twelve weeks pregnant, first baby", "pregnant"),
])
def test_a_safety_fact_however_said_reaches_a_far_request(memory: MemoryService, line: str, word: str) -> None:
    """Under one safety key or another (coeliac is a condition and an intolerance; penicillin that put someone in
    hospital an allergy or a medication): what matters is that the profile's safety lines carry it."""
    say(memory, line, "what's a fun fact about octopuses?")
    assert any(word in value for key, held in current(memory).items() if key in attributes.SAFETY for value in held)
    assert word in memory.recall("plan a dinner party for six on saturday").block.text


@pytest.mark.parametrize("line, word", [
    ("my son Theo is coeliac, even a crumb of bread makes him ill", "coeliac"),
    ("our youngest can't have dairy, it makes him really ill", "dairy"),
    ("my husband is on warfarin since his heart op", "warfarin"),
    ("my mum's allergic to penicillin", "penicillin"),
])
def test_a_household_members_safety_fact_reaches_a_far_request_naming_them(memory: MemoryService, line: str,
                                                                           word: str) -> None:
    """The user cooks and plans for their household: its safety facts reach every request like their own, in a
    profile line that says whose they are (the sentence as said)."""
    say(memory, line, "what's a fun fact about octopuses?")
    held = [value for key, values in current(memory).items() if key in attributes.SAFETY for value in values]
    assert held == [line]
    assert word in memory.recall("plan a dinner party for six on saturday").block.text


def test_another_persons_fact_is_not_the_users(memory: MemoryService) -> None:
    """The brother's job is a fact of the user's family, not the user's job; a colleague's medicine is nobody's
    the profile holds."""
    say(memory, "my brother is a pilot for Ryanair", "my colleague takes warfarin")
    profile = current(memory)
    assert not {"job", "employer", "medication"} & set(profile)
    assert set(profile) <= {"family"}


@pytest.mark.parametrize("line, key", [
    ("I work as stress engineer at Nova Chemicals, mostly pressure vessels and piping", "job"),
    ("57 and I can still touch my toes, just about, if I bend my knees a wee bit", "age"),
])
def test_a_clause_that_only_looks_like_a_safety_fact_is_not_one(memory: MemoryService, line: str, key: str) -> None:
    """"mostly pressure vessels" read alone is a condition; in a sentence about a job, with no safety attribute
    likely, it is the job's detail, and the job's profile line stays the only one."""
    say(memory, line)
    assert key in current(memory)
    assert not set(current(memory)) & attributes.SAFETY


@pytest.mark.parametrize("line, word", [
    ("i'm hard of hearing, so i always watch with subtitles on", "hard of hearing"),
    ("i'm autistic and phone calls stress me out so much, how do i cancel my gym membership by email", "autistic"),
])
def test_a_clause_stating_the_users_own_state_is_a_safety_fact_in_any_sentence(memory: MemoryService, line: str,
                                                                                 word: str) -> None:
    say(memory, line)
    assert any(word in value for key, held in current(memory).items() if key in attributes.SAFETY for value in held)


@pytest.mark.parametrize("line", ["the recital is the day after tomorrow",
                                  "job interview w ikea coming thursday, nervous",
                                  "mum's 70th is a week from saturday, no cake ordered yet"])
def test_an_event_to_come_is_kept_without_an_i_or_a_my(memory: MemoryService, line: str) -> None:
    assert memory.observe(line, session="s", turn=1).stored, line


@pytest.mark.parametrize("line", ["is it gonna rain tomorrow", "what's on tv saturday night", "ok bye for today"])
def test_a_question_or_a_goodbye_with_a_date_is_not_an_event(memory: MemoryService, line: str) -> None:
    assert not memory.observe(line, session="s", turn=1).stored, line


def test_a_topic_trailed_off_is_the_subject_of_the_sentence_after_it(memory: MemoryService) -> None:
    """"Prawns, crab, any shellfish... my throat swells up": the allergens are before the ellipsis, the reaction
    after it, and the profile's safety line carries both."""
    assert disclosure.sentences("Peanuts... even the smell. I carry an EpiPen") == [
        "Peanuts... even the smell.", "I carry an EpiPen"]
    say(memory, "Prawns, crab, any shellfish... my throat swells up, EpiPen in my bag always")
    held = [value for key, values in current(memory).items() if key in attributes.SAFETY for value in values]
    assert any("shellfish" in value for value in held), held
    assert "shellfish" in memory.recall("plan a fiesta menu for thirty people").block.text


def test_a_refused_line_never_becomes_a_fact(memory: MemoryService) -> None:
    say(memory, "the alarm code at the office is 4471", "the door code at home is 9917")
    assert memory.list() == []
    assert current(memory) == {}


def test_the_value_is_read_where_the_sentence_says_it() -> None:
    assert values.read("home", "Porto is home these days") == ([StatedFact("home", "Porto")], [])
    assert values.read("age", "turned forty-two on Saturday")[0] == [StatedFact("age", "42")]
    facts, retired = values.read("pet", "Biscuit died in spring, we adopted a terrier called Moss")
    assert retired == [StatedFact("pet", "Biscuit")]
    assert facts == [StatedFact("pet", "Moss (terrier)")]
    said = values.read("medication", "ibuprofen makes my stomach bleed")[0]
    assert said == [StatedFact("medication", "ibuprofen makes my stomach bleed", origin=AS_SAID)]
    assert values.read("home", "home sweet home") == ([], [])


def test_remember_and_edit_read_facts_by_meaning_too(memory: MemoryService) -> None:
    memory.remember("I take clopidogrel every morning since the stent")
    assert any("clopidogrel" in v for v in current(memory)["medication"])
    say(memory, "I live in Leeds.", "Cardiff is home now")
    old = next(r for r in memory.list() if r.source == "I live in Leeds.")
    memory.store_rewrite(memory.rewrite(old, "I live in York."))
    memory.forget([old.id])
    # The later words still replace the edited ones: they are read by meaning in the edit as in the chat.
    assert current(memory)["home"] == ["Cardiff"]


def test_a_pet_retired_by_its_kind_is_the_one_of_that_kind(memory: MemoryService) -> None:
    say(memory, "We have a spaniel called Dot.", "My cat Bea is 4.", "our dog passed away last night")
    assert current(memory)["pet"] == ["Bea (cat)"]


def test_an_order_near_an_attribute_in_meaning_is_not_kept(memory: MemoryService) -> None:
    say(memory, "only for this reply, put it in German", "just this time, answer in Italian")
    assert memory.list() == []
    assert current(memory) == {}


def test_a_clause_about_another_being_is_not_the_users_age_or_pastime(memory: MemoryService) -> None:
    say(memory, "and Ana, my daughter, just turned 4", "my husband Piotr is a lawyer, works crazy hours too",
        "theres also a tortoise, Gustavo, 40 years old")
    profile = current(memory)
    assert not {"age", "job", "work pattern"} & set(profile)
    assert "Ana" in profile["child"]


def test_a_second_clause_of_another_attribute_is_read_too(memory: MemoryService) -> None:
    say(memory, "I took his surname when we married, Ana Duarte now")
    assert current(memory)["name"] == ["Ana Duarte"]


def test_a_question_without_its_mark_states_nothing_but_the_fact_beside_it(memory: MemoryService) -> None:
    say(memory, "where should we eat in Porto tonight, i'm vegan btw")
    profile = current(memory)
    assert "home" not in profile
    assert profile["diet"] == ["vegan"]


def test_a_club_switched_replaces_the_club_held(memory: MemoryService) -> None:
    say(memory, "been an Ajax supporter my whole life", "ok i switched sides, PSV is my club now")
    block = memory.recall("when does my club play next?").block.text
    assert "PSV" in block and "Ajax" not in block
