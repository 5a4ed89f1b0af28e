"""The value of an attribute read from a sentence, once its meaning is known (``agent.memory.attributes``).

Deciding *what* a sentence is about is the hard part and the embedding model does it; given that "Porto is home
these days" is about the home, the home is the place named in it, wherever it stands. So each attribute has a rule
for its value: a place, an organisation, a role, a name, a number, a language, a way to commute. A safety attribute
(an allergy, a condition, a medication...) whose value no rule reads keeps the user's words as its value: "ibuprofen
makes my stomach bleed" must reach every request as said, not be lost for want of a pattern.

A sentence that retires one value of a set ("Biscuit died in spring", "we gave the hamster away", "I stopped
learning Russian") names it in its retiring clause; that value is retracted and the rest of the sentence may add
another ("..., we adopted a terrier called Moss"). Pure and fast: regular expressions over one sentence.
"""

from __future__ import annotations

import re

from agent.domain import AS_SAID, StatedFact
from agent.memory.attributes import CHANGING
from agent.memory.things import ADDITIVE

_CAPS = re.compile(r"(?<![\w'’])[A-Z][\w'’.-]*(?:[ -](?:[A-Z][\w'’.-]*|(?:am|an|de|del|da|do|la|le|upon|on)"
                   r"(?= [A-Z])))*")
# Capitalised words that are not a value: a sentence's first word, the days and months, the pronoun.
_NOT_NAMES = frozenset(
    """i i'm i've i'd i'll it it's its my we we're we've our the a an just now so also home here these this that
    these days still since yes no oh well ok okay btw hi hey new our me you they he she his her their there then
    monday tuesday wednesday thursday friday saturday sunday january february march april may june july august
    september october november december spring summer autumn fall winter christmas easter mum mom dad
    correction sorry actually update lately honestly fyi tbh sadly finally""".split()
)
_END = (r"(?=\s*(?:[.,!?;:()]|$|\s+(?:and|but|since|for|because|so|now|these days|though|in|with|last|this|next|"
        r"from|after|before|which|who|where|when|until|again|at|on|as of|nowadays|lately)\b))")
_ROLE = re.compile(r"(?i:\b(?:as|i'm|i am|im|been|became|become|becoming|now|promoted to|new job:?|new role:?|"
                   r"am)\s+(?:now\s+|a\s+|an\s+|the\s+)*)(?P<v>(?!(?i:at|in|with|for|from|on|going|thinking|"
                   r"not|so|very|really)\b)[\w'’/-]+(?:\s+[\w'’/-]+){0,5}?)" + _END)
# "for two years", "for like 6 years", "for a while": how long, not for whom.
_DURATION = (r"(?!(?i:(?:like|about|almost|nearly|over|around|the last|the past)\s+)?(?:an?|one|two|three|four|five|"
             r"six|seven|eight|nine|ten|a few|a couple of|several|many|\d+)\s+(?:years?|months?|weeks?|days?|"
             r"decades?|yrs?)\b|(?i:a while|ages|years|months|now|long)\b)")
_ORG = re.compile(r"(?i:\b(?:at|for|with|joined|by|to a job at)\s+)" + _DURATION
                  + r"(?P<v>(?:(?i:an?|the)\s+)?[\w'’&.-]+"
                  r"(?:\s+[\w'’&.-]+){0,3}?)" + _END)
_NUMBER = re.compile(r"(?<![\w:.])(?P<v>\d{1,3})(?:st|nd|rd|th)?(?![\w:%.]|\s*(?:minutes?|mins?|hours?|km|miles|"
                     r"kg|years ago|days|weeks|months|am|pm)\b)")
_AGE_BIRTHDAY = re.compile(r"(?i)\b(?P<v>\d{1,3})(?:st|nd|rd|th) (?:birthday|bday)\b")
_TENS = {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80,
         "ninety": 90}
