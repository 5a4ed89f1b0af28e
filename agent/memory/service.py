"""The memory service: the one object the REPL, the CLI and the benchmark call for long-term memory.

Write path: gate -> dates resolved -> profile facts read -> supersede, restate or neither (``agent.memory.truth``)
-> ledger (durable, the source of truth) -> embed what is new -> vector index -> evict past capacity, never more
than the write added plus ``EVICTION_SLACK`` (see ``MemoryService.room``). Read path: the profile (every turn) +
retriever ranking of current memories -> threshold -> token-budgeted block. Forget removes from both stores.
It holds no terminal code and no client library: everything outside comes in through ``agent.ports``.
"""

from __future__ import annotations

import logging
import re
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime

from agent.domain import (
    AS_SAID,
    Change,
    ForgetRecord,
    Links,
    Machine,
    MemoryKind,
    MemoryRecord,
    Quote,
    ScoredMemory,
    StatedFact,
    Touched,
    VectorSpace,
    content_hash,
    memory_id,
)
from agent.errors import EmbedderMismatch, EmbeddingError, MemoryRefused, MemoryUnavailable, OverCapacity, Remedy
from agent.memory import (
    attributes,
    consolidation,
    dates,
    disclosing,
    disclosure,
    gate,
    preferences,
    profile,
    relink,
    timeline,
    truth,
)
from agent.memory.calibration import default_grounding, default_threshold
from agent.memory.canonical import canonical
from agent.memory.context import MemoryBlock, build_block
from agent.memory.disclosure import SAFETY_FACT
from agent.memory.extraction import Extraction, ground
from agent.memory.policy import MemoryPolicy
from agent.memory.refusal import refusal, stored_form
from agent.memory.retriever import Retriever, dot
from agent.memory.text import WORD
from agent.ports import Embedder, Flushes, Ledger, MemoryStore, Sweeps, VectorIndex, WarmsUp
from agent.tokens import TokenCounter, count_tokens

log = logging.getLogger(__name__)

# The optional model extraction: a turn's words and the texts of the live memories nearest to it in, the facts,
# profile values and supersedes of those memories the model proposes out.
Extractor = Callable[[str, Sequence[str]], Extraction]
# The write cap of a session counts the new memories it wrote in the last 24 hours, in the ledger (so a restart
# does not reset it): a drip of injected statements is held to one day's worth, a session used for months is not.
CAP_WINDOW = 24 * 3600.0

# "A handful": a write evicts the least recently seen memories it pushes past the capacity, which is as many as it
# added, plus at most this many more: a store already this far over (two writers at once, a kill between a write
# and its eviction) is brought back by the next write. A store further over than that (the capacity was lowered,
# or a store was opened with a smaller one) is never shrunk by a write: new memories are refused, with the command
# that evicts (``agent memories evict``), until the user runs it or raises the capacity.
EVICTION_SLACK = 2
# Memories a bulk write (an import, a rebuild) embeds in one call and writes to the index in one upsert. The local
# embedder sorts a call by length before it cuts its batches of 64, so the call is the window within which texts of
# like lengths meet: 10,000 short lines in calls of 2,048 cost 10-25% less CPU than in calls of 256 (less padding), and
# Chroma's upsert, with its save of the HNSW index every ``SAVE_EVERY`` changes, costs less a record in fewer, larger
# calls (10,000 memories: 2.1 CPU-s in upserts of 2,048 against 3.8 in upserts of 256). Bounded, so what a bulk write
# holds at once does not grow with the file: the vectors of one call (3 MB as float32, 25 MB as the port's lists).
BULK_BATCH = 2048
# How many nearest memories a new one is compared with for a restatement or a correction.
NEIGHBOURS = 4
# The vectors of what dated lines say (``truth.body``), by memory id, kept for the writes that compare with them next.
BODIES_KEPT = 4096


def embed_many(embedder: Embedder, texts: Sequence[str]) -> Sequence[Sequence[float]]:
    """The vectors of ``texts`` for a write that only stores them: packed as float32 where the embedder can
    (``LocalEmbedder.embed_packed``: the same numbers, an eighth of the memory of Python floats), else ``embed``'s."""
    packed = getattr(embedder, "embed_packed", None)
    return packed(texts) if packed is not None else embedder.embed(texts)


@dataclass(frozen=True)
class WriteReport:
    """What one observed turn led to: the gate's decision and the memories stored (new or refreshed)."""

    decision: gate.GateDecision
    stored: tuple[MemoryRecord, ...] = ()
    skipped_reason: str = ""
    refreshed: frozenset[str] = frozenset()  # the ids among ``stored`` that were remembered already
    # The least recently seen memories this write pushed past the capacity, which left the store.
    evicted: tuple[MemoryRecord, ...] = ()
    superseded: tuple[str, ...] = ()
    restated: str | None = None
    # What the model's extraction proposed and the memory did not take, one reason each.
    dropped: tuple[str, ...] = ()
    # The supersedes the model proposed and the memory took, one reason each (``agent.memory.consolidation``).
    consolidated: tuple[str, ...] = ()

    def verb(self, record: MemoryRecord) -> str:
        """How the chat and the command line say ``record`` (one of ``stored``) was stored: a restatement shows the
        memory it refreshed, a text stored already is not news."""
        if record.id == self.restated:
            return "remembered again"
        return "already remembered" if record.id in self.refreshed else "remembered"


@dataclass(frozen=True)
class TurnWrites:
    """What the write of one turn left in the store, as ``/undo`` takes it back: the memories it created (those the
    store still holds), the quotes it added to memories it said again (memory id, quote), the memories whose links
    it changed otherwise (said again after they were replaced, and what that replaced), and the ledger's changes
    that record it."""

    created: tuple[MemoryRecord, ...] = ()
    quotes: tuple[tuple[str, Quote], ...] = ()
    changed: tuple[Touched, ...] = ()
    changes: tuple[Change, ...] = ()



@dataclass(frozen=True)
class Rewrite:
    """An edit decided: the memory ``old`` becomes ``new`` (its facts, supersedes and dates read again from the new
    text), and the new links of the other memories that ``old`` replaced or ``new`` replaces."""

    old: MemoryRecord
    new: MemoryRecord
    links: dict[str, Links] = field(default_factory=dict)
    back: tuple[MemoryRecord, ...] = ()  # the memories current again: the new text no longer replaces them


@dataclass(frozen=True)
class _Decision:
    """What storing one memory will do, decided before anything is written: the record (with its facts), the truth
    outcome, the memory of the same id already stored, its vector if computed, and the links the write gives the
    memories already there (``before`` holds their links until then)."""

    record: MemoryRecord
    outcome: truth.Outcome
    known: MemoryRecord | None = None
    vector: list[float] | None = None
    links: dict[str, Links] = field(default_factory=dict)
    before: dict[str, Links] = field(default_factory=dict)

    def touched(self) -> list[Touched]:
        """The memories this write changes without creating them, for its ``Change``: the one it restates, or, for
        words said again after they were replaced, that memory and the ones it replaces again. (The memories a new
        memory replaces are left out: forgetting it puts them back.)"""
        if self.outcome.restates is not None:
            r = self.record
            return [Touched(self.outcome.restates, quote=Quote(r.source, r.session, r.turn, r.created_at))]
        if self.known is None:
            return []
        return [Touched(memory, self.before[memory], link) for memory, link in self.links.items()]


@dataclass(frozen=True)
class Recall:
    """What the read path gives one turn: the block for the system prompt and the threshold it used."""

    block: MemoryBlock
    threshold: float


