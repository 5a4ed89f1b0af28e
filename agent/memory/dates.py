"""Relative dates resolved when a memory is written: "tomorrow" said on 1 December is 2026-12-02 for ever.

A remembered "tomorrow" is wrong the day after it was said, and a model given "tomorrow" with the date it was said
has to do the arithmetic on every later turn (and gets it wrong often enough). So the memory's text carries the
calendar date in place of the relative phrase, worked out from the moment the user said it in the machine's local
time zone; the user's own words stay unchanged in the memory's provenance (``MemoryRecord.source``).

Pure: no clock is read here, the caller passes the moment the words were said. The phrases are the ones people
use in chat (day words and their chat spellings, "tmrw", "tonite", "day after tomorrow"; weekdays with
this/next/last/on/from/until, "fri" too, "friday next week"; "in two days", "three days from now", "three weeks ago",
"a week from tomorrow", "a week today"; a day of the month, "on the 1st", "the 23rd", "the 14th of next month",
"end of the month"; this/next/last week, weekend, month and year; "the day after christmas", "on new year's eve";
"übermorgen", "demain" and the few other tongues' day words that mean nothing else); anything else is left as it was
said, never guessed.
"""

from __future__ import annotations

import re
from calendar import monthrange
from collections.abc import Callable
from datetime import date, datetime, timedelta

WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
# How chat spells the day words: abbreviations, digits for sounds, the common typos.
_TOMORROW = r"(?:tomorrow|tmrw|tmrow|tmr|tomorow|tommorow|tommorrow|tomorro|2morrow|2moro|2morow|demain|domani|amanhã)"
# The day after tomorrow in one word of another tongue, as bilingual users type it ("übermorgen I have the MRI").
_OVERMORROW = r"(?:übermorgen|uebermorgen|overmorgen|pasado mañana|après-demain|apres-demain|dopodomani)"
_TONIGHT = r"(?:tonight|tonite|2nite|2night)"
_YESTERDAY = r"(?:yesterday|yday|yesterdy|yesturday)"
_WEEKDAY_NAMES = (r"(?:mon(?:day)?|tue(?:s|sday)?|wed(?:s|nesday)?|thu(?:r|rs|rsday)?|fri(?:day)?|sat(?:urday)?|"
                  r"sun(?:day)?)")
_NUMBERS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "a couple of": 2, "a couple": 2, "couple of": 2,
    "a few": 3, "few": 3,
}
_AMOUNT = r"(?P<n>\d{1,3}|a couple(?: of)?|couple of|a few|an?|one|two|three|four|five|six|seven|eight|nine|ten|" \
          r"eleven|twelve)"
_UNIT = r"(?P<unit>day|week|fortnight|month|year)s?"
# "on Sunday evenings" is a habit, not a date.
_HABIT_PLURAL = r"(?!s\b|\s+(?:mornings|afternoons|evenings|nights)\b)"
_DAY = r"(?P<day>" + _WEEKDAY_NAMES + r")" + _HABIT_PLURAL
# After "this" only the whole name: "this sun is brutal", "this sat well with me".
_FULL_DAY = r"(?P<day>" + "|".join(WEEKDAYS) + r")" + _HABIT_PLURAL
# A span of weekdays in a sentence about a routine is a routine: "I work from Monday to Friday".
_ROUTINE = re.compile(r"\b(?:every|each|usually|normally|always|generally|typically|weekdays|weekly|work|works|"
                      r"open|opens|closed|shifts?)\b", re.IGNORECASE)
