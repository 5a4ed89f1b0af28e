"""Every named pattern of the disclosure grammar (``agent.memory.patterns``) against its own examples: the sentences
it was written for match, the near misses beside them do not. A rule changed for one new sentence that breaks what
the pattern was for fails here, under the pattern's name."""

from __future__ import annotations

import pytest

from agent.memory.patterns import ALL, Named


def test_every_pattern_has_a_name_of_its_own_and_examples_either_way() -> None:
    assert len({p.name for p in ALL}) == len(ALL)
    assert all(len(p.matches) >= 2 and len(p.misses) >= 2 for p in ALL), [p.name for p in ALL
                                                                            if len(p.matches) < 2 or len(p.misses) < 2]


@pytest.mark.parametrize("pattern", ALL, ids=lambda p: p.name)
def test_a_pattern_matches_what_it_was_written_for_and_not_its_near_misses(pattern: Named) -> None:
    assert [e for e in pattern.matches if not pattern(pattern.reads(e))] == []
    assert [e for e in pattern.misses if pattern(pattern.reads(e))] == []
