"""Things of the user's that hold one value at a time: "my phone is a Pixel 8", "I drive a Tesla", "my bank is Monzo".

The profile's own keys (home, job, diet...) are a closed list; the things a user owns or uses are an open set, so
they are read by the shape of the sentence, not by a list of things: "my <thing> is <value>" (or "my <thing>'s
<value>", "I drive a <value>" for the car, "I use a <Brand> <thing>", "I got a new <thing>, a <value>"), keyed by
the thing. A later value of the same thing replaces the earlier one (``agent.memory.truth``), so the sentence must
name a value, not describe the thing, and must be about the user's own one:

- a value is a name or a model ("a Pixel 8", "Monzo", "the Anytime Fitness", a capitalised word or a number), or a
  short noun after an article that is not a judgement ("a canyon", "a company van"; not "a mess", "a lifesaver",
  "a bit of a mess"); a description is not a value: "my phone is old", "my car is in the shop", "my laptop is
  really slow these days", "my phone plan is with Vodafone";
- the thing is the user's, not someone else's ("my brother's car"), not a person (a sister has many attributes and
  a user may have two), not a pet, not a wish ("my dream car", "my next car"), and not another one of the kind
  ("my other cat", "my work laptop" is a thing of its own, "I also drive a van" adds a vehicle);
- a value that only adds words to the one held ("a Golf", then "a red Golf") refines it and replaces nothing.
"""

from __future__ import annotations

import re
from collections.abc import Collection

from agent.domain import StatedFact

# A sentence that adds one more of a kind never replaces the one held.
ADDITIVE = re.compile(r"\b(?:also|too|as well|another|second|in addition|besides|plus|both|new hobby)\b",
                      re.IGNORECASE)
# Who has many attributes at once, or may be one of several: never a single-valued thing.
PEOPLE = frozenset(
    """wife husband partner girlfriend boyfriend fiance fiancé fiancee fiancée spouse son daughter kid kids child
    children baby boy girl sister brother sibling siblings mom mum mother dad father parent parents grandma grandpa
    grandmother grandfather granny gran nan nana aunt uncle cousin nephew niece friend friends bestie mate buddy pal
    colleague colleagues coworker co-worker boss manager doctor gp therapist dentist landlord landlady roommate
    flatmate neighbour neighbor teacher coach tutor family in-laws stepson stepdaughter stepmom stepmum stepdad
    team client clients student students ex crush date""".split()
)
# Animals are the profile's pets (a set); the rest are not things the user has one of, or not a value to keep.
_NOT_THINGS = frozenset(
    """dog cat puppy kitten parrot rabbit bunny hamster bird horse turtle tortoise snake lizard ferret pet pets
    name job role position title home birthday age pronouns diet allergy allergies condition office workplace
    life day week weekend morning evening night plan plans goal goals dream problem issue question point guess fear
    worry concern hope idea opinion view advice answer excuse reason fault bad pleasure turn mind head heart back
    hair eyes skin body health weight height mood luck schedule routine usual thing things stuff favourite favorite
    god gosh word words place area city town country hometown language accent password email address number""".split()
)
# "My dream car", "my next phone": a wish or a plan, not the thing held.
_NOT_HELD = frozenset({"dream", "ideal", "next", "future", "perfect", "favourite", "favorite", "biggest", "only",
                       "first", "last", "old", "previous", "former", "ex", "late", "other", "second"})
# Words that open a description, not a value: "is in the shop", "is with Vodafone", "is not a Tesla".
_DESCRIPTION_START = frozenset(
    """in on at with from for by under out off over up down into about like so too very really quite pretty super
    always never still not no getting being almost nearly completely totally just kind sort basically literally
    actually also probably definitely mostly fully half something anything everything nothing all what how""".split()
)
# Nouns that judge the thing rather than name it, and measures of degree: "a mess", "a bit slow".
_JUDGEMENTS = frozenset(
    """mess nightmare disaster joke pain wreck lifesaver life-saver beast dream brick champ trooper headache problem
    liability relic dinosaur antique piece junk bit lot little few tad way part reminder source sign kind sort type
    form means chance journey gift blessing challenge struggle mix work pleasure treat delight godsend saviour savior
    winner keeper gem star hit classic must favourite favorite lemon clunker money pit step start thing one""".split()
)
# What kind of thing it is, not which one: "my car is a hybrid" and "my car is a Toyota" both hold.
_KINDS = frozenset("""suv suvs ev mpv 4x4 hybrid electric automatic manual convertible hatchback sedan saloon estate
    coupe lease rental loaner hand-me-down second-hand used refurb refurbished prepaid contract""".split())
# An event has a date or a time, and there are many of them: "my appointment is Friday at 3pm" replaces nothing.
_WHEN = re.compile(r"^(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|january|february|march|april|may|"
                   r"june|july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|"
                   r"nov|dec|tomorrow|today|tonight|\d{4}-\d\d-\d\d)$|\d(?:am|pm)$|\d:\d\d", re.IGNORECASE)
# A value with a verb or a pronoun in it is a clause ("car is a Tesla" after "my brother's"), not a name.
_CLAUSE_WORDS = frozenset("""is are was were be been being has have had does did do isn't wasn't i i'm i've you we
    they it he she me my our your their his her""".split())
