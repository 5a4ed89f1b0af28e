"""The memory stays true through the ``agent`` command against the fake OpenAI server, with the real local embedder
and Chroma on a temp data directory: what the model's system prompt gets after a move, a rename, a fact said four
ways and a relative date, and what ``agent memories list --json`` shows. Nothing here is about the process, so the
command runs in this process (``tests.cli_harness``)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import date, timedelta

import pytest

from tests.cli_harness import invoke
from tests.e2e_helpers import agent_env
from tests.fake_openai import FakeOpenAI, Reply

pytestmark = pytest.mark.usefixtures("model_cache")


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(fallback=Reply("Noted.")) as server:
        yield server


def chat(env: dict[str, str], session: str, *lines: str) -> None:
    result = invoke("--lines", "-s", session, stdin="".join(f"{line}\n" for line in lines), env=env)
    assert result.returncode == 0, result.stderr


def test_boston_then_berlin_the_prompt_carries_berlin_and_the_list_keeps_boston(fake: FakeOpenAI) -> None:
    env = agent_env(fake)
    chat(env, "one", "I live in Boston, in a small flat near the river.")
    chat(env, "two", "Big news: I moved to Berlin last month!")
    chat(env, "three", "Can you recommend a nice restaurant near where I live?")
    prompt = fake.system_prompts()[-1]
    assert "Berlin" in prompt and "Boston" not in prompt

    listed = invoke("memories", "list", "--json", env=env)
    assert listed.returncode == 0, listed.stderr
    rows = {row["source"]: row for row in json.loads(listed.stdout)}
    boston = rows["I live in Boston, in a small flat near the river."]
    berlin = rows["Big news: I moved to Berlin last month!"]
    assert boston["superseded_by"] == berlin["id"] and berlin["superseded_by"] is None
    assert berlin["key"] == "home" and [h["value"] for h in berlin["history"]] == ["Boston"]

    chat(env, "four", "Where did I live before?")
    assert "Boston" in fake.system_prompts()[-1] and "no longer current" in fake.system_prompts()[-1]

    restored = invoke("memories", "restore", boston["id"][:8], env=env)
    assert restored.returncode == 0, restored.stderr
    chat(env, "five", "Any good bakeries near me?")
    prompt = fake.system_prompts()[-1]
    assert "Boston" in prompt and "lives in: Berlin" not in prompt


def test_the_allergy_reaches_a_dinner_question_and_four_ways_leave_two_live_memories(fake: FakeOpenAI) -> None:
    env = agent_env(fake)
    for n, line in enumerate(["I'm allergic to peanuts.", "I have a peanut allergy, just so you know.",
                              "Peanuts make my throat swell up, I'm allergic.", "Remember: I can't eat peanuts."]):
        chat(env, f"s{n}", line)
    chat(env, "dinner", "What should I cook for dinner?", "Pick a Thai place for tonight")
    for prompt in fake.system_prompts()[-2:]:
        assert "peanut" in prompt
    rows = json.loads(invoke("memories", "list", "--json", env=env).stdout)
    assert len([r for r in rows if "eanut" in r["text"] and r["superseded_by"] is None]) <= 2


def test_tomorrow_arrives_as_a_date_and_profile_lists_what_was_said(fake: FakeOpenAI) -> None:
    env = agent_env(fake)
    chat(env, "one", "My dentist appointment is tomorrow at 3pm.", "My name is Katherine, by the way.",
         "Please just call me Kate, everyone does.")
    chat(env, "two", "When is my dentist appointment?", "What's my name?")
    tomorrow = (date.today() + timedelta(days=1)).isoformat()
    dentist, name = fake.system_prompts()[-2:]
    assert tomorrow in dentist and "tomorrow" not in dentist.split("<memory_notes>")[-1]
    assert "Kate" in name and "Katherine" not in name
    shown = invoke("--lines", "-s", "three", stdin="/profile\n/memories --history\n", env=env)
    assert shown.returncode == 0, shown.stderr
    assert "Kate" in shown.stdout and "replaced" in shown.stdout and "Katherine" in shown.stdout