_UNITS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9}
_WORD_AGE = re.compile(r"\b(?P<t>" + "|".join(_TENS) + r")(?:[- ](?P<u>" + "|".join(_UNITS) + r"))?\b", re.I)
_LANGUAGES = frozenset(
    """english spanish french german italian portuguese dutch polish russian ukrainian czech slovak hungarian
    romanian bulgarian greek turkish arabic hebrew persian farsi hindi urdu bengali punjabi tamil telugu marathi
    gujarati chinese mandarin cantonese japanese korean vietnamese thai indonesian malay tagalog filipino swahili
    amharic yoruba igbo zulu afrikaans swedish norwegian danish finnish icelandic estonian latvian lithuanian
    serbian croatian bosnian slovenian albanian macedonian georgian armenian welsh irish gaelic basque catalan
    galician latin esperanto""".split()
)
_COMMUTE = (
    (re.compile(r"\b(?:work(?:ing)? from home|remote(?:ly)?|no commute)\b", re.I), "works from home"),
    (re.compile(r"\b(?:cycl\w*|bik(?:e|es|ing)|e-bike|bicycle)\b", re.I), "by bike"),
    (re.compile(r"\b(?:scooter)\b", re.I), "by scooter"),
    (re.compile(r"\b(?:train|rail)\b", re.I), "by train"),
    (re.compile(r"\b(?:tube|metro|subway|underground|tram)\b", re.I), "by metro"),
    (re.compile(r"\b(?:bus|coach)\b", re.I), "by bus"),
    (re.compile(r"\b(?:ferry|boat)\b", re.I), "by ferry"),
    (re.compile(r"\b(?:carpool\w*|car ?share|lift)\b", re.I), "carpool"),
    (re.compile(r"\b(?:walk\w*|on foot)\b", re.I), "on foot"),
    (re.compile(r"\b(?:driv\w*|car)\b", re.I), "by car"),
)
# A diet plan is named by its word however it is typed ("low FODMAP", "low-fodmap"), and a plan named after a
# place, a programme or a schedule ("a mediterranean style plan", "whole30", "intermittent fasting") is one too.
_DIETS = re.compile(r"\b(?P<v>vegan|vegetarian|pescatarian|pescetarian|keto|paleo|flexitarian|halal|kosher|carnivore|"
                    r"plant[- ]based|gluten[- ]free|low[- ]fodmap|low[- ]carb|low[- ]salt|low[- ]sodium|dairy[- ]free|"
                    r"mediterranean|whole30|intermittent fasting)\b", re.I)
_PARTNER_STATUS = re.compile(r"\b(?P<v>single|divorced|widowed|separated|married|engaged|in a relationship|dating)\b",
                             re.I)
_ANIMALS = re.compile(r"\b(?P<v>dog|cat|puppy|kitten|parrot|rabbit|bunny|hamster|bird|horse|turtle|tortoise|snake|"
                      r"lizard|guinea pig|ferret|goldfish|fish|terrier|retriever|labrador|poodle|spaniel|collie|"
                      r"beagle|greyhound|whippet|corgi|pug|dachshund|husky|budgie|budgerigar|canary|cockatiel|gecko|"
                      r"chicken|hen|duck|goat|pony|axolotl|chinchilla|mouse|rat)s?\b", re.I)
_MODEL = re.compile(r"(?<![\w'’])(?:[A-Z][\w'’-]*|\d+[a-z]?)(?:\s+(?:[A-Z][\w'’-]*|\d+[a-z]?))*")
_SYSTEMS = re.compile(r"\b(?P<v>windows(?: \d+)?|linux|ubuntu|fedora|debian|arch|mint|macos|mac ?os|chromeos|"
                      r"android|ios)\b", re.I)
_DEVICES = re.compile(r"\b(?P<v>phone|laptop|computer|pc|desktop|tablet|ipad|watch|e-reader|kindle|console)\b",
                      re.I)
# Machines named by their make alone: "a macbook pro", "the thinkpad", "my iphone".
_KINDS = (("laptop", re.compile(r"\b(?:macbook|thinkpad|chromebook|notebook|ultrabook|surface laptop|xps)\b", re.I)),
          ("phone", re.compile(r"\b(?:iphone|pixel|galaxy|smartphone|mobile)\b", re.I)))
_VEHICLES = re.compile(r"\b(?P<v>motorbike|motorcycle|van|scooter|bike|bicycle|e-bike|campervan|camper van)\b",
                       re.I)
