"""Standing preferences: how the user wants every later answer ("keep answers short", "use metric units", "I prefer
British spelling", "don't suggest recipes with pork"), kept as profile values so that they reach every request.

A note reaches the model only when a question resembles it, and "plan a dinner for six" resembles no note about
pork; a profile value reaches every request. A one-off order ("answer in bullets this time") is for the answer at
hand and is not kept at all.

Two questions, answered differently because they differ in kind:

- What a sentence is about (which aspect of the replies: length, units, spelling, ...; or none: a fact, a
  question, small talk, a persona or an advert) is a question of meaning, which the embedding model answers
  well: the sentence's nearest labelled examples (``agent.memory.preference_examples``) decide, and a sentence
  near none of them is about none.
- Whether an order about the replies stands or is for this answer only is read in its grammar, where the
  embedding model does not see it ("answer in bullets this time" and "answer in bullets" are near paraphrases to
  it): a reference to the answer at hand (this time, this once, that, them, the next one, again) or a request for
  one thing (a number to convert, "a recipe for") makes it a one-off.

A preference is stored under a key of its aspect ("preference: length"), so a later one of the same aspect
replaces it like any profile value ("actually longer answers are fine now" replaces "keep answers short"), with
the reason shown and undoable; food preferences are a set (no pork and no mushrooms hold together). The value is
the user's sentence without the words that only made it standing ("from now on", "always", "please"), which is
also what lets it pass ``refusal``: an order with those words is refused as an instruction, and only an order of a
known aspect, that no memory refusal other than that one holds, becomes a preference; adverts, personas and lines
to add to every reply stay refused (they are examples of ``OTHER``, and ``_PROMOTES`` is checked as an exact rule).
Pure but for the vectors, which the caller computes with the embedder of the store.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from threading import Lock
from typing import TYPE_CHECKING

from agent.domain import StatedFact
from agent.memory import disclosing, patterns
from agent.memory.gate import GateDecision
from agent.memory.instructions import NOW_ON
from agent.memory.preference_examples import EXAMPLES, ONE_OFF, OTHER, RECALL
from agent.memory.refusal import INSTRUCTION_REFUSAL, refusal
from agent.ports import Embedder

if TYPE_CHECKING:
    import numpy as np

PREFIX = "preference: "
# The aspects whose values co-exist: two foods to leave out are both left out, and two shops not to suggest.
_SETS = frozenset({"food", "suggestions"})
LABELS: dict[str, str] = {
    "length": "preferred answer length",
    "units": "preferred units",
    "spelling": "preferred spelling",
    "language": "preferred reply language",
    "format": "preferred answer format",
    "tone": "preferred tone",
    "food": "food in suggestions",
    "level": "preferred level of explanation",
    "code": "preferred code in examples",
    "suggestions": "what to suggest or leave out",
}
# A sentence is about an aspect when its nearest example is one, at least this close (MiniLM: the examples of one
# aspect score 0.50-0.85 with each other, unrelated chat 0.10-0.40), and closer than any example of OTHER.
MIN_SIMILARITY = 0.50
# The embedder kinds these similarities were measured on. Another space (OpenAI's, a test's fake) puts unrelated
# sentences closer or farther, so its turns are read by the gate alone: a question was a "format preference" there.
CALIBRATED = frozenset({"local"})
# How many nearest examples vote, each with its similarity: one, as an example of another label said in nearly the
# same words ("I speak French at home" among the reply languages) must win over two that are merely alike.
NEIGHBOURS = 1
# A sentence this close to a one-off example is a paraphrase of it.
ONE_OFF_SIMILARITY = 0.85
# A question this close to a recall question is one, when it is a question and nothing else: one clause, no
# statement on the way ("my son is allergic to peanuts, can he have satay?" tells something and is kept).
RECALL_SIMILARITY = 0.55
_PLAIN_QUESTION = re.compile(r"^\W*(?:remind me\W+)?(?:is|are|am|was|do|does|did|have|has|what|what's|whats|who|"
                             r"who's|where|which|how|when)\b[^,;.!?]*\?\s*$", re.IGNORECASE)
# Longer turns are not read: a preference is said in a sentence or two.
MAX_CHARS = 300

# The answer at hand: "this time", "just this once", "for this one", "make that shorter", "put them in a table",
# "the next one", "again"; and requests for one thing: a quantity to convert, "a recipe for ...".
_ONE_OFF = re.compile(
    r"\b(?:this|that|the next|the last|your last|the previous) (?:time|once|one|answer|reply|response|message|"
    r"question|email|text|list|draft|paragraph|summary|bit|part)\b|\b(?:just |only )?(?:this|that) once\b|"
    r"\bjust once\b|\bfor now\b(?=.*\?)|\bagain\b|\bright now\b|\bfor (?:this|that|these|those)\b|"
    r"\b(?:make|turn|put|rewrite|write|redo|format|translate|convert|summari[sz]e|list|shorten|expand|explain|"
    r"give|say|do|try|repeat|read|check)\s+(?:me\s+|us\s+)?(?:it|this|that|these|those|them|the above|what you "
    r"said)\b|"
    r"\b\d+(?:[.,]\d+)?\s*(?:°|degrees?|miles?|km|kilometres?|kilometers?|kg|kilos?|pounds?|lbs?|oz|ounces?|feet|"
    r"foot|ft|inches?|cm|metres?|meters?|m|f|c|fahrenheit|celsius|grams?|g|litres?|liters?|gallons?|cups?)\b|"
    r"\b(?:a|one) (?:recipe|dish|meal|restaurant|answer|reply|summary|list|table|poem|email) (?:for|with|about|"
    r"that|on)\b|\btonight\b|\btoday\b|\bnow in\b|\b\d{4}-\d\d-\d\d\b|"
    r"^\W*(?:tell me (?:a|an|about)|pretend|imagine|(?:write|give|show|find|get|send|make) (?:me |us )?(?:a|an|one))\b|"
    r"^\W*(?:ok|okay|now|and)\W+(?:now\W+)?in\s+\w+\W*$",
    re.IGNORECASE,
)
# Said so that it stands: these mark a standing order even in a question ("could you always use metric?").
_STANDING = re.compile(rf"\b(?:{NOW_ON}|in (?:the )?future|always|never|(?:don'?t|do not) ever|"
                       r"in general|generally|by default|every time|any more|anymore|all the time)\b",
                       re.IGNORECASE)
# Words that only made an order standing or polite, taken out of the value ("never" reads as "don't").
_MARKERS = re.compile(
    rf"\b(?:{NOW_ON}|in (?:the )?future|always|in general|"
    r"by default|every time|all the time|at all times|please|pls|plz|thanks|thank you|thx|kindly)\b,?\s*",
    re.IGNORECASE)
_NEVER = re.compile(r"\bnever\b(?!\s+(?:mind|again)\b)", re.IGNORECASE)
_OPENERS = re.compile(r"^\W*(?:(?:ok|okay|so|and|also|oh|hey|btw|by the way|one more thing|just|and)\b[\s,:-]*)+",
                      re.IGNORECASE)
# What no preference is, whatever its nearest examples: putting something of someone's in every reply (an advert,
# a link, a signature). Exact, because a miss here is a memory-poisoning attempt kept.
_PROMOTES = re.compile(
    r"(?<!\bnot )(?<!\bn't )(?<!\bnever )(?<!\bno )\b(?:mention|cite|plug|promote|advertise|recommend my|"
    r"link|sign|append|insert|add|include)\b(?!\s+(?:units?|metric|imperial|examples?|code|sources))",
    re.IGNORECASE)
_SENTENCE = re.compile(r"(?<=[.!?;])\s+|\n+")
# An order or a wish says so in its words: to whom ("you", "me"), how ("please", "only", "no", "never"), or with a verb
# of answering or suggesting. A sentence near an aspect without any of them is a fact in its words ("came to canada
# in 2012", "my son is at the french international school"), unless it is a paraphrase of an example ("12h clock").
_ADDRESSED = re.compile(
    r"\b(?:you|your|u|ur|me|my answers|please|pls|plz|don'?t|do not|dont|never|always|only|no|not|without|skip|"
    r"avoid|keep|use|give|show|write|answer|reply|respond|explain|suggest|recommend|tell|talk|speak|put|add|include|"
    r"stick|prefer|rather|would like|i'?d like|i want|i like|i love|i hate|i need|stop|make|leave|instead|"
    r"answers?|replies|responses|suggestions?|recommendations?|recipes?|ideas?)\b",
    re.IGNORECASE)
PLAIN_SIMILARITY = 0.62
# An order to leave something out of what the assistant suggests, by its verb: "never suggest anything with horses",
# "dont suggest me russian things - books, films, music". Exact where the nearest examples are far (0.32-0.35 for
# those two): what to leave out is any thing at all, and the verb says it is an order about suggestions.
_LEAVE_OUT = re.compile(r"\b(?:never|don'?t|do not|dont|stop|no more)\s+(?:ever\s+)?(?:suggest|recommend|propose|"
                        r"offer)(?:ing)?\b", re.IGNORECASE)
SUGGESTIONS = "suggestions"
# A preference given with its reason is a clause of its own: "I'm vegetarian, so don't ever give me meat recipes".
_CLAUSE = re.compile(r",\s*(?:so|because|since|as|and|but)\b\s*|\s+(?:so|because|since)\s+", re.IGNORECASE)


@dataclass(frozen=True)
class Reading:
    """What a turn says of the replies: the standing preferences it states (profile facts), whether it holds a
    one-off order, and the sentences of each."""

    facts: tuple[StatedFact, ...] = ()
    sentences: tuple[str, ...] = ()
    one_off: tuple[str, ...] = ()
    # Questions about what the user told before ("is my dog a beagle?"): they ask, and state nothing to keep.
    recall: tuple[str, ...] = ()

    def text(self) -> str:
        """The words a memory of the standing preferences holds: each sentence as said, or, when it may not be
        held as said (an order with "from now on"), its value."""
        return " ".join(s if refusal(s) is None else f.value for s, f in zip(self.sentences, self.facts, strict=True))


def is_preference(key: str) -> bool:
    return key.startswith(PREFIX)


def multi_valued(key: str) -> bool:
    return is_preference(key) and key.removeprefix(PREFIX) in _SETS


def label(key: str) -> str:
    aspect = key.removeprefix(PREFIX)
    return LABELS.get(aspect, f"preferred {aspect}")


def value(sentence: str) -> str:
    """The preference as kept: the sentence without the words that only made it standing or polite."""
    said = _NEVER.sub("don't", sentence)
    said = _OPENERS.sub("", _MARKERS.sub("", said))
    return re.sub(r"\s+([,.!?;])", r"\1", re.sub(r"\s{2,}", " ", said)).strip(" ,;:-!.")


class Examples:
    """The labelled examples as vectors of one embedder, computed on first use (about 0.6 s for MiniLM, once per
    process, after a reply: a turn's write is off the reply's path) and kept."""

    def __init__(self, embed: Callable[[Sequence[str]], list[list[float]]]) -> None:
        self._embed = embed
        self._lock = Lock()
        self._vectors: np.ndarray | None = None
        self.labels = [label for label, texts in EXAMPLES.items() for _ in texts]

    def vectors(self) -> np.ndarray:
        import numpy as np  # here, not at import: the profile imports this module, and `agent config` the profile

        with self._lock:
            if self._vectors is None:
                texts = [text for texts in EXAMPLES.values() for text in texts]
                self._vectors = np.asarray(self._embed(texts), dtype=np.float32)
            return self._vectors

    def nearest(self, vector: Sequence[float]) -> tuple[str, float, float]:
        """The aspect (or ``OTHER``) of ``vector`` by its nearest examples of an aspect or of ``OTHER`` (weighted by
        similarity), the similarity of its nearest example of that label, and of its nearest one-off example (the
        one-off examples share the words of the aspects, so they only say when a sentence is a paraphrase of one)."""
        import numpy as np

        similarities = self.vectors() @ np.asarray(vector, dtype=np.float32)
        voting = [i for i in np.argsort(-similarities) if self.labels[i] != ONE_OFF]
        order = voting[:NEIGHBOURS]
        votes: dict[str, float] = {}
        for i in order:
            votes[self.labels[i]] = votes.get(self.labels[i], 0.0) + float(similarities[i])
        best = max(votes, key=lambda name: votes[name])
        top = max(float(similarities[i]) for i in order if self.labels[i] == best)
        one_off = max((float(s) for s, name in zip(similarities, self.labels, strict=True) if name == ONE_OFF),
                      default=0.0)
        return best, top, one_off


_EXAMPLES: dict[tuple[str, str, int], Examples] = {}
_EXAMPLES_LOCK = Lock()


def examples(embedder: Embedder) -> Examples:
    """The examples in the vector space of ``embedder``, embedded once per process for each space."""
    space = (embedder.name, embedder.model, embedder.dimension)
    with _EXAMPLES_LOCK:
        return _EXAMPLES.setdefault(space, Examples(embedder.embed))


def candidates(text: str) -> list[str]:
    """The sentences of ``text`` that may be orders about the replies, then the clauses of those with several: none
    of a long turn, and none that a memory may not hold for a reason other than being an order (a secret, a
    link)."""
    said = text.strip()
    if not said or len(said) > MAX_CHARS or refusal(said) not in (None, INSTRUCTION_REFUSAL):
        return []
    sentences = [s.strip() for s in _SENTENCE.split(said) if len(s.split()) >= 2]
    clauses = [c.strip() for s in sentences for c in _CLAUSE.split(s) if len(c.split()) >= 2 and c.strip() != s]
    return list(dict.fromkeys([*sentences, *clauses]))


def read(sentences: Sequence[str], vectors: Sequence[Sequence[float]], examples: Examples) -> Reading:
    """The standing preferences and one-off orders among ``sentences`` (from ``candidates``), given their
    vectors."""
    facts: list[StatedFact] = []
    standing: list[str] = []
    one_off: list[str] = []
    recall: list[str] = []
    for sentence, vector in zip(sentences, vectors, strict=True):
        if any(sentence in whole for whole in standing):
            continue  # a clause of a sentence read as a preference already
        aspect, similarity, near_one_off = examples.nearest(vector)
        if aspect == RECALL and similarity >= RECALL_SIMILARITY and _PLAIN_QUESTION.match(sentence):
            recall.append(sentence)
        if (aspect in (OTHER, RECALL) or similarity < MIN_SIMILARITY) and _LEAVE_OUT.search(sentence):
            aspect, similarity = SUGGESTIONS, PLAIN_SIMILARITY
        if aspect in (OTHER, RECALL) or similarity < MIN_SIMILARITY:
            continue
        marked = bool(_STANDING.search(sentence))
        if not marked and (disclosing.ASKS.search(sentence) or patterns.CODE(sentence)):
            continue  # a question typed without its mark, a paste: "how do you say thank you in korean"
        if similarity < PLAIN_SIMILARITY and not _ADDRESSED.search(sentence):
            continue  # a fact near an aspect's words: "my twin brother lives in sydney", "vegan since new year"
        if (not marked and (_ONE_OFF.search(sentence) or sentence.rstrip().endswith("?"))
                                 or near_one_off >= ONE_OFF_SIMILARITY):
            one_off.append(sentence)
            continue
        kept = value(sentence)
        if (len(kept.split()) < 2 or _PROMOTES.search(kept) or refusal(kept) or refusal(f"{PREFIX}{aspect}: {kept}")
                or any(f.key == PREFIX + aspect and aspect not in _SETS for f in facts)):
            continue
        facts.append(StatedFact(PREFIX + aspect, kept))
        standing.append(sentence)
    return Reading(tuple(dict.fromkeys(facts)), tuple(standing), tuple(one_off), tuple(recall))


ONE_OFF_REASON = "an order for the answer at hand, not a standing preference: not kept"
# Words that make an order stand: "don't ever send me to Amazon", "always", "from now on".
_STANDING_WORDS = re.compile(r"\b(?:ever|always|never|from now on|any ?more|every|whenever|going forward)\b",
                             re.IGNORECASE)


def for_the_answer_at_hand(sentence: str) -> bool:
    """Whether ``sentence`` speaks of the answer at hand ("for this one only", "just this time", "give me this
    answer in ...") and of no occasion beyond it."""
    return bool(_ONE_OFF.search(sentence)) and not _STANDING_WORDS.search(sentence)
STANDING_REASON = "a standing preference for every answer"
RECALL_REASON = "a question about what you told before, which states nothing new: not kept"


def settle(decision: GateDecision, reading: Reading) -> GateDecision:
    """The gate's ``decision`` on a turn, given what ``reading`` found in it: a standing preference is kept even when
    the gate drops the turn (a request in form, or an order refused only as an order: then its value alone is
    kept), and a turn kept for its one-off orders or recall questions alone is not."""
    if reading.facts and not decision.keep:
        return GateDecision(True, STANDING_REASON, text=reading.text())
    left_out = [s for s in reading.sentences if s not in decision.text]
    if decision.keep and left_out:  # "I live in Leeds. Use metric units.": the gate kept the first sentence only
        pairs = [(f, s) for f, s in zip(reading.facts, reading.sentences, strict=True) if s in left_out]
        shown = Reading(tuple(f for f, _ in pairs), tuple(s for _, s in pairs))
        return replace(decision, text=f"{decision.text} {shown.text()}")
    kept = [s.strip() for s in _SENTENCE.split(decision.text) if s.strip()]
    asks = (*reading.one_off, *reading.recall)
    if decision.keep and not decision.explicit and asks and all(s in asks for s in kept):
        return GateDecision(False, ONE_OFF_REASON if reading.one_off else RECALL_REASON)
    return decision
