"""What a sentence says went, and what it says is a new one, by the words it names (``agent.memory.truth``): the
rules that replace a memory whatever attribute the meaning puts it on, so each has its minimal pairs here."""

from __future__ import annotations

import pytest

from agent.memory.truth import gone_named, new_one_named


@pytest.mark.parametrize(("text", "named"), [
    ("Left the rowing club, my back can't take it. Pilates on Tuesdays now", {"rowing", "club"}),
    ("we lost Pepper last week, the house is so quiet", {"pepper"}),
    ("gave up the German course, Italian is more fun", {"german", "course"}),
    ("no more Vodafone for me, went with a local provider", {"vodafone"}),
    ("i don't go to the climbing wall anymore, knees", {"climbing", "wall"}),
    ("Quit Deliveroo, I drive for a taxi firm now", {"deliveroo"}),
    ("sold the Yamaha, kept the acoustic", {"yamaha"}),
    ("Priya and me are not together anymore since june", {"priya", "together"}),
    ("can you believe it, Hartmann retired. new GP is Dr Osei", {"hartmann"}),
])
def test_a_going_names_the_thing_that_went(text: str, named: set[str]) -> None:
    assert named <= gone_named(text)


@pytest.mark.parametrize("text", [
    "I'm left handed, so notebooks are a pain",          # "left" as no verb
    "turn left at the church and it's the blue door",    # a direction
    "my sister left her job at the bank",                # someone else's news
    "did you know I quit the band?",                     # a question
    "I left Leeds when I was 18",                        # the past, long gone
    "we dropped the kids at school and had coffee",      # "dropped" takes nothing away
    "I lost weight this year",                           # no thing of the user's went
])
def test_no_going_of_the_users_own(text: str) -> None:
    assert gone_named(text) == set()


@pytest.mark.parametrize(("text", "thing"), [
    ("ok so new dentist, dr Abara, very gentle", "dentist"),
    ("got a new laptop finally, a framework 13", "laptop"),
    ("changed gym, the one by the station is cheaper", "gym"),
    ("new landlord since May, much nicer", "landlord"),
])
def test_a_new_one_names_the_thing(text: str, thing: str) -> None:
    assert thing in new_one_named(text)


@pytest.mark.parametrize("text", [
    "I need a new dentist, any tips?",                 # wanted, not had
    "thinking about a new phone for christmas",        # planned
    "my new colleague is hilarious",                   # one more of many people
    "we got a new puppy!",                             # one more pet
    "happy new year!",                                 # no thing
    "I also got a new bike for the weekends",          # an addition
    "my brother has a new car",                        # someone else's
])
def test_no_new_one_of_the_users_own(text: str) -> None:
    assert new_one_named(text) == set()


def test_what_holds_now_leaves_out_what_went() -> None:
    from agent.memory.values import said_now

    assert said_now("Left the rowing club, pilates on tuesdays now") == "pilates on tuesdays now"
    assert "tom" not in said_now("tom and i broke up. anyway seeing someone new, alex, a chef").casefold()
    assert "alex" in said_now("tom and i broke up. anyway seeing someone new, alex, a chef")