# The day a shift counts from: "a week from tomorrow", "two weeks from Friday", "a week on Monday".
_ANCHOR = r"(?P<anchor>today|" + _TOMORROW + r"|(?:(?:this|next|on)\s+)?" + _WEEKDAY_NAMES + r")"
# British "a week today", "a week tomorrow", "a week on Friday": the same shift without "from".
_ANCHOR_ON = r"(?P<anchor>today|" + _TOMORROW + r"|on\s+" + _WEEKDAY_NAMES + r")"
# "the 1st" is a date only where nothing follows it that makes it an ordinal of something else ("the 1st time").
_DAY_OF_MONTH_END = r"(?=\s*(?:$|[,.;:!?)\-]|(?:and|at|but|so|or|for|because|when|too|then|again|is|will be)\b))"
# "the last year has been hard", "every next Friday": a span of time, not a date; left as said.
_NOT_A_DATE = re.compile(r"\b(?:the|a|my|our|your|this|that|past|every|each|first)\s*$", re.IGNORECASE)
# The phrase is the subject ("Today is my birthday"): the date alone, without a preposition.
_SUBJECT = re.compile(r"^\s*(?:is|was|will be|'s)\b", re.IGNORECASE)
# A preposition already before the phrase: "since last year" becomes "since 2025", not "since in 2025".
_PREPOSITION = re.compile(r"\b(?:on|in|at|by|since|until|till|from|before|after|for|of|during|over|around|to)\s*$",
                          re.IGNORECASE)

# A phrase followed by the calendar date itself ("Friday the 9th", "Friday, 9 December", "Friday Dec 9", "Friday
# 12/9") is left as said: the user gave the date, and a weekday counted from today may not be that day's.
_MONTH = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?"
_NTH = r"\d{1,2}(?:st|nd|rd|th)"
_WITH_ITS_DATE = (r",?\s+(?:the\s+\d{1,2}(?:st|nd|rd|th)?\b|" + _NTH + r"\b|(?:" + _NTH + r"|\d{1,2})\s+(?:of\s+)?"
                  + _MONTH + r"|" + _MONTH + r"\s+\d{1,2}\b|\d{1,2}[/.]\d{1,2}\b)")

Resolver = Callable[[re.Match[str], date], tuple[str, str]]

# Holidays of a fixed date, said as a day ("the day after christmas", "on new year's eve"); a holiday said alone is a
# season as often as a day ("I love christmas"), and moving ones (Easter) are left as said.
_HOLIDAYS: tuple[tuple[str, tuple[int, int]], ...] = (
    (r"christmas eve|xmas eve", (12, 24)), (r"christmas(?: day)?|xmas(?: day)?", (12, 25)), (r"boxing day", (12, 26)),
    (r"new year'?s eve|nye", (12, 31)), (r"new year'?s(?: day)?", (1, 1)), (r"halloween", (10, 31)),
    (r"valentine'?s(?: day)?", (2, 14)),
)
_HOLIDAY_NAMES = "|".join(f"(?:{pattern})" for pattern, _ in _HOLIDAYS)


def _iso(day: date) -> str:
    return day.isoformat()


def _on(day: date) -> tuple[str, str]:
    return f"on {_iso(day)}", _iso(day)


def _add_months(day: date, months: int) -> date:
    index = day.month - 1 + months
    year, month = day.year + index // 12, index % 12 + 1
    return date(year, month, min(day.day, monthrange(year, month)[1]))


def _month_name(day: date) -> str:
    return day.strftime("%B %Y")


def _week_of(monday: date) -> tuple[str, str]:
    return f"in the week of {_iso(monday)}", f"the week of {_iso(monday)}"


def _monday(day: date) -> date:
    return day - timedelta(days=day.weekday())


def _shift(said: date, n: int, unit: str) -> date:
    unit = unit.lower()
    if unit == "day":
        return said + timedelta(days=n)
    if unit == "week":
        return said + timedelta(weeks=n)
    if unit == "fortnight":
        return said + timedelta(weeks=2 * n)
    if unit == "month":
        return _add_months(said, n)
    return _add_months(said, 12 * n)


def _amount(match: re.Match[str]) -> int:
    raw = " ".join(match.group("n").lower().split())
    return int(raw) if raw.isdigit() else _NUMBERS[raw]


def _weekday_after(said: date, weekday: int) -> date:
    """The first ``weekday`` strictly after ``said`` ("on Friday", "this Friday" said on a Tuesday: in 3 days)."""
    return said + timedelta(days=(weekday - said.weekday() - 1) % 7 + 1)


