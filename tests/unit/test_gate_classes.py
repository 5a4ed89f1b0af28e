"""The classes of line the first-person catch-all got wrong on unseen data (issue 20), each said in words that no
pattern's own examples use: what discloses nothing although it says "I", and the user's own events without it."""

from __future__ import annotations

import pytest

from agent.memory.gate import decide

NOTHING = [
    "oh great, I love being stuck in traffic",  # sarcasm
    "yeah because I totally enjoy doing my taxes /s",
    "picture this: I'm a millionaire, what would I buy?",  # a hypothetical without "if"
    "in another life I'd be a chef",
    "my horoscope says I'll meet someone new this week",  # the stars, the cards
    "according to my tarot reading I'm going to be rich",
    '"I think, therefore I am" - who said that?',  # a quoted line
    "can you check the grammar: I has went to school",  # material to edit or translate
    "translate into Spanish: my husband and I live in a small flat",
    "in my short story the narrator is a retired pilot, help me with the ending",  # fiction
    "is my cat a maine coon?",  # a recall question about the user's own
    "the election is on thursday",  # someone else's event
]
KEPT = [
    "the recital is the day after tomorrow",
    "job interview friday at 2, so nervous",
    "flight to Oslo leaves at 7 on Sunday",
    "the wedding's in Porto, 12th of June",
    "great, I'm moving to Lisbon next month!",
    "kids go to St Mary's Primary",
    "fix the spelling: I am alergic to nuts",  # a safety fact stays, whatever frames it
]


@pytest.mark.parametrize("text", NOTHING)
def test_what_says_i_without_saying_anything_about_the_user_is_not_kept(text: str) -> None:
    assert not decide(text).keep, decide(text).reason


@pytest.mark.parametrize("text", KEPT)
def test_the_users_own_events_and_facts_are_kept(text: str) -> None:
    assert decide(text).keep
