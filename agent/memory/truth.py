"""What a new memory does to the ones already kept: replace one (supersede), say one again (restate), or neither.

A wrong supersede loses a fact the user still holds, which is worse than a duplicate, so a memory is replaced
only when the user said so in a way that cannot be read otherwise:

- a profile key that holds one value got a different value ("I moved to Berlin" replaces "I live in Boston"; a
  second allergy replaces nothing, allergies are a set),
- a retraction names the value ("I'm not vegan anymore", "I'm no longer allergic to cats", "I quit my job"),
- an explicit correction ("actually, ...", "I meant ...", "not X but Y") whose nearest current memory is about the
  same thing: close in meaning and sharing a content word, and not a statement that adds ("also", "too"),
- a change said in words ("switched to verizon", "gave up the box, tennis now", "kicked the energy drinks")
  whose nearest current memory is close (``CHANGE_SIMILARITY``) and holds no profile value.
- a change said in any words of change ("rip rufus... we brought home a collie pup") whose nearest memory the
  meaning puts on the same attribute (``Topics``), where no rule read the value that changed.

"I like tea" never replaces "I like coffee", nor "I also play the piano" "I play the cello": no key, no correction.
A memory with a contradicted fact leaves the memory block (its words would say the old value), but its other
facts stay in the profile: "I live in Boston and I'm allergic to cats" followed by "I moved to Berlin" keeps the
cat allergy.

A restatement (the peanut allergy said again in other words) refreshes the memory it repeats instead of adding a
twin: the same profile facts and few new words, or an embedding similarity of at least ``RESTATE_SIMILARITY``
without a name or a number that differs (two allergies, two instruments, two sisters stay two). Pure: the service
hands in the neighbours and the profile memories it read.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from agent.domain import AS_SAID, MemoryRecord, StatedFact
from agent.memory import preferences, values
from agent.memory.attributes import CHANGING
from agent.memory.attributes import SAFETY as SAFETY_KEYS
from agent.memory.profile import (
    NO_LONGER,
    Statement,
    is_thing,
    label,
    normal,
    of_someone_else,
    one_at_a_time,
    past_clause,
    said_only,
    same_value,
)
from agent.memory.text import WORD, content_words
from agent.memory.things import ADDITIVE, PEOPLE, replaces

# Paraphrases of one fact score 0.83-0.92 with the local MiniLM; different facts in similar words 0.46-0.72
# (bench/RESULTS.md, section 4).
RESTATE_SIMILARITY = 0.80
# A correction replaces its nearest current memory only if they are at least this close.
CORRECTION_SIMILARITY = 0.50
# A stated change replaces its nearest current memory only if they are at least this close: on the dev sets the
# old and new lines of an update score 0.35-0.75, two facts that both hold (the pairs) below 0.35 or without a word
# of change (bench/memory_truth_dev.json, _d.json: 0 of 74 pairs have both).
CHANGE_SIMILARITY = 0.40
# A change said in words of an attribute the nearest memory holds a value of replaces it from this close: an update's
# old and new lines about a team, an employer or a provider score 0.26-0.6 ("forever a Benfica fan" and "ok i
# switched sides, Sporting is my club now" 0.31); the attribute, named by meaning, keeps it to the value that changed.
CHANGED_SIMILARITY = 0.25
# A change said of an attribute in words no rule reads a value from replaces the nearest memory the meaning puts on the
# same attribute from this close: an update's old and new lines score 0.18-0.75 on the dev sets.
ATTRIBUTE_SIMILARITY = 0.2
# How many content words a restatement of profile facts may add before it counts as a memory of its own.
RESTATE_NEW_WORDS = 2

_CORRECTION = re.compile(
    r"^\W*(?:actually|correction|to be clear|to correct (?:myself|that)|i was wrong|i misspoke|scratch that|"
    r"my bad|not quite)\b|^\W*(?:sorry|wait|oops|no|nope)\s*[,:!-]|\bi meant\b|\bnot anymore\b|\bno longer\b|"
    r"\bany ?more\b(?=\s*(?:[.,!?;]|$))|"
    r"\bturns out\b|\bi was mistaken\b|\bthat'?s (?:not right|wrong|outdated|old news)\b|\bchanged my mind\b|"
    r"\binstead of\b|\bnot [\w' -]{1,30}, but\b|\bnot [\w' -]{1,30} anymore\b",
    re.IGNORECASE,
)
# Words that add a value beside one held: "hubby's also got an old Silverado", "plus two hens". Narrower than
# ``things.ADDITIVE``: "too" only where it ends a clause ("the heat was too much" adds nothing), and "both",
# "another" not at all ("we moved both kids to St. Brigid's", "found another job" replace what was held).
_ADDS = re.compile(r"\b(?:also|as well|second|in addition|besides|plus)\b|\btoo\b(?=\s*(?:[.,!?;:)]|$))",
                   re.IGNORECASE)
# A change said in words of any shape: the value that holds now ("now", "these days", "since monday", "from now on"),
# a move, a start or an end ("relocated", "joined", "left", "cancelled", "rip", "broke up", "go by"). Broader than
# ``values.STATED_CHANGE``, which retires a value on its own: this replaces only a memory the meaning puts on the same
# attribute (``_changed_by_attribute``). On the dev sets 179 of the 201 updates' new lines say one, and 17 of the 134
# pairs' second lines (a fact added beside one that still holds: "and i'm taking piano lessons since september").
_CHANGE_SAID = re.compile(
    r"\b(?:(?<!right )now|these days|nowadays|lately|from now on|any ?more|no longer|new|newly|finally|moved|"
    r"relocat\w*|switch\w*|chang\w*|swapp\w*|started|starting|joined|left|leaving|quit\w*|dropped|"
    r"cancell?ed|closed|gone|passed|died|rip|sold|broke up|split|married|divorced|emigrated|became|become|turned|"
    r"done with|uninstalled|deleted|gave up|given up|abandoned|replaced|instead|ditched|got rid of|stopped|retired|"
    r"handed (?:in|back)|last day|moving on|went|go by|call me|since|from (?:this|today|tomorrow)|as of|"
    r"starting (?:this|today|tomorrow))\b",
    re.IGNORECASE,
)
# Words that retire one value of a set (a pet, a language, an allergy): with several held, a value said now is one
# more ("and Ana just turned 4" beside "my son Leo is 7"), and only these say one went.
_RETIRES_ONE = re.compile(
    r"\b(?:died|passed|gone|rip|sold|gave \w+ away|given away|rehomed|re-homed|dropped|abandoned|scrapped|"
    r"no longer|any ?more|instead|switch\w*|quit|stopped|replaced|broke up|split|moved out|left|done with|"
    r"gave up|given up|lost)\b",
    re.IGNORECASE,
)
# The value said as the one that holds now: of an attribute held several at once (a sport, a hobby), a start says one
# more ("i've started listening to a lot of classical music" beside "i really like jazz"), and "now" one instead.
_HOLDS_NOW = re.compile(r"\b(?:(?<!right )now|these days|nowadays|from now on|instead|from (?:this|today)|as of|"
                        r"starting (?:this|today))\b", re.IGNORECASE)
_QUESTION = re.compile(r"[^.!?\n]*\?")
# Keys stated together that change together.
COUPLED = frozenset({"job", "employer"})
# Values kept as said of the attributes a memory holds, in words this close and sharing a subject word, say it
# again: paraphrases of one fact score 0.55-0.92, two facts of one attribute ("swim mornings", "salsa on fridays")
# share no subject word (bench/memory_truth_c.json, _d.json).
SAID_RESTATE_SIMILARITY = 0.55
# Two values kept as said are one fact said twice only when nearer than that: "I really like jazz music" and "I've
# started listening to a lot of classical music" score 0.6.
SAID_AGAIN_SIMILARITY = 0.65
# A restatement says mostly the same words: this share of the shorter statement's content words is in the other.
RESTATE_CONTAINMENT = 0.5
# A dated transcript line, "(8 May 2023) Ada: ...": its stamp and speaker say nothing of what the line says.
_TRANSCRIPT_PREFIX = re.compile(r"^\([^()\n]{1,60}\)\s*(?:(?P<speaker>[^\s:()][^:\n]{0,40}):\s+)?")
_FIRST_PERSON = re.compile(r"\b(?:i|i'm|i've|i'd|i'll|me|my|mine|we|we're|our|us)\b", re.IGNORECASE)
# Words of a correction or a restatement that say nothing of its subject.
_FILLER = frozenset(
    """actually correction sorry wait oops nope clear correct wrong misspoke scratch meant mistaken anymore longer
    reminder remind mention mentioned told tell telling said saying again way btw fyi know just note really
    seriously serious severe definitely totally absolutely always quite pretty super very bit kind sort thing
    things stuff now days these right changed mind turns instead please here""".split()
)


@dataclass(frozen=True)
class Topics:
    """The attributes a new memory (``new``) and its nearest memories (``old``, by id) likely speak to, by meaning
    (``attributes.Attributes.likely``): what a change said in words is compared by when no rule read the value that
    changed ("landlord sold the building so i'm out, signed for a 2 room across town" after "the studio is tiny but
    it's mine": both about the home, neither with a value a rule reads)."""

    new: frozenset[str]
    old: Mapping[str, frozenset[str]]
    # The user's words the new memory was kept from, which say the change: the memory may keep only a part of them
    # ("rip rufus, he went in his sleep. we brought home a collie pup" keeps the pup).
    words: str


@dataclass(frozen=True)
class Outcome:
    """What to do with a new memory: the ids of the current memories it supersedes, the (memory id, fact) pairs of
    profile values it replaces, and the id of the memory it restates (then it is not stored itself)."""

    supersedes: tuple[str, ...] = ()
    replaces_facts: tuple[tuple[str, StatedFact], ...] = ()
    restates: str | None = None
    reason: str = ""


def body(text: str) -> str:
    """``text`` without the stamp and speaker of a transcript line."""
    return _TRANSCRIPT_PREFIX.sub("", text.strip(), count=1)


def speaker(text: str) -> str:
    """Who a transcript line is by ("Ada" in "(8 May 2023) Ada: ..."); empty for the user's own words."""
    match = _TRANSCRIPT_PREFIX.match(text.strip())
    return (match.group("speaker") or "") if match else ""


def same_speaker(a: MemoryRecord, text: str) -> bool:
    """A fact by one speaker of a transcript never replaces or repeats another speaker's."""
    return speaker(a.text) == speaker(text)


def stems(text: str) -> set[str]:
    """Content words cut to five letters, so "allergic" and "allergy", "peanut" and "peanuts" are one."""
    return {w[:5] for w in content_words(body(text)) if w not in _FILLER}


def containment(a: set[str], b: set[str]) -> float:
    """The share of the smaller set that is in the other."""
    return len(a & b) / min(len(a), len(b)) if a and b else 0.0


def _names(text: str) -> set[str]:
    """Capitalised words past the first of a sentence, and words with a digit in them (numbers, "B12", a code
    name): what a guard must see differ."""
    out = set()
    text = body(text)
    for match in WORD.finditer(text):
        word = match.group()
        start = text[: match.start()].rstrip()
        sentence_start = not start or start[-1] in ".!?:"
        capitalised = word[0].isupper() and not sentence_start and word not in {"I", "I'm", "I've", "I'd"}
        if capitalised or any(c.isdigit() for c in word):
            out.add(word.casefold())
    return out


def states_a_change(text: str) -> bool:
    """A statement that something of the user's changed, not one that adds ("also")."""
    said = body(text)
    return values.states_a_change(said)


def says_it_changed(text: str) -> bool:
    """Whether ``text`` says, in any words of change (``_CHANGE_SAID``), that something of the user's own is not
    what it was, outside its questions and not as an addition ("also", "too") or of someone else ("my sister moved
    to Madrid"): the memory the meaning puts on the same attribute is then asked for (``Topics``)."""
    said = _QUESTION.sub(" ", body(text))
    return (bool(_CHANGE_SAID.search(said)) and not _ADDS.search(said)
            and not of_someone_else(said.strip()))


def says_again(text: str, statement: Statement, old: MemoryRecord, similarity: float) -> bool:
    """Whether ``text``, stating values kept as said ("cats make me sneeze like crazy"), says again what ``old``
    holds of the same attributes ("im allergic to cats"): every value of a key ``old`` holds, a subject word in
    common, and no change, addition, correction, name or number of its own."""
    held: dict[str, list[StatedFact]] = {}
    for fact in live_facts(old):
        held.setdefault(fact.key, []).append(fact)
    # The safety attributes are one family here: "cats make me sneeze like crazy" read as a condition says again
    # "im allergic to cats", the allergy held (the meaning tells an allergy from a condition less well than it
    # tells either from the rest).
    safety = [fact for key, facts in held.items() if key in SAFETY_KEYS for fact in facts]
    return (bool(statement.facts) and all(said_only(f) or f.key in SAFETY_KEYS for f in statement.facts)
            and all(_names_again(text, safety if f.key in SAFETY_KEYS else held.get(f.key, []), similarity)
                    for f in statement.facts)
            and not statement.retracts and not ADDITIVE.search(text) and not is_correction(text)
            and bool(stems(text) & stems(old.text)) and not _names(text) - _names(old.text)
            and not _swapped(set(normal(text).split()), set(normal(old.text).split())))


def _swapped(new: set[str], old: set[str]) -> bool:
    """One frame with a word or two swapped ("I like coffee in the morning", "I like tea in the morning"): two
    values, where a paraphrase says one in other words."""
    return 0 < len(new - old) == len(old - new) <= 2 and len(new & old) >= 2


_PUNCTUATION = re.compile(r"[^\w\s'’-]")


def _names_again(text: str, held: Sequence[StatedFact], similarity: float) -> bool:
    """Whether ``text`` names again a value ``held`` of its attribute: a value a rule read, in its words ("cats"
    in "cats make me sneeze"; "my laptop is a lifesaver" names no ThinkPad), or, of values kept as said, as near in
    meaning as paraphrases of one fact are."""
    read = [f for f in held if not said_only(f) and f.origin != AS_SAID]
    if not read:
        return bool(held) and similarity >= SAID_AGAIN_SIMILARITY
    words = set(normal(_PUNCTUATION.sub(" ", text)).split())  # "cats," is the word "cats"
    return any(set(normal(_PUNCTUATION.sub(" ", f.value)).split()) <= words for f in read)


def _keys(statement: Statement) -> str:
    return " and ".join(dict.fromkeys(label(f.key) for f in statement.facts))


def is_correction(text: str) -> bool:
    """An explicit correction of something the user said: a cue ("actually", "sorry, I got that wrong", "I meant")
    in a statement about themselves, not one that adds ("also")."""
    said = body(text)
    return bool(_CORRECTION.search(said)) and bool(_FIRST_PERSON.search(said)) and not ADDITIVE.search(said)


def live_facts(record: MemoryRecord) -> list[StatedFact]:
    """The facts of ``record`` no later memory replaced."""
    return [f for f in record.facts if not f.superseded_by]


def _said_facts(record: MemoryRecord) -> list[StatedFact]:
    """The live values of ``record`` that are its own words (``profile.said_only``): they go with the memory when
    a later one replaces it, since they say what it says."""
    return [f for f in live_facts(record) if said_only(f)]


def _read_facts(record: MemoryRecord) -> list[StatedFact]:
    """The live values of ``record`` a rule read, which only the profile's own checks replace."""
    return [f for f in live_facts(record) if not said_only(f)]


def _contradicts(old: StatedFact, statement: Statement, adds: bool = False) -> bool:
    """Whether ``statement`` says ``old`` no longer holds: another value of a key with one (unless the sentence
    ``adds``: "hubby's also got an old Silverado" is a second car, not the Outback replaced), or a retraction."""
    for fact in statement.facts:
        if fact.key != old.key or adds:
            continue
        # A thing told more precisely ("a Golf", then "a red Golf") is the same thing.
        # A value kept as said replaces and is replaced only where a change is said ("traded the truck in"):
        # "my phone is old and slow" is no other phone than the Pixel 8.
        if (one_at_a_time(fact) and not said_only(old)
                and not same_value(fact.value, old.value) and (
                not is_thing(fact.key) or replaces(fact.value, old.value))):
            return True
        # A set: "allergic to cats" again ends an earlier "no longer cats".
        if old.value.startswith(NO_LONGER) and same_value(old.value.removeprefix(NO_LONGER), fact.value):
            return True
    return any(
        gone.key == old.key and (not gone.value or same_value(gone.value, old.value)
                                 or (gone.key == "pet" and values.retires(gone.value, old.value)))
        for gone in statement.retracts
    )


def _same_facts(new: Statement, old: MemoryRecord) -> bool:
    held = live_facts(old)
    return bool(new.facts) and not new.retracts and all(
        any(f.key == h.key and same_value(f.value, h.value) for h in held) for f in new.facts
    )


def _facts_conflict(new: Statement, old: MemoryRecord) -> bool:
    """Both state a value of the same key, and the values differ: two allergies, two homes (a value kept as said
    is no name to differ by)."""
    return any(
        f.key == h.key and not same_value(f.value, h.value) for f in new.facts for h in live_facts(old)
        if h.origin != AS_SAID
    )


def _profile_changes(statement: Statement, profiled: Sequence[MemoryRecord], text: str = "") -> Outcome:
    """The memories and values ``statement`` replaces among the memories stating profile facts: a value it
    contradicts goes, and a memory that goes takes its values kept as said along (they say what it says). A
    sentence that adds ("also", "plus") replaces nothing by differing, only by a retraction. A job the meaning
    named in words no rule reads (``Statement.holds``: "working again!! part time pharmacist") replaces the job held
    as a job a rule reads does, unless ``text`` names the held one again ("being a paramedic means...")."""
    adds = bool(_ADDS.search(body(text)))
    work = set(statement.holds) & COUPLED
    supersedes: list[str] = []
    replaced: list[tuple[str, StatedFact]] = []
    # A set's value retired without its name ("our old girl passed, there's a kitten now") is the one held; with
    # two held, which one went is not said, and both stay (the block shows them in time order).
    held = Counter(fact.key for old in profiled for fact in live_facts(old))
    statement = replace(statement, retracts=tuple(gone for gone in statement.retracts if gone.value
                                                  or gone.key not in values.SEVERAL or held[gone.key] <= 1))
    for old in profiled:
        gone = [fact for fact in live_facts(old) if _contradicts(fact, statement, adds)
                or (work and fact.key in COUPLED and not _names_again(text, [fact], 0.0))]
        # A new job takes the employer stated with the old one along (and the other way round).
        gone += [fact for fact in live_facts(old) if fact not in gone and fact.key in COUPLED
                 and any(g.key in COUPLED for g in gone)]
        if gone:
            replaced += [(old.id, fact) for fact in gone]
            if old.current:
                supersedes.append(old.id)
                replaced += [(old.id, fact) for fact in _said_facts(old) if fact not in gone]
    if supersedes or replaced:
        said = " (a job named by meaning, one at a time)" if work else ""
        return Outcome(tuple(supersedes), tuple(replaced), reason=f"a profile value changed{said}")
    return Outcome()


def _changed_by_meaning(statement: Statement, neighbours: Sequence[tuple[MemoryRecord, float]]) -> Outcome:
    """A change said in words of an attribute the meaning named with others ("ok i switched sides, Sporting is my
    club now": a sport, or a team; "handed in my notice and started at Bosch": an employer among them): the nearest
    memory (``CHANGED_SIMILARITY`` or closer) holding a value of one of them that the statement does not say again
    is what changed. Its values kept as said go with it."""
    keys = set(statement.changed)
    keys |= COUPLED if keys & COUPLED else set()
    for old, similarity in neighbours:
        if similarity < CHANGED_SIMILARITY:
            break
        gone = [fact for fact in live_facts(old) if fact.key in keys
                and not any(new.key == fact.key and same_value(new.value, fact.value) for new in statement.facts)]
        if gone:
            replaced = [*gone, *(fact for fact in _said_facts(old) if fact not in gone)]
            return Outcome((old.id,), tuple((old.id, fact) for fact in replaced),
                           reason=f"a change of {label(gone[0].key)} the user stated (similarity {similarity:.2f})")
    return Outcome()


def _of(fact: StatedFact, attributes: set[str]) -> bool:
    """Whether ``fact`` holds a value of one of ``attributes`` (a laptop's of the device)."""
    return values.attribute_of(fact.key) in attributes


def _other_things(text: str, old: MemoryRecord, attributes: set[str]) -> bool:
    """Whether two memories about a device or a vehicle are about different kinds of it: "switched my phone plan"
    changes nothing of "my laptop is really slow lately"."""
    if not attributes & {"device", "vehicle"}:
        return False
    said, held = values.kinds_named(body(text)), values.kinds_named(body(old.text))
    return bool(said and held and not said & held)


def _changed_by_attribute(statement: Statement, topics: Topics | None,
                          neighbours: Sequence[tuple[MemoryRecord, float]]) -> Outcome:
    """A change said in words (``says_it_changed``) of an attribute the meaning puts the new memory on, where no rule
    read the value that changed: the nearest memory (``ATTRIBUTE_SIMILARITY`` or closer) the meaning puts on the same
    attribute is what changed, and it leaves the block with its values of that attribute (and those it keeps as said),
    not its others. Of an attribute with several values (pets, languages, allergies), only words that retire one say
    that one went; of one held several at once by habit (a sport, a hobby), those or a value said to hold now. On
    the dev sets (``bench/memory_truth_*.json``) the old and new lines of 126 of the 201 updates share a likely
    attribute and a change said, the two lines of 3 of the 134 pairs (a description: "my laptop is really slow these
    days"), which the checks below keep apart: no pair lost a fact, and the updates linked rose from 0.77 / 0.63 /
    0.40 / 0.20 to 0.83 / 0.67 / 0.57 / 0.37 on sets C, D, I and J (bench/RESULTS.md, section 27)."""
    if topics is None or not topics.new or not says_it_changed(topics.words):
        return Outcome()
    said = body(topics.words)
    retires = bool(_RETIRES_ONE.search(said))
    now = retires or bool(_HOLDS_NOW.search(said))
    for old, similarity in neighbours:
        if similarity < ATTRIBUTE_SIMILARITY:
            break
        common = {a for a in topics.new & topics.old.get(old.id, frozenset())
                  if retires or (now and a not in values.SEVERAL) or a not in values.SEVERAL | CHANGING}
        keys = common | (COUPLED if common & COUPLED else set())
        # A value a rule read is replaced by another value read or a retraction, not by a description ("my laptop
        # is really slow these days" after "my laptop is a MacBook Air").
        if not common or (any(_of(f, keys) for f in _read_facts(old)) and not statement.retracts
                          and not any(_of(f, keys) and f.origin != AS_SAID for f in statement.facts)):
            continue
        if _other_things(topics.words, old, keys):
            continue
        gone = [fact for fact in live_facts(old) if _of(fact, keys)
                and not any(new.key == fact.key and same_value(new.value, fact.value) for new in statement.facts)]
        replaced = [*gone, *(fact for fact in _said_facts(old) if fact not in gone)]
        return Outcome((old.id,), tuple((old.id, fact) for fact in replaced),
                       reason=f"a change of {label(min(common))} the user stated, the attribute the meaning puts "
                              f"this memory on (similarity {similarity:.2f})")
    return Outcome()


# A clause that says a thing of the user's went, by the verb of its going: "left the choir", "gave up the Spanish
# owl", "we lost Mingming on Sunday", "no more Tita Lorie", "I don't walk by the lake anymore", "stopped the keto".
# "Left" only as a verb with its object ("left handed", "turn left at the church" say nothing went), and no
# "dropped" ("dropped the kids at school").
_GONE = re.compile(
    r"\bleft (?:the|my|our|that|this)\b|\bleft (?-i:[A-Z])|"
    r"\b(?:quit|quitting|stopped|gave up|given up|giving up|no more|no longer|sold|got rid of|ditched|cancell?ed|"
    r"done with|finished with|moved (?:out of|away from|from)|switched from|transferred from|turned in|"
    r"handed (?:in|back)|retired|broke up with|divorced|dropped out)\b|\blost (?!weight|track|count)(?=\w)|"
    r"(?:\bnot\b|n't\b)[^,.;!?]{0,40}?\bany ?more\b",
    re.IGNORECASE,
)
_GONE_CLAUSES = re.compile(r"\s*(?:[,;:.!?\u2600-\u27bf\U0001f300-\U0001faff]+|\bbut\b|\bso\b|\bthen\b)\s*",
                           re.IGNORECASE)
# Words a going clause shares with any memory, which name no thing of the user's: "I don't go out much anymore"
# says nothing of "I go to the gym on Mondays", nor "no more weekend work" of "I work at Tesco".
_GENERIC = frozenset(
    """time day days week weeks month months year years today tonight morning evening night thing things stuff
    lot lots way life people everything anything something every one ones new old last first now anymore more
    go goe going went gone do doe doing did done use using used have ha having had get getting got take taking
    took make making made work working worked much many well good bad since ago anyway finally really still
    already even yet back""".split()
)
# The words of a going itself.
_GONE_WORDS = frozenset(
    """left quit quitting stopped gave given giving longer sold rid ditched cancelled canceled finished moved
    switched transferred turned handed retired broke divorced dropped lost""".split()
)
# How near a memory must be to the one that says its thing went, beside the word they share: an update's old and new
# lines score 0.18-0.75 on the dev sets.
NAMED_GONE_SIMILARITY = 0.2


def _named(text: str) -> set[str]:
    """The content words of ``text``, whole and without a plural "s": a thing's name must match as a word ("Christus"
    is not "Christmas")."""
    return {w.removesuffix("s") for w in content_words(body(text)) if w not in _FILLER and len(w) > 2} - _GENERIC


def gone_named(text: str) -> set[str]:
    """The words of the clauses of ``text`` that say a thing of the user's went (``_GONE``): what it names of the
    thing, its verb aside. A question, someone else's news ("my sister left her job") or a going of the past
    ("when I was 18") names nothing."""
    said = _QUESTION.sub(" ", body(text))
    out: set[str] = set()
    for clause in _GONE_CLAUSES.split(said):
        going = _GONE.search(clause)
        if going is None or of_someone_else(clause.strip()) or past_clause(clause):
            continue
        out |= _named(clause) - _GONE_WORDS
    return out


def _gone_by_name(text: str, neighbours: Sequence[tuple[MemoryRecord, float]]) -> Outcome:
    """A thing the user says went, by its name ("Left the choir, ... I'm reading at the 11am mass now" after "I sing
    alto in the parish choir"; "I left Christus po, University Hospital ... I'm with them now" after "PRN shifts at
    Christus Santa Rosa"): the near memories that name it are what went, whatever attribute the meaning puts either
    on and whether or not a rule read a value. They leave the block with the values that name the thing and those
    they keep as said; their other values stay (a job and an allergy said together). Someone else's memory of the
    thing ("my sister sings in the choir") is not the user's."""
    gone = gone_named(text)
    if not gone:
        return Outcome()
    supersedes: list[str] = []
    replaced: list[tuple[str, StatedFact]] = []
    names: set[str] = set()
    for old, similarity in neighbours:
        if similarity < NAMED_GONE_SIMILARITY:
            break
        named = gone & _named(old.text)
        # Someone else's memory is the user's to lose only where the going names that person ("Markus and me are not
        # together anymore" after "my partner Markus is also engineer").
        someone = of_someone_else(body(old.text)) and not named & {n.removesuffix("s") for n in _names(old.text)}
        if not named or someone or gone_named(old.text) & named:
            continue
        supersedes.append(old.id)
        names |= named
        replaced += [(old.id, fact) for fact in live_facts(old)
                     if said_only(fact) or _named(fact.value) & named]
    if not supersedes:
        return Outcome()
    return Outcome(tuple(supersedes), tuple(replaced), reason=f"the user said it went ({', '.join(sorted(names))})")


# A new one of a thing the user has one of, by the thing's word: "new dentist - dr kaczmarek", "got new phone finaly,
# iphone 15", "changed gym, now calypso". "Another" adds one ("another dentist's opinion").
_NEW_ONE = re.compile(
    r"\b(?:new|different|changed|switched|swapped|replaced)\s+(?:my\s+|our\s+|the\s+)?(?P<thing>[a-z]+)\b",
    re.IGNORECASE,
)
# A new one wanted, planned or supposed is not one had: "need a new dentist", "thinking about a new phone".
_NOT_YET = re.compile(r"\b(?:wants?|wanna|need|needs|looking for|look for|thinking|considering|might|maybe|should|"
                      r"would|could|planning|plan to|going to|gonna|hope|wish|if|dream|next)\b", re.IGNORECASE)
# People the user has one of at a time; of the others ("my new colleague", "a new friend") a new one is one more.
_ONE_AT_A_TIME_PEOPLE = frozenset(
    """wife husband partner girlfriend boyfriend fiance fiancé fiancee fiancée spouse boss manager doctor gp therapist
    dentist landlord landlady coach tutor""".split()
)
# Words after "new" that name no thing of the user's.
_NOT_A_THING = frozenset("""year years york zealand one ones thing things stuff day week month start""".split())


def new_one_named(text: str) -> set[str]:
    """The things of ``text`` said to be new ones of the user's ("new dentist", "changed gym"), in clauses that are
    not questions, wishes or someone else's news; a person only of those one has one at a time, an animal never (a
    new puppy is one more pet)."""
    said = _QUESTION.sub(" ", body(text))
    out: set[str] = set()
    for clause in _GONE_CLAUSES.split(said):
        if _NOT_YET.search(clause) or of_someone_else(clause.strip()) or ADDITIVE.search(clause):
            continue
        for match in _NEW_ONE.finditer(clause):
            thing = match.group("thing").casefold()
            if (thing in _NOT_A_THING or not content_words(thing) or values.animal(thing)
                    or (thing in PEOPLE and thing not in _ONE_AT_A_TIME_PEOPLE)):
                continue
            out.add(thing)
    return out


def _holds_one(text: str, thing: str) -> bool:
    """Whether ``text`` speaks of the user's one ``thing`` ("my dentist is at dentim clinic", "our car")."""
    return re.search(rf"\b(?:my|our)\s+(?:\w+\s+)?{re.escape(thing)}\b", body(text), re.IGNORECASE) is not None


def _new_one(text: str, neighbours: Sequence[tuple[MemoryRecord, float]]) -> Outcome:
    """A new one of a thing the user has one of ("ok so new dentist - dr kaczmarek" after "my dentist is at dentim
    clinic"; "got new phone finaly, iphone 15" after "my phone is samsung a52"): the nearest memory that speaks of the
    user's one such thing is the one replaced, with its values of it and those it keeps as said."""
    for thing in sorted(new_one_named(text)):
        for old, similarity in neighbours:
            if similarity < NAMED_GONE_SIMILARITY:
                break
            if not _holds_one(old.text, thing) or new_one_named(old.text) & {thing}:
                continue
            replaced = [(old.id, fact) for fact in live_facts(old) if said_only(fact) or thing in fact.key]
            return Outcome((old.id,), tuple(replaced), reason=f"a new {thing} the user stated")
    return Outcome()


def still_held(facts: Sequence[StatedFact], said: str) -> tuple[StatedFact, ...]:
    """``facts`` without the values a rule read that ``said`` says went ("Markus and me are not together anymore"
    states no partner Markus)."""
    gone = gone_named(said)
    return tuple(f for f in facts if f.origin == AS_SAID or f.value.startswith(NO_LONGER) or not _named(f.value) & gone)


def taken_over(text: str, facts: Sequence[StatedFact], outcome: Outcome) -> tuple[StatedFact, ...]:
    """The values a new memory of ``text`` (stating ``facts``) takes over from the memories ``outcome`` replaces: of
    each attribute one of them held that no rule read in the new one, what the new one says holds now, as said
    ("priya and i broke up ... been seeing someone new for 2 months, ananya" replaces the partner Priya: the
    partner is then "been seeing someone new for 2 months, ananya"), so the attribute still reaches every request
    with what replaced its value. Not a safety value (what replaced an allergy is no allergy) nor a preference
    (those are the preferences' own), nor a value no longer held."""
    if outcome.restates is not None or not outcome.supersedes:
        return ()
    held = {values.attribute_of(f.key) for f in facts}
    # A job a rule read takes the employer's place too ("now I work as a lab technician"); one kept as said ("same kind
    # of coordinator job") says nothing of where.
    held |= COUPLED if any(f.key in COUPLED and f.origin != AS_SAID for f in facts) else set()
    keys = dict.fromkeys(
        fact.key for _, fact in outcome.replaces_facts
        if values.attribute_of(fact.key) not in held and fact.key not in SAFETY_KEYS
        and not preferences.is_preference(fact.key) and not fact.value.startswith(NO_LONGER))
    now = values.said_now(body(text))
    return tuple(StatedFact(key, now, origin=AS_SAID) for key in keys) if now else ()


def decide(
    text: str,
    statement: Statement,
    profiled: Sequence[MemoryRecord],
    neighbours: Sequence[tuple[MemoryRecord, float]],
    topics: Topics | None = None,
    said: str = "",
) -> Outcome:
    """The outcome for a new memory of ``text`` stating ``statement``, given the current memories that state profile
    facts (``profiled``, current or superseded: a superseded memory's other facts stay in the profile), its nearest
    current memories with their similarity (``neighbours``, best first) and the attributes the meaning puts them and
    it on (``topics``, when it says a change). ``said``: all the words the memory was kept from, which may say what
    went in a sentence the memory does not keep ("No more Tita Lorie po... the youth group started calling me
    Lola D")."""
    profiled = [old for old in profiled if same_speaker(old, text)]
    neighbours = [(old, similarity) for old, similarity in neighbours if same_speaker(old, text)]
    for changed in (_profile_changes(statement, profiled, text), _changed_by_meaning(statement, neighbours),
                    _changed_by_attribute(statement, topics, neighbours), _gone_by_name(said or text, neighbours),
                    _new_one(said or text, neighbours)):
        if changed.supersedes or changed.replaces_facts:
            return changed

    words = stems(text)
    for old in profiled:
        new_words = words - stems(old.text) - stems(old.source)
        if old.current and _same_facts(statement, old) and len(new_words) <= RESTATE_NEW_WORDS:
            return Outcome(restates=old.id, reason="the same profile facts said again")

    for old, similarity in neighbours:
        if similarity >= SAID_RESTATE_SIMILARITY and says_again(text, statement, old, similarity):
            return Outcome(restates=old.id, reason=f"the same {_keys(statement)} said again in other words "
                                                   f"(similarity {similarity:.2f})")

    if neighbours:
        old, similarity = neighbours[0]
        # A safety value kept as said is the sentence itself: its words differ in every paraphrase, so whether it
        # repeats a memory is the similarity's to say, as for any memory.
        statement = replace(statement, facts=tuple(f for f in statement.facts if f.origin != AS_SAID))
        # A restatement brings no fact the old memory lacks ("I moved to Berlin" is news after "I'm moving to
        # Berlin next month"), and no name or number of its own.
        new_facts = bool(statement.facts) and not _same_facts(statement, old)
        correction = is_correction(text)
        if (similarity >= RESTATE_SIMILARITY and not statement.retracts and not new_facts and not correction
                and not ADDITIVE.search(text) and containment(words, stems(old.text)) >= RESTATE_CONTAINMENT
                and not _facts_conflict(statement, old) and not _names(text) ^ _names(old.text)):
            return Outcome(restates=old.id, reason=f"said again (similarity {similarity:.2f})")
        taken = tuple((old.id, fact) for fact in _said_facts(old))
        if (correction and similarity >= CORRECTION_SIMILARITY and words & stems(old.text)
                and not _read_facts(old)):
            return Outcome((old.id,), taken, reason=f"an explicit correction (similarity {similarity:.2f})")
        # A change said in words ("switched to verizon") of what no profile key holds: the nearest memory, when
        # close, is what changed. A profile value is the profile's to replace (above), so a memory with one stays.
        # (A retirement of whatever an attribute held that found nothing to retire is no retraction to wait for.)
        if (similarity >= CHANGE_SIMILARITY and states_a_change(text) and not _read_facts(old)
                and not any(gone.value for gone in statement.retracts)):
            return Outcome((old.id,), taken, reason=f"a change the user stated (similarity {similarity:.2f})")
    return Outcome()


_PAST_QUESTION = re.compile(
    r"\b(?:before(?=\s*(?:[?.!,;]|$|that|this|then|now|i |the (?:move|wedding|new|last))|\s+\w+ (?:moved|switched|"
    r"started|changed|joined|got))|used to|previous(?:ly)?|former(?:ly)?|earlier|originally|back then|in the past|"
    r"prior|did i (?:use|live|work)|was i|history|what(?:'s| has| have)? changed|(?:has|have|did) (?:\w+ ){1,3}change|"
    r"my old|the old|old (?:job|place|home|house|flat|apartment|"
    r"address|city|name|number|car|phone|boss|school|work|team))\b",
    re.IGNORECASE,
)
_ABOUT_ME = re.compile(
    r"\b(?:what (?:do|did) you (?:know|remember|recall)(?: about me)?|what have i told you|tell me about (?:me|myself)"
    r"|who am i|what do you have on me|everything you know)\b",
    re.IGNORECASE,
)


def asks_about_past(probe: str) -> bool:
    """"Where did I live before?": replaced memories may answer it."""
    return bool(_PAST_QUESTION.search(probe))


def asks_about_me(probe: str) -> bool:
    """"What do you know about me?": the profile and the memories seen last, whatever their similarity."""
    return bool(_ABOUT_ME.search(probe))
