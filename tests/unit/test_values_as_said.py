"""Values read once an attribute is known (agent/memory/values.py), where no rule reads one: the user's words are the
value; a change said in them retires what the attribute held; a home, a job or a name without a place, a role or
a name stays unread; and a device is known by its make."""

from __future__ import annotations

from agent.domain import AS_SAID, StatedFact
from agent.memory import profile, values


def test_an_open_attribute_keeps_the_sentence_and_a_change_retires_the_value_before() -> None:
    facts, retired = values.read("gym", "quit the old place, joined Fitbox instead")
    assert facts == [StatedFact("gym", "joined Fitbox instead", origin=AS_SAID)]
    assert retired == [StatedFact("gym", "")]


def test_a_value_kept_as_said_is_what_holds_now_not_what_went() -> None:
    facts, retired = values.read("instrument", "sold the trumpet, it's the cello for me now")
    assert facts == [StatedFact("instrument", "it's the cello for me now", origin=AS_SAID)]
    assert retired == [StatedFact("instrument", "")]
    # Only what went: nothing holds, what was held goes.
    assert values.read("hobby", "uninstalled the game for good") == ([], [StatedFact("hobby", "")])
    # What went in other words, after an emoji, or told in the past: a retirement, a closing, a pet's death.
    facts, _ = values.read("bank", "finally closed that deutsche bank acc 🎉 everything's on revolut now")
    assert facts == [StatedFact("bank", "everything's on revolut now", origin=AS_SAID)]
    facts, _ = values.read("doctor", "dr weber retired so i had to find a new gp, registered w dr. yilmaz")
    assert facts == [StatedFact("doctor", "i had to find a new gp, registered w dr. yilmaz", origin=AS_SAID)]
    assert values.read("gym", "left that club, too much ego on the climbs")[1] == [StatedFact("gym", "")]
    # Retired as the user's own state is a value, not what went.
    assert values.read("hobby", "i'm retired, so gardening most days")[0] != []
    # A safety value keeps every word: "lost" says nothing went of the medication.
    facts, _ = values.read("medication", "lost 5kg since starting metformin")
    assert facts == [StatedFact("medication", "lost 5kg since starting metformin", origin=AS_SAID)]


def test_a_plain_statement_adds_and_an_addition_never_retires() -> None:
    assert values.read("sport", "I row on the river")[1] == []
    assert values.read("sport", "also climbing now")[1] == []


def test_now_names_a_new_habit_but_not_a_things_state() -> None:
    assert values.read("drink", "oat flat white every morning now")[1] == [StatedFact("drink", "")]
    facts, retired = values.read("device", "my phone is a bit of a mess right now")
    assert facts[0].key == "phone" and retired == []


def test_a_commute_said_as_the_one_now_retires_the_one_before() -> None:
    facts, retired = values.read("commute", "on the tram these days")
    assert facts == [StatedFact("commute", "by metro")] and retired == [StatedFact("commute", "")]
    assert values.read("commute", "then a bus for the last bit")[1] == []


def test_a_home_job_or_name_without_a_value_is_not_read() -> None:
    assert values.read("home", "home sweet home") == ([], [])
    assert values.read("name", "names are hard") == ([], [])


def test_a_job_read_by_the_employers_rule_and_the_other_way_round() -> None:
    assert values.read("employer", "these days I'm a hospital porter")[0] == [StatedFact("job", "hospital porter")]
    assert values.read("job", "started at Helix Labs on monday")[0] == [StatedFact("employer", "Helix Labs")]


def test_a_machine_is_known_by_its_make() -> None:
    assert values.read("device", "work gave me a thinkpad t14")[0][0].key == "laptop"
    assert values.read("device", "on an iphone 13 still")[0][0].key == "phone"


def test_a_partner_status_is_a_value() -> None:
    assert values.read("partner", "in a relationship now, six months") == (
        [StatedFact("partner", "in a relationship")], [])


def test_a_machine_switched_names_its_model_and_system_and_retires_the_one_before() -> None:
    facts, retired = values.read("device", "switched to a Pixel 8 finally, android is weird but ok")
    assert facts == [StatedFact("phone", "Pixel 8"), StatedFact("phone system", "android")]
    assert retired == [StatedFact("phone", "")]
    facts, retired = values.read("device", "IT swapped my machine, now on a macbook pro m3 for work")
    assert facts[0].key == "laptop" and facts[0].origin == AS_SAID
    assert retired == [StatedFact("laptop", ""), StatedFact("laptop system", "")]


def test_how_long_is_not_whom_for() -> None:
    assert values.read("job", "been a UX designer for two years now")[0] == [StatedFact("job", "UX designer")]
    assert values.read("employer", "worked for like 6 years at Siemens")[0] == [StatedFact("employer", "Siemens")]


def test_a_birthday_that_says_an_age_moves_the_age_on() -> None:
    assert values.read("birthday", "had my 41st birthday on Friday")[0] == [StatedFact("age", "41")]
    assert values.read("birthday", "my birthday is on the 14th")[0] != [StatedFact("age", "14")]


def test_a_pets_name_said_after_its_kind_and_a_fish_of_any_kind() -> None:
    assert values.read("pet", "we got a kitten, Nugget")[0] == [StatedFact("pet", "Nugget (kitten)")]
    assert values.retires("a fish", "Bubbles (goldfish)")


def test_a_commute_no_rule_reads_is_a_complaint_not_a_value() -> None:
    assert values.read("commute", "oh I just love being stuck in traffic") == ([], [])


def test_a_diet_plan_is_read_however_it_is_typed() -> None:
    for sentence, diet in (("im on the low FODMAP plan for my gut", "low-fodmap"),
                           ("the dietitian moved me onto a mediterranean style plan now", "mediterranean"),
                           ("doing intermittent fasting these days", "intermittent-fasting"),
                           ("gluten free since may", "gluten-free")):
        facts, _ = values.read("diet", sentence)
        assert [(f.key, f.value) for f in facts] == [("diet", diet)], sentence


def test_a_partners_name_anywhere_in_the_sentence_beats_a_status() -> None:
    facts, _ = values.read("partner", "my wife now is Carla, we got married in may", "we got married in may")
    assert [f.value for f in facts] == ["Carla"]
    facts, _ = values.read("partner", "we got married in may", "we got married in may")
    assert [f.value for f in facts] == ["married"]


def test_an_opening_word_of_no_meaning_changes_no_reading() -> None:
    for line in ("I live in Lisbon.", "I'm allergic to peanuts", "I work at Siemens", "We have a dog called Rex."):
        plain = profile.read(line)
        for said in (f"btw {line}", f"tbh, {line}", f"ok so {line}", f"honestly {line}"):
            assert profile.read(said) == plain, said
