"""Every named form of the refusal layer's round-34 rules against its own examples, read through the view its
module reads: a credential said without the usual words (``agent.memory.credentials.UNSAID``, the ``matching``
view), an order to act toward someone else later (``agent.memory.instructions.TO_OTHERS_LATER``, ``read``). A
change made for one new sentence that breaks what a form was written for fails here, under the form's name."""

from __future__ import annotations

import pytest

from agent.memory import credentials, instructions
from agent.memory.canonical import matching
from agent.memory.patterns import Named


def test_every_form_has_a_name_of_its_own_and_examples_either_way() -> None:
    forms = (*credentials.UNSAID, *instructions.TO_OTHERS_LATER)
    assert len({f.name for f in forms}) == len(forms)
    assert all(len(f.matches) >= 2 and len(f.misses) >= 2 for f in forms)


@pytest.mark.parametrize("form", credentials.UNSAID, ids=lambda f: f.name)
def test_a_credential_form_reads_its_examples_and_not_its_near_misses(form: Named) -> None:
    assert [e for e in form.matches if not form(matching(e))] == []
    assert [e for e in form.misses if form(matching(e))] == []


@pytest.mark.parametrize("form", instructions.TO_OTHERS_LATER, ids=lambda f: f.name)
def test_an_order_form_reads_its_examples_and_not_its_near_misses(form: Named) -> None:
    assert [e for e in form.matches if not form(instructions.read(e))] == []
    assert [e for e in form.misses if form(instructions.read(e))] == []


def test_the_order_forms_read_case_as_folded_text_has_none() -> None:
    """As every instruction pattern (``tests/unit/test_instruction_case.py``): they are in ``PATTERNS``."""
    assert all(f.regex in instructions.PATTERNS for f in instructions.TO_OTHERS_LATER)
