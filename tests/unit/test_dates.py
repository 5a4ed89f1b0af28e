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
        ("We went hiking last weekend", "We went hiking on the weekend of 2026-11-28 to 2026-11-29"),
        ("We hike this weekend", "We hike on the weekend of 2026-12-05 to 2026-12-06"),
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
        # A preposition of arrangements, a shift said exactly, a shift from today British style, a weekday of next
        # week said either way round, a holiday of a fixed date and its neighbours, another tongue's day word.
        ("dentist booked for tmrw morning", "dentist booked for the morning of 2026-12-02"),
        ("got my flu jab booked for Thursday", "got my flu jab booked for Thursday 2026-12-03"),
        ("the lease ends in exactly 3 weeks", "the lease ends on 2026-12-22"),
        ("two weeks today we fly", "On 2026-12-15 we fly"),
        ("the electrician comes next week thursday", "the electrician comes on Thursday 2026-12-10"),
        ("the electrician's coming Thursday next week", "the electrician's on Thursday 2026-12-10"),
        ("the party is the day after christmas", "the party is on 2026-12-26"),
        ("drinks on new year's eve", "drinks on 2026-12-31"),
        ("übermorgen I have the MRI", "On 2026-12-03 I have the MRI"),
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
     "We fly this Friday Dec 11", "The exam is on Friday 12/11", "Tomorrow, the 2nd, I start",
     # A holiday alone is a season, and one in the past is not said which.
     "I love christmas", "it snowed on christmas day"],
)
def test_spans_habits_and_dates_already_written_are_left_as_said(said: str) -> None:
    assert resolve(said, SAID) == said


# Said on Tuesday 1 December 2026, as chat spells it: abbreviations, shifts from a day, a day of the month, spans.
@pytest.mark.parametrize(
    ("said", "stored"),
    [
        ("flight tmrw at 6", "flight on 2026-12-02 at 6"),
        ("big game tonite", "big game on the evening of 2026-12-01"),
        ("gym 2moro evening", "gym on the evening of 2026-12-02"),
        ("saw the doctor yday", "saw the doctor on 2026-11-30"),
        ("my exam is a week from tomorrow", "my exam is on 2026-12-09"),
        ("the move is two weeks from friday", "the move is on 2026-12-18"),
        ("results come out a week today", "results come out on 2026-12-08"),
        ("her party is a week on Saturday", "her party is on 2026-12-12"),
        ("my visa expires on the 20th", "my visa expires on 2026-12-20"),
        ("the invoice is due by the 2nd, so I need to hurry", "the invoice is due by 2026-12-02, so I need to hurry"),
        ("the 3rd of next month is my review, on the 3rd of next month",
         "2027-01-03 is my review, on 2027-01-03"),
        ("moving out before the 31st of this month", "moving out before 2026-12-31"),
        ("my parents stay from fri till mon", "my parents stay from Friday 2026-12-04 till Monday 2026-12-07"),
        ("I need it done by Thursday", "I need it done by Thursday 2026-12-03"),
        ("it got pushed to next wed", "it got pushed to Wednesday 2026-12-09"),
        ("dinner on sat with Ola", "dinner on Saturday 2026-12-05 with Ola"),
    ],
)
def test_chat_spellings_shifts_days_of_the_month_and_spans(said: str, stored: str) -> None:
    assert resolve(said, SAID) == stored
    assert resolve(stored, SAID) == stored  # resolving again changes nothing


@pytest.mark.parametrize(
    "said",
    ["It was the 1st time I saw snow", "We live on the 3rd floor", "The 21st century is strange",
     "my birthday is on the 14th of April", "I work from Monday to Friday", "The shop is open until Sunday evenings",
     "this sun is brutal", "we usually stay from friday till sunday", "I came 2nd in the race"],
)
def test_ordinals_routines_and_words_that_look_like_days_are_left_as_said(said: str) -> None:
    assert resolve(said, SAID) == said


# Said on Tuesday 1 December 2026: days of next week, the end of a month, a bare day of the month, "from now".
@pytest.mark.parametrize(
    ("said", "stored"),
    [
        ("dentist thursday next week", "dentist on Thursday 2026-12-10"),
        ("the move is on monday of next week", "the move is on Monday 2026-12-07"),
        ("flying home day after tomorrow", "flying home on 2026-12-03"),
        ("rent is due end of the month", "rent is due on 2026-12-31"),
        ("the essay is due by the end of next month", "the essay is due by 2027-01-31"),
        ("the 19th is our anniversary", "2026-12-19 is our anniversary"),
        ("choir concert is the 12th", "choir concert is on 2026-12-12"),
        ("five days from now my visa runs out", "On 2026-12-06 my visa runs out"),
    ],
)
def test_days_of_next_week_ends_of_months_and_bare_days_of_the_month(said: str, stored: str) -> None:
    assert resolve(said, SAID) == stored
    assert resolve(stored, SAID) == stored


@pytest.mark.parametrize(
    ("said", "stored"),
    [
        ("turned 41 on Saturday", "turned 41 on Saturday 2026-11-28"),
        ("we met on Monday", "we met on Monday 2026-11-30"),
        ("we moved in on Sunday", "we moved in on Sunday 2026-11-29"),
        ("my interview is on Friday", "my interview is on Friday 2026-12-04"),
        ("I'm booked on Friday", "I'm booked on Friday 2026-12-04"),
        ("I was sick, but the exam is on Friday", "I was sick, but the exam is on Friday 2026-12-04"),
    ],
)
def test_a_weekday_after_a_verb_in_the_past_is_the_one_gone(said: str, stored: str) -> None:
    assert resolve(said, SAID) == stored  # said on Tuesday 1 December 2026


