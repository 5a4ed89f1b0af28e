"""Whether a line of chat discloses something about the user: the grammar behind the write gate.

A turn is cut into sentences and each sentence into clauses. A *statement* clause discloses when the user is its
subject ("I'm vegan", "we live in York", "my daughter is 6"), when chat has dropped that subject ("Allergic to
cats.", "Moving to Lisbon next month", "nurse here"), or chat has dropped the verb too: a description ("Huge Arsenal
supporter"), a choice ("tea over coffee any day"), a habit ("yoga twice a week"), a situation ("there are 5 of us",
"Lisbon is home now", "on a gap year"); when a family member is its subject ("Mom is in the hospital again"), or
when it says something safety-relevant (an allergy, an intolerance, a condition, a diet), whatever its length. It
does not when it is about the conversation ("that's wrong", "I think you misunderstood", "I'll go with option b"),
about a task at the keyboard ("I'm getting a segfault when I run it"), a passing state ("I'm back"), a hypothesis
("suppose I have 3 apples"), hearsay about the world ("I read somewhere that ...") or someone else who is not family
("a friend of mine just got a husky", "my colleague reckons ..."). A *question* or *request* (an order about how to
reply among them: "be more blunt with me") discloses only through what it says on the way: a clause
that is a disclosing statement ("..., I'm diabetic?"), the user's own people, pets, body or events ("how do I get
my daughter to sleep?"), or a first-person safety fact ("how do I tell my boss I'm pregnant"); a question that
asks the assistant to recall ("where do I live?", "when is my exam?") discloses nothing, and neither do the
words that frame a request ("near where I live", "order me my usual coffee").

Pure and deterministic: word lists and regular expressions, no model. The grammar is in three places: the words
it reads (``agent.memory.lexicon``), the named patterns built of them, each with the sentences it must and must not
match (``agent.memory.patterns``, every one checked against its examples by ``tests/unit/test_gate_patterns.py``), and
here the decisions that put them together. What is kept is the disclosing sentences in
the user's own words (a disclosing question whole, since the question is the only form its disclosure has), so a
statement is never rewritten and the questions and remarks around it are not stored.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from agent.memory import patterns, typos
from agent.memory.lexicon import (
    ABOUT_ME,
    ASKING_AUX,
    AUX,
    DEMONSTRATIVE,
    DOING,
    FAMILY,
    FAMILY_NAMES,
    FINITE,
    FIRST_PERSON,
    GREETINGS,
    NO_WHAT,
    OPENERS,
    PERSONAL,
    PETS,
    POSSESSIVE,
    REQUEST_VERBS,
    SMALL_TALK,
    SPEECH_VERBS,
    SUBJECTS,
    WH,
    normal,
)

# Sentences end at . ! ? or a line break; an abbreviation's dot does not end one ("Dr. Okafor", "e.g. tea").
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\s*\n+\s*")
_ABBREVIATION = re.compile(r"\b(?:dr|mr|mrs|ms|st|prof|jr|sr|vs|etc|e\.g|i\.e|approx|no|mt|ft|lb|lbs|oz)\.$", re.I)
# Clauses: at punctuation, at a dash, and before a conjunction that opens a new statement.
_CLAUSE_END = re.compile(
    r"\s*[,;:()]\s*|\s+[-–—]+\s+|\s+(?=(?:but|though|although|because|cause|cuz|bc|since|whereas|plus)\s)"
    r"|\s+(?=and (?:i|i'm|i've|my|we|we're|our)\s)"
)


def safety_relevant(text: str) -> bool:
    """Whether ``text`` names an allergy, intolerance, condition, disability or diet: kept whatever its length."""
    return bool(patterns.SAFETY(" ".join(_words(text))))


@dataclass(frozen=True)
class Reading:
    """What one turn discloses: the sentences that do (in the user's words), and why. ``read_as``, for a turn that
    discloses nothing: what every sentence of it was read as instead (a question, a hypothetical, sarcasm ...), or
    empty when one of them was read as nothing at all: a line the grammar has no shape for ("home base is Penrith
    these days") may still be a fact the meaning reads, a line it read as a question is not one."""

    sentences: tuple[str, ...]
    reason: str
    read_as: str = ""


def _words(text: str) -> list[str]:
    """The words of ``text`` as the patterns read them: ``lexicon.normal``, one slip of the keyboard in a word of
    the grammar read as the word (``agent.memory.typos``)."""
    return typos.corrected(normal(text))


def unframed(sentence: str) -> str:
    """``sentence`` without the words that only frame it: "honestly, it's Kate, not Katherine, thanks" is read by
    the patterns of a whole sentence as "it's Kate, not Katherine"."""
    inner = sentence.strip()
    while (frame := patterns.FRAME(inner)) and frame.end() - frame.start() < len(inner):
        inner = (inner[: frame.start()] + inner[frame.end() :]).strip()
    return inner


def plain(text: str) -> str:
    """``text`` with each sentence ``unframed``: what a reading of its meaning should not depend on."""
    return " ".join(unframed(sentence) for sentence in sentences(text))


# A topic said first and trailed off ("Peanuts... even the smell", "Hipon, alimango, any shellfish... my throat
# closes up"): a few words before an ellipsis are the subject of the sentence after it, not a sentence of their own.
_TOPIC = re.compile(r"^\W*\w+(?:[\s,]+\w+){0,3}\s*(?:\.{2,}|…)$")


def opens_topic(sentence: str) -> bool:
    return _TOPIC.match(sentence) is not None


def sentences(text: str) -> list[str]:
    parts = [p for p in _SENTENCE_END.split(text.strip()) if p]
    merged: list[str] = []
    for part in parts:
        if merged and (_ABBREVIATION.search(merged[-1]) or opens_topic(merged[-1])):
            merged[-1] = f"{merged[-1]} {part}"
        else:
            merged.append(part)
    return merged


def _strip_openers(words: list[str]) -> list[str]:
    while words and words[0] in OPENERS and len(words) > 1 and not (words[0] == "no" and words[1] in NO_WHAT):
        words = words[1:]
    return words


def _clauses(sentence: str) -> list[list[str]]:
    out = [_strip_openers(_words(c)) for c in _CLAUSE_END.split(sentence)]
    return [c for c in out if c]


def _is_question(words: list[str]) -> bool:
    """The shape of a question or a request at the start of a clause, with or without its question mark."""
    first, second = words[0], words[1] if len(words) > 1 else ""
    if patterns.DID_EXPERIENCE(" ".join(words)) or patterns.WORK_PLACE(" ".join(words)):
        return False
    if first in WH:
        # "when i was a kid we had a dog" is a statement: a wh-word followed by a subject opens a clause.
        return first.endswith("'s") or second not in {"i", "we", "my", "our"} or words[1:3] in (["do", "i"],
                                                                                                   ["can", "i"])
    if patterns.WANTS(" ".join(words)):
        return True
    if first == "am" and second != "i":  # "am obsessed with taylor swift": the subject dropped, not a question
        return False
    if first in ASKING_AUX:
        return True
    if first in {"don't", "never"} and second in REQUEST_VERBS:  # "don't be so formal", "never use emojis"
        return True
    if first in SPEECH_VERBS and words[1:3] == ["to", "me"]:  # "speak to me in french"
        return True
    if first in AUX:
        return second in SUBJECTS or second in FAMILY or second in PETS
    if first in {"any", "anyone", "anybody"} or words[:2] == ["i", "wonder"]:
        return True
    # An imperative: a verb of request, or any verb followed by "me" ("respond to me" aside, "get me a taxi").
    if first in ABOUT_ME:  # "call me Kate" names the user, "call me when you can" asks
        return second in {"me", "us"} and not patterns.NAME(" ".join(words))
    return first in REQUEST_VERBS or first in {"let's", "let"} or second in {"me", "us"}


def _personal_mention(words: list[str]) -> bool:
    """``my``/``our`` followed within three words by one of the user's people, pets, body or events."""
    for i, word in enumerate(words):
        if word in POSSESSIVE and any(w.removesuffix("'s") in PERSONAL for w in words[i + 1 : i + 5]):
            return True
    return bool(patterns.CHILD_BY_AGE(" ".join(words)))


_MENTIONS_FIRST_PERSON = "a first-person statement"
SAFETY_FACT = "a safety-relevant fact (allergy, intolerance, condition or diet)"


def _statement_discloses(words: list[str], about_someone: bool, technical: bool) -> str | None:
    """Why a statement clause discloses something about the user, or None. ``technical``: the sentence it is in
    has the words of a task at the keyboard, so a clause without its subject is about that task."""
    text = " ".join(words)
    if all(w in SMALL_TALK for w in words) or patterns.CHANT(text):  # "..., cool cool cool" is one clause of it
        return None
    if patterns.NAME(text):
        return "a name or form of address"
    reported = patterns.REPORTING(text)
    if reported:
        rest = _strip_openers(words[len(reported.group(0).split()) :])
        return _statement_discloses(rest, about_someone, technical) if rest else None
    hearsay = patterns.HEARSAY(text)
    if hearsay:
        rest = words[len(hearsay.group(0).split()) :]
        return _statement_discloses(rest, about_someone, technical) if {"i", "me", "my"} & set(rest) else None
    other = patterns.SOMEONE_ELSE(text)
    if other and (other.group("says") or other.group("distant")):
        rest = words[len(other.group(0).split()) :]
        if other.group("says"):  # what the doctor says of a safety matter is the user's ("... with warfarin")
            why = _statement_discloses(rest, about_someone or bool(other.group("family")), technical) if rest else None
            return why or (SAFETY_FACT if patterns.SAFETY(text) else None)
        if not FIRST_PERSON.intersection(rest):
            return None
    if technical and patterns.TASK_FRAME(text) and not _personal_mention(words):
        return None
    if patterns.REMARK(text) or patterns.TRANSIENT(text) or patterns.HYPOTHETICAL(text):
        return None
    if patterns.SITUATION(text):
        return "a statement of the user's home, household or situation"
    if words[0] in DEMONSTRATIVE and not patterns.STRONG_FIRST_PERSON(text) and not patterns.SPEAKER_VERB(text):
        return None
    if patterns.SAFETY(text):
        return SAFETY_FACT
    if patterns.TECH(text) and not patterns.IDENTITY(text) and not _personal_mention(words):
        return None
    if any(w in FIRST_PERSON for w in words):
        return _MENTIONS_FIRST_PERSON
    if technical and not patterns.IDENTITY(text) and not patterns.SELF_DESCRIPTION(text):
        return None
    if patterns.ELLIPTIC(text):
        return "a first-person statement without its subject"
    if patterns.SELF_DESCRIPTION(text) and not FINITE.intersection(words):
        return "a self-description without its subject"
    if patterns.CHOICE(text) and not FINITE.intersection(words):
        return "a preference said as a choice"
    if patterns.HABIT(text) and not FINITE.intersection(words):
        return "a habit said without its subject"
    if patterns.DID_EXPERIENCE(text):
        return "a first-person statement without its subject"
    if words[0].removesuffix("'s") in FAMILY_NAMES or patterns.OWN_BY_DETERMINER(text):
        return "a statement about the user's family or pets"
    if patterns.OWN_EVENT(text) or patterns.OWN_DATED(text):
        return "an event of the user's"
    if patterns.OWN_WITHOUT_MY(text):
        return "a statement about the user's family, pets or body"
    if about_someone and words[0] in {"he", "she", "they", "he's", "she's", "they're", "his", "her", "their"}:
        return "a statement about someone of the user's named just before"
    if words[-1] == "here" and len(words) <= 5 and words[0] not in AUX:
        return "a self-description"
    if patterns.UPDATE(text):
        return "an update of something said before"
    return None


def _question_discloses(clause: list[str]) -> str | None:
    """Why a clause shaped as a question or a request discloses something about the user on the way, or None."""
    text = " ".join(clause)
    if patterns.RECALL(text):
        return None
    if patterns.NAME(text):
        return "a name or form of address"
    if (_personal_mention(clause) or patterns.LIKE_ME(text)) and not patterns.TECH(text):
        return "a question that mentions the user's people, pets, health or plans"
    if patterns.SAFETY(text) and patterns.SAFETY_OWNER(text):
        return "a question that discloses a safety-relevant fact"
    return None


def _says_something(clause: list[str]) -> bool:
    """More than a greeting or an exclamation ("Hi Bo!", "That's so cool!"): two words that are not small talk."""
    return clause[0] not in GREETINGS and sum(w not in SMALL_TALK for w in clause) >= 2


def _sentence_discloses(sentence: str, about_someone: bool, transcript: bool) -> str | None:
    """Why one sentence discloses something about the user, or None: through one of its clauses, read as a
    statement or, in a question or request, as what the question says on the way. In a ``transcript`` (a record of
    people talking to each other) every statement clause that is not small talk counts: what one speaker says of
    the other is a fact about a person there, not a remark about an assistant's reply."""
    said = unframed(typos.corrected_text(sentence))
    material = patterns.MATERIAL(said)
    # "proofread: I has been ...": what is to be edited says nothing of the user, unless it is a safety fact, which
    # is not lost for the frame it came in ("fix the spelling: I am alergic to nuts")
    if material and not safety_relevant(said[material.end() :]):
        sentence = said[: material.end()]
    sentence = patterns.QUOTED.regex.sub(" a quote ", sentence)
    read = " ".join(_words(sentence))
    sarcastic = patterns.SARCASM(sentence) or patterns.SARCASM(said)  # as typed (its capitals) and as meant
    meant = " ".join(_words(said))  # without its frame: "honestly, testing testing" is still a test
    if (sarcastic or patterns.FICTION(read) or patterns.FORTUNE(read) or patterns.DAYDREAM(meant)
            or patterns.FOR_SOMEONE_ELSE(meant)) and not safety_relevant(read):
        return None
    clauses = _clauses(sentence)
    plain = " ".join(_words(sentence))
    if not clauses or (patterns.CODE(sentence) and not patterns.IDENTITY(plain)):
        return None
    # "honestly, imagine im ceo for one day": the hypothetical opens the sentence without its frame too.
    opening = [" ".join(c[0]) for c in (clauses, _clauses(said)) if c]
    if any(patterns.HYPOTHETICAL(first) and not patterns.ASIDE(first) for first in opening):
        return None
    bare = unframed(typos.corrected_text(sentence))
    if patterns.CORRECTION(" ".join(_words(bare))):
        return "a correction of something said before"
    if patterns.BARE_NAME(bare):
        return "a name or form of address"
    shapes = [_is_question(c) for c in clauses]
    # A sentence that ends with a question mark but opens no clause as a question asks with its last clause; what
    # comes before it may say something on the way ("not a fan of horror, something funny for tonight?"), but a
    # phrase that only names the user's things frames the question ("near where I live, good restaurants?").
    asked_whole = sentence.rstrip().endswith("?") and not any(shapes)
    technical = bool(patterns.TECH(plain))
    for clause, shape in zip(clauses, shapes, strict=True):
        if shape or (asked_whole and clause is clauses[-1]):
            why = _question_discloses(clause)
        else:
            why = _statement_discloses(clause, about_someone, technical)
            if asked_whole and why == _MENTIONS_FIRST_PERSON and clause[0] not in {"i", "we"}:
                why = _question_discloses(clause)
            if not why and transcript and not technical and not asked_whole and _says_something(clause):
                why = "a statement in a transcript of people talking to each other"
        if why:
            return why
    return None


def _asks(clause: list[str]) -> bool:
    """A question or a request for certain: "play roller derby wednesday nights" has the shape of an order and is
    the user's habit said without its subject, while "play me something" asks."""
    return _is_question(clause) and not (clause[0] in DOING and not {"me", "us", "you", "your", "please"} & set(clause))


def _read_as(sentence: str) -> str | None:
    """What a sentence that discloses nothing was read as instead, by the shapes that say it is not about the user
    whatever the meaning of its words: a question or request, a hypothetical, sarcasm, fiction, a fortune, a quote,
    a text to work on, hearsay, a task at the keyboard, a remark about the conversation, someone else's news; None
    when it has none of them."""
    said = unframed(typos.corrected_text(sentence))
    read = " ".join(_words(said))
    if patterns.MATERIAL(said):
        return "a text to work on"
    if patterns.SARCASM(sentence) or patterns.SARCASM(said):
        return "sarcasm"
    if patterns.FICTION(read) or patterns.FORTUNE(read) or patterns.DAYDREAM(read):
        return "fiction, a fortune or a daydream"
    if patterns.FOR_SOMEONE_ELSE(read):
        return "a question for someone else"
    if patterns.QUOTED(sentence):
        return "a quote"
    typed = normal(sentence)  # as typed: "Jason" is no "json"
    if patterns.CODE(sentence) or (patterns.TECH(" ".join(typed)) and not any(
            w.removesuffix("'s") in FAMILY | PETS or w in FIRST_PERSON for w in typed)):
        return "a task at the keyboard"  # not "hubby's got an old Silverado, rust bucket": his, not a language
    clauses = _clauses(said)  # "honestly, suppose we got a horse" opens with its hypothetical
    if not clauses:
        return "small talk"
    first = " ".join(clauses[0])
    if patterns.HYPOTHETICAL(first) and not patterns.ASIDE(first):
        return "a hypothetical"
    if patterns.HEARSAY(read) or patterns.WORLD_CLAIM(read):
        return "a claim about the world"
    if patterns.SOMEONE_ELSE(first):
        return "someone else's news"
    # Every clause asks, orders, remarks on the conversation or is small talk ("shorter pls", "wait what car do i
    # drive lol", "i tried restarting it, no luck"); a statement beside a question ("home base is Penrith now,
    # what's good around here?") leaves the sentence read as nothing.
    asked = sentence.rstrip().endswith("?")
    pleads = "please" in _words(sentence) and len(clauses) == 1  # "shorter pls": its "pls" is a frame, and asks
    if all(pleads or _asks(c) or "please" in c or all(w in SMALL_TALK for w in c) or (asked and c is clauses[-1])
           or patterns.REMARK(" ".join(c)) or patterns.TRANSIENT(" ".join(c)) for c in clauses):
        return "a question, request or remark"
    if all(patterns.CHANT(" ".join(c)) or all(w in SMALL_TALK for w in c) for c in clauses):
        return "a chant or a song"
    return None


def _has_subject(sentence: str) -> bool:
    """Whether a sentence names who it is about: the user, one of their people or pets, or a verb of its own (a
    statement whose subject chat dropped, "Moved to Lisbon"). "Shellfish" alone has none."""
    words = _words(sentence)
    return (any(w in FIRST_PERSON or w.removesuffix("'s") in FAMILY | PETS for w in words)
            or bool(patterns.ELLIPTIC(" ".join(_strip_openers(words))) or patterns.PREDICATE(" ".join(words))))


def read(text: str, *, transcript: bool = False) -> Reading:
    """The sentences of ``text`` that disclose something about the user, and the reason of the first one.
    ``transcript``: ``text`` is a line of a record of people talking to each other (see ``_sentence_discloses``)."""
    kept: list[str] = []
    reasons: list[str] = []
    about_someone = False
    asked = ""
    told = False  # the sentence before disclosed
    for sentence in sentences(text):
        why = _sentence_discloses(sentence, about_someone, transcript)
        if why and asked and not _has_subject(sentence):
            # "what am I allergic to? shellfish": the answer's subject is in the question; alone it is a fragment.
            kept.append(asked)
        if why:
            kept.append(sentence)
            reasons.append(why)
        elif told and not _has_subject(sentence) and _read_as(sentence) is None:
            # "ok so we are hybrid now!! office only tue and thu, other days from home": a statement without a
            # subject of its own goes on with the one before, and is what it says.
            kept.append(sentence)
        told = bool(why) or (told and kept[-1:] == [sentence])
        asked = sentence if not why and sentence.rstrip().endswith("?") else ""
        about_someone = about_someone or any(_personal_mention(c) or c[0] in FAMILY for c in _clauses(sentence))
    if not kept:
        shapes = [_read_as(sentence) for sentence in sentences(text)]
        read_as = shapes[0] if shapes and all(shapes) else None
        shown = read_as or "a question, request, remark or small talk"
        return Reading((), f"discloses nothing about the user ({shown})", read_as or "")
    return Reading(tuple(kept), reasons[0])