_END = (r"(?=\s*(?:[.,!?;:()]|$|\s+(?:and|but|now|these days|nowadays|since|for|because|so|at|in|on|with|by|to|"
        r"from|after|before|which|who|that|though|although|still|finally|again|anymore|today|lately|too|as well|"
        r"instead|which|whose|if|when|where|while|until)\b))")
_TOKEN = r"(?:[\w.&+'’-]|(?<=\d):(?=\d))+"  # "Pixel 8", "AT&T", "X-T4", "7:40"
_VALUE = r"(?P<v>(?:(?:a|an|the)\s+)?" + _TOKEN + r"(?:\s+" + _TOKEN + r"){0,3}?)" + _END
# The thing: one or two lower-case words after "my" ("phone", "work laptop", "e-reader"), a leading "new" or
# "current" aside (an update cue, not part of the thing).
_MY_THING = re.compile(
    r"\b[Mm]y\s+(?:(?:new|current|present|latest)\s+)?(?P<thing>[a-z][a-z-]*(?:\s+[a-z][a-z-]*)?)"
    r"(?:\s+is|'s|’s)\s+(?:(?i:now|currently|these days|nowadays)\s+)?" + _VALUE
)
_DRIVE = re.compile(r"(?i:\bi\s+(?:now\s+|currently\s+)?drive\s+(?=(?:a|an|the)\s))" + _VALUE)
_USE = re.compile(r"(?i:\bi\s+(?:now\s+|currently\s+)?use\s+(?:an?|the)\s+)"
                  r"(?P<v>(?:[\w.&+'’-]+\s+){1,3}?(?P<thing>[a-z][a-z-]*))" + _END)
_GOT_NEW = re.compile(r"(?i:\bi(?:'ve| have)?\s+(?:just\s+)?(?:got|bought)\s+(?:a|myself a)\s+new\s+)"
                      r"(?P<thing>[a-z][a-z-]*)\s*[,:–—-]\s*(?:(?i:it'?s|it is)\s+)?" + _VALUE)
_ARTICLE = re.compile(r"^(?:a|an|the)\s+", re.IGNORECASE)


def named(value: str) -> bool:
    """A capitalised word or a number in ``value``: a brand, a model, a proper name."""
    return any(w[:1].isupper() or any(c.isdigit() for c in w) for w in value.split())


def value_of(raw: str) -> str | None:
    """``raw`` as the value of a thing, or None when it describes the thing instead of naming it."""
    raw = raw.strip(" ,.;:!'\"")
    articled = _ARTICLE.match(raw) is not None
    value = _ARTICLE.sub("", raw)
    words = value.casefold().split()
    if not words or words[0] in _DESCRIPTION_START or _CLAUSE_WORDS & set(words) or any("'s" in w for w in words):
        return None
    if words[-1] in _JUDGEMENTS or words[0] in _JUDGEMENTS or words[-1] in _KINDS or words[0] in _KINDS:
        return None
    if any(_WHEN.search(w) for w in words):
        return None
    if named(value):
        return value
    # Lower case, as people type in chat: "a canyon", "a company van"; never a bare word ("old", "always black").
    return value if articled and len(words) <= 2 else None


def _thing(words: str, taken: Collection[str]) -> str | None:
    thing = " ".join(words.casefold().split())
    parts = thing.split()
    if (thing in taken or parts[0] in _NOT_HELD or parts[-1] in PEOPLE or parts[-1] in _NOT_THINGS
            or parts[0] in PEOPLE or parts[0] in _NOT_THINGS):
        return None
    return thing


def read(sentence: str, taken: Collection[str]) -> list[StatedFact]:
    """The things ``sentence`` gives a value, keyed by the thing; none in a sentence that adds ("I also drive a
    van"). ``taken`` holds the keys the profile reads with patterns of its own ("name", "job"...)."""
    if ADDITIVE.search(sentence):
        return []
    found: list[StatedFact] = []
    matches = [(m.group("thing"), m) for m in _MY_THING.finditer(sentence)]
    matches += [("car", m) for m in _DRIVE.finditer(sentence)]
    matches += [(m.group("thing"), m) for m in (*_USE.finditer(sentence), *_GOT_NEW.finditer(sentence))]
    for words, match in matches:
        thing = _thing(words, taken)
        value = value_of(match.group("v"))
        if thing is None or value is None:
            continue
        if match.re is _USE and (not named(value.rsplit(" ", 1)[0])
                                 or _DESCRIPTION_START & set(value.casefold().split())):
            continue  # "I use a standing desk" says nothing of which one; "a ThinkPad for everything" names no thing
        found.append(StatedFact(thing, value))
    return found


def refines(a: str, b: str) -> bool:
    """One value only adds words to the other ("Golf", "red Golf"): the same thing told more precisely."""
    x, y = set(_ARTICLE.sub("", a).casefold().split()), set(_ARTICLE.sub("", b).casefold().split())
    return bool(x and y) and (x <= y or y <= x)


def replaces(new: str, old: str) -> bool:
    """Whether ``new`` is another value of the thing than ``old``: not the same told more precisely, and both names
    ("a Pixel 8" after "an iPhone 12") or both plain words ("a canyon" after "a trek"): a name after a plain word
    may be the same thing named ("a company van", then "a Ford Transit")."""
    return not refines(new, old) and named(new) == named(old)