# The clause that retires a value of a set: the pet that died, the language given up.
_RETIRES = re.compile(r"\b(?:died|passed away|passed|rip|r\.i\.p|went peacefully|lost|said goodbye|"
                      r"gave (?:\w+ ){0,3}away|given away|rehomed|re-homed|put (?:\w+ )?down|ran away|sold|gone|"
                      r"no longer|not .* any ?more|stopped|gave up|"
                      r"dropped|forgot|replaced|instead of)\b", re.I)
# A pet's end, said without its name ("our old girl passed", "we said goodbye to him in march").
_PET_GONE = re.compile(r"\b(?:died|passed(?: away)?|rip|r\.i\.p|went peacefully|put (?:\w+ )?down|said goodbye|"
                       r"rehomed|re-homed|gave (?:\w+ ){0,3}away|ran away|lost (?:him|her|our))\b", re.I)
# A set's value said to replace the one held, which the sentence does not name.
_SWITCHED = re.compile(r"\b(?:switched|swapped|changed|moved on)\s+(?:over\s+)?(?:from\s+\w+\s+)?to\b|\binstead\b",
                       re.I)
_BARE_NAME = re.compile(r"[A-Z][\w'’-]+(?: [A-Z][\w'’-]+)?")
_CLAUSES = re.compile(r"\s*(?:[,;:\u2600-\u27bf\U0001f300-\U0001faff]|\band\b|\bbut\b|\bso\b|\bthen\b)\s*", re.I)
# "My dream car", "my next phone": a wish, not the thing held.
_WISH = re.compile(r"\b(?:dream|ideal|next|future|perfect|wish|want|would love|someday|one day)\b", re.I)
# Where a life began is the hometown, whatever the sentence's nearness to the home's examples.
_ORIGIN = re.compile(r"\b(?:grew up|born|raised|originally|hometown|home town)\b", re.I)
SAFETY_WORDS_MAX = 12
# A value kept as said of an open attribute: the whole sentence when it is short.
OPEN_WORDS_MAX = 24
# Words that say a habit, a thing or a choice of the user's was given up or swapped for another: "switched to
# verizon", "gave up the box, tennis now", "kicked the energy drinks", "traded the truck in". A description ("my
# laptop is really slow these days") or an addition ("I also started piano") says no change.
STATED_CHANGE = re.compile(
    r"\b(?:switch(?:ed|ing)(?: (?:my|our|the|\w+)){0,2} (?:to|over|from|sides)|chang(?:ed|ing) (?:my |our |the )?\w+ "
    r"(?:to|from)|swapped|gave up|giving up|quit|quitting|moved (?:to|over|on|her|him|them|"
    r"everything)|traded|trading in|upgraded|downgraded|cancell?ed|kicked|no more|instead|converted (?:to|me)|"
    r"replaced|any ?more|no longer|not any ?more|got rid of|sold|ditched|stopped|promoted|graduated|retired|"
    r"finished|broke up|divorced|handed in (?:my|the) notice|resigned|left my job)\b",
    re.IGNORECASE,
)


# A value of an open attribute said as the one that holds now ("tennis is my thing now", "joined Equinox", "back
# to tea these days"): it retires the values said before, where a plain statement ("I play tennis") adds one.
_NOW = re.compile(r"\b(?:(?<!right )now|these days|nowadays|since|joined|finally|caved|converted|back to|became|"
                  r"went|new|closed|left|changed|(?:my|our) (?:old|last|previous)|the (?:old|previous)|"
                  r"moved \w+(?: \w+){0,2} to)\b",
                  re.IGNORECASE)


def states_a_change(sentence: str) -> bool:
    """A statement that something of the user's changed, not one that adds ("also")."""
    return bool(STATED_CHANGE.search(sentence)) and not ADDITIVE.search(sentence)


def _replaces_held(attribute: str, sentence: str) -> bool:
    """A change said of ``attribute``: in words of change for any, or as the value that holds now for an open one
    (where "now" names a new habit; of a phone "a mess right now" is a state, not a new phone)."""
    if ADDITIVE.search(sentence):
        return False
    return bool(STATED_CHANGE.search(sentence)) or (attribute in CHANGING and bool(_NOW.search(sentence)))

_SAFETY_KEYS = frozenset({"allergy", "intolerance", "condition", "medication", "pregnancy", "disability", "avoids"})