def _weekday_before(said: date, weekday: int) -> date:
    return said - timedelta(days=(said.weekday() - weekday - 1) % 7 + 1)


def _next_weekday(said: date, weekday: int) -> date:
    """"next Friday": the Friday of next week, as most people mean it when they add "next" (said on a Tuesday that
    is 10 days on, not 3); said on a Saturday, "next Tuesday" is the coming one, which is in next week."""
    return _monday(said) + timedelta(weeks=1, days=weekday)


def _weekday_index(name: str) -> int:
    """``"fri"``, ``"Thurs"``, ``"wednesday"``: the weekday's index, by its first three letters."""
    return next(n for n, day in enumerate(WEEKDAYS) if day.startswith(name.lower()[:3]))


def _weekday(match: re.Match[str]) -> int:
    return _weekday_index(match.group("day"))


def _day_name(match: re.Match[str], group: str = "day") -> str:
    return WEEKDAYS[_weekday_index(match.group(group))].capitalize()


def _labelled(day: date, name: str) -> tuple[str, str]:
    return f"on {name} {_iso(day)}", f"{name} {_iso(day)}"


def _weekend(saturday: date) -> tuple[str, str]:
    days = f"{_iso(saturday)} to {_iso(saturday + timedelta(days=1))}"
    return f"on the weekend of {days}", f"the weekend of {days}"


def _anchor_day(anchor: str, said: date) -> date:
    """The day a shift counts from: today, tomorrow, or a weekday (the coming one; "next Friday" as below)."""
    words = anchor.lower().split()
    if words[0] == "today":
        return said
    if re.fullmatch(_TOMORROW, words[0]):
        return said + timedelta(days=1)
    if words[0] == "next":
        return _next_weekday(said, _weekday_index(words[-1]))
    return _weekday_after(said, _weekday_index(words[-1]))


def _from_anchor(match: re.Match[str], said: date) -> tuple[str, str]:
    """"a week from tomorrow", "two weeks from Friday", "a week today", "a fortnight on Monday": the anchor's day
    moved on by the amount."""
    amount = _amount(match) if match.group("n") else 1
    return _on(_shift(_anchor_day(match.group("anchor"), said), amount, match.group("unit")))


def _day_of_next_week(match: re.Match[str], said: date) -> tuple[str, str]:
    """"Friday next week", "next week wednesday": that weekday of the week after this one."""
    return _labelled(_monday(said) + timedelta(weeks=1, days=_weekday(match)), _day_name(match))


def _holiday_day(name: str, said: date) -> date:
    """The coming day of a holiday of a fixed date (today's, if it is today)."""
    month, day = next(when for pattern, when in _HOLIDAYS if re.fullmatch(pattern, name, re.IGNORECASE))
    this_year = date(said.year, month, day)
    return this_year if this_year >= said else date(said.year + 1, month, day)


def _holiday(match: re.Match[str], said: date) -> tuple[str, str]:
    return _on(_holiday_day(match.group("holiday"), said))


def _next_to_holiday(match: re.Match[str], said: date) -> tuple[str, str]:
    """"the day after christmas": the day beside the coming holiday."""
    step = 1 if match.group("rel").lower() == "after" else -1
    return _on(_holiday_day(match.group("holiday"), said) + timedelta(days=step))


def _day_of_month(match: re.Match[str], said: date) -> tuple[str, str]:
    """"on the 1st" said on 26 February is 1 March: the next such day, today included; "of next month" and "of
    this month" say which month. A day the month has not (the 31st in April) goes to the next month that has it."""
    wanted = int(match.group("dom"))
    which = (match.group("which") or "").lower()
    month = _add_months(said.replace(day=1), 1) if which == "next" or (not which and wanted < said.day) \
        else said.replace(day=1)
    for _ in range(12):
        if wanted <= monthrange(month.year, month.month)[1]:
            break
        month = _add_months(month, 1)
    day = month.replace(day=wanted) if wanted <= monthrange(month.year, month.month)[1] else month
    if not match.group("prep"):  # "the 22nd is my last shift", "the break starts the 23rd"
        return _on(day)
    text = f"{match.group('prep')} {_iso(day)}"
    return text, text


