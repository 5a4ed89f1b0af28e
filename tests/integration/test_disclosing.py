"""The head's second opinion on the gate, with the real local embedder (agent/memory/disclosing.py): a terse fact the
grammar reads as nothing is kept, a remark kept only for its "my" is not, and what the grammar reads as a question
or refuses stays so. The lines are none of the labelled ones the head is trained on."""

from __future__ import annotations

from agent.memory.service import MemoryService
from tests.truth_service import say


def sources(memory: MemoryService) -> set[str]:
    return {r.source for r in memory.list()}


def test_a_fact_in_a_shape_the_grammar_has_no_rule_for_is_kept_by_meaning(memory: MemoryService) -> None:
    say(memory, "nights at the hospital all week", "3 yrs clean from vaping")
    assert sources(memory) == {"nights at the hospital all week", "3 yrs clean from vaping"}
    report = memory.observe("nights at the hospital all week", session="again", turn=1)
    assert "by meaning" in report.decision.reason


def test_a_remark_kept_only_for_its_my_is_dropped_by_meaning(memory: MemoryService) -> None:
    say(memory, "my goodness the traffic today", "my word what a storm")
    assert sources(memory) == set()


def test_a_question_or_a_secret_stays_unkept_whatever_it_means(memory: MemoryService) -> None:
    say(memory, "is it worth working nights at the hospital?", "my phone pin is 4417, nights at the hospital all week")
    assert sources(memory) == set()


def test_an_order_for_the_answer_at_hand_kept_only_for_its_my_is_not_kept(memory: MemoryService) -> None:
    say(memory, "just this once write it in Welsh, it's for my aunt's card", "I'm allergic to peanuts, give me a "
        "snack for now", "I always make it to the gym on Mondays, my trainer says keep it up")
    assert sources(memory) == {"I'm allergic to peanuts, give me a snack for now",
                               "I always make it to the gym on Mondays, my trainer says keep it up"}