def _names(text: str) -> list[str]:
    """Capitalised phrases that are not a sentence's first word of no meaning, a day or a month."""
    out = []
    for match in _CAPS.finditer(text):
        words = [w for w in match.group().split() if w.casefold().strip(".") not in _NOT_NAMES]
        if words and not (match.start() == 0 and len(words) == 1 and words[0] == match.group()
                          and _sentence_word(words[0])):
            out.append(" ".join(words).strip(".'’"))
    return [n for n in out if n]


def _sentence_word(word: str) -> bool:
    """A capitalised first word that is an ordinary word ("Started", "Moved"): a verb or an adverb, not a name."""
    return word.casefold().endswith(("ed", "ing", "ly"))


def _place(sentence: str) -> str | None:
    for after in re.finditer(r"\b(?:in|to|near|at)\s+(?P<v>(?:the\s+)?[A-Z][\w'’.-]*(?:[ -][A-Z][\w'’.-]*){0,3})",
                             sentence):
        if after.group("v").casefold() not in _NOT_NAMES:  # "we moved in May"
            return after.group("v")
    names = _names(sentence)
    if names:
        return names[0]
    lower = re.search(r"\b(?:in|to)\s+(?P<v>[a-z]{3,})\s*(?:now|these days|$|[.,!])", sentence)
    return lower.group("v").capitalize() if lower and lower.group("v") not in {"work", "town", "the"} else None


# Words after "at" that are no organisation: "back at work", "at home with the kids".
_NOT_ORGS = frozenset({"work", "home", "the moment", "school", "night", "nights", "weekends"})


def _cleaned(value: str) -> str | None:
    value = value.strip(" ,.;:!-'\"")
    return value if value and len(value) <= 60 and value.casefold() not in _NOT_ORGS else None


def as_said(sentence: str, most: int = SAFETY_WORDS_MAX) -> str | None:
    """The user's words, as said, for a value no rule reads: short enough for the profile's line."""
    words = sentence.strip(" .!").split()
    return " ".join(words) if 0 < len(words) <= most else None


def _age(sentence: str) -> str | None:
    for match in _NUMBER.finditer(sentence):
        if 0 < int(match.group("v")) <= 120:
            return match.group("v")
    word = _WORD_AGE.search(sentence)
    if word:
        return str(_TENS[word.group("t").casefold()] + _UNITS.get((word.group("u") or "").casefold(), 0))
    return None


def _languages(sentence: str) -> list[str]:
    return list(dict.fromkeys(w.capitalize() for w in re.findall(r"[A-Za-z]+", sentence)
                              if w.casefold() in _LANGUAGES))


_DOGS = frozenset("""terrier retriever labrador poodle spaniel collie beagle greyhound whippet corgi pug dachshund husky
    puppy""".split())
_CATS = frozenset({"kitten"})


def _species(word: str) -> str:
    word = word.casefold().removesuffix("s")
    return "dog" if word in _DOGS else "cat" if word in _CATS else "fish" if word.endswith("fish") else word


def pet_gone_unnamed(sentence: str) -> bool:
    """A pet's end said without naming it ("our old boy passed in august", "we said goodbye to our old girl"):
    which pet it was is the held values' to say (``agent.memory.truth``)."""
    return any(_PET_GONE.search(clause) and not _pet_names(clause) for clause in _CLAUSES.split(sentence))


def animal(value: str) -> str | None:
    """The kind of animal a pet's value names ("Biscuit (beagle)", "a dog", "two guinea pigs"): dog, cat, ..."""
    found = _ANIMALS.search(value)
    return _species(found.group("v")) if found else None


def retires(gone: str, held: str) -> bool:
    """Whether a pet retired by its kind alone ("we lost our dog": "a dog") is the pet ``held`` ("Biscuit (beagle)")."""
    return gone.startswith("a ") and animal(gone) is not None and animal(gone) == animal(held)


def kind_near(sentence: str, start: int) -> str | None:
    """The animal word just before ``start`` ("a beagle called Biscuit"), to keep with the pet's name."""
    found = list(_ANIMALS.finditer(sentence, max(0, start - 40), start))
    return found[-1].group("v").casefold() if found else None


