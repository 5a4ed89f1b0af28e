"""Relative dates are resolved to calendar dates from the moment they were said (agent/memory/dates.py)."""

from __future__ import annotations

from datetime import datetime

import pytest

from agent.memory.dates import resolve

# Tuesday 1 December 2026, 15:00 local time.
SAID = datetime(2026, 12, 1, 15, 0).timestamp()


@pytest.mark.parametrize(
    ("said", "stored"),
    [
        ("My dentist appointment is tomorrow at 3pm.", "My dentist appointment is on 2026-12-02 at 3pm."),
        ("I saw her yesterday", "I saw her on 2026-11-30"),
        ("Today is my birthday", "2026-12-01 is my birthday"),
        ("Dinner with Sam tonight", "Dinner with Sam on the evening of 2026-12-01"),
        ("I slept badly last night", "I slept badly on the night of 2026-11-30"),
        ("I ran 5k this morning", "I ran 5k on the morning of 2026-12-01"),
        ("The party is the day after tomorrow", "The party is on 2026-12-03"),
        ("I have an exam on Friday", "I have an exam on Friday 2026-12-04"),
        ("I have an exam this Friday", "I have an exam on Friday 2026-12-04"),
        ("My flight is next Tuesday", "My flight is on Tuesday 2026-12-08"),
        ("Last Friday was rough", "Friday 2026-11-27 was rough"),
        ("We went hiking last weekend", "We went hiking on the weekend of 2026-11-28"),
        ("We hike this weekend", "We hike on the weekend of 2026-12-05"),
        ("I started a course last week", "I started a course in the week of 2026-11-23"),
        ("My sister visits next week", "My sister visits in the week of 2026-12-07"),
        ("My interview is in two days", "My interview is on 2026-12-03"),
        ("The course starts in 3 weeks", "The course starts on 2026-12-22"),
        ("We met two weeks ago", "We met on 2026-11-17"),
        ("I'm moving to Lisbon next month", "I'm moving to Lisbon in January 2027"),
        ("I moved here last month", "I moved here in November 2026"),
        ("I retire in two years", "I retire in 2028"),
        ("I've been vegan since last year", "I've been vegan since 2025"),
        ("I graduated three years ago", "I graduated in 2023"),
    ],
)
def test_a_relative_date_becomes_the_calendar_date_it_meant(said: str, stored: str) -> None:
    assert resolve(said, SAID) == stored


@pytest.mark.parametrize(
    "said",
    ["The last year has been hard", "I go swimming every Friday", "I like Fridays", "I work on weekends",
     "I saw it yesterday (2026-11-30)", "Nothing relative here",
     # The user gave the date: a weekday counted from today may not be it (9 December 2026 is a Wednesday).
     "My dentist appointment is on Friday the 9th", "My dentist appointment is Friday, the 9th",
     "The party is next Saturday 12th", "We fly on Friday 9 December", "We fly on Friday, 9th of December",
     "We fly this Friday Dec 11", "The exam is on Friday 12/11", "Tomorrow, the 2nd, I start"],
)
def test_spans_habits_and_dates_already_written_are_left_as_said(said: str) -> None:
    assert resolve(said, SAID) == said


def test_resolving_twice_changes_nothing_more() -> None:
    once = resolve("Tomorrow I fly to Rome, and next month to Oslo", SAID)
    assert once == "On 2026-12-02 I fly to Rome, and in January 2027 to Oslo"
    assert resolve(once, SAID) == once


def test_the_weekday_words_count_from_the_day_they_were_said() -> None:
    sunday = datetime(2026, 12, 6, 10, 0).timestamp()
    assert resolve("I have a game on Friday", sunday) == "I have a game on Friday 2026-12-11"
    assert resolve("We hike this weekend", sunday) == "We hike on the weekend of 2026-12-05"
    assert resolve("It's due tomorrow", datetime(2026, 12, 31, 23, 0).timestamp()) == "It's due on 2027-01-01"