_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
           "november", "december")
_ORDINALS = {"first": 0, "1st": 0, "second": 1, "2nd": 1, "third": 2, "3rd": 2, "fourth": 3, "4th": 3, "last": -1}


def _nth_weekday(match: re.Match[str], said: date) -> tuple[str, str]:
    """"the first Monday of next month", "the last Friday of this month", "the second Tuesday in March": that
    weekday of that month (a month named is the next one to come, this one while the day is still ahead)."""
    weekday, nth = _weekday(match), _ORDINALS[match.group("ord").lower()]

    def in_month(first: date) -> date:
        if nth < 0:
            last = first.replace(day=monthrange(first.year, first.month)[1])
            return last - timedelta(days=(last.weekday() - weekday) % 7)
        return first + timedelta(days=(weekday - first.weekday()) % 7, weeks=nth)

    named = match.group("which")
    if named:
        first = said.replace(day=1, month=_MONTHS.index(named.lower()) + 1)
        if in_month(first) < said:
            first = first.replace(year=first.year + 1)
    else:
        first = _add_months(said.replace(day=1), 1 if match.group("rel").lower() == "next" else 0)
    day = in_month(first)
    return _labelled(day, _day_name(match))


def _end_of_month(match: re.Match[str], said: date) -> tuple[str, str]:
    """"end of the month", "end of next month": its last day."""
    month = _add_months(said.replace(day=1), 1 if match.group("which").lower() == "next" else 0)
    return _on(month.replace(day=monthrange(month.year, month.month)[1]))


def _start_of_month(match: re.Match[str], said: date) -> tuple[str, str]:
    """"from the beginning of next month", "start of next month": its first day."""
    return _on(_add_months(said.replace(day=1), 1))


def _weekday_span(match: re.Match[str], said: date) -> tuple[str, str]:
    """"from Thursday until Sunday": each the coming one, the end after the start."""
    start = _weekday_after(said, _weekday_index(match.group("day")))
    end = _weekday_after(start, _weekday_index(match.group("end")))
    text = (f"from {_day_name(match)} {_iso(start)} {match.group('to')} {_day_name(match, 'end')} {_iso(end)}")
    return text, text


def _bounded_weekday(match: re.Match[str], said: date) -> tuple[str, str]:
    """"until Sunday", "by Friday", "before Monday": the coming one."""
    text = f"{match.group('prep')} {_day_name(match)} {_iso(_weekday_after(said, _weekday(match)))}"
    return text, text


# What joins the days of a list or a span: "monday and thursday", "monday to friday", "mon-fri".
_JOIN = r"(?:,|&|and|or|to|till|until|through|-|–)"
_LISTED = _JOIN + r"\s*" + _WEEKDAY_NAMES


def _bare_weekday(match: re.Match[str], said: date) -> tuple[str, str]:
    """"job interview monday at 10": the coming Monday, as "on Monday" (the one gone after a verb in the past); it
    is written without the "on" the user did not say (``_resolve_one``)."""
    return _labelled(_weekday_after(said, _weekday(match)), _day_name(match))


def _this_saturday(said: date) -> date:
    """The Saturday of this weekend: said on a Sunday, the weekend is the one under way."""
    return said - timedelta(days=1) if said.weekday() == 6 else said + timedelta(days=5 - said.weekday())


def _span(day: date, match: re.Match[str]) -> tuple[str, str]:
    """A shift by days or weeks lands on a day; by months on a month, by years on a year: "in two years" is
    not a promise for one day."""
    unit = match.group("unit").lower()
    if unit == "month":
        return f"in {_month_name(day)}", _month_name(day)
    if unit == "year":
        return f"in {day.year}", str(day.year)
    return _on(day)


def _part_of_day(match: re.Match[str], day: date) -> tuple[str, str]:
    part = match.group("part").lower()
    return f"on the {part} of {_iso(day)}", f"the {part} of {_iso(day)}"


