"""A whole chat against the fake OpenAI server, through piped stdin and in a pseudo-terminal.

These tests use the real local embedding model and the real Chroma store on a temp data directory, so the
similarities are the ones a user gets: "Any snack ideas?" recalls the peanut allergy (about 0.40, above the
default threshold of 0.30) and leaves the move to Berlin (about 0.05) out of the prompt. The piped chats run
``agent`` in this process (``tests.cli_harness``); the terminal one is the real process on a pty, where Ctrl-C is a
signal and a second chat on the same session is another process refused by the session's lock.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli_harness import invoke
from tests.e2e_helpers import Terminal, agent, agent_env, session_file
from tests.fake_openai import FakeOpenAI, Reply, held_reply

pytestmark = pytest.mark.usefixtures("model_cache")

PEANUTS = "I can't eat peanuts, they make my throat swell"
BERLIN = "I am moving to Berlin next month"
SNACKS = "Any snack ideas?"


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(fallback=Reply("Noted.")) as server:
        yield server


def test_monday_friday_resume_and_forget_through_pipes(fake: FakeOpenAI, tmp_path: Path) -> None:
    env = agent_env(fake)
    monday = invoke("--lines", "-s", "monday", stdin=f"{PEANUTS}\n{BERLIN}\n", env=env)
    assert monday.returncode == 0, monday.stderr
    assert monday.stdout == "Noted.\nNoted.\n"
    assert f"remembered: {PEANUTS}" in monday.stderr
    assert "remembered: I am moving to Berlin in " in monday.stderr  # "next month" is stored as the month it meant

    friday = invoke("--lines", "-s", "friday", stdin=f"{SNACKS}\n", env=env)
    assert friday.returncode == 0, friday.stderr
    prompt = fake.system_prompts()[-1]
    assert "<memory_notes>" in prompt and PEANUTS in prompt and "Berlin" not in prompt
    assert fake.user_messages() == [SNACKS]  # a new session starts with an empty context

    resumed = invoke("--lines", "-s", "monday", stdin="What did I tell you?\n", env=env)
    assert resumed.returncode == 0, resumed.stderr
    assert fake.user_messages() == [PEANUTS, BERLIN, "What did I tell you?"]
    assert len(session_file(tmp_path, "monday")["turns"]) == 3  # type: ignore[arg-type]

    forget = invoke("--lines", "-c", stdin=f"/memories\n/forget 1\n/memories\n{SNACKS}\n", env=env)
    assert forget.returncode == 0, forget.stderr
    first_listing, second_listing = forget.stdout.split("2 memories")[1].split("1 memory")
    assert "I can't eat peanuts" in first_listing and "peanuts" not in second_listing
    assert f"forgot: {PEANUTS}" in forget.stderr
    assert "peanuts" not in fake.system_prompts()[-1]
    assert fake.user_messages()[-1] == SNACKS and len(fake.user_messages()) == 4  # -c resumed monday


def test_429_is_retried_visibly_then_answered(fake: FakeOpenAI) -> None:
    fake.add(Reply(status=429, headers={"Retry-After": "0.2"}), Reply("Recovered."))
    result = invoke("--lines", "--no-memory", stdin="hello\n", env=agent_env(fake))
    assert result.returncode == 0 and result.stdout == "Recovered.\n"
    assert "rate limited (429): retrying in 0.2 s (1/3)" in result.stderr
    assert len(fake.chat_requests) == 2


def test_a_failed_request_in_a_script_exits_1_with_one_line(fake: FakeOpenAI, tmp_path: Path) -> None:
    fake.add(Reply(status=401, error={"message": "Incorrect API key provided: sk-test-CANARY99887766"}))
    env = agent_env(fake, OPENAI_API_KEY="sk-test-CANARY99887766")
    result = invoke("--lines", "--no-memory", "-s", "k", stdin="hello\n", env=env)
    assert result.returncode == 1
    assert "refused the API key (401): check OPENAI_API_KEY" in result.stderr
    assert "CANARY" not in result.stdout + result.stderr
    assert "CANARY" not in (tmp_path / "data" / "sessions" / "k.json").read_text()


def test_no_key_and_no_base_url_is_one_clear_line_and_exit_1() -> None:
    result = invoke("--lines", stdin="hello\n")
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr.startswith("agent: No model endpoint is configured: set OPENAI_API_KEY")
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr


@pytest.mark.slow
def test_friday_in_a_terminal_ctrl_c_mid_reply_and_the_chat_goes_on(fake: FakeOpenAI, tmp_path: Path) -> None:
    env = agent_env(fake)
    assert invoke("--lines", "-s", "monday", stdin=f"{PEANUTS}\n{BERLIN}\n", env=env).returncode == 0
    story = " ".join(f"word{n}" for n in range(200))
    fake.add(Reply("How about apple slices?"), held_reply(story, 6), Reply("Back again."))

    with Terminal(env, "-s", "friday") as terminal:
        terminal.expect("session friday")
        terminal.expect("›")
        terminal.type(f"{SNACKS}\r")
        terminal.expect("apple slices")
        terminal.expect("tokens in")
        prompt = fake.system_prompts()[-1]
        assert PEANUTS in prompt and "Berlin" not in prompt

        busy = agent(env, "--lines", "-s", "friday", stdin="hello\n")
        assert busy.returncode == 1 and "in use by another agent process" in busy.stderr

        terminal.expect("›")
        terminal.type("Tell me a long story\r")
        terminal.expect("word5")
        terminal.type("\x03")
        terminal.expect(r"\[interrupted")
        terminal.expect("›")
        terminal.type("\x03")  # Ctrl-C on an empty line says how to leave
        terminal.expect("Ctrl-D or /exit leaves")
        terminal.type("hello again\r")
        terminal.expect("Back again")
        terminal.expect("›")
        terminal.type("\x04")
        assert terminal.wait() == 0

    turns = session_file(tmp_path, "friday")["turns"]
    assert isinstance(turns, list)
    assert [t["status"] for t in turns] == ["complete", "interrupted", "complete"]
    partial = turns[1]["reply"]
    assert partial.startswith("word0 word1") and "word199" not in partial
    assert fake.user_messages()[-3:] == [SNACKS, "Tell me a long story", "hello again"]
