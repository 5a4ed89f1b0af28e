"""Things of the user's with one value at a time (agent/memory/things.py): "my phone is a Pixel 8" is a value keyed by
the thing and replaces the phone held before; a description, another person's thing or another thing of the kind
replaces nothing."""

from __future__ import annotations

import pytest

from agent.memory.profile import is_thing, read
from agent.memory.service import MemoryService
from agent.memory.things import refines, replaces
from tests.truth_service import say


@pytest.mark.parametrize(
    ("said", "facts"),
    [
        ("My phone is an iPhone 12.", [("phone", "iPhone 12")]),
        ("I upgraded, my phone is a Pixel 8 now.", [("phone", "Pixel 8")]),
        ("My car's a Tesla these days, still getting used to it.", [("car", "Tesla")]),
        ("My new laptop is a MacBook Pro, the battery is amazing.", [("laptop", "MacBook Pro")]),
        ("I drive a Ford Focus to work.", [("car", "Ford Focus")]),
        ("i drive a 2012 honda civic", [("car", "2012 honda civic")]),
        ("I got a new phone, a OnePlus 12.", [("phone", "OnePlus 12")]),
        ("I use a Samsung phone now.", [("phone", "Samsung phone")]),
        ("got a new bike, my bike's a canyon now", [("bike", "canyon")]),
        ("My bank is Monzo.", [("bank", "Monzo")]),
        ("My work laptop is a MacBook.", [("work laptop", "MacBook")]),
        ("My internet provider is Verizon now.", [("internet provider", "Verizon")]),
        # descriptions, not values
        ("My phone is old and slow.", []),
        ("My car is in the shop this week.", []),
        ("My laptop is really slow these days.", []),
        ("My phone plan is with Vodafone.", []),
        ("My laptop is a lifesaver for work.", []),
        ("My car is a beast on the motorway.", []),
        ("My phone is a bit of a mess right now.", []),
        ("My watch is waterproof, so I swim with it.", []),
        ("My car is not a Tesla.", []),
        ("My store is something I'm always working on.", []),
        ("I use a standing desk.", []),
        ("I use a ThinkPad for everything, work and private", []),
        ("My car is a hybrid.", []),
        ("My appointment is Friday at 3pm.", []),
        ("My train is the 7:40.", []),
        ("say i drive 300 miles at 60 mph, how long does it take", []),
        # someone else's, a person, a pet, a wish, one more of a kind
        ("My brother's car is a Tesla.", []),
        ("My wife's car is a Mini.", []),
        ("My sister is a doctor.", []),
        ("My other cat is Tom.", []),
        ("My dream car is a Tesla Model S.", []),
        ("I also drive a company van for work.", []),
        ("My car is a Tesla too.", []),
        # not now, not a statement
        ("My next phone is going to be a Pixel.", []),
        ("Is my phone a Pixel 8?", []),
    ],
)
def test_what_a_thing_of_the_users_is(said: str, facts: list[tuple[str, str]]) -> None:
    assert [(f.key, f.value) for f in read(said).facts if is_thing(f.key)] == facts


def test_the_profiles_own_keys_are_not_things() -> None:
    assert [(f.key, f.value) for f in read("My name is Kate.").facts] == [("name", "Kate")]
    assert [(f.key, f.value) for f in read("My favourite car is a Porsche 911.").facts] == [
        ("favourite car", "Porsche 911")]
    assert not is_thing("home") and not is_thing("favourite car") and not is_thing("dentist") and is_thing("phone")


def test_a_value_told_more_precisely_refines_the_one_held() -> None:
    assert refines("Golf", "a red Golf") and refines("ThinkPad X1", "ThinkPad")
    assert not refines("Golf", "Tesla") and not refines("iPhone 12", "iPhone 13")


def test_a_name_replaces_a_name_and_a_plain_word_a_plain_word() -> None:
    assert replaces("Pixel 8", "iPhone 12") and replaces("canyon", "trek")
    assert not replaces("Ford Transit", "company van") and not replaces("red Golf", "Golf")


def by_source(memory: MemoryService, line: str) -> str:
    return next(r.superseded_by for r in memory.list() if r.source == line)


def test_a_new_phone_supersedes_the_old_one_which_stays_in_history(memory: MemoryService) -> None:
    say(memory, "My phone is an iPhone 12.", "What's a good podcast?", "I upgraded, my phone is a Pixel 8 now.")
    pixel = next(r for r in memory.list() if "Pixel" in r.text)
    assert by_source(memory, "My phone is an iPhone 12.") == pixel.id
    block = memory.recall("Any tips for my phone's battery?").block.text
    assert "Pixel 8" in block and "iPhone 12" not in block
    current, history = memory.profile()
    assert [(e.key, e.value) for e in current] == [("phone", "Pixel 8")]
    assert [(e.key, e.value, e.replaced_by) for e in history] == [("phone", "iPhone 12", pixel.id)]


def test_i_drive_and_my_car_are_one_thing(memory: MemoryService) -> None:
    say(memory, "I drive a Ford Focus to work.", "My car is a Volvo XC40 these days, we traded the old one in.")
    assert by_source(memory, "I drive a Ford Focus to work.")
    assert [(e.key, e.value) for e in memory.profile()[0]] == [("car", "Volvo XC40")]


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("My phone is old and slow.", "My phone is a Pixel 8."),
        ("My brother's car is a Tesla.", "My car is a red Golf."),
        ("My cat is called Miso.", "My other cat is Tom."),
        ("My laptop is a ThinkPad.", "My work laptop is a MacBook."),
        ("My car is a Volkswagen Golf.", "I also drive a company van for work."),
        ("My car is a Golf.", "My car is a red Golf, it's ancient."),
        ("My laptop is a ThinkPad.", "My laptop is a lifesaver for work."),
        ("My car is a company van.", "My car is a Ford Transit."),
    ],
)
def test_what_does_not_contradict_supersedes_nothing(memory: MemoryService, first: str, second: str) -> None:
    say(memory, first, second)
    assert all(r.current for r in memory.list())