_RULES: tuple[tuple[str, Resolver], ...] = (
    (r"(?:the )?day after " + _TOMORROW + "|" + _OVERMORROW, lambda m, d: _on(d + timedelta(days=2))),
    (r"(?:the )?day (?P<rel>after|before) (?P<holiday>" + _HOLIDAY_NAMES + r")", _next_to_holiday),
    (r"on (?P<holiday>" + _HOLIDAY_NAMES + r")", _holiday),
    (r"(?:the )?day before " + _YESTERDAY, lambda m, d: _on(d - timedelta(days=2))),
    (r"(?:(?:on|this|coming|this coming)\s+)?" + _DAY + r"\s+(?:of\s+)?next week", _day_of_next_week),
    (r"next week,?\s+(?:on\s+)?" + _DAY, _day_of_next_week),
    (r"(?:the )?end of (?P<which>the|this|next) month", _end_of_month),
    (r"(?:the )?(?:beginning|start) of next month", _start_of_month),
    (r"(?:the )?(?P<ord>first|1st|second|2nd|third|3rd|fourth|4th|last) " + _FULL_DAY + r" (?:of|in) (?:(?P<which>"
     + "|".join(_MONTHS) + r")|(?P<rel>this|next) month)", _nth_weekday),
    (_AMOUNT + r"\s+(?P<unit>day|week|fortnight)s?\s+from now",
     lambda m, d: _span(_shift(d, _amount(m), m.group("unit")), m)),
    # "in a week from tomorrow": the shift from the anchor, not "in a week" from today
    (r"(?:in\s+)?" + _AMOUNT + r"\s+(?P<unit>day|week|fortnight)s?\s+(?:from|after)\s+" + _ANCHOR, _from_anchor),
    (_AMOUNT + r"\s+(?P<unit>week|fortnight)s?\s+" + _ANCHOR_ON, _from_anchor),
    (_TOMORROW + r" (?P<part>morning|afternoon|evening|night)", lambda m, d: _part_of_day(m, d + timedelta(days=1))),
    (_YESTERDAY + r" (?P<part>morning|afternoon|evening)", lambda m, d: _part_of_day(m, d - timedelta(days=1))),
    (r"last (?P<part>night)", lambda m, d: _part_of_day(m, d - timedelta(days=1))),
    (r"this (?P<part>morning|afternoon|evening)", _part_of_day),
    (_TONIGHT, lambda m, d: (f"on the evening of {_iso(d)}", f"the evening of {_iso(d)}")),
    (_TOMORROW, lambda m, d: _on(d + timedelta(days=1))),
    (_YESTERDAY, lambda m, d: _on(d - timedelta(days=1))),
    (r"today", lambda m, d: _on(d)),
    (r"(?:(?P<prep>on|by|until|till|before|after|from) )?the (?P<dom>\d{1,2})(?:st|nd|rd|th)"
     r"(?: of (?P<which>this|next) month)?" + _DAY_OF_MONTH_END, _day_of_month),
    (r"from " + _DAY + r"\s+(?P<to>until|till|to|through)\s+(?P<end>" + _WEEKDAY_NAMES + r")", _weekday_span),
    (r"(?P<prep>until|till|by|before) " + _DAY, _bounded_weekday),
    (r"in (?:exactly |just )?" + _AMOUNT + r" " + _UNIT, lambda m, d: _span(_shift(d, _amount(m), m.group("unit")), m)),
    (_AMOUNT + r" " + _UNIT + r" ago", lambda m, d: _span(_shift(d, -_amount(m), m.group("unit")), m)),
    (r"next " + _DAY, lambda m, d: _labelled(_next_weekday(d, _weekday(m)), _day_name(m))),
    (r"last " + _DAY, lambda m, d: _labelled(_weekday_before(d, _weekday(m)), _day_name(m))),
    (r"this (?:coming )?" + _FULL_DAY, lambda m, d: _labelled(_weekday_after(d, _weekday(m)), _day_name(m))),
    (r"coming " + _DAY, lambda m, d: _labelled(_weekday_after(d, _weekday(m)), _day_name(m))),
    (r"on " + _DAY, lambda m, d: _labelled(_weekday_after(d, _weekday(m)), _day_name(m))),
    # A day said bare, by its whole name, is the coming one, as "on" would say it ("job interview monday at 10",
    # "photo day is wednesday"); one of a list or a span ("monday and thursday", "monday to friday") is a routine.
    (_FULL_DAY + r"(?!\s*" + _LISTED + r")", _bare_weekday),
    (r"this weekend", lambda m, d: _weekend(_this_saturday(d))),
    (r"next weekend", lambda m, d: _weekend(_this_saturday(d) + timedelta(weeks=1))),
    (r"last weekend", lambda m, d: _weekend(_this_saturday(d) - timedelta(weeks=1))),
    (r"this week", lambda m, d: _week_of(_monday(d))),
    (r"next week", lambda m, d: _week_of(_monday(d) + timedelta(weeks=1))),
    (r"last week", lambda m, d: _week_of(_monday(d) - timedelta(weeks=1))),
    (r"this month", lambda m, d: (f"in {_month_name(d)}", _month_name(d))),
    (r"next month", lambda m, d: (f"in {_month_name(_add_months(d, 1))}", _month_name(_add_months(d, 1)))),
    (r"last month", lambda m, d: (f"in {_month_name(_add_months(d, -1))}", _month_name(_add_months(d, -1)))),
    (r"this year", lambda m, d: (f"in {d.year}", str(d.year))),
    (r"next year", lambda m, d: (f"in {d.year + 1}", str(d.year + 1))),
    (r"last year", lambda m, d: (f"in {d.year - 1}", str(d.year - 1))),
)
# One alternation, longest phrases first in the rule order, so "the day after tomorrow" is never read as
# "tomorrow", and a date already written out ("tomorrow (2026-12-02)") is not resolved twice.
_PATTERN = re.compile(
    r"\b(?:" + "|".join(f"(?P<r{i}>{re.sub(r'[(][?]P<[a-z]+>', '(?:', rule)})" for i, (rule, _) in enumerate(_RULES))
    + r")\b(?!\s*\(?\d{4}-\d{2})(?!" + _WITH_ITS_DATE + r")",
    re.IGNORECASE,
)


