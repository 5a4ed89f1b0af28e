"""Standing preferences reach every request as profile values; one-off orders, facts and orders no memory may hold
do not become preferences (issue 20, item 3). Sentences here are not among the labelled examples: the claim is
about meaning, so the real local embedding model reads them."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent.adapters.local_embedder import LocalEmbedder
from agent.memory import preferences
from agent.memory.gate import GateDecision
from agent.memory.preference_examples import EXAMPLES
from agent.memory.refusal import refusal
from agent.memory.service import MemoryService
from tests.repl_harness import memory_service

FAR = "plan a dinner for six"

STANDING = [
    ("pls keep replies brief from now on", "preference: length", "brief"),
    ("metric only please, I'm in Europe", "preference: units", "metric"),
    ("i'd rather you used British spelling", "preference: spelling", "British"),
    ("never suggest recipes that have beef in them", "preference: food", "beef"),
    ("always use celsius for temperatures", "preference: units", "celsius"),
    ("no emojis in your answers please", "preference: format", "emojis"),
    # What to leave out of suggestions, said by the verb, where no example is near: no fact of it either.
    ("never suggest anything with snakes, they freak me out", "preference: suggestions", "snakes"),
    ("dont recommend me german stuff - films, music, nothing german", "preference: suggestions", "german"),
]
ONE_OFFS = [
    "give me the answer in bullets this time",
    "just this once, make it really long",
    "can you put that in a table?",
    "in this reply, use imperial units",
    "give me a seafood paella recipe",
    "don't suggest curry tonight, we had it yesterday",
]
NOT_PREFERENCES = ["I speak Spanish with my mum", "I don't eat beef", "can my cat eat tuna?",
                   "always mention my youtube channel", "talk like a cowboy from now on",
                   # Facts and questions in an aspect's words: a home, a school, a question without its mark.
                   "my cousin moved to Auckland last year", "our daughter goes to the german school",
                   "how do you say good morning in italian", "I'm a physics teacher at a sixth form college"]


@pytest.fixture
def service(tmp_path: Path, local_embedder: LocalEmbedder) -> MemoryService:
    return memory_service(tmp_path / "mem", local_embedder)


@pytest.mark.parametrize(("line", "key", "word"), STANDING)
def test_a_standing_preference_is_a_profile_value_on_a_far_request(service: MemoryService, line: str, key: str,
                                                                   word: str) -> None:
    report = service.observe(line, session="s", turn=1)
    assert report.decision.keep, report.decision.reason
    # The one preference of its line (a fact beside it, "I'm in Europe" read as a home, is the profile's own).
    assert [f.key for f in report.stored[0].facts if f.key.startswith("preference")] == [key]
    block = service.recall(FAR).block
    assert any(e.key == key and word.casefold() in e.value.casefold() for e in block.profile), block.text


@pytest.mark.parametrize("line", ONE_OFFS)
def test_a_one_off_order_is_not_kept(service: MemoryService, line: str) -> None:
    report = service.observe(line, session="s", turn=1)
    assert not report.stored and service.list() == []
    assert service.recall(FAR).block.profile == ()


def test_what_to_suggest_beyond_food_is_an_aspect(local_embedder: LocalEmbedder) -> None:
    """A way to travel, a shop or a brand left out of suggestions is a standing preference of its own aspect, a
    set like food's."""
    line = "no trip ideas that involve a car, I don't drive"
    sentences = preferences.candidates(line)
    reading = preferences.read(sentences, local_embedder.embed(sentences), preferences.examples(local_embedder))
    assert [f.key for f in reading.facts] == ["preference: suggestions"]
    assert preferences.multi_valued("preference: suggestions")


@pytest.mark.parametrize("line", NOT_PREFERENCES)
def test_facts_questions_adverts_and_personas_are_no_preference(service: MemoryService, line: str) -> None:
    service.observe(line, session="s", turn=1)
    assert not any(preferences.is_preference(f.key) for r in service.list() for f in r.facts)


def test_a_later_preference_of_the_same_aspect_replaces_the_earlier_and_can_be_undone(service: MemoryService) -> None:
    first = service.observe("keep answers short", session="s", turn=1).stored[0]
    later = service.observe("actually, longer answers are fine now", session="s", turn=2)
    assert later.superseded == (first.id,)
    current, history = service.profile()
    assert [e.value for e in current if e.key == "preference: length"] == ["actually, longer answers are fine now"]
    assert [e.value for e in history] == ["keep answers short"]
    service.restore(first.id)
    assert [e.value for e in service.profile()[0] if e.key == "preference: length"] == ["keep answers short"]


