"""What must not change the gate's decision, over every labelled line of ``bench/gate_*.jsonl``: a leading "honestly,",
"btw", "tbh" or "also", a trailing ", thanks", no final punctuation, lower case, one slip of the keyboard in the
line's longest word; and minimal pairs, sentences one word apart that must be decided alike ("The kids are ..." and
"Both kids are ...") or apart ("I'm vegan" and "are you vegan?"). The same changes must not change what the write
path keeps either (``service.judge`` with the real model's meaning and second opinion, which keep some lines the
gate drops), over the
lines of the sets written blind that the gate drops; all but the slip of the keyboard, which the meaning does not
read through: a slip in the word that carries it ("hyrbid, office tue and thu", "ipohne 13 mini") moves the head's
probability across ``OVERRULE`` in 8 of those 359 lines (bench/RESULTS.md section 23).

Lower case leaves out the lines kept for a bare name ("Kate is fine", "not Katherine, Kate"): without context, the
capital is what tells a name from a word ("kate is fine" and "email is fine" have one shape)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from functools import cache
from pathlib import Path

import pytest

from agent.adapters.local_embedder import LocalEmbedder
from agent.memory import attributes, disclosing, disclosure, patterns, typos
from agent.memory.gate import decide
from agent.memory.policy import MemoryPolicy
from agent.memory.service import judge

BENCH = Path(__file__).resolve().parents[2] / "bench"
LINES = [str(json.loads(raw)["text"]) for path in sorted(BENCH.glob("gate_*.jsonl"))
         for raw in path.read_text(encoding="utf-8").splitlines() if raw.strip()]
SHORT = [line for line in LINES if "\n" not in line and len(line) <= 300]
# The sets written blind (not gate_dev.jsonl, which the rules were written on): the lines the gate drops.
BLIND = [str(json.loads(raw)["text"]) for path in sorted(BENCH.glob("gate_*.jsonl")) if path.name != "gate_dev.jsonl"
         for raw in path.read_text(encoding="utf-8").splitlines() if raw.strip()]


@cache
def _kept(text: str) -> bool:
    return decide(text).keep


def _slip(text: str) -> str:
    """Two neighbouring letters swapped in the middle of the line's longest word of six letters or more."""
    words = re.findall(r"[a-z]{6,}", text)
    if not words:
        return text
    word = max(words, key=len)
    i = len(word) // 2
    return text.replace(word, word[: i - 1] + word[i] + word[i - 1] + word[i + 1 :], 1)


def _bare_name(text: str) -> bool:
    return any(patterns.BARE_NAME(disclosure.unframed(s)) for s in disclosure.sentences(text))


INVARIANCES: dict[str, Callable[[str], str]] = {
    "a leading 'honestly,'": lambda t: f"honestly, {t}",
    "a leading 'btw'": lambda t: f"btw {t}",
    "a leading 'tbh'": lambda t: f"tbh {t}",
    "a leading 'also'": lambda t: f"also {t}",
    "a trailing ', thanks'": lambda t: t if t.rstrip().endswith("?") else t.rstrip().rstrip(".!") + ", thanks",
    "no final punctuation": lambda t: t.rstrip().rstrip(".!"),
    "lower case": lambda t: t if _bare_name(t) else t.lower(),
    "one slip of the keyboard": _slip,
}


@pytest.mark.parametrize("change", INVARIANCES, ids=str)
def test_a_change_that_says_nothing_new_does_not_change_the_decision(change: str) -> None:
    changed = INVARIANCES[change]
    pairs = [(line, changed(line)) for line in SHORT]
    flipped = [(line, other) for line, other in pairs if other != line and _kept(other) != _kept(line)]
    assert flipped == []


@pytest.fixture(scope="module")
def write_path_keeps(local_embedder: LocalEmbedder) -> Callable[[str], bool]:
    """What ``judge`` keeps of a line, with the real model's meaning, once per line. A line the gate read as
    something else (a question, a hypothetical ...) is kept by no meaning, so it is not embedded."""
    classifier = attributes.for_embedder(local_embedder)
    second = disclosing.for_embedder(local_embedder)
    assert classifier is not None and second is not None
    meaning = attributes.meaning(classifier, local_embedder.embed)
    said = disclosing.disclosing(second, local_embedder.embed)

    @cache
    def keeps(text: str) -> bool:
        return False if decide(text).read_as else judge(MemoryPolicy(), text, meaning, said)[0].keep

    return keeps


@pytest.mark.parametrize("change", [c for c in INVARIANCES if c != "one slip of the keyboard"], ids=str)
def test_a_change_that_says_nothing_new_does_not_change_what_the_write_path_keeps(
        change: str, write_path_keeps: Callable[[str], bool]) -> None:
    changed = INVARIANCES[change]
    dropped = [line for line in BLIND if "\n" not in line and len(line) <= 300 and not _kept(line)]
    pairs = [(line, changed(line)) for line in dropped]
    flipped = [(line, other) for line, other in pairs
               if other != line and write_path_keeps(line) != write_path_keeps(other)]
    assert flipped == []


SAME = [
    ("The kids are at school today", "Both kids are at school today"),
    ("The twins start school in September", "Both twins start school in September"),
    ("The dogs are at the vet", "Both dogs are at the vet"),
    ("my son is 7", "my two sons are 7 and 9"),
    ("I'm allergic to peanuts", "allergic to peanuts"),
    ("I live in Porto", "we live in Porto"),
    ("I'm vegan", "vegan here"),
    ("what's the capital of Peru?", "whats the capital of peru"),
    ("kids are expensive these days", "children are expensive these days"),
]
APART = [
    ("I'm vegan", "are you vegan?"),
    ("my daughter is 6", "a friend's daughter is 6"),
    ("I live in Porto", "I read that people live longer in Porto"),
    ("the kids are at school", "all kids need school"),
    ("call me Kate", "call me when you can"),
    ("I'm allergic to peanuts", "are peanuts a common allergy?"),
]


@pytest.mark.parametrize(("one", "other"), SAME, ids=str)
def test_minimal_pairs_that_say_the_same_are_decided_alike(one: str, other: str) -> None:
    assert decide(one).keep == decide(other).keep


@pytest.mark.parametrize(("kept", "dropped"), APART, ids=str)
def test_minimal_pairs_one_word_apart_in_meaning_are_decided_apart(kept: str, dropped: str) -> None:
    assert (decide(kept).keep, decide(dropped).keep) == (True, False)


@pytest.mark.parametrize(("typed", "meant"), [("allregic", "allergic"), ("alergic", "allergic"),
                                              ("remmeber", "remember"), ("patrner's", "partner's"),
                                              ("diaebtic", "diabetic")])
def test_one_slip_in_a_word_of_the_grammar_is_read_as_the_word(typed: str, meant: str) -> None:
    assert typos.meant(typed) == meant


@pytest.mark.parametrize("word", ["began", "diary", "dogs", "cooking", "alleged", "london", "running"])
def test_a_word_is_not_read_as_another_word_of_the_grammar(word: str) -> None:
    """A letter changed ("began" is not "vegan"), a plural, a real word beside a keyword ("diary"), a name."""
    assert typos.meant(word) == word
