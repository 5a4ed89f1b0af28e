"""Whether a line tells something lasting about the user, by meaning: the second opinion on the gate's grammar.

The grammar (``agent.memory.disclosure``) reads the shape of a line, and people tell facts in shapes it has no rule
for ("ipad for drawing", "blue card approved today!!!", "rent is 950 warm, split w flatmate"), and say nothing in
shapes it keeps ("my god this weather", "my two cents: tabs > spaces"). A head over the local embedding model's
vectors, trained on 3,300 lines labelled by eight writers who had not seen the rules (``disclosures.json``: the gate
files of bench/), tells the two apart from what the words mean. It overrules the grammar only where the grammar read
nothing either way: a line it read as nothing at all (not a question, a hypothetical, a quote, a refusal) is kept
when the head is sure it discloses (``KEEPS``), and a line kept only for its "I" or "my" (the catch-all) is dropped
when the head is sure it does not (``DROPS``). Left out of each file in turn (bench/RESULTS.md, section 29), the
head moved the gate's recall / precision over the seven blind files from 0.946 / 0.930 to 0.959 / 0.945, on the
newest writers' from 0.84-0.95 to 0.91-0.97. A line it keeps goes through every later check a kept line does.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable
from pathlib import Path

from agent.errors import EmbeddingError
from agent.memory import disclosure
from agent.memory.attributes import NONE, Attributes, HeadStore
from agent.ports import Embedder

EXAMPLES = Path(__file__).with_name("disclosures.json")
DISCLOSES = "disclose"
# The embedder kinds with a head trained here.
KINDS = frozenset({"local"})
# How sure the head must be that a line discloses to keep a line the grammar read as nothing, and how sure that it
# does not to drop one the grammar kept only as a first-person statement. A lost fact costs more than a kept remark,
# so the drop asks for more certainty.
KEEPS = 0.9
DROPS = 0.05
# A statement that names a day to come ("gf's parents visiting the day after tmrw", "interview w spotify coming
# monday") is the user's plan or event far more often than not: the head need only lean towards a disclosure.
DATED_KEEPS = 0.3
# A question, asked with or without its mark ("is it gonna rain tomorrow"): no plan of the user's, whatever its date,
# and no standing preference. A line opening with "when" is a condition as often ("when u give code, python only").
ASKS = re.compile(r"^\W*(?:e\.?g\.?\W+)?(?:how|what|whats|what's|why|where|which|who|is|are|am|can|could|"
                  r"would|will|do|does|did|should|shall)\b|\?\s*$", re.IGNORECASE)
# What the grammar's reasons are, where the head may overrule it.
READ_AS_NOTHING = "discloses nothing about the user (a question, request, remark or small talk)"
# The catch-all: a statement kept for its "I" or "my" alone. (One without its subject, "gave the plot to the
# neighbours, doing woodworking now", is kept by a shape the grammar reads, and stays kept.)
CATCH_ALL = "a first-person statement"

# The probability that a line discloses something lasting about the user.
Disclosing = Callable[[str], float]


def examples(path: Path = EXAMPLES) -> dict[str, list[str]]:
    """The labelled lines: those that disclose, then those that do not ("none")."""
    data = json.loads(path.read_text(encoding="utf-8"))
    return {DISCLOSES: data[DISCLOSES], NONE: data[NONE]}


_SHARED: dict[tuple[str, str], Attributes] = {}
_SHARED_LOCK = threading.Lock()


def for_embedder(embedder: Embedder, heads: HeadStore | None = None) -> Attributes | None:
    """The head of ``embedder``'s kind, shared by the services of one process, or None for a kind without one."""
    if embedder.name not in KINDS:
        return None
    key = (embedder.name, embedder.model)
    with _SHARED_LOCK:
        if key not in _SHARED:
            _SHARED[key] = Attributes(embedder, KEEPS, labelled=examples())
        if heads is not None and _SHARED[key].heads is None:
            _SHARED[key].heads = heads
        return _SHARED[key]


def said(line: str) -> str:
    """What the head reads of ``line``: its sentences without the words that only frame them ("honestly, ...",
    "btw", "..., thanks") and without a final full stop or exclamation, which say nothing of whether it discloses and
    moved the head's probability across ``KEEPS`` on one line in fifteen that the grammar drops."""
    return disclosure.plain(line).rstrip(" .!") or line


def disclosing(head: Attributes, vector_of: Callable[[list[str]], list[list[float]]]) -> Disclosing:
    """The ``Disclosing`` of ``head``, embedding a line through ``vector_of`` (which may hand back a vector the
    write computed already); an embedder that fails gives 0.5, which overrules nothing."""

    def probability(line: str) -> float:
        try:
            return head.probabilities_of(DISCLOSES, vector_of([said(line)]))[0]
        except EmbeddingError:
            return 0.5

    return probability


def overrule(keep: bool, reason: str, probability: float, states_facts: bool, to_come: bool = False
             ) -> tuple[bool, str] | None:
    """The head's decision where it overrules the grammar's (``keep`` for ``reason``): keep a line read as nothing
    that it is sure discloses, drop one kept only by the catch-all that it is sure does not and in which no profile
    fact is read (``states_facts``: "my laptop's a ThinkPad from work, no games on it lol" is a remark in tone and
    a device in substance); None where the grammar's decision stands (every other reason: a question, a refusal, a
    safety fact, a name). ``to_come``: the line is a statement that names a day to come (``DATED_KEEPS``)."""
    if not keep and reason == READ_AS_NOTHING and probability >= KEEPS:
        return True, f"tells something about the user, by meaning ({probability:.2f})"
    if not keep and reason == READ_AS_NOTHING and to_come and probability >= DATED_KEEPS:
        return True, f"a plan or an event to come, by its date and meaning ({probability:.2f})"
    if keep and reason == CATCH_ALL and probability < DROPS and not states_facts:
        return False, f"discloses nothing lasting about the user, by meaning ({probability:.2f})"
    return None
