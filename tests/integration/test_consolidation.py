"""The model as an optional consolidator: with the extraction on, it may propose that a listed live memory is
superseded by the turn, by label, quoting the user's words; each proposal is checked like a profile value, the
reason is shown and ``restore`` undoes it (issue 20, item 6)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent.domain import MemoryRecord, StatedFact
from agent.extract import model_extractor, parse_answer
from agent.memory.consolidation import Proposal, accepted
from agent.memory.service import MemoryService
from tests.chat_fakes import ScriptedChat
from tests.helpers_store import stores_of
from tests.repl_harness import memory_service

CLIMBING = "I go climbing every Saturday at the gym near the station"
BOULDERING = "these days it's bouldering on Sundays with my brother"


def _record(text: str, facts: tuple[StatedFact, ...] = ()) -> MemoryRecord:
    return MemoryRecord(id=text, text=text, kind="turn", user="me", session="s", turn=1, created_at=1.0,
                        last_seen=1.0, content_hash=text, source=text, facts=facts)


def extracting(root: Path, chat: ScriptedChat) -> MemoryService:
    base = memory_service(root)
    return MemoryService(*stores_of(base), base.embedder, "me",
                         extractor=model_extractor(chat, "m", lambda exc: None))


def test_supersede_lines_are_parsed_beside_facts_and_profile_values() -> None:
    answer = parse_answer('- The user boulders on Sundays.\nsupersede: M1 = "bouldering on Sundays"\n'
                          "profile: pet = Moss")
    assert answer.supersedes == (("m1", "bouldering on Sundays"),)
    assert answer.facts == ("The user boulders on Sundays.",) and answer.profile == (StatedFact("pet", "Moss"),)


@pytest.mark.parametrize(("proposal", "listed", "turn", "why"), [
    (Proposal("m3", "bouldering"), [_record(CLIMBING)], BOULDERING, "names no memory of the list"),
    (Proposal("m1", "bouldering with Paris"), [_record(CLIMBING)], BOULDERING, "not in your words (paris)"),
    (Proposal("m1", "climbing every Saturday"), [_record(CLIMBING)], BOULDERING, "not in your words (climbing,"
                                                                                  " every, saturday)"),
    (Proposal("m1", "Saturday"), [_record(CLIMBING)], "still climbing on Saturday", "the quote says nothing that "
                                                                                    "memory does not"),
    (Proposal("m1", "Leeds"), [_record("I live in Boston", (StatedFact("home", "Boston"),))], "Leeds now",
     "that memory states profile values, which change only through a profile value"),
    (Proposal("m1", "bouldering"), [_record(CLIMBING)], "I also go bouldering", "your words add to it or plan, and "
                                                                                "replace nothing"),
    (Proposal("m1", "bouldering"), [_record(CLIMBING)], "I'm going to try bouldering next month",
     "your words add to it or plan, and replace nothing"),
    (Proposal("m1", "swimming in the sea"), [_record("I love hiking")], "I enjoy swimming in the sea",
     "your words say nothing changed, and both may hold"),
])
def test_a_proposal_that_fails_a_check_is_dropped_with_its_reason(proposal: Proposal, listed: list[MemoryRecord],
                                                                  turn: str, why: str) -> None:
    assert accepted([proposal], listed, turn) == ([], [f"supersede {proposal.label}: {why}"])


def test_a_grounded_proposal_supersedes_the_listed_memory_and_restore_undoes_it(tmp_path: Path) -> None:
    chat = ScriptedChat("NONE", "supersede: m1 = bouldering on Sundays")
    memory = extracting(tmp_path, chat)
    memory.observe(CLIMBING, session="s1", turn=1)
    report = memory.observe(BOULDERING, session="s2", turn=1)
    assert CLIMBING in chat.requests[1][1].content  # the live memory was listed to the model, by label
    old = next(r for r in memory.list() if r.text == CLIMBING)
    new = next(r for r in memory.list() if r.text == BOULDERING)
    assert report.superseded == (old.id,) and old.superseded_by == new.id and report.dropped == ()
    assert memory.restore(old.id) is not None
    assert next(r for r in memory.list() if r.text == CLIMBING).current


def test_an_invented_quote_changes_nothing_and_says_why(tmp_path: Path) -> None:
    chat = ScriptedChat("NONE", "supersede: m1 = swimming on Mondays")
    memory = extracting(tmp_path, chat)
    memory.observe(CLIMBING, session="s1", turn=1)
    report = memory.observe(BOULDERING, session="s2", turn=1)
    assert report.superseded == () and all(r.current for r in memory.list())
    assert report.dropped == ("supersede m1: not in your words (swimming, mondays)",)