# A verb in the past before "on Friday" makes it the Friday gone ("I turned 41 on Saturday", "we met on Monday"); the
# participles that look forward ("booked", "scheduled") do not.
# "got a job interview monday": "got a" is having one, not the past.
_PAST = re.compile(r"\b(?:was|were|had|did|went|got(?! (?:a|an|another)\b)|saw|met|came|left|took|made|gave|ate|ran|"
                   r"began|won|lost|told|said|"
                   r"bought|sold|flew|drove|broke|fell|found|(?!(?:booked|scheduled|planned|supposed|invited|expected|"
                   r"excited|interested|tired|worried|engaged|needed|required|allowed|asked|hoped|wanted)\b)\w{2,}ed)\b",
                   re.IGNORECASE)
_ON_DAY = next(n for n, (rule, _) in enumerate(_RULES) if rule == r"on " + _DAY)
# "got my jag booked for Monday": a day an arrangement is for is to come, whatever verb in the past made it.
_BOOKED_FOR = re.compile(r"\b(?:booked|scheduled|planned|set|arranged|fixed|moved|pushed|postponed|rescheduled|"
                         r"due)\s+(?:(?:back|up|in)\s+)?(?:for|on|to|till|until)\s*$", re.IGNORECASE)
_GONE_BEFORE = re.compile(r"\bsince\s*$", re.IGNORECASE)  # "sick since monday": the one gone
# A day after another and a word that joins them ("monday to friday"): the end of a span or a list, not a date.
_AFTER_LISTED = re.compile(r"\b" + _WEEKDAY_NAMES + r"\s*" + _JOIN + r"\s*$", re.IGNORECASE)