def _pet_names(clause: str) -> list[str]:
    animal = _ANIMALS.search(clause)
    names = [n for n in _names(clause) if not _ANIMALS.fullmatch(n)]
    if names:
        return [f"{n} ({animal.group('v').casefold()})" if animal else n for n in names]
    return [f"a {animal.group('v').casefold()}"] if animal else []


def _model(sentence: str) -> str | None:
    """A make or a model: capitalised words and numbers ("Tesla Model 3", "Pixel 8"), the longest in the sentence."""
    found = [" ".join(w for w in m.group().split() if w.casefold() not in _NOT_NAMES)
             for m in _MODEL.finditer(sentence)]
    found = [f for f in found if f and not f.isdigit()]
    return max(found, key=len) if found else None


def _thing(attribute: str, sentence: str) -> list[StatedFact]:
    """A device's or a vehicle's values, keyed by the thing ("car", "laptop"): its make or model, and a system
    ("Fedora") under a key of its own ("laptop system"), so a new system does not replace the make of the machine."""
    if _WISH.search(sentence):
        return []
    thing = _thing_key(attribute, sentence)
    system = _SYSTEMS.search(sentence) if attribute == "device" else None
    value = _model(sentence)
    return ([StatedFact(thing, value)] if value else []) + (
        [StatedFact(f"{thing} system", system.group("v"))] if system else [])


def read(attribute: str, sentence: str, part: str = "") -> tuple[list[StatedFact], list[StatedFact]]:
    """The facts ``sentence`` states about ``attribute`` and the values it retires (a set's value that died, was
    given away or given up). Where no rule reads a value ("IT gave me a macbook pro m3", "the fish died, we got a
    kitten", "quit that place, joined Equinox"), the user's words are the value, as said, so the attribute still
    reaches every request; a change said in them retires what the attribute held before (``_said_value``). A
    single value is looked for in the ``part`` of the sentence that speaks to the attribute first. A mood said in
    passing ("im fine") is no safety value, however near its words are to one."""
    if attribute in _SAFETY_KEYS and _only_a_mood(part or sentence):
        return [], []
    facts, retired = _by_rule(attribute, part) if part else ([], [])
    if not facts or (attribute == "partner" and not any(f.value[:1].isupper() for f in facts)):
        # "so we finally moved, Ljubljana is home now": the place is in another clause; "my husband now is
        # Deshawn, we got married in june": a partner's name, wherever it is, says more than a status
        whole = _by_rule(attribute, sentence)
        facts, retired = whole if whole[0] or not facts else (facts, retired)
    if not facts and attribute in _WORK:  # a job and its employer are said together, and near in meaning
        facts, retired = _by_rule(_WORK[attribute], sentence)
    if facts and attribute in CHANGING and not retired and _replaces_held(attribute, sentence):
        retired = [StatedFact(attribute, "")]  # "cycling to the office now": the train before is gone
    if facts or retired or _WISH.search(sentence) or attribute not in _SAID:
        return facts, retired
    return _said_value(attribute, sentence, retired)


_WORK = {"job": "employer", "employer": "job"}
# Attributes whose value is kept as said where no rule reads one: those no rule reads at all, those of several
# values, and the things, whose makes people type in lower case ("a ford f150"). A home, a job, a name without a
# place, a role, a name read is none ("home sweet home").
# Attributes of several values at once, about several people or things: a change in one says nothing of another.
SEVERAL = frozenset({"pet", "language", "child", "family", "allergy", "intolerance", "avoids", "condition",
                      "medication", "disability"})


# A commute is not among them: its rules read every way to travel, and a sentence near a commute in which they
# read none is a complaint about it ("oh I just love being stuck in traffic").
_SAID = (CHANGING - {"commute"}) | SEVERAL | {"device", "vehicle"}


