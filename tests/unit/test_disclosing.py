"""The head's second opinion on the gate's grammar (agent/memory/disclosing.py): where it may overrule, and where the
grammar's decision stands whatever the head says."""

from __future__ import annotations

from agent.memory import disclosing
from agent.memory.disclosure import SAFETY_FACT
from agent.memory.gate import SECRET_REFUSAL


def test_a_line_read_as_nothing_is_kept_only_when_the_head_is_sure_it_discloses() -> None:
    nothing = disclosing.READ_AS_NOTHING
    kept = disclosing.overrule(False, nothing, disclosing.KEEPS, states_facts=False)
    assert kept is not None and kept[0] and "by meaning" in kept[1]
    assert disclosing.overrule(False, nothing, disclosing.KEEPS - 0.01, states_facts=False) is None


def test_a_statement_naming_a_day_to_come_needs_the_head_only_to_lean_towards_a_disclosure() -> None:
    nothing = disclosing.READ_AS_NOTHING
    kept = disclosing.overrule(False, nothing, disclosing.DATED_KEEPS, states_facts=False, to_come=True)
    assert kept is not None and kept[0] and "to come" in kept[1]
    assert disclosing.overrule(False, nothing, disclosing.DATED_KEEPS - 0.01, states_facts=False, to_come=True) is None
    assert disclosing.overrule(False, nothing, disclosing.DATED_KEEPS, states_facts=False) is None


def test_a_question_is_told_with_or_without_its_mark_and_a_condition_is_not_one() -> None:
    for asked in ("is it gonna rain tomorrow", "whats on at the cinema friday", "any plans for sunday?"):
        assert disclosing.ASKS.search(asked), asked
    for said in ("when u give code, python only", "recital is the day after tomorrow", "dentist on the 9th"):
        assert not disclosing.ASKS.search(said), said


def test_the_catch_all_is_dropped_only_when_the_head_is_sure_and_no_fact_is_read() -> None:
    catch_all = disclosing.CATCH_ALL
    dropped = disclosing.overrule(True, catch_all, disclosing.DROPS / 2, states_facts=False)
    assert dropped is not None and not dropped[0]
    assert disclosing.overrule(True, catch_all, disclosing.DROPS / 2, states_facts=True) is None
    assert disclosing.overrule(True, catch_all, disclosing.DROPS, states_facts=False) is None


def test_every_other_reason_stands_whatever_the_head_says() -> None:
    for keep, reason in [(False, "discloses nothing about the user (a question, request or remark)"),
                         (False, "discloses nothing about the user (a hypothetical)"), (False, SECRET_REFUSAL),
                         (True, SAFETY_FACT), (True, "a first-person statement without its subject"),
                         (True, "a name or form of address")]:
        for probability in (0.0, 1.0):
            assert disclosing.overrule(keep, reason, probability, states_facts=False) is None