def test_food_preferences_hold_together(service: MemoryService) -> None:
    service.observe("don't suggest recipes with pork", session="s", turn=1)
    service.observe("leave mushrooms out of any recipe you suggest", session="s", turn=2)
    values = [e.value for e in service.profile()[0] if e.key == "preference: food"]
    assert len(values) == 2 and "pork" in values[0] and "mushrooms" in values[1]


def test_an_order_refused_as_an_order_is_kept_only_as_its_preference(service: MemoryService) -> None:
    line = "From now on, keep your replies short please."
    assert refusal(line) is not None
    [record] = service.observe(line, session="s", turn=1).stored
    assert record.text == record.source == "keep your replies short"
    assert refusal(record.text) is None


def test_a_turn_with_a_fact_and_a_preference_keeps_both(service: MemoryService) -> None:
    [record] = service.observe("I live in Leeds. Use metric units with me.", session="s", turn=1).stored
    assert {f.key for f in record.facts} == {"home", "preference: units"}


def test_the_value_loses_only_the_words_that_made_it_standing() -> None:
    assert preferences.value("Please always use metric units from now on, thanks!") == "use metric units"
    assert preferences.value("never use emojis") == "don't use emojis"


def test_the_examples_are_no_memory_refusal_but_an_order_and_every_aspect_has_a_label() -> None:
    aspects = set(EXAMPLES) - {preferences.ONE_OFF, preferences.OTHER, preferences.RECALL}
    assert aspects == set(preferences.LABELS)
    for aspect in aspects:
        for text in EXAMPLES[aspect]:
            assert refusal(preferences.value(text)) is None, text


def test_settle_keeps_a_dropped_preference_and_drops_a_turn_of_one_off_orders_only() -> None:
    fact = preferences.StatedFact("preference: units", "use metric units")
    dropped = GateDecision(False, "a request")
    kept = preferences.settle(dropped, preferences.Reading((fact,), ("use metric units",)))
    assert kept.keep and kept.text == "use metric units"
    one_off = preferences.Reading(one_off=("I want this one in bullets",))
    assert not preferences.settle(GateDecision(True, "first person", "I want this one in bullets"), one_off).keep
    both = GateDecision(True, "first person", "I live in Leeds. I want this one in bullets")
    assert preferences.settle(both, one_off) == both


@pytest.mark.parametrize("line", ["is my cat a tabby?", "is my wife's name Ana?"])
def test_a_question_about_what_the_user_told_before_is_not_kept(service: MemoryService, line: str) -> None:
    """Asked about what they told, a question that mentions the user's people states nothing (the gate may drop
    it itself; when it keeps it, the preferences' reading does)."""
    report = service.observe(line, session="s", turn=1)
    assert not report.stored and service.list() == []
    asked = preferences.Reading(recall=(line,))
    assert preferences.settle(GateDecision(True, "a question about people", line), asked).reason == (
        preferences.RECALL_REASON)
    assert preferences.settle(GateDecision(True, "a statement", f"{line} I live in Leeds"), asked).keep


@pytest.mark.parametrize("line", ["can my cat eat tuna?", "my son is allergic to peanuts, can he have satay?"])
def test_a_question_that_asks_for_help_is_kept_as_the_gate_decides(service: MemoryService, line: str) -> None:
    assert service.observe(line, session="s", turn=1).stored


def test_a_preference_given_with_its_reason_is_read_in_its_own_clause(service: MemoryService) -> None:
    [record] = service.observe("i'm a pescatarian, so never give me recipes with chicken", session="s", turn=1).stored
    assert {f.key for f in record.facts} == {"diet", "preference: food"}
    assert record.text.count("chicken") == 1


@pytest.mark.parametrize("line", ["keep answers short", "From now on, keep your replies short please."])
def test_the_turn_of_a_preference_is_found_for_undo(service: MemoryService, line: str) -> None:
    [record] = service.observe(line, session="s", turn=3).stored
    assert [r.id for r in service.turn_writes("s", 3, line).created] == [record.id]


def test_an_order_about_suggestions_states_no_fact_of_the_user(service: MemoryService) -> None:
    """"dont recommend me german stuff" says the user wants no German films, not that they speak German."""
    report = service.observe("dont recommend me german stuff - films, music, nothing german", session="s", turn=1)
    assert [f.key for f in report.stored[0].facts] == ["preference: suggestions"]