def _said_value(attribute: str, sentence: str, retired: list[StatedFact]) -> tuple[list[StatedFact],
                                                                                  list[StatedFact]]:
    """The sentence as the value of ``attribute``, when short enough for the profile's line; a change said in it
    retires the values held before, of an attribute with one value or an open one (a sport, a gym)."""
    key = _thing_key(attribute, sentence) if attribute in {"device", "vehicle"} else attribute
    holding = sentence if attribute in _SAFETY_KEYS else _holding(sentence)
    if not holding:
        # Only what went ("drumkit's gone", "uninstalled valorant"): no value holds now, and the ones held go.
        return [], retired or ([] if attribute in SEVERAL else [StatedFact(key, "")])
    said = as_said(holding, OPEN_WORDS_MAX)
    if said is None:
        return [], retired
    if not retired and attribute not in SEVERAL and (holding != sentence or _replaces_held(attribute, sentence)):
        # What a clause said went goes ("left that club, ..."), and what replaced it in other words; a machine's
        # system goes with the machine ("IT swapped my machine, now on a macbook pro").
        retired = [StatedFact(key, "")] + ([StatedFact(f"{key} system", "")] if attribute == "device" else [])
    return [StatedFact(key, said, origin=AS_SAID)], retired


# A clause that says what went, not what holds: "drumkit's gone", "uninstalled valorant", "cancelled the gym".
_WENT = re.compile(_RETIRES.pattern + r"|\b(?:uninstalled|deleted|cancell?ed|quit|ditched|scrapped|abandoned|"
                   r"done with|gone (?:right )?off|got rid of|closed|(?<!i'm )(?<!im )(?<!am )retired|"
                   r"left (?:the|that|my|our)|out of|moved out|broke up|split up|n't .* any ?more)\b",
                   re.IGNORECASE)


# A clause that opens in the past tense tells what was, not what holds: "rip biscuit, he was 14".
_WAS = re.compile(r"^\W*(?:he|she|it|they|we|i)\s+(?:was|were)\b", re.IGNORECASE)


def _holding(sentence: str) -> str:
    """``sentence`` without its clauses that say what went ("drumkit's gone, neighbours won, ukulele now" holds
    "neighbours won, ukulele now"; "gave up pilates, swimming twice a week now" holds the swimming), or "" when each
    of them does: the value kept as said is what holds now, and the profile's line then names no value gone."""
    clauses = [c for c in _CLAUSES.split(sentence) if c.strip()]
    kept = [c for c in clauses if not _WENT.search(c) and not _WAS.match(c)]
    return sentence if len(kept) == len(clauses) else ", ".join(kept)


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def said_now(text: str, most: int = OPEN_WORDS_MAX) -> str:
    """What ``text`` says holds now, in the user's words, at most ``most`` of them: its clauses that say what went
    left out, and with them a word left alone beside them ("priya and i broke up. anyway been seeing someone new,
    ananya" says "anyway been seeing someone new, ananya")."""
    kept: list[str] = []
    for sentence in _SENTENCE_END.split(text.strip()):
        clauses = [c.strip() for c in _CLAUSES.split(sentence) if c.strip()]
        went = [c for c in clauses if _WENT.search(c) or _WAS.match(c)]
        kept += [c for c in clauses if c not in went and (not went or len(c.split()) > 1)]
    return " ".join(", ".join(kept).strip(" .!").split()[:most])


# How one feels, said in passing ("im fine", "all good now", "just tired"): no condition, however near its words are to
# one, and never a safety value that would reach every request.
_MOODS = frozenset("""i im i'm am is it its it's all just so really pretty very ok okay fine good great alright well
    better tired busy happy sad bored now today honestly anyway yeah yes no""".split())


def _only_a_mood(sentence: str) -> bool:
    words = re.findall(r"[a-z']+", sentence.casefold())
    return bool(words) and all(w in _MOODS for w in words)


def _thing_key(attribute: str, sentence: str) -> str:
    """The kind of thing a device's or a vehicle's sentence is about ("laptop", "bike"), by its word or its make."""
    kind = (_DEVICES if attribute == "device" else _VEHICLES).search(sentence)
    if kind:
        return kind.group("v").casefold()
    if attribute == "device":
        return next((name for name, make in _KINDS if make.search(sentence)), "phone")
    return "car"


def attribute_of(key: str) -> str:
    """The attribute a profile key holds a value of: a device's and a vehicle's values are keyed by their kind
    ("laptop", "phone system", "car"), the others by the attribute itself."""
    kind = key.removesuffix(" system")
    if _DEVICES.fullmatch(kind):
        return "device"
    return "vehicle" if kind == "car" or _VEHICLES.fullmatch(kind) else key