def test_a_day_of_the_month_past_this_month_or_missing_from_it_is_the_next_month_that_has_it() -> None:
    assert resolve("rent is due on the 1st", datetime(2026, 2, 26, 9).timestamp()) == "rent is due on 2026-03-01"
    assert resolve("due on the 26th", datetime(2026, 2, 26, 9).timestamp()) == "due on 2026-02-26"
    assert resolve("due on the 31st", datetime(2026, 4, 2, 9).timestamp()) == "due on 2026-05-31"
    assert resolve("back on the 5th", datetime(2026, 12, 30, 9).timestamp()) == "back on 2027-01-05"


def test_resolving_twice_changes_nothing_more() -> None:
    once = resolve("Tomorrow I fly to Rome, and next month to Oslo", SAID)
    assert once == "On 2026-12-02 I fly to Rome, and in January 2027 to Oslo"
    assert resolve(once, SAID) == once


def test_the_weekday_words_count_from_the_day_they_were_said() -> None:
    sunday = datetime(2026, 12, 6, 10, 0).timestamp()
    assert resolve("I have a game on Friday", sunday) == "I have a game on Friday 2026-12-11"
    assert resolve("We hike this weekend", sunday) == "We hike on the weekend of 2026-12-05 to 2026-12-06"
    assert resolve("It's due tomorrow", datetime(2026, 12, 31, 23, 0).timestamp()) == "It's due on 2027-01-01"


# Said on Tuesday 1 December 2026: a weekday said bare is the coming one, unless a verb in the past or "since" says
# the one gone; one of a list or a span, or in a routine, is left as said.
@pytest.mark.parametrize(
    ("said", "stored"),
    [
        ("got a job interview monday at 10", "got a job interview Monday 2026-12-07 at 10"),
        ("school photo day is wednesday", "school photo day is Wednesday 2026-12-02"),
        ("Friday works for the party", "Friday works for the party"),
        ("saw her monday", "saw her Monday 2026-11-30"),
        ("sick since monday", "sick since Monday 2026-11-30"),
        ("yesterday was monday", "2026-11-30 was Monday 2026-11-30"),
        ("wfh monday and thursday", "wfh monday and thursday"),
        ("office monday to friday", "office monday to friday"),
        ("mondays are rough", "mondays are rough"),
        ("I swim every monday", "I swim every monday"),
    ],
)
def test_a_bare_weekday_is_the_coming_one(said: str, stored: str) -> None:
    assert resolve(said, SAID) == stored
    assert resolve(stored, SAID) == stored


def test_a_bare_weekday_said_on_that_weekday_or_the_day_before_is_the_next_one() -> None:
    sunday = datetime(2026, 11, 29, 19, 0).timestamp()
    assert resolve("school photo day is wednesday", sunday) == "school photo day is Wednesday 2026-12-02"
    assert resolve("game sunday", sunday) == "game Sunday 2026-12-06"
    friday = datetime(2026, 1, 23, 17, 10).timestamp()
    assert resolve("got a job interview monday at 10!!!", friday) == "got a job interview Monday 2026-01-26 at 10!!!"


@pytest.mark.parametrize(
    ("said", "at", "stored"),
    [
        ("lessons start the first monday of next month", datetime(2026, 10, 20, 11),
         "lessons start on Monday 2026-11-02"),
        ("the last friday of this month is payday", datetime(2026, 10, 20, 11), "Friday 2026-10-30 is payday"),
        ("the recital is the second tuesday in march", datetime(2026, 10, 20, 11),
         "the recital is on Tuesday 2027-03-09"),
        ("the fair is the first saturday of october", datetime(2026, 10, 1, 11), "the fair is on Saturday 2026-10-03"),
        ("we meet the first monday of the month", datetime(2026, 10, 20, 11), "we meet the first monday of the month"),
    ],
)
def test_the_nth_weekday_of_a_month(said: str, at: datetime, stored: str) -> None:
    """A month named is the next to come (this one while the day is ahead); "of the month" is a routine."""
    assert resolve(said, at.timestamp()) == stored


@pytest.mark.parametrize(
    ("said", "at", "stored"),
    [
        ("flu shots tomorrow morning", datetime(2026, 12, 1, 22, 40), "flu shots on the morning of 2026-12-02"),
        ("the car goes in a week from tomorrow", datetime(2026, 11, 5, 12, 30), "the car goes on 2026-11-13"),
        ("it's due tomorrow", datetime(2026, 12, 31, 23, 59), "it's due on 2027-01-01"),
    ],
)
def test_a_day_word_late_in_the_evening_and_a_shift_from_tomorrow(said: str, at: datetime, stored: str) -> None:
    assert resolve(said, at.timestamp()) == stored


def test_a_day_to_come_is_told_from_a_day_gone_and_from_no_day() -> None:
    from agent.memory.dates import names_a_day_to_come

    for said in ("recital is the day after tomorrow", "interview coming monday", "offsite in 10 days",
                 "party next weekend", "dentist booked for tmrw morning"):
        assert names_a_day_to_come(said), said
    for said in ("had my wisdom teeth out yesterday", "so tired today", "we met last week", "no date here",
                 "moved in 2019"):
        assert not names_a_day_to_come(said), said