# A day named just before a day of the month: the two say one date ("Friday the 9th"), left as said.
_NAMED_DAY_BEFORE = re.compile(r"\b(?:" + _WEEKDAY_NAMES + r"|today|" + _TOMORROW + r"|" + _YESTERDAY + r"),?\s*$",
                               re.IGNORECASE)
# The rules whose phrase is as often a routine as a date: left as said in a sentence about a routine.
_ROUTINE_SENSITIVE = frozenset({_weekday_span, _bounded_weekday, _bare_weekday})


def _clause(before: str) -> str:
    """The clause a phrase ends: what follows the last sentence mark or comma of ``before``."""
    return re.split(r"[.!?;,]", before)[-1]


def _rule(match: re.Match[str]) -> tuple[str, Resolver]:
    """The rule whose alternative of ``_PATTERN`` matched."""
    index = next(int(name[1:]) for name, value in match.groupdict().items() if name.startswith("r") and value)
    return _RULES[index]


def _resolve_one(match: re.Match[str], said: date, before: str, after: str) -> str:
    """The replacement of one matched phrase, given the text before and after it."""
    pattern, resolver = _rule(match)
    inner = re.compile(pattern, re.IGNORECASE).fullmatch(match.group(0))
    assert inner is not None  # the alternation matched this rule's text
    if (_RULES.index((pattern, resolver)) == _ON_DAY or resolver is _bare_weekday) and (
            (_PAST.search(_clause(before)) and not _BOOKED_FOR.search(before)) or _GONE_BEFORE.search(before)):
        day = _weekday_before(said, _weekday(inner))
        with_preposition, bare = _labelled(day, _day_name(inner))
    else:
        with_preposition, bare = resolver(inner, said)
    if resolver is _bare_weekday or (not match.group(0).lower().startswith("on ") and (
            _PREPOSITION.search(before) or _SUBJECT.match(after))):
        replacement = bare
    else:
        replacement = with_preposition
    if not before.strip() or before.rstrip()[-1] in ".!?":
        replacement = replacement[0].upper() + replacement[1:]
    return replacement


def names_a_day_to_come(text: str) -> bool:
    """Whether ``text`` names a day after the one it is said on ("the day after tmrw", "coming monday", "in 10
    days"): what is read is the distance from any day, so none is passed."""
    said = datetime(2026, 1, 7, 12)
    resolved = resolve(text, said.timestamp())
    return any(date.fromisoformat(day) > said.date() for day in re.findall(r"\d{4}-\d{2}-\d{2}", resolved)
               if day not in text)


def resolve(text: str, said_at: float) -> str:
    """``text`` with each relative date replaced by the calendar date it meant at ``said_at`` (a Unix time, read
    in the local time zone): "My dentist appointment is tomorrow at 3pm" said on 2026-12-01 becomes "My dentist
    appointment is on 2026-12-02 at 3pm"."""
    said = datetime.fromtimestamp(said_at).date()
    out: list[str] = []
    last = 0
    routine = _ROUTINE.search(text) is not None
    for match in _PATTERN.finditer(text):
        before = text[: match.start()]
        if _NOT_A_DATE.search(before) or (routine and _rule(match)[1] in _ROUTINE_SENSITIVE) or (
                _rule(match)[1] is _bare_weekday and _AFTER_LISTED.search(before)):
            continue
        if _rule(match)[1] in (_holiday, _next_to_holiday) and _PAST.search(_clause(before)):
            continue  # "it snowed on christmas day": which one is not said, so it is left as said
        if _rule(match)[1] is _day_of_month and _NAMED_DAY_BEFORE.search(before) and not re.match(
                r"(?:on|by|until|till|before|after|from)\b", match.group(0), re.IGNORECASE):
            continue  # "Friday the 9th", "tomorrow, the 2nd": the user gave the date of a day they named
        out.append(text[last : match.start()])
        out.append(_resolve_one(match, said, before, text[match.end() :]))
        last = match.end()
    if not out:
        return text
    out.append(text[last:])
    return "".join(out)