def _holds(record: MemoryRecord, facts: Sequence[StatedFact]) -> bool:
    """Whether ``record`` states each of ``facts`` already."""
    return all(any(f.key == g.key and f.value == g.value for g in record.facts) for f in facts)


def _with(statement: profile.Statement, preferred: preferences.Reading) -> profile.Statement:
    """``statement`` with the standing preferences read beside it. A sentence the attributes read as a fact about
    the user kept as said ("my hair is super long, down to my waist") is that fact, not a wish about the replies."""
    said = {f.value for f in statement.facts if profile.said_only(f)}
    kept = tuple(f for f in preferred.facts if f.value not in said)
    return replace(statement, facts=(*statement.facts, *kept)) if kept else statement


def _iso(when: float) -> str:
    return datetime.fromtimestamp(when).astimezone().isoformat(timespec="seconds")


def space_of(embedder: Embedder) -> VectorSpace:
    return VectorSpace(embedder.name, embedder.model, embedder.dimension)


def judge(policy: MemoryPolicy, text: str, meaning: attributes.Meaning | None = None,
          said: disclosing.Disclosing | None = None) -> tuple[gate.GateDecision, str, profile.Statement]:
    """The gate's decision on ``text``, the words a kept memory is made from, and the profile facts they state
    (``meaning`` names the attribute each sentence speaks to, ``profile.read``): pure, so a chat whose store is away
    can ask it (``keeps``) before the store answers.

    Everything is decided on the canonical text (``agent.memory.canonical``), which is what is stored. A line the
    gate refuses (a secret, a link, an instruction) is never kept by a later step: a profile fact read in it does
    not bring it back, a turn cut at its link keeps only what passes the refusal whole, and a profile value that
    would be refused on its own is not taken. ``said`` is the probability that a line discloses, by meaning
    (``agent.memory.disclosing``), which overrules the grammar where it read nothing either way."""
    refused = refusal(text)  # of the words as said: text hidden in them is refused, not stripped
    text = canonical(text)
    decision = gate.decide(text) if policy.gate else gate.GateDecision(True, "gate off", text=text.strip())
    if policy.gate and refused is not None and refused != gate.LINK_REFUSAL:
        decision = gate.GateDecision(False, refused)
    # A turn kept without the part that carries a link is stored, provenance included, without that part.
    words = text.strip() if refused is None else decision.text
    if decision.keep and policy.gate and words and refusal(words) is not None:
        decision, words = gate.GateDecision(False, refusal(words) or ""), ""
    statement = profile.read(words, meaning) if policy.truth and words else profile.Statement()
    if policy.truth and decision.keep and decision.reason == SAFETY_FACT:
        statement = profile.with_safety(words, statement)
    statement = replace(statement, facts=tuple(f for f in statement.facts if refusal(f"{f.key}: {f.value}") is None))
    if (not decision.keep and policy.truth and words and refused is None and decision.reason not in gate.WITHHELD
            and not decision.read_as and _states_a_fact(disclosure.plain(words), meaning)):
        # "Please just call me Kate": a request in form, a profile fact in substance.
        decision = gate.GateDecision(True, "states a profile fact", text=text.strip())
    if (policy.gate and decision.keep and decision.reason == disclosing.CATCH_ALL and not decision.explicit
            and preferences.for_the_answer_at_hand(plain := disclosure.plain(words)) and _orders(plain)):
        # "for this one only, write it in Tagalog, it's for my Lola's friend": an order for this answer, kept only
        # for its "my"; a standing preference in it is still read (``preferences.settle``).
        return gate.GateDecision(False, preferences.ONE_OFF_REASON), words, statement
    if policy.gate and said is not None and refused is None and words and not decision.explicit:
        to_come = dates.names_a_day_to_come(words) and not disclosing.ASKS.search(words)
        overruled = disclosing.overrule(decision.keep, decision.reason, said(text.strip()), bool(statement.facts),
                                        to_come)
        if overruled is not None:
            keep, why = overruled
            decision = gate.GateDecision(keep, why, text=text.strip() if keep else "")
    return decision, words, statement


# The profile keys whose values name the user's people and animals.
HOUSEHOLD_KEYS = frozenset({"partner", "child", "pet", "best friend"})
_NAME = re.compile(r"\b[A-Z][a-z]{2,}\b")


def household_names(records: Sequence[MemoryRecord]) -> frozenset[str]:
    """The names (folded) in the live values of ``HOUSEHOLD_KEYS`` that a rule read, not the words kept as said:
    "Leo" of "Leo (son)", "Biscuit" of "Biscuit (dog)"."""
    return frozenset(
        name.casefold() for record in records for fact in truth.live_facts(record)
        if fact.key in HOUSEHOLD_KEYS and fact.origin != AS_SAID and not profile.said_only(fact)
        for name in _NAME.findall(fact.value)
    )


def _states_a_fact(plain: str, meaning: attributes.Meaning | None) -> bool:
    """Whether a line the grammar read as nothing at all (``plain``: without the words that only frame it, "btw ...,
    thanks") states a fact about the user in a shape it has no rule for ("home base is Penrith these days"): a
    pattern reads one, or the head is sure of an attribute (``OVERRULE``) in a line that gives no order ("just for
    this one, put it in French" is near a language in meaning, and an order all the same). A line the grammar read
    as a question, a hypothetical, sarcasm or a quote never comes here ("suppose we got a horse")."""
    if profile.read(plain):
        return True
    if meaning is None or _ORDER.search(plain):
        return False
    if any(r.score >= OVERRULE or r.attribute in attributes.SAFETY
           for r in profile.attributes_read(plain, attributes.sure(meaning, SAFETY_OVERRULE))):
        return True
    # Less sure, the head agrees with the attribute's own rule, which read a value and not just the words as said:
    # "Garmin Venu on the wrist now" (a device at 0.69, "Garmin Venu"), "tater the corgi ate a sock again".
    return any(f.origin != AS_SAID for f in profile.read(plain, attributes.sure(meaning, AGREED)).facts)


# How likely the attribute head must find an attribute for its reading alone to keep a line the gate read as
# nothing: the head is trained on statements, and on lines of no shape it knows it is overconfident ("kangaroos cant
# walk backwards" is a pet at 0.54, "daylight saving ends this sunday" a work pattern at 0.83), while the facts in
# shapes no rule reads sit at 0.90 and above ("home base is Penrith these days" 0.90, "kids r 3, 6 and 9" 0.98).
# Over the six gate files of bench/ (bench/RESULTS.md section 23), of the lines the grammar read as nothing and no
# pattern reads a fact in: 16 of the 31 disclosures at 0.8 or more, and 3 of the 264 lines that disclose nothing (at
# the head's own 0.5: 21 and 21).
OVERRULE = 0.8
# A safety fact missed is the one memory a user cannot afford to lose, and a remark kept as one costs a line: the
# head need be less sure of an allergy, a condition or a medication ("Ménière's, so these vertigo spells come out of
# nowhere" is a disability at 0.81 one time and 0.79 another, its vector quantised).
SAFETY_OVERRULE = 0.6
# How likely when the attribute's rule read a value in the line too: at 0.6, on the same lines, 1 disclosure more
# ("still on windows 7 lol") and 1 non-disclosure ("turned 30 degrees today"); at 0.5, 2 and 3.
AGREED = 0.6


# An order to the assistant, for this reply or any: the start of a clause that asks rather than tells.
_ORDER = re.compile(r"(?:^|[.,;:!?]\s*)(?:(?:just|please|ok|okay|so|and|now|hey)\W+)*(?:for this\b|this time\b|"
                    r"(?:put|use|answer|write|give|make|tell|translate|reply|respond|format|show|list|say|explain|"
                    r"keep|do|don'?t|stop|switch|can you|could you|would you|will you)\b)", re.IGNORECASE)


