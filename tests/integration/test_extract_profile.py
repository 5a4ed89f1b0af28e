"""The model's extraction proposes profile values too (agent/extract.py, agent/memory/extraction.py): a value whose
words are the user's goes through the profile's supersede path, marked as the extractor's; an invented value, a
key that is not the user's and a malformed line are dropped, each with a reason the chat prints."""

from __future__ import annotations

from pathlib import Path

import pytest
from openai import OpenAI

from agent.adapters.openai_chat import OpenAIChat
from agent.domain import EXTRACTOR, StatedFact
from agent.extract import MAX_PROFILE, model_extractor, parse_answer
from agent.memory.extraction import Extraction, ground
from agent.memory.profile import read
from agent.memory.service import MemoryService
from agent.memory.transfer import from_portable, portable
from agent.prompts import prompt
from agent.ui.truth_view import truth_fields
from tests.chat_fakes import ScriptedChat, say
from tests.fake_openai import FakeOpenAI, Reply
from tests.helpers_store import stores_of
from tests.repl_harness import build_chat, memory_service, run_lines

LEEDS = "Boston is behind us, the new flat is in Leeds."


def test_profile_lines_are_parsed_beside_the_facts() -> None:
    answer = ("- The user moved to a new flat in Leeds.\n- profile: home = Leeds\nProfile: Favorite coffee = "
              "\"oat latte\".\n- profile: phone = Pixel 8")
    assert parse_answer(answer) == Extraction(
        ("The user moved to a new flat in Leeds.",),
        (StatedFact("home", "Leeds"), StatedFact("favourite coffee", "oat latte"), StatedFact("phone", "Pixel 8")))


@pytest.mark.parametrize("line", ["profile: home Leeds", "profile: = Leeds", "profile: home =", "profile:",
                                  "profile: home = " + "x" * 61, "profile: 42 = Leeds"])
def test_a_malformed_profile_line_is_dropped_with_a_reason(line: str) -> None:
    parsed = parse_answer(f"- The user likes tea.\n{line}")
    assert parsed.facts == ("The user likes tea.",) and parsed.profile == ()
    assert len(parsed.dropped) == 1 and "not a profile line of the form 'profile: key = value'" in parsed.dropped[0]


def test_no_more_profile_values_than_the_cap() -> None:
    parsed = parse_answer("\n".join(f"profile: key {chr(97 + n)} = v{n}" for n in range(MAX_PROFILE + 2)))
    assert len(parsed.profile) == MAX_PROFILE and len(parsed.dropped) == 2


@pytest.mark.parametrize(
    ("turn", "proposed", "reason"),
    [
        (LEEDS, StatedFact("home", "Paris"), "home = Paris: not in your words (paris)"),
        (LEEDS, StatedFact("home", "North Leeds"), "home = North Leeds: not in your words (north)"),
        ("I like tea.", StatedFact("likes", "tea"), "likes = tea: not a key of the profile, and the turn names no "
                                                    "likes of yours"),
        ("My phone is old and slow.", StatedFact("phone", "old"), "phone = old: a description, not a value"),
        ("I live in Boston, near Leeds.", StatedFact("home", "Leeds"), "home = Leeds: your words say home = Boston"),
    ],
)
def test_an_ungrounded_proposal_is_dropped_with_its_reason(turn: str, proposed: StatedFact, reason: str) -> None:
    assert ground([proposed], turn, read(turn)) == ([], [reason])


def test_a_grounded_proposal_is_kept_as_the_extractors_and_a_value_read_already_is_not_twice() -> None:
    turn = "Call me Kate. The new flat is in leeds, finally."
    kept, dropped = ground([StatedFact("name", "Kate"), StatedFact("home", "Leeds")], turn, read(turn))
    assert kept == [StatedFact("home", "Leeds", origin=EXTRACTOR)] and dropped == []


def extracting(root: Path, chat: ScriptedChat) -> MemoryService:
    base = memory_service(root)
    return MemoryService(*stores_of(base), base.embedder, "me",
                         extractor=model_extractor(chat, "m", lambda exc: None))


