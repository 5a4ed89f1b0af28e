"""A cheap test that a regular expression cannot match a text, made from the expression itself.

Judging a line searches it with some forty patterns (``agent.memory.refusal``), most of which match almost no line,
and Python's ``re`` tries each pattern at every position of the text: a case-insensitive alternation of words gets
none of its own shortcuts, so one search of a 60-character line costs 10-50 us, and judging 10,000 imported lines
took 3 s of CPU, a third of what embedding them does. Every match of most patterns holds one of a few words ("pass",
"ignore", "login"), and ``in`` finds a word in a line a hundred times faster than the engine tries an alternation.

``needed`` reads a compiled pattern's parse tree and gives the strings at least one of which every match must hold
(lower case), or None when it cannot tell. ``Guarded`` reads more: for each alternative of a pattern that is one
alternation, up to three such sets that its every match holds one string of each ("you" and a verb of replying), and
searches only a text that meets them all for some alternative. The strings are
derived, never written by hand, so a pattern changed later can never be skipped wrongly for a word it newly reads.
The test is sound and never decides anything: it says only "no match possible", and every other text is searched
as before, so every decision made with a guarded pattern is the one made without it. Only ASCII text is tested (most
of what people type): lower-casing it is one character for one, and ``re.IGNORECASE`` matches an ASCII letter of a
text only with the same letter in either case (a pattern letter that also matches one, the Kelvin sign or the long
s, makes ``needed`` give up); other text is searched whatever it holds.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Iterator
from typing import Any

# The parser ``re`` compiles with, its node names and its extra case pairs: private, so read as it is, untyped.
_parser: Any = importlib.import_module("re._parser")
c: Any = importlib.import_module("re._constants")
_casefix: Any = importlib.import_module("re._casefix")

__all__ = ["Guarded", "needed"]

_MOST = 256  # strings a requirement may hold before it is dropped as no cheaper than the search
_REPEATS = {c.MAX_REPEAT, c.MIN_REPEAT, *([c.POSSESSIVE_REPEAT] if hasattr(c, "POSSESSIVE_REPEAT") else [])}
_NONE: frozenset[str] = frozenset()  # the requirement of what cannot match ASCII text at all


def _ascii_letter(code: int) -> str | None:
    """The lower-case ASCII character an ASCII text must hold where the pattern's literal ``code`` matches, '' when
    no ASCII character can match it, or None when one other than its own lower case could (the Kelvin sign is "k"
    under ``re.IGNORECASE``, the long s is "s")."""
    char = chr(code)
    if code < 128:
        return char.lower()
    partners = "".join(chr(p) for p in _casefix._EXTRA_CASES.get(code, ()))
    if any(ord(x) < 128 for x in char.lower() + char.upper() + partners):
        return None
    return ""


def _requirement(op: Any, av: Any) -> frozenset[str] | None:
    """What one node of the parse tree needs: the strings one of which its every match holds, ``_NONE`` when it
    cannot match ASCII text, or None when it needs nothing that can be told."""
    if op is c.LITERAL:
        letter = _ascii_letter(av)
        return None if letter is None else frozenset({letter}) if letter else _NONE
    if op is c.IN:
        return _letters(av)
    if op is c.BRANCH:
        union: set[str] = set()
        for alternative in av[1]:
            needs = _sequence(alternative)
            if needs is None:
                return None
            union |= needs
        return _minimal(frozenset(union)) if len(union) <= _MOST else None
    if op is c.SUBPATTERN:
        return _sequence(av[3])
    if op is getattr(c, "ATOMIC_GROUP", None):
        return _sequence(av)
    if op in _REPEATS:
        low, _, item = av
        return _sequence(item) if low >= 1 else None
    return None  # a boundary, a lookaround, any character, a back-reference: nothing told


def _minimal(needs: frozenset[str]) -> frozenset[str]:
    """``needs`` without the strings that hold another of them: where such a string is, so is the other."""
    return frozenset(word for word in needs if not any(other != word and other in word for other in needs))


def _letters(items: Any) -> frozenset[str] | None:
    """What a set of characters ("[oó]") needs: one of its letters that ASCII text can hold."""
    letters: set[str] = set()
    for item, value in items:
        if item is not c.LITERAL:
            return None  # a range, a category, a negated set: not told here
        letter = _ascii_letter(value)
        if letter is None:
            return None
        if letter:
            letters.add(letter)
    return frozenset(letters)


def _sequence(items: Any) -> frozenset[str] | None:
    """What a sequence of nodes needs: the most telling of what each of them needs (every match of a sequence
    holds a match of each of its nodes), with runs of literal letters joined into words."""
    clauses = _clauses(items)
    return clauses[0] if clauses else None


def _clauses(items: Any) -> list[frozenset[str]]:
    """Everything a sequence of nodes needs, the most telling first: a match holds one string of each. ``[_NONE]``
    when it cannot match ASCII text, ``[]`` when nothing is told."""
    run = ""
    candidates: list[frozenset[str]] = []
    for op, av in items:
        needs = _requirement(op, av)
        if needs is not None and not needs:  # this node cannot match, so neither can the sequence
            return [_NONE]
        if needs is not None and len(needs) == 1 and op in (c.LITERAL, c.IN):  # one letter, as "[oó]" is in ASCII
            run += next(iter(needs))
            continue
        if run:
            candidates.append(frozenset({run}))
            run = ""
        if needs is not None:
            candidates.append(needs)
    if run:
        candidates.append(frozenset({run}))
    return sorted(candidates, key=_telling, reverse=True)


def _ways(items: Any) -> list[list[frozenset[str]]] | None:
    """What each alternative of a pattern that is one alternation needs (its ``_clauses``, the three most telling),
    or of the pattern as one alternative; None when an alternative needs nothing told. "You must reply ..." or
    "always reply ..." needs "you" and "reply" or "always" and "reply", where one requirement of the whole is only
    the words any alternative holds."""
    while len(items) == 1 and items[0][0] is c.SUBPATTERN and items[0][1][0] is None:
        items = items[0][1][3]
    alternatives = items[0][1][1] if len(items) == 1 and items[0][0] is c.BRANCH else [items]
    ways = []
    for alternative in alternatives:
        clauses = _clauses(alternative)
        if not clauses:
            return None
        if clauses != [_NONE]:
            ways.append(clauses[:3])
    return ways


def _telling(needs: frozenset[str]) -> tuple[int, int]:
    """How much a requirement rules out: its shortest string the longer the better, then the fewer strings."""
    return min(map(len, needs)), -len(needs)


def needed(pattern: re.Pattern[str]) -> frozenset[str] | None:
    """The lower-case strings at least one of which every match of ``pattern`` in an ASCII text holds (once that
    text is lower-cased), or None when none can be told. An empty set: no ASCII text can match."""
    return _sequence(_parser.parse(pattern.pattern, pattern.flags))


class Guarded:
    """``pattern`` searched only in a text that can hold a match of it (the module's docstring): the same matches,
    found faster where there is none."""

    __slots__ = ("_read", "_ways", "pattern")

    def __init__(self, pattern: re.Pattern[str]) -> None:
        self.pattern = pattern
        # Read at the first search, not at import: parsing the judging's patterns again takes ~80 ms, which a process
        # that never judges a line (``agent memories stats``) need not pay at its start.
        self._read = False
        self._ways: tuple[tuple[tuple[str, ...], ...], ...] | None = None

    def _tests(self) -> tuple[tuple[tuple[str, ...], ...], ...] | None:
        """The pattern's requirements, as ``possible`` tests them, read once."""
        if self._read:
            return self._ways
        ways = _ways(_parser.parse(self.pattern.pattern, self.pattern.flags))
        if ways is not None:  # the alternatives that need one string of one set are met by one string of them all
            single = [clauses[0] for clauses in ways if len(clauses) == 1]
            ways = [*([[_minimal(frozenset().union(*single))]] if single else []),
                    *(clauses for clauses in ways if len(clauses) > 1)]
        # Of an alternative, the requirement of fewest strings first (a test that fails there is the cheapest: "you"
        # before forty verbs of replying), and of each its shortest strings first.
        self._ways = None if ways is None else tuple(
            tuple(tuple(sorted(needs, key=len)) for needs in sorted(clauses, key=len)) for clauses in ways)
        self._read = True
        return self._ways

    def possible(self, text: str) -> bool:
        """False only when no match of the pattern can be in ``text``: an ASCII text that holds, for no alternative
        of it, one string of each of that alternative's requirements."""
        ways = self._tests()
        if ways is None or not text.isascii():
            return True
        lowered = text.lower()
        for clauses in ways:
            for needs in clauses:
                for word in needs:
                    if word in lowered:
                        break
                else:
                    break  # this requirement is not met: the alternative cannot match
            else:
                return True  # every requirement of this alternative is met
        return False

    def search(self, text: str) -> re.Match[str] | None:
        return self.pattern.search(text) if self.possible(text) else None

    def finditer(self, text: str) -> Iterator[re.Match[str]]:
        return self.pattern.finditer(text) if self.possible(text) else iter(())
