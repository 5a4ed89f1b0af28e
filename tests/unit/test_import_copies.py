"""An import copies a memory only where something of it changes (``refusal.canonical_record``,
``transfer._as_kept``): what is written is what was written when every memory was copied."""

from __future__ import annotations

from dataclasses import replace

from agent.domain import StatedFact
from agent.memory import transfer
from agent.memory.refusal import canonical_record
from tests.builders import record


def test_a_canonical_record_is_itself_and_any_other_is_made_canonical() -> None:
    plain = record("I like tea")
    assert canonical_record(plain) is plain
    spaced = replace(plain, text="I like\u00a0tea", source="I\u200b like tea")
    assert (canonical_record(spaced).text, canonical_record(spaced).source) == ("I like tea", "I like tea")
    with_fact = replace(plain, facts=(StatedFact("drink", "tea\u200b"),))
    assert canonical_record(with_fact).facts == (StatedFact("drink", "tea"),)


def test_a_memory_kept_as_it_is_only_when_nothing_of_it_changes() -> None:
    plain = record("I like tea")
    plan = transfer._Plan(kept={plain.id: plain.last_seen})
    assert transfer._as_kept(plain, plan) is plain
    later = transfer._Plan(kept={plain.id: plain.last_seen + 5})
    assert transfer._as_kept(plain, later).last_seen == plain.last_seen + 5
    for odd in (replace(plain, superseded_at=-0.0), replace(plain, superseded_at=3.0),
                replace(plain, superseded_by="gone")):
        kept = transfer._as_kept(odd, transfer._Plan(kept={plain.id: plain.last_seen}))
        assert (kept.superseded_by, kept.superseded_at, str(kept.superseded_at)) == ("", 0.0, "0.0")