def test_a_grounded_proposal_supersedes_through_the_profile_path(tmp_path: Path) -> None:
    chat = ScriptedChat("NONE", "- The user now lives in Leeds.\n- profile: home = Leeds")
    memory = extracting(tmp_path, chat)
    memory.observe("I live in Boston.", session="s1", turn=1)
    report = memory.observe(LEEDS, session="s2", turn=1)
    assert report.dropped == ()
    boston = next(r for r in memory.list() if r.source == "I live in Boston.")
    leeds = next(r for r in memory.list() if r.source == LEEDS and r.kind == "turn")
    assert boston.superseded_by == leeds.id and report.superseded == (boston.id,)
    assert leeds.facts == (StatedFact("home", "Leeds", origin=EXTRACTOR),)
    current, history = memory.profile()
    assert [(e.key, e.value, e.origin) for e in current] == [("home", "Leeds", EXTRACTOR)]
    assert [(e.value, e.replaced_by) for e in history] == [("Boston", leeds.id)]
    fields = truth_fields(leeds, history)
    assert fields["profile"] == [{"kind": "profile", "key": "home", "value": "Leeds", "superseded_by": None,
                                  "origin": EXTRACTOR}]
    assert from_portable(portable(leeds), "me").facts == leeds.facts  # an export keeps where the value came from
    assert memory.records([leeds.id])[leeds.id].facts == leeds.facts  # and so does the ledger


def test_an_ungrounded_proposal_changes_nothing_and_says_why(tmp_path: Path) -> None:
    chat = ScriptedChat("NONE", "profile: home = Paris")
    memory = extracting(tmp_path, chat)
    memory.observe("I live in Boston.", session="s1", turn=1)
    report = memory.observe(LEEDS, session="s2", turn=1)
    assert report.dropped == ("home = Paris: not in your words (paris)",) and report.superseded == ()
    assert all(r.current for r in memory.list())
    assert [(e.key, e.value, e.origin) for e in memory.profile()[0]] == [("home", "Boston", "")]


def test_malformed_output_is_ignored_and_the_chat_says_why(tmp_path: Path) -> None:
    chat = ScriptedChat("Noted.", "- profile: home Leeds\n- The user has a new flat in Leeds.")
    done = run_lines(build_chat(tmp_path, chat, memory=lambda: extracting(tmp_path / "mem", chat)), LEEDS)
    assert f"remembered: {LEEDS}" in done.log
    assert ("extraction: profile value not taken ('- profile: home Leeds': not a profile line of the form "
            "'profile: key = value')") in done.log


def test_the_retry_of_a_cut_off_reply_adds_the_extractors_value_to_the_memory_already_kept(tmp_path: Path) -> None:
    chat = ScriptedChat(say("Leeds is", finish_reason="length"), "Noted.", "profile: home = Leeds")
    run_lines(build_chat(tmp_path, chat, memory=lambda: extracting(tmp_path / "mem", chat), max_tokens=16),
              LEEDS, "/retry")
    kept = [r for r in memory_service(tmp_path / "mem").list() if r.source == LEEDS]
    assert [(r.kind, r.facts) for r in kept] == [("turn", (StatedFact("home", "Leeds", origin=EXTRACTOR),))]


def test_through_the_openai_adapter_a_proposal_split_across_stream_pieces_is_applied(tmp_path: Path) -> None:
    answer = Reply("- profile: home = Leeds\n- profile: home = Paris",
                   chunks=["- prof", "ile: home = Le", "eds\n- profile: ho", "me = Paris"])
    with FakeOpenAI([Reply("NONE"), answer]) as fake:
        chat = OpenAIChat(OpenAI(api_key="sk-test", base_url=fake.url, timeout=30), max_retries=0)
        base = memory_service(tmp_path)
        memory = MemoryService(*stores_of(base), base.embedder, "me",
                               extractor=model_extractor(chat, "m", lambda exc: None))
        memory.observe("I live in Boston.", session="s1", turn=1)
        report = memory.observe(LEEDS, session="s2", turn=1)
        assert fake.chat_requests[-1].body["messages"][0]["content"] == prompt("extract")
    assert report.dropped == ("home = Paris: not in your words (paris)",) and len(report.superseded) == 1
    assert [(e.key, e.value, e.origin) for e in memory.profile()[0]] == [("home", "Leeds", EXTRACTOR)]
