"""What the write path keeps of a line the gate dropped (``service.judge``): a fact the meaning reads in it brings it
back only when the grammar read the line as nothing at all (not as a question, a hypothetical, sarcasm, a quote, a
claim about the world) and, for a fact read by meaning alone, only when the head is sure of it (``OVERRULE``, not a
pooled safety reading). The meaning here is a stand-in that gives every sentence one reading: what is tested is
the decision over the head's answer, not the head."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from agent.memory import disclosure
from agent.memory.attributes import Meaning, Reading
from agent.memory.policy import MemoryPolicy
from agent.memory.service import OVERRULE, judge


def reads(attribute: str, score: float, *, pooled: bool = False) -> Meaning:
    def read(sentences: Sequence[str]) -> list[Reading | None]:
        return [Reading(attribute, score, pooled=pooled) for _ in sentences]

    return read


@pytest.mark.parametrize(
    ("line", "attribute"),
    [("home base is Penrith these days", "home"), ("kids r 3, 6 and 9", "child"),
     ("bilingual house, english and cantonese", "language"), ("wfh tues and thurs, office the rest", "work pattern")],
)
def test_a_fact_in_a_shape_no_rule_reads_is_kept_when_the_head_is_sure(line: str, attribute: str) -> None:
    decision, _, statement = judge(MemoryPolicy(), line, reads(attribute, 0.95))
    assert decision.keep and statement.facts


@pytest.mark.parametrize("line", ["kangaroos cant walk backwards, crazy", "the bus was late again"])
def test_a_reading_the_head_is_unsure_of_keeps_nothing_the_gate_dropped(line: str) -> None:
    assert not judge(MemoryPolicy(), line, reads("pet", OVERRULE - 0.1))[0].keep
    assert not judge(MemoryPolicy(), line, reads("allergy", 0.9, pooled=True))[0].keep


@pytest.mark.parametrize(
    ("line", "read_as"),
    [("suppose we got a horse. how much would that cost per year", "a hypothetical"),
     ("pretend i'm 5 and explain taxes", "a hypothetical"),
     ("wait what car do i drive lol", "a question, request or remark"),
     ("shorter pls", "a question, request or remark"),
     ("honey never spoils apparently", "a claim about the world"),
     ("the leafs lost again, shocker", "sarcasm"),
     ("my grandma always said 'never trust a skinny cook'", "a quote"),
     ("baby shark doo doo doo doo", "a chant or a song"),
     ("asking for a friend: how do u get a toddler to stop biting", "a question for someone else")],
)
def test_a_line_read_as_something_else_is_not_kept_for_a_fact_read_in_it(line: str, read_as: str) -> None:
    """Whatever the head says, and whatever a pattern reads ("we got a horse" is a pet, "i'm 5" an age)."""
    decision, _, _ = judge(MemoryPolicy(), line, reads("pet", 0.99))
    assert not decision.keep and decision.read_as == read_as


@pytest.mark.parametrize("line", ["home base is Penrith these days",
                                  "home base is Penrith now, whats good around here?"])
def test_a_line_with_a_statement_of_no_known_shape_is_read_as_nothing(line: str) -> None:
    """A statement beside a question is still a statement: the meaning decides it."""
    assert disclosure.read(line).read_as == ""


def test_an_order_beside_a_statement_of_no_known_shape_keeps_it_out_however_sure_the_head_is() -> None:
    """"daylight saving ends this sunday, dont forget": read as nothing, but it gives an order (without its
    apostrophe, as chat spells it)."""
    line = "daylight saving ends this sunday, dont forget"
    assert disclosure.read(line).read_as == ""
    assert not judge(MemoryPolicy(), line, reads("work pattern", 0.99))[0].keep