# An order said right after the answer it is for: "just this once write it in Welsh".
_ORDER_AFTER_CUE = re.compile(r"\b(?:this|that) (?:time|once|one)(?: only)?\W+(?:please\W+)?(?:write|give|make|put|"
                              r"answer|reply|respond|translate|format|say|tell|list|keep)\b", re.IGNORECASE)


def _orders(plain: str) -> bool:
    """Whether ``plain`` gives the assistant an order and asks nothing: at a clause's start, or right after the
    answer it is for."""
    return "?" not in plain and bool(_ORDER.search(plain) or _ORDER_AFTER_CUE.search(plain))


def keeps(policy: MemoryPolicy, text: str) -> bool:
    """Whether ``observe`` would keep something of the user's words ``text``: the gate's judgement alone, with
    nothing read or written (a chat asks it when the store cannot be reached, to keep the turn for later)."""
    return judge(policy, text)[0].keep


def drop_changes_naming(ledger: MemoryStore, user: str, ids: Sequence[str]) -> None:
    """Drop the changes kept for ``/undo`` that name one of the memories ``ids`` (forgotten or evicted): no
    forgotten id stays in them, and a turn's undo never acts on a memory that is gone."""
    gone = set(ids)
    if gone:
        ledger.drop_changes(user, [change.key for change in ledger.changes(user) if change.names() & gone])


def refuse(text: str) -> None:
    """Raise ``MemoryRefused`` when no memory may hold ``text``, whoever asks (``remember`` checks it, and a chat
    whose store is away checks it before keeping a ``/remember`` for later)."""
    refused = refusal(text)
    if refused:
        raise MemoryRefused(f"Not remembered: {refused}.")