# Kinds named by a make: an iPad is a tablet, a Kindle an e-reader.
_MAKES = {"ipad": "tablet", "kindle": "e-reader", "bicycle": "bike", "motorcycle": "motorbike"}


def kinds_named(sentence: str) -> set[str]:
    """The kinds of device and vehicle ``sentence`` names, by their word or their make ("phone", "laptop" of a
    "thinkpad", "car")."""
    named = {_MAKES.get(word, word) for pattern in (_DEVICES, _VEHICLES)
             for word in (m.group("v").casefold() for m in pattern.finditer(sentence))}
    named |= {name for name, make in _KINDS if make.search(sentence)}
    return named | ({"car"} if re.search(r"\bcars?\b", sentence, re.I) else set())


def _by_rule(attribute: str, sentence: str) -> tuple[list[StatedFact], list[StatedFact]]:
    """The value the attribute's rule reads: a place, an organisation, a role, a name, a number, a way to commute."""
    facts: list[StatedFact] = []
    retired: list[StatedFact] = []
    if attribute in {"pet", "language", "child"}:
        for clause in _CLAUSES.split(sentence):
            values = _pet_names(clause) if attribute == "pet" else (
                _languages(clause) if attribute == "language" else _names(clause))
            if attribute == "pet" and facts and facts[-1].value.startswith("a ") and _BARE_NAME.fullmatch(clause):
                # "we got a kitten, Nugget": the name said after the kind is the kitten's
                facts[-1] = StatedFact(attribute, f"{clause} ({facts[-1].value[2:]})")
                continue
            target = retired if _RETIRES.search(clause) else facts
            target += [StatedFact(attribute, v) for v in values]
        if any(not f.value.startswith("a ") for f in facts):  # "two budgies, Kiwi and Mango": the names
            facts = [f for f in facts if not f.value.startswith("a ")]
        if facts and not retired and _SWITCHED.search(sentence):  # "switched to Korean": the one before goes
            retired = [StatedFact(attribute, "")]
        return facts, retired
    value: str | None = None
    if attribute in {"home", "hometown"}:
        attribute = "hometown" if _ORIGIN.search(sentence) else attribute
        value = _place(sentence)
    elif attribute == "employer":
        org = _ORG.search(sentence)
        value = _cleaned(org.group("v")) if org else None
    elif attribute == "job":
        role = _ROLE.search(sentence)
        value = _cleaned(re.sub(r"^(?:an?|the)\s+", "", role.group("v"), flags=re.I)) if role else None
    elif attribute in {"device", "vehicle"}:
        things = _thing(attribute, sentence)
        # A change said in words ("switched to a Pixel 8") retires what the thing held, a value kept as said too.
        gone = {f.key.removesuffix(" system") for f in things} if STATED_CHANGE.search(sentence) else set()
        return things, [StatedFact(key, "") for key in sorted(gone)]
    elif attribute in {"name", "partner", "manager"}:
        # An acronym is no one's name: "she's a UX designer", "he's in IT".
        names = [n for n in _names(sentence) if not (n.isupper() and len(n) <= 4)]
        status = _PARTNER_STATUS.search(sentence) if attribute == "partner" else None
        value = names[-1] if names else (status.group("v").casefold() if status else None)
    elif attribute == "age":
        value = _age(sentence)
    elif attribute == "birthday" and (turned := _AGE_BIRTHDAY.search(sentence)):
        attribute, value = "age", turned.group("v")  # "had my 41st birthday on Friday": the age moved on
    elif attribute == "commute":
        value = next((v for pattern, v in _COMMUTE if pattern.search(sentence)), None)
    elif attribute == "diet":
        diet = _DIETS.search(sentence)
        if diet:
            value = diet.group("v").casefold().replace(" ", "-")
        else:
            attribute, value = "avoids", as_said(sentence)
    elif attribute in _SAFETY_KEYS:
        value = as_said(sentence)
    if value:
        said = value == as_said(sentence) and attribute in _SAFETY_KEYS
        facts.append(StatedFact(attribute, value, origin=AS_SAID if said else ""))
    return facts, retired