class MemoryService:
    """Long-term memory of one user over a ledger, a vector index and an embedder."""

    def __init__(
        self,
        ledger: Ledger,
        index: VectorIndex,
        embedder: Embedder,
        user: str,
        policy: MemoryPolicy | None = None,
        extractor: Extractor | None = None,
        clock: Callable[[], float] = time.time,
        counter: TokenCounter = count_tokens,
        heads: attributes.HeadStore | None = None,
    ) -> None:
        # The store's own: every other module reads and writes it through the methods below
        # (tests/unit/test_service_boundary.py); only what built it (the composition root, tests) holds it too.
        self._ledger = ledger
        self._index = index
        self.embedder = embedder
        self.user = user
        self.policy = policy or MemoryPolicy()
        self._extractor = extractor
        self._clock = clock
        self._counter = counter
        self._seen: dict[str, float] = {}
        self._bodies: OrderedDict[str, list[float]] = OrderedDict()
        self._attributes = attributes.for_embedder(embedder, heads)
        self._disclosures = disclosing.for_embedder(embedder, heads)
        # The vectors this write computed, by text: the sentence read for its meaning is the turn that is stored, and
        # its preferences and neighbours share them.
        self._vectors: dict[str, list[float]] = {}
        self.retriever = Retriever(embedder, index, ledger, user, self.policy.weights)

    @property
    def extracts(self) -> bool:
        """Whether the model extracts facts from the turns this service observes."""
        return self._extractor is not None

    @property
    def threshold(self) -> float:
        return default_threshold(self.embedder.name) if self.policy.threshold is None else self.policy.threshold

    @property
    def grounding_threshold(self) -> float:
        chosen = self.policy.grounding_threshold
        return default_grounding(self.embedder.name) if chosen is None else chosen

    def _embed(self, texts: Sequence[str]) -> list[list[float]]:
        """The vectors of ``texts``, each computed once per write (``_vectors``). The first is embedded alone: it is
        the turn itself, whose vector the index keeps, and a batch pads it to its longest text (which moves a vector
        by up to 0.01, enough to change what crosses the injection threshold)."""
        missing = [t for t in dict.fromkeys(texts) if t not in self._vectors]
        if missing:
            if len(self._vectors) > 32:
                self._vectors.clear()
            for batch in (missing[:1], missing[1:]):
                if batch:
                    self._vectors.update(zip(batch, self.embedder.embed(batch), strict=True))
        return [self._vectors[t] for t in texts]

    def meaning(self, text: str) -> attributes.Meaning | None:
        """What names the attribute of the user a sentence of ``text`` speaks to, for every write of this service
        (the chat, ``/remember``, an edit); None when the embedder has no calibrated classifier (the patterns alone
        read). A dated transcript line ("(8 May 2023) Ada: ...") is a speaker's words in a document of many
        speakers, not the user telling the agent about themselves: the patterns read it as before, and meaning does
        not (on LoCoMo it made replacements among a speaker's lines that hid evidence from recall)."""
        if self._attributes is None or not self.policy.truth or truth.speaker(text):
            return None
        return attributes.meaning(self._attributes, self._embed)

    def discloses(self, text: str) -> disclosing.Disclosing | None:
        """The second opinion on whether a line discloses (``agent.memory.disclosing``), for the chat's turns; None
        for an embedder without a head, a transcript line, or the gate off."""
        if self._disclosures is None or not self.policy.gate or truth.speaker(text):
            return None
        return disclosing.disclosing(self._disclosures, self._embed)

    def statement(self, text: str) -> profile.Statement:
        """The profile facts and retractions ``text`` states, read the way every write of this service reads them."""
        return profile.read(text, self.meaning(text)) if self.policy.truth else profile.Statement()

    # -- the embedder a store was built with ------------------------------------------------------------

    def check_space(self) -> None:
        """Refuse to mix vector spaces: the index must be empty or built by this embedder."""
        recorded = self._index.space()
        wanted = space_of(self.embedder)
        if recorded is not None and recorded != wanted:
            raise EmbedderMismatch(
                f"This memory store was built with {recorded.describe()} and {wanted.describe()} was "
                f"requested: {Remedy.REINDEX.run(embedder=wanted.embedder)} to re-embed every memory, "
                f"or use --embedder {recorded.embedder}."
            )

    # -- write path -------------------------------------------------------------------------------------

    def observe(
        self,
        text: str,
        *,
        session: str,
        turn: int,
        when: float | None = None,
        extra: dict[str, str] | None = None,
        extract: bool = True,
        still: str = "/remember still works",
    ) -> WriteReport:
        """Run one user turn through the gate and store what it keeps. Only the user's words come here.
        ``extract`` False holds back the model's extraction (for a turn whose reply did not finish). ``still`` is
        what the caller's user can still do when the session's write cap is reached: the explicit way to store a
        memory where they are (the chat has ``/remember``; an MCP client has none of its own)."""
        self._vectors.clear()
        decision, words, statement = judge(self.policy, text, self.meaning(text), self.discloses(text))
        if not decision.keep and self.policy.truth and self._names_the_household(decision, words):
            decision = gate.GateDecision(True, "names someone of the user's household", text=words)
        # A turn the gate drops may still state a standing preference (a request in form).
        preferred = preferences.Reading() if decision.keep else self.preferences(text)
        decision = preferences.settle(decision, preferred)
        log.debug("gate: %s (%s)", "keep" if decision.keep else "skip", decision.reason)
        if not decision.keep:
            refused = refusal(text)
            return WriteReport(decision, skipped_reason=refused if refused in gate.WITHHELD else "")
        stamp = self._clock() if when is None else when
        cap = self.policy.writes_per_session
        if self._ledger.count(self.user, session, since=stamp - CAP_WINDOW) >= cap:
            reason = (f"the cap of {cap} new memories from one session in 24 hours is reached; it frees up as they "
                      f"age, and {still}")
            log.debug("gate: skip (%s)", reason)
            return WriteReport(decision, skipped_reason=reason)
        if not preferred.facts and not self._ledger.get(self.user, [memory_id(self.user, dates.resolve(decision.text,
                                                                                                   stamp))]):
            # Words kept and new: their preferences are read (a single sentence with the vector its memory is stored
            # with), and a turn of one-off orders alone is not kept ("I'd like this one in bullets").
            preferred = self.preferences(dates.resolve(text, stamp))
            decision = preferences.settle(decision, preferred)
            if not decision.keep:
                log.debug("gate: skip (%s)", decision.reason)
                return WriteReport(decision)
        statement = _with(statement, preferred)
        kind: MemoryKind = "explicit" if decision.explicit else "turn"
        texts = [(decision.text, kind)]
        dropped: list[str] = []
        consolidated: list[tuple[MemoryRecord, str]] = []
        if extract and self._extractor is not None and not decision.explicit:
            listed = self._listed(decision.text) if self.policy.truth else []
            extraction = self._extractor(decision.text, [r.text for r in listed])
            texts += [(fact, "fact") for fact in self._grounded_facts(decision.text, extraction.facts)]
            proposed, dropped = ground(extraction.profile, decision.text, statement) if self.policy.truth else ([], [])
            consolidated, declined = consolidation.accepted(
                [consolidation.Proposal(*p) for p in extraction.supersedes], listed, decision.text)
            dropped = [*extraction.dropped, *dropped, *declined]
            for reason in dropped:
                log.info("extract: dropped %s", reason)
            statement = replace(statement, facts=(*statement.facts, *proposed))
        records = [
            self._record(dates.resolve(t, stamp), k, session=session, turn=turn, when=stamp,
                         source=words or decision.text, extra=extra)
            for t, k in texts
        ]
        full = self.room(records)
        if full:
            log.debug("gate: skip (%s)", full)
            return WriteReport(decision, skipped_reason=full)
        known = self._ledger.get(self.user, [r.id for r in records])
        settled = self._decide(records[0], statement, consolidated)
        merged = settled.outcome.restates is not None  # the turn's words join another memory: no new one
        created = tuple(dict.fromkeys(r.id for n, r in enumerate(records)
                                      if r.id not in known and not (n == 0 and merged)))
        touched = tuple(settled.touched())
        # What /undo takes back, kept in the transaction of the write's first step (the memory, or the quote).
        change = Change(session, turn, content_hash(words), created, touched) if created or touched else None
        first, evicted = self._apply(settled, change)
        rest, more = self._write(records[1:])
        outcome = settled.outcome
        return WriteReport(decision, (first, *rest), refreshed=frozenset(known), evicted=(*evicted, *more),
                           superseded=outcome.supersedes, restated=outcome.restates, dropped=tuple(dropped),
                           consolidated=tuple(consolidation.reason([taken]) for taken in consolidated
                                              if taken[0].id in outcome.supersedes))

    def _names_the_household(self, decision: gate.GateDecision, words: str) -> bool:
        """Whether a line the grammar read as nothing at all (no question, request or other reading, nothing
        refused) names a person or an animal the profile holds as the user's own: "Leo changed schools, he started
        at St Mary's" is about the user's son once the user said "my son Leo is in year 2"."""
        if decision.read_as or decision.reason in gate.WITHHELD or not words or refusal(words) is not None:
            return False
        said = {word.casefold() for word in WORD.findall(words)}
        return bool(said & household_names(self._ledger.profiled(self.user)))

    def remember(self, text: str, *, session: str = "cli", turn: int = 0, kind: MemoryKind = "explicit",
                 when: float | None = None) -> WriteReport:
        """Store ``text`` as given (``/remember``, ``agent memories add``): the user's explicit wish, which skips
        the judgement of what is worth keeping but not the refusals that hold for every memory, nor the capacity.
        Raises ``MemoryRefused`` or ``OverCapacity``; the report says what was stored and what was evicted.
        ``when`` is when it was asked (one kept while the store was away is remembered later)."""
        refuse(text)
        text = canonical(text)
        stamp = self._clock() if when is None else when
        record = self._record(dates.resolve(text.strip(), stamp), kind, session=session, turn=turn, when=stamp,
                              source=text.strip())
        full = self.room([record])
        if full:
            raise OverCapacity(f"Not remembered: {full}.")
        known = self._ledger.get(self.user, [record.id])
        self._vectors.clear()
        statement = _with(self.statement(text), self.preferences(record.text))
        settled = self._decide(record, statement)
        stored, evicted = self._apply(settled)
        outcome = settled.outcome
        return WriteReport(gate.GateDecision(True, "explicit", text=record.text, explicit=True), (stored,),
                           refreshed=frozenset(known), evicted=tuple(evicted), superseded=outcome.supersedes,
                           restated=outcome.restates)

    def add(self, text: str, *, session: str = "cli", turn: int = 0, kind: MemoryKind = "explicit") -> MemoryRecord:
        """``remember`` for a caller that wants the stored record only."""
        return self.remember(text, session=session, turn=turn, kind=kind).stored[0]

    def room(self, records: Sequence[MemoryRecord]) -> str:
        """Why ``records`` cannot be stored without evicting in bulk, or "" when they can.

        Only new memories need room (a restatement refreshes one). A store more than ``EVICTION_SLACK`` over its
        capacity would lose everything above it to this one write: that is the user's decision, not a write's."""
        capacity, count = self.policy.capacity, self._ledger.count(self.user)
        over = count - capacity
        if over <= EVICTION_SLACK:
            return ""
        known = self._ledger.get(self.user, [r.id for r in records])
        if all(r.id in known for r in records):
            return ""
        return (f"the store holds {count:,} memories, {over:,} over its capacity of {capacity:,}, and a new memory "
                f"never evicts more than a handful: {Remedy.EVICT_TO.run(count=capacity)} to see the {over:,} "
                f"least recently seen that would go (then add --yes), or raise AGENT_MEMORY_CAPACITY to {count} "
                "or more")

    def _decide(self, record: MemoryRecord, statement: profile.Statement,
                consolidated: Sequence[tuple[MemoryRecord, str]] = ()) -> _Decision:
        """What storing ``record`` (with the profile facts of ``statement``) will do: refresh the memory it restates
        instead, or store it and replace what it contradicts, and the memories the model's proposals it took
        (``consolidated``: each with the words that replace it) replace. Reads the store and writes nothing
        (``_apply`` does)."""
        if self.policy.truth:
            statement = replace(statement, facts=truth.still_held(statement.facts, record.source or record.text))
        record = replace(record, facts=statement.facts)
        if not self.policy.truth:
            return _Decision(record, truth.Outcome())
        self.check_space()
        known = self._ledger.get(self.user, [record.id]).get(record.id)
        if known is not None and known.current and _holds(known, record.facts):
            # the same words again: that memory, refreshed (unless the extractor found a value in them it lacks)
            return _Decision(record, truth.Outcome(reason="said before in the same words"))
        profiled = [r for r in self._ledger.profiled(self.user) if r.id != record.id]
        # Words said before and since replaced: nothing to compare them with, nothing to embed again.
        vector, neighbours = self._neighbours(record) if known is None else (None, [])
        outcome = truth.decide(record.text, statement, profiled, neighbours, self._topics(record, vector, neighbours),
                               record.source or record.text)
        more = [old for old, _ in consolidated if old.id not in outcome.supersedes and old.id != record.id]
        if outcome.restates is None and more:
            outcome = replace(outcome, supersedes=(*outcome.supersedes, *(old.id for old in more)),
                              reason="; ".join(filter(None, [outcome.reason, consolidation.reason(consolidated)])))
        log.debug("truth: %s", outcome.reason or "a memory of its own")
        if outcome.restates is not None:
            return _Decision(record, outcome, known)
        record = replace(record, facts=(*record.facts, *truth.taken_over(record.text, record.facts, outcome)))
        around = {r.id: r for r in [*profiled, *(old for old, _ in neighbours), *more]}
        links = relink.replaced(outcome, record.id, record.created_at, around)
        if known is not None:
            # Said again after it was replaced ("I live in Boston" once more): current again, with today's facts.
            around[known.id] = known
            links = {known.id: Links("", 0.0, record.facts), **links}
        return _Decision(record, outcome, known, vector, links, {m: Links.of(around[m]) for m in links})

    def _apply(self, settled: _Decision, change: Change | None = None) -> tuple[MemoryRecord, list[MemoryRecord]]:
        """Write what ``_decide`` decided, with ``change`` in the first transaction; returns the memory as stored and
        what the write evicted. The new memory is durable before anything is superseded: with its vector at hand,
        the memory, its copy and the links of the memories it replaces are one transaction; otherwise the links
        follow the memory's own, and a crash in between leaves both current, a duplicate, never a loss."""
        record, outcome = settled.record, settled.outcome
        if outcome.restates is not None:
            self._ledger.restate(self.user, outcome.restates,
                                Quote(record.source, record.session, record.turn, record.created_at), change)
            return self._ledger.get(self.user, [outcome.restates])[outcome.restates], []
        vector = settled.vector
        if vector is None or not settled.links:
            written, evicted = self._write([record], {record.id: vector} if vector is not None else None, change)
            if not settled.links:
                return written[0], evicted
            self._ledger.set_links(self.user, settled.links)
            return self._ledger.get(self.user, [record.id]).get(record.id, written[0]), evicted
        # Its vector at hand: the memory, its copy and the links in one transaction (nothing embedded inside), so a
        # crash leaves all or none of them; the eviction past capacity follows it (it picks by last sight alone, and
        # a link written to a memory it takes goes with that memory, as before).
        with self._ledger.together():
            written, added = self._store([record], {record.id: vector}, change)
            self._ledger.set_links(self.user, settled.links)
        evicted = self._evict(added)
        return self._ledger.get(self.user, [record.id]).get(record.id, written[0]), evicted

    def _neighbours(self, record: MemoryRecord) -> tuple[list[float] | None, list[tuple[MemoryRecord, float]]]:
        """The vector of ``record`` and its nearest current memories, best first. An embedder or an index that fails
        here fails again in ``write``, which keeps the record in the ledger first: the turn is not lost (a memory
        whose neighbours cannot be read is stored as a memory of its own)."""
        said = truth.body(record.text)
        try:
            if said == record.text:
                vector, body = self._embed([record.text])[0], []
            else:
                vector, *body = self.embedder.embed([record.text, said])
        except EmbeddingError as exc:
            log.debug("truth: no neighbours (%s)", exc)
            return None, []
        if body:
            self._keep_bodies({record.id: body[0]})
        try:
            if self._index.space() is None:
                return vector, []
            hits = [hit for hit in self._index.query(vector, NEIGHBOURS) if hit.id != record.id]
        except MemoryUnavailable as exc:
            log.debug("truth: no neighbours (%s)", exc)
            return vector, []
        found = self._ledger.get(self.user, [hit.id for hit in hits])
        near = [(found[h.id], h.similarity) for h in hits if h.id in found and found[h.id].current]
        if body:
            # A dated transcript line ("(8 May 2023) Ada: ..."): the stamp and the speaker make the lines of one day
            # alike, so the nearest are compared again on what they say.
            bodies = self._bodies_of([old for old, _ in near])
            near = sorted(((old, dot(body[0], bodies[old.id])) for old, _ in near), key=lambda pair: -pair[1])
        return vector, near

    def _topics(self, record: MemoryRecord, vector: list[float] | None,
                neighbours: Sequence[tuple[MemoryRecord, float]]) -> truth.Topics | None:
        """The attributes the meaning likely puts ``record`` and its close neighbours on, when it says a change in
        words (``truth.says_it_changed``): their vectors are the index's, so this costs a read of a few vectors and
        a product with the head, for the few writes that say a change."""
        words = record.source or record.text
        if (self._attributes is None or vector is None or truth.speaker(record.text)
                or not truth.says_it_changed(words)):
            return None
        close = [old.id for old, similarity in neighbours if similarity >= truth.ATTRIBUTE_SIMILARITY]
        try:
            stored = self._index.vectors(close) if close else {}
        except MemoryUnavailable as exc:
            log.debug("truth: no neighbours' vectors (%s)", exc)
            return None
        ids = [memory for memory in close if memory in stored]
        new, *old = self._attributes.likely([vector, *(stored[memory] for memory in ids)])
        return truth.Topics(new, dict(zip(ids, old, strict=True)), words)

    def _bodies_of(self, records: Sequence[MemoryRecord]) -> dict[str, list[float]]:
        """The vectors of what ``records`` say, each embedded once in this process (``BODIES_KEPT`` of them kept):
        the lines of one conversation are each other's neighbours, and embedding the nearest four again at every
        write was 140-151 ms of a write at 100,000 memories."""
        missing = [r for r in records if r.id not in self._bodies]
        if missing:
            embedded = self.embedder.embed([truth.body(r.text) for r in missing])
            self._keep_bodies(dict(zip([r.id for r in missing], embedded, strict=True)))
        found = {r.id: self._bodies[r.id] for r in records}
        for memory in found:
            self._bodies.move_to_end(memory)
        return found

    def _keep_bodies(self, bodies: dict[str, list[float]]) -> None:
        self._bodies.update(bodies)
        while len(self._bodies) > BODIES_KEPT:
            self._bodies.popitem(last=False)

    def _record(
        self,
        text: str,
        kind: MemoryKind,
        *,
        session: str,
        turn: int,
        when: float,
        source: str,
        extra: dict[str, str] | None = None,
    ) -> MemoryRecord:
        return MemoryRecord(
            id=memory_id(self.user, text),
            text=text,
            kind=kind,
            user=self.user,
            session=session,
            turn=turn,
            created_at=when,
            last_seen=when,
            content_hash=content_hash(text),
            source=source,
            extra=dict(extra or {}),
        )

    def _grounded_facts(self, source: str, proposed: Sequence[str]) -> list[str]:
        facts = [f for f in proposed[:2] if f.strip()]
        if not facts:
            return []
        source_vec, *fact_vecs = self.embedder.embed([source, *facts])
        kept = []
        for fact, vec in zip(facts, fact_vecs, strict=True):
            similarity = dot(source_vec, vec)
            grounded = similarity >= self.grounding_threshold
            log.debug("extract: %s %r (similarity %.2f)", "keep" if grounded else "drop", fact, similarity)
            if grounded:
                kept.append(fact)
        return kept

    def write(
        self, records: Sequence[MemoryRecord], vectors: dict[str, list[float]] | None = None
    ) -> list[MemoryRecord]:
        """Ledger first, then vectors for the records not already stored (``vectors`` holds those already
        computed), then eviction past capacity (at most what the write added plus ``EVICTION_SLACK``; evictions are
        logged, ``observe`` and ``remember`` report them). No supersede, no restatement: the records are stored as
        they are. Returns the records as stored: a statement stored before keeps its text and dates and only has its
        ``last_seen`` refreshed (nothing is embedded twice), so what is returned is what the store holds, not the
        restatement."""
        return self._write(records, vectors)[0]

    def write_evicting(
        self, records: Sequence[MemoryRecord], seals: Sequence[bytes] = (),
        vectors: Mapping[str, Sequence[float]] | None = None,
    ) -> tuple[list[MemoryRecord], list[MemoryRecord]]:
        """``write``, returning also the memories its eviction took, for a caller that names each (an import).
        ``seals``: each record's ``refusal.seal`` (its verdict, reached when the import first read it), in order;
        ``vectors``: those computed already, as ``write``'s."""
        return self._write(records, vectors, seals=seals)

    def _write(
        self, records: Sequence[MemoryRecord], vectors: Mapping[str, Sequence[float]] | None = None,
        change: Change | None = None, seals: Sequence[bytes] = (),
    ) -> tuple[list[MemoryRecord], list[MemoryRecord]]:
        """``write``, returning (stored, evicted); ``change`` is kept with the records (``Ledger.put``)."""
        stored, added = self._store(records, vectors, change, seals)
        return stored, self._evict(added)

    def _store(
        self, records: Sequence[MemoryRecord], vectors: Mapping[str, Sequence[float]] | None = None,
        change: Change | None = None, seals: Sequence[bytes] = (),
    ) -> tuple[list[MemoryRecord], int]:
        """``_write`` without the eviction: returns the records as stored and how many of them are new.

        The sightings, the records and, when every vector is at hand (a ``remember``, a kept turn), their copies are
        one transaction of the ledger (``together``: one commit where there were three); what must be embedded
        first is embedded after that commit, so the records are durable before the embedder runs (one it fails on
        is kept, and a retry embeds it)."""
        if not records:
            return [], 0
        records = [stored_form(r, s) for r, s in zip(records, seals or [b""] * len(records), strict=True)]
        self.check_space()
        unique = list({r.id: r for r in records}.values())
        given = vectors or {}
        with self._ledger.together():
            self.flush_seen()
            known = self._ledger.get(self.user, [r.id for r in unique])
            self._ledger.put(unique, change)
            # A record whose index write failed before (disk full, a kill) is in the ledger but not the index: a
            # retry embeds it again instead of taking it for stored.
            indexed = self._index.vectors([r.id for r in unique if r.id in known]) if known else {}
            fresh = [r for r in unique if r.id not in indexed]
            if fresh and all(given.get(r.id) for r in fresh) and self._index.space() is not None:
                self._index.upsert([r.id for r in fresh], [given[r.id] for r in fresh])
                fresh = []
        if fresh:
            missing = [r for r in fresh if r.id not in given]
            embedded = embed_many(self.embedder, [r.text for r in missing]) if missing else []
            computed = dict(zip([r.id for r in missing], embedded, strict=True))
            if self._index.space() is None:
                self._index.claim(space_of(self.embedder))
            self._index.upsert([r.id for r in fresh], [given.get(r.id) or computed[r.id] for r in fresh])
        stored = [replace(known[r.id], last_seen=max(known[r.id].last_seen, r.last_seen)) if r.id in known else r
                  for r in unique]
        return stored, len(unique) - len(known)

    def _evict(self, added: int) -> list[MemoryRecord]:
        """Forget the least recently seen memories past the capacity, if this write put them there: no more than
        it ``added`` plus ``EVICTION_SLACK``. A store further over is left as it is (``room`` explains why)."""
        excess = self._ledger.count(self.user) - self.policy.capacity
        if excess <= 0:
            return []
        if excess > added + EVICTION_SLACK:
            log.info("The store is %d memories over its capacity of %d: nothing evicted (%s).",
                     excess, self.policy.capacity, Remedy.EVICT.command())
            return []
        evicted = self.least_recently_seen(excess)
        self.forget([r.id for r in evicted])
        for record in evicted:
            log.info("evicted %s (least recently seen, capacity %d)", record.id, self.policy.capacity)
        return evicted

    def least_recently_seen(self, n: int) -> list[MemoryRecord]:
        """The ``n`` memories an eviction takes first: least recently seen, then oldest written."""
        ids = self._ledger.oldest(self.user, n) if n > 0 else []
        found = self._ledger.get(self.user, ids)
        return [found[mid] for mid in ids if mid in found]

    # -- read path --------------------------------------------------------------------------------------

    def search(
        self, query: str, k: int | None = None, threshold: float | None = None, past: bool = False
    ) -> list[ScoredMemory]:
        """Top ``k`` current memories for ``query`` whose similarity clears ``threshold`` (None: no threshold);
        ``past`` lets superseded memories compete too."""
        ranked = self.retriever.rank(query, self.policy.k if k is None else k, past=past)
        if threshold is None:
            return ranked
        return [m for m in ranked if m.similarity >= threshold]

    def profile(self) -> tuple[list[profile.Entry], list[profile.Entry]]:
        """The current profile and the history of its replaced values."""
        return profile.view(self._ledger.profiled(self.user))

    def recall(self, probe: str) -> Recall:
        """The block for one user turn: the profile, whatever the words, then the top k memories above the
        threshold, within the token budget. A question about the past lets replaced memories come back, marked;
        "what do you know about me?" gets the memories seen last when nothing clears the threshold."""
        threshold = self.threshold
        past = truth.asks_about_past(probe)
        found = self.search(probe, self.policy.k, threshold, past=past)
        if truth.asks_about_me(probe):
            found += self._recent(probe, self.policy.k - len(found), {m.record.id for m in found})
        current, history = self.profile() if self.policy.truth else ([], [])
        found, marks = timeline.arrange(found, self.retriever.vectors([m.record.id for m in found])) if (
            self.policy.truth and len(found) > 1) else (found, {})
        block = build_block(found, self.policy.budget_tokens, self._counter, current,
                            self.policy.profile_budget_tokens, history if past else (), marks)
        now = self._clock()
        self._seen.update((m.record.id, now) for m in block.memories)
        return Recall(block=block, threshold=threshold)

    def _listed(self, text: str) -> list[MemoryRecord]:
        """The live memories the model is shown to propose supersedes among: the nearest to ``text``."""
        try:
            return [m.record for m in self.search(text, consolidation.LISTED) if m.record.text != text]
        except (EmbeddingError, MemoryUnavailable) as exc:
            log.debug("extract: no memories listed (%s)", exc)
            return []

    def preferences(self, text: str) -> preferences.Reading:
        """The standing preferences and one-off orders of the user's words ``text``, by meaning, each sentence by
        its own vector (computed once per write, ``_embed``: a single-sentence turn's is the one its memory is stored
        with), after the reply. An embedder that fails reads none (the turn is kept as the gate decides).

        Only in the embedder's space the thresholds were measured in (``preferences.CALIBRATED``), as the attributes
        are read (``attributes.PROBABILITY``)."""
        # A transcript's lines are its speakers' ("(8 May 2023) Ada: ..."), not how this user wants answers.
        readable = self.policy.truth and self.embedder.name in preferences.CALIBRATED and not truth.speaker(text)
        sentences = preferences.candidates(canonical(text)) if readable else []
        if not sentences:
            return preferences.Reading()
        try:
            vectors = self._embed(sentences)
            return preferences.read(sentences, vectors, preferences.examples(self.embedder))
        except EmbeddingError as exc:
            log.debug("preferences: not read (%s)", exc)
            return preferences.Reading()

    def _recent(self, probe: str, n: int, skip: set[str]) -> list[ScoredMemory]:
        """Up to ``n`` current memories seen last, not in ``skip``, with their similarity to ``probe``."""
        if n <= 0:
            return []
        records = [r for r in self._ledger.recent(self.user, n + len(skip)) if r.id not in skip][:n]
        stored = self.retriever.vectors([r.id for r in records])
        probe_vector = self.embedder.embed([probe])[0]
        return [ScoredMemory(r, dot(probe_vector, stored[r.id]), 0.0) for r in records if r.id in stored]

    def restore(self, memory: str) -> MemoryRecord | None:
        """Make a superseded memory current again; the memory that replaced it is superseded by it in turn (an
        undo), in the same transaction. Returns the restored memory, or None when there is no such memory or it is
        current."""
        record = self._ledger.get(self.user, [memory]).get(memory)
        if record is None or record.current:
            return None
        now = self._clock()
        replacer = self._ledger.get(self.user, [record.superseded_by]).get(record.superseded_by)
        links = {record.id: Links("", 0.0, tuple(replace(f, superseded_by="") for f in record.facts))}
        if replacer is not None and replacer.current:
            keys = {f.key for f in record.facts if profile.single_valued(f.key)}
            links[replacer.id] = Links(record.id, now, tuple(
                replace(f, superseded_by=record.id) if f.key in keys and not f.superseded_by else f
                for f in replacer.facts))
        self._ledger.set_links(self.user, links)
        return self._ledger.get(self.user, [record.id])[record.id]

    # -- taking a turn back, and rewriting a memory ---------------------------------------------------------

    def turn_writes(self, session: str, turn: int, line: str, scrubbed: bool = False) -> TurnWrites:
        """What the write of turn ``turn`` of ``session``, whose line was ``line``, left in the store: as its
        changes record it, or, for a turn older than the changes kept (``domain.CHANGES_KEPT``) or written by an older
        version, the memories and quotes that name this session, turn and words in their provenance. A ``/remember``
        typed after the turn carries the turn's number too, and is never taken: its words are not the turn's.
        ``scrubbed``: a forget took words out of the line (an undo cut short after its forget began), so the
        changes are found by session and turn alone."""
        words = judge(self.policy, line)[1]
        said = content_hash(words)
        kept = [c for c in self._ledger.changes(self.user) if c.session == session]
        changes = tuple(c for c in kept if c.turn == turn and (scrubbed or c.said == said))
        if not changes and not scrubbed and not any(c.turn < turn for c in kept):
            # No change of this session is kept from before this turn: the turn may predate them, and its memories
            # are found by their provenance (a scan). Otherwise the writes since were all recorded: it wrote none.
            said_here = (session, turn, words)
            records = self.list()
            return TurnWrites(tuple(r for r in records if (r.session, r.turn, r.source) == said_here),
                              tuple((r.id, q) for r in records for q in r.restated
                                    if (q.session, q.turn, q.text) == said_here))
        if not changes:
            return TurnWrites()
        ids = list(dict.fromkeys(memory for change in changes for memory in change.created))
        found = self._ledger.get(self.user, ids)
        touched = [t for change in changes for t in change.touched]
        return TurnWrites(tuple(found[memory] for memory in ids if memory in found),
                          tuple((t.memory, t.quote) for t in touched if t.quote is not None),
                          tuple(t for t in touched if t.before is not None and t.after is not None), changes)

    def put_back(self, writes: TurnWrites) -> list[MemoryRecord]:
        """Undo what a turn's write changed of memories it did not create (the ones it created are forgotten through
        ``agent.forget``): its quotes leave the memories they joined, and the links it changed are as they were
        before it. A later write that changed one of those links since (another terminal's) is not undone: then
        every link stays as it is, and only the quotes go. Returns the memories whose links were put back, as they
        are now."""
        for memory, quote in writes.quotes:
            self._ledger.unstate(self.user, memory, quote)
        if not writes.changed:
            return []
        now = self._ledger.get(self.user, [t.memory for t in writes.changed])
        states = {t.memory: Links.of(now[t.memory]) for t in writes.changed if t.memory in now}
        if any(states.get(t.memory) not in (t.before, t.after) for t in writes.changed):
            log.info("undo: links changed since the turn, left as they are")
            return []
        back = {t.memory: t.before for t in writes.changed if t.before is not None and states[t.memory] == t.after}
        self._ledger.set_links(self.user, back)
        return list(self._ledger.get(self.user, list(back)).values())

    def drop_changes(self, writes: TurnWrites) -> None:
        """The turn is taken back: the changes that recorded its write go."""
        self._ledger.drop_changes(self.user, [change.key for change in writes.changes])

    def release(self, records: Sequence[MemoryRecord], everything: bool = False) -> list[MemoryRecord]:
        """Before ``records`` are forgotten (``agent.forget`` calls this in the same step): what they had replaced
        passes to what replaced them, or is current again when nothing did (``agent.memory.relink``), in one
        transaction, so no link names a forgotten memory (the changes that name them go when the forget is finished:
        ``drop_changes_naming``). Returns the memories current again, or with a value current again, as they are
        now; none when ``everything`` goes."""
        if everything:
            return []
        gone = self._ledger.get(self.user, [r.id for r in records])
        pointing = {r.id: r for r in [
            *self._ledger.replaced_by(self.user, list(gone)),
            *(r for r in self._ledger.profiled(self.user) if any(f.superseded_by in gone for f in r.facts)),
        ] if r.id not in gone}
        links = relink.inherited(pointing.values(), gone)
        self._ledger.set_links(self.user, links)
        back = [m for m, link in links.items() if relink.back_again(pointing[m], link)]
        return list(self._ledger.get(self.user, back).values())

    def rewrite(self, old: MemoryRecord, text: str, when: float | None = None) -> Rewrite:
        """What the memory ``old`` becomes when the user rewrites it as ``text`` (``/edit``, ``agent memories
        edit``), decided and not yet written (``store_rewrite``). It keeps where it came from (kind, session, turn,
        when it was first said, the reply it answered) and everything derived from the old words is derived again
        from the new: the relative dates (from now), the profile facts, what it replaces and what replaces it, as if
        it had been said in these words then; the restatements of the old words go with them (a model's extracted
        values are not asked for again). A memory replaced as a whole by a correction stays replaced by it."""
        stamp = self._clock() if when is None else when
        said = canonical(text).strip()
        resolved = dates.resolve(said, stamp)
        statement = _with(self.statement(said), self.preferences(said))
        new = replace(old, id=memory_id(self.user, resolved), text=resolved, content_hash=content_hash(resolved),
                      source=said, last_seen=max(old.last_seen, stamp), facts=statement.facts, superseded_by="",
                      superseded_at=0.0, restated=(), extra={**old.extra, "edited_at": _iso(stamp)})
        if not self.policy.truth:
            return Rewrite(old, replace(new, superseded_by=old.superseded_by, superseded_at=old.superseded_at))
        mine = {old.id, new.id}
        profiled = [r for r in self._ledger.profiled(self.user) if r.id not in mine]
        pointing = {r.id: r for r in [*self._ledger.replaced_by(self.user, [old.id]),
                                      *(r for r in profiled if any(f.superseded_by == old.id for f in r.facts))]
                    if r.id not in mine}
        new, links = relink.rederived(old, new, statement, profiled, list(pointing.values()), self.statement)
        was = {**{r.id: r for r in profiled}, **pointing}
        back = tuple(relink.linked(was[m], link) for m, link in links.items() if relink.back_again(was[m], link))
        return Rewrite(old, new, links, back)

    def store_rewrite(self, rewrite: Rewrite) -> MemoryRecord:
        """Write the memory an edit made (embedded again), then the links of the memories around it, in one
        transaction: first the new memory, so nothing ever points at a memory that is not there. The old memory is
        the caller's to forget (``agent.edit``)."""
        stored = self.write([rewrite.new])[0]
        self._ledger.set_links(self.user, rewrite.links)
        return self._ledger.get(self.user, [stored.id]).get(stored.id, stored)

    def records(self, ids: Sequence[str]) -> dict[str, MemoryRecord]:
        """The memories of ``ids`` that are still there (one may have been forgotten meanwhile), by id."""
        return self._ledger.get(self.user, list(ids))

    def set_contexts(self, contexts: Mapping[str, str]) -> None:
        """Rewrite the keyword context of these memories in place (a forget scrubs the words it names)."""
        self._ledger.set_contexts(self.user, contexts)

    def drop_changes_naming(self, ids: Sequence[str]) -> None:
        """Drop the changes ``/undo`` keeps that name a memory of ``ids``."""
        drop_changes_naming(self._ledger, self.user, ids)

    def close(self) -> None:
        """Close the store: a service the chat opened and no longer uses, or a command's at its end. The vectors
        still waiting for the index go in first (``flush_index``); the ledger holds them either way."""
        try:
            self.flush_index()
        finally:
            self._ledger.close()

    def writes_pending(self) -> bool:
        """Whether vectors written wait for the index's group commit (``Flushes``)."""
        return isinstance(self._index, Flushes) and self._index.pending() > 0

    def flush_index(self) -> None:
        """Put the vectors written into the index now (``Flushes``), where it batches them: the chat's memory thread
        calls this between turns, off the write's path; a search sees them without it."""
        if isinstance(self._index, Flushes):
            self._index.flush()

    def store_id(self) -> str:
        """Which store this is (``MemoryStore.store_id``): a spooled turn's forget mark counts in this one only."""
        return self._ledger.store_id()

    def record_forget(self, ids: Sequence[str], texts: Sequence[str]) -> tuple[int, int]:
        """Delete ``ids`` and record the forget, in one transaction (``ForgetJournal.record_forget``)."""
        return self._ledger.record_forget(self.user, ids, texts)

    def pending_forgets(self, machine: str | None = None) -> list[ForgetRecord]:
        """This user's forgets that ``machine`` has not finished in its own files (None: that some machine has
        not)."""
        return [record for record in self._ledger.pending_forgets(machine) if record.user == self.user]

    def acknowledge_forget(self, key: int, machine: str) -> None:
        """``machine`` has finished the forget ``key`` in its own files."""
        self._ledger.acknowledge_forget(key, machine)

    def forget_mark(self) -> int:
        """How far the store's forgets go now (``ForgetJournal.forget_mark``)."""
        return self._ledger.forget_mark()

    def forgotten_since(self, texts: Sequence[str], mark: int) -> list[str]:
        """Those of ``texts`` that a forget of this user recorded after ``mark`` names."""
        return self._ledger.forgotten_since(self.user, texts, mark)

    def machines(self) -> list[Machine]:
        """The machines that share this store for this user."""
        return self._ledger.machines(self.user)

    def retire_machine(self, machine: str) -> bool:
        """No forget of this user waits for ``machine`` any more; whether it was registered."""
        return self._ledger.retire_machine(self.user, machine)

    def flush_seen(self) -> None:
        """Write the ``last_seen`` of recalled memories. Recall only notes them: a durable write costs up to 9 ms
        and recall is on the way to the reply, so they are written with the next memory write (after the reply)
        or when the chat closes the store."""
        if self._seen:
            seen, self._seen = self._seen, {}
            for when in sorted(set(seen.values())):
                self._ledger.touch(self.user, [mid for mid, t in seen.items() if t == when], when)

    def list(self) -> list[MemoryRecord]:
        return self._ledger.all(self.user)

    def count(self) -> int:
        return self._ledger.count(self.user)

    def current_count(self) -> int:
        """The memories no later one replaced: the ones ``/memories`` lists, which the toolbar counts."""
        return self._ledger.count(self.user, current=True)

    def indexed(self) -> int:
        """The vectors in the index, which ``count`` should equal: the doctor and ``stats`` show the two."""
        return self._index.count()

    def warm_up_meaning(self) -> None:
        """Embed the labelled examples the writes read meaning with (the attributes and the preferences) now, when
        the store opens, so that the first turn remembered does not wait seconds for them."""
        if self._attributes is not None and self.policy.truth:
            self._attributes.warm_up()
        if self._disclosures is not None and self.policy.gate:
            self._disclosures.warm_up()
        if self.policy.truth and self.embedder.name in preferences.CALIBRATED:
            preferences.examples(self.embedder).vectors()

    def warm_up_index(self) -> None:
        """Read a shared store's vectors now, where the index can (``WarmsUp``), not at the first search."""
        if isinstance(self._index, WarmsUp):
            self._index.warm_up()

    def sweep_index(self) -> bool:
        """One piece of the index's compare with the ledger, where the open left it for later (``Sweeps``); True
        while pieces remain."""
        return isinstance(self._index, Sweeps) and self._index.sweep()

    # -- forget, reindex, rebuild -----------------------------------------------------------------------

    def forget(self, ids: Sequence[str]) -> int:
        """Remove memories from the ledger and then from retrieval; returns how many existed. (Eviction uses this; a
        forget the user asks for goes through ``agent.forget``, which also scrubs the other files.) The ledger goes
        first, as in a forget: a kill before the index is done leaves vectors whose memory is gone, which the next
        open drops (``reconcile``), never memories whose vectors were already overwritten with noise."""
        if not ids:
            return 0
        drop_changes_naming(self._ledger, self.user, ids)
        deleted = self._ledger.delete(self.user, ids)
        self._index.delete(ids)
        return deleted

    def drop_vectors(self, ids: Sequence[str], everything: bool = False) -> None:
        """Take forgotten memories' vectors out of the index (``everything``: all of the user's), after
        ``agent.forget`` took them out of the ledger."""
        if everything:
            self._index.reset()
        else:
            self._index.delete(ids)

    def rebuild(self, batch: int = BULK_BATCH, group: int = BULK_BATCH) -> int:
        """Re-create the vector index from the ledger with this service's embedder; returns the count.

        Texts are embedded ``batch`` at a time, and their vectors written ``group`` at a time: each write to Chroma
        has a cost of its own, so a record took 0.7 ms in writes of 256 and 0.3 ms in writes of 4,096 (chromadb
        1.5.9, 64-dimension vectors, an index of 11,000); 2,048 keeps the vectors waiting in memory under 25 MB.
        The memories are read from the ledger a group at a time (``pages``), in ``list``'s order, so a rebuild holds
        one group's texts whatever the store's size, and each text meets the same batch as when the list was read
        whole: the int8 model's vector of a text moves with its batch. Both are ``BULK_BATCH`` by default, the
        import's calls too, so a store imported and then rebuilt keeps the same vectors to the bit."""
        self._index.reset()
        self._index.claim(space_of(self.embedder))
        count = 0
        for chunk in self._ledger.pages(self.user, group):
            vectors = [v for at in range(0, len(chunk), batch)
                       for v in embed_many(self.embedder, [r.text for r in chunk[at : at + batch]])]
            self._index.upsert([r.id for r in chunk], vectors)
            count += len(chunk)
        return count
